"""Tensor methods for the storage and memory ops (``ember/storage.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import ops
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
