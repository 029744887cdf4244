"""Higher-order gradients: a node's one backward formula, run so that it records itself.

Every op's derivative is written once, as ``Node.backward`` on arrays (``xp`` calls, array methods and
operators). For first-order backward those arrays are NumPy's and nothing is recorded. Under
``create_graph=True`` the engine hands the same formula ``RecordedArray`` stand-ins instead: each holds an
ember tensor, and NumPy's dispatch protocols (``__array_ufunc__``, ``__array_function__``) plus the array
methods below turn every step of the formula into the matching ember op, recorded in the graph like any
forward op. The gradient that comes out is therefore itself differentiable, to any order, with no second
copy of any formula. (PyTorch writes its derivative formulas in differentiable ops, ``derivatives.yaml``;
tinygrad computes gradients as graph ops; here NumPy's protocols let the array formulas be those ops.)

What a formula reads from forward must be a function of the node's inputs and outputs for this to be
right: the engine swaps every saved input and output array for a recorded tensor connected to the graph
(``recorded_saved``). An op whose backward reads other forward intermediates that depend on its inputs
(normalisation statistics, say) sets ``Node.rerun_for_higher_order``: under ``create_graph`` its forward is
run again on recorded inputs so that those intermediates are recorded too. Arrays that do not depend on the
inputs (masks, indices, dropout's scaled mask) stay constants, as they should.

A formula step with no recorded counterpart fails loudly (``HigherOrderError`` names the node and the NumPy
function), never silently returning a constant.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from .._backend import xp
from . import lowp


class HigherOrderError(RuntimeError):
    """A backward formula used an array operation that cannot be recorded (so cannot be differentiated)."""


class _Current(threading.local):
    node_name = "a backward formula"


_current = _Current()


@contextlib.contextmanager
def running(node_name: str):
    """Name the node whose formula runs (for HigherOrderError's message)."""
    prev = _current.node_name
    _current.node_name = node_name
    try:
        yield
    finally:
        _current.node_name = prev


def _fail(what: str) -> HigherOrderError:
    return HigherOrderError(
        f"{_current.node_name} cannot be differentiated twice in ember yet: its gradient formula uses {what}, "
        "which has no recorded counterpart (create_graph=True needs every step of the formula recorded)"
    )


def is_recorded(*arrays) -> bool:
    """True when some argument is a ``RecordedArray``: a shared fast kernel (threaded, ``out=``) then runs
    its plain NumPy expression instead, which records itself."""
    for a in arrays:
        if type(a) is RecordedArray:
            return True
    return False


def _E():
    import ember

    return ember


def _tensor(value):
    """An ember tensor for a formula operand: a recorded array's tensor, a constant for a plain array."""
    from .._tensor import Tensor

    if type(value) is RecordedArray:
        return value.t
    if isinstance(value, xp.ndarray):
        return Tensor._make(value)
    if isinstance(value, xp.generic):
        return value.item()
    return value


formula_tensor = _tensor  # (its name for formulas that record tensor ops themselves: matrix products' in ops/linalg.py)


def _data(value):
    return value.t._data if type(value) is RecordedArray else value


def _array(t):
    """The array a formula's questions about ``t`` (shape, ndim, size, dtype) are about: ``t``'s own; for a tensor
    standing for one example under vmap (``func/_batched.py``: a batched backward), a value-less array with the
    example's shape and dtype."""
    from .._tensor import Tensor

    if type(t) is Tensor:
        return t._data
    example = getattr(type(t), "_example_array", None)
    return t._data if example is None else example(t)


def _meta(value):
    """``_array`` of a formula operand (a recorded array's tensor, or a plain array as it is)."""
    return _array(value.t) if type(value) is RecordedArray else value


def _wrap(value):
    from .._tensor import Tensor

    return RecordedArray(value) if isinstance(value, Tensor) else value


def _dims(axis):
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def _np_dtype_to_ember(dtype):
    from .._dtype import from_np

    return from_np(xp.dtype(dtype))


class RecordedArray:
    """An ember tensor that a backward formula computes on as if it were a NumPy array (see the module doc)."""

    __slots__ = ("t",)
    __array_priority__ = 2000  # wins over ndarray and Tensor in mixed arithmetic

    def __init__(self, tensor) -> None:
        self.t = tensor

    # ------------------------------------------------------------ metadata (plain values)
    @property
    def shape(self) -> tuple:
        return _array(self.t).shape

    @property
    def ndim(self) -> int:
        return _array(self.t).ndim

    @property
    def size(self) -> int:
        return _array(self.t).size

    @property
    def dtype(self):
        return _array(self.t).dtype

    def __len__(self) -> int:
        return len(_array(self.t))

    def __repr__(self) -> str:
        return f"RecordedArray({self.t!r})"

    def __array__(self, dtype=None, copy=None):
        raise _fail("a conversion to a plain NumPy array")

    def item(self):
        raise _fail("a conversion to a Python number (item())")

    def __float__(self) -> float:
        raise _fail("a conversion to a Python number (float())")

    def __bool__(self) -> bool:
        return bool(self.t._data)

    # ------------------------------------------------------------ NumPy's protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if kwargs.get("out") is not None:
            raise _fail(f"numpy.{ufunc.__name__}(..., out=...) (writing into an array)")
        if method == "at":
            return _ufunc_at(ufunc, *inputs)
        if method == "accumulate" and ufunc.__name__ in _ACCUMULATE:
            return _wrap(_ACCUMULATE[ufunc.__name__](_tensor(inputs[0]), kwargs.get("axis", 0)))
        if method != "__call__":
            raise _fail(f"numpy.{ufunc.__name__}.{method}")
        given = sorted(k for k, v in kwargs.items() if v is not None or k not in ("out", "dtype"))
        if given:  # (a dtype= too: the recorded op computes in its operands' type)
            raise _fail(f"numpy.{ufunc.__name__} with arguments {given}")
        if ufunc in _CONSTANT_UFUNCS:  # piecewise-constant results: no gradient flows through them
            return ufunc(*[_data(a) for a in inputs])
        impl = _UFUNCS.get(ufunc.__name__)
        if impl is None:
            raise _fail(f"numpy.{ufunc.__name__}")
        return _wrap(impl(*[_tensor(a) for a in inputs]))

    def __array_function__(self, func, types, args, kwargs):
        module = getattr(func, "__module__", "")
        table = _LINALG if module.startswith("numpy.linalg") else _FFT if module.startswith("numpy.fft") else _FUNCTIONS
        impl = table.get(func.__name__)
        if impl is None:
            raise _fail(f"{module.rsplit('._', 1)[0] or 'numpy'}.{func.__name__}")
        return impl(*args, **kwargs)

    # ------------------------------------------------------------ operators
    def __add__(self, o):
        return _binary("add", self, o)

    def __radd__(self, o):
        return _binary("add", o, self)

    def __sub__(self, o):
        return _binary("sub", self, o)

    def __rsub__(self, o):
        return _binary("sub", o, self)

    def __mul__(self, o):
        return _binary("mul", self, o)

    def __rmul__(self, o):
        return _binary("mul", o, self)

    def __truediv__(self, o):
        return _binary("div", self, o)

    def __rtruediv__(self, o):
        return _binary("div", o, self)

    def __pow__(self, o):
        return _binary("pow", self, o)

    def __rpow__(self, o):
        return _binary("pow", o, self)

    def __matmul__(self, o):
        return _binary("matmul", self, o)

    def __rmatmul__(self, o):
        return _binary("matmul", o, self)

    # ``g += x`` rebinds g to a new recorded array (a formula never relies on aliasing for these)
    __iadd__, __isub__, __imul__, __itruediv__ = __add__, __sub__, __mul__, __truediv__

    def __neg__(self):
        return RecordedArray(-self.t)

    def __pos__(self):
        return self

    def __abs__(self):
        return RecordedArray(abs(self.t))

    def __eq__(self, o):  # type: ignore[override]
        return self.t._data == _data(o)

    def __ne__(self, o):  # type: ignore[override]
        return self.t._data != _data(o)

    def __lt__(self, o):
        return self.t._data < _data(o)

    def __le__(self, o):
        return self.t._data <= _data(o)

    def __gt__(self, o):
        return self.t._data > _data(o)

    def __ge__(self, o):
        return self.t._data >= _data(o)

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------ indexing
    def __getitem__(self, index):
        return RecordedArray(self.t[_index(index)])

    def __setitem__(self, index, value) -> None:
        # Functional update: the formula's buffer becomes a new recorded tensor (clone, then write).
        from .._tensor import Tensor

        value = _tensor(value)
        spread = getattr(type(value), "_spread", None)
        if spread is not None and type(self.t) is Tensor:  # a batched cotangent's values: one buffer per example
            out = spread(value, self.t)
        else:
            out = self.t.clone()
            if type(value) is Tensor and value._data.dtype != out._data.dtype:
                # (NumPy's write casts the values to the buffer's dtype; an index_put refuses another dtype, as
                # PyTorch's)
                value = value.to(out.dtype)
        out[_index(index)] = value
        self.t = out

    # ------------------------------------------------------------ array methods
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        t = self.t if dtype is None else self.t.to(_np_dtype_to_ember(dtype))
        if axis is None or _no_axes(axis):
            r = t.sum() if axis is None else t
            return RecordedArray(r.reshape((1,) * self.ndim) if keepdims and axis is None else r)
        return RecordedArray(t.sum(dim=_dims(axis), keepdim=keepdims))

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        if _no_axes(axis):
            return RecordedArray(self.t)
        if axis is None:
            r = self.t.mean()
            return RecordedArray(r.reshape((1,) * self.ndim) if keepdims else r)
        return RecordedArray(self.t.mean(dim=_dims(axis), keepdim=keepdims))

    def max(self, axis=None, out=None, keepdims=False):
        return _extreme(self, "amax", axis, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return _extreme(self, "amin", axis, keepdims)

    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return RecordedArray(self.t.reshape(tuple(shape)))

    def transpose(self, *axes):
        if not axes or (len(axes) == 1 and axes[0] is None):  # (not ``== (None,)``: an array of axes has no truth)
            axes = tuple(range(self.ndim - 1, -1, -1))
        elif len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0])
        return RecordedArray(self.t.permute(axes))

    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        return RecordedArray(self.t.transpose(-1, -2))

    def swapaxes(self, a: int, b: int):
        return RecordedArray(self.t.transpose(a, b))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if xp.dtype(dtype) == self.dtype:
            return self
        return RecordedArray(self.t.to(_np_dtype_to_ember(dtype)))

    def copy(self, order="C"):
        # a new stand-in for the same tensor: a formula's later ``__setitem__`` on the copy (which clones)
        # then leaves the original alone
        return RecordedArray(self.t)

    def ravel(self, order="C"):
        return RecordedArray(self.t.reshape(-1))

    flatten = ravel

    def squeeze(self, axis=None):
        if axis is None:
            return RecordedArray(self.t.squeeze())
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        t = self.t
        for a in sorted((a % self.ndim for a in axes), reverse=True):
            t = t.squeeze(a)
        return RecordedArray(t)

    def conj(self):
        return RecordedArray(self.t.conj()) if self.dtype.kind == "c" else self

    conjugate = conj

    @property
    def real(self):
        return RecordedArray(_E().real(self.t)) if self.dtype.kind == "c" else self

    @property
    def imag(self):
        return RecordedArray(_E().imag(self.t))

    def clip(self, a_min=None, a_max=None):
        return RecordedArray(self.t.clamp(_data(a_min), _data(a_max)))

    def dot(self, other):
        return _binary("matmul", self, other)


