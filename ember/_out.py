"""``out=``: PyTorch's functions that write their result into a given tensor (``torch.max(x, out=m)``).

One wrapper, applied to the top-level functions listed below (``ember/__init__.py``). The result is computed as
usual, then written into ``out``, which is returned (a tuple of ``out`` tensors for ops returning several, as
``torch.max(x, dim, out=(values, indices))``). As in PyTorch:

- ``out`` is resized to the result's shape, laid out as the result was computed (a transposed, permuted or
  channels-last input's strides, for the ops that keep them); resizing one that has elements warns (PyTorch
  deprecates it), an empty one is resized silently;
- ``sum``/``prod``/``cumsum``/``cumprod`` compute in ``out``'s dtype (its ``dtype=``); for the others, its dtype
  must be one the result can be cast to (pointwise ops and most reductions: ``RuntimeError``
  "result type Float can't be cast to the desired output type Long"; ``cat``/``stack``/``hstack``/``vstack``:
  ``TypeError``), or
  exactly the result's for the ops PyTorch checks strictly (matrix products, indexing, ``amax``, ``where``,
  ``clamp``/``clamp_min``/``clamp_max``, ``inner``, ``nan_to_num``, and the pointwise ops that keep their input's
  dtype: ``abs``, ``floor``, ``neg``, ``sign``, ``sgn``, ...; ``isposinf``/``isneginf`` want a bool ``out``), each
  refusal with PyTorch's message for that op; checked after computing, except for the ops PyTorch checks it for
  first (``_out_checked_first.py``: ``amax(x, dim=5, out=longs)`` is the dtype's error, not the dim's);
- the op is not differentiated: with gradients enabled and an input or ``out`` that requires grad,
  ``RuntimeError`` (PyTorch's "functions with out=... arguments don't support automatic differentiation"), except
  for ``tensordot`` and ``inner`` (PyTorch's composites: out is a differentiable copy of the result; an out that
  requires grad and has another shape than the result is tensordot's RuntimeError), and for ``softmax`` and
  ``log_softmax``, whose out= PyTorch records without a derivative: ``out`` takes a ``NotImplemented`` node on
  the inputs (and ``out``) that require grad, a backward through it raising, and only a leaf ``out`` that requires
  grad is refused;
- the overloads that take no ``out=`` refuse it as PyTorch's argument parser does (``TypeError``): ``sum`` and
  ``prod`` take it only with a ``dim``, ``max``/``min`` take one tensor without a dim or with another tensor and a
  tuple of two with a dim. ``max``/``min`` of all elements into ``out`` is PyTorch's ``max.unary_out``: an empty
  input gives the dtype's lowest (highest) value rather than the error of ``max()`` without ``out=``;
- an ``out`` sharing memory with an input is PyTorch's ``RuntimeError`` "unsupported operation: ...": for the
  pointwise ops (and ``cumsum``, ``sort``, ``take``, ..., ``addmm``'s added input) when it overlaps the input only
  in part (the very same elements, laid out alike, are allowed: ``torch.add(x, 1, out=x)``) or when ``out``
  itself repeats elements (an expanded tensor); for ``cat``/``stack``/``gather``/``index_select`` whenever it
  overlaps (``hstack``/``vstack`` too: PyTorch's ``cat``). As PyTorch's, the test compares the address ranges of
  dense tensors and takes strided ones that are not dense as not overlapping (``addmm``'s added input broadcast
  to the result repeats elements: never refused). ``max``/``min`` with a dim or of two tensors refuse a partial
  overlap too; the matrix products and the other reductions compute before writing: no check.

The factories (``zeros``, ``ones``, ``full``, ``empty``, ``eye``, ``arange``, ``range``, ``linspace``,
``logspace``, ``rand``, ``randn``, ``randint``, ``randperm``) take their ``dtype=`` from ``out`` (a different one
given is PyTorch's RuntimeError) and draw or fill the values as they would without it.

The reductions returning two tensors (``median``, ``mode``, ``cummax``, ``aminmax``, ...) and ``nansum``/``nanmean``
follow their own rules beside these (``_out_reductions.py``).

``with_out`` also serves ``torch.special``'s functions (``ember.special``), under PyTorch's names for them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ._arg_aliases import positional_names, refuse_arrays_met_as_error, refuse_numpy_arrays
from ._backend import xp
from ._dtype import (
    CPP_TYPE_NAMES,
    SCALAR_TYPE_NAMES,
    can_cast_result,
    dtype,
    from_python_type,
    not_implemented_for,
    np_kind,
)
from ._dtype import float32 as _float32
from ._meta import is_meta
from ._out_checked_first import dtype_checked_first
from ._out_reductions import (
    NAN_SUMS,
    PAIRS,
    PAIRS_CHECKED_FIRST,
    check_pair_dtypes,
    check_pair_form,
    mode_resize_shapes,
    nan_sum_dtype,
    refuse_integral_nanmean,
)
from ._resize import resize_storage
from ._signatures import with_keywords
from ._tensor import Tensor
from ._tensor_pickle import layout_in_storage, storage_bytes, view_into
from ._warnings import warn
from .autograd.grad_mode import is_grad_enabled
from .storage import root_array

# result dtype converted to out's when castable (same_kind), as PyTorch's TensorIterator ops do
CASTING = frozenset("""
abs absolute acos acosh add arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin asinh atan atan2 atanh
bitwise_and bitwise_not bitwise_or bitwise_xor ceil cos cosh cumprod cumsum deg2rad digamma div divide eq erf erfc
erfinv exp exp2 expm1 floor floor_divide fmax fmin fmod frac ge greater greater_equal gt hypot i0 igamma igammac le
lerp less less_equal lgamma log log10 log1p log2 logaddexp logaddexp2 logsumexp logical_and logical_not logical_or
logical_xor logit lt mvlgamma polygamma
max maximum mean min minimum mul multiply ne neg negative not_equal pow prod rad2deg reciprocal remainder rsqrt
sigmoid sign sin
sinc sinh sqrt square std sub subtract sum tan tanh true_divide trunc var xlogy cat concat concatenate stack arange
gcd lcm ldexp nextafter outer ger addr addcmul addcdiv cholesky_inverse hstack vstack kron angle
bitwise_left_shift bitwise_right_shift copysign
""".split())
# result dtype must equal out's
EXACT = frozenset("""
addbmm addmm addmv amax amin argmax argmin baddbmm bmm clamp clamp_min clamp_max clip dot gather index_select
masked_select matmul mm mv round sort take tensordot topk vdot
where norm heaviside frexp abs absolute ceil floor trunc fix frac neg negative sign bitwise_not tril triu signbit
sgn nan_to_num inner isposinf isneginf any all float_power chain_matmul linalg_multi_dot softmax log_softmax linalg_det
logcumsumexp
""".split())
# of these, an op whose result has another dtype than its input (abs of a complex tensor) casts into out
_REAL_OF_COMPLEX = frozenset({"abs", "absolute"})
# PyTorch's words for an out whose dtype is not the result's, by op (the structured kernels and the matrix
# products name C++ types; the pointwise ops keeping their input's dtype say "Found dtype ... but expected ...")
_FOUND = "Found dtype {out} but expected {result}"
_SCALAR_TYPE = "expected scalar_type {result} but found {out}"
_CPP = "Expected out tensor to have dtype {result_cpp}, but got {out_cpp} instead"
EXACT_MESSAGES = {
    **dict.fromkeys("abs absolute ceil floor trunc fix frac neg negative sign sgn round clamp clamp_min clamp_max clip "
                    "bitwise_not".split(), _FOUND),
    **dict.fromkeys("addmm addmv baddbmm bmm matmul mm gather sort topk argmax argmin max min norm tril triu softmax "
                    "log_softmax".split(), _CPP),
    **dict.fromkeys(("dot", "vdot"), "result dtype {out} does not match input dtype {result}"),
    **dict.fromkeys(("chain_matmul", "linalg_multi_dot"),
                    "multi_dot(): expected out tensor to have dtype {result_cpp} but got {out_cpp}"),
    "amax": "Expected the dtype for input and out to match, but got {result} for input's dtype and {out} for "
            "out's dtype.",
    "amin": "Expected the dtype for input and out to match, but got {result} for input's dtype and {out} for "
            "out's dtype.",
    "logcumsumexp": _SCALAR_TYPE,
    "index_select": "index_select(): self and result must have the same scalar type",
    "masked_select": "masked_select(): self and result must have the same scalar type",
    "take": "take(): self and out expected to have the same dtype, but got self.dtype = {result} and "
            "out.dtype = {out}",
    "where": "Expected out type to be {result} but got {out}",
    # (addbmm's kernel copies its input into out, then adds the products in place: addmm's check of that pair)
    "addbmm": "self and mat2 must have the same dtype, but got {out} and {result}",
    "signbit": "signbit does not support non-boolean outputs.",
    "isposinf": "isposinf does not support non-boolean outputs.",
    "isneginf": "isneginf does not support non-boolean outputs.",
    "float_power": "the output given to float_power has dtype {out} but the operation's result requires dtype "
                   "{result}",
    "any": "any only supports bool tensor for result, got: {out}",
    "all": "all only supports bool tensor for result, got: {out}",
    "nan_to_num": "nan_to_num: dtype of out: {out} should be same as input: {result}",
    **dict.fromkeys(("inner", "tensordot"), "tensordot: Expected the output tensor to have dtype {result}, but got an "
                                            "output tensor with dtype {out}"),
}
_TRUTHS = frozenset({"any", "all"})
# max/min of all elements (max.unary_out): out's dtype is checked by PyTorch's canCast assertion, in its words
_UNARY_CAN_CAST = ("Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) to be "
                   "true, but got false.  (Could this error message be improved?  If so, please report an "
                   "enhancement request to PyTorch.)")
# PyTorch's own words for a dtype out cannot take, where they are not the generic ones
DTYPE_MESSAGES = {"heaviside": "heaviside is not yet implemented for tensors with different dtypes.",
                  "ldexp": "ldexp can't be cast to the desired output type {out}",
                  "max.unary_out": _UNARY_CAN_CAST, "min.unary_out": _UNARY_CAN_CAST,
                  "mean.dtype_out": "mean.dtype_out(): input types can't be cast to the desired output type {out}",
                  "mvlgamma": "mvlgamma: result type {result} can't be cast to the desired output type {result}",
                  "logsumexp": "logsumexp(): Expected floating point type for result tensor, but got: {out}",
                  "cholesky_inverse": "cholesky_inverse: Expected result to be safely castable from {result} dtype, "
                                      "but got result with dtype {out}",
                  **dict.fromkeys(("cat", "concat", "concatenate", "stack", "hstack", "vstack"),
                                  "torch.cat(): input types can't be cast to the desired output type {out}")}
TYPE_ERROR_OPS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack"})
# the factories: no tensor input, out's dtype their dtype= (``torch.zeros(2, out=doubles)`` is float64), out=
# refused under autograd only when it is a leaf requiring grad; ``requires_grad=True`` makes out require grad
FACTORIES = frozenset("arange empty eye full linspace logspace ones rand randint randn randperm range zeros".split())
# of these, the 1-d ones whose kernel resizes out only when it has another number of elements (else keeps its shape)
_ONE_DIMENSIONAL = frozenset({"arange", "range", "linspace", "logspace"})
# of these, PyTorch's composite ones resize out first, grad mode or not: an out that requires grad is refused so
_RESIZING_FACTORIES = frozenset({"empty", "randn"})
# the ops whose out= PyTorch resizes without a warning: the factories, and addbmm (its kernel resizes out to the
# input's shape, then to the result's)
_RESIZED_SILENTLY = FACTORIES | {"addbmm"}
# the op PyTorch's refusal of out= under autograd names, where another (outer writes its product with mul's out=)
_AUTOGRAD_NAMES = {"outer": "mul", "ger": "mul", "kron": "mul", "hstack": "cat", "vstack": "cat", "nanmean": "nansum",
                   **{name: f"aten::{name}" for name in FACTORIES}, "softmax": "aten::softmax",
                   "log_softmax": "aten::log_softmax"}
# out's dtype is the op's dtype= (PyTorch computes in it: torch.sum(floats, out=long) sums the truncated values)
DTYPE_FROM_OUT = frozenset({"sum", "prod", "cumsum", "cumprod"}) | FACTORIES


# ops refusing an out that overlaps an input in part (PyTorch's TensorIterator ops and the others calling
# assert_no_partial_overlap), and those refusing any overlap (assert_no_overlap); addmm/addmv check only their
# added input (the product is computed apart)
_NO_PARTIAL_OVERLAP = (CASTING | EXACT) - frozenset("""
amax amin argmax argmin max min mean logsumexp norm prod std sum var arange mvlgamma mm bmm baddbmm addbmm matmul mv
dot vdot inner tensordot
cat concat concatenate stack hstack vstack gather index_select tril triu softmax log_softmax
""".split())
_NO_OVERLAP = frozenset("cat concat concatenate stack hstack vstack gather index_select".split())
_EXTREMA = frozenset({"max", "min"})  # (with a dim, or of two tensors; not of all elements: max.unary_out)
_FIRST_ONLY = frozenset({"addmm", "addmv"})
_OVERLAP_ERROR = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                  "single memory location. Please clone() the tensor before performing the operation.")
_INTERNAL_OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")


# the reductions whose out= PyTorch's argument parser takes only in some overloads, and those overloads
_OVERLOADS = {
    "sum": [" * (Tensor input, *, torch.dtype dtype = None)\n",
            " * (Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
            "Tensor out = None)\n"],
    "prod": [" * (Tensor input, *, torch.dtype dtype = None)\n",
             " * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n"],
    "max": [" * (Tensor input, *, Tensor out = None)\n", " * (Tensor input, Tensor other, *, Tensor out = None)\n",
            " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)\n"],
}
_OVERLOADS["min"] = _OVERLOADS["max"]


def _kind(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _no_such_overload(name: str, args, out, mismatch: bool = False) -> TypeError:
    """PyTorch's TypeError for arguments that match none of ``name``'s overloads (``mismatch``: the first one is
    marked as refusing the keyword ``out``)."""
    got = ", ".join([_kind(a) for a in args] + [f"out={_kind(out)}"])
    lines = _OVERLOADS[name]
    marked = "      didn't match because some of the keywords were incorrect: out\n" if mismatch else ""
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + lines[0] + marked + "".join(lines[1:]))


def _check_overload(name: str, args: tuple, kwargs: dict, out) -> bool:
    """Refuse ``out`` where PyTorch's overload of ``name`` for these arguments has none (``_OVERLOADS``); whether
    the call is ``max``/``min`` of all elements."""
    if "input" in kwargs:  # (the tensor by keyword: the overloads are those of the positional one)
        args, kwargs = (kwargs["input"], *args), {k: v for k, v in kwargs.items() if k != "input"}
    if name in ("sum", "prod"):
        if name == "prod" and "dim" in kwargs and kwargs["dim"] is None:
            raise TypeError("prod(): argument 'dim' must be int, not NoneType")
        if len(args) < 2 and "dim" not in kwargs and "axis" not in kwargs:
            if kwargs:  # (dtype= or keepdim=: the dim overload, missing its dim)
                raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
            raise _no_such_overload(name, args, out)
        return False
    if len(args) == 1 and not kwargs:  # max(x, out=t): one tensor
        if not isinstance(out, Tensor):
            raise _no_such_overload(name, args, out)
        return True
    if (len(args) > 1 and isinstance(args[1], Tensor)) or "other" in kwargs:  # max(x, y, out=t)
        if not isinstance(out, Tensor):
            raise _no_such_overload(name, args, out, mismatch=True)
        return False
    if isinstance(out, Tensor):  # max(x, dim, out=...): a tuple of values and indices
        if len(args) == 2 and not kwargs:
            raise _no_such_overload(name, args, out, mismatch=True)
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not Tensor")
    if isinstance(out, (tuple, list)) and len(out) != 2:
        raise TypeError(f"expected tuple of 2 elements but got {len(out)}")
    return False


def _dense(a) -> bool:
    """Whether array ``a`` covers a block of memory once (PyTorch's is_non_overlapping_and_dense)."""
    dims = sorted((st, n) for st, n in zip(a.strides, a.shape) if n != 1)
    expected = a.itemsize
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True


def overlaps_itself(a) -> bool:
    """Whether elements of array ``a`` share memory (a dimension of stride 0 and size > 1: ``expand``), PyTorch's
    internal overlap; an empty array has no elements to share it (``x.expand(0, 3)``)."""
    return a.size > 0 and any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape))


