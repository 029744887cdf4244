"""``Parameter``: a tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

from .. import _creation
from .._backend import xp
from .._creation import as_array
from .._shown_name import class_at, ember_path, shown_as_pytorchs
from .._tensor import REFUSED_BY_FACTORY, Tensor, check_can_require_grad
from .._tensor_pickle import deepcopy_array
from .._uninitialized import uninitialized_error, unmaterialized


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


def is_lazy(tensor: object) -> bool:
    """Whether ``tensor`` is an uninitialised parameter or buffer (a lazy module's, before its first forward)."""
    return isinstance(tensor, (UninitializedParameter, UninitializedBuffer))


def materialize(tensor: Tensor, shape, dtype=None, device=None) -> None:
    """Give an uninitialised parameter or buffer storage of ``shape`` (uninitialised values), in place: the same
    object, so an optimizer built before a lazy module's first forward steps it, which becomes the plain
    ``Parameter`` or ``Tensor`` it stands for (as PyTorch's ``materialize`` and ``cls_to_become``)."""
    tensor.data = _creation.empty(tuple(shape), dtype=dtype or tensor.dtype, device=device or tensor.device)
    tensor.__class__ = Parameter if isinstance(tensor, Parameter) else Tensor


def _refuse_uninitialized(tensor: Tensor, method: str) -> ValueError:
    """PyTorch's error for a tensor method (``method``, as PyTorch shows it) used on an uninitialised parameter or
    buffer."""
    return uninitialized_error(type(tensor).__name__, method)


def _refused(method: str, python_level: bool = False):
    """A method of an uninitialised parameter or buffer that raises PyTorch's ValueError naming ``method`` (as
    PyTorch names it: a method of its C base, or, ``python_level``, a function of its Python ``Tensor``)."""

    def refuse(self, *args, **kwargs):
        raise _refuse_uninitialized(self, f"<function Tensor.{method} at {hex(id(refuse))}>" if python_level
                                    else f"<method '{method}' of 'torch._C.TensorBase' objects>")

    refuse.__name__ = method
    return refuse


class _UninitializedMethods:
    """What an uninitialised parameter or buffer refuses, as PyTorch's: its ``shape`` (PyTorch's RuntimeError: a
    lazy model's shapes are unknown before its first forward, not ``(0,)``), counting or laying out its elements
    (``numel``: a parameter count before the first forward is PyTorch's ValueError, not 0; ``dim``, ``stride``,
    ``is_contiguous``, ``element_size``, ``len()``, iteration), reading its values (``item``, ``tolist``,
    ``numpy``, ``storage``, ``data_ptr``), making a tensor from it (``new_zeros`` & co., ``contiguous``,
    ``detach_``), ``requires_grad_`` and ``share_memory_``. Its ``size()``, ``dtype``,
    ``device``, ``data``, ``ndim`` and the conversions (``to``, ``float``, ...) answer as PyTorch's do. The ops
    (``torch.add(p, 1)``, ``p * 2``, ``p.clone()``) raise PyTorch's ValueError: its storage refuses them
    (``ember/_uninitialized.py``). Difference from PyTorch: the error names the array operation that was refused
    (``<built-in method add>``), not PyTorch's function, and an op that checks its arguments before computing
    (an in-place op on a leaf, indexing out of its bounds) raises that check's error instead."""

    __slots__ = ()

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    numel = _refused("numel")
    nelement = numel
    dim = ndimension = __iter__ = _refused("dim")  # (PyTorch's iteration reads dim() first)
    stride = _refused("stride")
    is_contiguous = _refused("is_contiguous")
    element_size = _refused("element_size")
    item = _refused("item")
    tolist = _refused("tolist")
    numpy = _refused("numpy")
    data_ptr = _refused("data_ptr")
    untyped_storage = _refused("untyped_storage")
    storage = _refused("storage", python_level=True)
    __len__ = _refused("__len__", python_level=True)
    __array__ = _refused("__array__", python_level=True)
    # (a new tensor of its dtype and device, or itself: PyTorch refuses them as every method)
    new_zeros, new_ones, new_empty = _refused("new_zeros"), _refused("new_ones"), _refused("new_empty")
    new_full, new_tensor = _refused("new_full"), _refused("new_tensor")
    new_empty_strided = _refused("new_empty_strided")
    contiguous, detach_ = _refused("contiguous"), _refused("detach_")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        raise _refuse_uninitialized(self, "<method 'requires_grad_' of 'torch._C.TensorBase' objects>")

    @property
    def data(self) -> Tensor:
        """A plain tensor of no elements, as PyTorch's (its storage, which ops refuse, stays this tensor's)."""
        return Tensor._make(self._data.view(xp.ndarray))

    @data.setter
    def data(self, value: Tensor) -> None:
        Tensor.data.fset(self, value)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, proto):
        """``pickle``: rebuilt as a new uninitialised tensor (its storage, which ops refuse, made again), as
        PyTorch's. Difference from PyTorch: the dtype comes back too (PyTorch's loads as float32)."""
        return _rebuild_uninitialized, (ember_path(type(self)), self.requires_grad, self.dtype)

    def __deepcopy__(self, memo):
        out = type(self)(self.requires_grad, self.device, self.dtype)  # (a copy is still to be initialised)
        memo[id(self)] = out
        return out

    def share_memory_(self) -> Tensor:
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")


class UninitializedParameter(_UninitializedMethods, Parameter):
    """A parameter whose shape a lazy module infers at its first forward (``nn.LazyLinear``'s weight): a
    ``Parameter`` of no elements until it is materialised, when its class becomes ``Parameter`` (the same object, so
    an optimizer built before the first forward steps it), as PyTorch's."""

    __slots__ = ()

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None) -> UninitializedParameter:
        return Tensor.__new__(cls)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        super().__init__(_creation.empty(0, dtype=dtype, device=device), requires_grad)
        self._data = unmaterialized(self._data, "UninitializedParameter")  # (ops on it refuse: _uninitialized.py)



class UninitializedBuffer(_UninitializedMethods, Tensor):
    """A buffer whose shape a lazy module infers at its first forward (``nn.LazyBatchNorm1d``'s running mean): a
    tensor of no elements until it is materialised, when its class becomes ``Tensor``, as PyTorch's."""

    __slots__ = ()

    def __init__(self, requires_grad: bool = False, device=None, dtype=None) -> None:
        self._init(_creation.empty(0, dtype=dtype, device=device)._data, requires_grad)
        self._data = unmaterialized(self._data, "UninitializedBuffer")


def _rebuild_uninitialized(cls, requires_grad: bool, dtype) -> Tensor:
    """An unpickled uninitialised parameter or buffer (``_UninitializedMethods.__reduce_ex__``)."""
    return class_at(cls)(requires_grad, dtype=dtype) if isinstance(cls, str) else cls(requires_grad, dtype=dtype)
