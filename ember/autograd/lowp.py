"""Half-precision inputs (bfloat16, float16) of ops that PyTorch's CPU kernels compute in float32.

PyTorch's CPU kernels for reductions, matmul/linear/convolution, softmax, normalizations, losses and the
activation functions load bfloat16/float16 values into float32, compute (and accumulate) there and round
the result once. NumPy's own half-precision loops round after every step (and ml_dtypes' bfloat16 sum
accumulates in bfloat16), so a node class that sets ``float32_compute = True`` gets float32 arrays in
``forward``/``backward`` and its float32 results and gradients are rounded to the inputs' dtype, once.
Elementwise arithmetic (add, mul, exp, ...) needs none of this: one ufunc computing in float32 and
rounding is what NumPy's half loops and ml_dtypes already do.
"""

from __future__ import annotations

from .._backend import xp
from .._dtype import np_kind
from .._kernels.policy import policy


def widen(arrays: list) -> tuple:
    """(half dtype, arrays with that dtype's arrays as float32) when every floating array has the same
    2-byte dtype. Mixed with float32 arrays (a bfloat16 input through a float32 layer's parameters): (None,
    arrays with the half ones as float32): the op computes in float32 and returns float32, which its caller
    rounds (PyTorch's mixed-dtype kernels), never with half-precision buffers made from the half input.
    (None, arrays) otherwise."""
    low, mixed = None, False
    for a in arrays:
        if isinstance(a, xp.ndarray):
            dt = a.dtype
            if dt.itemsize != 2:  # (every op on float32/float64 arrays: decided without np_kind's call)
                if dt.kind in "fc":
                    if dt != xp.float32:
                        return None, arrays
                    mixed = True
            elif np_kind(dt) in "fc":
                if low is not None and low != dt:
                    return None, arrays
                low = dt
    if low is None:
        return None, arrays
    return (None if mixed else low), to_float32(arrays, low)


def to_float32(arrays, low) -> list:
    """``arrays`` with those of dtype ``low`` as float32 (other entries unchanged), laid out as PyTorch lays out a
    pointwise result of them: NumPy's own order for an expanded array (a zero stride) is not PyTorch's."""
    return [(_widened(a) if isinstance(a, xp.ndarray) and a.dtype == low else a) for a in arrays]


def _widened(a):
    if 0 in a.strides and a.size > 1:
        from .._meta import kept_layout

        return kept_layout(a.astype(xp.float32, order="C"), a)
    return converted(a, xp.dtype(xp.float32))


def converted(a, dtype):
    """``a.astype(dtype)``; float32 to bfloat16 and back, for a C-contiguous array from
    ``policy.min_compiled_elements`` on, by the compiled bit conversion (``_kernels/bfloat16.py``: ml_dtypes' bits,
    in a third of its time), where compiled kernels run. Autocast's casts and the float32 compute of bfloat16
    inputs (``widen``, ``narrow``) pay these conversions on every op."""
    src = a.dtype
    if (src.itemsize == 2) == (dtype.itemsize == 2) or not a.flags.c_contiguous or a.ndim == 0:
        return a.astype(dtype)
    if (src.name, dtype.name) not in _BFLOAT16_PAIRS or not policy.compiles(a.size, policy.min_compiled_elements):
        return a.astype(dtype)
    from .._kernels import bfloat16

    out = xp.empty(a.shape, dtype)
    if src.itemsize == 4:
        bfloat16.to_bfloat16(a.reshape(-1).view(xp.uint32), out.reshape(-1).view(xp.uint16))
    else:
        bfloat16.from_bfloat16(a.reshape(-1).view(xp.uint16), out.reshape(-1).view(xp.uint32))
    return out


_BFLOAT16_PAIRS = {("float32", "bfloat16"), ("bfloat16", "float32")}


def narrow(out, low):
    """``out`` (an array, a scalar, None or a tuple of them) with its float32 arrays rounded to ``low``."""
    if isinstance(out, (tuple, list)):
        return type(out)(narrow(o, low) for o in out)
    if isinstance(out, (xp.ndarray, xp.generic)) and out.dtype == xp.float32:
        with xp.errstate(over="ignore"):  # a result past float16's range rounds to inf silently, as PyTorch's
            return converted(out, low) if out.__class__ is xp.ndarray else out.astype(low)
    return out


def half_positions(arrays) -> tuple:
    """(the half dtype, the positions of ``arrays`` holding it): where widen made float32 copies of a mixed op's
    half-precision inputs."""
    at = tuple(i for i, a in enumerate(arrays) if isinstance(a, xp.ndarray) and a.dtype.itemsize == 2
               and np_kind(a.dtype) in "fc")
    return arrays[at[0]].dtype, at


def narrow_at(grads, low, at: tuple, rounded=narrow):
    """``grads`` (a tuple, one per input) with the float32 gradients at positions ``at`` rounded to ``low``
    (``rounded(g, low)``: ``narrow``, or, for the recorded gradients of create_graph, a recorded cast)."""
    if not isinstance(grads, (tuple, list)):
        return rounded(grads, low) if 0 in at else grads
    return type(grads)(rounded(g, low) if i in at else g for i, g in enumerate(grads))
