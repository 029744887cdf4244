"""Elementwise ops: arithmetic, comparisons and unary math.

Binary ops accept tensors and Python scalars on either side and follow
PyTorch's type promotion (``promote``). Gradients are returned at the
broadcast shape; the engine sums them down to each input's shape.
"""

from __future__ import annotations

import math
import operator

from .. import _deprecated_overloads as _deprecated
from .. import _dtype
from .._arg_aliases import operand_type_error
from .._backend import quiet, xp
from .._dtype import checked_fill, not_implemented_for, np_kind
from .._memory_format import astype_result
from .._meta import check_operand_devices, is_meta, iterator_layout, meta_results, refuse_meta, strides_like
from .._meta import made as _meta_made
from .._size import c_type_name
from .._tensor import Tensor
from .._uninitialized import UnmaterializedArray
from ..autograd import graph as _graph
from ..autograd.forward_ad import has_tangent
from ..autograd.grad_mode import no_grad
from ..autograd.graph import Node, apply_same, cast_gradient, shape_error, torch_named
from ..autograd.no_derivative import _NotImplemented
from ..autograd.recorded import RecordedArray, formula_tensor, is_recorded
from ..autograd.saved_attributes import NotSaved, saved_tensor
from ..autograd.selected import selected_gradient


# --------------------------------------------------------------------- promotion
def result_dtype(*tensors: Tensor) -> _dtype.dtype:
    """PyTorch's result_type of tensors: those with dimensions promoted together, 0-d ones only by category."""
    dim = zero = None
    for t in tensors:
        if t._data.ndim:
            dim = t.dtype if dim is None else _dtype.promote_types(dim, t.dtype)
        else:
            zero = t.dtype if zero is None else _dtype.promote_types(zero, t.dtype)
    if dim is None or zero is None:
        return zero if dim is None else dim
    return _dtype.combine_categories(dim, zero)


def promote(a, b):
    """Cast operands so a binary op computes in PyTorch's result dtype.

    Returns (a, b) where tensors may have been cast (a recorded, differentiable
    cast) and NumPy scalars became Python scalars (so they stay "weak").
    """
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if _meta_made[0]:  # (a meta tensor with a CPU one: PyTorch's error)
            check_operand_devices(a._data, b._data)
        if a._data.dtype == b._data.dtype:
            return a, b
        target = result_dtype(a, b)
        return promoted(a, target), promoted(b, target)
    t, s, swapped = (a, b, False) if isinstance(a, Tensor) else (b, a, True)
    if (s.__class__ is float or s.__class__ is int and -9223372036854775808 <= s <= 18446744073709551615) and \
            t._data.dtype.kind in "fc":
        return a, b  # a Python number with a floating tensor: the tensor's dtype (the common case, decided at once)
    if isinstance(s, xp.generic):
        s = _dtype.parsed_number(s)
    elif isinstance(s, xp.ndarray):  # PyTorch hands `tensor + array` to NumPy and wraps NumPy's result, ungraded
        raise TypeError("a NumPy array cannot be an operand of a tensor op; convert it first with "
                        "ember.from_numpy(array) (shares its memory) or ember.as_tensor(array, dtype=...)")
    elif not isinstance(s, (int, float, bool, complex)):
        raise operand_type_error(s)  # (the function called, which knows its name, words PyTorch's error)
    cat = _dtype.scalar_category(s)
    if cat > t.dtype._category:
        t = promoted(t, _dtype.combine_categories(t.dtype, _dtype.category_dtype(cat)))
    if cat == 1:
        s = operand_int(int(s), t._data.dtype)
    return (s, t) if swapped else (t, s)


_OPERAND_RANGES: dict = {}  # NumPy dtype -> the ints an operand beside it keeps as they are (lowest, largest)


def operand_int(value: int, np_dtype) -> int:
    """A Python int operand of a binary op beside a tensor of NumPy dtype ``np_dtype``, as PyTorch's kernels read
    it: an int64 (a uint64 from 2**63 on), PyTorch's OverflowError beyond that; then converted to an integer tensor's
    dtype as C++ casts, wrapping (``int8 + 300`` is ``int8 + 44``, ``uint8 > -1`` compares with 255), where NumPy
    raises OverflowError. (Fill values, ``where``'s and ``clamp``'s are checked instead: ``checked_fill``.)"""
    bounds = _OPERAND_RANGES.get(np_dtype)
    if bounds is None:
        info = xp.iinfo(np_dtype) if np_kind(np_dtype) in "iu" else None
        bounds = _OPERAND_RANGES[np_dtype] = (-9223372036854775808, 18446744073709551615) if info is None else \
            (int(info.min), int(info.max))
    if bounds[0] <= value <= bounds[1]:
        return value  # (the common case: it fits)
    _dtype.scalar_int(value)
    bits = np_dtype.itemsize * 8
    wrapped = value & ((1 << bits) - 1)
    if np_dtype.kind == "i" and wrapped >> (bits - 1):
        wrapped -= 1 << bits
    return wrapped


def is_inexact(t: Tensor) -> bool:
    """Floating or complex: the dtypes math functions compute in (and gradients flow through)."""
    return np_kind(t._data.dtype) in "fc"


def conj_if_complex(a):
    """``conj(a)`` for a complex array, ``a`` itself otherwise: the conjugate PyTorch's gradient formulas
    take of a complex factor (grad_input = grad * conj(df/dz) for a holomorphic f), at no cost for real ones."""
    if isinstance(a, (int, float)):
        return a
    if isinstance(a, complex):  # a Python scalar operand
        return a.conjugate()
    return a.conj() if a.dtype.kind == "c" else a  # an array (recorded under create_graph) or a NumPy scalar


def refuse_complex(t: Tensor, op: str, error: type[Exception] = NotImplementedError) -> None:
    """PyTorch's error for an op without a complex version (NumPy would order complex numbers lexicographically,
    or round their parts)."""
    if t._data.dtype.kind == "c":
        raise not_implemented_for(op, t.dtype, error)


def _float_operands(a, b):
    """Promote, then make integer/bool results floating (true division, pow with float, ...). Integral operands are
    each converted to the default float dtype themselves, as PyTorch's kernels read them: ``int8 / 300`` divides by
    300, not by the 44 that promotion into int8 wraps it to (nor a 0-d int64 tensor of 300 cast to int8)."""
    pa, pb = promote(a, b)
    if is_inexact(pa if isinstance(pa, Tensor) else pb):
        return pa, pb
    f = _dtype.get_default_dtype()
    return tuple(cast(v, f) if isinstance(v, Tensor) else v.item() if isinstance(v, xp.generic) else v
                 for v in (a, b))


# --------------------------------------------------------------------- cast
COMPLEX_TO_REAL_WARNING = "Casting complex values to real discards the imaginary part"


@torch_named("ToCopyBackward0")
class ToCopy(Node):
    diagonal_jacobian = True
    own_layout = True  # (astype_result: the input's strides, as PyTorch's empty_like keeps a dense layout's)

    def forward(self, x, dtype):
        self.src = x.dtype
        if x.__class__ is UnmaterializedArray:
            # an uninitialised parameter's conversion, which PyTorch lets through: a plain tensor of no elements
            x = x.view(xp.ndarray)
        if x.dtype.kind == "c" and dtype.kind != "c":
            # PyTorch's warning, once per process (its TORCH_WARN_ONCE), NumPy's ComplexWarning silenced
            from .._warnings import warn_once

            warn_once(COMPLEX_TO_REAL_WARNING, UserWarning)
            return strides_like(astype_result(x.real, dtype), x)
        # (an expanded x: a contiguous copy, as PyTorch's; a dense one's strides, a size-1 dimension's too)
        return strides_like(astype_result(x, dtype), x)

    def backward(self, g):
        if g.dtype.kind == "c" and self.src.kind != "c":  # real -> complex: the real part flows back
            g = g.real
        return (g.astype(self.src),)


def cast(t: Tensor, dtype: _dtype.dtype) -> Tensor:
    """``t`` in ``dtype`` (the same tensor if it already is; a Python type as PyTorch reads it: ``float`` float64)."""
    if dtype.__class__ is type:
        dtype = _dtype.from_python_type(dtype)
    if t._data.dtype == dtype.np:
        return t
    if t.is_sparse:  # a sparse COO tensor (dense + sparse promotes it, .double()): its values cast, unrecorded
        return type(t).wrap(t._data.cast(dtype.np))
    if dtype._category < 2 and t._requires_grad and _graph._GradState.enabled:
        with no_grad():  # (an integer or bool result has no history in PyTorch: not recorded at all)
            return ToCopy.apply(t, dtype=dtype.np)
    return ToCopy.apply(t, dtype=dtype.np)


def promoted(t: Tensor, dtype: _dtype.dtype) -> Tensor:
    """``t`` in ``dtype`` as an op that promotes its operands reads it: as ``cast``, but a tensor that requires grad
    is no ToCopyBackward0's output: it stands in ``t``'s place in the graph (``graph.promoted_input``), as PyTorch's
    ops compute in the promoted dtype and its engine casts the gradient back to ``t``'s dtype on the edge."""
    if dtype.__class__ is type:  # (as cast's: a Python type as PyTorch reads it)
        dtype = _dtype.from_python_type(dtype)
    if t._data.dtype == dtype.np:
        return t
    if not (t._requires_grad and t.__class__ is Tensor and t._data.__class__ is xp.ndarray and dtype._category >= 2
            and _graph._GradState.enabled
            and (_graph._dual_level is None or _graph._dual_level.get(t) is None)):
        out = cast(t, dtype)  # (nothing to stand in for; forward AD's tangent and a meta tensor: ToCopy's)
        if dtype._category < 2 and t._requires_grad and out is not t and t._data.dtype.kind in "biu" and \
                _graph._GradState.enabled:
            # an integer or bool tensor with a history (filled in place from a value that requires grad) read in
            # another integer dtype (a bool one in ``b + 1``, ``b.sum()``): PyTorch's op computes on it as it is and
            # its node refuses the integer result it would record ("Autograd not support dtype: Long"); the cast,
            # which records nothing, keeps the flag so that the op's ``Node.apply`` refuses it so
            out._requires_grad = True
        return out
    data = t._data
    if data.dtype.kind == "c" and dtype.np.kind != "c":  # (ToCopy's rule: PyTorch's warning, the real part kept)
        from .._warnings import warn_once

        warn_once(COMPLEX_TO_REAL_WARNING, UserWarning)
        data = data.real
    with quiet():  # (overflow to inf silently, as PyTorch's)
        return _graph.promoted_input(t, astype_result(data, dtype.np))