def _overlap(a, b) -> str | None:
    """PyTorch's get_overlap_status of two arrays: "full" (the same elements laid out alike), "partial", or None
    (none, or too hard to tell: a strided array that is not dense)."""
    if a is b:
        return "full"
    if a.size == 0 or b.size == 0 or not (_dense(a) and _dense(b)):
        return None
    a_begin, b_begin = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    a_end, b_end = a_begin + a.nbytes, b_begin + b.nbytes
    if a_begin == b_begin and a_end == b_end:  # (a dimension of size 1 aside: NumPy's stride for it is arbitrary)
        return "full" if a.strides == b.strides or _steps(a) == _steps(b) else "partial"
    return "partial" if a_begin < b_end and b_begin < a_end else None


def _steps(a) -> list:
    """The sizes and strides of ``a``'s dimensions other than those of size 1."""
    return [(n, st) for n, st in zip(a.shape, a.strides) if n != 1]


def _owner(a):
    """The object at the end of array ``a``'s chain of bases: the memory's owner (``a`` itself when it owns it)."""
    b = a.base
    while b is not None:
        a, b = b, getattr(b, "base", None)
    return a


_DATA_SLOT = Tensor._data  # the slot holding a tensor's array (a subclass may shadow it: see refuse_partial_overlap)


