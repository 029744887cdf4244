"""In-place ops (``add_``, ``mul_``, ``zero_``, ``copy_``, ``normal_`` ...).

Two paths:
- not recorded (grad mode off, or nothing requires grad — optimizer updates,
  initialisation): the array is updated in place by the array module;
- recorded: the op runs out of place on a snapshot of the old value, and the
  tensor takes the result's data and graph history (PyTorch "rebases" it).

Either way the version counter is bumped, so a backward that saved the old
value notices.
"""

from __future__ import annotations

from types import EllipsisType

from .. import _random_draws as draws
from .._arg_aliases import refuse_numpy_array
from .._backend import quiet, xp
from .._dtype import (
    CPP_TYPE_NAMES,
    SCALAR_TYPE_NAMES,
    can_cast_result,
    category_dtype,
    fill_number,
    from_np,
    get_default_dtype,
    not_implemented_for,
    np_kind,
    parsed_number,
    scalar_category,
    scalar_int,
)
from .._internal_overlap import overlaps, write_in_turn
from .._memory_format import half_number, via_float32
from .._meta import is_meta
from .._out import refuse_partial_overlap
from .._size import inplace_broadcast_mismatch
from .._sparse import SparseCOO, SparseTensor, dense_sparse_copy_error
from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd.grad_mode import _GradState, no_grad
from ..autograd.graph import CastEdge, Node, leaf_edge, node_at, torch_named
from ..random import generator_of
from . import elementwise as ew
from . import pointwise as pw
from . import unary as un
from .copy_slices import take_history
from .indexing import check_inplace
from .sampling import check_bernoulli_dtypes, random_range
from .shape import CloneBackward0


def _snapshot(x: Tensor, copy: bool = True) -> Tensor:
    """A copy of x's current value that carries x's place in the graph (``copy=False``: x's own memory, for an op
    that only makes a view of it)."""
    snap = Tensor._make(x._data.copy(order="K") if copy else x._data, x.grad_fn, x._output_nr)  # keeps the layout
    snap._requires_grad = x._requires_grad
    if x._requires_grad and x._data.dtype.kind in "biu":  # (an integer one may be written in place: graph.py)
        snap._in_place_input = True
    if x.grad_fn is None and x._requires_grad:
        snap._grad_accumulator = leaf_edge(x)[0]  # the snapshot's gradient goes to x
    forward_ad.share_tangent(x, snap)
    return snap


def _saved_as_clone(node: Node, snapshot: Tensor) -> None:
    """Where ``node`` (an in-place op's) saved ``snapshot``, the copy of the input it ran on (``_snapshot``): PyTorch's
    in-place op saves ``self.clone()`` when its formula reads self, so that entry reads as that clone
    (``_saved_self``'s grad_fn a ``CloneBackward0`` whose next function is the input's previous node), as the
    in-place activations' (``Pointwise.keep_original_input``). The snapshot is that copy already: only its
    identity in the graph changes (no second copy); the node's own edge stays the input's previous node, as
    PyTorch's."""
    array = snapshot._data
    clone = None
    entries = []
    for entry in node._saved_versions:
        source = entry[3][0]
        if entry[2] is array and source.__class__ is tuple:  # (an input's edge: not an output's number, nor None)
            if clone is None:
                clone = node_at(CloneBackward0, source, array)
            entry = (entry[0], entry[1], array, ((clone, 0), entry[3][1]))
        entries.append(entry)
    if clone is not None:
        node._saved_versions = tuple(entries)


def _rebase(x: Tensor, result: Tensor, tracked: bool = True, operands: tuple = (),
            snapshot: Tensor | None = None, redo=None) -> Tensor:
    """x takes result's value, its place in the graph (when ``tracked``) and its tangent (forward-mode AD);
    ``operands``: the op's other inputs (their gradients in their own dtypes, ``_in_own_dtypes``); ``snapshot``:
    the copy of x the op ran on, which its node saves as PyTorch's ``self.clone()`` (``_saved_as_clone``);
    ``redo``: the op as a function of x, which computes the value anew where x's elements share memory
    (``as_strided``: written element after element, as PyTorch's kernel writes them; the graph is the result's)."""
    if result._data.shape != x._data.shape:
        raise RuntimeError(
            f"output with shape {list(x._data.shape)} doesn't match the broadcast shape {list(result._data.shape)}"
        )
    _check_cast(result._data.dtype, x)
    a = x._data
    if redo is None or a.flags.c_contiguous or not overlaps(a):
        a[...] = result._data
    else:
        with no_grad():
            write_in_turn(a, lambda c: redo(Tensor._make(c))._data, _arrays(operands))
        if result._data.flags.writeable:  # (an output the node saved reads x's elements as written, as PyTorch's)
            result._data[...] = a
    x._bump_version()
    if tracked:
        if operands and result.grad_fn is not None:
            dtype = x._data.dtype
            for t in operands:  # (the common case, operands of x's dtype or numbers, decided here)
                if isinstance(t, Tensor) and t._data.dtype != dtype:
                    _in_own_dtypes(result.grad_fn, x, operands)
                    break
        take_history(x, result)  # (a view's base takes the change: copy_slices.py)
        node = result.grad_fn
        if node is not None:  # its saved output is x now (relu_, exp_, sigmoid_ ...)
            node.output_written_to(result, x)
            if snapshot is not None and node._saved_versions:
                _saved_as_clone(node, snapshot)
    forward_ad.write_tangent(x, result)
    return x


def _arrays(operands) -> list:
    """The arrays of the tensors among ``operands``."""
    return [o._data for o in operands if isinstance(o, Tensor)]


def _in_own_dtypes(node: Node, x: Tensor, operands: tuple) -> None:
    """The gradient of an operand of another dtype than ``x`` (``x32.add_(y64)``, ``clamp_(min=t64)``, ``copy_``)
    goes down its edge in its own dtype, as PyTorch's engine casts each input's gradient: ``node``'s result is
    written into ``x``, so its gradient arrives in ``x``'s dtype, which a formula passing it on (add_, sub_,
    clamp_, copy_) handed on as it came. (A promoted operand's edge is a ``CastEdge`` already.)"""
    edges = node.next_edges
    for t in operands:
        if t.__class__ is not Tensor and not isinstance(t, Tensor) or t._data.dtype == x._data.dtype:
            continue
        target = t._grad_fn if t._grad_fn is not None else t._grad_accumulator
        for i, edge in enumerate(edges):
            if edge is not None and edge.__class__ is not CastEdge and edge[0] is target and \
                    edge[1] == t._output_nr * (t._grad_fn is not None):
                edges[i] = CastEdge(edge, t._data.dtype)