def _no_axes(axis) -> bool:
    """Whether ``axis`` is NumPy's empty sequence of axes: a reduction over none, each element its own result, where
    PyTorch's (and ember's) ``dim=()`` reduces over every dim."""
    return axis is not None and xp.size(axis) == 0


def _extreme(a: RecordedArray, name: str, axis, keepdims: bool) -> RecordedArray:
    if _no_axes(axis):
        return RecordedArray(a.t)
    fn = getattr(_E(), name)
    if axis is None:
        r = fn(a.t.reshape(-1), dim=0)
        return RecordedArray(r.reshape((1,) * a.ndim) if keepdims else r)
    return RecordedArray(fn(a.t, dim=_dims(axis), keepdim=keepdims))


def _index(index):
    """An index for an ember tensor: recorded arrays inside it become their (constant) values."""
    if type(index) is tuple:
        return tuple(_data(i) for i in index)
    return _data(index)


def _binary(name: str, a, b):
    return _wrap(getattr(_E(), name)(_tensor(a), _tensor(b)))


def _ufunc_at(ufunc, target, index, values=None):
    """``numpy.add.at(buffer, index, values)``: scatter-add, recorded; ``buffer`` must be a recorded array
    (a formula builds it with ``zeros_like`` or copies a recorded one), since a plain array cannot hold a recorded
    result. ``numpy.multiply.at`` with one integer array per dimension: a product scatter (``_multiply_at``)."""
    if ufunc not in (xp.add, xp.multiply) or type(target) is not RecordedArray:
        raise _fail(f"numpy.{ufunc.__name__}.at into a plain array")
    if ufunc is xp.multiply:
        _multiply_at(target, index, values)
        return
    from ..ops.index_update import index_put_

    out = target.t.clone()
    values = _tensor(values)
    if hasattr(values, "_data") and values._data.dtype != out._data.dtype:
        # (numpy.add.at casts the values to the buffer's dtype; index_put_ refuses another dtype, as PyTorch's)
        values = values.to(out.dtype)
    # (index_put_ takes a tuple of tensors, as PyTorch's: the index arrays become constant tensors)
    indices = tuple(_tensor(i) for i in (_index(index) if isinstance(index, tuple) else (_data(index),)))
    index_put_(out, indices, values, accumulate=True)  # (the function: a formula's index may hold slices)
    target.t = out


