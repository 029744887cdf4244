"""``post_localSGD_hook``: PyTorch's local SGD communication hook (``PostLocalSGDState``, ``post_localSGD_hook``).

Local SGD all-reduces gradients for the first iterations, then only within subgroups, and relies on a model
averager (``torch.distributed.algorithms.model_averaging``) run after each optimizer step to bring the replicas
together. ember has no model averagers and its DDP checks that the replicas stay identical, which local SGD
breaks on purpose, so neither is provided: building the state or calling the hook raises NotImplementedError.
The names exist so that code that tests for them (``isinstance(state, PostLocalSGDState)``) imports.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ...._missing import module_getattr

__all__ = ["PostLocalSGDState", "post_localSGD_hook"]

_WHY = ("local SGD is not supported by ember: its DDP keeps every replica identical, and it has no model "
        "averagers (torch.distributed.algorithms.model_averaging)")


class PostLocalSGDState:
    """The state of ``post_localSGD_hook`` (``process_group``, ``subgroup``, ``start_localSGD_iter``,
    ``post_local_gradient_allreduce``). Difference from PyTorch: building one raises NotImplementedError."""

    def __init__(self, process_group: Any, subgroup: Any, start_localSGD_iter: int,  # noqa: N803 (PyTorch's)
                 post_local_gradient_allreduce: bool = True) -> None:
        raise NotImplementedError(f"PostLocalSGDState: {_WHY}")


def post_localSGD_hook(state: PostLocalSGDState, bucket: Any) -> NoReturn:  # noqa: N802 (PyTorch's name)
    """Difference from PyTorch: raises NotImplementedError (see the module's docstring)."""
    raise NotImplementedError(f"post_localSGD_hook: {_WHY}")


__getattr__ = module_getattr(__name__)
