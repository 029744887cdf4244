"""PyTorch's legacy tensor constructors: ``Tensor(2, 3)``, ``FloatTensor([1, 2])``, ``LongTensor(x)``, and
``Tensor.type()``.

``Tensor(*sizes)`` is an uninitialised tensor of the default float dtype (not a
tensor holding the numbers 2 and 3); ``Tensor(data)`` converts ``data`` to the
default float dtype (a float64 NumPy array becomes float32, a list of ints
float32), and ``Tensor(t)`` is a view of ``t`` (with its history where it requires grad). The typed
constructors (``FloatTensor``, ``LongTensor``, ...) do the same in their own
dtype, and ``isinstance(x, FloatTensor)`` asks whether ``x`` is a float32 tensor,
as PyTorch answers it. They are classes only for ``isinstance`` and ``type()``:
what they construct is an ordinary ``Tensor``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from . import _dtype
from ._backend import xp
from ._device import check_device
from ._size import Size
from ._tensor import Tensor
from .storage import TypedStorage


def _dim(a) -> int | None:
    """``a`` as one size of ``Tensor(*sizes)``, or None when it is not one. PyTorch takes any integer that is not a
    bool: a Python int, a NumPy integer (gymnasium's ``action_space.n``), a 0-d integer array or tensor."""
    if type(a) is int:
        return a
    if isinstance(a, (bool, xp.bool_)) or not hasattr(type(a), "__index__"):  # (data: a list, a float)
        return None
    if isinstance(a, Tensor):
        integral = not (a.dtype.is_floating_point or a.dtype.is_complex or a.dtype == _dtype.bool_)
        return int(a.item()) if a.ndim == 0 and integral else None
    try:
        return operator.index(a)
    except TypeError:
        return None


def _sizes(args: tuple) -> tuple | None:
    """The sizes ``args`` give when they are ``Tensor(*sizes)``'s (a torch.Size or integers), else None."""
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    dims = []
    for a in args:
        d = _dim(a)
        if d is None:
            return None
        dims.append(d)
    return tuple(dims) if dims else None


def _tensor_source(data: Tensor, dtype: _dtype.dtype, name: str, typed: bool):
    """``name(t)``: a tensor sharing ``t``'s storage (a typed constructor asks for its own dtype)."""
    if typed and data._data.dtype != dtype.np:
        raise TypeError(f"{name}(tensor) expected a {dtype.name} tensor (got {data.dtype.name}); "
                        f"convert it with tensor.to(torch.{dtype.name})")
    return data._data, data


def legacy_array(args: tuple, device, dtype: _dtype.dtype, name: str, typed: bool):
    """The array ``name(*args, device=device)`` holds, PyTorch's legacy rules (see the module docstring).

    Returns ``(array, source)``: ``source`` is the tensor whose storage the result shares, or None.
    """
    from ._creation import _size, as_array, is_other_sequence, warn_if_arrays_inside, warn_if_read_only

    check_device(device)
    if not args:
        return xp.empty((0,), dtype=dtype.np), None
    if len(args) == 1 and isinstance(args[0], Tensor):  # a tensor, before sizes: Tensor(torch.tensor(3)) is 0-d
        return _tensor_source(args[0], dtype, name, typed)
    sizes = _sizes(args)
    if sizes is not None:
        return xp.empty(_size(sizes), dtype=dtype.np), None
    if len(args) == 1:
        data = args[0]
        if isinstance(data, TypedStorage):  # a tensor over the storage's memory (ByteTensor(ByteStorage(...)))
            if data.dtype != dtype:
                raise RuntimeError(f"Expected a Storage of type {_dtype.SCALAR_TYPE_NAMES[dtype.name]} or an "
                                   f"UntypedStorage, but got type {_dtype.SCALAR_TYPE_NAMES[data.dtype.name]} "
                                   "for argument 1 'storage'")
            return data._elements(), None
        if isinstance(data, str):
            raise TypeError(f"new(): invalid data type 'str' in {name}()")
        if isinstance(data, (Sequence, xp.ndarray)) and not isinstance(data, (bytes, bytearray)) or \
                is_other_sequence(data):  # (a pandas Series: PyTorch reads any sequence)
            # A copy, converted straight from the data (LongTensor([1.7]) truncates to 1, as PyTorch).
            warn_if_arrays_inside(data)
            warn_if_read_only(data)
            return xp.array(as_array(data, dtype), copy=True), None
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__}); "
                        f"{name}(n) with an int n makes an uninitialised tensor of size n")
    kinds = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({kinds}); expected sizes "
                    "(ints), a torch.Size, a sequence of data, or a tensor")


def _alias(source: Tensor) -> Tensor:
    """PyTorch's ``Tensor(t)``: a view of all of ``t`` (its ``_base``), with ``t``'s history where ``t`` requires
    grad (``AliasBackward0``: an unrolled optimisation that rebuilds its weights as ``torch.Tensor(p)``
    differentiates through them); in-place changes through either bump the same version."""
    return source[...]


def tensor_init(self: Tensor, args: tuple, device) -> None:
    """``Tensor.__init__``: the legacy constructor in the default float dtype."""
    array, source = legacy_array(args, device, _dtype.get_default_dtype(), "Tensor", typed=False)
    if source is None:
        self._init(array)
        return
    alias = _alias(source)  # (made as any view is; this tensor, already made by Tensor(...), takes its fields)
    for field in Tensor.__slots__:
        if field not in ("__weakref__", "__dict__") and hasattr(alias, field):
            setattr(self, field, getattr(alias, field))