def refuse_partial_overlap(written, other, full: bool = False) -> None:
    """PyTorch's refusal of an in-place op whose tensor input ``other`` shares part, not all, of the written
    tensor's memory (``x[1:].add_(x[:-1])``, ``y.copy_(y.t())``: TensorIterator's assert_no_partial_overlap):
    ``written`` is the tensor's array; ``other`` any argument of the op (a number passes). The very same elements
    laid out alike (``x.add_(x)``) are allowed, and a strided input that is not dense (``expand``, a step) is taken
    as not overlapping, as PyTorch's test does; meta tensors have no memory to share. Two arrays that each own
    their memory (the common case) are told apart before any address is read. ``full``: the very same elements
    are refused too (assert_no_overlap: the index ops' source, ``x.index_copy_(0, i, x)``)."""
    if isinstance(other, Tensor):
        if type(other)._data is not _DATA_SLOT:  # (vmap's batched example: no array of its own to share memory;
            return  # reading it would stop the op where the per-example fallback should run it)
        o = other._data
        try:
            if o.base is None and written.base is None and o is not written or o is written and not full:
                return
        except (AttributeError, NotImplementedError):  # (not an array: a sparse tensor's data)
            return
        if _owner(o) is _owner(written) and not is_meta(written):
            status = _overlap(o, written)
            if status == "partial" or full and status == "full":
                raise RuntimeError(_OVERLAP_ERROR)