def _check_cast(src_dtype, x: Tensor, out_names: dict = SCALAR_TYPE_NAMES) -> None:
    """PyTorch's error where the result type cannot be written into ``x``; ``out_names``: how the message names
    ``x``'s dtype (``CPP_TYPE_NAMES`` where PyTorch's check prints its C++ type: ``clamp_`` with number bounds)."""
    if not can_cast_result(src_dtype, x._data.dtype):
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[from_np(src_dtype).name]} can't be cast to the desired output "
            f"type {out_names[x.dtype.name]}"
        )


def check_result_cast(x: Tensor, other) -> None:
    """``_check_cast`` for ``x.op_(other)`` by PyTorch's result type of ``x`` and ``other``: a tensor's dtype, or a
    number's as PyTorch's wrapped number (its category's default dtype: a float is 'Float' beside an integer ``x``;
    a NumPy scalar the number ``parsed_number`` reads). Anything else is left to the op."""
    if isinstance(other, xp.generic):
        other = parsed_number(other)
    if isinstance(other, Tensor):
        dtype = ew.result_dtype(x, other)
    elif isinstance(other, (bool, int, float, complex)):
        dtype = ew.result_dtype(x, Tensor._make(xp.zeros((), category_dtype(scalar_category(other)).np)))
    else:
        return
    _check_cast(dtype.np, x)


def _refuse_complex_number(x: Tensor) -> None:
    """PyTorch's error for a complex number into a real (or integer, bool) tensor in place: the result's type, the
    complex type of x's (half: ComplexHalf, float64: ComplexDouble, else ComplexFloat), cannot be written into it."""
    name = x.dtype.name
    result = "ComplexHalf" if name == "float16" else "ComplexDouble" if name == "float64" else "ComplexFloat"
    raise RuntimeError(f"result type {result} can't be cast to the desired output type {SCALAR_TYPE_NAMES[name]}")


def _tracked(x: Tensor, other=None) -> bool:
    return _GradState.enabled and (x._requires_grad or isinstance(other, Tensor) and other._requires_grad)


# what an in-place binary op takes besides a Python float or int
_OPERANDS = (Tensor, SparseTensor, bool, complex, xp.generic)
# what add_/sub_ scale by alpha (anything else is refused by ``_binary_inplace``)
_SCALABLE = (*_OPERANDS, float, int)


def _binary_inplace(x: Tensor, other, ufunc, op, method: str, tensor_refusal: bool = False) -> Tensor:
    """``x.<method>(other)``: ``ufunc`` into ``x``'s array, or ``op`` recorded when autograd tracks it. ``method``:
    PyTorch's name of the in-place method, for its refusals of an operand that is not a tensor or a number;
    ``tensor_refusal``: PyTorch's parser refuses one with "argument 'other' (position 1) must be Tensor"
    (add_, sub_, mul_, div_ without a rounding mode), where the others' refusal is an invalid combination of
    arguments."""
    tracked = _tracked(x, other)
    check_inplace(x, tracked)
    if isinstance(other, xp.generic):  # (np.float32(1.5) is a float for an int64 x: refused as PyTorch's)
        other = parsed_number(other)
    if other.__class__ is not float and other.__class__ is not int:  # (the hot path: a number shares nothing)
        if other.__class__ is not Tensor:  # (x.add_(array): PyTorch's TypeError, as x.add(array))
            refuse_numpy_array(method, other, "other", 1)
        if not isinstance(other, _OPERANDS):  # (a str, None, a list: PyTorch's argument parser refuses them)
            if tensor_refusal:
                ew.require_tensor(method, other, position=1)
            raise ew.operand_type_error(other)
        refuse_partial_overlap(x._data, other)
    if tracked or forward_ad.has_tangent(x, other):
        if x._data.dtype.kind in "biu":  # (PyTorch's TensorIterator refuses a result it cannot write into x before
            check_result_cast(x, other)  # its node refuses an integer result: ``b += 1`` of a bool b with a history)
        mixed = other.__class__ is not float and isinstance(other, Tensor) and other._data.dtype != x._data.dtype
        snap = _snapshot(x)
        return _rebase(x, op(snap, other), tracked, (other,) if mixed else (), snap, lambda t: op(t, other))
    o = other._data if isinstance(other, Tensor) else other
    if isinstance(o, xp.ndarray):
        _check_cast(o.dtype, x)
        if xp.broadcast_shapes(o.shape, x._data.shape) != x._data.shape:
            raise RuntimeError(
                f"output with shape {list(x._data.shape)} doesn't match the broadcast shape "
                f"{list(xp.broadcast_shapes(o.shape, x._data.shape))}"
            )
    elif o.__class__ is SparseCOO:  # dense += sparse: only the sparse entries' elements are read and written
        return _sparse_inplace(x, o, ufunc)
    elif isinstance(o, float) and np_kind(x._data.dtype) != "f":
        _check_cast(xp.float32, x)
    elif isinstance(o, complex) and np_kind(x._data.dtype) != "c":  # (NumPy's cast would drop the imaginary part)
        _refuse_complex_number(x)
    elif o.__class__ is int:  # (as PyTorch's kernel reads it: int8's add_(300) adds 44, where NumPy raises)
        if x._data.dtype == xp.bool_:  # (a bool tensor with an int: an int64 result)
            _check_cast(xp.int64, x)
        o = ew.operand_int(o, x._data.dtype)
    a = x._data
    with quiet():  # inf/nan silently, as PyTorch (ember._backend)
        _ufunc_into(a, ufunc, (o,))
    x._bump_version()
    return x


def _sparse_inplace(x: Tensor, o: SparseCOO, ufunc) -> Tensor:
    """``x.add_(sparse)``/``x.sub_(sparse)`` on a dense ``x``, as PyTorch: no broadcasting, the result cast into
    ``x``'s dtype as for a dense operand; any other in-place op with a sparse operand is refused."""
    if ufunc is not xp.add and ufunc is not xp.subtract:
        raise NotImplementedError(f"Could not run 'aten::{ufunc.__name__}_' with a sparse operand into a dense "
                                  "tensor: PyTorch's sparse backend lacks it")
    if o.shape != x._data.shape:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(x._data.shape)} while other has size {list(o.shape)} (FYI: dense-sparse addition "
                           "does not currently support broadcasting)")
    if not can_cast_result(o.dtype, x._data.dtype):
        raise RuntimeError(f"Can't convert result type {SCALAR_TYPE_NAMES[from_np(o.dtype).name]} to output "
                           f"{SCALAR_TYPE_NAMES[x.dtype.name]} in add operation")
    with quiet():
        (o if ufunc is xp.add else o.with_values(-o.values)).add_into(x._data)
    x._bump_version()
    return x


