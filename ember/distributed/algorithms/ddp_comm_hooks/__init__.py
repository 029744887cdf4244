"""DDP communication hooks (``torch.distributed.algorithms.ddp_comm_hooks``): what DDP does with each bucket of
gradients instead of its own all-reduce. Register one with ``model.register_comm_hook(state, hook)``.

- ``default_hooks.allreduce_hook``: the plain average (what DDP does without a hook).
- ``default_hooks.fp16_compress_hook`` / ``bf16_compress_hook``: send half-precision values (half the bytes).
- ``default_hooks.fp16_compress_wrapper`` / ``bf16_compress_wrapper``: any hook run on the bucket in half precision.
- ``powerSGD_hook.powerSGD_hook`` with ``PowerSGDState``: low-rank compression with error feedback.
"""

from . import default_hooks, powerSGD_hook

__all__ = ["default_hooks", "powerSGD_hook"]


from ...._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
