"""ember's differentiable ops, and the Tensor methods and operators that call them.

Each submodule holds one family of ops (Node subclasses with forward and
backward side by side, plus the public functions). ``_install`` below binds
them to ``Tensor`` so ``x.exp()``, ``x + y`` and ``ember.exp(x)`` are one code path.
"""

from __future__ import annotations

from .. import _dtype, _malloc, storage  # noqa: F401  (_malloc: tunes glibc's malloc for NumPy's big buffers)
from .._backend import xp
from .._device import check_device
from .._legacy import type_
from .._tensor import Tensor
from ..autograd.graph import Node
from . import activation, elementwise, indexing, inplace, linalg, reduction, shape, unary
from .elementwise import cast


class Clone(Node):
    def forward(self, x):
        return x.copy()

    def backward(self, g):
        return (g,)


def clone(x: Tensor, *, memory_format=None) -> Tensor:
    return Clone.apply(x)


def to(x: Tensor, *args, **kwargs) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; keywords as PyTorch."""
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    copy = kwargs.get("copy", False)
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif a is not None and not isinstance(a, bool):
            device = a
    check_device(device)
    out = cast(x, dtype) if dtype is not None else x
    return clone(out) if copy and out is x else out


def _new(fill):
    def method(x: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        from .._creation import _size

        dt = _dtype.to_np(dtype) if dtype is not None else x._data.dtype
        t = Tensor._make(fill(_size(size), dt))
        return t.requires_grad_(requires_grad) if requires_grad else t

    return method


def _new_full(x: Tensor, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dt = _dtype.to_np(dtype) if dtype is not None else x._data.dtype
    return Tensor._make(xp.full(tuple(size), fill_value, dtype=dt)).requires_grad_(requires_grad)


def _new_tensor(x: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    from .._creation import tensor

    return tensor(data, dtype=dtype or x.dtype, requires_grad=requires_grad)


def _reflected(fn):
    def method(self, other):
        return fn(other, self)

    return method


def _install() -> None:
    ew, un, red, shp, idx, ip = elementwise, unary, reduction, shape, indexing, inplace
    methods = {
        # arithmetic and comparison operators
        "__add__": ew.add, "__radd__": _reflected(ew.add), "__sub__": ew.sub, "__rsub__": _reflected(ew.sub),
        "__mul__": ew.mul, "__rmul__": _reflected(ew.mul), "__truediv__": ew.div,
        "__rtruediv__": _reflected(ew.div), "__floordiv__": ew.floor_divide,
        "__rfloordiv__": _reflected(ew.floor_divide), "__mod__": ew.remainder,
        "__rmod__": _reflected(ew.remainder), "__pow__": ew.pow, "__rpow__": _reflected(ew.pow),
        "__matmul__": linalg.matmul, "__rmatmul__": _reflected(linalg.matmul), "__neg__": un.neg,
        "__abs__": un.abs, "__pos__": lambda x: x,
        "__eq__": ew.eq, "__ne__": ew.ne, "__lt__": ew.lt, "__le__": ew.le, "__gt__": ew.gt, "__ge__": ew.ge,
        "__and__": ew.bitwise_and, "__or__": ew.bitwise_or, "__xor__": ew.bitwise_xor,
        "__rand__": _reflected(ew.bitwise_and), "__ror__": _reflected(ew.bitwise_or),
        "__invert__": ew.bitwise_not,
        "__iadd__": ip.add_, "__isub__": ip.sub_, "__imul__": ip.mul_, "__itruediv__": ip.div_,
        "__getitem__": idx.getitem, "__setitem__": idx.setitem,
        # named elementwise
        "add": ew.add, "sub": ew.sub, "subtract": ew.sub, "mul": ew.mul, "multiply": ew.mul, "div": ew.div,
        "divide": ew.div, "true_divide": ew.true_divide, "floor_divide": ew.floor_divide,
        "remainder": ew.remainder, "pow": ew.pow, "maximum": ew.maximum, "minimum": ew.minimum,
        "eq": ew.eq, "ne": ew.ne, "lt": ew.lt, "le": ew.le, "gt": ew.gt, "ge": ew.ge,
        "greater": ew.gt, "less": ew.lt, "logical_and": ew.logical_and, "logical_or": ew.logical_or,
        "logical_not": ew.logical_not, "logical_xor": ew.logical_xor,
        "neg": un.neg, "negative": un.neg, "abs": un.abs, "exp": un.exp, "log": un.log, "log1p": un.log1p,
        "sqrt": un.sqrt, "rsqrt": un.rsqrt, "sin": un.sin, "cos": un.cos, "tanh": un.tanh,
        "sigmoid": un.sigmoid, "relu": un.relu, "sign": un.sign, "floor": un.floor, "ceil": un.ceil,
        "round": un.round, "trunc": un.trunc, "reciprocal": un.reciprocal, "clamp": un.clamp, "clip": un.clamp,
        "square": un.square, "isnan": ew.isnan, "isinf": ew.isinf, "isfinite": ew.isfinite,
        "equal": ew.equal, "allclose": ew.allclose, "isclose": ew.isclose,
        "softmax": activation.softmax, "log_softmax": activation.log_softmax,
        # reductions
        "sum": red.sum, "mean": red.mean, "prod": red.prod, "max": red.max, "min": red.min,
        "amax": red.amax, "amin": red.amin, "argmax": red.argmax, "argmin": red.argmin, "var": red.var,
        "std": red.std, "norm": red.norm, "logsumexp": red.logsumexp, "all": red.all, "any": red.any,
        "cumsum": red.cumsum,
        # shape
        "reshape": shp.reshape, "view": shp.view, "flatten": shp.flatten, "unflatten": shp.unflatten,
        "permute": shp.permute, "transpose": shp.transpose, "swapaxes": shp.transpose, "t": shp.t,
        "expand": shp.expand, "expand_as": shp.expand_as, "broadcast_to": shp.broadcast_to,
        "squeeze": shp.squeeze, "unsqueeze": shp.unsqueeze, "contiguous": shp.contiguous,
        "split": shp.split, "chunk": shp.chunk, "unbind": shp.unbind, "flip": shp.flip,
        "repeat": shp.repeat, "view_as": lambda x, o: shp.view(x, o._data.shape),
        "reshape_as": lambda x, o: shp.reshape(x, o._data.shape),
        # indexing
        "narrow": idx.narrow, "select": idx.select, "gather": idx.gather, "scatter_add": idx.scatter_add,
        "scatter": idx.scatter, "index_select": idx.index_select, "masked_fill": idx.masked_fill,
        "nonzero": idx.nonzero, "masked_select": idx.masked_select,
        "where": lambda x, cond, other: idx.where(cond, x, other),
        # linear algebra
        "matmul": linalg.matmul, "mm": linalg.mm, "bmm": linalg.bmm, "mv": linalg.mv, "dot": linalg.dot,
        "outer": linalg.outer,
        # in place
        "add_": ip.add_, "sub_": ip.sub_, "mul_": ip.mul_, "div_": ip.div_, "pow_": ip.pow_,
        "addcmul_": ip.addcmul_, "addcdiv_": ip.addcdiv_, "clamp_": ip.clamp_, "clip_": ip.clamp_,
        "relu_": ip.relu_, "neg_": ip.neg_, "exp_": ip.exp_, "sqrt_": ip.sqrt_, "sigmoid_": ip.sigmoid_,
        "tanh_": ip.tanh_, "abs_": ip.abs_, "fill_": ip.fill_, "zero_": ip.zero_, "copy_": ip.copy_,
        "normal_": ip.normal_, "uniform_": ip.uniform_, "bernoulli_": ip.bernoulli_, "random_": ip.random_,
        "exponential_": ip.exponential_,
        # memory
        "storage": storage.typed_storage, "untyped_storage": storage.untyped_storage,
        "data_ptr": storage.tensor_data_ptr, "storage_offset": storage.storage_offset, "stride": storage.stride,
        # conversion
        "clone": clone, "to": to, "type": type_, "type_as": lambda x, o: cast(x, o.dtype),
        "float": lambda x, memory_format=None: cast(x, _dtype.float32),
        "double": lambda x, memory_format=None: cast(x, _dtype.float64),
        "half": lambda x, memory_format=None: cast(x, _dtype.float16),
        "long": lambda x, memory_format=None: cast(x, _dtype.int64),
        "int": lambda x, memory_format=None: cast(x, _dtype.int32),
        "bool": lambda x, memory_format=None: cast(x, _dtype.bool_),
        "new_zeros": _new(xp.zeros), "new_ones": _new(xp.ones), "new_empty": _new(xp.empty),
        "new_full": _new_full, "new_tensor": _new_tensor,
    }
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    Tensor.T = property(shp.T)
    Tensor.mT = property(lambda x: shp.transpose(x, -2, -1))


_install()
