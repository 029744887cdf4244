"""Standalone prototype: PyTorch's CPU default-generator streams reproduced with NumPy.

Written from a reading of PyTorch's ATen sources (CPUGeneratorImpl, MT19937RNGEngine.h,
DistributionsHelper.h, TransformationHelper.h, native/cpu/DistributionTemplates.h,
native/cpu/avx_mathfun.h, TensorFactories.cpp randperm, MultinomialKernel.cpp); no code copied.

All methods return NumPy arrays (flat, C order; callers reshape).  `TorchGenerator` mirrors
`at::CPUGeneratorImpl`: one mt19937 (NumPy's MT19937 with legacy seeding is the same engine),
plus the two cached Box-Muller samples (float and double) that torch keeps.
"""

import math
import struct

import numpy as np

DEFAULT_SEED = 67280421310721  # c10::default_rng_seed_val
_M53 = np.uint64((1 << 53) - 1)
_F32 = np.float32
_F64 = np.float64

# ----------------------------------------------------------------------------------------------
# exact helpers


def fma32(a, b, c):
    """Correctly rounded float32 fused multiply-add, elementwise (NumPy has no fma).

    a*b is exact in float64 (24+24 bits); a*b + c in float64 rounds once (s) with exact error t
    (TwoSum).  Rounding s to float32 can only differ from rounding the exact value when s sits
    exactly on a float32 midpoint and t != 0: then nudge s one double-ulp towards t first."""
    a = np.asarray(a, _F32).astype(_F64)
    b = np.asarray(b, _F32).astype(_F64)
    c = np.asarray(c, _F32).astype(_F64)
    p = a * b
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    bits = s.view(np.uint64) if s.ndim else np.array(s).view(np.uint64)
    mid = (bits & np.uint64((1 << 29) - 1)) == np.uint64(1 << 28)
    fix = mid & (t != 0)
    if np.any(fix):
        s = np.array(s, copy=True)
        s[fix] = np.nextafter(s[fix], np.where(t[fix] > 0, np.inf, -np.inf))
    return s.astype(_F32)


def _vec(fn):
    f = np.frompyfunc(fn, 1, 1)
    return lambda x: np.asarray(f(np.asarray(x, _F64)), dtype=_F64)


# glibc's double functions, element by element (what ATen's scalar loops call); NumPy's own
# SIMD log/sin/cos are not always bit-identical to glibc.
libm_log = _vec(math.log)
libm_log1p = _vec(math.log1p)
libm_sin = _vec(math.sin)
libm_cos = _vec(math.cos)
libm_tan = _vec(math.tan)
libm_exp = _vec(math.exp)


def _fma64_exact(a, b, c):
    """Correctly rounded float64 fma via Python ints/fractions (slow; only for small arrays)."""
    from fractions import Fraction

    a, b, c = np.broadcast_arrays(np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64))
    out = np.empty(a.shape, _F64)
    for i, (x, y, z) in enumerate(zip(a.ravel(), b.ravel(), c.ravel())):
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            out.flat[i] = x * y + z
            continue
        out.flat[i] = float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
    return out


# ----------------------------------------------------------------------------------------------
# float32 emulation of avx_mathfun.h's log256_ps / sincos256_ps (Cephes polynomials), used by
# PyTorch's AVX2 NormalFill16<float>.  GCC contracts mul+add of the intrinsics into FMAs in the
# AVX2 build; CONTRACT selects that (checked empirically in check.py).

CONTRACT = True


def _madd(a, b, c):
    """a*b + c as the compiled kernel does it (fused if CONTRACT)."""
    if CONTRACT:
        return fma32(a, b, c)
    return (np.asarray(a, _F32) * np.asarray(b, _F32)) + np.asarray(c, _F32)


_LOGP = [
    7.0376836292e-2,
    -1.1514610310e-1,
    1.1676998740e-1,
    -1.2420140846e-1,
    1.4249322787e-1,
    -1.6668057665e-1,
    2.0000714765e-1,
    -2.4999993993e-1,
    3.3333331174e-1,
]
_LOGP = [_F32(v) for v in _LOGP]