def refuse_integer_history(t: Tensor, dtype) -> None:
    """PyTorch's error for a reduction asked (``dtype=``) for an integer or bool result of a tensor that requires
    grad while recording (sum, prod, nansum, cumsum, cumprod): its node would give that result a history, which
    PyTorch's autograd refuses for such a dtype (a cast alone, ``x.long()``, is fine: it has none)."""
    if dtype is None or not t.requires_grad or not _graph._GradState.enabled:
        return
    if dtype.__class__ is type:
        dtype = _dtype.from_python_type(dtype)
    if dtype._category < 2:
        raise RuntimeError(f"Autograd not support dtype: {_dtype.SCALAR_TYPE_NAMES[dtype.name]} (a sum or product "
                           "of a tensor that requires grad needs a floating or complex dtype=; detach() it first "
                           "for an integer count)")


# --------------------------------------------------------------------- binary arithmetic
def number_in_float32(array, number) -> bool:
    """Whether PyTorch's CPU kernels compute ``array`` (a half or bfloat16 one) with the Python ``number`` in
    float32, the result rounded once to the array's dtype: mul and div take the number as a float32 (NumPy would
    first round it to the array's dtype: ``x * 2.0315`` would multiply by 2.03125); add and sub take it rounded to
    the array's dtype through float32 (``half_scalar``), and times ``alpha`` so rounded (``add_scaled``)."""
    return (number.__class__ is float or number.__class__ is int) and array.__class__ is xp.ndarray \
        and array.dtype.itemsize == 2 and np_kind(array.dtype) == "f"


def half_scalar(value, dtype, alpha: bool = False) -> float:
    """The Python number ``value`` as PyTorch converts a scalar for a half precision (float16, bfloat16) kernel:
    to float32, then to ``dtype`` (NumPy's one rounding from the double puts a number just past a halfway point
    between two half values on the other side of it). A finite ``alpha`` beyond the dtype's largest value is
    PyTorch's RuntimeError, also one that rounding would bring back to that value (an overflowing operand becomes
    infinite, as PyTorch's)."""
    with quiet():
        half = xp.float32(value).astype(dtype)
    if alpha and math.isfinite(value) and abs(value) > float(xp.finfo(dtype).max):
        raise RuntimeError(f"value cannot be converted to type {_dtype.CPP_TYPE_NAMES[str(xp.dtype(dtype))]} "
                           "without overflow")
    return float(half)


def _half_operands(a, b):
    """add's and sub's operands with a Python number beside a half precision tensor: the number rounded to the
    tensor's dtype through float32 (``half_scalar``); NumPy then computes the sum in float32 and rounds it once, as
    PyTorch's kernel. Other operands are returned as they are."""
    if a.__class__ is Tensor and number_in_float32(a._data, b):
        return a, half_scalar(b, a._data.dtype)
    if b.__class__ is Tensor and number_in_float32(b._data, a):
        return half_scalar(a, b._data.dtype), b
    return a, b


def left_number(a, b):
    """``a`` as PyTorch's ``torch.mul(a, b)`` and ``torch.div(a, b)`` read a Python number ``a`` on the left of a half
    precision tensor ``b``: wrapped into a 0-d tensor and cast to ``b``'s dtype (``half_scalar``), where on the right
    (``b * a``, ``torch.mul(b, a)``) the kernel takes it in float32 (``with_number``). Any other ``a`` as it is."""
    if b.__class__ is Tensor and number_in_float32(b._data, a):
        return half_scalar(a, b._data.dtype)
    return a


def wrapped_left_number(a, b):
    """``a`` as PyTorch's ``torch.add(a, b, alpha=)``/``torch.sub`` take a Python number ``a`` on the left of a half
    precision, float32 or float64 tensor ``b``: a 0-d tensor of ``b``'s dtype (``half_scalar`` for a half one), so
    that ``a + alpha * b`` is the fused sum of two tensors (``add_scaled``), not ``alpha * b`` rounded to ``b``'s
    dtype first. Any other ``a`` as it is."""
    if b.__class__ is Tensor and number_in_float32(b._data, a):
        return Tensor._make(xp.asarray(half_scalar(a, b._data.dtype), dtype=b._data.dtype))
    if (a.__class__ is float or a.__class__ is int) and b.__class__ is Tensor and b._data.__class__ is xp.ndarray \
            and (b._data.dtype == xp.float32 or b._data.dtype == xp.float64):
        # (beside a float32 or float64 one, likewise: PyTorch's a + alpha * b is one fused multiply-add, add_scaled)
        with xp.errstate(all="ignore"):  # (a number past float32's range: infinite, as PyTorch's conversion)
            return Tensor._make(xp.asarray(a, dtype=b._data.dtype))
    return a


def with_number(op, a, b):
    """``op(a, b)`` (a product or quotient), in float32 where ``number_in_float32`` says PyTorch computes so."""
    if number_in_float32(a, b):
        return op(a.astype(xp.float32), xp.float32(b)).astype(a.dtype)
    if number_in_float32(b, a):
        return op(xp.float32(a), b.astype(xp.float32)).astype(b.dtype)
    return op(a, b)


@torch_named("MulBackward1")
class TimesNumber(Node):
    """``x * s`` for a number ``s``, as PyTorch's C++ formulas multiply by a double (mul.Scalar): its one edge is
    the tensor's (Python's ``x * s`` records MulBackward0, with an edge for the number)."""

    diagonal_jacobian = True
    _saved_other = property(lambda node: node.s)  # (PyTorch's name: the number, as a number)

    def forward(self, x, *, s):
        self.s = s
        return with_number(operator.mul, x, s)

    def backward(self, g):
        return (with_number(operator.mul, g, self.s),)


def times_number(a, s):
    """``a * s`` for an array ``a`` and a number ``s`` in a backward formula: under create_graph (a recorded
    ``a``) the node PyTorch's formula records, MulBackward1 (``TimesNumber``)."""
    if is_recorded(a):
        return RecordedArray(TimesNumber.apply(a.t, s=s))
    return with_number(operator.mul, a, s)


def add_scaled(a, b, alpha, out=None):
    """``a + alpha * b`` (arrays) as PyTorch's add kernel computes it for half precision: a fused multiply-add,
    rounded once, ``alpha`` rounded to the operands' dtype first (emulated exactly in float64). Any other result
    dtype is ``a + b * alpha`` in that dtype (``alpha`` a float32 for a float32 result, e.g. an in-place op's
    float32 operand with a half one), rounded twice: PyTorch fuses float32 too, so the last bit of about one
    element in six differs from PyTorch's; emulating the fused operation costs NumPy about eight times the
    time of the two passes (an optimizer's ``p.add_(g, alpha=-lr)``). ``out``: an array to write into (may be
    ``a``). A Python number ``b`` (``fused_alpha``) is PyTorch's too: beside a float32 or float64 ``a``, it and
    ``alpha`` converted to ``a``'s dtype, one fused multiply-add; beside a half precision one, both rounded to
    ``a``'s dtype through float32 (``half_scalar``), their product exact in float32, the sum computed in float32
    and rounded once."""
    if b.__class__ is float or b.__class__ is int:
        if a.dtype == xp.float32 or a.dtype == xp.float64:  # (float32 in float64, exact; float64 by Dekker's)
            from .statistics import _fused_multiply_add

            with xp.errstate(all="ignore"):  # (a number past float32's range: infinite, as PyTorch's conversion)
                summed = _fused_multiply_add(a.dtype.type(b), a.dtype.type(alpha), a)
        else:
            summed = with_number(operator.add, a, half_scalar(b, a.dtype) * half_scalar(alpha, a.dtype, alpha=True))
        if out is None:
            return summed
        out[...] = summed
        return out
    # PyTorch's common dtype (an integer operand beside a half one is cast to it; NumPy's result_type would widen
    # float16 with int32 to float64)
    dt = a.dtype if a.dtype == b.dtype else _dtype.promote_types(_dtype.from_np(a.dtype), _dtype.from_np(b.dtype)).np
    if dt.itemsize == 2 and np_kind(dt) == "f":  # (two half or two bfloat16 operands, or one beside an integer one)
        scale = half_scalar(alpha, dt, alpha=True)
        b = b.astype(dt, copy=False)  # (an integer operand rounded to the half type first, as PyTorch casts it)
        fused = (a.astype(xp.float64) + scale * b.astype(xp.float64)).astype(xp.float32)
        if out is None:
            return fused.astype(dt)
        out[...] = fused
        return out
    if not a.ndim and b.ndim and a.dtype == b.dtype and (dt == xp.float32 or dt == xp.float64):
        # a number (a 0-d tensor) on the left: PyTorch's fused multiply-add, which costs one pass over b here too
        from .statistics import _fused_multiply_add

        summed = _fused_multiply_add(b, dt.type(alpha), a)
        if out is None:
            return summed
        out[...] = summed
        return out
    scaled = b.astype(dt, copy=False) * (xp.float32(alpha) if dt == xp.float32 else alpha)
    return xp.add(a, scaled) if out is None else xp.add(a, scaled, out=out, casting="unsafe")