def _check_alpha(x: Tensor, other, alpha, op: str):
    """``ew.check_alpha`` (``alpha`` as PyTorch reads it) for ``x.add_(other)``/``sub_``: a result that cannot be cast
    into ``x`` is PyTorch's error first (its TensorIterator is built before alpha is checked)."""
    try:
        return ew.check_alpha(x, other, alpha, op)
    except RuntimeError:
        a, b = ew.promote(x, other)
        _check_cast((a if isinstance(a, Tensor) else b)._data.dtype, x)
        raise


def add_(x: Tensor, other, *, alpha=1) -> Tensor:
    if alpha.__class__ is not int:
        alpha = _check_alpha(x, other, alpha, "add_")
    other = ew.right_scalar(x, other)  # (a 0-d tensor of another dtype beside a half one: PyTorch's scalar)
    if alpha != 1 or ew.number_in_float32(x._data, other):  # (a number into a half one: as with alpha)
        if alpha.__class__ is int:
            scalar_int(alpha)
        if not isinstance(other, _SCALABLE):  # (a str, a list: refused as PyTorch's before any product)
            return _binary_inplace(x, other, xp.add, ew.add, "add_", tensor_refusal=True)
        if other.__class__ is SparseTensor:  # (its values scaled: only they are read)
            return _binary_inplace(x, other.mul(alpha), xp.add, ew.add, "add_", tensor_refusal=True)
        if ew.fused_alpha(x, other, alpha):
            return _binary_inplace(x, other, _scaled_by(alpha), lambda a, b: ew.add(a, b, alpha=alpha), "add_",
                                   tensor_refusal=True)
        refuse_partial_overlap(x._data, other)  # (before the product, a new tensor, hides it)
        other = ew.scaled_operand(x, other, alpha)
        return _binary_inplace(x, other, xp.add, ew.add_of_scaled, "add_", tensor_refusal=True)
    return _binary_inplace(x, other, _alpha_one(x, other, xp.add), ew.add, "add_", tensor_refusal=True)


def _alpha_one(x: Tensor, other, ufunc):
    """``ufunc`` (add or subtract) as add_/sub_ apply it with alpha 1: into a complex ``x``, with the operand as
    PyTorch's kernel adds it (``ew.complex_addend``: a real inf adds inf + nanj)."""
    if x._data.dtype.kind != "c" or other.__class__ is SparseTensor:
        return ufunc
    return _COMPLEX_ADD if ufunc is xp.add else _COMPLEX_SUBTRACT


def _COMPLEX_ADD(a, o, out, casting):
    return xp.add(a, ew.complex_addend(o), out=out, casting=casting)


def _COMPLEX_SUBTRACT(a, o, out, casting):
    return ew.complex_difference(a, o, out=out)


def _complex_subtract_scaled(alpha):
    """``a - alpha * o`` into a complex ``out`` as PyTorch's kernel computes it (``ew.complex_difference``)."""
    def apply(a, o, out, casting):
        return ew.complex_difference(a, o, alpha, out)
    return apply


def sub_(x: Tensor, other, *, alpha=1) -> Tensor:
    ew.refuse_bool_sub(x, other)  # (PyTorch's error for a bool operand, before alpha's)
    if alpha.__class__ is not int:
        alpha = _check_alpha(x, other, alpha, "sub_")
    other = ew.right_scalar(x, other)
    if alpha != 1 or ew.number_in_float32(x._data, other):  # (a number into a half one: as with alpha)
        if alpha.__class__ is int:
            scalar_int(alpha)
        if not isinstance(other, _SCALABLE):  # (a str, a list: refused as PyTorch's before any product)
            return _binary_inplace(x, other, xp.subtract, ew.sub, "sub_", tensor_refusal=True)
        if other.__class__ is SparseTensor:  # (its values scaled: only they are read)
            return _binary_inplace(x, other.mul(alpha), xp.subtract, ew.sub, "sub_", tensor_refusal=True)
        if ew.fused_alpha(x, other, alpha):
            return _binary_inplace(x, other, _scaled_by(-alpha), lambda a, b: ew.sub(a, b, alpha=alpha), "sub_",
                                   tensor_refusal=True)
        if x._data.dtype.kind == "c":  # (PyTorch's a + (-alpha) * o: the product's signed zeros, one node)
            return _binary_inplace(x, other, _complex_subtract_scaled(alpha), lambda a, b: ew.sub(a, b, alpha=alpha),
                                   "sub_", tensor_refusal=True)
        refuse_partial_overlap(x._data, other)  # (before the product, a new tensor, hides it)
        other = ew.scaled_operand(x, other, alpha)
        return _binary_inplace(x, other, xp.subtract, ew.sub_of_scaled, "sub_", tensor_refusal=True)
    return _binary_inplace(x, other, _alpha_one(x, other, xp.subtract), ew.sub, "sub_", tensor_refusal=True)


def _scaled_by(alpha):
    """``a + alpha * o`` into ``out``, computed as PyTorch's add kernel does (``ew.add_scaled``)."""
    def apply(a, o, out, casting):
        return ew.add_scaled(a, o, alpha, out)
    return apply


def _number_in_float32(ufunc):
    """``ufunc`` into ``out``, computing a half or bfloat16 array with a Python number as PyTorch's mul and div
    kernels do (``ew.with_number``)."""
    def apply(a, o, out, casting):
        if not ew.number_in_float32(a, o):
            return ufunc(a, o, out=out, casting=casting)
        out[...] = ew.with_number(ufunc, a, o)
        return out
    return apply


def mul_(x: Tensor, other) -> Tensor:
    return _binary_inplace(x, ew.right_scalar(x, other), _number_in_float32(xp.multiply), ew.mul, "mul_",
                           tensor_refusal=True)