def _multiply_at(target, index, values) -> None:
    """``numpy.multiply.at(buffer, index, values)`` recorded: ``scatter_reduce(..., "prod")`` of the flattened
    buffer at the flat positions the index names (repeated positions multiply again, as ``multiply.at``). The index
    must be one integer array per dimension (broadcast together)."""
    index = _index(index) if type(index) is tuple else (_data(index),)
    if len(index) != target.ndim or any(not hasattr(i, "dtype") or i.dtype.kind not in "iu" for i in index):
        raise _fail("numpy.multiply.at with an index other than one integer array per dimension")
    positions = xp.ravel_multi_index(xp.broadcast_arrays(*index), target.shape)
    E = _E()
    flat_values = _tensor(values).expand(positions.shape).reshape(-1)
    where = E.tensor(positions.reshape(-1).astype(xp.int64))
    target.t = target.t.reshape(-1).scatter_reduce(0, where, flat_values, "prod").reshape(target.shape)


# ---------------------------------------------------------------- ufuncs and their ember ops
def _unary(name: str) -> Callable:
    return lambda x: getattr(_E(), name)(x)


_UFUNCS: dict[str, Callable] = {
    "add": lambda a, b: _E().add(a, b),
    "subtract": lambda a, b: _E().sub(a, b),
    "multiply": lambda a, b: _E().mul(a, b),
    "divide": lambda a, b: _E().div(a, b),
    "true_divide": lambda a, b: _E().div(a, b),
    "power": lambda a, b: _E().pow(a, b),
    "float_power": lambda a, b: _E().pow(a, b),
    "matmul": lambda a, b: _E().matmul(a, b),
    "maximum": lambda a, b: _E().maximum(*_both_tensors(a, b)),
    "minimum": lambda a, b: _E().minimum(*_both_tensors(a, b)),
    "fmax": lambda a, b: _E().fmax(*_both_tensors(a, b)),
    "fmin": lambda a, b: _E().fmin(*_both_tensors(a, b)),
    "arctan2": lambda a, b: _E().atan2(*_both_tensors(a, b)),
    "hypot": lambda a, b: _E().hypot(*_both_tensors(a, b)),
    "logaddexp": lambda a, b: _E().logaddexp(*_both_tensors(a, b)),
    "remainder": lambda a, b: _E().remainder(a, b),
    "fmod": lambda a, b: _E().fmod(a, b),
    "negative": lambda x: -x,
    "positive": lambda x: x,
    "square": lambda x: x * x,
    "reciprocal": _unary("reciprocal"),
    "absolute": _unary("abs"),
    "conjugate": _unary("conj"),
    "arcsin": _unary("asin"),
    "arccos": _unary("acos"),
    "arctan": _unary("atan"),
    "arcsinh": _unary("asinh"),
    "arccosh": _unary("acosh"),
    "arctanh": _unary("atanh"),
}
for _name in ("exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh",
              "tanh"):
    _UFUNCS[_name] = _unary(_name)
