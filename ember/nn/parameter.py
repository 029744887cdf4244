"""``Parameter``: a tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

from .. import _creation
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
        if is_lazy(self):
            return "<UninitializedParameter>"
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        out = Parameter(Tensor._make(deepcopy_array(self, memo)), self._requires_grad)  # PyTorch's leaves .grad
        if is_lazy(self):  # (a lazy module's copy is still to be initialised, as PyTorch's)
            out.__dict__[_SHAPE_TO_INFER] = True
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


# The mark of a tensor whose shape a lazy module infers at its first forward (``nn.LazyLinear``'s weight).
_SHAPE_TO_INFER = "_shape_to_infer"


def is_lazy(tensor: object) -> bool:
    """Whether ``tensor`` is an uninitialised parameter or buffer (a lazy module's, before its first forward)."""
    return isinstance(tensor, Tensor) and tensor.__dict__.get(_SHAPE_TO_INFER, False)


def materialize(tensor: Tensor, shape, dtype=None, device=None) -> None:
    """Give an uninitialised parameter or buffer storage of ``shape`` (uninitialised values), in place: the same
    object, so an optimizer built before a lazy module's first forward steps it (as PyTorch's ``materialize``)."""
    tensor.data = _creation.empty(tuple(shape), dtype=dtype or tensor.dtype, device=device or tensor.device)
    del tensor.__dict__[_SHAPE_TO_INFER]


class _Uninitialized(type):
    """``isinstance(t, UninitializedParameter)``: ``t`` is a ``Parameter`` whose shape is still to be inferred."""

    _kind: type

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, cls._kind) and is_lazy(instance)


def _uninitialized(kind: type, requires_grad: bool, device, dtype) -> Tensor:
    empty = _creation.empty(0, dtype=dtype, device=device)
    tensor = Parameter(empty, requires_grad) if kind is Parameter else empty.requires_grad_(requires_grad)
    tensor.__dict__[_SHAPE_TO_INFER] = True
    return tensor


class UninitializedParameter(metaclass=_Uninitialized):
    """A parameter whose shape a lazy module infers at its first forward (``nn.LazyLinear``'s weight).

    Difference from PyTorch: the object made is a ``Parameter`` of no elements, marked uninitialised
    (``isinstance(p, UninitializedParameter)`` is true until it is materialised); PyTorch's is an instance of this
    class that switches its own class to ``Parameter`` when materialised, which ember does not do. Both keep the
    object, so an optimizer built before the first forward steps the materialised parameter.
    """

    _kind = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None) -> Parameter:  # type: ignore[misc]
        return _uninitialized(Parameter, requires_grad, device, dtype)


class UninitializedBuffer(metaclass=_Uninitialized):
    """A buffer whose shape a lazy module infers at its first forward (``nn.LazyBatchNorm1d``'s running mean): a
    tensor of no elements marked uninitialised, as ``UninitializedParameter``."""

    _kind = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None) -> Tensor:  # type: ignore[misc]
        return _uninitialized(Tensor, requires_grad, device, dtype)
