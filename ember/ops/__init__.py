"""ember's differentiable ops.

Each submodule holds one family of ops (Node subclasses with forward and
backward side by side, plus the public functions). The Tensor methods and
operators that call them are defined in the class, one mixin per family
(``ember/_tensor_methods/``), so ``x.exp()``, ``x + y`` and ``ember.exp(x)`` are
one code path.
"""

from __future__ import annotations

import math
import sys

from .. import _deprecated_overloads as _deprecated
from .. import _dtype, _malloc, storage  # noqa: F401  (_malloc: tunes glibc's malloc for NumPy's big buffers)
from .._backend import xp
from .._creation import _empty_preserving, meta_like, strided_array
from .._device import check_device, on_meta
from .._legacy import type_
from .._memory_format import channels_last_order, half_number, has_format_strides, laid_out, preserve_format
from .._meta import is_meta, meta_array, no_data_error
from .._tensor import Tensor
from .._tensor_methods import bind_ops
from ..autograd.graph import Node, shown_as, torch_named
from . import (
    activation,
    complex,
    cumulative,
    distance,
    elementwise,
    float_parts,
    gamma_fns,
    histogram,
    index_update,
    indexing,
    inplace,
    integer_fns,
    linalg,
    linalg_compat,
    lookup,
    matrix,
    movement,
    pointwise,
    quantize,
    reduction,
    sampling,
    shape,
    sorting,
    special_fns,
    statistics,
    strided,
    unary,
    view_inplace,
)
from .elementwise import cast


@torch_named("CloneBackward0")
class Clone(Node):
    diagonal_jacobian = True
    own_layout = True  # (x's layout, or the format's, made below: PyTorch's clone, no elementwise op's)

    def forward(self, x, fmt=None):
        if is_meta(x):  # (no data: the layout PyTorch's clone gives, recorded)
            return meta_like(x, x.dtype, fmt)
        if fmt is None or fmt is preserve_format:
            if x.flags.c_contiguous:
                out = x.copy()
                if 1 not in x.shape or out.strides == x.strides:  # (a size-1 dimension's odd stride is kept below,
                    return out  # as PyTorch's: NumPy's copy makes it row-major)
            out = _empty_preserving(Tensor._make(x), x.dtype)  # (x's layout, as PyTorch's clone keeps it)
            out[...] = x
            return out
        return laid_out(x, fmt)

    def backward(self, g):
        return (g,)


def clone(x: Tensor, *, memory_format=None) -> Tensor:
    """A copy of ``x``: laid out as ``x`` (``preserve_format``, the default: a dense ``x``'s strides, else dense ones
    in its dimension order) or as ``memory_format`` names, as PyTorch's."""
    channels_last_order(memory_format, x._data.ndim)  # (PyTorch's error for a channels-last format of another rank)
    return Clone.apply(x, fmt=memory_format)


def to(x: Tensor, *args, **kwargs) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; keywords as PyTorch."""
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    copy = kwargs.get("copy", False)
    dtype = _dtype.from_python_type(dtype) if dtype is not None else None
    for a in args:
        if isinstance(a, _dtype.dtype) or a.__class__ is type and a in _dtype.PYTHON_TYPES:  # (PyTorch's too)
            dtype = _dtype.from_python_type(a)
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif a is not None and not isinstance(a, bool):
            device = a
    check_device(device, allow_meta=True)
    if is_meta(x._data) or on_meta(device or x.device):  # (a meta tensor in or out: no data is read)
        if device is not None and not on_meta(device):
            raise no_data_error()
        target = x._data.dtype if dtype is None else dtype.np
        fmt = kwargs.get("memory_format")
        if is_meta(x._data) and target == x._data.dtype and not copy and fmt in (None, preserve_format):
            return x
        return Tensor._make(meta_like(x._data, target, fmt))  # (x's layout, or fmt's, as PyTorch's)
    out = cast(x, dtype) if dtype is not None else x
    fmt = kwargs.get("memory_format")
    if fmt is not None and fmt is not preserve_format and not has_format_strides(out._data, fmt):
        if out is x:  # (a copy laid out as fmt names, PyTorch's node)
            return shown_as(Clone.apply(x, fmt=fmt), "ToCopyBackward0")
        out._data = laid_out(out._data, fmt)  # (the cast's own new array, laid out anew: one node, as PyTorch's)
    return clone(out) if copy and out is x else out


def dequantize(x: Tensor) -> Tensor:
    """A quantized tensor's float32 values; ember has no quantized tensors, so as PyTorch does for the others:
    a float32 tensor itself, any other the float32 conversion (differentiable here; PyTorch's derivative of it
    is not implemented)."""
    return x if x._data.dtype == xp.float32 else cast(x, _dtype.float32)


def _new_on_meta(x: Tensor, device) -> bool:
    """Whether ``x.new_*(..., device=device)`` makes a meta tensor: on ``device`` when given, else on ``x``'s
    device (as PyTorch, the default device set by ``with torch.device(...)`` does not apply to these)."""
    check_device(device, allow_meta=True)
    return on_meta(device) if device is not None else is_meta(x._data)


def new_filled(x: Tensor, fill, sizes: tuple, dtype=None, requires_grad: bool = False, size=None,
               device=None) -> Tensor:
    """``x.new_zeros(*sizes)`` (or ``size=``) and its kin: ``fill(shape, dtype)`` (``xp.zeros``, ``xp.ones``,
    ``xp.empty``) in ``x``'s dtype unless ``dtype`` is given, on ``x``'s device unless ``device`` is given."""
    from .._creation import _size

    if not sizes and size is None:  # (``x.new_zeros(())`` is a 0-d tensor; no size at all, PyTorch's TypeError)
        from .shape import missing_sizes

        raise missing_sizes(f"new_{fill.__name__}", "size")
    dt = _dtype.to_np(dtype) if dtype is not None else x._data.dtype
    shape = _size(sizes, size)
    t = Tensor._make(meta_array(shape, dt) if _new_on_meta(x, device) else fill(shape, dt))
    return t.requires_grad_(requires_grad) if requires_grad else t


def new_empty_strided(x: Tensor, size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``x.new_empty_strided(size, stride)``: ``empty_strided`` in ``x``'s dtype and on its device by default."""
    dt = _dtype.to_np(dtype) if dtype is not None else x._data.dtype
    t = Tensor._make(strided_array(size, stride, dt, _new_on_meta(x, device)))
    return t.requires_grad_(requires_grad) if requires_grad else t


