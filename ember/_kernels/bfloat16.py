"""float32 <-> bfloat16 conversion in one pass over the bits (numba): the counterparts of ml_dtypes' ``astype``
(the reference, a per-element conversion function called through NumPy's casting loop, about 1 ms per million
elements each way). bfloat16 is float32's upper 16 bits, so widening is a shift; narrowing rounds the lower 16 bits
to nearest, ties to even, as ml_dtypes and PyTorch round, and a NaN becomes the quiet NaN of its sign (0x7FC0
with the sign bit: ml_dtypes' bits, its payload dropped). Both give the reference's bits, so no result changes.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

_EXPONENT = np.uint32(0x7F800000)
_MANTISSA = np.uint32(0x007FFFFF)
_ROUND = np.uint32(0x7FFF)
_SIGN = np.uint32(0x8000)
_QUIET_NAN = np.uint32(0x7FC0)


@kernel
def to_bfloat16(bits, out):
    """out (uint16) = the bfloat16 bits of the float32 values whose bits are ``bits`` (uint32): 1-D arrays."""
    for i in range(bits.shape[0]):
        u = bits[i]
        if (u & _EXPONENT) == _EXPONENT and (u & _MANTISSA) != 0:  # NaN: the quiet NaN of its sign
            out[i] = np.uint16(((u >> np.uint32(16)) & _SIGN) | _QUIET_NAN)
        else:
            out[i] = np.uint16((u + _ROUND + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))


@kernel
def from_bfloat16(bits, out):
    """out (uint32) = the float32 bits of the bfloat16 values whose bits are ``bits`` (uint16): 1-D arrays."""
    for i in range(bits.shape[0]):
        out[i] = np.uint32(bits[i]) << np.uint32(16)