def _rounded_division(rounding_mode: str):
    """``div``'s rounded quotient (its checks: integer division by zero, bool and complex operands) into ``out``:
    floored or truncated ("trunc": toward zero, where a floor division would round -5 / 7 down to -1)."""
    def apply(a, o, out, casting):
        quotient = ew.div(Tensor._make(a), Tensor._make(o) if isinstance(o, xp.ndarray) else o,
                          rounding_mode=rounding_mode)
        out[...] = quotient._data
        return out
    return apply


def floor_divide_(x: Tensor, other) -> Tensor:
    """``x.floor_divide_(other)`` (``x //= other``): ``div_`` rounding the quotient down, as PyTorch's, but
    recorded with no derivative (floor_divide's ``NotImplemented`` node, named ``floor_divide_`` in its error)."""
    return _binary_inplace(x, other, _rounded_division("floor"),
                           lambda a, b: ew.floor_divide(a, b, op="floor_divide_"), "floor_divide_")


def div_(x: Tensor, other, *, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is not None:
        return _binary_inplace(x, other, _rounded_division(rounding_mode),
                               lambda a, b: ew.div(a, b, rounding_mode=rounding_mode), "div_")
    if isinstance(other, complex) and np_kind(x._data.dtype) != "c":
        _refuse_complex_number(x)
    if np_kind(x._data.dtype) != "f":
        refuse_numpy_array("div_", other, "other", 1)  # (PyTorch's parser refuses an array before the cast check)
        _check_cast(xp.float32, x)
    return _binary_inplace(x, ew.right_scalar(x, other), _number_in_float32(xp.true_divide), ew.div, "div_",
                           tensor_refusal=True)


def pow_(x: Tensor, other) -> Tensor:
    if isinstance(other, xp.generic):  # (np.int64(-2) is an int: pow's error below)
        other = parsed_number(other)
    ew.check_exponent(x, other)
    if other.__class__ is int and other < 0 and np_kind(x._data.dtype) in "iub":  # (pow's error, not NumPy's)
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _binary_inplace(x, other, _pow_into, ew.pow, "pow_")


def _pow_into(a, o, out, casting):
    """``pow``'s values (``ew.pow_values``: PyTorch's special cases of its kernel) into ``out``."""
    out[...] = ew.pow_values(a, o)
    return out


class ComparisonInPlace(Node):
    """``x.gt_(other)`` & co. recorded: as PyTorch's, the result (1/0 in ``x``'s dtype) keeps requiring a
    gradient, and the gradient of each operand is zeros (the comparison is piecewise constant)."""

    def forward(self, x, other, value, op):
        # PyTorch's node names: GtBackward0 with a number for ``other``, GtBackward1 with a tensor
        self.op_name = f"{op.capitalize()}Backward{1 if isinstance(other, xp.ndarray) else 0}"
        return value.astype(x.dtype)

    def backward(self, g):
        return tuple(xp.zeros_like(g) if need else None for need in self.needs_input_grad[:2])

    def name(self) -> str:
        return self.op_name


def logical_inplace(x: Tensor, other, name: str) -> Tensor:
    """``x.logical_not_()``, ``x.logical_and_(other)`` & co.: the truth of each element (with ``other``'s, a
    tensor broadcast to x's shape) written into ``x`` as 1/0 in its dtype. As PyTorch's, the op is not recorded:
    a tensor that requires grad keeps its ``grad_fn``, and a leaf is not refused. ``name``: NumPy's ufunc."""
    ufunc = getattr(xp, name)
    refuse_partial_overlap(x._data, other)
    operands = ()
    if other is not None:
        o = other._data
        shape = xp.broadcast_shapes(o.shape, x._data.shape)
        if shape != x._data.shape:
            raise RuntimeError(f"output with shape {list(x._data.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        operands = (o,)
    _ufunc_into(x._data, ufunc, operands)
    x._bump_version()
    return x


def _ufunc_into(a, ufunc, operands: tuple) -> None:
    """``ufunc(a, *operands)`` into ``a``; an ``a`` whose elements share memory (``as_strided``) written element
    after element, as PyTorch's TensorIterator (ember/_internal_overlap.py)."""
    if a.flags.c_contiguous or not overlaps(a):
        ufunc(a, *operands, out=a, casting="unsafe")
    else:
        write_in_turn(a, lambda c: ufunc(c, *operands, out=c, casting="unsafe"), operands)


def _compare_inplace(x: Tensor, other, ufunc, op, name: str) -> Tensor:
    """``x.gt_(other)`` & co.: the comparison written into ``x`` as 1/0 in ``x``'s dtype (any dtype takes a bool)."""
    tracked = _tracked(x, other)
    check_inplace(x, tracked)
    refuse_partial_overlap(x._data, other)
    if tracked:
        snap = _snapshot(x, copy=False)
        value = op(snap, other)._data
        return _rebase(x, ComparisonInPlace.apply(snap, other, value=value, op=name[:2]), tracked)
    o = other._data if isinstance(other, Tensor) else other
    if isinstance(o, xp.ndarray) and xp.broadcast_shapes(o.shape, x._data.shape) != x._data.shape:
        raise RuntimeError(f"output with shape {list(x._data.shape)} doesn't match the broadcast shape "
                           f"{list(xp.broadcast_shapes(o.shape, x._data.shape))}")
    if name[0] in "lg" and (x._data.dtype.kind == "c" or isinstance(o, complex)
                            or o.__class__ is xp.ndarray and o.dtype.kind == "c"):
        op(x, other)  # (lt_, le_, gt_, ge_: complex numbers have no order, the out-of-place comparison's error)
    if o.__class__ is int:  # (int8's lt_(300) compares with 44, as the out-of-place comparison)
        o = ew.operand_int(o, x._data.dtype)
    with quiet():  # (float16's lt_(2**63): the int past its range compares as inf, silently, as PyTorch)
        _ufunc_into(x._data, ufunc, (o,))
    x._bump_version()
    return x


def _comparison_(name: str, ufunc, op):
    def compare_(x: Tensor, other) -> Tensor:
        return _compare_inplace(x, other, ufunc, op, name)

    compare_.__name__ = compare_.__qualname__ = name
    return compare_


gt_, ge_ = _comparison_("gt_", xp.greater, ew.gt), _comparison_("ge_", xp.greater_equal, ew.ge)
lt_, le_ = _comparison_("lt_", xp.less, ew.lt), _comparison_("le_", xp.less_equal, ew.le)
eq_, ne_ = _comparison_("eq_", xp.equal, ew.eq), _comparison_("ne_", xp.not_equal, ew.ne)


def addcmul_(x: Tensor, t1: Tensor, t2: Tensor, *, value=1) -> Tensor:
    if t1.__class__ is not Tensor or t2.__class__ is not Tensor:
        _refuse_arrays("addcmul_", t1, t2)
    return _addc_(x, t1, t2, ew.addc_value("addcmul", x, t1, t2, value, "addcmul_"), pw.Addcmul)


def addcdiv_(x: Tensor, t1: Tensor, t2: Tensor, *, value=1) -> Tensor:
    if t1.__class__ is not Tensor or t2.__class__ is not Tensor:
        _refuse_arrays("addcdiv_", t1, t2)
    return _addc_(x, t1, t2, ew.addc_value("addcdiv", x, t1, t2, value, "addcdiv_"), pw.Addcdiv)


def _refuse_arrays(name: str, t1, t2) -> None:
    """PyTorch's TypeError for a NumPy array as addcmul_'s (addcdiv_'s) ``tensor1`` or ``tensor2``."""
    refuse_numpy_array(name, t1, "tensor1", 1)
    refuse_numpy_array(name, t2, "tensor2", 2)


def _addc_(x: Tensor, t1: Tensor, t2: Tensor, value, node: type[Node]) -> Tensor:
    """addcmul_/addcdiv_: recorded as the out-of-place op's one node (AddcmulBackward0, as PyTorch's); computed as
    that node computes it where the dtypes differ or are half precision or complex (PyTorch's kernel rounds once);
    otherwise a plain ``add_`` (an optimizer's step: no copy of the result) of ``value * t1`` times or over ``t2``,
    PyTorch's kernel's order: addcdiv_'s bits are PyTorch's, addcmul_'s product is rounded before the sum, where
    PyTorch's vectorised kernel fuses the two (emulated in float64, as the out-of-place op does, it takes several
    times as long)."""
    refuse_partial_overlap(x._data, t1)  # (before their product, a new tensor, hides them)
    refuse_partial_overlap(x._data, t2)
    dt = x._data.dtype
    if _GradState.enabled and (x._requires_grad or getattr(t1, "_requires_grad", False)
                               or getattr(t2, "_requires_grad", False)) or forward_ad.has_tangent(x, t1, t2) \
            or not (dt in (xp.float32, xp.float64) or dt.kind in "iu") \
            or not all(isinstance(t, Tensor) and t._data.dtype == dt for t in (t1, t2)) or is_meta(x._data):
        return _write_back(x, lambda t: pw.addc(node, t, t1, t2, value), t1, t2)
    a1, a2 = t1._data, t2._data
    with xp.errstate(all="ignore"):  # (inf and NaN silently, as PyTorch's; integers wrap)
        scaled = a1 if value == 1 else a1 * dt.type(value)
        owned = scaled is not a1 and isinstance(scaled, xp.ndarray) and \
            scaled.shape == xp.broadcast_shapes(a1.shape, a2.shape)
        combined = (xp.multiply if node is pw.Addcmul else xp.divide)(scaled, a2, out=scaled if owned else None)
    return add_(x, Tensor._make(xp.asarray(combined)))


def _unary_inplace(x: Tensor, op, array_fn, floating: bool = False) -> Tensor:
    """``x.op_()``; ``floating``: the op's result is floating point, which an integer ``x`` cannot hold."""
    if floating:
        _check_cast(get_default_dtype().np, x)
    tracked = _tracked(x)
    check_inplace(x, tracked)
    if tracked or forward_ad.has_tangent(x):
        snap = _snapshot(x)
        return _rebase(x, op(snap), tracked, snapshot=snap, redo=op)
    a = x._data
    with quiet():
        if a.flags.c_contiguous or not overlaps(a):
            array_fn(a)
        else:  # (elements sharing memory: written one after another, as PyTorch's)
            write_in_turn(a, lambda c: (array_fn(c), c)[1])
    x._bump_version()
    return x


def clamp_cast_names(*bounds) -> dict:
    """How PyTorch's refusal of a result type the clamped tensor cannot hold names that tensor's dtype
    (``_check_cast``'s ``out_names``): by its C++ type where every bound is a number (``clamp_``, ``clamp_min_``,
    ``clamp_max_``: "... to the desired output type long int", from the Scalar kernels' check), by its scalar
    type's name where a bound is a tensor ("... type Long")."""
    return SCALAR_TYPE_NAMES if any(isinstance(b, Tensor) for b in bounds) else CPP_TYPE_NAMES


def clamp_(x: Tensor, min=None, max=None) -> Tensor:
    """``x.clamp_(min, max)``: ``clamp``'s result (its bounds converted and promoted as there) written into ``x``,
    whose dtype must hold it (PyTorch's error otherwise: float bounds on an integer ``x``, int bounds on bool)."""

    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    refuse_partial_overlap(x._data, min)
    refuse_partial_overlap(x._data, max)

    min, max = un.overload_bounds("clamp_", min, max, method=True)
    names = clamp_cast_names(min, max)
    if names is SCALAR_TYPE_NAMES:  # (a result type x cannot hold, a complex bound's: refused before the kernel)
        _check_cast(ew.result_dtype(x, *(b for b in (min, max) if isinstance(b, Tensor))).np, x)
    elif not x.is_floating_point() and complex in (type(min), type(max)):
        # a complex number promotes an integer or bool x to the default complex type, which x cannot hold: PyTorch
        # refuses the cast before its kernel refuses a complex clamp (a floating x reads the number as a double)
        _check_cast(xp.dtype(xp.complex64), x, names)

    def write(a):
        result = un.clamp(Tensor._make(a), min, max)._data
        _check_cast(result.dtype, x, names)
        a[...] = result

    if isinstance(min, Tensor) or isinstance(max, Tensor):  # (bounds that require grad record it, as PyTorch's)
        tracked = _tracked(x, min) or _tracked(x, max)
        if tracked or forward_ad.has_tangent(x, min, max):
            check_inplace(x, tracked)
            snap = _snapshot(x)
            return _rebase(x, un.clamp(snap, min, max), tracked, (min, max), snap)
    return _unary_inplace(x, lambda t: un.clamp(t, min, max), write)


def relu_(x: Tensor) -> Tensor:
    un.refuse_relu(x._data)
    return _unary_inplace(x, un.relu, lambda a: un.relu_max(a, out=a))


def neg_(x: Tensor) -> Tensor:
    if x._data.dtype == xp.bool_:
        un.neg(x)  # (PyTorch's error for a bool tensor, the out-of-place form's)
    return _unary_inplace(x, un.neg, lambda a: xp.negative(a, out=a))


def bitwise_not_(x: Tensor) -> Tensor:
    if x._data.dtype.kind in "fc":
        ew.bitwise_not(x)  # (PyTorch's error for a floating or complex tensor, the out-of-place form's)
    return _unary_inplace(x, ew.bitwise_not, lambda a: xp.invert(a, out=a))


def exp_(x: Tensor) -> Tensor:
    return _unary_inplace(x, un.exp, lambda a: xp.exp(a, out=a), floating=True)


def sqrt_(x: Tensor) -> Tensor:
    return _unary_inplace(x, un.sqrt, lambda a: xp.sqrt(a, out=a), floating=True)


def sigmoid_(x: Tensor) -> Tensor:
    return _unary_inplace(x, un.sigmoid, lambda a: a.__setitem__(..., un.Sigmoid().forward(a)), floating=True)


def tanh_(x: Tensor) -> Tensor:
    return _unary_inplace(x, un.tanh, lambda a: xp.tanh(a, out=a), floating=True)


def abs_(x: Tensor) -> Tensor:
    if x._data.dtype == xp.bool_:
        un.abs(x)  # (PyTorch's error for a bool tensor, the out-of-place form's)
    return _unary_inplace(x, un.abs, lambda a: xp.abs(a, out=a))


class Fill(Node):
    """Overwrite with values that do not depend on the input: the old value gets a zero gradient."""

    def forward(self, x, values):
        return xp.broadcast_to(xp.asarray(values, dtype=x.dtype), x.shape).copy()

    def backward(self, g):
        return (xp.zeros_like(g),)


@torch_named("FillBackward2")
class FillNumber(Fill):
    """``x.fill_(number)`` recorded."""


@torch_named("ZeroBackward0")
class Zero(Fill):
    """``x.zero_()`` recorded."""


@torch_named("FillBackward0")
class FillOut(Fill):
    """``torch.fill(x, number)``."""


class FillTensor(Node):
    """Filled with a 0-d tensor's value (``torch.fill(x, value)``, ``x.fill_(value)``): the input gets a zero
    gradient, the value the sum of the gradient, as PyTorch's."""

    def forward(self, x, value):
        self.value_dtype = value.dtype
        return xp.broadcast_to(value.astype(x.dtype), x.shape).copy()

    def backward(self, g):
        needs = self.needs_input_grad
        return (xp.zeros_like(g) if needs[0] else None), (g.sum().astype(self.value_dtype) if needs[1] else None)


@torch_named("FillBackward1")
class FillTensorOut(FillTensor):
    """``torch.fill(x, value)``, ``value`` a 0-d tensor."""


@torch_named("FillBackward3")
class FillTensorInPlace(FillTensor):
    """``x.fill_(value)``, ``value`` a 0-d tensor."""


def _fill_value(value: Tensor) -> Tensor:
    if value._data.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value._data.ndim} "
                           "dimensions.")
    return value


