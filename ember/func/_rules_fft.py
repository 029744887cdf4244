"""Batching rules of ``torch.fft``: each transform runs once on the batch value, over the example's dims.

A transform's ``dim`` names dims of an example; given as negative dims they name the same dims of the batch value
(batch first), so the batch dim is never transformed. Where the dims are left to the default of "all of them" (or
the last ``len(s)``), the rule spells them out for the example.
"""

from __future__ import annotations

from ._batched import loop, peel, rule, wrap
from ._rules import _arg, _set_arg, logical_ndim, neg_dim, neg_dims

_ONE = ("fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "fft.hfft", "fft.ihfft")
_TWO = ("fft.fft2", "fft.ifft2", "fft.rfft2", "fft.irfft2", "fft.hfft2", "fft.ihfft2")
_N = ("fft.fftn", "fft.ifftn", "fft.rfftn", "fft.irfftn", "fft.hfftn", "fft.ihfftn")


def _batched_input(name, op, level, args, kwargs):
    """The input's batch value and its example's dims; None where only the input is not batched at ``level``
    (then the loop runs)."""
    value, batched = peel(args[0], level)
    if not batched or any(peel(a, level)[1] for a in (*args[1:], *kwargs.values())):
        return None
    return value, logical_ndim(args[0], level)


@rule(*_ONE)
def one_dim(name, op, level, args, kwargs):
    """``(input, n, dim=-1, norm)``."""
    found = _batched_input(name, op, level, args, kwargs)
    if found is None:
        return loop(name, op, level, args, kwargs)
    value, ndim = found
    args, kwargs = _set_arg(args[1:], kwargs, 1, "dim", neg_dim(_arg(args, kwargs, 2, "dim", -1), ndim))
    return wrap(op(value, *args, **kwargs), level)


@rule(*_TWO, *_N)
def several_dims(name, op, level, args, kwargs):
    """``(input, s, dim, norm)``: ``dim`` defaults to the last two dims (``*2``) or, for ``*n``, the last ``len(s)``
    dims, or all the example's dims."""
    found = _batched_input(name, op, level, args, kwargs)
    if found is None:
        return loop(name, op, level, args, kwargs)
    value, ndim = found
    s = _arg(args, kwargs, 1, "s")
    dim = _arg(args, kwargs, 2, "dim", (-2, -1) if name in _TWO else None)
    if dim is None:
        dim = tuple(range(-(ndim if s is None else len(s)), 0))
    args, kwargs = _set_arg(args[1:], kwargs, 1, "dim", neg_dims(tuple(dim) if not isinstance(dim, int) else dim,
                                                               ndim))
    return wrap(op(value, *args, **kwargs), level)


@rule("fft.fftshift", "fft.ifftshift")
def shift(name, op, level, args, kwargs):
    """``(input, dim=None)``: all the example's dims by default."""
    found = _batched_input(name, op, level, args, kwargs)
    if found is None:
        return loop(name, op, level, args, kwargs)
    value, ndim = found
    dim = _arg(args, kwargs, 1, "dim")
    dims = tuple(range(-ndim, 0)) if dim is None else neg_dims(dim if isinstance(dim, int) else tuple(dim), ndim)
    return wrap(op(value, dims), level)
