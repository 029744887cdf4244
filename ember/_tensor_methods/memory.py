"""Tensor methods for the storage and memory ops (``ember/storage.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
    from ..storage import TypedStorage, UntypedStorage
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class MemoryMethods:
    __slots__ = ()

    def storage(self) -> TypedStorage:
        return ops.storage.typed_storage(self)

    def untyped_storage(self) -> UntypedStorage:
        return ops.storage.untyped_storage(self)

    def data_ptr(self) -> int:
        return ops.storage.tensor_data_ptr(self)

    def storage_offset(self) -> int:
        return ops.storage.storage_offset(self)

    def stride(self, dim: int | None = None) -> Any:
        return ops.storage.stride(self, dim)

    def share_memory_(self) -> Tensor:
        """Move the storage into shared memory (every view of it moves too); see ``ember/_shared_memory.py``."""
        from .._shared_memory import share_memory_

        share_memory_([self])  # type: ignore[list-item]
        return self  # type: ignore[return-value]

    def is_shared(self) -> bool:
        """Whether the storage is in shared memory."""
        from .._shared_memory import is_shared

        return is_shared(self)  # type: ignore[arg-type]

    def resize_(self, *sizes, size=None, memory_format=None) -> Tensor:
        """A new shape over the same storage, grown if needed (PyTorch's semantics; ``ember/_resize.py``); the
        shape given as numbers, one tuple, or ``size=``."""
        from .._resize import resize_

        if size is not None:
            if sizes:
                raise TypeError("resize_() got the shape both as positional arguments and as 'size'")
            sizes = (size,)
        elif not sizes:
            raise ops.shape.missing_sizes("resize_", "size")
        return resize_(self, *sizes, memory_format=memory_format)  # type: ignore[arg-type]

    def resize_as_(self, other: Tensor, *, memory_format=None) -> Tensor:
        """``resize_(other.shape)`` (``memory_format`` by keyword only, as PyTorch's)."""
        from .._resize import resize_as_

        return resize_as_(self, other, memory_format=memory_format)  # type: ignore[arg-type]

    def set_(self, source=None, storage_offset: int | None = None, size=None, stride=None) -> Tensor:
        """``self`` becomes ``source``'s data (a tensor's: its storage, shape and strides; a storage's: at
        ``storage_offset`` with ``size`` and ``stride``); no argument: empty."""
        from .._resize import set_

        return set_(self, source, storage_offset, size, stride)  # type: ignore[arg-type]