def fill(input: Tensor, value) -> Tensor:
    """``torch.fill``: a new tensor of ``input``'s shape and dtype holding ``value`` (a number, converted as
    ``fill_`` converts it, or a 0-d tensor, which takes the gradient)."""
    if isinstance(value, Tensor):
        return FillTensorOut.apply(input, _fill_value(value))
    value = fill_number(value, input._data.dtype, input._data.size)
    return FillOut.apply(input, values=half_number(value, input._data.dtype))


def _fill_with(x: Tensor, values, overlap_ok: bool = False, node: type[Fill] = Fill) -> Tensor:
    """Replace every element of x by ``values`` (broadcast). With ``overlap_ok`` (a number: PyTorch's fill_ and
    zero_, not fill_ of a tensor, which is a copy_) an expanded tensor (elements sharing memory) is filled too, when
    nothing is recorded (one value reaches each location)."""
    tracked = _tracked(x)
    check_inplace(x, tracked, overlap_ok=overlap_ok and not tracked)
    if tracked or forward_ad.has_tangent(x):
        return _rebase(x, node.apply(_snapshot(x), values=values), tracked)
    a = x._data
    if a.flags.writeable:
        a[...] = values
    else:  # (check_inplace allowed it: an expanded tensor of writable memory)
        a.flags.writeable = True
        try:
            a[...] = values
        finally:
            a.flags.writeable = False
    x._bump_version()
    return x


