"""PyTorch's CPU generator's words (mt19937) and the draws made of them, compiled (numba): one pass per draw, the
words tempered a block at a time and turned into values while in cache.

Every kernel takes the generator's state as NumPy's ``MT19937`` keeps it (``key``: the 624 words, uint32, changed
in place; ``pos``: the next word's index, 624 when the block must be regenerated first) and returns the new
``pos``; ``ember.random.Generator.compiled_draw`` reads the state out of NumPy's bit generator and writes it back.
The reference, compared bit for bit by the tests, is the NumPy path: ``MT19937.random_raw`` for the words and
``Generator.unit32`` / ``unit64``, ``ember._random_draws.uniform`` / ``bernoulli_scalar`` for the values.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .random import _fma32

_N, _M = 624, 397
_U = np.uint64
_UPPER, _LOWER, _MATRIX_A = _U(0x80000000), _U(0x7FFFFFFF), _U(0x9908B0DF)
_ONE, _ZERO = _U(1), _U(0)
_S1, _S7, _S11, _S15, _S18 = _U(1), _U(7), _U(11), _U(15), _U(18)
_TEMPER_B, _TEMPER_C, _LOW32 = _U(0x9D2C5680), _U(0xEFC60000), _U(0xFFFFFFFF)
_HIGH_SHIFT = _U(32)
_MASK24, _MASK53 = _U((1 << 24) - 1), _U((1 << 53) - 1)
_TWO_M24, _TWO_M53 = np.float32(2.0**-24), 2.0**-53
# words generated (then turned into values) a block at a time: even, so that a random64()'s two words share one
_BLOCK = 1024


@kernel.inline
def _mix(key, i, j, k):
    """The twist's step: key[i] from its upper bit, key[j]'s lower 31 and key[k]."""
    y = (_U(key[i]) & _UPPER) | (_U(key[j]) & _LOWER)
    mag = _MATRIX_A if (y & _ONE) != _ZERO else _ZERO
    key[i] = np.uint32(_U(key[k]) ^ (y >> _S1) ^ mag)


@kernel.inline
def _twist(key):
    """The next 624 words of state, in place."""
    for i in range(_N - _M):
        _mix(key, i, i + 1, i + _M)
    for i in range(_N - _M, _N - 1):
        _mix(key, i, i + 1, i + _M - _N)
    _mix(key, _N - 1, 0, _M - 1)


@kernel.inline
def _fill_words(key, pos, buf, count):
    """The next ``count`` words (tempered: PyTorch's ``random()``) into buf[:count] (uint64); returns pos."""
    i = 0
    while i < count:
        if pos >= _N:
            _twist(key)
            pos = 0
        take = min(_N - pos, count - i)
        for j in range(take):
            y = _U(key[pos + j])
            y ^= y >> _S11
            y ^= (y << _S7) & _TEMPER_B
            y ^= (y << _S15) & _TEMPER_C
            y ^= y >> _S18
            buf[i + j] = y & _LOW32
        i += take
        pos += take
    return pos


@kernel
def words(key, pos, out):
    """``out.size`` words (uint64 out): ``MT19937.random_raw``."""
    return _fill_words(key, pos, out, out.shape[0])


@kernel
def uniform32(key, pos, out, low, high):
    """float32 uniforms on [low, high) (float32 numbers) into out: 24 bits of a word, ``u * high`` when low is 0
    (u itself when high is 1 too), else ``fma(u, high - low, low)`` rounded once; a value equal to high becomes
    low."""
    buf = np.empty(_BLOCK, np.uint64)
    n = out.shape[0]
    span = high - low
    plain = low == 0
    for o in range(0, n, _BLOCK):
        c = min(_BLOCK, n - o)
        pos = _fill_words(key, pos, buf, c)
        for j in range(c):
            v = np.float32(buf[j] & _MASK24) * _TWO_M24
            v = v * high if plain else _fma32(v, span, low)
            out[o + j] = low if v == high else v
    return pos


@kernel.inline
def _fill_random64(key, pos, buf, count):
    """The next ``count`` (at most half of buf) ``random64()`` values (two words, the first one high) into
    buf[:count]; returns pos."""
    pos = _fill_words(key, pos, buf, 2 * count)
    for j in range(count):  # (in place: buf[j] is written after buf[2j] and buf[2j + 1] are read)
        buf[j] = (buf[2 * j] << _HIGH_SHIFT) | buf[2 * j + 1]
    return pos


@kernel
def unit64(key, pos, out):
    """float64 uniforms on [0, 1) into out: 53 bits of a ``random64()``."""
    buf = np.empty(_BLOCK, np.uint64)
    for o in range(0, out.shape[0], _BLOCK // 2):
        c = min(_BLOCK // 2, out.shape[0] - o)
        pos = _fill_random64(key, pos, buf, c)
        for j in range(c):
            out[o + j] = np.float64(buf[j] & _MASK53) * _TWO_M53
    return pos


@kernel
def bernoulli53(key, pos, out, threshold):
    """out[i] (bool) = the 53 low bits of a ``random64()`` < threshold (uint64): ``bernoulli_(p)``'s test."""
    buf = np.empty(_BLOCK, np.uint64)
    for o in range(0, out.shape[0], _BLOCK // 2):
        c = min(_BLOCK // 2, out.shape[0] - o)
        pos = _fill_random64(key, pos, buf, c)
        for j in range(c):
            out[o + j] = (buf[j] & _MASK53) < threshold
    return pos


@kernel
def integers(key, pos, out, span, low, wide):
    """out[i] (int64) = u % span + low (span uint64 below 2**63, low int64, wrapping as int64): u a word, or a
    ``random64()`` when ``wide`` (``randint``'s rule for ranges of 2**28 and more)."""
    buf = np.empty(_BLOCK, np.uint64)
    step = _BLOCK // 2 if wide else _BLOCK
    for o in range(0, out.shape[0], step):
        c = min(step, out.shape[0] - o)
        pos = _fill_random64(key, pos, buf, c) if wide else _fill_words(key, pos, buf, c)
        for j in range(c):
            out[o + j] = np.int64(buf[j] % span) + low
    return pos


@kernel
def scale32(v, std, mean):
    """v = fma(v, std, mean) in place, rounded once to float32 (std, mean float32 numbers)."""
    for i in range(v.shape[0]):
        v[i] = _fma32(v[i], std, mean)
