"""``torch.nn.parallel.scatter_gather``: split inputs over GPUs and gather outputs back, as ``DataParallel``
does with several GPUs.

The recursion over containers is PyTorch's (non-tensors are repeated once per target, a namedtuple keeps its
type, dicts must agree in their keys); each tensor goes through ``Scatter``/``Gather`` of
``torch.nn.parallel._functions``, which refuse ember's CPU tensors as PyTorch refuses CPU tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._tensor import Tensor
from ...return_types import rebuilt
from ._functions import Gather, Scatter

__all__ = ["gather", "scatter", "scatter_kwargs"]


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs: Any, target_gpus: Sequence[Any], dim: int = 0) -> Any:
    """Slice tensors into one chunk per GPU in ``target_gpus``; other objects are repeated for each."""
    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return Scatter.apply(target_gpus, None, dim, obj)
        if _is_namedtuple(obj):
            return [rebuilt(type(obj), args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple[Any, ...], kwargs: dict[str, Any] | None, target_gpus: Sequence[Any],
                   dim: int = 0) -> tuple[tuple[Any, ...], tuple[dict[str, Any], ...]]:
    """``scatter`` of the positional and the keyword arguments, padded to the same number of GPUs."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):  # (PyTorch compares with len(inputs) here)
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs: Any, target_device: Any, dim: int = 0) -> Any:
    """One object from the per-GPU ``outputs``: tensors concatenated along ``dim`` on ``target_device``."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            return Gather.apply(target_device, dim, *outputs)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=True)))
        return type(out)(map(gather_map, zip(*outputs, strict=True)))

    return gather_map(outputs)