def avx_log_ps(x):
    x = np.asarray(x, _F32)
    x = np.maximum(x, np.array(0x00800000, np.uint32).view(_F32))
    bits = x.view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 0x7F).astype(_F32) + _F32(1)
    m = ((bits & np.uint32(~0x7F800000 & 0xFFFFFFFF)) | np.array(0.5, _F32).view(np.uint32)).view(_F32)
    mask = m < _F32(0.707106781186547524)
    tmp = np.where(mask, m, _F32(0))
    m = m - _F32(1)
    e = e - np.where(mask, _F32(1), _F32(0))
    m = m + tmp
    z = m * m
    y = np.full_like(m, _LOGP[0])
    for p in _LOGP[1:]:
        y = _madd(y, m, p)
    y = y * m
    # GCC fuses the first multiplication whose only use is an add: (y*z) + round(e*q1)
    y = _madd(y, z, e * _F32(-2.12194440e-4)) if CONTRACT else y * z + e * _F32(-2.12194440e-4)
    y = y - z * _F32(0.5)  # z*0.5 is exact: fused or not is the same
    m = m + y
    m = _madd(e, _F32(0.693359375), m)
    return m


def avx_sincos_ps(x):
    x = np.asarray(x, _F32)
    sign_sin = np.signbit(x)
    x = np.abs(x)
    y = x * _F32(1.27323954473516)
    j = y.astype(np.int32)  # cvtt: truncation
    j = (j + 1) & ~1
    y = j.astype(_F32)
    swap_sin = (j & 4) != 0
    poly = (j & 2) == 0
    x = _madd(y, _F32(-0.78515625), x)
    x = _madd(y, _F32(-2.4187564849853515625e-4), x)
    x = _madd(y, _F32(-3.77489497744594108e-8), x)
    sign_cos = ((~(j - 2)) & 4) != 0
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    yc = _madd(_F32(2.443315711809948e-005), z, _F32(-1.388731625493765e-003))
    yc = _madd(yc, z, _F32(4.166664568298827e-002))
    yc = yc * z
    # (yc*z) - z*0.5: GCC fuses yc*z (the earlier multiplication) into the subtraction
    yc = _madd(yc, z, -(z * _F32(0.5))) if CONTRACT else yc * z - z * _F32(0.5)
    yc = yc + _F32(1)
    ys = _madd(_F32(-1.9515295891e-4), z, _F32(8.3321608736e-3))
    ys = _madd(ys, z, _F32(-1.6666654611e-1))
    ys = ys * z
    ys = _madd(ys, x, x)
    s = np.where(poly, ys, yc)
    c = np.where(poly, yc, ys)
    s = np.where(sign_sin, -s, s)
    c = np.where(sign_cos, -c, c)
    return s, c


# ----------------------------------------------------------------------------------------------