def fill_(x: Tensor, value) -> Tensor:
    if isinstance(value, Tensor):
        _fill_value(value)
        if _tracked(x, value) or forward_ad.has_tangent(x, value):  # (the value takes the gradient)
            check_inplace(x, True)
            return _rebase(x, FillTensorInPlace.apply(_snapshot(x), value))
        with quiet():  # (a value past x's half precision range: inf, as PyTorch's copy, without NumPy's warning)
            return _fill_with(x, value._data)
    value = fill_number(value, x._data.dtype, x._data.size)  # (PyTorch's conversion: 1e5 into float16 and 300 into
    # int8 its error, -1 into uint8 255; 1e5 into a one-element float16 tensor inf)
    return _fill_with(x, half_number(value, x._data.dtype), overlap_ok=True, node=FillNumber)


def zero_(x: Tensor) -> Tensor:
    return _fill_with(x, 0, overlap_ok=True, node=Zero)


def apply_(x: Tensor, callable) -> Tensor:
    """``callable`` on each element (as a Python number), the results written back in ``x``'s dtype (a float
    result in an integer tensor truncated, as PyTorch's); refused on a tensor that requires grad, as PyTorch."""
    if x._requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.")
    a = x._data
    results = [callable(v) for v in a.ravel().tolist()]
    numbers = (bool, int, float, complex) if a.dtype.kind == "c" else (bool, int, float)
    for r in results:  # (NumPy would take None as nan, a complex with a warning, a string as a number)
        if not (isinstance(r, numbers) or hasattr(r, "__float__") or isinstance(r, Tensor) and r.numel() == 1):
            name = type(r).__name__
            raise TypeError(f"'{name}' object cannot be interpreted as an integer" if a.dtype.kind in "iub"
                            else f"must be real number, not {name}")
    values = xp.array([r.item() if isinstance(r, Tensor) else r for r in results]).reshape(a.shape)
    return _fill_with(x, values.astype(a.dtype))