def refuse_setitem_overlap(written, idx, value, bools_index: bool = True) -> None:
    """PyTorch's refusals for ``x[idx] = value`` (``written``: x's array; ``idx`` the array index), as its set_item:
    an index of ints (NumPy's too), slices, None and ... copies into the view ``x[idx]`` as ``copy_``,
    refusing a ``value`` that overlaps it in part (``x[1:] = x[:-1]``), except a 0-d value (``fill_``) or one
    broadcast to it; one with tensor indices is ``index_put_`` into the view its other parts make, refusing any
    overlap of ``value`` with that view (``x[i] = x``), except a one-element value put through a single mask
    (``masked_fill_``). A bool (a Python bool or a 0-d bool tensor, which indexing reads as one) is such a tensor
    index too, of one position or none over a new dimension, except a lone Python bool (``x[True] = x`` copies):
    ``bools_index`` False says ``idx`` is that. A value of memory apart from x's (the common case) is told apart
    at once."""
    v = value._data
    if v.__class__ is not xp.ndarray or written.__class__ is not xp.ndarray or \
            v.base is None and written.base is None and v is not written or _owner(v) is not _owner(written):
        return
    parts = idx if idx.__class__ is tuple else (idx,)
    sliced, masks, tensors = [], 0, 0  # (the view the parts other than tensor indices make, as PyTorch slices)
    for p in parts:
        if p.__class__ is xp.ndarray or isinstance(p, list):
            a = xp.asarray(p)
            tensors += 1
            if a.dtype == xp.bool_ and not a.ndim:  # (a 0-d byte tensor: a bool's index, below, not a mask)
                sliced.append(None)
                continue
            masks += a.dtype == xp.bool_
            sliced.extend((slice(None),) * (a.ndim if a.dtype == xp.bool_ else 1))
        elif p.__class__ is bool and bools_index:  # (PyTorch: unsqueeze, then an index of [0] or [] there)
            tensors += 1
            sliced.append(None)
        else:
            sliced.append(p)
    try:
        region = written[tuple(sliced)]
    except IndexError:  # (out of bounds: setitem's own error follows)
        return
    if region.__class__ is not xp.ndarray:  # (one element: the value can only be that very element, or none)
        return
    if not tensors:  # copy_to: the value as it is, filled from when 0-d, else expanded to the region
        if region.shape != v.shape:
            if not v.ndim:
                return
            try:
                v = xp.broadcast_to(_without_leading_ones(v), region.shape)
            except ValueError:  # (setitem's own shape error follows)
                return
        if _overlap(region, v) == "partial":
            raise RuntimeError(_OVERLAP_ERROR)
        return
    if v.size == 1 and tensors == 1 and masks == 1:
        return
    if _overlap(region, _without_leading_ones(v)) is not None:
        raise RuntimeError(_OVERLAP_ERROR)


