"""Gradients that PyTorch's backward formulas select rather than multiply.

Where a function's derivative is 0 on part of its domain (relu's and threshold's masked-out side, hardtanh's and
clamp's clipped elements, the shrink functions' dead zone, hardsigmoid's flat sides, where's and maximum's
losing operand), PyTorch's backward kernels write 0 there (``threshold_backward``: ``x <= t ? 0 : g``) rather than
``g * 0``. The two differ in the bits: ``g * 0`` is -0.0 for a negative ``g`` and NaN for an infinite or NaN ``g``,
where PyTorch's gradient is +0.0. Every such gradient here goes through ``selected_gradient``, the one rule.
"""

from __future__ import annotations

from .._backend import xp


def selected_gradient(g, passes):
    """``g`` where ``passes`` (a bool array broadcasting against ``g``), else +0.0 of ``g``'s dtype, as PyTorch's
    backward kernels select: never ``g * 0`` (-0.0 for a negative ``g``, NaN for an infinite or NaN one). ``g`` may
    be a recorded array (create_graph: the select is recorded, as PyTorch's formulas record theirs)."""
    return xp.where(passes, g, zero_of(g.dtype))


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