@torch_named("CopyBackwards")
class CopyFrom(Node):
    """``copy_`` of a tensor that needs a gradient: PyTorch's ``CopyBackwards``."""

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"  # PyTorch's name, in its namespace

    def forward(self, x, src):
        return xp.broadcast_to(via_float32(src, x.dtype), x.shape).astype(x.dtype)

    def backward(self, g):
        return (xp.zeros_like(g) if self.needs_input_grad[0] else None), g


def copy_(x: Tensor, src, non_blocking: bool = False) -> Tensor:
    if not isinstance(src, Tensor):
        src = Tensor._make(xp.asarray(src))
    if isinstance(src, SparseTensor):  # (into a sparse tensor: SparseTensor.copy_)
        raise dense_sparse_copy_error(x, src)
    mismatch = inplace_broadcast_mismatch(x._data.shape, src._data.shape)
    if mismatch is not None:
        raise RuntimeError(mismatch)
    tracked = _tracked(x, src) and x.dtype._category > 1  # (into an integer or bool tensor: no history, as
    # PyTorch's, whose copy_ records none there)
    check_inplace(x, tracked)
    refuse_partial_overlap(x._data, src)
    if tracked or forward_ad.has_tangent(x, src) and x.dtype._category > 1:
        return _rebase(x, CopyFrom.apply(_snapshot(x), src), tracked, (src,))
    if x._data.size:  # (an empty destination takes nothing: an uninitialised parameter's, whose storage refuses
        # writes, too, as PyTorch's copies into one)
        a, values = x._data, via_float32(src._data, x._data.dtype)
        with quiet():  # inf/nan cast to an integer dtype: unspecified values silently, as PyTorch
            if a.flags.c_contiguous or not overlaps(a):
                xp.copyto(a, values, casting="unsafe")
            else:  # (elements sharing memory: each location keeps the last value PyTorch's order writes there)
                write_in_turn(a, lambda c: values.astype(a.dtype), (src._data,), reads=False)
    x._bump_version()
    return x


def check_normal_std(std) -> None:
    """PyTorch's RuntimeError for a normal distribution's negative ``std`` (a number or a tensor) or complex
    ``std`` tensor."""
    if isinstance(std, Tensor):
        if np_kind(std._data.dtype) == "c":
            raise RuntimeError("normal expects standard deviation to be non-complex")
        if std._data.size and (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def check_uniform_bounds(x: Tensor, a: float, b: float) -> None:
    """PyTorch's errors for ``uniform_``, in its order: an integer tensor; a bound that is not a finite number
    within the (real) dtype's range (NaN and the infinities included); bounds out of order; a range ``to - from``
    past the dtype's largest value (its draws would overflow to inf)."""
    if np_kind(x._data.dtype) not in "fc":
        raise not_implemented_for("check_uniform_bounds", x.dtype)
    limits = xp.finfo(x._data.dtype)  # a complex tensor's real dtype: PyTorch checks its view_as_real
    real, lowest, highest = xp.dtype(limits.dtype).name, float(limits.min), float(limits.max)
    for value, name in ((a, "from"), (b, "to")):
        if not lowest <= value <= highest:
            raise RuntimeError(f"{name} is out of bounds for {CPP_TYPE_NAMES[real]}")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    if not b - a <= highest:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{SCALAR_TYPE_NAMES[real]}>::max(), "
                           f"but found to={b:g} and from={a:g} which result in to-from to exceed the limit")


def draws_nothing(x: Tensor) -> bool:
    """Whether a random fill of ``x`` draws nothing: a meta tensor has no values to fill, and PyTorch's meta
    kernels leave the generator's state as it was (a model built under ``device("meta")`` then initialised on
    the CPU gets the same numbers as one built there)."""
    return is_meta(x._data)


def _draw_into(x: Tensor, draw) -> Tensor:
    """Fill x with ``draw(n, real_dtype)``'s flat values in memory order, as PyTorch's kernels fill a tensor."""
    a = x._data
    return _fill_with(x, draws.in_memory_order(draws.floating(draw, (a.size,), a.dtype), a))


def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with N(mean, std^2) draws: PyTorch's numbers (float32/float64; a contiguous tensor of 16 or more
    elements is filled in blocks, anything else by the scalar path in memory order). A complex tensor's real and
    imaginary parts each get variance std^2 / 2."""
    check_normal_std(std)
    if x._data.size and np_kind(x._data.dtype) not in "fc":  # (PyTorch's kernel: not run for no elements)
        raise not_implemented_for("normal_kernel_cpu", x.dtype)
    if draws_nothing(x):
        return x
    g, contiguous, std = generator_of(generator), x._data.flags.c_contiguous, draws.part_std(std, x._data.dtype)
    return _draw_into(x, lambda n, real: draws.normal(g, n, mean, std, real, contiguous))


def uniform_(x: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    """Fill with draws uniform on [a, b): PyTorch's numbers (float32/float64)."""
    check_uniform_bounds(x, a, b)
    if draws_nothing(x):
        return x
    g = generator_of(generator)
    return _draw_into(x, lambda n, real: draws.uniform(g, n, a, b, real))


