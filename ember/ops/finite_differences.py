"""``torch.gradient``: derivatives estimated by finite differences, composed of differentiable ops (so the result
takes gradients as PyTorch's composite does)."""

from __future__ import annotations

from collections.abc import Sequence

from .._tensor import Tensor, _wrap_dim
from .reduction import _axes


def gradient(input: Tensor, *, spacing=1, dim: int | Sequence[int] | None = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of ``input`` along each of ``dim`` (default: every dimension), as ``torch.gradient``:
    second-order central differences inside, one-sided differences of order ``edge_order`` (1 or 2) at the two
    ends. ``spacing`` is one number (the step of every dimension), one number per dimension, or one 1-D tensor of
    sample coordinates per dimension (unevenly spaced samples). Returns one tensor per dimension, in ``dim``'s
    order, with PyTorch's arithmetic order and its errors."""
    ndim = input.dim()
    dims = list(range(ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [_wrap_dim(d, ndim) for d in dims]
    steps = list(spacing) if isinstance(spacing, (list, tuple)) else None
    if steps is not None and dim is None and len(steps) != ndim:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {ndim}', since dim argument was not given, but got a list of length "
                           f"{len(steps)}")
    if steps is not None and dim is not None and len(steps) != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {len(steps)} "
                           f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is not None:
        _axes(dims, ndim)  # (PyTorch's error for a dimension given twice)
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    if steps is None:
        step = spacing.item() if isinstance(spacing, Tensor) else spacing
        steps = [step] * len(dims)
    return tuple(_along_coordinates(input, d, s, edge_order) if isinstance(s, Tensor)
                 else _along_uniform(input, d, s, edge_order) for d, s in zip(dims, steps))


def _slice(x: Tensor, d: int, start: int, stop: int | None = None) -> Tensor:
    """``x[start:stop]`` along dimension ``d`` (negative bounds count from the end)."""
    index = [slice(None)] * x.dim()
    index[d] = slice(start, stop)
    return x[tuple(index)]


def _joined(prepend: Tensor, center: Tensor, append: Tensor, d: int) -> Tensor:
    from .shape import cat

    return cat([prepend, center, append], d)


def _along_uniform(x: Tensor, d: int, h, edge_order: int) -> Tensor:
    """Samples ``h`` apart: (f[i+1] - f[i-1]) / h / 2 inside."""
    center = (_slice(x, d, 2) - _slice(x, d, 0, -2)) / h
    if edge_order == 1:
        prepend = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h
        append = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h
    else:
        prepend = (-1.5 * _slice(x, d, 0, 1) + 2 * _slice(x, d, 1, 2) - 0.5 * _slice(x, d, 2, 3)) / h
        append = (0.5 * _slice(x, d, -3, -2) - 2 * _slice(x, d, -2, -1) + 1.5 * _slice(x, d, -1)) / h
    return _joined(prepend, center / 2, append, d)


def _along_coordinates(x: Tensor, d: int, coords: Tensor, edge_order: int) -> Tensor:
    """Samples at ``coords``: inside, the weights of the second-order difference over the unequal steps
    dx1 = x[i] - x[i-1], dx2 = x[i+1] - x[i]: f[i-1] * -dx2 / (dx1 (dx1 + dx2)) + f[i] * (dx2 - dx1) / (dx1 dx2)
    + f[i+1] * dx1 / (dx2 (dx1 + dx2))."""
    from .cumulative import diff

    dx = diff(coords, 1, 0)
    dx1, dx2 = dx[:-1], dx[1:]
    shape = [1] * x.dim()
    shape[d] = -1
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        prepend = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / dx[0]
        append = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / dx[-1]
    else:
        a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
        prepend = a * _slice(x, d, 0, 1) + b * _slice(x, d, 1, 2) + c * _slice(x, d, 2, 3)
        a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        append = a * _slice(x, d, -3, -2) + b * _slice(x, d, -2, -1) + c * _slice(x, d, -1)
    return _joined(prepend, center, append, d)
