"""PyTorch 2.13's CPU random draws, from a ``Generator``'s mt19937 words, with PyTorch's arithmetic.

Each function takes a ``ember.random.Generator`` and returns a flat NumPy array (the caller shapes it, or writes it
in memory order with ``write_in_memory_order`` as PyTorch's TensorIterator fills a strided tensor). Written from
PyTorch's behaviour (its sources read, none copied); tools/torch_rng holds the measurements behind each rule.

- uniform: float32 takes 24 bits of one word, float64 53 bits of a ``random64()``; ``x * (to - from) + from`` in
  the tensor's type, fused; a result equal to ``to`` becomes ``from``.
- normal: a contiguous float32/float64 tensor of 16 or more elements is filled in blocks of 16 uniforms (Box-Muller
  on u1 = 1 - u[j], u2 = u[j + 8]; a ragged tail redraws 16 fresh uniforms for the last 16 slots). float32 uses the
  AVX2 kernel's Cephes log/sincos, float64 the C library's (the transform: ``ember._random_normals``). Anything
  smaller or strided takes the double scalar path: one pair per two values, the second cached in the generator
  (used by the next scalar draw, even in a later call).
- integers: ``u % range + low``, one word per value, two (``random64()``) when the range is at least 2**28.

Each draw holds its generator's lock from its first word to its last (``holding_lock``), as PyTorch's kernels hold
the generator's mutex: two threads drawing from one generator get the numbers of one draw after the other, never
a block's tail or a cached normal taken by the other thread.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._random_math import fma32, fma64, libm
from ._random_normals import normals16, scale64, small_normals
from .random import compiles_draw as _compiles
from .random import filled

_F32 = np.float32
_F64 = np.float64
_TWO_PI = 2.0 * math.pi
_RANDOM64_RANGE = 1 << 28  # uniform_int_from_to: from this range on, one random64() per value
_HUGE_PERM = (2**32 - 1) // 20  # randperm switches to an inside-out shuffle on random64() from here


def holding_lock(draw):
    """``draw(g, ...)`` run while holding ``g.lock`` (re-entrant: a draw may call another on the same generator)."""
    @functools.wraps(draw)
    def locked(g, *args, **kwargs):
        with g.lock:
            return draw(g, *args, **kwargs)
    return locked


def _is_f64(dtype) -> bool:
    return np.dtype(dtype) == np.float64


def in_memory_order(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Flat ``values`` shaped as ``like`` so that ``like[...] = result`` writes them in the order PyTorch's
    TensorIterator visits a strided tensor: memory order (dimensions by decreasing stride), which is C order for a
    contiguous one."""
    if like.ndim < 2 or like.flags.c_contiguous:
        return values.reshape(like.shape)
    order = _memory_order(like)
    return values.reshape([like.shape[d] for d in order]).transpose(np.argsort(order))


def _memory_order(like: np.ndarray) -> list[int]:
    """``like``'s dimensions from the slowest-moving in memory to the fastest (size-1 ones first)."""
    return sorted(range(like.ndim), key=lambda d: (like.shape[d] != 1, abs(like.strides[d])), reverse=True)