def bernoulli_(x: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability ``p`` (a number, or a tensor broadcast to x's shape), else 0: PyTorch's
    numbers (a number p compares a 53-bit uniform; a tensor p a 24-bit one, 53-bit when p is float64)."""
    g, a = generator_of(generator), x._data
    if not isinstance(p, Tensor) and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if draws_nothing(x):
        return x
    check_bernoulli_dtypes(a, p._data if isinstance(p, Tensor) else p)
    if isinstance(p, Tensor):
        probs = draws.flat_in_memory_order(xp.broadcast_to(p._data, a.shape), a)
        return _fill_with(x, draws.in_memory_order(draws.bernoulli_tensor(g, probs), a))
    return _fill_with(x, draws.in_memory_order(draws.bernoulli_scalar(g, a.size, p), a))


def random_(x: Tensor, low: int | EllipsisType = ..., to: int | None | EllipsisType = ..., *, generator=None,
            from_: int | None | EllipsisType = ...) -> Tensor:
    """Integers drawn uniformly (PyTorch's numbers), as PyTorch's overloads: ``random_()`` 0 to the dtype's bound
    inclusive (2**mantissa digits for a floating dtype, the largest value for an integer one, 1 for bool);
    ``random_(to)`` 0 to ``to - 1``; ``random_(from, to)`` ``from`` to ``to - 1``; ``random_(from, None)``
    ``from`` to the dtype's largest value (2**mantissa digits for a floating dtype).
    Bounds the dtype cannot hold are PyTorch's errors (``random_range``). (``...``: not given; ``to=None``:
    up to the dtype's largest value, where ``from`` None is PyTorch's TypeError; ``from_``: the keyword ``from=``,
    a Python keyword, which PyTorch takes only together with ``to``.)"""
    if from_ is not ...:
        if low is not ... or to is ...:
            raise TypeError("random_() received an invalid combination of arguments: from= is accepted only with "
                            "to= (random_(from, to)); random_(to) draws from 0 to to - 1")
        low = from_
    args = tuple(a for a in (low, to) if a is not ...)
    bounds = random_range(x, args, low, to)
    if draws_nothing(x):
        return x
    g, a = generator_of(generator), x._data
    if bounds is None:
        values = draws.random_full(g, a.size, a.dtype)
    else:
        low, to_inc = bounds
        values = draws.random_from_to(g, a.size, low, to_inc + 1, a.dtype)
    return _fill_with(x, draws.in_memory_order(values, a))


def _fill_float64(x: Tensor, draw, refusal=None) -> Tensor:
    """Fill x with ``draw(n)``'s float64 values (PyTorch computes these in double and casts). ``refusal(x)``:
    PyTorch's error for a dtype its kernel has no version for (None where x's is taken), raised where the kernel
    runs (x has elements)."""
    if draws_nothing(x):
        return x
    if x._data.size and refusal is not None and (error := refusal(x)) is not None:
        raise error
    values = draw(x._data.size)
    return _fill_with(x, draws.in_memory_order(values.astype(x._data.dtype), x._data))


def _floating_only(x: Tensor) -> Exception | None:
    """exponential_'s refusal of a tensor that is not floating (its own check, as cauchy_'s, naming the type)."""
    if np_kind(x._data.dtype) != "f":
        return RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                            f"floating point but you specified {SCALAR_TYPE_NAMES[x.dtype.name]}")
    return None


def _log_normal_dtype(x: Tensor) -> Exception | None:
    """log_normal_'s kernel has floating versions only."""
    return not_implemented_for("log_normal_cpu", x.dtype) if np_kind(x._data.dtype) != "f" else None


def _geometric_dtype(x: Tensor) -> Exception | None:
    """geometric_'s kernel has floating and integer versions (the counts), no bool or complex one."""
    return not_implemented_for("geometric_cpu", x.dtype) if x._data.dtype.kind in "bc" else None


def exponential_(x: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with Exp(lambd) draws: PyTorch's numbers. As PyTorch's, a tensor of any but a floating dtype is
    refused (after lambd's check, and only with elements to fill)."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill_float64(x, lambda n: draws.exponential(generator_of(generator), n, lambd), _floating_only)


def log_normal_(x: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with exp(N(mean, std^2)) draws: PyTorch's numbers (its scalar normal path, which shares the
    generator's cached sample with ``normal_``'s). A tensor of any but a floating dtype: PyTorch's error."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill_float64(x, lambda n: draws.log_normal(generator_of(generator), n, mean, std), _log_normal_dtype)


def geometric_(x: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success: PyTorch's numbers. An integer tensor
    takes them; a bool or complex one is PyTorch's error."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _fill_float64(x, lambda n: draws.geometric(generator_of(generator), n, p), _geometric_dtype)


def cauchy_(x: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with Cauchy(median, sigma) draws: PyTorch's numbers."""
    if np_kind(x._data.dtype) != "f":
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {CPP_TYPE_NAMES[x._data.dtype.name]}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill_float64(x, lambda n: draws.cauchy(generator_of(generator), n, median, sigma))


def _write_back(x: Tensor, op, *others, out_names: dict = SCALAR_TYPE_NAMES) -> Tensor:
    """x <- op(x): recorded when x (or a tensor in ``others``) needs a gradient, a plain write otherwise;
    ``out_names``: ``_check_cast``'s, how a refused cast names x's dtype."""
    tracked = _GradState.enabled and (
        x._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others))
    check_inplace(x, tracked)
    if tracked or forward_ad.has_tangent(x, *others):
        snap = _snapshot(x)
        return _rebase(x, _same_shape(op(snap), x), tracked, others, snap, op)
    with no_grad():
        result = _same_shape(op(x), x)
    _check_cast(result._data.dtype, x, out_names)
    a = x._data
    if a.flags.c_contiguous or not overlaps(a):
        a[...] = result._data
    else:  # (elements sharing memory: computed and written one after another, as PyTorch's)
        with no_grad():
            write_in_turn(a, lambda c: _same_shape(op(Tensor._make(c)), x)._data, _arrays(others))
    x._vc[0] += 1
    return x


def _same_shape(result: Tensor, x: Tensor) -> Tensor:
    """``result``, refused as PyTorch refuses an in-place op whose operands broadcast beyond ``x``'s shape."""
    if result._data.shape != x._data.shape:
        raise RuntimeError(f"output with shape {list(x._data.shape)} doesn't match the broadcast shape "
                           f"{list(result._data.shape)}")
    return result


def pointwise_(x: Tensor, op, *args, **kwargs) -> Tensor:
    """``x.op_(*args)`` for a pointwise ``op`` (``x.log_()``, ``x.addr_(v1, v2)``): recorded or plain, like the ones
    above; recorded also when only a tensor among ``args`` requires grad, as PyTorch's."""
    if args:
        return _write_back(x, lambda t: op(t, *args, **kwargs), *args)
    return _unary_inplace(x, lambda t: op(t, *args, **kwargs),
                          lambda a: a.__setitem__(..., _check_kept(op(Tensor._make(a), *args, **kwargs), x)))


def _check_kept(result: Tensor, x: Tensor):
    """The result's array, refused when it cannot be stored in x's dtype (float results into an int tensor)."""
    _check_cast(result._data.dtype, x)
    return result._data


def remainder_(x: Tensor, other) -> Tensor:
    if np_kind(x._data.dtype) in "iu":  # (NumPy's remainder by zero is 0)
        ew.refuse_integer_zero_division(x._data, other._data if isinstance(other, Tensor) else other)
    return _binary_inplace(x, other, ew.remainder_values, ew.remainder, "remainder_")

