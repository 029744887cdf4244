"""PyTorch's memory formats (``torch.channels_last`` ...) and the layouts they name.

``x.contiguous(memory_format=torch.channels_last)``, ``x.clone(memory_format=...)``,
``x.to(memory_format=...)``, ``empty(..., memory_format=...)`` and ``empty_like(x, memory_format=...)`` lay the
result out as PyTorch's (channels fastest: strides ``(H*W*C, 1, W*C, C)``; ``channels_last_3d`` likewise for 5
dims), with the same values; the ops that keep an input's layout (``empty_like``, ``clone``, elementwise results)
keep it. The format changes speed in PyTorch, not results; in ember it changes the strides reported. (A meta
tensor keeps its layout.)
"""

from __future__ import annotations

from ._backend import xp
from ._shown_name import package_name


class memory_format:
    """A tensor memory layout name, like ``torch.memory_format``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{package_name()}.{self.name}"

    def __reduce__(self):
        return self.name


def strides_in_channels_last_order(a, fmt: memory_format) -> bool:
    """Whether array ``a``'s strides are ``fmt``'s (channels_last: 4 dims, channels_last_3d: 5) without gaps:
    channels fastest, then the spatial dims from last to first, then the batch (size-1 dims are free)."""
    if a.ndim != (4 if fmt.name == "channels_last" else 5):
        return False
    expected = 1
    for d in (1, *range(a.ndim - 1, 1, -1), 0):
        if a.shape[d] != 1:
            if a.strides[d] != expected * a.itemsize:
                return False
            expected *= a.shape[d]
    return True


def channels_last_order(fmt: memory_format, ndim: int) -> list | None:
    """The dimensions from outermost to innermost in memory that ``fmt`` names for an array of ``ndim`` dimensions
    (channels_last: batch, the spatial dims, channels), None for a format that names no such order
    (contiguous, preserve); PyTorch's RuntimeError for a channels-last format of another rank."""
    if fmt is not channels_last and fmt is not channels_last_3d:
        return None
    rank = 4 if fmt is channels_last else 5
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    return [0, *range(2, ndim), 1]


def has_format_strides(a, fmt: memory_format) -> bool:
    """Whether array ``a``'s strides are exactly those ``fmt`` gives its shape (a size-1 dimension's too: PyTorch's
    ``to(memory_format=...)`` copies a tensor whose layout is only ambiguously the format's)."""
    order = channels_last_order(fmt, a.ndim) or list(range(a.ndim))
    step = a.itemsize
    for d in reversed(order):
        if a.strides[d] != step:
            return False
        step *= max(a.shape[d], 1)
    return True


def format_strides(shape, fmt: memory_format) -> list:
    """The strides, in elements, ``fmt`` gives a tensor of ``shape``, as PyTorch computes them: row-major for a
    format naming no order, a dimension of size 0 counted as 1; a channels-last format's counts it as 0
    (``empty(2, 0, 4, 5, memory_format=channels_last).stride()`` is (0, 1, 0, 0))."""
    order = channels_last_order(fmt, len(shape))
    floor = 1 if order is None else 0
    strides, step = [0] * len(shape), 1
    for d in reversed(order or range(len(shape))):
        strides[d] = step
        step *= max(shape[d], floor)
    return strides


def laid_out(a, fmt: memory_format):
    """A copy of array ``a`` laid out as ``fmt`` names: channels fastest for a channels-last format, row-major
    otherwise."""
    order = channels_last_order(fmt, a.ndim)
    if order is None:
        return a.copy()
    if not a.size:  # (no elements: NumPy's copy would have no strides to speak of)
        return empty_laid_out(a.shape, a.dtype, fmt)
    inverse = [order.index(d) for d in range(a.ndim)]
    return a.transpose(order).copy().transpose(inverse)


def empty_laid_out(shape, dtype, fmt: memory_format):
    """An uninitialised array of ``shape`` laid out as ``fmt`` names (``laid_out``)."""
    order = channels_last_order(fmt, len(shape))
    if order is None:
        return xp.empty(shape, dtype)
    if 0 in shape:  # (NumPy gives an empty array no strides: PyTorch's, set on an empty buffer)
        itemsize = xp.dtype(dtype).itemsize
        return xp.lib.stride_tricks.as_strided(xp.empty(0, dtype), tuple(shape),
                                               [s * itemsize for s in format_strides(shape, fmt)])
    inverse = [order.index(d) for d in range(len(shape))]
    return xp.empty([shape[d] for d in order], dtype).transpose(inverse)


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def suggest_memory_format(shape, strides) -> memory_format:
    """PyTorch's ``suggest_memory_format`` of a tensor of ``shape`` and element ``strides``: channels_last
    (channels_last_3d) where a 4-d (5-d) tensor's strides order its dimensions channels first, then the spatial ones
    from last to first, then the batch (gaps allowed; an ambiguous case, as a dimension of size 0, a zero channel
    stride or an N111 tensor, is row-major), else contiguous_format."""
    n = len(shape)
    if n not in (4, 5) or strides[1] == 0:
        return contiguous_format
    low = 0
    for d in (1, *range(n - 1, 1, -1), 0):
        if shape[d] == 0 or strides[d] < low or d == 0 and low == strides[1]:
            return contiguous_format
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return channels_last if n == 4 else channels_last_3d