_UFUNCS["cbrt"] = lambda x: _E().sign(x) * _E().abs(x) ** (1 / 3)  # (PyTorch has no cbrt; real for x < 0 too)

_CONSTANT_UFUNCS = frozenset(
    getattr(xp, n) for n in (
        "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and", "logical_or",
        "logical_not", "logical_xor", "isnan", "isinf", "isfinite", "sign", "signbit", "floor", "ceil", "trunc",
        "rint", "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
    )
)


def _both_tensors(a, b):
    """Ops such as maximum take two tensors: a Python scalar operand becomes a 0-d tensor of the other's dtype."""
    from .._tensor import Tensor

    if not isinstance(a, Tensor):
        a = Tensor._make(xp.asarray(a, dtype=_array(b).dtype))
    if not isinstance(b, Tensor):
        b = Tensor._make(xp.asarray(b, dtype=_array(a).dtype))
    return a, b


# ---------------------------------------------------------------- NumPy functions and their ember ops
def _like(value, a, dtype=None, shape=None):
    """``zeros_like``-style constants: a recorded array (so a formula may write recorded values into it)."""
    from .._tensor import Tensor

    shape = _meta(a).shape if shape is None else shape
    return RecordedArray(Tensor._make(xp.full(shape, value, dtype=_meta(a).dtype if dtype is None else dtype)))


def _where(cond, a=None, b=None):
    if a is None:
        return xp.where(_data(cond))
    a, b = _tensor(a), _tensor(b)
    return _wrap(_E().where(_tensor(xp.asarray(_data(cond), dtype=bool)), *_both_tensors(a, b)))


def _einsum(subscripts, *operands, **kwargs):
    return _wrap(_E().einsum(subscripts, *[_tensor(o) for o in operands]))


def _concatenate(arrays, axis=0, **kwargs):
    return _wrap(_E().cat([_tensor(_as_recorded(a)) for a in arrays], dim=axis))


def _stack(arrays, axis=0, **kwargs):
    return _wrap(_E().stack([_tensor(_as_recorded(a)) for a in arrays], dim=axis))


def _as_recorded(a):
    from .._tensor import Tensor

    return a if type(a) is RecordedArray else RecordedArray(Tensor._make(xp.asarray(a)))


def _expand_dims(a, axis):
    t = _tensor(a)
    for ax in sorted(axis if isinstance(axis, (tuple, list)) else (axis,)):
        t = t.unsqueeze(ax)
    return _wrap(t)


def _moveaxis(a, source, destination):
    return _wrap(_E().movedim(_tensor(a), source, destination))


def _tensordot(a, b, axes=2):
    return _wrap(_E().tensordot(_tensor(a), _tensor(b), dims=axes))


def _take_along_axis(a, indices, axis):
    return _wrap(_E().gather(_tensor(a), axis, _tensor(xp.asarray(_data(indices)))))


def _take(a, indices, axis=None, **kwargs):
    idx = _tensor(xp.asarray(_data(indices)))
    if axis is None:
        return _wrap(_tensor(a).reshape(-1)[idx])
    return _wrap(_E().index_select(_tensor(a), axis, idx.reshape(-1)).reshape(
        _meta(a).shape[:axis] + idx.shape + _meta(a).shape[axis + 1:]))


