"""DLPack exchange (``torch.utils.dlpack``): tensors shared, without a copy, with NumPy, PyTorch, JAX, CuPy and
any other library that speaks the protocol, through NumPy's DLPack support (``numpy.from_dlpack``,
``ndarray.__dlpack__``).

ember's tensors are CPU tensors: ``Tensor.__dlpack_device__()`` is ``(DLDeviceType.kDLCPU, 0)`` and
``from_dlpack`` accepts only a CPU producer. Dtypes NumPy cannot exchange (bfloat16) raise NumPy's error.
"""

from __future__ import annotations

import enum
from typing import Any

from .._backend import xp
from .._device import device as _device
from .._tensor import Tensor


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes, as PyTorch's ``torch.utils.dlpack.DLDeviceType``."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule (the legacy, unversioned one, as PyTorch's) sharing ``tensor``'s memory; only
    ``from_dlpack`` of some library can use it, once. Unlike ``tensor.__dlpack__()``, a tensor that requires grad
    is exported too, as in PyTorch."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    return tensor._data.__dlpack__()


class _Capsule:
    """A bare capsule (from ``to_dlpack``) as a producer NumPy's ``from_dlpack`` takes."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (DLDeviceType.kDLCPU, 0)


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing the memory of ``ext_tensor``: an object with ``__dlpack__`` (a NumPy array, a PyTorch
    CPU tensor, an ember tensor) or a capsule from ``to_dlpack``, as ``torch.from_dlpack``. ``copy=True``
    copies, ``copy=False`` refuses to copy (default: share when possible). ``device`` must be the CPU."""
    if device is not None and _device(device).type != "cpu":
        raise RuntimeError(f"from_dlpack: ember tensors live on the CPU, got device={device!r}")
    if hasattr(ext_tensor, "__dlpack__"):
        if hasattr(ext_tensor, "__dlpack_device__") and ext_tensor.__dlpack_device__()[0] != DLDeviceType.kDLCPU:
            raise RuntimeError(f"from_dlpack: ember reads only CPU memory; the producer is on device "
                               f"{ext_tensor.__dlpack_device__()} (copy it to the CPU first)")
        array = xp.from_dlpack(ext_tensor, copy=copy)
    else:
        array = xp.from_dlpack(_Capsule(ext_tensor), copy=copy)
        if not array.flags.writeable and not copy:
            array = xp.asarray(_WritableView(array))
    return Tensor._make(array)


class _WritableView:
    """The memory of an array NumPy made from a legacy capsule, writable: NumPy marks such an array read-only,
    as that capsule cannot say whether it is; PyTorch (and ember) take the producer's memory as writable."""

    def __init__(self, array: Any) -> None:
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface
        self.base = array  # keeps the capsule, hence the producer's memory, alive


__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