def array_memory_format(a) -> memory_format:
    """``suggest_memory_format`` of a NumPy array (its byte strides in elements)."""
    return suggest_memory_format(a.shape, [s // a.itemsize for s in a.strides])

def concatenated_format(arrays, extra: bool = False) -> memory_format:
    """The memory format of PyTorch's ``cat`` of ``arrays``: their common suggested format, row-major where any
    is or two differ. ``extra``: each array seen with a dimension of size 1 and stride 1 appended (``stack`` at the
    last dimension concatenates so unsqueezed tensors)."""
    common = None
    for a in arrays:
        if a.ndim + extra not in (4, 5):  # (the common case: no channels-last format for this rank)
            return contiguous_format
        shape, strides = a.shape, [s // a.itemsize for s in a.strides]
        if extra:
            shape, strides = (*shape, 1), [*strides, 1]
        f = suggest_memory_format(shape, strides)
        if f is contiguous_format or common is not None and f is not common:
            return contiguous_format
        common = f
    return common


def empty_result(x, *others, dtype=None):
    """An uninitialised array of the broadcast shape of ``x`` and ``others`` (of ``dtype``, x's by default) in the
    memory order a ufunc gives their result, which is PyTorch's for an elementwise op: the operands' axis order,
    where an axis of stride 0 (a broadcast input, as ``expand`` makes) orders nothing. ``empty_like`` (and
    ``astype``, and ``array(x)``) sort such an axis innermost: relu of ``arange(n).expand(n, n)`` would be stored
    column by column, a result PyTorch makes contiguous."""
    if not others and (type(x) is not xp.ndarray or 0 not in x.strides):  # (the common case: empty_like's order)
        return xp.empty_like(x, dtype=dtype)
    arrays = (x, *others)
    it = xp.nditer((*arrays, None), flags=("zerosize_ok", "refs_ok"),
                   op_flags=(*(("readonly",),) * len(arrays), ("writeonly", "allocate")),
                   op_dtypes=(*(a.dtype for a in arrays), x.dtype if dtype is None else xp.dtype(dtype)))
    return it.operands[-1]


def via_float32(x, dtype):
    """``x`` ready for conversion to ``dtype``: float64 values (and 32- and 64-bit integers) headed for a half
    precision (float16, bfloat16) first rounded to float32, as PyTorch's conversion goes through float (a float64
    within float32's rounding of a halfway point between two half values lands on the other side of it than NumPy's
    one rounding puts it; so does an integer past 2**24 headed for bfloat16)."""
    if (x.dtype == xp.float64 or x.dtype.kind in "iu" and x.dtype.itemsize >= 4) and xp.dtype(dtype).itemsize == 2 \
            and xp.dtype(dtype).kind not in "iub":
        return x.astype(xp.float32)
    return x


def half_number(value, dtype):
    """A Python float ``value`` (or an int past 2**24) headed for ``dtype`` as PyTorch converts it: to float32 first
    where ``dtype`` is a half precision (float16, bfloat16), as ``via_float32``; NumPy's one rounding from the
    double puts a number just past a halfway point between two half values on the other side of it. Anything else
    is returned as it is."""
    if (value.__class__ is float or value.__class__ is int and 1 << 24 < abs(value) < 1 << 127) \
            and xp.dtype(dtype).itemsize == 2 and xp.dtype(dtype).kind not in "iub":
        return xp.float32(value)
    return value


def astype_result(x, dtype):
    """``x.astype(dtype)`` (a copy) laid out as ``empty_result`` lays out an elementwise result of ``x``: for the
    ops that compute from a converted copy of their input (casts, float64 kernels, ``tensor(x)``). float64 into a
    half precision goes through float32, as PyTorch's (``via_float32``)."""
    x = via_float32(x, dtype)
    if type(x) is not xp.ndarray:
        return x.astype(dtype)
    if 0 not in x.strides:
        from .autograd.lowp import converted

        return converted(x, xp.dtype(dtype))
    out = empty_result(x, dtype=dtype)
    out[...] = x
    return out
