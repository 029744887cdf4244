"""Gradients that PyTorch's backward formulas select rather than multiply.

Where a function's derivative is 0 on part of its domain (relu's and threshold's masked-out side, hardtanh's and
clamp's clipped elements, the shrink functions' dead zone, hardsigmoid's flat sides, where's and maximum's
losing operand), PyTorch's backward kernels write 0 there (``threshold_backward``: ``x <= t ? 0 : g``) rather than
``g * 0``. The two differ in the bits: ``g * 0`` is -0.0 for a negative ``g`` and NaN for an infinite or NaN ``g``,
where PyTorch's gradient is +0.0. Every such gradient here goes through ``selected_gradient``, the one rule.
"""

from __future__ import annotations

from .._backend import xp

# the signed integer type of each element width: a select as a bitwise and of g's bits with all ones or zeros
_BITS_OF_WIDTH = {2: xp.dtype(xp.int16), 4: xp.dtype(xp.int32), 8: xp.dtype(xp.int64)}


def selected_gradient(g, passes):
    """``g`` where ``passes`` (a bool array broadcasting against ``g``), else +0.0 of ``g``'s dtype, as PyTorch's
    backward kernels select: never ``g * 0`` (-0.0 for a negative ``g``, NaN for an infinite or NaN one). ``g`` may
    be a recorded array (create_graph: the select is recorded, as PyTorch's formulas record theirs).

    On a plain array the select is g's bits and-ed with -passes (all ones or all zeros, in an integer type of g's
    width: +0.0's bits are zeros): the same bits as ``where(passes, g, 0)``, whose NumPy loop branches per element
    and on a mask like ReLU's runs 5-10 times slower than the product it replaces."""
    bits = _BITS_OF_WIDTH.get(g.dtype.itemsize) if g.__class__ is xp.ndarray else None
    if bits is None:  # (a recorded array; complex128)
        return xp.where(passes, g, zero_of(g.dtype))
    keep = xp.asarray(passes).astype(bits)  # (an array also where comparing 0-d arrays gave a NumPy bool)
    xp.negative(keep, out=keep)
    if keep.shape == g.shape:
        return xp.bitwise_and(keep, g.view(bits), out=keep).view(g.dtype)
    return xp.bitwise_and(keep, g.view(bits)).view(g.dtype)


def selected_product(g, slope):
    """``g * slope`` where ``slope`` (a piecewise-constant derivative, f') is not 0, else +0.0: the gradient of a
    piecewise-linear function whose PyTorch kernel selects 0 where f' is 0 (``selected_gradient``). A bool
    ``slope`` is f' of slopes 1 and 0 (relu's, threshold's, hardtanh's): ``g`` itself where it holds, no product."""
    if slope.dtype == bool:
        return selected_gradient(g, slope)
    return selected_gradient(g * slope, slope != 0)


_ZEROS: dict = {}


def zero_of(dtype):
    """A 0-d zero of ``dtype``, made once (read-only): a ufunc given the Python number 0 converts it on every call,
    which on a small array costs more than the ufunc's own work."""
    zero = _ZEROS.get(dtype)
    if zero is None:
        zero = _ZEROS[dtype] = xp.zeros((), dtype)
        zero.flags.writeable = False
    return zero
