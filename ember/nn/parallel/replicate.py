"""``torch.nn.parallel.replicate``: copies of a module on several GPUs, as ``DataParallel`` makes them.

PyTorch's algorithm: the parameters and buffers are broadcast to the devices (``Broadcast`` of
``torch.nn.parallel._functions``, which refuses ember's CPU tensors as PyTorch refuses CPU tensors), and
each submodule gets a shallow replica whose parameters are the broadcast copies. A module without
parameters or buffers is replicated without broadcasting anything, under PyTorch as here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from ..modules.module import Module
from ._functions import Broadcast

__all__ = ["replicate"]

T = TypeVar("T", bound=Module)


def _device_index(dev: Any) -> Any:
    """PyTorch's ``torch._utils._get_device_index(dev, optional=True)``: a GPU's index; the CPU is refused."""
    from ..._device import device as _device

    d = _device(dev) if isinstance(dev, str) else dev
    if isinstance(d, _device):
        if d.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {d}")
        return d.index
    return d


def _broadcast(tensors: list, devices: list, detach: bool) -> list[list]:
    if not tensors:
        return []
    if detach:  # PyTorch's comm.broadcast_coalesced is compiled for CUDA only
        raise AttributeError("module 'torch._C' has no attribute '_broadcast_coalesced'")
    copies = Broadcast.apply(devices, *tensors)
    return [list(copies[i:i + len(tensors)]) for i in range(0, len(copies), len(tensors))]


def _replica(module: Module) -> Module:
    """A shallow copy sharing everything but the parameter, buffer and child tables (PyTorch's
    ``Module._replicate_for_data_parallel``)."""
    if hasattr(module, "_replicate_for_data_parallel"):
        return module._replicate_for_data_parallel()
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica.__dict__["_parameters"] = {}
    replica.__dict__["_buffers"] = module._buffers.copy()
    replica.__dict__["_modules"] = module._modules.copy()
    replica.__dict__["_is_replica"] = True
    return replica


def replicate(network: T, devices: Sequence[Any], detach: bool = False) -> list[T]:
    """One copy of ``network`` per device in ``devices`` (GPUs)."""
    if not devices:
        return []
    devices = [_device_index(d) for d in devices]
    params = list(network.parameters())
    param_indices = {p: i for i, p in enumerate(params)}
    param_copies = _broadcast(params, devices, detach)
    buffers = list(network.buffers())
    buffers_rg = [b for b in buffers if b.requires_grad and not detach]
    buffers_not_rg = [b for b in buffers if not (b.requires_grad and not detach)]
    indices_rg = {b: i for i, b in enumerate(buffers_rg)}
    indices_not_rg = {b: i for i, b in enumerate(buffers_not_rg)}
    copies_rg = _broadcast(buffers_rg, devices, detach)
    copies_not_rg = _broadcast(buffers_not_rg, devices, True)

    modules = list(network.modules())
    module_indices = {m: i for i, m in enumerate(modules)}
    copies = [[_replica(m) for m in modules] for _ in devices]
    for i, module in enumerate(modules):
        for j in range(len(devices)):
            replica = copies[j][i]
            for key, child in module._modules.items():
                if child is None:
                    replica._modules[key] = None
                else:
                    setattr(replica, key, copies[j][module_indices[child]])
            for key, param in module._parameters.items():
                if param is None:
                    replica._parameters[key] = None
                else:
                    setattr(replica, key, param_copies[j][param_indices[param]])
            for key, buf in module._buffers.items():
                if buf is None:
                    replica._buffers[key] = None
                elif buf.requires_grad and not detach:
                    setattr(replica, key, copies_rg[j][indices_rg[buf]])
                else:
                    setattr(replica, key, copies_not_rg[j][indices_not_rg[buf]])
    return [copies[j][0] for j in range(len(devices))]
