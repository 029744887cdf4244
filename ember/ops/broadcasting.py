"""Broadcasting several tensors or shapes to one shape: broadcast_tensors, broadcast_shapes.

``broadcast_tensors`` returns views (``expand``), so gradients flow back summed over the broadcast dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._size import Size, broadcast_mismatch, c_type_name
from .._tensor import Tensor
from .shape import expand


def broadcast_shapes(*shapes) -> Size:
    """The shape that ``shapes`` (ints, sequences of ints, None skipped) broadcast to, as ``torch.broadcast_shapes``:
    dimensions are matched from the right, a size 1 stretches to the other size; PyTorch's errors."""
    shapes = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common: list = [1] * max(len(shape) for shape in shapes)
    for index, shape in enumerate(shapes):
        for dim in range(-1, -1 - len(shape), -1):
            size = shape[dim]
            if size == common[dim]:
                continue
            if common[dim] == 1:
                if size < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[dim] = size
            elif size != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {dim}! Mismatching argument at index "
                    f"{index} had {shape}; but expected shape should be broadcastable to {common}")
    return Size(common)  # (torch.Size's check of its items: size_item)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape, as ``torch.broadcast_tensors``: a tensor already of
    that shape comes back itself, the others as ``expand`` views (write to a clone, as the views share memory)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {c_type_name(t)}")
    if len(tensors) < 2:
        return tuple(tensors)
    shapes = [tuple(t.shape) for t in tensors]
    message = broadcast_mismatch(shapes)
    if message is not None:
        raise RuntimeError(message)
    shape = Size(broadcast_shapes(*shapes))
    return tuple(t if t.shape == shape else expand(t, shape) for t in tensors)
