"""Random sampling ops: multinomial, bernoulli, and other draws that take a tensor of parameters; the ranges
(and PyTorch's checks of them) of ``random_``.

Draws come from ember's generators (``ember.random``): multinomial, bernoulli and poisson draw PyTorch's numbers
for the same seed; binomial keeps NumPy's algorithm (on the same generator state). No gradient flows through a
sample (poisson's node, as PyTorch's, gives a zero one).
A meta tensor's sample is a meta tensor, and draws nothing (as PyTorch's meta kernels): its values are not checked.
"""

from __future__ import annotations

from .. import _dtype
from .. import _random_draws as draws
from .._backend import xp
from .._dtype import np_kind
from .._meta import is_meta, meta_array
from .._tensor import Tensor
from ..autograd.graph import Node, torch_named
from ..random import generator_of


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (non-negative weights, not necessarily
    summing to 1); ``input`` is 1-D (one distribution) or 2-D (one per row). Result: int64 of shape
    ``(num_samples,)`` or ``(rows, num_samples)``.

    Without replacement, each category is drawn at most once; once every category of non-zero weight
    has been drawn, the remaining draws are zero-weight categories, as in PyTorch.
    """
    w = input._data
    if w.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim (got shape {list(input.shape)})")
    if np_kind(w.dtype) != "f":
        name = _dtype.from_np(w.dtype).name.capitalize()
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {name}")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = w.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError(
            f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
            f"(n_sample={num_samples}, prob_dist.size(-1)={n})"
        )
    if is_meta(w):
        return Tensor._make(meta_array(w.shape[:-1] + (num_samples,), xp.int64))
    rows = w.reshape(-1, n)
    if rows.shape[0] == 0:
        return Tensor._make(xp.zeros(w.shape[:-1] + (num_samples,), dtype=xp.int64))
    as64 = rows.astype(xp.float64)
    if not xp.isfinite(as64).all() or (as64 < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (as64.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    out = draws.multinomial(generator_of(generator), rows, num_samples, replacement)  # rows keeps w's layout
    return Tensor._make(out.reshape(w.shape[:-1] + (num_samples,)))


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Draws of Binomial(count, prob), elementwise (count and prob broadcast), in ``count``'s dtype; a
    probability outside [0, 1] counts as the nearer end, as in PyTorch."""
    names = _dtype.SCALAR_TYPE_NAMES
    if np_kind(count._data.dtype) != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {names[count.dtype.name]}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {names[prob.dtype.name]} but expected {names[count.dtype.name]}")
    p = xp.clip(prob._data.astype(xp.float64), 0.0, 1.0)
    draws = generator_of(generator).numpy_draw("binomial", count._data.astype(xp.int64), p)
    return Tensor._make(xp.asarray(draws).astype(count._data.dtype))


@torch_named("PoissonBackward0")
class PoissonSample(Node):
    """A Poisson draw as a node: its gradient is zero, as PyTorch's (a sample of a rate that requires grad has a
    ``PoissonBackward0`` that gives zeros)."""

    def forward(self, rates, counts):
        return counts

    def backward(self, g):
        return (xp.zeros_like(g),)


def poisson(input: Tensor, generator=None) -> Tensor:
    """``torch.poisson``: a draw of Poisson(rate) for each element of ``input`` (rates >= 0, a floating dtype), in
    ``input``'s dtype, with PyTorch's algorithm and draws (53-bit uniforms, element after element in C order)."""
    a = input._data
    if np_kind(a.dtype) != "f":
        raise NotImplementedError(f'"poisson_cpu" not implemented for \'{_dtype.SCALAR_TYPE_NAMES[input.dtype.name]}\'')
    rates = xp.ascontiguousarray(a, dtype=xp.float64).reshape(-1)
    if not (rates >= 0).all():  # (NaN too)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    with xp.errstate(over="ignore"):  # a count past float16's range is inf, as PyTorch's conversion
        counts = draws.poisson(generator_of(generator), rates).reshape(a.shape).astype(a.dtype)
    return PoissonSample.apply(input, counts=counts)


_P_IN_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
               "If so, please report an enhancement request to PyTorch.)")


def check_bernoulli_dtypes(a, p=None) -> None:
    """PyTorch's refusals of a Bernoulli fill of array ``a`` (one with elements: an empty one is not checked, as its
    kernel is not run): a complex ``a`` has no kernel; probabilities ``p`` (an array) must be floating and in
    [0, 1] (NaN refused); a number ``p`` is checked by the caller, before these."""
    if not a.size:
        return
    if p is None or p.__class__ is not xp.ndarray:
        if a.dtype.kind == "c":
            raise _dtype.not_implemented_for("bernoulli_scalar_cpu_", _dtype.from_np(a.dtype))
        return
    if a.dtype.kind == "c":
        raise _dtype.not_implemented_for("bernoulli_tensor_cpu_self_", _dtype.from_np(a.dtype))
    if np_kind(p.dtype) != "f":
        raise _dtype.not_implemented_for("bernoulli_tensor_cpu_p_", _dtype.from_np(p.dtype))
    if p.size and not ((p >= 0) & (p <= 1)).all():  # (NaN too)
        raise RuntimeError(_P_IN_RANGE)