def new_full(x: Tensor, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    from .._creation import scalar_number

    fill_value = scalar_number(fill_value, "new_full")
    dt = _dtype.to_np(dtype) if dtype is not None else x._data.dtype
    fill_value = _dtype.fill_number(fill_value, dt, math.prod(size))
    data = meta_array(tuple(size), dt) if _new_on_meta(x, device) else \
        xp.full(tuple(size), half_number(fill_value, dt), dtype=dt)  # (a float into a half one: through float32)
    return Tensor._make(data).requires_grad_(requires_grad)


def new_tensor(x: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A copy of ``data`` with ``x``'s dtype and device by default (a tensor: with PyTorch's warning to use
    clone)."""
    from .. import _warnings
    from .._creation import _COPY_CONSTRUCT_WARNING, _finish, as_array

    if isinstance(data, Tensor):
        _warnings.warn(_COPY_CONSTRUCT_WARNING.format("tensor.new_tensor"))
    on = "meta" if _new_on_meta(x, device) else "cpu"
    return _finish(xp.array(as_array(data, dtype or x.dtype), copy=True), requires_grad, on)


def _require_tensors(name: str, tensor1, tensor2) -> None:
    """PyTorch's TypeError for addcmul's or addcdiv's ``tensor1``/``tensor2`` that is no tensor (a NumPy array):
    positions as the method counts them (the function's wrapper words its own)."""
    elementwise.require_tensor(name, tensor1, 1, "tensor1")
    elementwise.require_tensor(name, tensor2, 2, "tensor2")


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *number_first, value=1) -> Tensor:
    """input + value * tensor1 * tensor2 (floating tensors: one AddcmulBackward0, as PyTorch's); ``*number_first``:
    PyTorch's deprecated value-first form."""
    if number_first:
        tensor1, tensor2, value = _deprecated.value_first("addcmul", tensor1, tensor2, number_first, value, True)
    if tensor1.__class__ is not Tensor or tensor2.__class__ is not Tensor:  # (an array: PyTorch's TypeError)
        _require_tensors("addcmul", tensor1, tensor2)
    value = elementwise.addc_value("addcmul", input, tensor1, tensor2, value)
    return pointwise.addc(pointwise.Addcmul, input, tensor1, tensor2, value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *number_first, value=1) -> Tensor:
    """input + value * tensor1 / tensor2 (floating tensors: one AddcdivBackward0, as PyTorch's); ``*number_first``:
    PyTorch's deprecated value-first form."""
    if number_first:
        tensor1, tensor2, value = _deprecated.value_first("addcdiv", tensor1, tensor2, number_first, value, True)
    if tensor1.__class__ is not Tensor or tensor2.__class__ is not Tensor:  # (an array: PyTorch's TypeError)
        _require_tensors("addcdiv", tensor1, tensor2)
    value = elementwise.addc_value("addcdiv", input, tensor1, tensor2, value)
    return pointwise.addc(pointwise.Addcdiv, input, tensor1, tensor2, value)


# The op families and the helpers the Tensor methods call (``ember/_tensor_methods/``).
__all__ = ["activation", "addcdiv", "addcmul", "clone", "complex", "cumulative", "distance", "elementwise",
           "float_parts", "gamma_fns", "histogram", "index_update", "indexing", "inplace", "integer_fns", "linalg",
           "linalg_compat", "lookup",
           "matrix", "movement", "dequantize", "new_filled", "new_full", "new_tensor", "pointwise", "quantize",
           "reduction", "sampling", "shape", "sorting", "special_fns", "statistics", "storage", "strided", "to",
           "type_", "unary", "view_inplace"]


def __getattr__(name: str):
    """``torch.ops.<namespace>``: the operators that ``torch.library.custom_op`` made in that namespace."""
    from .. import library
    from .._missing import module_getattr

    found = library.namespace(name)
    return found if found is not None else module_getattr(__name__)(name)


# Tensor's methods call the ops through this package; Tensor cannot import it (ops build on Tensor).
bind_ops(sys.modules[__name__])