def _pad(a, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise _fail(f"numpy.pad(mode={mode!r})")
    n = _meta(a).ndim
    widths = xp.broadcast_to(xp.asarray(pad_width, dtype=int), (n, 2))
    flat = [int(v) for pair in widths[::-1] for v in pair]  # PyTorch's order: last dimension first
    return _wrap(_E().nn.functional.pad(_tensor(a), flat, value=constant_values))


def _broadcast_to(a, shape, subok=False):
    shape = (shape,) if xp.ndim(shape) == 0 else tuple(shape)  # (NumPy's shape: an int or a sequence, maybe ())
    return _wrap(_tensor(_as_recorded(a)).expand(shape))


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return _as_recorded(a).sum(axis=axis, dtype=dtype, keepdims=keepdims)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return _as_recorded(a).mean(axis=axis, keepdims=keepdims)


def _clip(a, a_min=None, a_max=None, **kw):
    return _as_recorded(a).clip(a_min, a_max)


def _flip(a, axis=None):
    dims = tuple(range(_meta(a).ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    return _wrap(_E().flip(_tensor(a), dims))


def _var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    if _no_axes(axis):  # (each element its own mean: zeros over 1 - ddof, NaN from ddof 1 on, as NumPy's)
        t = _tensor(a)
        return _wrap((t - t) ** 2 / (1 - ddof))
    return _wrap(_E().var(_tensor(a), dim=_dims(axis), correction=ddof, keepdim=keepdims))


def _cumsum(a, axis=None, dtype=None, out=None):
    t = _tensor(a)
    return _wrap(_E().cumsum(t.reshape(-1) if axis is None else t, dim=0 if axis is None else axis))


def _outer(a, b, out=None):
    return _binary("outer", _as_recorded(a).ravel(), _as_recorded(b).ravel())


def _repeat(a, repeats, axis=None):
    t = _tensor(a)
    counts = _data(repeats)
    if not isinstance(counts, (int, xp.integer)):  # per-element counts: repeat_interleave takes them as a tensor
        counts = _tensor(xp.asarray(counts, dtype=xp.int64))
    return _wrap(_E().repeat_interleave(t.reshape(-1) if axis is None else t, counts, dim=axis or 0))


def _tril(m, k=0):
    return _wrap(_E().tril(_tensor(m), k))


def _triu(m, k=0):
    return _wrap(_E().triu(_tensor(m), k))


def _cumprod(a, axis=None, dtype=None, out=None):
    t = _tensor(a)
    return _wrap(_E().cumprod(t.reshape(-1) if axis is None else t, dim=0 if axis is None else axis))


def _put_along_axis(arr, indices, values, axis):
    """``numpy.put_along_axis`` into a recorded buffer (made by ``zeros_like``): a functional scatter."""
    if type(arr) is not RecordedArray:
        raise _fail("numpy.put_along_axis into a plain array")
    idx = _tensor(xp.asarray(_data(indices)))
    arr.t = _E().scatter(arr.t, axis, idx, _tensor(_as_recorded(values)).expand(idx.shape))


def _roll(a, shift, axis=None):
    return _wrap(_E().roll(_tensor(_as_recorded(a)), shift, axis))


def _split(a, indices_or_sections, axis=0):
    """numpy.split / array_split: PyTorch's tensor_split has their semantics (sections or split indices)."""
    sections = _data(indices_or_sections)
    if not isinstance(sections, int):
        sections = [int(i) for i in sections]
    return [_wrap(t) for t in _E().tensor_split(_tensor(_as_recorded(a)), sections, dim=axis)]


def _diagonal(a, offset=0, axis1=0, axis2=1):
    return _wrap(_E().diagonal(_tensor(_as_recorded(a)), offset, axis1, axis2))


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    dim = -1 if axis is None else axis
    return _wrap(_E().linalg.cross(_tensor(_as_recorded(a)), _tensor(_as_recorded(b)), dim=dim))


def _real(a):
    return a.real if type(a) is RecordedArray else xp.real(a)


_FUNCTIONS: dict[str, Callable] = {
    "zeros_like": lambda a, dtype=None, order="K", subok=True, shape=None, **kw: _like(0, a, dtype, shape),
    "ones_like": lambda a, dtype=None, order="K", subok=True, shape=None, **kw: _like(1, a, dtype, shape),
    "empty_like": lambda a, dtype=None, order="K", subok=True, shape=None, **kw: _like(0, a, dtype, shape),
    "full_like": lambda a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw:
        _like(fill_value, a, dtype, shape),
    "where": _where,
    "einsum": _einsum,
    "concatenate": _concatenate,
    "stack": _stack,
    "expand_dims": _expand_dims,
    "moveaxis": _moveaxis,
    "tensordot": _tensordot,
    "take_along_axis": _take_along_axis,
    "take": _take,
    "pad": _pad,
    "broadcast_to": _broadcast_to,
    "sum": _sum,
    "mean": _mean,
    "clip": _clip,
    "flip": _flip,
    "var": _var,
    "cumsum": _cumsum,
    "outer": _outer,
    "repeat": _repeat,
    "tril": _tril,
    "triu": _triu,
    "real": _real,
    "imag": lambda a: a.imag,
    "conj": lambda a: _as_recorded(a).conj(),
    "conjugate": lambda a: _as_recorded(a).conj(),
    "reshape": lambda a, shape=None, order="C", **kw: _as_recorded(a).reshape(kw.get("newshape", shape)),
    "transpose": lambda a, axes=None: _as_recorded(a).transpose(axes),
    "swapaxes": lambda a, a1, a2: _as_recorded(a).swapaxes(a1, a2),
    "squeeze": lambda a, axis=None: _as_recorded(a).squeeze(axis),
    "ravel": lambda a, order="C": _as_recorded(a).ravel(),
    "copy": lambda a, order="K", subok=False: _as_recorded(a).copy(),
    "ascontiguousarray": lambda a, dtype=None, **kw: a,
    "amax": lambda a, axis=None, out=None, keepdims=False, **kw: _extreme(_as_recorded(a), "amax", axis, keepdims),
    "max": lambda a, axis=None, out=None, keepdims=False, **kw: _extreme(_as_recorded(a), "amax", axis, keepdims),
    "amin": lambda a, axis=None, out=None, keepdims=False, **kw: _extreme(_as_recorded(a), "amin", axis, keepdims),
    "min": lambda a, axis=None, out=None, keepdims=False, **kw: _extreme(_as_recorded(a), "amin", axis, keepdims),
    "dot": lambda a, b, out=None: _binary("matmul", a, b),
    "shape": lambda a: _meta(a).shape,
    "ndim": lambda a: _meta(a).ndim,
    "size": lambda a, axis=None: _meta(a).size if axis is None else _meta(a).shape[axis],
    "result_type": lambda *args: xp.result_type(*[_meta(a) for a in args]),
    "may_share_memory": lambda a, b, max_work=None: False,
    "shares_memory": lambda a, b, max_work=None: False,
    "iscomplexobj": lambda x: _meta(x).dtype.kind == "c",
    "isrealobj": lambda x: _meta(x).dtype.kind != "c",
    "cumprod": _cumprod,
    "put_along_axis": _put_along_axis,
    "roll": _roll,
    "split": _split,
    "array_split": _split,
    "diagonal": _diagonal,
    "cross": _cross,
}


# numpy.linalg's functions (a table of their own: names such as ``norm`` differ from the top level's)
def _linalg(name: str) -> Callable:
    return lambda *args: _wrap(getattr(_E().linalg, name)(*[_tensor(_as_recorded(a)) for a in args]))


def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    u, s, vh = _E().linalg.svd(_tensor(_as_recorded(a)), full_matrices=full_matrices)
    return (RecordedArray(u), RecordedArray(s), RecordedArray(vh)) if compute_uv else RecordedArray(s)


_LINALG: dict[str, Callable] = {
    "solve": _linalg("solve"),
    "inv": _linalg("inv"),
    "det": _linalg("det"),
    "svd": _svd,
}


# numpy.fft's functions and ember.fft's
def _fft(name: str, multi: bool = False) -> Callable:
    def run(a, n=None, axis=-1, norm=None, s=None, axes=None):
        fn = getattr(_E().fft, name)
        if multi:
            return _wrap(fn(_tensor(_as_recorded(a)), s=s, dim=axes, norm=norm))
        return _wrap(fn(_tensor(_as_recorded(a)), n=n, dim=axis, norm=norm))
    return run


_FFT: dict[str, Callable] = {
    "fft": _fft("fft"),
    "ifft": _fft("ifft"),
    "rfft": _fft("rfft"),
    "irfft": _fft("irfft"),
    "fftn": _fft("fftn", multi=True),
    "ifftn": _fft("ifftn", multi=True),
}


# ``numpy.<ufunc>.accumulate(a, axis)`` and its ember op
_ACCUMULATE: dict[str, Callable] = {
    "logaddexp": lambda a, axis: _E().logcumsumexp(a, dim=axis),
}


# ---------------------------------------------------------------- running a node under create_graph
def recorded_saved(node, low=None) -> tuple:
    """``node.saved`` with every saved input and output array swapped for a recorded tensor of the graph: an
    input's through the input's own edge, an output's through ``node`` itself (so a formula that reads
    ``exp(x)`` differentiates through ``exp`` again), an input that needs no gradient as a constant. ``low``: the
    half dtype of a node computed in float32 (lowp.py), whose saved float32 copies of its inputs are swapped for
    the inputs themselves, in that dtype."""
    from .._sparse import SparseCOO
    from . import forward_ad, graph

    saved = node.saved
    out = list(saved)
    entries = node._saved_versions
    # the positions with an entry of their own: another entry of the same array (x * x) does not take them
    own = {e[3][1] for e in entries}
    for counter, _version, _array, (source, k) in entries:
        if k is None:  # a tensor only version-checked (Node.check_versions_of)
            continue
        value = saved[k]
        # integers and masks carry no gradient; a sparse tensor takes no part in the graph (read back as itself)
        if type(value) is RecordedArray or type(value) is SparseCOO or value.dtype.kind in "biu":
            continue
        if low is not None and _array.dtype == low and value.dtype == xp.float32:
            value = _array  # (the input, not forward's float32 copy of it)
        t = graph.entry_tensor(node, value, source, counter)
        if graph._dual_level is not None:
            forward_ad.carry_saved_tangent(value, t)
        recorded = RecordedArray(t)
        out[k] = recorded
        for j, v in enumerate(saved):
            if v is value and j not in own:
                out[j] = recorded
    return tuple(out)


def run_recorded(node, grads: list):
    """Run ``node``'s backward formula so that it records itself (grad mode is on during create_graph); where
    PyTorch's derivative of the node is one op of its own, its recorded steps as one node named as PyTorch's
    (formula_node.py)."""
    from .formula_node import DOUBLE_BACKWARD, gathered

    name = DOUBLE_BACKWARD.get(node.name())
    if name is None:
        return _run_recorded(node, grads)
    from .graph import _next_seq

    mark = _next_seq()
    return gathered(node, name, grads, _run_recorded(node, grads), mark)


def _run_recorded(node, grads: list):
    with running(node.name()):
        low = node.half_dtype  # a half-precision op computed in float32 (lowp.py)
        if low is not None and not node.rerun_for_higher_order:
            return _run_in_half(node, grads, low)
        if node.rerun_for_higher_order:
            node.check_rerun_versions()
            params = node._rerun[1]
            fresh = type(node)()
            fresh.needs_input_grad = node.needs_input_grad
            fresh.next_edges = node.next_edges
            inputs = node.rerun_inputs()
            if low is None and node.half_inputs is not None:  # half inputs through float32 ones (a bfloat16 batch
                # through float32 norm parameters): in float32 as forward, each gradient in its input's dtype
                half, at = node.half_inputs
                fresh.forward(*[_widened(a, half) for a in inputs], **params)
                results = fresh.backward(*[_widened(g, half) for g in grads])
                results = lowp.narrow_at(results, half, at, rounded=_narrowed)
            elif low is None:
                fresh.forward(*inputs, **params)
                results = fresh.backward(*grads)
            else:  # in float32, as the first backward: the gradients and inputs cast up (recorded), the results
                from . import graph  # rounded back by the formula's last ops (``_rounded_back``)

                mark = graph._next_seq()
                wide = [_widened(g, low) for g in grads]
                fresh.forward(*[_widened(a, low) for a in inputs], **params)
                results = fresh.backward(*wide)
                results = _narrowed(results, low) if node.upcasts_input else \
                    _rounded_back(results, low, grads, wide, mark)
            return _still_checked(node, grads, _reading_inputs(node, results))
        saved = node.saved
        if node._saved_versions and isinstance(saved, (tuple, list)):
            node.saved = recorded_saved(node)
        try:
            return _still_checked(node, grads, _reading_inputs(node, _narrowed(node.backward(*grads), low)))
        finally:
            node.saved = saved


def _run_in_half(node, grads: list, low):
    """``node``'s formula run recorded in its half dtype ``low``, as PyTorch's formulas run in the tensors' dtype:
    on the half-precision gradients and on the inputs it saved (not forward's float32 copies of them), each
    recorded op computing in float32 where its kernel does, so the gradients' nodes are the formula's own (an
    ``mm``'s gradient is MmBackward0, not a cast back). A float32 array the node saved that is no input (an output
    before rounding, an intermediate) is not the graph's: its terms would be lost, so that is refused, unless it is
    a constant of the formula (``Node.constant_saved``: a piecewise-linear activation's f')."""
    saved = node.saved
    if isinstance(saved, (tuple, list)):
        swapped = recorded_saved(node, low) if node._saved_versions else saved
        constants = node.constant_saved
        for k, a in enumerate(swapped):
            if type(a) is xp.ndarray and a.dtype == xp.float32 and k not in constants:
                raise _fail("float32 copies of its half-precision results (make the inputs float32 to "
                            "differentiate twice)")
        node.saved = swapped
    try:
        return _still_checked(node, grads, _reading_inputs(node, _narrowed(node.backward(*grads), low)))
    finally:
        node.saved = saved


def _reading_inputs(node, results):
    """``results``, each depending (with derivative zero) on the inputs at ``node.formula_reads`` that require
    grad, where it does not depend on anything recorded. PyTorch writes such a formula with differentiable ops
    of those saved inputs (``grad * x.sgn()`` for the 1-norm, a max pool's backward taking ``self``, nll_loss's):
    its result requires grad, a second backward gives zeros (and checks what that node saved), where ember's
    formula computes the same values from constants (a sign, the argmax indices). Where PyTorch's formula is one op
    of its own (``DOUBLE_BACKWARD``: a max pool's ``max_pool2d_with_indices_backward(grad, self, ...)``), its
    derivative with respect to those inputs is zeros also when the result depends on a recorded gradient: the
    term is added then too (inside the one node ``gathered`` makes of the formula, so its name stays PyTorch's)."""
    reads = getattr(node, "formula_reads", ())
    edges = [(j, node.next_edges[j]) for j in reads if node.next_edges[j] is not None]
    if not edges:
        return results
    from .._dtype import np_kind  # (bfloat16's NumPy kind is "V")
    from .._tensor import Tensor
    from .formula_node import DOUBLE_BACKWARD
    from .graph import edge_tensor

    one_op = node.name() in DOUBLE_BACKWARD
    single = not isinstance(results, (tuple, list))
    out = []
    for r in (results,) if single else results:
        if r is not None and (one_op or not (type(r) is RecordedArray and r.t.requires_grad)) and \
                np_kind(r.dtype) in "fc":
            t = r.t if type(r) is RecordedArray else Tensor._make(xp.asarray(r))
            for j, edge in edges:  # a stand-in of the input, in the graph at its edge, times 0
                t = t + edge_tensor(xp.zeros(node.input_shapes[j], dtype=r.dtype), edge) * 0
            r = RecordedArray(t)
        out.append(r)
    return out[0] if single else type(results)(out)


def _widened(a, low):
    """A recorded array of the half dtype ``low`` cast to float32 (recorded); anything else as it is."""
    return a.astype(xp.float32) if type(a) is RecordedArray and a.dtype == low else a


def _narrowed(results, low):
    """A formula's recorded float32 results cast back to the half dtype ``low`` (None: as they are)."""
    if low is None:
        return results
    if isinstance(results, (tuple, list)):
        return type(results)(_narrowed(r, low) for r in results)
    return results.astype(low) if type(results) is RecordedArray and results.dtype == xp.float32 else results


def _rounded_back(results, low, grads: list, wide: list, mark: int):
    """A half-precision op's formula results, computed in float32 (``wide``: its gradients ``grads`` cast up), in
    the half dtype ``low``, as PyTorch's double-backward kernels compute in float32 and round their result once: each
    result made by an op of this formula (a node numbered after ``mark``) has its values rounded in place, so the
    gradient's node is the formula's last op (GeluBackward's MulBackward0, layer_norm's ViewBackward0) and no
    ToCopyBackward0 after it; its node takes the half-precision gradient into its float32 formula as PyTorch's
    mixed-dtype kernels do. A gradient passed through is the one given; any other result is cast (recorded)."""
    if isinstance(results, (tuple, list)):
        return type(results)(_rounded_back(r, low, grads, wide, mark) for r in results)
    if type(results) is not RecordedArray or results.dtype != xp.float32:
        return results
    for g, w in zip(grads, wide):
        if type(w) is RecordedArray and results.t is w.t:
            return g
    _round_in_place(results.t, low, mark)
    return results.astype(low)  # (no cast where the values were rounded in place: the dtype is ``low`` then)


def _round_in_place(t, low, mark: int) -> None:
    """Round the float32 values of ``t``, made by an op numbered after ``mark``, to ``low`` in place (a view's
    with its base's, when that base was made so too and is contiguous); nothing where it cannot (``t`` is then
    still float32)."""
    from . import lowp

    fn = t._grad_fn
    if fn is None or fn.seq < mark:
        return
    base = t._base
    if base is None:
        t._data = lowp.narrow(t._data, low)
        return
    wide, whole = t._data, base._data
    made = base._grad_fn
    if made is None or made.seq < mark or whole.dtype != xp.float32 or not whole.flags.c_contiguous:
        return
    if not wide.size:  # an empty view holds no values (nor shares memory by NumPy's reckoning): the dtype only
        base._data = lowp.narrow(whole, low)
        t._data = lowp.narrow(wide, low)
        return
    offset = wide.__array_interface__["data"][0] - whole.__array_interface__["data"][0]
    if not xp.may_share_memory(wide, whole) or offset < 0 or offset % 4 or any(s % 4 for s in wide.strides):
        return
    rounded = base._data = lowp.narrow(whole, low)
    t._data = xp.ndarray(wide.shape, low, buffer=rounded, offset=offset // 2,
                         strides=tuple(s // 2 for s in wide.strides))


def _still_checked(node, grads, results):
    """``results``, the recorded gradients of ``node``, whose nodes also check the versions ``node`` checks without
    handing the tensors to its formula (``Node.check_versions_of``: a target, class weights, an in-place
    activation's result), as PyTorch's double-backward node saves them again: such a tensor changed in place after
    this backward, before the gradient is differentiated, is its error. (A gradient passed through unchanged keeps
    its own node.)"""
    extra = tuple((c, c[0], a, source) for c, _v, a, source in node._saved_versions if source[1] is None)
    if not extra:
        return results
    for r in results if isinstance(results, (tuple, list)) else (results,):
        if type(r) is RecordedArray and r.t.grad_fn is not None and not any(r is g for g in grads):
            fn = r.t.grad_fn
            fn._saved_versions = tuple(fn._saved_versions) + extra
    return results


def hook_argument(grad):
    """A gradient as a tensor hook receives it (the recorded tensor itself under create_graph)."""
    from .._sparse import as_tensor

    return grad.t if type(grad) is RecordedArray else as_tensor(grad)


def check_hook_value(hook, was, new) -> None:
    """PyTorch's checks on a gradient a hook returned in place of ``was`` (both tensors): the same size and the
    same dtype, or RuntimeError naming the hook."""
    if tuple(new.shape) != tuple(was.shape):
        raise RuntimeError(f"hook '{getattr(hook, '__name__', type(hook).__name__)}' has changed the size of value")
    if new.dtype != was.dtype:
        raise RuntimeError(f"hook '{getattr(hook, '__name__', type(hook).__name__)}' has changed the type of value "
                           f"(was {was.type()} got {new.type()})")


def hooked_grad(hook, grad):
    """``grad`` (in the walk's form; None where there is none) after the tensor hook ``hook``, which gets it (or
    None) and may return a replacement; as PyTorch, a None gradient cannot be replaced by a tensor."""
    was = None if grad is None else hook_argument(grad)
    replaced = hook(was)
    if replaced is None:
        return grad
    if grad is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    return hook_result(hook, replaced, was, grad)


def hook_result(hook, replaced, was, grad):
    """What ``hook`` returned in place of ``was`` (``grad`` as the hook received it), checked, back in the form
    the walk carries (recorded under create_graph)."""
    check_hook_value(hook, was, replaced)
    return RecordedArray(replaced) if type(grad) is RecordedArray else replaced._data


def accumulate_recorded(t, grad: RecordedArray) -> None:
    """``t.grad += grad`` under create_graph: ``.grad`` becomes (or grows by, out of place, as PyTorch's
    AccumulateGrad in grad mode) the recorded gradient tensor, which can be differentiated again. The gradient
    store is bypassed: its buffers hold plain arrays."""
    current = t._grad
    t._grad = _laid_out_as_leaf(t, grad.t) if current is None else current + grad.t


def _laid_out_as_leaf(t, g):
    """A leaf's first gradient under create_graph, as PyTorch's AccumulateGrad stores it (``clone_obey_contract``):
    a copy laid out as the leaf, recorded (``empty_strided(...).copy_(grad)``: CopyBackwards, its edges none and
    the gradient's), or a contiguous clone where the leaf is not dense (a transposed gradient too); a retained
    non-leaf's is a contiguous clone, as PyTorch's ``retain_grad`` hook makes it."""
    from .._memory_format import contiguous_format
    from .._out import _dense

    if t.grad_fn is None and _dense(t._data):  # (a retained non-leaf's: the hook's clone, CloneBackward0)
        return g.new_empty_strided(tuple(t._data.shape), t.stride()).copy_(g)
    return g.clone(memory_format=contiguous_format)


def reading(result, *saved):
    """``result``, a gradient a formula computed, whose node (when recorded, under create_graph) also checks the
    versions of the recorded ``saved`` arrays: where PyTorch writes the formula as one op that saves them
    (``tanh_backward(grad, result)``, ``threshold_backward``), changing one in place before the gradient is
    differentiated again is its error, though ember's formula may reach the gradient through other products."""
    if type(result) is RecordedArray and result.t.grad_fn is not None:
        result.t.grad_fn.check_versions_of(*(s.t for s in saved if type(s) is RecordedArray))
    return result


def value_of(a):
    """The plain values of ``a`` (a recorded stand-in's array, not recorded), for what a formula uses only to
    choose (a step count, a branch): piecewise-constant choices have no derivative to record."""
    return a.t._data if type(a) is RecordedArray else a