def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """1 with probability ``input`` (or ``p`` when given), elementwise; the result has ``input``'s dtype. As
    PyTorch's (``empty_like(input).bernoulli_(input or p)``), an empty ``input`` is not checked."""
    if is_meta(input._data):
        return Tensor._make(meta_array(input._data.shape, input._data.dtype))
    if p is not None and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    check_bernoulli_dtypes(input._data, input._data if p is None else p)
    g, a = generator_of(generator), input._data
    if not a.size:
        return Tensor._make(xp.empty(a.shape, dtype=a.dtype))
    # PyTorch fills a new contiguous tensor (empty_like with the legacy contiguous format): row-major order,
    # whatever input's layout
    if p is None:
        kept = draws.bernoulli_tensor(g, a)
    else:
        kept = draws.bernoulli_scalar(g, a.size, p).reshape(a.shape)
    return Tensor._make(kept.astype(a.dtype))


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _as_int64(value, args) -> int:
    """An int argument of random_ as PyTorch's argument parser takes it: an integer (no bool, no float) that
    fits int64, or a 0-d integer tensor (a hash-grid NeRF's ``randint(0, resolution - cube_size, ...)`` of 0-d
    tensors)."""
    if isinstance(value, Tensor) and value._data.ndim == 0 and np_kind(value._data.dtype) in "iu":
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, xp.integer)):
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"random_() received an invalid combination of arguments - got ({got}), but expected one "
                        "of: (*, torch.Generator generator = None), (int from, int to, *, torch.Generator generator "
                        "= None), (int to, *, torch.Generator generator = None)")
    value = int(value)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return value


def _in_dtype(value: int, np_dtype) -> float | None:
    """``value`` rounded to the floating dtype, as PyTorch's cast (None when it overflows the dtype)."""
    with xp.errstate(over="ignore"):
        v = float(xp.asarray(float(value)).astype(np_dtype))
    return v if xp.isfinite(v) else None


def _update_from(low: int, np_dtype, digits: int) -> int:
    """PyTorch's ``update_from``: a ``from`` that rounds down in the dtype moves up to the next value it holds."""
    rounded = _in_dtype(low + 1, np_dtype)
    # (a value past the dtype's range is infinite there, which PyTorch's cast back to int64 makes int64's lowest:
    # then "from is out of bounds")
    rounded = _INT64_MIN if rounded is None else int(rounded)
    if rounded < low:
        return rounded + (1 << (abs(low + 1).bit_length() - 1 - digits + 1))
    return low


def _update_to(high: int, np_dtype, digits: int) -> int:
    """PyTorch's ``update_to``: a ``to`` whose ``to - 1`` rounds up in the dtype moves down below it."""
    rounded = _in_dtype(high - 1, np_dtype)
    if rounded is not None and int(rounded) >= high:
        return int(rounded) - (1 << (abs(high - 1).bit_length() - 1 - digits + 1))
    return high


def random_range(x: Tensor, args: tuple, low, high) -> tuple[int, int] | None:  # (low, high ...: not given)
    """The inclusive range [from, to_inc] of ``x.random_(...)``, with PyTorch's checks: ``random_()`` (neither
    given: the dtype's own range, returned as None), ``random_(to)`` (``high`` only), ``random_(from, to)``, and
    ``random_(from, None)`` (from ``from`` to the dtype's largest value: 2**mantissa digits for a floating dtype).
    For a floating dtype, a bound the dtype cannot hold is moved to one it can, and a bound past 2**digits is
    PyTorch's warning (the draws are no longer uniform there)."""
    from .._warnings import warn

    np_dtype = x._data.dtype
    name = _dtype.from_np(np_dtype).name
    kind = np_kind(np_dtype)
    type_name = _dtype.CPP_TYPE_NAMES[name] if kind in "fiub" else None  # (random_'s errors and warnings name it)
    floating = kind == "f"
    digits = int(xp.finfo(np_dtype).nmant) + 1 if floating else 0
    if low is None:  # (PyTorch's parser: from is an int, never None)
        _as_int64(low, args)
    if low is ... and high is ...:  # random_()
        if kind not in "fiub" or name in ("uint16", "uint32", "uint64"):
            raise _dtype.not_implemented_for("random_kernel_cpu", _dtype.from_np(np_dtype))
        return None
    if type_name is None:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if high is ... or low is ...:  # random_(to)
        low, high = 0, _as_int64(high if low is ... else low, args)
    else:
        low = _as_int64(low, args)
        high = None if high is None else _as_int64(high, args)
    if high is not None:  # [from, to)
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        if floating:
            low, high = _update_from(low, np_dtype, digits), _update_to(high, np_dtype, digits)
            if not low < high:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                   f"but got from={low} >= to={high}")
        to_inc = high - 1
    elif low == _INT64_MIN:  # every int64
        return _INT64_MIN, _INT64_MAX
    elif floating:
        to_inc = min(1 << digits, _INT64_MAX)
        low = _update_from(low, np_dtype, digits)
        if not low < to_inc:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                               f"to dtype, but got from={low} > to_inc={to_inc}")
    else:
        to_inc = 1 if kind == "b" else int(xp.iinfo(np_dtype).max)
    lo, hi = ((float(xp.finfo(np_dtype).min), float(xp.finfo(np_dtype).max)) if floating else
              (0, 1) if kind == "b" else (int(xp.iinfo(np_dtype).min), int(xp.iinfo(np_dtype).max)))
    for value, what in ((low, "from"), (to_inc, "to - 1")):
        if not lo <= value <= hi:
            raise RuntimeError(f"{what} is out of bounds for {type_name}")
    if floating:
        for value, what in ((low, "from"), (to_inc, "to - 1")):
            if not -(1 << digits) <= value <= 1 << digits:
                warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations {type_name} "
                     "can support discrete uniform distribution only within this range. This warning will become "
                     "an error in version 1.7 release, please fix the code in advance")
    return low, to_inc
