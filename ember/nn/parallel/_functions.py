"""``torch.nn.parallel._functions``: the autograd Functions ``DataParallel`` moves tensors between GPUs with.

Code written for several GPUs imports them at module level (the widely copied ``SynchronizedBatchNorm``, whose
layers act as plain batch norm on one device and call ``Broadcast``/``ReduceAddCoalesced`` only when replicated).
Every ember tensor is on the CPU, where PyTorch refuses each of them before copying anything; these refuse as
PyTorch's do, with its exception types and words. What PyTorch would then hand to a GPU (a gather of nothing,
a scatter) gets ember's error for a GPU it does not have.
"""

from __future__ import annotations

from typing import Any

from ..._device import check_device
from ...autograd.function import Function

__all__ = ["Broadcast", "Gather", "ReduceAddCoalesced", "Scatter"]


def _refuse_cpu(what: str, inputs: tuple) -> None:
    if inputs:  # (every tensor is on the CPU; PyTorch's own check: all(i.device.type != "cpu"))
        raise AssertionError(f"{what} function not implemented for CPU tensors")


class Broadcast(Function):
    """Copies of ``inputs`` on each of ``target_gpus`` (PyTorch: CPU tensors are an AssertionError)."""

    @staticmethod
    def forward(ctx: Any, target_gpus, *inputs):
        _refuse_cpu("Broadcast", inputs)
        return ()  # no inputs: PyTorch returns an empty tuple whatever the targets


class ReduceAddCoalesced(Function):
    """The sum over devices of ``grads`` (``num_inputs`` tensors per device) on ``destination``."""

    @staticmethod
    def forward(ctx: Any, destination, num_inputs: int, *grads):
        if num_inputs > len(grads):  # PyTorch reads grads[i] for i < num_inputs first
            raise IndexError("tuple index out of range")
        # PyTorch's reduce_add checks each device's group of inputs, the first one first
        raise AssertionError("reduce_add expects all inputs to be on GPUs, but input 0 is on CPU")


class Gather(Function):
    """``inputs`` from several GPUs concatenated along ``dim`` on ``target_device``."""

    @staticmethod
    def forward(ctx: Any, target_device, dim: int, *inputs):
        _refuse_cpu("Gather", inputs)
        check_device("cuda")


class Scatter(Function):
    """``input`` split along ``dim`` into chunks, one on each of ``target_gpus``."""

    @staticmethod
    def forward(ctx: Any, target_gpus, chunk_sizes, dim: int, input):
        for dev in target_gpus:
            if str(dev) == "cpu":  # PyTorch's _get_device_index(dev, optional=True) for the CPU
                raise ValueError("Expected a non cpu device, but got: cpu")
            check_device(f"cuda:{dev}" if isinstance(dev, int) else dev)  # no GPU: ember's error for it
        check_device("cuda")