def refuse_index_put_overlap(written, indices, value) -> None:
    """PyTorch's refusal of ``x.index_put_(indices, value)`` (not accumulating) whose value shares any memory with x
    (assert_no_overlap), except a one-element value put through a single bool mask (its ``masked_fill_``)."""
    if isinstance(value, Tensor) and value._data.size == 1 and len(indices) == 1 and \
            isinstance(indices[0], Tensor) and indices[0]._data.dtype in (xp.bool_, xp.uint8):
        return
    refuse_partial_overlap(written, value, full=True)


def _without_leading_ones(a):
    """``a`` without its leading dimensions of size 1, as PyTorch's set_item views a value (slicePrefix1sSize)."""
    k = 0
    while k < a.ndim and a.shape[k] == 1:
        k += 1
    return a.reshape(a.shape[k:]) if k else a


def _check_overlap(name: str, args: tuple, kwargs: dict, out) -> None:
    """PyTorch's refusal of an ``out`` sharing memory with an input, or repeating its own elements (see the
    module's docstring)."""
    outs = [o._data for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, Tensor)]
    inputs = args[:1] if name in _FIRST_ONLY else (*args, *kwargs.values())
    arrays = [t._data for v in inputs for t in (v if isinstance(v, (tuple, list)) else (v,))
              if isinstance(t, Tensor)]
    for o in outs:
        if overlaps_itself(o):
            raise RuntimeError(_INTERNAL_OVERLAP_ERROR)
        for a in arrays:
            if name in _FIRST_ONLY and a.shape != o.shape:
                try:  # (PyTorch expands the added input to the result's shape first: repeated, it is not dense)
                    a = xp.broadcast_to(a, o.shape)
                except ValueError:
                    continue  # (the op's own shape error)
            status = _overlap(a, o)
            if status == "partial" or status == "full" and name in _NO_OVERLAP:
                raise RuntimeError(_OVERLAP_ERROR)


def _extreme_of_nothing(name: str, x: Tensor) -> Tensor:
    """``max.unary_out``/``min.unary_out`` of an empty tensor: the reduction's identity in x's dtype (-inf/inf, an
    integer dtype's lowest/highest, False/True), where PyTorch's ``max()`` without ``out=`` raises."""
    dt = x._data.dtype
    if dt == xp.bool_:
        value = name == "min"
    elif np_kind(dt) == "f":
        value = -xp.inf if name == "max" else xp.inf
    else:
        info = xp.iinfo(dt)
        value = info.min if name == "max" else info.max
    return Tensor._make(xp.asarray(value, dtype=dt))


