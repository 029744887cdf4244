"""Tensor methods for dtype conversion, copies, new tensors and layouts (``ember/ops/__init__.py``,
``ember/_legacy.py``, ``ember/_sparse.py``).

``float``, ``int`` and ``bool`` are methods here (PyTorch's names), so annotations in this class write
``builtins.bool``.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from .. import _dtype
from .._backend import xp
from .._layout import sparse_csc, sparse_csr

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


def _cast(x: Tensor, dtype, memory_format) -> Tensor:
    """``x.float()`` & co.: ``x.to(dtype, memory_format=...)``, laid out as the format names when one is given."""
    if memory_format is None:
        return ops.elementwise.cast(x, dtype)
    return ops.to(x, dtype, memory_format=memory_format)

class ConversionMethods:
    __slots__ = ()

    def clone(self, *, memory_format=None) -> Tensor:
        return ops.clone(self, memory_format=memory_format)

    def to(self, *args, **kwargs) -> Tensor:
        return ops.to(self, *args, **kwargs)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs) -> Any:
        return ops.type_(self, dtype, non_blocking, **kwargs)

    def type_as(self, other: Tensor) -> Tensor:
        return ops.elementwise.cast(self, other.dtype)

    def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_filled(self, xp.zeros, sizes, dtype, requires_grad, size, device)

    def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_filled(self, xp.ones, sizes, dtype, requires_grad, size, device)

    def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_filled(self, xp.empty, sizes, dtype, requires_grad, size, device)

    def new_empty_strided(self, size, stride, *, dtype=None, device=None,
                          requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_empty_strided(self, size, stride, dtype=dtype, device=device, requires_grad=requires_grad)

    @_dtype.keyword_scalars
    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_full(self, size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: builtins.bool = False) -> Tensor:
        return ops.new_tensor(self, data, dtype=dtype, device=device, requires_grad=requires_grad)

    def float(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.float32, memory_format)

    def double(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.float64, memory_format)

    def half(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.float16, memory_format)

    def bfloat16(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.bfloat16, memory_format)

    def long(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.int64, memory_format)

    def int(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.int32, memory_format)

    def bool(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.bool_, memory_format)

    def byte(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.uint8, memory_format)

    def char(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.int8, memory_format)

    def short(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.int16, memory_format)

    def new(self, *args, device=None) -> Tensor:
        """PyTorch's legacy ``x.new(...)``: a tensor of ``x``'s dtype, uninitialised for sizes, else from data."""
        from .._legacy import legacy_array
        from .._tensor import Tensor

        array, source = legacy_array(args, device, self.dtype, "new", typed=True)  # type: ignore[attr-defined]
        return source if source is not None else Tensor._make(array)

    def dequantize(self) -> Tensor:
        return ops.dequantize(self)  # type: ignore[arg-type]

    # A sparse tensor's parts (ember/_sparse.py's SparseTensor); a dense tensor has none, as in PyTorch
    def indices(self) -> Tensor:
        raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")

    def values(self) -> Tensor:
        raise RuntimeError("values expected sparse tensor layout but got Strided")

    def coalesce(self) -> Tensor:
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")

    def is_coalesced(self) -> builtins.bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")

    def sparse_resize_(self, size, sparse_dim: int, dense_dim: int) -> Tensor:
        raise NotImplementedError("Could not run 'aten::sparse_resize_' with arguments from the 'CPU' backend: it is "
                                  "only available for sparse tensors")

    def sparse_resize_and_clear_(self, size, sparse_dim: int, dense_dim: int) -> Tensor:
        raise NotImplementedError("Could not run 'aten::sparse_resize_and_clear_' with arguments from the 'CPU' "
                                  "backend: it is only available for sparse tensors")

    @property
    def is_sparse_csr(self) -> builtins.bool:
        return False

    def crow_indices(self) -> Tensor:
        raise RuntimeError("crow_indices expected sparse row compressed tensor layout but got Strided")

    def col_indices(self) -> Tensor:
        raise RuntimeError("col_indices expected sparse row compressed tensor layout but got Strided")

    def ccol_indices(self) -> Tensor:
        raise RuntimeError("ccol_indices expected sparse column compressed tensor layout but got Strided")

    def row_indices(self) -> Tensor:
        raise RuntimeError("row_indices expected sparse column compressed tensor layout but got Strided")

    def to_sparse_csr(self, dense_dim=None) -> Any:
        from .._sparse_compressed import to_sparse_compressed

        return to_sparse_compressed(self, sparse_csr)  # type: ignore[arg-type]

    def to_sparse_csc(self, dense_dim=None) -> Any:
        from .._sparse_compressed import to_sparse_compressed

        return to_sparse_compressed(self, sparse_csc)  # type: ignore[arg-type]

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        return self if dtype is None else ops.elementwise.cast(self, dtype)  # type: ignore[return-value]

    def to_sparse(self, sparse_dim: builtins.int | None = None, *, layout=None, blocksize=None,
                  dense_dim=None) -> Any:
        from .._sparse import to_sparse

        return to_sparse(self, sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[builtins.int, builtins.int] | None = None,
                   dl_device: Any = None, copy: builtins.bool | None = None) -> Any:
        """A DLPack capsule sharing this tensor's memory (the DLPack protocol; ``stream`` is ignored on the
        CPU); a tensor that requires grad is refused, as in PyTorch."""
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[Any, builtins.int]:
        from ..utils.dlpack import DLDeviceType

        return (DLDeviceType.kDLCPU, 0)

    def sparse_mask(self, mask: Tensor) -> Any:
        from .._sparse import sparse_mask

        return sparse_mask(self, mask)  # type: ignore[arg-type]

    def to_sparse_coo(self) -> Any:
        from .._sparse import to_sparse

        return to_sparse(self)
