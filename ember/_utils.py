"""``ember._utils``: the helpers of ``torch._utils`` that training code imports (gradient bucketing, element
sizes, and the functions a pickled tensor or parameter is rebuilt by, which custom ``__reduce__`` methods name)."""

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


def _rebuild_tensor(storage, storage_offset: int, size, stride) -> Tensor:
    """A tensor of the storage's dtype viewing its memory at ``storage_offset`` with ``size`` and ``stride``."""
    from . import empty

    return empty((0,), dtype=storage.dtype if hasattr(storage, "_untyped_storage") else None).set_(
        storage, storage_offset, size, stride)


def _with_hooks(t: Tensor, backward_hooks) -> Tensor:
    """``t`` with the backward hooks a pickle held (PyTorch's pickles keep an empty dict)."""
    for hook in (backward_hooks or {}).values():
        t.register_hook(hook)
    return t


def _rebuild_tensor_v2(storage, storage_offset: int, size, stride, requires_grad: bool, backward_hooks,
                       metadata=None) -> Tensor:
    """``_rebuild_tensor``, requiring grad as asked (and taking the hooks given). ``metadata`` (PyTorch's flags
    of a tensor subclass's C++ state) is not supported when non-empty."""
    if metadata:
        raise NotImplementedError("_rebuild_tensor_v2: tensor metadata is not supported by ember")
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    t.requires_grad = requires_grad
    return _with_hooks(t, backward_hooks)


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks):
    """``nn.Parameter(data, requires_grad)`` (with the hooks given), as a pickled parameter is rebuilt."""
    from .nn import Parameter

    return _with_hooks(Parameter(data, requires_grad), backward_hooks)