def _dtype_from_out(name: str, kwargs: dict, out: Tensor) -> None:
    """The ``dtype=`` of an op computing in out's dtype (``DTYPE_FROM_OUT``): out's, and a given one that is not
    out's is PyTorch's RuntimeError (rather than a result computed in it and cast into out)."""
    dtype = kwargs.get("dtype")
    if dtype.__class__ is type:  # (a Python type: PyTorch's dtype for it, ``float`` float64)
        dtype = kwargs["dtype"] = from_python_type(dtype)
    if dtype is None:
        kwargs["dtype"] = out.dtype
    elif dtype != out.dtype:
        if name in FACTORIES:
            raise RuntimeError(f"dtype {_dtype_name(dtype)} does not match dtype of out parameter "
                               f"({_dtype_name(out.dtype)})")
        raise RuntimeError(f"Expected out tensor to have dtype {CPP_TYPE_NAMES[dtype.name]}, but got "
                           f"{CPP_TYPE_NAMES[out.dtype.name]} instead")


def _mean_dtype(args: tuple, kwargs: dict, out: Tensor) -> None:
    """PyTorch's mean into ``out``: a given ``dtype=`` must be out's; without one, a floating (complex) input's mean
    is computed in out's floating (complex) dtype, in float32 for a half one (then rounded into it)."""
    dtype = kwargs.get("dtype")
    if dtype is not None:
        if dtype != out.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {CPP_TYPE_NAMES[dtype.name]}, but got "
                               f"{CPP_TYPE_NAMES[out.dtype.name]} instead")
        return
    x = args[0] if args else None
    if isinstance(x, Tensor) and (x.is_floating_point() or x.is_complex()) and \
            (out.is_floating_point() or out.is_complex()):
        kwargs["dtype"] = _float32 if out.dtype.name in ("float16", "bfloat16") else out.dtype


def _dtype_name(d) -> str:
    return SCALAR_TYPE_NAMES.get(d.name, d.name)


def _check_dtype(name: str, result: dtype, out: Tensor, exact: bool) -> None:
    """PyTorch's refusal of an ``out`` whose dtype is not the result's (``exact``), or one it cannot be cast to."""
    src, dst = result.np, out._data.dtype
    if exact and src == dst or not exact and can_cast_result(src, dst):
        return
    if name in _TRUTHS and dst.kind in "bu" and dst.itemsize == 1:  # (any/all: a bool or uint8 out, either input)
        return
    names = {"result": _dtype_name(result), "out": _dtype_name(out.dtype),
             "result_cpp": CPP_TYPE_NAMES.get(result.name, result.name),
             "out_cpp": CPP_TYPE_NAMES.get(out.dtype.name, out.dtype.name)}
    if name in DTYPE_MESSAGES:
        error = TypeError if name in TYPE_ERROR_OPS else RuntimeError
        raise error(DTYPE_MESSAGES[name].format(**names))
    if exact:
        raise RuntimeError(EXACT_MESSAGES.get(name, _CPP).format(**names))
    raise RuntimeError("result type {result} can't be cast to the desired output type {out}".format(**names))