class TorchGenerator:
    """Mirror of at::CPUGeneratorImpl (the default CPU generator or a torch.Generator())."""

    def __init__(self, seed=DEFAULT_SEED):
        self.manual_seed(seed)

    # -- seeding / raw streams ---------------------------------------------------------------
    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:  # torch maps negatives into uint64 (seed + 2**64)
            seed += 1 << 64
        self._seed = seed
        self._bg = np.random.MT19937(0)
        self._bg._legacy_seeding(seed & 0xFFFFFFFF)
        self._next_float = None  # next_float_normal_sample_ (unused by CPU kernels)
        self._next_double = None  # next_double_normal_sample_
        self._fresh = True
        return self

    def initial_seed(self):
        return self._seed

    def u32(self, n):
        """n draws of generator->random(), as uint64."""
        if n:
            self._fresh = False
        return self._bg.random_raw(int(n)).astype(np.uint64)

    def u64(self, n):
        """n draws of generator->random64() = first << 32 | second."""
        r = self.u32(2 * int(n))
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # uniform_real_distribution<T>(0, 1) raw samples
    def _unit32(self, n):
        return (self.u32(n) & np.uint64(0xFFFFFF)).astype(_F32) * _F32(2.0**-24)

    def _unit64(self, n):
        return (self.u64(n) & _M53).astype(_F64) * _F64(2.0**-53)

    # -- uniform -----------------------------------------------------------------------------
    def uniform_(self, n, a=0.0, b=1.0, dtype=np.float32):
        """tensor.uniform_(a, b) / torch.rand (a=0, b=1).  from/to become float32 for float32
        tensors; x*(to-from)+from is evaluated in the tensor's own type, fused (FMA)."""
        if np.dtype(dtype) == np.float32:
            lo, hi = _F32(a), _F32(b)
            x = self._unit32(n)
            # fma(x, hi-lo, lo); with lo == 0 it is one rounding of x*hi, NumPy does that itself
            v = x * hi if lo == 0 else fma32(x, hi - lo, lo)
            return np.where(v == hi, lo, v)
        lo, hi = _F64(a), _F64(b)
        x = self._unit64(n)
        span = hi - lo
        if lo == 0 and span == 1:
            v = x
        elif lo == 0:
            v = x * span
        else:
            v = _fma64_exact(x, span, lo)
        return np.where(v == hi, lo, v)

    rand = uniform_

    # -- integers ----------------------------------------------------------------------------
    def random_from_to(self, n, low, high, dtype=np.int64):
        """torch.randint(low, high) / tensor.random_(low, high) for integer dtypes."""
        rng = (int(high) - int(low)) & ((1 << 64) - 1)
        if rng >= 1 << 28:  # uniform_int_from_to_distribution switches at 2**28
            v = self.u64(n)
        else:
            v = self.u32(n)
        r = (
            (v % np.uint64(rng)).astype(object) + int(low)
            if rng >= 1 << 63
            else (v % np.uint64(rng)).astype(np.int64) + np.int64(low)
        )
        return np.asarray(r).astype(dtype)

    randint = random_from_to

    def random_(self, n, dtype=np.int64):
        """tensor.random_() with no bounds: [0, max] for ints, [0, 2**mantissa] for floats."""
        dt = np.dtype(dtype)
        if dt == np.float64:
            return (self.u64(n) % np.uint64((1 << 53) + 1)).astype(_F64)
        if dt == np.float32:
            return (self.u32(n) % np.uint64((1 << 24) + 1)).astype(_F32)
        if dt == np.int64:
            return (self.u64(n) & np.uint64((1 << 63) - 1)).astype(np.int64)
        if dt == np.bool_:
            return (self.u32(n) & np.uint64(1)).astype(np.bool_)
        mx = np.iinfo(dt).max
        return (self.u32(n) % np.uint64(mx + 1)).astype(dt)

    def randperm(self, n):
        n = int(n)
        if n < (2**32 - 1) // 20:
            r = np.arange(n, dtype=np.int64)
            if n > 1:
                z = (self.u32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
                for i in range(n - 1):  # sequential swaps (the prototype keeps it plain)
                    k = i + z[i]
                    r[i], r[k] = r[k], r[i]
            return r
        # inside-out Fisher-Yates with random64 for huge n (source reading; not testable here)
        r = np.empty(n, np.int64)
        z = (self.u64(n) % np.arange(1, n + 1, dtype=np.uint64)).astype(np.int64)
        for i in range(n):
            r[i] = r[z[i]]
            r[z[i]] = i
        return r

    # -- normal ------------------------------------------------------------------------------
    def _normal_scalar(self, n, mean, std):
        """normal_distribution<double>: one Box-Muller pair per two outputs, cached 2nd sample."""
        out = np.empty(n, _F64)
        i = 0
        if n and self._next_double is not None:
            out[0] = self._scale(np.array([self._next_double]), mean, std)[0]
            self._next_double = None
            i = 1
        m = n - i
        if m <= 0:
            return out
        pairs = (m + 1) // 2
        u = self._unit64(2 * pairs)
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * libm_log1p(-u2))
        th = 2.0 * math.pi * u1
        c = r * libm_cos(th)
        s = r * libm_sin(th)
        seq = np.empty(2 * pairs, _F64)
        seq[0::2] = c
        seq[1::2] = s
        vals = seq[:m]
        if m % 2 == 1:
            self._next_double = float(s[-1])
            vals = np.empty(m, _F64)
            vals[0::2] = c
            vals[1::2] = s[:-1]
        out[i:] = self._scale(vals, mean, std)
        return out

    @staticmethod
    def _scale(v, mean, std):
        """transformation::normal: v*std + mean in double, fused by the compiler."""
        if mean == 0:
            return v * std
        return _fma64_exact(v, std, mean)

    def _fill16_f32(self, d, mean, std):
        u1 = _F32(1) - d[:, :8]
        u2 = d[:, 8:]
        rad = np.sqrt(_F32(-2) * avx_log_ps(u1))
        th = _F32(2.0 * math.pi) * u2
        s, c = avx_sincos_ps(th)
        d[:, :8] = fma32(rad * c, _F32(std), _F32(mean))
        d[:, 8:] = fma32(rad * s, _F32(std), _F32(mean))
        return d

    def _fill16_f64(self, d, mean, std):
        u1 = 1.0 - d[:, :8]
        u2 = d[:, 8:]
        rad = np.sqrt(-2.0 * libm_log(u1))
        th = 2.0 * math.pi * u2
        a = rad * libm_cos(th)
        b = rad * libm_sin(th)
        if std == 1 and mean == 0:
            d[:, :8], d[:, 8:] = a, b
        elif mean == 0:
            d[:, :8], d[:, 8:] = a * std, b * std
        else:
            d[:, :8], d[:, 8:] = _fma64_exact(a, std, mean), _fma64_exact(b, std, mean)
        return d

    def normal_(self, n, mean=0.0, std=1.0, dtype=np.float32, contiguous=True):
        """tensor.normal_(mean, std) / torch.randn.  n >= 16 and contiguous: normal_fill
        (blocks of 16; a ragged tail redraws 16 uniforms for the last 16 slots).  Otherwise
        the scalar double Box-Muller path with the generator's cached second sample."""
        dt = np.dtype(dtype)
        if n >= 16 and contiguous:
            if dt == np.float32:
                data = self._unit32(n)
                fill = self._fill16_f32
            else:
                data = self._unit64(n)
                fill = self._fill16_f64
            full = n // 16 * 16
            if full:
                data[:full] = fill(data[:full].reshape(-1, 16), mean, std).reshape(-1)
            if n % 16:
                tail = (self._unit32(16) if dt == np.float32 else self._unit64(16)).reshape(1, 16)
                data[n - 16 :] = fill(tail, mean, std).reshape(-1)
            return data
        return self._normal_scalar(n, float(mean), float(std)).astype(dt)

    randn = normal_

    def normal_tensor(self, mean, std, dtype=np.float32):
        """torch.normal(mean_tensor, std_tensor): normal_(0,1) of the broadcast shape, then
        mul_(std).add_(mean) (two roundings)."""
        mean = np.asarray(mean, dtype)
        std = np.asarray(std, dtype)
        shape = np.broadcast_shapes(mean.shape, std.shape)
        z = self.normal_(int(np.prod(shape)), 0.0, 1.0, dtype).reshape(shape)
        return (z * std) + mean

    # -- others ------------------------------------------------------------------------------
    def bernoulli_scalar(self, n, p, dtype=np.float32):
        """tensor.bernoulli_(p) for a Python float p: bernoulli_distribution<double>."""
        return (self._unit64(n) < float(p)).astype(dtype)

    def bernoulli_tensor(self, p, dtype=None):
        """tensor.bernoulli_(p_tensor) / torch.bernoulli(probs): per element, a float32 draw
        (24 bits) when p is float32 / half, a double draw (53 bits) when p is float64."""
        p = np.asarray(p)
        if dtype is None:
            dtype = p.dtype
        if p.dtype == np.float64:
            u = self._unit64(p.size)
        else:
            u = self._unit32(p.size)
            p = p.astype(_F32)
        return (u < p.ravel()).astype(dtype)

    def dropout_mask(self, n, p, dtype=np.float32):
        """F.dropout(x, p, training=True) = x * (bernoulli_(1-p) / (1-p)) (AMD or Intel: the
        scalar bernoulli kernel runs on the mt19937; see README)."""
        keep = self.bernoulli_scalar(n, 1.0 - p, dtype)
        return keep / dtype(1.0 - p) if p < 1 else keep * 0

    def exponential_(self, n, lambd=1.0, dtype=np.float32):
        u = self._unit64(n)
        return (-1.0 / lambd * libm_log1p(-u)).astype(dtype)

    def geometric_(self, n, p, dtype=np.float32):
        u = self._unit64(n)
        return np.ceil(libm_log(u) / math.log1p(-p)).astype(dtype)

    def cauchy_(self, n, median=0.0, sigma=1.0, dtype=np.float32):
        u = self._unit64(n)
        return (median + sigma * libm_tan(math.pi * (u - 0.5))).astype(dtype)

    def log_normal_(self, n, mean=1.0, std=2.0, dtype=np.float32):
        z = self._normal_scalar(n, float(mean), float(std))
        return libm_exp(z).astype(dtype)

    def multinomial(self, probs, num_samples, replacement=False):
        probs = np.atleast_2d(np.asarray(probs))
        rows, k = probs.shape
        out = np.empty((rows, num_samples), np.int64)
        if replacement:
            for i in range(rows):
                cum = np.cumsum(probs[i], dtype=probs.dtype)  # sequential sum in the dtype
                cum = cum / cum[-1]
                cum[-1] = 1
                u = self._unit64(num_samples)
                out[i] = np.searchsorted(cum.astype(_F64), u, side="left")
            return out
        # without replacement: q = exponential_(1) like probs; argmax / topk of probs / q
        q = self.exponential_(probs.size, 1.0, probs.dtype).reshape(probs.shape)
        key = probs / q
        for i in range(rows):
            out[i] = np.argsort(-key[i], kind="stable")[:num_samples]
        return out

    # -- state -------------------------------------------------------------------------------
    def get_state(self):
        """The 5056 bytes of torch.get_rng_state() (CPUGeneratorImplState, x86-64 layout)."""
        st = self._bg.state["state"]
        key, pos = st["key"], int(st["pos"])
        left = 625 - pos
        nxt = 0 if self._fresh else pos  # torch: next_=0 right after seeding, else == pos
        b = bytearray(5056)
        struct.pack_into("<QiiQ", b, 0, self._seed, left, 1, nxt)
        np.frombuffer(b, np.uint64, 624, 24)[:] = key.astype(np.uint64)
        ny = self._next_double
        struct.pack_into("<dddi", b, 5016, 0.0, 0.0 if ny is None else ny, 0.0, ny is not None)
        nf = self._next_float
        struct.pack_into("<f?", b, 5048, 0.0 if nf is None else nf, nf is not None)
        return bytes(b)

    def set_state(self, data):
        b = bytes(data)
        assert len(b) == 5056, len(b)
        seed, left, seeded, nxt = struct.unpack_from("<QiiQ", b, 0)
        if not (seeded and 0 < left <= 624 and nxt <= 624):
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(b, np.uint64, 624, 24).astype(np.uint32)
        bg = np.random.MT19937(0)
        bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 625 - left}}
        self._bg = bg
        self._seed = seed
        self._fresh = left == 1 and nxt == 0
        _, ny, _, nyv = struct.unpack_from("<dddi", b, 5016)
        nf, nfv = struct.unpack_from("<f?", b, 5048)
        self._next_double = ny if nyv else None
        self._next_float = nf if nfv else None