class _LegacyTensorType(type):
    """The metaclass of ``FloatTensor`` and friends: construction and ``isinstance`` by dtype."""

    dtype: _dtype.dtype

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls

    def __call__(cls, *args, size=None, device=None) -> Tensor:
        if size is not None:  # (PyTorch's size overload by keyword: FloatTensor(size=(2, 3)))
            if args or not isinstance(size, (tuple, list)):
                got = ", ".join([type(a).__name__ for a in args] + [f"size={type(size).__name__}"])
                raise TypeError(f"new() received an invalid combination of arguments - got ({got}, ), but expected "
                                "(tuple of ints size, *, torch.device device = None)")
            args = (Size(size),)
        array, source = legacy_array(args, device, cls.dtype, cls.__name__, typed=True)
        return Tensor._make(array) if source is None else _alias(source)

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_type(name: str, dtype: _dtype.dtype) -> _LegacyTensorType:
    doc = (f"``torch.{name}``: ``{name}(*sizes)`` is uninitialised, ``{name}(data)`` converts data to "
           f"{dtype.name}; ``isinstance(x, {name})`` is True for {dtype.name} tensors.")
    return _LegacyTensorType(name, (), {"dtype": dtype, "__doc__": doc, "__module__": "ember"})


FloatTensor = _legacy_type("FloatTensor", _dtype.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dtype.float64)
HalfTensor = _legacy_type("HalfTensor", _dtype.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", _dtype.bfloat16)
ByteTensor = _legacy_type("ByteTensor", _dtype.uint8)
CharTensor = _legacy_type("CharTensor", _dtype.int8)
ShortTensor = _legacy_type("ShortTensor", _dtype.int16)
IntTensor = _legacy_type("IntTensor", _dtype.int32)
LongTensor = _legacy_type("LongTensor", _dtype.int64)
BoolTensor = _legacy_type("BoolTensor", _dtype.bool_)



class _CudaTensorType(type):
    """``torch.cuda.FloatTensor`` and friends: no tensor is one, and making one is PyTorch's TypeError."""

    def __instancecheck__(cls, obj) -> bool:
        return False

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"type torch.cuda.{cls.__name__} not available: ember computes on the CPU "
                        "(torch.cuda.is_available() is False); use the CPU type, e.g. torch.FloatTensor")

    def __repr__(cls) -> str:
        return f"<class 'torch.cuda.{cls.__name__}'>"


def cuda_types() -> dict[str, _CudaTensorType]:
    """The ``torch.cuda`` legacy types, by name (for ``ember.cuda``)."""
    return {t.__name__: _CudaTensorType(t.__name__, (), {"__module__": "ember.cuda", "dtype": t.dtype})
            for t in _TYPES}


_TYPES = (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor, IntTensor,
          LongTensor, BoolTensor)
_TYPE_BY_STRING = {f"torch.{t.__name__}": t for t in _TYPES}


def set_default_tensor_type(t) -> None:
    """``torch.set_default_tensor_type(torch.DoubleTensor)`` (or its name): the default float dtype becomes
    that type's; a CUDA type is PyTorch's TypeError. Deprecated: warns once, as PyTorch."""
    from . import _warnings

    _warnings.warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                        module="torch")  # from PyTorch's Python function, its C++ core's once-per-process warning
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available: ember computes on the CPU")
        if t not in _TYPE_BY_STRING:
            raise TypeError(f"invalid type: '{t}'")
        t = _TYPE_BY_STRING[t]
    if isinstance(t, _CudaTensorType):
        t()  # PyTorch's TypeError for CUDA types
    if not isinstance(t, _LegacyTensorType):
        raise TypeError(f"set_default_tensor_type expects a tensor type such as torch.FloatTensor, got {t!r}")
    _dtype.set_default_dtype(t.dtype)


def type_(x: Tensor, dtype=None, non_blocking: bool = False, **kwargs):
    """``x.type()``: PyTorch's type string (``"torch.FloatTensor"``); ``x.type(t)``: ``x`` cast to ``t``, a dtype,
    a legacy type (``torch.LongTensor``) or its string, or ``torch.Tensor`` (the default float dtype, as PyTorch's
    default tensor type); ``x`` itself when it already is that type."""
    from .ops.elementwise import cast

    if dtype is None:  # every dtype's string is its scalar type's name, "Tensor" appended (a sparse COO
        # tensor's in torch.sparse, as PyTorch names it)
        return f"torch.{'sparse.' if x.is_sparse else ''}{_dtype.SCALAR_TYPE_NAMES[x.dtype.name]}Tensor"
    if isinstance(dtype, _CudaTensorType) or isinstance(dtype, str) and dtype.startswith("torch.cuda."):
        check_device("cuda")
    if dtype is Tensor or dtype == "torch.Tensor":  # the default tensor type: the default float dtype
        dtype = _dtype.get_default_dtype()
    if isinstance(dtype, str):
        if dtype not in _TYPE_BY_STRING:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _TYPE_BY_STRING[dtype]
    if isinstance(dtype, _LegacyTensorType):
        dtype = dtype.dtype
    if isinstance(dtype, type):  # a class that is no tensor type (PyTorch's ValueError)
        raise ValueError(f"invalid type: '{dtype.__name__}'")
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"type() expects a dtype, a tensor type such as torch.FloatTensor, or its name; "
                        f"got {type(dtype).__name__}")
    return cast(x, dtype)