def flat_in_memory_order(arr: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The elements of ``arr`` (``like``'s shape) in ``like``'s memory order: ``in_memory_order``'s inverse."""
    if like.ndim < 2 or like.flags.c_contiguous:
        return arr.reshape(-1)
    return arr.transpose(_memory_order(like)).reshape(-1)


def floating(draw, shape: tuple, dtype) -> np.ndarray:
    """``draw(n, float_dtype)`` (a flat array of n draws) as an array of ``shape`` and ``dtype``: a complex dtype
    draws its real and imaginary parts as 2n interleaved values of its real type (PyTorch's ``view_as_real``);
    float16 and bfloat16 are rounded from float32 draws (not PyTorch's streams for those types)."""
    dt = np.dtype(dtype)
    out = np.empty(shape, dt)  # first: an impossible size fails here, before any draw
    n = out.size
    if dt.kind == "c":
        real = _F64 if dt == np.complex128 else _F32
        out.reshape(-1).view(real)[...] = draw(2 * n, real)
    elif dt in (np.float32, np.float64):  # the draw's own fresh array, shaped: a model's weights are not copied
        return draw(n, dt).astype(dt, copy=False).reshape(shape)  # (``out``, never written, took no memory)
    else:
        out.reshape(-1)[...] = draw(n, _F32)
    return out


def part_std(std: float, dtype) -> float:
    """The standard deviation of each part of a normal draw: ``std / sqrt(2)`` for a complex dtype (its real and
    imaginary parts, so that E|z - mean|^2 = std^2; PyTorch divides so, which differs from ``std * sqrt(0.5)`` in
    the last bit), ``std`` otherwise."""
    return std / math.sqrt(2) if np.dtype(dtype).kind == "c" else std


# -- uniform ------------------------------------------------------------------------------------------------------
@holding_lock
def uniform(g, n: int, low: float = 0.0, high: float = 1.0, dtype=_F32, out: np.ndarray | None = None) -> np.ndarray:
    """``tensor.uniform_(low, high)`` / ``rand`` (float32 or float64 values; into ``out``, a flat array of n
    elements of ``dtype``, when given)."""
    real, unit, fma = (_F64, g.unit64, fma64) if _is_f64(dtype) else (_F32, g.unit32, fma32)
    lo, hi = real(low), real(high)
    if real is _F32 and _compiles(n):  # the same rule in one pass: ember._kernels.mt19937.uniform32
        from ._kernels import mt19937

        out = np.empty(int(n), _F32) if out is None else out
        return g.compiled_draw(mt19937.uniform32, out, lo, hi).astype(dtype, copy=False)
    v = unit(n)
    if lo == 0:
        if hi != 1:
            v *= hi
    else:
        v = fma(v, hi - lo, lo)
    v[v == hi] = lo
    return filled(out, v.astype(dtype, copy=False))


# -- normal -------------------------------------------------------------------------------------------------------
@holding_lock
def normal(g, n: int, mean: float = 0.0, std: float = 1.0, dtype=_F32, contiguous: bool = True,
           out: np.ndarray | None = None) -> np.ndarray:
    """``tensor.normal_(mean, std)`` / ``randn`` over ``n`` elements (``contiguous``: of a contiguous tensor; into
    ``out``, a flat array of n elements of ``dtype``, when given)."""
    if n >= 16 and contiguous:
        unit = g.unit64 if _is_f64(dtype) else g.unit32
        full = n // 16 * 16
        if n == full or not small_normals(n):
            data = unit(n, out)
            normals16(data[:full], mean, std)
            if n > full:
                data[n - 16:] = normals16(unit(16), mean, std)  # a ragged tail: 16 fresh uniforms, the last slots
            return data.astype(dtype, copy=False)
        u = unit(n + 16)  # the n uniforms, then the tail's 16 fresh ones: one draw, and one transform of ...
        u[full:full + 16] = u[n:]  # ... the whole blocks and the tail side by side (the ragged ones go unused)
        normals16(u[:full + 16], mean, std)
        data = np.empty(n, u.dtype) if out is None else out
        data[:full] = u[:full]
        data[n - 16:] = u[full:full + 16]
        return data.astype(dtype, copy=False)
    return filled(out, normal_scalar(g, n, mean, std).astype(dtype))


@holding_lock
def normal_scalar(g, n: int, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
    """``n`` draws of PyTorch's ``normal_distribution<double>`` (float64): Box-Muller on two 53-bit uniforms,
    ``r * cos`` returned and ``r * sin`` cached in the generator for the next draw."""
    out = np.empty(n, _F64)
    i = 0
    if n and g._next_double is not None:
        out[0] = g._next_double
        g._next_double = None
        i = 1
    m = n - i
    if m > 0:
        pairs = (m + 1) // 2
        u = g.unit64(2 * pairs)
        r = np.sqrt(-2.0 * libm("log1p", -u[1::2]))
        theta = _TWO_PI * u[0::2]
        seq = np.empty(2 * pairs, _F64)
        seq[0::2] = r * libm("cos", theta)
        seq[1::2] = r * libm("sin", theta)
        out[i:] = seq[:m]
        if m % 2:
            g._next_double = float(seq[-1])
    return scale64(out, float(mean), float(std))


# -- integers -----------------------------------------------------------------------------------------------------
@holding_lock
def random_from_to(g, n: int, low: int, high: int, dtype=np.int64) -> np.ndarray:
    """``randint(low, high)`` / ``tensor.random_(low, high)``: ``u % (high - low) + low``."""
    span = (int(high) - int(low)) & ((1 << 64) - 1)
    if span == 0:  # the whole int64 range: random64() as a signed number
        return g.u64(n).view(np.int64).astype(dtype, copy=False)
    if span < 1 << 63 and _compiles(n):  # the same rule in one pass: ember._kernels.mt19937.integers
        from ._kernels import mt19937

        r = g.compiled_draw(mt19937.integers, np.empty(int(n), np.int64), np.uint64(span), np.int64(low),
                            span >= _RANDOM64_RANGE)
        return r.astype(dtype, copy=False)
    v = g.u64(n) if span >= _RANDOM64_RANGE else g.u32(n)
    v %= np.uint64(span)
    if span >= 1 << 63:
        return (np.asarray(v, dtype=object) + int(low)).astype(dtype)
    r = v.astype(np.int64)
    r += np.int64(low)
    return r.astype(dtype, copy=False)


@holding_lock
def random_full(g, n: int, dtype) -> np.ndarray:
    """``tensor.random_()`` with no bounds: [0, max] of an integer type, [0, 2**mantissa] of a floating one."""
    dt = np.dtype(dtype)
    if dt == np.float64:
        return (g.u64(n) % np.uint64((1 << 53) + 1)).astype(dt)
    if dt.kind == "f" or dt.name == "bfloat16":
        digits = 8 if dt.name == "bfloat16" else np.finfo(dt).nmant + 1
        return (g.u32(n) % np.uint64((1 << digits) + 1)).astype(dt)
    if dt == np.int64:
        return (g.u64(n) & np.uint64((1 << 63) - 1)).astype(dt)
    if dt == np.bool_:
        return (g.u32(n) & np.uint64(1)).astype(dt)
    return (g.u32(n) % np.uint64(int(np.iinfo(dt).max) + 1)).astype(dt)


@holding_lock
def int64_seed(g) -> int:
    """``torch.empty((), dtype=torch.int64).random_()``: how PyTorch's data loading draws a seed."""
    return int(random_full(g, 1, np.int64)[0])


@holding_lock
def randperm(g, n: int) -> np.ndarray:
    """``randperm(n)`` (int64): Fisher-Yates, r[i] swapped with r[i + u % (n - i)], one word per step."""
    n = int(n)
    if n >= _HUGE_PERM:  # inside-out shuffle on random64() (PyTorch's choice for huge n)
        z = (g.u64(n) % np.arange(1, n + 1, dtype=np.uint64)).astype(np.int64)
        r = np.empty(n, np.int64)
        for i in range(n):
            r[i] = r[z[i]]
            r[z[i]] = i
        return r
    r = np.arange(n, dtype=np.int64)
    if n > 1:
        offsets = (g.u32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
        from ._kernels.policy import policy

        if policy.compiles(n, 1024):
            from ._kernels.random import randperm_swaps

            randperm_swaps(r, offsets)
        else:
            for i, k in enumerate((offsets + np.arange(n - 1)).tolist()):
                r[i], r[k] = r[k], r[i]
    return r


# -- others -------------------------------------------------------------------------------------------------------
@holding_lock
def bernoulli_scalar(g, n: int, p: float) -> np.ndarray:
    """``tensor.bernoulli_(p)`` for a number p (a bool array): a 53-bit uniform k * 2**-53 below p, compared as
    the integer k < ceil(p * 2**53) (the same test: p * 2**53 is exact)."""
    threshold = np.uint64(min(max(math.ceil(float(p) * 2.0**53), 0), 1 << 53))
    if _compiles(n):  # the same test in one pass: ember._kernels.mt19937.bernoulli53
        from ._kernels import mt19937

        return g.compiled_draw(mt19937.bernoulli53, np.empty(int(n), np.bool_), threshold)
    bits = g.u64(n)
    bits &= np.uint64((1 << 53) - 1)
    return bits < threshold


@holding_lock
def bernoulli_tensor(g, p: np.ndarray) -> np.ndarray:
    """``torch.bernoulli(p)`` / ``tensor.bernoulli_(p_tensor)`` (a bool array of p's shape, p in C order): a
    24-bit uniform below p for float32 (and narrower) probabilities, a 53-bit one for float64. No probabilities:
    nothing drawn nor cast (an empty one of a dtype PyTorch's kernel would refuse, complex, is not looked at)."""
    if not p.size:
        return np.zeros(p.shape, dtype=bool)
    if p.dtype == np.float64:
        u = g.unit64(p.size)
    else:
        u = g.unit32(p.size)
        p = p.astype(_F32, copy=False)
    return (u < p.reshape(-1)).reshape(p.shape)


@holding_lock
def exponential(g, n: int, lambd: float) -> np.ndarray:
    """``tensor.exponential_(lambd)`` in float64: ``-1 / lambd * log1p(-u)``."""
    return (-1.0 / lambd) * libm("log1p", -g.unit64(n))


@holding_lock
def geometric(g, n: int, p: float) -> np.ndarray:
    """``tensor.geometric_(p)`` in float64: ``ceil(log(u) / log1p(-p))``."""
    return np.ceil(libm("log", g.unit64(n)) / math.log1p(-p))


@holding_lock
def cauchy(g, n: int, median: float, sigma: float) -> np.ndarray:
    """``tensor.cauchy_(median, sigma)`` in float64: ``median + sigma * tan(pi * (u - 1/2))``."""
    return median + sigma * libm("tan", math.pi * (g.unit64(n) - 0.5))


@holding_lock
def log_normal(g, n: int, mean: float, std: float) -> np.ndarray:
    """``tensor.log_normal_(mean, std)`` in float64: exp of the scalar normal path (which uses the cached
    sample)."""
    return libm("exp", normal_scalar(g, n, mean, std))


_INT64_MIN = -(2**63)


def _as_int64(x: float) -> int:
    """C's conversion of a double to int64 on x86: NaN, the infinities and anything out of range give INT64_MIN."""
    return int(x) if math.isfinite(x) and -(2.0**63) <= x < 2.0**63 else _INT64_MIN


@holding_lock
def poisson(g, rates: np.ndarray) -> np.ndarray:
    """``torch.poisson`` of the flat float64 ``rates`` (non-negative; in C order), one element after the other on
    53-bit uniforms (a ``random64()`` each): 0 for a rate of 0 (no draw); below 10, Knuth's product of uniforms (the
    count of uniforms whose running product stays above exp(-rate)); from 10 on, Hoermann's transformed rejection
    (PTRS) with PyTorch's constants. Returns float64 counts."""
    out = np.zeros(rates.size, _F64)
    for i, lam in enumerate(rates.tolist()):
        if lam == 0:
            continue
        if lam < 10:
            limit, count, prod = math.exp(-lam), 0, 1.0
            while True:
                prod *= float(g.unit64(1)[0])
                if prod <= limit:
                    break
                count += 1
            out[i] = count
            continue
        out[i] = _poisson_ptrs(g, lam)
    return out


def _poisson_ptrs(g, lam: float) -> int:
    """One Poisson draw for a rate of at least 10 by transformed rejection (Hoermann 1993), as PyTorch's (in
    NumPy float64 scalars: a zero ``us`` divides to inf, and log(0) is -inf, as in C)."""
    lam = _F64(lam)
    slam, loglam = np.sqrt(lam), np.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = np.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2)
    with np.errstate(all="ignore"):
        while True:
            u = _F64(g.unit64(1)[0]) - 0.5
            v = _F64(g.unit64(1)[0])
            us = 0.5 - abs(u)
            k = _as_int64(float(np.floor((2 * a / us + b) * u + lam + 0.43)))
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if np.log(v) + log_invalpha - np.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1.0):
                return k


@holding_lock
def multinomial(g, probs: np.ndarray, num_samples: int, replacement: bool) -> np.ndarray:
    """``torch.multinomial`` on a 2-D array of non-negative weights (rows): with replacement and more than one
    sample, one 53-bit uniform per sample searched in the row's normalised cumulative sum; otherwise (one sample
    is drawn so either way) the top ``num_samples`` of ``probs / q`` with ``q = exponential_(1)`` drawn in probs'
    dtype over the whole array, in probs' memory order (PyTorch's ``empty_like(probs)``)."""
    rows = probs.shape[0]
    out = np.empty((rows, num_samples), np.int64)
    if replacement and num_samples > 1:
        for i in range(rows):
            cum = np.cumsum(probs[i], dtype=probs.dtype)
            cum = cum / cum[-1]
            cum[-1] = 1
            out[i] = np.searchsorted(cum.astype(_F64), g.unit64(num_samples), side="left")
        return out
    q = in_memory_order(exponential(g, probs.size, 1.0).astype(probs.dtype), probs)
    key = probs / q
    for i in range(rows):
        out[i] = np.argsort(-key[i], kind="stable")[:num_samples]
    return out


# -- gamma --------------------------------------------------------------------------------------------------------
_ONE_THIRD_F32 = float(_F32(1.0) / _F32(3.0))  # PyTorch's 1.0f / 3.0f, a float constant even in double arithmetic
_SQUEEZE_F32 = float(_F32(0.0331))  # its 0.0331f


class _ScalarStream:
    """The 53-bit uniforms and ``normal_distribution<double>`` samples of a scalar sampler that reads its
    generator one value at a time (gamma's rejection loop), in the order it asks for them, read from uniforms drawn
    ahead in blocks: a normal is Box-Muller on the next two uniforms (as ``normal_scalar``), ``r * cos`` returned
    and ``r * sin`` kept for the next normal. Python reads a list item where it would call into the generator for
    each value. ``close`` puts the generator where the values actually used leave it: its state rewound and moved
    on by as many uniforms, the unused normal cached in it, as if each value had been drawn alone."""

    def __init__(self, g, expected: int) -> None:
        self.g = g
        self.start = g._mt.state  # (a copy: the uniforms drawn ahead are given back by close)
        self.fresh = g._fresh
        self.cached = g._next_double
        self.block = max(int(expected), 16)
        self.drawn = np.empty(0, _F64)
        self.used = 0
        self._more()

    def _more(self) -> None:
        u = np.concatenate([self.drawn, self.g.unit64(self.block)])
        self.drawn = u
        r = np.sqrt(-2.0 * libm("log1p", -u[1:]))  # a pair (u[j], u[j + 1]) from any j: theta from u[j]
        theta = _TWO_PI * u[:-1]
        self.uniforms = u.tolist()
        self.cos, self.sin = (r * libm("cos", theta)).tolist(), (r * libm("sin", theta)).tolist()

    def uniform(self) -> float:
        if self.used >= len(self.uniforms):
            self._more()
        self.used += 1
        return self.uniforms[self.used - 1]

    def normal(self) -> float:
        if self.cached is not None:
            value, self.cached = self.cached, None
            return value
        if self.used + 1 >= len(self.uniforms):
            self._more()
        j = self.used
        self.used += 2
        self.cached = self.sin[j]
        return self.cos[j]

    def close(self) -> None:
        g = self.g
        g._mt.state = self.start
        g._fresh = self.fresh
        if self.used:
            g.unit64(self.used)  # the words of the uniforms used, and no more
        g._next_double = self.cached


def _c_pow(base: float, exponent: float) -> float:
    """C's ``pow`` for a base in (0, 1]: +inf where Python's ``math.pow`` raises OverflowError (a negative
    concentration's boost ``(1 - u) ** (1 / alpha)``)."""
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return math.inf


def _c_sqrt(x: float) -> float:
    """C's ``sqrt``: NaN for a negative argument where Python's ``math.sqrt`` raises ValueError."""
    return math.sqrt(x) if not x < 0 else math.nan


@holding_lock
def gamma(g, alphas: np.ndarray) -> np.ndarray:
    """One Gamma(alpha, 1) draw per element of ``alphas`` (flat, in order), as PyTorch's CPU ``_standard_gamma``
    (``alphas`` float32 or float64) and the gamma step of ``_sample_dirichlet`` (float64) draw them: Marsaglia and
    Tsang's rejection method on ``normal_distribution<double>`` and ``1 - u`` of 53-bit uniforms, alpha below 1
    boosted by one with the scale ``(1 - u) ** (1 / alpha)``. ``alpha += 1``, ``1 / alpha`` and ``d = alpha - 1/3``
    are taken in the alpha's own type (float32 for float32), the rest in double; a draw is returned in float64.
    The values come from a ``_ScalarStream`` (about three uniforms a draw).
    A NaN or negative alpha follows C's IEEE arithmetic as PyTorch's does (a NaN ``y`` leaves the normal loop, a NaN
    ``sqrt``, an infinite ``pow``), so it ends in a NaN or infinite draw instead of looping forever."""
    single = alphas.dtype == _F32
    as_scalar = _F32 if single else _F64
    values = alphas.reshape(-1).tolist()
    out = np.empty(len(values), _F64)
    if not values:
        return out
    stream = _ScalarStream(g, 4 * len(values))
    try:
        for k, alpha in enumerate(values):
            alpha = as_scalar(alpha)
            scale = 1.0
            if alpha < 1:
                if alpha == 0:
                    out[k] = 0.0
                    continue
                scale *= _c_pow(1.0 - stream.uniform(), float(as_scalar(1) / alpha))
                alpha = as_scalar(alpha + as_scalar(1))
            d = float(alpha - as_scalar(_ONE_THIRD_F32)) if single else float(alpha) - _ONE_THIRD_F32
            c = 1.0 / _c_sqrt(9.0 * d)
            while True:
                while True:
                    x = stream.normal()
                    y = 1.0 + c * x
                    if not y <= 0:  # PyTorch's ``while (y <= 0)``: a NaN y (NaN or negative alpha) leaves the loop
                        break
                v = y * y * y
                u = 1.0 - stream.uniform()
                xx = x * x
                if u < 1.0 - _SQUEEZE_F32 * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
                    out[k] = scale * d * v
                    break
    finally:
        stream.close()
    return out
