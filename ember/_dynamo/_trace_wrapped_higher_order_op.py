"""``torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex``, which libraries enter around
mask functions that index tensors with 0-d integer tensors (transformers' attention masks)."""

from __future__ import annotations

from .._missing import module_getattr


class TransformGetItemToIndex:
    """A context in which ``tensor[index]`` with integer or 0-d integer-tensor indices is tensor indexing.

    PyTorch needs it under ``vmap`` and compilation, where a 0-d index tensor would otherwise be turned into a
    Python int; eagerly, both give the same values and gradients. ember indexes eagerly and ``t[i]`` with a
    0-d integer tensor ``i`` already selects as ``t[int(i)]`` does, so entering it changes nothing.
    """

    def __enter__(self) -> TransformGetItemToIndex:
        return self

    def __exit__(self, *exc) -> None:
        return None


__getattr__ = module_getattr(__name__)
