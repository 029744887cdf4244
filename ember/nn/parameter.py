"""``Parameter``: a tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

from .._backend import xp
from .._creation import as_array
from .._shown_name import shown_as_pytorchs
from .._tensor import REFUSED_BY_FACTORY, Tensor, check_can_require_grad
from .._tensor_pickle import deepcopy_array


@shown_as_pytorchs("torch.nn.parameter")
class Parameter(Tensor):
    """A leaf tensor that requires grad by default; assigning one to a Module attribute registers it.

    ``Parameter(t)`` shares ``t``'s storage (as in PyTorch). Ops on parameters
    return plain tensors.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad: bool = True):
        # A DTensor's parameter is a DTensor too (ember.distributed.tensor), as PyTorch's is.
        as_parameter = getattr(type(data), "_as_parameter", None)
        return as_parameter(data) if as_parameter is not None and cls is Parameter else super().__new__(cls)

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        if data is None:
            array = xp.empty(0, dtype=xp.float32)
        else:
            array = data._data if isinstance(data, Tensor) else as_array(data)
        self._init(array)
        if isinstance(data, Tensor) and data._vc.__class__ is not list:
            self._vc = data._vc  # an inference tensor's parameter is one too (PyTorch's shares the tensor)
        if requires_grad:
            check_can_require_grad(self, REFUSED_BY_FACTORY)
            self.requires_grad = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        out = Parameter(Tensor._make(deepcopy_array(self, memo)), self._requires_grad)  # PyTorch's leaves .grad
        memo[id(self)] = out
        return out



@shown_as_pytorchs("torch.nn.parameter")
class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned to one of its attributes:
    ``self.mask = nn.Buffer(t, persistent=False)`` is ``self.register_buffer("mask", t, persistent=False)``.

    ``Buffer(t)`` shares ``t``'s storage and keeps its ``requires_grad`` (as in PyTorch); ``persistent`` says
    whether it goes into ``state_dict``. Difference from PyTorch: its type is ``Buffer`` (PyTorch returns a plain
    Tensor that ``isinstance(x, nn.Buffer)`` recognises); ops on it return plain tensors in both.
    """

    __slots__ = ("persistent",)

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        if data is None:
            self._init(xp.empty(0, dtype=xp.float32))
        else:
            self._init(data._data if isinstance(data, Tensor) else as_array(data),
                       isinstance(data, Tensor) and data.requires_grad)
        self.persistent = persistent

    def __deepcopy__(self, memo):
        out = Buffer(Tensor._make(deepcopy_array(self, memo)), persistent=self.persistent)
        out.requires_grad = self.requires_grad
        memo[id(self)] = out
        return out
