"""Data movement that is not a view: roll, repeat_interleave.

Each output element is one input element, so backward moves the gradient back
(roll by the opposite shift; repeat_interleave sums each element's copies).
"""

from __future__ import annotations

from .._backend import xp
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node


class Roll(Node):
    def forward(self, x, shifts, dims):
        self.shifts, self.dims, self.shape = shifts, dims, x.shape
        if dims is None:  # roll the flattened tensor, then restore the shape
            return xp.roll(x.reshape(-1), shifts).reshape(x.shape)
        return xp.roll(x, shifts, dims)

    def backward(self, g):
        if self.dims is None:
            return (xp.roll(g.reshape(-1), -self.shifts[0]).reshape(self.shape),)
        return (xp.roll(g, tuple(-s for s in self.shifts), self.dims),)


def roll(x: Tensor, shifts, dims=None) -> Tensor:
    """Shift elements along ``dims`` by ``shifts`` (ints or tuples of equal length), wrapping around.

    Without ``dims`` the tensor is flattened, rolled and reshaped back.
    """
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(x, shifts=shifts, dims=None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if x._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return Roll.apply(x, shifts=shifts, dims=tuple(_wrap_dim(d, x._data.ndim) for d in dims))