# ==============================================================================================
# 3. what common layers and nn.init draw (torch 2.13 nn/init.py and nn/modules, read not copied)
# Shapes follow torch; arrays come back C-ordered in the parameter's shape.


def fans(shape):
    if len(shape) < 2:
        raise ValueError("fan in/out need >= 2 dims")
    rf = 1
    for s in shape[2:]:
        rf *= s
    return shape[1] * rf, shape[0] * rf


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
    ):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(nonlinearity)


def _n(shape):
    return int(np.prod(shape)) if len(shape) else 1


def init_uniform_(g, shape, a=0.0, b=1.0, dtype=np.float32):
    return g.uniform_(_n(shape), a, b, dtype).reshape(shape)


def init_normal_(g, shape, mean=0.0, std=1.0, dtype=np.float32):
    return g.normal_(_n(shape), mean, std, dtype).reshape(shape)


def kaiming_uniform_(g, shape, a=0, mode="fan_in", nonlinearity="leaky_relu", dtype=np.float32):
    fi, fo = fans(shape)
    fan = fi if mode == "fan_in" else fo
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return init_uniform_(g, shape, -bound, bound, dtype)


def kaiming_normal_(g, shape, a=0, mode="fan_in", nonlinearity="leaky_relu", dtype=np.float32):
    fi, fo = fans(shape)
    fan = fi if mode == "fan_in" else fo
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return init_normal_(g, shape, 0.0, std, dtype)


