"""``ember._utils``: the helpers of ``torch._utils`` that training code imports (gradient bucketing, element
sizes)."""

from __future__ import annotations

from collections.abc import Sequence

from ._tensor import Tensor


def _flatten_dense_tensors(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors' elements one after another in one 1-d tensor (a copy), as ``torch._utils``."""
    from .ops.shape import cat, reshape

    return cat([reshape(t, -1) for t in tensors])


def _unflatten_dense_tensors(flat: Tensor, tensors: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """Views of ``flat`` shaped as ``tensors``, in order: the inverse of ``_flatten_dense_tensors``."""
    from .ops.indexing import narrow
    from .ops.shape import view

    out, offset = [], 0
    for t in tensors:
        n = t.numel()
        out.append(view(narrow(flat, 0, offset, n), t.shape))
        offset += n
    return tuple(out)


def _element_size(dtype) -> int:
    """The bytes one element of ``dtype`` takes (``torch.float16``: 2, ``torch.bool``: 1, ``torch.complex64``: 8);
    anything but a dtype is PyTorch's RuntimeError."""
    from ._dtype import dtype as _dtype_class

    if not isinstance(dtype, _dtype_class):
        raise RuntimeError(f"expected torch.dtype, but got {type(dtype)}")
    return dtype.itemsize