def complex_addend(b):
    """``b`` (an array or a number) as PyTorch's add/sub kernel adds it into a complex result: cast to complex and
    multiplied by ``alpha`` (1) as a complex number, its ``a + alpha * b``, whose inf * 0 terms are NaN: a real inf
    added to a complex number gives ``inf + nanj`` (``torch.add(1 + 2j, torch.tensor(inf))``), an imaginary one
    ``nan + infj``; NumPy's sum of the operands leaves those terms out."""
    with xp.errstate(invalid="ignore"):
        if isinstance(b, xp.ndarray):
            if b.dtype.kind != "c":
                b = b.astype(xp.result_type(b.dtype, xp.complex64))
            return b * b.dtype.type(1)
        return complex(b) * (1 + 0j)


def complex_difference(a, b, alpha=1, out=None):
    """``a - alpha * b`` into a complex result as PyTorch's sub kernel computes it: ``a + (-alpha) * b`` (sub is
    add with ``alpha`` negated), ``alpha`` negated as a number (a real one then made complex, ``-2 + 0j``; a complex
    one part by part, ``-1j`` is ``-0 - 1j``) and multiplied into ``b`` as complex numbers in the result's dtype
    (a Python number rounded to it first, complex64's). The product's ``0 * x`` terms turn some ``-0.0`` parts into
    ``+0.0`` (``(-0 - 0j) - 0`` is ``-0 + 0j``, where ``a - b`` keeps ``-0 - 0j``) and its ``inf * 0`` terms are NaN
    (``complex_addend``'s). ``a``, ``b``: arrays or numbers; ``out``: an array to write into (may be ``a``)."""
    dt = xp.result_type(a, b)  # (PyTorch's common dtype: an in-place complex64 one with a complex128 operand
    negated = dt.type(-alpha if alpha.__class__ is complex else complex(-alpha))  # computes in complex128)
    with xp.errstate(invalid="ignore", over="ignore"):
        b = b.astype(dt, copy=False) if isinstance(b, xp.ndarray) else dt.type(b)
        a = a.astype(dt, copy=False) if isinstance(a, xp.ndarray) else dt.type(a)
        return xp.add(a, b * negated, out=out, casting="unsafe")


def _complex_sum(ufunc, a, b):
    """``ufunc(a, b)`` (add or subtract, alpha 1), with ``b`` as PyTorch's kernel adds it where the result is
    complex (``complex_addend``; rare: one test of the result's dtype for the others)."""
    result = ufunc(a, b)
    return result if result.dtype.kind != "c" else ufunc(a, complex_addend(b))


@torch_named("AddBackward0")
class Add(Node):
    diagonal_jacobian = True
    alpha = 1  # (on the class: a node's own only when not 1, so most nodes need no instance dictionary)
    _saved_alpha = property(lambda self: self.alpha)  # (PyTorch's name)
    scaled_operand = False  # (True on _AddOfScaled)

    def forward(self, a, b, alpha=1):
        if alpha != 1:
            self.alpha = alpha
        if alpha != 1:
            return add_scaled(a, b, alpha)
        return a + b if self.scaled_operand else _complex_sum(operator.add, a, b)

    def backward(self, g):
        if not self.needs_input_grad[1]:  # (a Python number b, with alpha: no product to compute)
            return g, None
        return g, (g if self.alpha == 1 else with_number(operator.mul, g, self.alpha))


@torch_named("SubBackward0")
class Sub(Node):
    diagonal_jacobian = True
    alpha = 1  # (as Add's)
    _saved_alpha = property(lambda self: self.alpha)
    scaled_operand = False  # (True on _SubOfScaled)

    def forward(self, a, b, alpha=1):
        if alpha != 1:
            self.alpha = alpha
            # (complex: PyTorch's a + (-alpha) * b)
            return complex_difference(a, b, alpha) if _complex_operands(a, b) else add_scaled(a, b, -alpha)
        # (a scaled operand, already alpha * b: the plain difference; either operand an array or a number (a
        # recorded gradient formula's ``1 - y``): the test inline, as this is real subtraction's path, the complex
        # difference computed alone)
        if self.scaled_operand or (a.dtype.kind != "c" if a.__class__ is xp.ndarray else not _is_complex(a)) and \
                (b.dtype.kind != "c" if b.__class__ is xp.ndarray else not _is_complex(b)):
            return a - b
        return complex_difference(a, b)

    def backward(self, g):
        if not self.needs_input_grad[1]:
            return g, None
        return g, _times_minus_alpha(g, self.alpha)


@torch_named("AddBackward0")
class _AddOfScaled(Add):
    """``a + b`` where ``b`` is already ``alpha * b`` (``scaled_operand``), its complex product's NaN included:
    a plain sum (``complex_addend`` again would turn ``inf + nanj`` into ``nan + nanj``)."""
    scaled_operand = True


@torch_named("SubBackward0")
class _SubOfScaled(Sub):
    """``a - b`` where ``b`` is already ``alpha * b`` (as ``_AddOfScaled``)."""
    scaled_operand = True


def _is_complex(v) -> bool:
    """Whether ``v`` (a number, an array or a tensor) is complex."""
    if v.__class__ is float or v.__class__ is int:  # (the common numbers first: x - 2.0)
        return False
    if isinstance(v, Tensor):
        v = v._data
    return isinstance(v, (complex, xp.complexfloating)) or getattr(v, "dtype", None) is not None and \
        v.dtype.kind == "c"


def _complex_operands(a, b) -> bool:
    """Whether ``a`` or ``b`` (numbers, arrays or tensors) is complex: add's and sub's result then is, computed as
    PyTorch's kernel computes it (``complex_difference``)."""
    return _is_complex(a) or _is_complex(b)


def _times_minus_alpha(g, alpha):
    """The gradient of ``-alpha * b`` (sub's and rsub's scaled operand): ``-g``, or ``g`` times ``-alpha`` computed
    as the forward's product (``with_number``); a complex ``alpha`` conjugated, as PyTorch's formula (rsub takes
    one)."""
    if alpha == 1:
        return -g
    return with_number(operator.mul, g, -(alpha.conjugate() if alpha.__class__ is complex else alpha))


@torch_named("RsubBackward0")
class Rsub(Sub):
    """``rsub(input, other)``, ``other - alpha * input``: Sub's node with its inputs in PyTorch's order."""

    own_layout = True  # (PyTorch computes other - alpha * input: other is the first operand)

    def forward(self, input, other, alpha=1):
        return iterator_layout(Sub.forward(self, other, input, alpha), (other, input))

    def backward(self, g):
        ni, no = self.needs_input_grad
        gi = _times_minus_alpha(g, self.alpha) if ni else None
        return gi, (g if no else None)


@torch_named("RsubBackward1")
class RsubNumber(Node):
    """``number - alpha * input`` (``2.5 - x``, ``rsub(x, 2.5)``): as PyTorch's node, the number is no input."""
    diagonal_jacobian = True
    number_operand = True
    alpha = 1  # (as Add's)

    def forward(self, input, number, alpha=1):
        if alpha == 1:  # (the complex difference computed alone: number + (-1) * input as PyTorch's kernel)
            if input.dtype.kind != "c" and not _is_complex(number):
                return number - input
            return complex_difference(number, input)
        self.alpha = alpha
        if input.dtype.kind == "c" or _is_complex(number):
            return complex_difference(number, input, alpha)  # (PyTorch's number + (-alpha) * input)
        if number_in_float32(input, number):  # (half precision: PyTorch's number - alpha * input rounded once)
            return add_scaled(xp.asarray(number, dtype=input.dtype), input, -alpha)
        if (input.dtype == xp.float32 or input.dtype == xp.float64) and number.__class__ in (float, int):
            from .statistics import _fused_multiply_add

            with xp.errstate(all="ignore"):  # (PyTorch's kernel: one fused multiply-add, in the input's dtype)
                return _fused_multiply_add(input, input.dtype.type(-alpha), input.dtype.type(number))
        return with_number(operator.sub, number, with_number(operator.mul, input, alpha))

    def backward(self, g):
        return (_times_minus_alpha(g, self.alpha),)


@torch_named("MulBackward0")
class Mul(Node):
    diagonal_jacobian = True
    saved_for = ((1,), (0,))  # a for b's gradient, b for a's
    # (PyTorch's names of what its formula saved)
    _saved_self, _raw_saved_self = saved_tensor(0, number_as_tensor=True)
    _saved_other, _raw_saved_other = saved_tensor(1, number_as_tensor=True)

    def forward(self, a, b):
        self.saved = (a, b)
        return with_number(operator.mul, a, b)

    def backward(self, g):
        a, b = self.saved
        na, nb = self.needs_input_grad
        if g.dtype.kind == "c":  # complex: grad_a = g * conj(b), grad_b = g * conj(a)
            a, b = conj_if_complex(a), conj_if_complex(b)
        return (with_number(operator.mul, g, b) if na else None), (with_number(operator.mul, g, a) if nb else None)


