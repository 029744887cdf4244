"""``torch.nn.parallel.parallel_apply``: run module replicas on their GPUs in threads, as ``DataParallel``
does with several GPUs.

ember has no accelerator: the arguments are checked as PyTorch checks them, then the call stops where PyTorch's
does on a machine without one (it asks the accelerator for each device's stream first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj: Any) -> Tensor | None:
    """The first tensor found in ``obj`` (a tensor, or lists, tuples and dicts of them), else None."""
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for result in map(get_a_var, obj):
            if isinstance(result, Tensor):
                return result
    if isinstance(obj, dict):
        for result in map(get_a_var, obj.items()):
            if isinstance(result, Tensor):
                return result
    return None


def parallel_apply(modules: Sequence[Module], inputs: Sequence[Any],
                   kwargs_tup: Sequence[dict[str, Any]] | None = None,
                   devices: Sequence[Any] | None = None) -> list[Any]:
    """Apply ``modules[i]`` to ``inputs[i]`` on ``devices[i]`` (GPUs), in parallel."""
    from ..._device import device as _device

    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is not None and len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs_tup "
                             f"{len(kwargs_tup)}")
    if devices is not None and len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of devices "
                             f"{len(devices)}")
    for dev in devices or ():
        d = _device(dev) if isinstance(dev, str) else dev
        if isinstance(d, _device) and d.type != "cuda":  # torch.cuda._utils._get_device_index
            raise ValueError(f"Expected a cuda device, but got: {d}")
    if modules:  # each replica's stream comes from the accelerator
        raise RuntimeError("Cannot access accelerator device when none is available.")
    raise AssertionError("No available accelerator found.")
