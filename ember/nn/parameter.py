"""``Parameter``: a tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

from .._backend import xp
from .._creation import as_array
from .._tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad by default; assigning one to a Module attribute registers it.

    ``Parameter(t)`` shares ``t``'s storage (as in PyTorch). Ops on parameters
    return plain tensors.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        if data is None:
            array = xp.empty(0, dtype=xp.float32)
        else:
            array = data._data if isinstance(data, Tensor) else as_array(data)
        self._init(array, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        out = Parameter(self._data.copy(), self._requires_grad)  # PyTorch's copy leaves .grad behind
        memo[id(self)] = out
        return out