@torch_named("DivBackward0")
class Div(Node):
    diagonal_jacobian = True
    saved_for = ((1,), (0, 1))  # a for b's gradient, b for both
    _saved_self, _raw_saved_self = saved_tensor(0, number_as_tensor=True)
    _saved_other, _raw_saved_other = saved_tensor(1, number_as_tensor=True)

    def forward(self, a, b):
        self.saved = (a, b)
        return with_number(operator.truediv, a, b)

    def backward(self, g):
        a, b = self.saved
        na, nb = self.needs_input_grad
        if g.dtype.kind == "c":  # complex: the conjugates of the derivatives below
            a, b = conj_if_complex(a), conj_if_complex(b)
        ga = with_number(operator.truediv, g, b) if na else None
        gb = -g * ((a / b) / b) if nb else None  # d(a/b)/db = -a/b^2, in PyTorch's order of roundings
        return ga, gb


@torch_named("PowBackward0")
class Pow(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_exponent = saved_tensor(1)[0]  # (a number exponent reads as the number, as PyTorch's: no raw tensor)

    def forward(self, a, b):
        # a half precision base: PyTorch's kernel takes a number exponent rounded to its dtype through float32
        # (its backward, the number itself)
        out = pow_values(a, b)
        # the output only with a tensor exponent (read by its gradient), whichever input needs a gradient, as
        # PyTorch saves it (x ** 2.0 saves x alone, x ** t and 2 ** t their output too)
        self.saved = (a, b, out) if isinstance(b, xp.ndarray) else (a, b)
        return out

    def backward(self, g):
        needs = self.needs_input_grad  # (one input where the exponent is a number: PyTorch's node has one edge)
        return self._grads(g, needs[0], len(needs) > 1 and needs[1])

    def _grads(self, g, na: bool, nb: bool):
        a, b = self.saved[:2]
        ga = gb = None
        # (complex: times the conjugates of these derivatives)
        if na:  # d(a^b)/da = b * a^(b-1); 0 where b == 0 (PyTorch's convention)
            scalar = isinstance(b, (int, float, complex))
            if scalar and b != 0 and a.__class__ is xp.ndarray and a.itemsize == 2 and number_in_float32(a, b):
                # PyTorch's half precision formula, each op rounded: a ** (b - 1) (the exponent rounded as forward
                # rounds it), times the number b in float32, times g
                ga = g * with_number(operator.mul, _power(a, half_scalar(b - 1, a.dtype)), b)
            else:
                # (a number exponent under create_graph: its product recorded as PyTorch's, MulBackward1)
                power = times_number(_power(a, b - 1), b) if scalar and is_recorded(a) else b * _power(a, b - 1)
                ga = g * conj_if_complex(power) if not scalar or b != 0 else xp.zeros_like(g)
            if not scalar:
                ga = xp.where(b == 0, 0, ga)
        if nb:  # d(a^b)/db = a^b * log(a); 0 where a == 0 and b >= 0 (a complex b: real, as PyTorch's)
            gb = g * self._exponent_rate(a, b)
        return ga, gb

    def _exponent_rate(self, a, b):
        """PyTorch's ``(result * log(a)).conj()`` (``pow_backward_exponent``), 0 selected where ``a`` is 0 and ``b``
        real and >= 0: before the product with the grad, as PyTorch's (an infinite or NaN grad gives NaN there).
        Recorded as its formula records it: a number base's log times the result is MulBackward1, and the zero
        is selected (WhereBackward0) only where a number base is 0."""
        number_base = _is_number(a)
        if number_base and a.__class__ is not complex and np_kind(b.dtype) == "c":
            a = complex(a)  # (a number base of a complex exponent: its complex log, as PyTorch's (-2 ** z))
        with xp.errstate(divide="ignore", invalid="ignore"):
            log_a = xp.log(a)
            if isinstance(log_a, xp.generic):  # a Python number's log stays a weak scalar (float32 stays float32)
                log_a = log_a.item()
            rate = conj_if_complex(times_number(self.saved[2], log_a) if number_base else self.saved[2] * log_a)
        if number_base and a != 0:
            return rate
        real_nonnegative = (xp.real(b) >= 0) & (xp.imag(b) == 0) if xp.iscomplexobj(b) else b >= 0
        return xp.where(real_nonnegative if number_base else (a == 0) & real_nonnegative, 0, rate)


@torch_named("PowBackward1")
class PowTensors(Pow):
    """``t ** u`` of two tensors: Pow's node under PyTorch's name for that overload (PowBackward0 is its ``t ** 2``)."""

    _raw_saved_exponent = saved_tensor(1)[1]
    _saved_result, _raw_saved_result = saved_tensor(2)


@torch_named("PowBackward2")
class PowNumberBase(Pow):
    """``number ** t`` (``2 ** x``): Pow's node whose one input is the exponent, as PyTorch's (the number is none)."""

    _raw_saved_self = NotSaved("_raw_saved_self")  # (the number base is PyTorch's Scalar: no tensor)
    _raw_saved_exponent = saved_tensor(1)[1]
    _saved_result, _raw_saved_result = saved_tensor(2)

    def forward(self, b, base, dtype=None):
        """``dtype``: the dtype the number promotes the exponent to (a complex base of a real exponent), which the
        power is computed in; the node saves the exponent as given, PyTorch's ``_saved_exponent``. The result is
        row-major whatever the exponent's layout (transposed, channels-last, expanded), as PyTorch's CPU kernel
        writes it; on the meta device PyTorch's keeps the exponent's layout."""
        out = Pow.forward(self, base, b if dtype is None else b.astype(dtype))
        if out.__class__ is xp.ndarray and not out.flags.c_contiguous and not (_meta_made[0] and is_meta(out)):
            out = xp.ascontiguousarray(out)
        self.saved = (base, b, out)
        return out

    def backward(self, g):  # (a real exponent of a complex power: the real part, as PyTorch's ``handle_r_to_c``)
        gb = self._grads(g, False, self.needs_input_grad[0])[1]
        return (gb if gb is None else cast_gradient(gb, self.saved[1].dtype),)


def _integer_power(a, e):
    """a ** e for an integer exponent tensor. Where e < 0 PyTorch's integer kernel gives 1 for a base of 1, +-1 for
    -1 (by e's parity) and 0 for any other base (0 too), where NumPy refuses the whole array."""
    negative = e < 0
    if not negative.any() or xp.result_type(a, e).kind not in "iu":
        return a**e
    out = a ** xp.where(negative, 0, e)
    return xp.where(negative, xp.where(a == 1, 1, 0) + xp.where(a == -1, 1 - 2 * (e & 1), 0), out).astype(out.dtype)


def pow_values(a, b):
    """``a ** b``'s values as PyTorch's pow kernel computes them (``pow`` and ``pow_``): a half precision base
    takes a number exponent rounded to its dtype through float32; an integer exponent tensor, PyTorch's integer
    rule (``_integer_power``); a number exponent, its special cases (``_power``); a complex result, each base
    and exponent as its complex kernel (``_complex_power``)."""
    if a.__class__ is xp.ndarray and a.itemsize == 2 and number_in_float32(a, b):
        b = half_scalar(b, a.dtype)
    return _integer_power(a, b) if b.__class__ is xp.ndarray and b.dtype.kind in "iu" else _power(a, b)


# PyTorch's CPU pow kernel computes these number exponents of a float32, float64 or bfloat16 base as other ops
# (its float16 kernel takes the C library's pow for each): they differ from pow at the signed zeros and infinities
# (x ** 0.5 is sqrt: -0.0 at -0.0 and NaN at -inf, where pow gives +0.0 and +inf; x ** -0.5 is 1 / sqrt: -inf at
# -0.0, NaN at -inf) and in the last bit (x ** -2 is 1 / (x * x), rounded twice).
_POWER_SPECIAL_CASES = {
    0.5: lambda x: xp.sqrt(x),
    -0.5: lambda x: 1 / xp.sqrt(x),
    -1: lambda x: 1 / x,
    2: lambda x: x * x,
    3: lambda x: x * x * x,
    -2: lambda x: 1 / (x * x),
}


def _power(a, e):
    """a ** e as PyTorch computes it for a number exponent ``e`` (``_POWER_SPECIAL_CASES``, a bfloat16 base rounded
    after each op as its kernel; float16 through the C library's pow, which NumPy's ``**`` would take to sqrt for
    0.5); any other ``e`` as NumPy's power. (x ** e's gradient reads x ** (e - 1) through it too: under
    create_graph, a recorded ``a`` is one pow op, as PyTorch's, whose forward comes back here.)"""
    if (e.__class__ is int or e.__class__ is float) and a.__class__ is xp.ndarray and np_kind(a.dtype) == "f":
        special = _POWER_SPECIAL_CASES.get(e) if a.dtype != xp.float16 else None
        return xp.power(a, e) if special is None else special(a)
    if a.__class__ is xp.ndarray and a.dtype.kind == "c" and (e.__class__ is xp.ndarray or _is_number(e)) or \
            e.__class__ is xp.ndarray and e.dtype.kind == "c" and _is_number(a):
        return _complex_power(a, e)
    return a ** e


def _is_number(v) -> bool:
    return v.__class__ is int or v.__class__ is float or v.__class__ is complex or v.__class__ is bool


def _complex_power(a, e):
    """``a ** e`` with a complex result (arrays of one complex dtype, or a Python number beside one) as PyTorch's CPU
    kernels compute it: a number exponent 0 fills 1 and 1 copies the base, a number base 1 fills 1 (as its
    ``pow``), 2, 3, 0.5, -0.5, -1 and -2 (a complex one with no imaginary part too) are
    ``_POWER_SPECIAL_CASES``; any other exponent, and each
    element of a tensor exponent (a number base's too), is the C library's ``cpow`` (``c_library_cpow``), where
    NumPy's power multiplies for an integer exponent. (-0.5, -1, -2 divide by Smith's algorithm, as PyTorch's scalar
    loop: its vectorised loop takes ``conj(w) / |w|^2``, which may differ in the last bits.)"""
    if _is_number(e):
        exponent = e.real if e.__class__ is complex and not e.imag else e
        if exponent == 0:
            return xp.ones_like(a)
        if exponent == 1:
            return a.copy(order="K")
        special = _POWER_SPECIAL_CASES.get(exponent)
        if special is not None:
            with xp.errstate(all="ignore"):
                return special(a)
    if _is_number(a) and a == 1:  # (PyTorch's pow of the number 1 fills 1)
        return xp.ones_like(e)
    dtype = a.dtype if a.__class__ is xp.ndarray else e.dtype
    return c_library_cpow(a if a.__class__ is xp.ndarray else xp.asarray(a, dtype), e)


def c_library_cpow(z, e):
    """``exp(e * log(z))`` for a complex array ``z`` and exponent ``e`` (an array or a number, in ``z``'s dtype) as
    the C library's ``cpow`` computes it (PyTorch's ``std::pow`` of complex numbers, glibc's ``cpow``): ``log``
    and ``exp`` are NumPy's, the C library's own, and the product is C's complex multiplication, ``(ac - bd) +
    (ad + bc)i`` with each part rounded (NumPy's complex multiply may round otherwise). 0 ** e is so exp(e * -inf):
    0 ** 0 is NaN, 0 ** -1 inf + NaN j."""
    with xp.errstate(all="ignore"):
        log_z = xp.log(z)
        e = xp.asarray(e, dtype=z.dtype)
        w = xp.asarray(log_z * e)  # (the result's shape and layout, an array even 0-d; its parts set below)
        w.real = log_z.real * e.real - log_z.imag * e.imag
        w.imag = log_z.real * e.imag + log_z.imag * e.real
        return xp.exp(w, out=w)


def remainder_values(a, b, out=None, casting: str = "same_kind"):
    """``a % b`` (arrays or numbers, one dtype) as PyTorch's remainder kernel computes it: NumPy's remainder, whose
    floating formula is PyTorch's (``fmod(a, b)``, plus ``b`` where its sign differs from ``b``'s) but for a zero
    result: PyTorch keeps fmod's zero, with the dividend's sign (``-0.0 % 3`` and ``-3.0 % 3`` are -0.0, ``3.0 % -3``
    is +0.0), where NumPy gives it the divisor's. ``out``/``casting`` as the ufunc's (an in-place op's: the
    dividend's signs are read before it is overwritten)."""
    negative = None
    if np_kind(xp.result_type(a, b)) == "f":
        dividend = xp.asarray(a)
        negative = xp.signbit(dividend.astype(xp.float32) if np_kind(dividend.dtype) != "f" or
                              dividend.dtype.itemsize == 2 else dividend)
    with quiet():  # (a zero divisor: NaN silently, as PyTorch's)
        result = xp.remainder(a, b) if out is None else xp.remainder(a, b, out=out, casting=casting)
    if negative is not None:
        flip = (result == 0) & (xp.signbit(xp.asarray(result).astype(xp.float32)) != negative)
        if flip.any():
            result = result if result.__class__ is xp.ndarray else xp.array(result)
            xp.negative(result, out=result, where=flip)
    return result


@torch_named("RemainderBackward1")  # (a tensor divisor; RemainderScalar a number)
class Remainder(Node):
    diagonal_jacobian = True
    saved_for = ((1,), (1,))  # only the divisor's gradient reads them, as PyTorch saves them
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_other, _raw_saved_other = saved_tensor(1)

    def forward(self, a, b):
        self.saved = (a, b)
        return remainder_values(a, b)

    def backward(self, g):  # a - floor(a / b) * b
        return rounded_division_grads(self, g, "floor")


def rounded_division_grads(node: Node, g, rounding_mode: str) -> tuple:
    """The gradients of a - round(a / b) * b (``remainder``: ``rounding_mode`` "floor", ``fmod``: "trunc") from the
    node's saved (a, b): g for a, -g * round(a / b) for b (PyTorch's ``-grad * self.div(other, rounding_mode=...)``,
    which under create_graph is recorded, its DivBackward2 of derivative zero: the gradient requires grad)."""
    a, b = node.saved
    na, nb = node.needs_input_grad
    if nb and is_recorded(g, a, b):
        quotient = formula_tensor(a).div(formula_tensor(b), rounding_mode=rounding_mode)
        return (g if na else None), RecordedArray(-formula_tensor(g) * quotient)
    if not nb:
        return (g if na else None), None
    return (g if na else None), -g * (xp.floor_divide(a, b) if rounding_mode == "floor" else xp.trunc(a / b))


@torch_named("MaximumBackward0")
class Maximum(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_other, _raw_saved_other = saved_tensor(1)

    def forward(self, a, b):
        self.saved = (a, b)
        return _extremum_values(xp.maximum, a, b)

    def backward(self, g):
        a, b = self.saved
        return _extremum_grads(self, g, a, b, xp.less)


def _extremum_values(extremum, a, b):
    """``extremum(a, b)`` (NumPy's maximum or minimum) as PyTorch's kernels give it: where the operands are equal, a
    floating result is the first operand's (its ``a > b ? a : b``: maximum(-0.0, +0.0) is -0.0), where NumPy's loops
    give either zero."""
    out = extremum(a, b)
    if np_kind(out.dtype) != "f":
        return out
    tie = a == b
    if out.__class__ is not xp.ndarray:  # (0-d operands: NumPy's scalar)
        return xp.where(tie, a, out)[()]
    if tie.any():
        xp.copyto(out, a, where=tie)  # (in place: the result's layout, NumPy's iterator's, kept)
    return out


def _extremum_grads(node: Node, g, a, b, loses) -> tuple:
    """maximum's (``loses`` ``xp.less``) and minimum's (``xp.greater``) input gradients, PyTorch's formula
    ``where(a == b, g / 2, g).masked_fill_(loses(a, b), 0)``: ties split the gradient evenly, the losing side gets
    +0.0 (selected: also for a negative, infinite or NaN g), and where either is NaN (no comparison holds) both get
    all of it. Only the gradients the node's inputs need."""
    na, nb = node.needs_input_grad
    shared = xp.where(a == b, g * g.dtype.type(0.5), g)
    return (selected_gradient(shared, ~loses(a, b)) if na else None,
            selected_gradient(shared, ~loses(b, a)) if nb else None)


@torch_named("MinimumBackward0")
class Minimum(Node):
    diagonal_jacobian = True
    _saved_self, _raw_saved_self = saved_tensor(0)
    _saved_other, _raw_saved_other = saved_tensor(1)

    def forward(self, a, b):
        self.saved = (a, b)
        return _extremum_values(xp.minimum, a, b)

    def backward(self, g):
        a, b = self.saved
        return _extremum_grads(self, g, a, b, xp.greater)


_KIND_ORDER = "biufc"


def check_alpha(a, b, alpha, op: str = "add"):
    """``alpha`` as PyTorch reads it, a Python number (a NumPy scalar: ``_dtype.parsed_number``; a 0-d tensor its
    value, ``scalar_tensor_number``), after PyTorch's errors for add's/sub's ``alpha`` of a kind the result cannot
    take: a bool one for a result that is not bool, a float one for integral (or bool) operands, a complex one for
    real operands. ``op`` names the call in the TypeError for a tensor."""
    if alpha.__class__ is float and isinstance(a, Tensor) and a._data.dtype.kind in "fc":
        return alpha  # (the common case, an optimizer's step: a floating tensor admits any float alpha)
    if isinstance(alpha, Tensor):
        alpha = _dtype.scalar_tensor_number(alpha, op, "alpha")
    if isinstance(alpha, xp.generic):
        alpha = _dtype.parsed_number(alpha)
    if not isinstance(alpha, (bool, int, float, complex)):  # (a str, None, a list: PyTorch's parser refuses it)
        raise TypeError(f"{op}(): argument 'alpha' must be Number, not {c_type_name(alpha)}")
    kinds = [np_kind(v._data.dtype) if isinstance(v, Tensor) else
             {bool: "b", int: "i", float: "f", complex: "c"}.get(v.__class__, "f") for v in (a, b)]
    kind = max(kinds, key=_KIND_ORDER.index)
    if alpha.__class__ is bool and kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, (float, complex)) and kind in "biu":  # (a complex one too: PyTorch tests this first)
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if isinstance(alpha, complex) and kind != "c":
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    return alpha


def add(a, b, *number_first, alpha=1):
    if number_first:  # PyTorch's deprecated torch.add(input, alpha, other) (ember/_deprecated_overloads.py)
        b, alpha = _deprecated.alpha_first("add", b, number_first, alpha, True)
    if alpha.__class__ is not int:
        alpha = check_alpha(a, b, alpha)
    # two plain tensors of one float dtype and shape: apply_same, without promotion and apply's generality (b first:
    # a Python number there, the other common case, is told apart in one test)
    if b.__class__ is Tensor and a.__class__ is Tensor and alpha == 1 and \
            (out := apply_same(Add, operator.add, a, b)) is not None:
        return out
    if alpha != 1:
        if alpha.__class__ is int:
            _dtype.scalar_int(alpha)
        if a.__class__ is not Tensor:
            a = wrapped_left_number(a, b)
        if fused_alpha(a, b, alpha):
            return Add.apply(*promote(a, b), alpha=alpha)
        b = scaled_operand(a, b, alpha)
    # two tensors of one dtype need no promotion (promote's own first test, without its call: the common case),
    # unless there are meta tensors (promote checks the devices)
    return _sum(Add if alpha == 1 else _AddOfScaled, a, b)


def _sum(node: type, a, b):
    """``node.apply(a, b)`` (add's), the operands promoted where they need it."""
    if a.__class__ is not Tensor or b.__class__ is not Tensor or a._data.dtype is not b._data.dtype or \
            _meta_made[0] and (is_meta(a._data) or is_meta(b._data)):  # (meta ones: promote checks the devices)
        a, b = _half_operands(*promote(a, b))
    return node.apply(a, b)


def add_of_scaled(a, b):
    """``a + b`` where ``b`` is already add's ``alpha * b`` (``scaled_operand``; add_ records it so): a plain sum."""
    return _sum(_AddOfScaled, a, b)


def sub_of_scaled(a, b):
    """``a - b`` where ``b`` is already sub's ``alpha * b`` (as ``add_of_scaled``)."""
    return _difference(_SubOfScaled, a, b)


def fused_alpha(a, b, alpha) -> bool:
    """Whether ``add``/``sub`` of ``a`` and ``b`` with a real Python ``alpha`` computes ``alpha * b`` inside the op
    (``add_scaled``), as PyTorch's kernel does, not rounded to ``b``'s dtype first: two real tensors of which one
    is floating (both are cast to the result's floating dtype first, so the product is one node's, without a scaled
    operand of its own), or a floating tensor and a real Python number."""
    if alpha.__class__ is not float and alpha.__class__ is not int or not isinstance(a, Tensor):
        return False
    if isinstance(b, Tensor):  # (a sparse b is scaled on its own: only its values are read)
        kinds = np_kind(a._data.dtype) + np_kind(b._data.dtype)
        return "f" in kinds and "c" not in kinds and (b.__class__ is Tensor or not b.is_sparse)
    return number_in_float32(a._data, b) or (b.__class__ is float or b.__class__ is int) and \
        a._data.__class__ is xp.ndarray and (a._data.dtype == xp.float32 or a._data.dtype == xp.float64)


def scaled_operand(a, b, alpha):
    """``alpha * b`` of add/sub (not fused, ``fused_alpha``): a tensor ``b`` scaled in the result's dtype, as
    PyTorch's kernel computes ``a + alpha * b`` (a bool or int8 ``b`` beside an int8 or float16 ``a`` is not made an
    int64 or float32 product), ``alpha`` converted to that dtype as PyTorch converts it (300 for int8 its error,
    -1 for uint8 255, any alpha for bool its truth); a Python number ``b`` stays one (a weak scalar in promotion)."""
    if b.__class__ is not Tensor and a.__class__ is Tensor and a._data.dtype.kind in "fc":
        if a._data.dtype == xp.complex64 and isinstance(b, (int, float, complex)) and not isinstance(b, bool):
            # PyTorch's kernel multiplies alpha and the number as complex64 numbers (rounded there), not in double
            with xp.errstate(all="ignore"):
                return complex(xp.complex64(b) * xp.complex64(alpha))
        return b * alpha  # (a number beside a float32/float64 tensor: nothing to convert)
    pa, pb = promote(a, b)
    dt = (pb if isinstance(pb, Tensor) else pa)._data.dtype
    if dt == xp.bool_:  # (bool operands: a + alpha * b is a or (alpha and b))
        return mul(pb, bool(alpha)) if isinstance(b, Tensor) else bool(alpha) and b
    converted = _dtype.checked_fill(alpha, dt)
    return mul(pb, converted) if isinstance(b, Tensor) else b * alpha


_ADDCDIV_INTEGERS = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes.")


def addc_value(name: str, input, tensor1, tensor2, value, parsed: str | None = None):
    """``addcmul``'s or ``addcdiv``'s ``value`` as PyTorch's kernel takes it: converted to the result's dtype (an
    integer one: a float truncated toward zero, an int outside its range PyTorch's RuntimeError, -1 for uint8
    255; a floating one: a finite float beyond its opmath type's range, float32's for half precision, the same
    error), a complex one for a real result the same error; a bool result has no kernel (its NotImplementedError);
    addcdiv of two integer (or bool) tensors is PyTorch's RuntimeError. ``parsed``: the name PyTorch's parser gives
    a ``value`` that is no number (the in-place method's, ``addcmul_``), ``name`` by default."""
    if isinstance(value, Tensor):  # (PyTorch's Scalar: no gradient reaches it)
        value = _dtype.scalar_tensor_number(value, name, "value")
    if not isinstance(value, (bool, int, float, complex, xp.generic)):  # (a str, None: PyTorch's parser refuses it)
        raise TypeError(f"{parsed or name}(): argument 'value' must be Number, not {c_type_name(value)}")
    if name == "addcdiv" and not (is_inexact(tensor1) or is_inexact(tensor2)):
        raise RuntimeError(_ADDCDIV_INTEGERS)
    dt = result_dtype(input, tensor1, tensor2)
    if dt == _dtype.bool_:
        raise _dtype.not_implemented_for(f"{name}_cpu_out", dt)
    if value.__class__ is bool:
        return int(value)  # (a number to the kernel, never add's bool alpha)
    value = _dtype.opmath_scalar(value, dt)  # (a half precision kernel's value is a float32: 1e40 is refused)
    if dt.is_floating_point or dt.is_complex:
        return value
    return value if value.__class__ is not float else int(value)  # (checked: within the integer range)


def _is_bool(v) -> bool:
    return v.__class__ is bool or isinstance(v, Tensor) and v._data.dtype == xp.bool_


def refuse_bool_sub(a, b) -> None:
    """PyTorch's sub_check: a bool operand is its RuntimeError (checked before ``alpha``)."""
    if _is_bool(a) or _is_bool(b):
        if _is_bool(a) and _is_bool(b):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def sub(a, b, *number_first, alpha=1):
    if number_first:  # (as add's)
        b, alpha = _deprecated.alpha_first("sub", b, number_first, alpha, True)
    # (an int alpha of 1 only: any other alpha is checked below, after the bool operands, as PyTorch's order)
    if alpha.__class__ is int and alpha == 1 and b.__class__ is Tensor and a.__class__ is Tensor and \
            (out := apply_same(Sub, operator.sub, a, b)) is not None:  # (as add's)
        return out
    refuse_bool_sub(a, b)
    if alpha.__class__ is not int:
        alpha = check_alpha(a, b, alpha, "sub")
    if alpha != 1:
        if alpha.__class__ is int:
            _dtype.scalar_int(alpha)
        if a.__class__ is not Tensor:
            a = wrapped_left_number(a, b)
        if fused_alpha(a, b, alpha) or _complex_operands(a, b):  # (complex: PyTorch's a + (-alpha) * b, one node)
            return Sub.apply(*promote(a, b), alpha=alpha)
        b = scaled_operand(a, b, alpha)
    return _difference(Sub if alpha == 1 else _SubOfScaled, a, b)


def _difference(node: type, a, b):
    """``node.apply(a, b)`` (sub's), the operands promoted."""
    a, b = promote(a, b)
    if a.__class__ is not Tensor or b.__class__ is not Tensor:
        a, b = _half_operands(a, b)
    return node.apply(a, b)


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``other`` a tensor or a number): sub's values and errors, recorded as PyTorch's
    rsub, one node whose inputs are ``input`` then ``other`` (RsubBackward0), or ``input`` alone when ``other`` is a
    number (RsubBackward1)."""
    if _is_bool(input) or _is_bool(other) or not isinstance(input, Tensor) or \
            not isinstance(other, (Tensor, int, float, complex, xp.generic)):
        return sub(other, input, alpha=alpha)  # (sub's errors)
    if alpha.__class__ is not int:
        alpha = check_alpha(other, input, alpha, "rsub")
    other, input = promote(other, input)
    if alpha != 1 and np_kind(input._data.dtype) not in "fc":  # (integral: no gradient; sub converts alpha to the
        return sub(other, input, alpha=alpha)  # dtype as PyTorch's kernel, 300 for int8 its error, -1 for uint8 255)
    if other.__class__ is Tensor:
        return Rsub.apply(input, other, alpha=alpha)
    other, input = _half_operands(other, input)
    return RsubNumber.apply(input, number=other, alpha=alpha)


def right_scalar(a, b):
    """``b`` as PyTorch's mul and true division kernels read a 0-d floating tensor on the right of a dimensioned
    half precision tensor (float16, bfloat16) of another dtype: its own value in float32, where promotion would
    round it to the half dtype first; as a Python number, which ``with_number`` computes so (the result rounded
    once). (In place, add_ and sub_ take it as such a number too: rounded to the half dtype.) On the left, and for
    a ``b`` that requires grad or carries a forward-mode tangent, it is promoted as usual (ember keeps its cast in
    the graph; PyTorch's forward value for one that requires grad is the float32 product)."""
    if b.__class__ is Tensor and a.__class__ is Tensor and not b._data.ndim and a._data.ndim and \
            b._data.dtype is not a._data.dtype and np_kind(b._data.dtype) == "f" and not b._requires_grad and \
            b._data.__class__ is xp.ndarray and number_in_float32(a._data, 0.0) and \
            (_graph._dual_level is None or _graph._dual_level.get(b) is None):
        return b._data.item()
    return b


def mul(a, b):
    if b.__class__ is Tensor and a.__class__ is Tensor and \
            (out := apply_same(Mul, operator.mul, a, b, True)) is not None:
        return out  # (as add's)
    if a.__class__ is not Tensor or b.__class__ is not Tensor or a._data.dtype is not b._data.dtype or \
            _meta_made[0] and (is_meta(a._data) or is_meta(b._data)):
        if a.__class__ is not Tensor:  # (a number on the left: rounded to a half precision b's dtype)
            a = left_number(a, b)
        a, b = promote(a, right_scalar(a, b))  # (as add: two tensors of one dtype need none)
    return Mul.apply(a, b)


def div(a, b, *, rounding_mode: str | None = None):
    if rounding_mode is None:
        if b.__class__ is Tensor and a.__class__ is Tensor and \
                (out := apply_same(Div, operator.truediv, a, b, True)) is not None:
            return out  # (as add's)
        if a.__class__ is not Tensor:  # (as mul's)
            a = left_number(a, b)
        return Div.apply(*_float_operands(a, right_scalar(a, b)))
    if rounding_mode == "floor":
        return _rounded_div(xp.floor_divide, *_integer_division_operands("div_floor_cpu", a, b))
    if rounding_mode == "trunc":
        return _rounded_div(_trunc_divide, *_integer_division_operands("div_trunc_cpu", a, b))
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


@torch_named("DivBackward2")
class RoundedDiv(Node):
    """``div`` with a ``rounding_mode``: piecewise constant, so PyTorch records it (DivBackward2, an edge per
    operand, None for a number) with zeros as each operand's gradient."""

    diagonal_jacobian = True

    def forward(self, a, b, rounding):
        return rounding(a, b)

    def backward(self, g):
        return tuple(xp.zeros_like(g) if need else None for need in self.needs_input_grad)


def _rounded_div(rounding, a, b) -> Tensor:
    """``rounding(a, b)`` (promoted operands), recorded as PyTorch's when an operand requires grad."""
    if _graph._GradState.enabled and (isinstance(a, Tensor) and a._requires_grad or
                                      isinstance(b, Tensor) and b._requires_grad) or has_tangent(a, b):
        return RoundedDiv.apply(a, b, rounding=rounding)  # (forward AD: a zero tangent, as PyTorch's)
    return _no_grad_binary(rounding, a, b)


def true_divide(a, b):
    return div(a, b)


def _trunc_divide(x, y):
    # (the promoted operands' dtype, an array's: NumPy's result_type of a Python number and a bfloat16 array is
    # float32)
    array = y if y.__class__ is xp.ndarray else x
    return xp.trunc(x / y).astype(array.dtype if array.__class__ is xp.ndarray else xp.result_type(x, y))


def _promotes_to_complex32(a, b) -> bool:
    """Whether PyTorch's promotion of ``a`` and ``b`` gives complex32 (ember computes such results in complex64): a
    float16 tensor with a complex Python number, or a dimensioned one with a 0-d complex tensor."""
    t, s = (a, b) if isinstance(a, Tensor) and a._data.dtype == xp.float16 else (b, a)
    if not isinstance(t, Tensor) or t._data.dtype != xp.float16:
        return False
    if isinstance(s, Tensor):
        return s._data.dtype.kind == "c" and s._data.ndim == 0 and t._data.ndim != 0
    return isinstance(s, complex)


def check_exponent(a, b) -> None:
    """PyTorch's error for a number exponent of a half-precision or integer tensor ``a`` that its dtype cannot hold
    (``pow(float16_tensor, 1e5)``: "value cannot be converted to type c10::Half without overflow"; PyTorch
    converts it to that dtype; float32/float64 take it as a double)."""
    if (b.__class__ is int or b.__class__ is float) and isinstance(a, Tensor) and \
            (a._data.dtype.itemsize == 2 and np_kind(a._data.dtype) == "f" or
             b.__class__ is int and np_kind(a._data.dtype) in "iu"):  # (a float one promotes an integer tensor)
        checked_fill(b, a._data.dtype)


def pow(a, b):
    if _promotes_to_complex32(a, b):  # (PyTorch's pow has no half-precision complex kernel)
        raise NotImplementedError("\"pow\" not implemented for 'ComplexHalf'")
    if isinstance(b, xp.generic):  # (a NumPy scalar exponent as the Python number PyTorch reads it as)
        b = _dtype.parsed_number(b)
    check_exponent(a, b)  # (before promotion wraps an integer exponent into the tensor's dtype: -1 is 255 in uint8)
    if a.__class__ is not Tensor:  # (a number base: as mul's)
        a = left_number(a, b)
    negative = isinstance(b, int) and b < 0
    exponent = b
    a, b = promote(a, b)
    dt = (a if isinstance(a, Tensor) else b)._data.dtype
    if np_kind(dt) not in "fc":
        if dt == xp.bool_:
            if b.__class__ is bool:  # x ** True is x, x ** False is 1 (PyTorch keeps bool here)
                return Tensor._make(a._data | (not b))
            raise NotImplementedError("\"pow\" not implemented for 'Bool'")
        if negative:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    if not isinstance(a, Tensor):  # (an exponent the number promotes: its node's input as given, as PyTorch's)
        if exponent is not b and isinstance(exponent, Tensor):
            return PowNumberBase.apply(exponent, base=a, dtype=b._data.dtype)
        return PowNumberBase.apply(b, base=a)
    if isinstance(b, Tensor):
        return PowTensors.apply(a, b)
    return Pow.apply(a, b=b)  # (a number exponent is no input: one edge, as PyTorch's PowBackward0)


def _integer_division_operands(name: str, a, b):
    """Promote; then PyTorch's errors for complex or bool operands and integer division by zero."""
    a, b = promote(a, b)
    refuse_complex(a if isinstance(a, Tensor) else b, name)
    kind = (a if isinstance(a, Tensor) else b)._data.dtype.kind
    if kind == "b":
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    if kind in "iu":
        refuse_integer_zero_division(a._data if isinstance(a, Tensor) else a, b._data if isinstance(b, Tensor) else b)
    return a, b


def refuse_integer_zero_division(a, b) -> None:
    """PyTorch's error for an integer division or remainder of ``a`` (an integer array, or a number beside an integer
    array ``b``) by a zero in ``b`` (an integer or bool array or number), raised by its kernel at a division it
    computes: an empty result raises none."""
    if not (a.__class__ is xp.ndarray and a.size == 0) and np_kind(xp.asarray(b).dtype) in "biu" and \
            xp.any(xp.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def remainder(a, b):
    if a.__class__ is not Tensor:  # (as mul's)
        a = left_number(a, b)
    a, b = _integer_division_operands("remainder_cpu", a, b)
    if not isinstance(a, Tensor):  # (PyTorch's remainder.Scalar_Tensor has no derivative: a NotImplemented node)
        return without_derivative(_no_grad_binary(remainder_values, a, b), "remainder", b)
    if not isinstance(b, Tensor):
        if a._data.itemsize == 2 and number_in_float32(a._data, b):  # (beside a half precision tensor: through float32)
            b = half_scalar(b, a._data.dtype)
        return RemainderScalar.apply(a, number=b)
    return Remainder.apply(a, b)


@torch_named("RemainderBackward0")
class RemainderScalar(Node):
    """``remainder`` by a number, PyTorch's overload of its own: the number is no input; the gradient passes as it
    is."""

    diagonal_jacobian = True
    number_operand = True

    def forward(self, a, number):
        return remainder_values(a, number)

    def backward(self, g):
        return (g,)


def floor_divide(a, b, *, op: str = "floor_divide"):
    """``a // b``. PyTorch records floor_divide with no derivative (unlike ``div(rounding_mode="floor")``): a
    ``NotImplemented`` node whose backward raises; ``op`` names it in that error (``floor_divide_`` in place)."""
    a, b = _integer_division_operands("div_floor_cpu", a, b)
    return without_derivative(_no_grad_binary(xp.floor_divide, a, b), op, a, b)


def without_derivative(result: Tensor, op: str, *operands) -> Tensor:
    """``result`` recorded as PyTorch records an op that has no derivative, when an operand requires grad: a
    ``NotImplemented`` node with an edge for each operand that requires grad (none for the others), whose
    backward raises "derivative for aten::<op> is not implemented"."""
    if has_tangent(*operands):
        raise NotImplementedError(f"Trying to use forward AD with aten::{op} that does not support it.")
    needing = [t for t in operands if isinstance(t, Tensor) and t._requires_grad]
    if not needing or not _graph._GradState.enabled:
        return result
    return _NotImplemented.apply(*needing, grad=result._data, op=op)


def require_tensor(name: str, value, position: int = 2, argument: str = "other") -> None:
    """PyTorch's TypeError for a number (or anything else) where its signature takes only a tensor: ``position``
    counts from 1 among the function's arguments (a method's ``other`` is its position 1). The error carries the
    ``operand``: the function's wrapper, which sees how it was passed, words it for the call (``_operand_error``:
    an argument given by keyword has no position; ``torch.special.gammainc``'s own name)."""
    if not isinstance(value, Tensor):
        error = TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, not "
                          f"{c_type_name(value)}")
        error.operand = value  # type: ignore[attr-defined]
        raise error


def maximum(a: Tensor, b: Tensor) -> Tensor:
    """The elementwise maximum (NaN propagates); both operands tensors, as PyTorch's signature."""
    require_tensor("maximum", a, 1, "input")
    require_tensor("maximum", b)
    return extreme(Maximum, a, b)


def minimum(a: Tensor, b: Tensor) -> Tensor:
    """The elementwise minimum (NaN propagates); both operands tensors, as PyTorch's signature."""
    require_tensor("minimum", a, 1, "input")
    require_tensor("minimum", b)
    return extreme(Minimum, a, b)


def extreme(node: type[Node], a: Tensor, b) -> Tensor:
    """maximum/minimum (``node``) of a tensor and a tensor or a number: ``clamp``'s bounds may be numbers."""
    a, b = promote(a, b)
    if a._data.dtype.kind == "c":  # PyTorch's RuntimeError (complex numbers have no order), as fmax/fmin's
        raise RuntimeError(f"{node.__qualname__.lower()} not implemented for complex tensors.")  # ("maximum")
    return node.apply(a, b)


def _no_grad_binary(fn, a, b) -> Tensor:
    """A result outside the graph (comparisons, integer division, logical ops)."""
    arrays = (a._data if isinstance(a, Tensor) else a, b._data if isinstance(b, Tensor) else b)
    try:
        with quiet():  # integer division by zero, NaN comparisons: silently, as PyTorch (ember._backend)
            return Tensor._make(meta_results(arrays, iterator_layout(fn(*arrays), arrays), True))
    except ValueError as err:
        raise shape_error(fn.__name__, arrays, err) from None


def _compare(fn, ordering: str | None = None):
    def op(a, b):
        if not isinstance(b, Tensor) and not isinstance(b, (int, float, bool, complex, xp.generic)):
            return NotImplemented
        a, b = promote(a, b)
        if ordering is not None:  # complex numbers have no order
            refuse_complex(a if isinstance(a, Tensor) else b, f"{ordering}_cpu")
        return _no_grad_binary(fn, a, b)

    return op


# the operators (Tensor.__eq__ ...): NotImplemented for an operand of another kind, for Python to try its own
operator_eq, operator_ne = _compare(xp.equal), _compare(xp.not_equal)
operator_lt, operator_le, operator_gt, operator_ge = (
    _compare(f, name) for f, name in ((xp.less, "lt"), (xp.less_equal, "le"), (xp.greater, "gt"),
                                      (xp.greater_equal, "ge")))


def _comparison_function(operator, name: str):
    """``torch.eq`` / ``Tensor.eq`` and the others: the operator's result, PyTorch's TypeError where the operator
    gives NotImplemented (``t.eq("a")``, ``t.lt(array)``; ``t == "a"`` is False)."""
    def op(a, b):
        if not isinstance(a, Tensor):  # (PyTorch's overloads take a tensor first: torch.eq(3, x) is its TypeError)
            raise operand_type_error(a)
        out = operator(a, b)
        if out is NotImplemented:  # (the function called, which knows its name, words PyTorch's error)
            raise operand_type_error(b)
        return out

    op.__name__ = name
    return op


eq, ne, lt, le, gt, ge = (_comparison_function(operator, name) for operator, name in (
    (operator_eq, "eq"), (operator_ne, "ne"), (operator_lt, "lt"), (operator_le, "le"), (operator_gt, "gt"),
    (operator_ge, "ge")))


def _logical(fn):
    def op(a, b):
        require_tensor(fn.__name__, a, 1, "input")  # (PyTorch's logical ops take tensors only)
        require_tensor(fn.__name__, b)
        return _no_grad_binary(fn, a, b)

    return op


def _bitwise(fn):
    def op(a, b):
        a, b = promote(a, b)
        t = a if isinstance(a, Tensor) else b
        if np_kind(t._data.dtype) in "fc":  # PyTorch has no floating-point bitwise kernel (NumPy's TypeError otherwise)
            raise not_implemented_for(f"{fn.__name__}_cpu", t.dtype)
        return _no_grad_binary(fn, a, b)

    return op


logical_and, logical_or, logical_xor = (_logical(f) for f in (xp.logical_and, xp.logical_or, xp.logical_xor))
bitwise_and, bitwise_or, bitwise_xor = (_bitwise(f) for f in (xp.bitwise_and, xp.bitwise_or, xp.bitwise_xor))


def _shift(fn, kernel: str):
    """Bit shifts of integer tensors. A shift by a negative count or by the type's width or more gives 0 for a left
    shift and the sign (0 or -1) for a right shift, as PyTorch; NumPy's shifts do the same. A float or complex
    operand (a number too) is PyTorch's NotImplementedError naming the promoted dtype ('Float', 'ComplexFloat')."""
    def op(a, b):
        if not isinstance(b, (Tensor, int, float, complex, xp.ndarray)) and not isinstance(b, xp.generic):
            raise operand_type_error(b)  # (the operators turn this into NotImplemented; an array: promote's error)
        if isinstance(b, int) and not 0 <= b < 64:  # any such count shifts everything out: 64 fits every dtype
            b = 64
        a, b = promote(a, b)
        for t in (a, b):
            if isinstance(t, Tensor) and t._data.dtype.kind not in "iu":
                raise NotImplementedError(
                    f"\"{kernel}\" not implemented for '{_dtype.SCALAR_TYPE_NAMES[t.dtype.name]}'")
        return _no_grad_binary(fn, a, b)

    return op


bitwise_left_shift, bitwise_right_shift = _shift(xp.left_shift, "lshift_cpu"), _shift(xp.right_shift, "rshift_cpu")


def logical_not(a: Tensor) -> Tensor:
    return Tensor._make(meta_results((a._data,), xp.logical_not(a._data), True))


def bitwise_not(a: Tensor) -> Tensor:
    if np_kind(a._data.dtype) in "fc":  # (no floating kernel: PyTorch's error, not NumPy's TypeError)
        raise not_implemented_for("bitwise_not_cpu", a.dtype)
    return Tensor._make(xp.invert(a._data))


# --------------------------------------------------------------------- tests of values
def isnan(x: Tensor) -> Tensor:
    return Tensor._make(meta_results((x._data,), xp.isnan(x._data), True))


def isinf(x: Tensor) -> Tensor:
    return Tensor._make(meta_results((x._data,), xp.isinf(x._data), True))


def isfinite(x: Tensor) -> Tensor:
    return Tensor._make(meta_results((x._data,), xp.isfinite(x._data), True))


def isposinf(x: Tensor) -> Tensor:
    if x.is_complex():
        raise RuntimeError("isposinf does not support complex inputs.")
    return Tensor._make(meta_results((x._data,), xp.isposinf(x._data), True))


def isneginf(x: Tensor) -> Tensor:
    if x.is_complex():
        raise RuntimeError("isneginf does not support complex inputs.")
    return Tensor._make(meta_results((x._data,), xp.isneginf(x._data), True))


def signbit(x: Tensor) -> Tensor:
    """Whether each element's sign bit is set: True for negative numbers, -0.0 and a NaN with its sign bit set;
    False throughout for bool and unsigned tensors (bool result)."""
    a = x._data
    if np_kind(a.dtype) == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if np_kind(a.dtype) in "bu":
        out = xp.zeros_like(a, xp.bool_)  # (in the input's memory order, as every pointwise result)
    elif np_kind(a.dtype) == "i":
        out = a < 0
    else:  # (a bfloat16 array through float32: the sign bit is kept, a NaN's included)
        out = xp.signbit(a if a.dtype.itemsize > 2 or a.dtype == xp.float16 else a.astype(xp.float32))
    return Tensor._make(meta_results((a,), out, True))


def isreal(x: Tensor) -> Tensor:
    """Whether each element has no imaginary part (True everywhere for a real tensor)."""
    if x.is_complex():
        return Tensor._make(meta_results((x._data,), x._data.imag == 0))
    from .._creation import _empty_preserving, meta_like  # (PyTorch's ones_like(x, dtype=bool): x's layout kept)

    if _meta_made[0] and is_meta(x._data):  # (no data: the shape and layout alone)
        return Tensor._make(meta_like(x._data, xp.bool_))
    out = _empty_preserving(x, xp.bool_)
    out[...] = True
    return Tensor._make(out)


def float_power_dtype(a, b) -> _dtype.dtype:
    """The dtype ``float_power`` computes in: complex128 when either operand is complex, float64 otherwise."""
    return _dtype.complex128 if any(isinstance(v, complex) or isinstance(v, Tensor) and v.is_complex()
                                    for v in (a, b)) else _dtype.float64


def float_power(a, b) -> Tensor:
    """``a ** b`` computed in double precision (float64, or complex128 when either is complex), as PyTorch's."""
    wide = float_power_dtype(a, b)
    a, b = (v.to(wide) if isinstance(v, Tensor) else v for v in (a, b))
    return pow(a, b)


def check_float_power_base(x: Tensor, exponent) -> None:
    """``x.float_power_(exponent)`` writes a double precision result: PyTorch refuses any other base dtype."""
    wide = float_power_dtype(x, exponent)
    if x.dtype != wide:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype.SCALAR_TYPE_NAMES[x.dtype.name]} but "
                           f"the operation's result requires dtype {_dtype.SCALAR_TYPE_NAMES[wide.name]}")


