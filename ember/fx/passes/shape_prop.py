"""``torch.fx.passes.shape_prop``: run a GraphModule on example inputs and record each node's tensor metadata.

After ``ShapeProp(gm).propagate(*inputs)``, every node whose value holds tensors has ``node.meta['tensor_meta']``
(a ``TensorMetadata``, or the same nesting of them as the value) and every node ``node.meta['type']``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor (PyTorch's fields; ``memory_format`` is ``torch.contiguous_format``
    for a contiguous tensor, else None)."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _extract_tensor_metadata(result: Tensor) -> TensorMetadata:
    from ... import contiguous_format

    memory_format = contiguous_format if result.is_contiguous() else None
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, tuple(result.stride()), memory_format,
                          False, {})


class ShapeProp(Interpreter):
    """An Interpreter that records ``tensor_meta`` and ``type`` in each node's ``meta`` (``propagate``)."""

    def __init__(self, gm, fake_mode: Any = None) -> None:
        super().__init__(gm)
        if fake_mode is not None:
            raise NotImplementedError("ShapeProp(fake_mode=...): ember has no fake tensors; pass real example "
                                      "inputs (fake_mode=None)")

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = False

        def extract(obj: Any) -> Any:
            nonlocal found
            if isinstance(obj, Tensor):
                found = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on ``args``, recording metadata; returns its output."""
        return self.run(*args)