def xavier_uniform_(g, shape, gain=1.0, dtype=np.float32):
    fi, fo = fans(shape)
    std = gain * math.sqrt(2.0 / float(fi + fo))
    a = math.sqrt(3.0) * std
    return init_uniform_(g, shape, -a, a, dtype)


def xavier_normal_(g, shape, gain=1.0, dtype=np.float32):
    fi, fo = fans(shape)
    return init_normal_(g, shape, 0.0, gain * math.sqrt(2.0 / float(fi + fo)), dtype)


def trunc_normal_(g, shape, mean=0.0, std=1.0, a=-2.0, b=2.0, dtype=np.float32):
    """torch 2.13 nn.init.trunc_normal_: if the mass inside [a, b] is > 0.3, normal_ then
    redraw the WHOLE tensor (a fresh full-size normal_) and keep the new values only where the
    old ones fell outside, until none is outside (bit-exact).  Otherwise uniform proposals with
    a log-acceptance test done in the tensor's dtype by torch's vectorised log (see README)."""
    cdf = lambda x: (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    p = cdf((b - mean) / std) - cdf((a - mean) / std)
    n = _n(shape)
    if p > 0.3:
        lo, hi = dtype(a), dtype(b)
        res = g.normal_(n, mean, std, dtype)
        while True:
            mask = (res < lo) | (res > hi)
            if not mask.any():
                break
            res = np.where(mask, g.normal_(n, mean, std, dtype), res)
        return res.reshape(shape)
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    res = g.uniform_(n, a, b, dtype)

    def logpdf(c):
        c = ((c - dtype(mean)) / dtype(std)).astype(dtype)
        return ((c * c) * dtype(-0.5) - dtype(log_peak)).astype(dtype)

    pending = np.log(g.uniform_(n, 0.0, 1.0, dtype)) > logpdf(res)
    while pending.any():
        cand = g.uniform_(n, a, b, dtype)
        res = np.where(pending, cand, res)
        pending = np.where(pending, np.log(g.uniform_(n, 0.0, 1.0, dtype)) > logpdf(cand), pending)
    return res.reshape(shape)


def orthogonal_(g, shape, gain=1.0, dtype=np.float32):
    """normal_ (exact) then QR: LAPACK rounding differs between torch (MKL) and NumPy."""
    rows = shape[0]
    cols = _n(shape) // rows
    flat = g.normal_(rows * cols, 0.0, 1.0, dtype).reshape(rows, cols)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return (q.astype(dtype) * dtype(gain)).reshape(shape)


def linear_init(g, in_features, out_features, bias=True, dtype=np.float32):
    """nn.Linear(in, out): kaiming_uniform_(W, a=sqrt(5)) -> U(+-1/sqrt(in)) through
    gain*sqrt(3/fan) float arithmetic, then bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    w = kaiming_uniform_(g, (out_features, in_features), a=math.sqrt(5), dtype=dtype)
    if not bias:
        return w, None
    fi, _ = fans(w.shape)
    bound = 1 / math.sqrt(fi) if fi > 0 else 0
    return w, init_uniform_(g, (out_features,), -bound, bound, dtype)


def conv_init(g, in_channels, out_channels, kernel_size, groups=1, bias=True, transposed=False, dtype=np.float32):
    ks = tuple(kernel_size)
    shape = ((in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)) + ks
    w = kaiming_uniform_(g, shape, a=math.sqrt(5), dtype=dtype)
    if not bias:
        return w, None
    fi, _ = fans(shape)
    bound = 1 / math.sqrt(fi) if fi != 0 else 0
    return w, init_uniform_(g, (out_channels,), -bound, bound, dtype)


def embedding_init(g, num, dim, padding_idx=None, dtype=np.float32):
    w = init_normal_(g, (num, dim), dtype=dtype)
    if padding_idx is not None:
        w[padding_idx] = 0
    return w


def rnn_init(
    g, mode, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False, proj_size=0, dtype=np.float32
):
    """nn.RNN/LSTM/GRU: every parameter in registration order gets U(-1/sqrt(H), 1/sqrt(H)).
    Order per layer, per direction: weight_ih, weight_hh, bias_ih, bias_hh, (weight_hr)."""
    gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}[mode]
    gs = gates * hidden_size
    real_h = proj_size if proj_size > 0 else hidden_size
    stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    dirs = 2 if bidirectional else 1
    out = []
    for layer in range(num_layers):
        for d in range(dirs):
            lin = input_size if layer == 0 else real_h * dirs
            sfx = "_reverse" if d == 1 else ""
            shapes = [(f"weight_ih_l{layer}{sfx}", (gs, lin)), (f"weight_hh_l{layer}{sfx}", (gs, real_h))]
            if bias:
                shapes += [(f"bias_ih_l{layer}{sfx}", (gs,)), (f"bias_hh_l{layer}{sfx}", (gs,))]
            if proj_size > 0:
                shapes += [(f"weight_hr_l{layer}{sfx}", (proj_size, hidden_size))]
            out += [(nm, sh) for nm, sh in shapes]
    return [(nm, init_uniform_(g, sh, -stdv, stdv, dtype)) for nm, sh in out]


# ==============================================================================================
# 4. data loading


def int64_seed(g):
    """torch.empty((), dtype=torch.int64).random_(): random64 with the top bit cleared."""
    return int(g.random_(1, np.int64)[0])


def dataloader_epoch(g, n, persistent_first=True, replacement=False, num_samples=None):
    """One epoch of DataLoader(ds, shuffle=True) with the default (global) generator:
    iter(loader) draws _base_seed (int64 random_) from the global generator; the first next()
    enters RandomSampler.__iter__, which draws ANOTHER int64 seed from the global generator and
    shuffles with a fresh torch.Generator seeded with it (randperm, or randint in chunks of 32
    with replacement).  With persistent_workers only the first epoch draws _base_seed.
    Returns (base_seed or None, sampler_seed, order)."""
    base = int64_seed(g) if persistent_first else None
    seed = int64_seed(g)
    pg = TorchGenerator(seed)
    if replacement:
        m = n if num_samples is None else num_samples
        parts = [pg.randint(32, 0, n) for _ in range(m // 32)] + [pg.randint(m % 32, 0, n)]
        return base, seed, np.concatenate(parts)
    m = n if num_samples is None else num_samples
    parts = [pg.randperm(n) for _ in range(m // n)] + [pg.randperm(n)[: m % n]]
    return base, seed, np.concatenate(parts)


def random_split_indices(g, lengths, n):
    """random_split(ds, lengths): fractions -> floor(n*f) plus round-robin remainder, then one
    randperm(n) on the given generator (default: the global one), cut in order."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        ls = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(ls)):
            ls[i % len(ls)] += 1
        lengths = ls
    perm = g.randperm(sum(lengths))
    out, off = [], 0
    for ln in lengths:
        out.append(perm[off : off + ln])
        off += ln
    return out