def equal(a: Tensor, b: Tensor) -> bool:
    """True if both tensors have the same shape and elements."""
    refuse_meta("equal", a._data, b._data)
    return a._data.shape == b._data.shape and bool(xp.array_equal(a._data, b._data))


@_dtype.keyword_scalars
def allclose(a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether ``isclose`` holds everywhere."""
    require_tensor("allclose", b)
    close = isclose(a, b, *_tolerances("allclose", rtol, atol), equal_nan)
    return close.all().item()  # (of meta tensors: item()'s error, as PyTorch's)


def _tolerances(op: str, rtol, atol) -> tuple:
    """``rtol`` and ``atol`` as PyTorch reads a double: a 0-d tensor that does not require grad is its number, any
    other tensor its TypeError."""
    return tuple(_dtype.scalar_tensor_number(v, op, name, "float", position) if isinstance(v, Tensor) else v
                 for name, v, position in (("rtol", rtol, 3), ("atol", atol, 4)))


@_dtype.keyword_scalars
def isclose(a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|a - b| <= atol + rtol |b| elementwise; tensors of two dtypes are PyTorch's RuntimeError, a number for ``b``
    its TypeError."""
    require_tensor("isclose", b)
    rtol, atol = _tolerances("isclose", rtol, atol)
    check_operand_devices(a._data, b._data)
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{_dtype.SCALAR_TYPE_NAMES[a.dtype.name]} did not match "
                           f"{_dtype.SCALAR_TYPE_NAMES[b.dtype.name]}")
    arrays = (a._data, b._data)
    out = xp.isclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return Tensor._make(meta_results(arrays, iterator_layout(out, arrays)))

