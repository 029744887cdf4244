"""``DataParallel``: PyTorch's single-process multi-GPU wrapper, as PyTorch runs it without a GPU.

PyTorch's ``DataParallel`` on a machine without CUDA keeps the module, sets
``device_ids = []`` and calls the module directly; ember has no GPU, so that is
all it does here. The wrapped model is ``.module`` and the state_dict keys carry
PyTorch's ``module.`` prefix. For data parallelism on CPUs use
``DistributedDataParallel`` (several processes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._device import check_device
from ..modules.module import Module


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it unchanged (see the module docstring).

    ``device_ids``/``output_device`` may name the CPU or be None; a CUDA device raises, as everywhere in ember.
    """

    def __init__(self, module: Module, device_ids: Sequence[int] | None = None, output_device=None,
                 dim: int = 0) -> None:
        super().__init__()
        for dev in [*(device_ids or []), output_device]:
            if dev is not None:
                check_device(f"cuda:{dev}" if isinstance(dev, int) else dev)
        self.module = module
        self.device_ids: list = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)



def data_parallel(module: Module, inputs: Any, device_ids: Sequence[int] | None = None, output_device=None,
                  dim: int = 0, module_kwargs: Any = None) -> Any:
    """PyTorch's functional ``DataParallel``: it looks for a GPU type before anything else and, on a machine
    without one, stops there; so does ember, which has none."""
    raise RuntimeError("device type could not be determined")