def _write(name: str, result: Tensor, out, exact: bool, shown: str | None = None,
           resize_shapes: Callable | None = None) -> Tensor:
    """``result`` written into ``out`` (see the module's docstring); ``shown``: the op's name in PyTorch's errors,
    where another; ``resize_shapes(out, result shape)``: the shapes PyTorch's resize warning names, where other
    than out's and the result's (None: resized silently)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{shown or name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _check_dtype(name, result.dtype, out, exact)
    if tuple(out.shape) != tuple(result.shape) and name in _ONE_DIMENSIONAL and out.numel() == result.numel():
        result = result.reshape(tuple(out.shape))  # (PyTorch's kernel keeps the shape of an out of as many elements)
    if tuple(out.shape) != tuple(result.shape):
        if name == "arange" and out.numel() != 0:  # (the user's line named, however deep the call)
            warn(
                f"The number of elements in the out tensor of shape {list(out.shape)} is {out.numel()} which does not "
                f"match the computed number of elements {result.numel()}. Note that this may occur as a result of "
                f"rounding error. The out tensor will be resized to a tensor of shape ({result.numel()},).")
        elif out.numel() != 0 and name not in _RESIZED_SILENTLY and \
                (shapes := (list(out.shape), list(result.shape)) if resize_shapes is None else
                 resize_shapes(out, tuple(result.shape))):
            warn(
                f"An output with one or more elements was resized since it had shape {shapes[0]}, which does "
                f"not match the required output shape {shapes[1]}. This behavior is deprecated, and in a "
                "future PyTorch release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).")
        resize_storage(out, tuple(result.shape))
        _as_computed(out, result._data)
    out.copy_(result)
    return out


def _as_computed(out: Tensor, a) -> None:
    """Lay ``out``, just resized (row-major), out as the op computed its result ``a``: PyTorch gives a resized output
    the strides it computed (a transposed, permuted or channels-last input's, for the ops that keep them)."""
    o = out._data
    if (a.__class__ is not xp.ndarray or o.__class__ is not xp.ndarray or a.ndim < 2 or a.flags.c_contiguous
            or not _dense(a) or is_meta(o)):
        return
    layout = layout_in_storage(o)
    if layout is not None:
        out._data = view_into(storage_bytes(root_array(o)), out.dtype, layout[1], a.shape,
                              [s // a.itemsize * o.itemsize for s in a.strides])


def _requires_grad(args, kwargs) -> bool:
    def any_grad(v) -> bool:
        if isinstance(v, Tensor):
            return v.requires_grad
        return isinstance(v, (list, tuple)) and any(any_grad(e) for e in v)

    return any(any_grad(v) for v in (*args, *kwargs.values()))


# ops PyTorch's autograd does not differentiate (their results are never differentiable): out= with an input
# that requires grad is no refusal there
_NOT_DIFFERENTIABLE = frozenset("""
eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and logical_or logical_xor logical_not
isposinf isneginf signbit argmax argmin floor_divide heaviside
""".split())


# PyTorch's functions whose out= form records the write without a derivative (its ``NotImplemented`` node on the
# inputs and the ``out`` that require grad: backward through ``out`` raises "derivative for aten::softmax is not
# implemented"): under autograd only a leaf ``out`` that requires grad is refused, as a factory's
_RECORDED_WITHOUT_DERIVATIVE = frozenset({"softmax", "log_softmax"})


def _written_without_derivative(name: str, fn: Callable, args: tuple, kwargs: dict, out) -> Tensor:
    """``fn``'s result written into ``out`` as PyTorch's ``_RECORDED_WITHOUT_DERIVATIVE`` ops write it with an input
    that requires grad: computed without a graph, then ``out`` takes a ``NotImplemented`` node (an in-place write:
    its version bumped, a view's base through CopySlices) whose edges are those inputs, then ``out`` if it requires
    grad."""
    from .autograd.grad_mode import no_grad
    from .autograd.no_derivative import _NotImplemented
    from .ops.copy_slices import take_history

    with no_grad():
        _write(name, fn(*args, **kwargs), out, name in EXACT)
    inputs = [v for v in (*args, *kwargs.values(), out) if isinstance(v, Tensor) and v.requires_grad]
    take_history(out, _NotImplemented.apply(*inputs, grad=out._data, op=name))
    return out


# PyTorch's composite functions whose out= copies a differentiable result (tensordot's): no refusal under autograd
_DIFFERENTIABLE = frozenset({"inner", "tensordot"})
_TENSORDOT_GRAD_OUT = ("tensordot(): the 'out' tensor was specified and requires gradients, and its shape does not "
                       "match the expected result. Either remove the 'out' argument, ensure it does not require "
                       "gradients, or make sure its shape matches the expected output.")


def _refused_under_autograd(name: str, args: tuple, kwargs: dict, out) -> bool:
    """Whether PyTorch's autograd refuses the call (grad mode on): an input that requires grad, or an ``out`` that
    does; a factory's (``arange``, no tensor input) only a leaf ``out`` (a non-leaf one is written); an op it does
    not differentiate (``_NOT_DIFFERENTIABLE``) never."""
    if name in _NOT_DIFFERENTIABLE:
        return False
    if name in FACTORIES or name in _RECORDED_WITHOUT_DERIVATIVE:  # (a view of such a leaf too)
        base = out._base if isinstance(out, Tensor) and out._base is not None else out
        return isinstance(out, Tensor) and out.requires_grad and base.requires_grad and base.grad_fn is None
    return _requires_grad(args, kwargs) or _requires_grad((out,), {})


def with_out(name: str, fn: Callable, parsed: str | None = None, differentiable: bool = False) -> Callable:
    """``fn`` also taking PyTorch's keyword ``out=`` (see the module's docstring). ``name``: the op whose rules
    apply and whose name PyTorch's autograd refusal gives; ``parsed``: the function's name in PyTorch's argument
    errors, when another (``special_erf`` for ``erf``); ``differentiable``: no refusal under autograd (PyTorch's
    composite functions, whose out= copies a differentiable result: ``special.ndtr``)."""

    parameters = positional_names(fn, False)

    @functools.wraps(fn)
    def writing_out(*args, out=None, **kwargs):
        if out is None:
            try:
                return fn(*args, **kwargs)
            except (AttributeError, RuntimeError, ValueError, IndexError):
                refuse_arrays_met_as_error(parsed or name, args, kwargs, parameters)  # (a correct call: no cost)
                raise
        refuse_numpy_arrays(parsed or name, args, kwargs, parameters)  # (as the in-place methods: before writing)
        unary = name in _OVERLOADS and _check_overload(name, args, kwargs, out)
        if name in PAIRS:
            check_pair_form(name, args, kwargs, out)
        elif name == "nanmean":
            refuse_integral_nanmean(args, kwargs)
        if name in _RESIZING_FACTORIES and isinstance(out, Tensor) and out.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        if not differentiable and is_grad_enabled() and _refused_under_autograd(name, args, kwargs, out):
            raise RuntimeError(f"{_AUTOGRAD_NAMES.get(name, name)}(): functions with out=... arguments don't "
                               "support automatic differentiation, but one of the arguments requires grad.")
        if name in _NO_PARTIAL_OVERLAP or name in _NO_OVERLAP or name in _EXTREMA and not unary:
            _check_overlap(name, args, kwargs, out)
        if name == "frexp" and isinstance(out, (tuple, list)) and len(out) == 2:
            from .ops.float_parts import check_frexp_out

            check_frexp_out(*args, out)  # (before computing: PyTorch's own messages)
        if name in DTYPE_FROM_OUT and isinstance(out, Tensor):
            _dtype_from_out(name, kwargs, out)
        refused_by_kernel = False
        if name in NAN_SUMS and isinstance(out, Tensor):  # (nansum's out dtype is its dtype=, as sum's)
            refused_by_kernel = nan_sum_dtype(args, kwargs, out)
            if refused_by_kernel is None:  # (an integer input's: PyTorch's sum)
                _dtype_from_out("sum", kwargs, out)
        source = args[0] if args else kwargs.get("input")
        if name in PAIRS_CHECKED_FIRST and isinstance(source, Tensor):
            check_pair_dtypes(name, source, out)
        if name in FACTORIES and kwargs.pop("requires_grad", False):
            return _write(name, fn(*args, **kwargs), out, False).requires_grad_(True)
        if name == "mean" and isinstance(out, Tensor):
            _mean_dtype(args, kwargs, out)
        if unary:  # max.unary_out / min.unary_out
            x = args[0] if args else kwargs["input"]
            _check_dtype(f"{name}.unary_out", x.dtype, out, False)  # (before computing, as PyTorch's)
            result = _extreme_of_nothing(name, x) if x._data.size == 0 and not x.is_complex() else fn(x)
            return _write(f"{name}.unary_out", result, out, False)
        checked_first = isinstance(out, Tensor) and dtype_checked_first(name, args, kwargs)
        if checked_first:
            _check_dtype(name, checked_first[0], out, checked_first[1])
        if name in _RECORDED_WITHOUT_DERIVATIVE and is_grad_enabled() and _requires_grad((*args, out), kwargs):
            return _written_without_derivative(name, fn, args, kwargs, out)
        result = fn(*args, **kwargs)
        if refused_by_kernel:
            raise not_implemented_for("nansum_cpu", out.dtype)
        if name in PAIRS and name not in PAIRS_CHECKED_FIRST:  # (after the op's own checks of its dim)
            check_pair_dtypes(name, source, out)
        if isinstance(result, tuple):  # (values, indices) and the like: out is a tuple of as many tensors
            if not isinstance(out, (tuple, list)) or len(out) != len(result):
                raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors")
            shapes = functools.partial(mode_resize_shapes, args, kwargs, source) if name == "mode" else None
            written = [_write(name, r, o, True, resize_shapes=shapes) for r, o in zip(result, out)]  # (exactly)
            if not hasattr(result, "_fields"):
                return tuple(written)
            from . import return_types  # (PyTorch's out= forms return their own named tuple: max_out, frexp_out)

            return return_types.structseq(f"{type(result).__name__}_out", result._fields)._make(written)
        if isinstance(out, (tuple, list)):
            raise TypeError(f"{parsed or name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if name == "nan_to_num" and not (result.is_floating_point() or result.is_complex()):
            result = result.contiguous()  # (PyTorch copies an integer input into out, resized row-major)
        if name == "mean" and len(args) < 2 and "dim" not in kwargs and "axis" not in kwargs:
            return _write("mean.dtype_out", result, out, False)  # (PyTorch's mean of all elements: its own words)
        if name in _DIFFERENTIABLE and isinstance(out, Tensor) and out.requires_grad and out.shape != result.shape:
            raise RuntimeError(_TENSORDOT_GRAD_OUT)  # (tensordot's own check, before its resize refuses)
        # (abs of a complex tensor is real: its out is checked as a cast, as PyTorch's)
        exact = name in EXACT and not (name in _REAL_OF_COMPLEX and result.dtype != getattr(source, "dtype", None))
        return _write(name, result, out, exact, parsed)

    writing_out.__signature__ = with_keywords(fn, [("out", None)])
    return writing_out


def add_out_keyword(namespace: dict) -> None:
    """Wrap the listed functions of ``namespace`` (ember's top level) with ``with_out``."""
    for name in sorted(CASTING | EXACT | FACTORIES | PAIRS | NAN_SUMS):
        if name in namespace:
            namespace[name] = with_out(name, namespace[name], differentiable=name in _DIFFERENTIABLE)
