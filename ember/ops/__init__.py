"""ember's differentiable ops, and the Tensor methods and operators that call them.

Each submodule holds one family of ops (Node subclasses with forward and
backward side by side, plus the public functions). ``_install`` below binds
them to ``Tensor`` so ``x.exp()``, ``x + y`` and ``ember.exp(x)`` are one code path.
"""

from __future__ import annotations

import builtins

from .. import _dtype, _malloc, storage  # noqa: F401  (_malloc: tunes glibc's malloc for NumPy's big buffers)
from .._arg_aliases import with_numpy_names
from .._backend import xp
from .._device import check_device
from .._legacy import type_
from .._tensor import Tensor
from ..autograd.graph import Node
from . import (
    activation,
    complex,
    cumulative,
    distance,
    elementwise,
    gamma_fns,
    index_update,
    indexing,
    inplace,
    linalg,
    linalg_compat,
    lookup,
    matrix,
    movement,
    pointwise,
    reduction,
    sampling,
    shape,
    sorting,
    statistics,
    unary,
    view_inplace,
)
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
    def method(x: Tensor, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        from .._creation import _size

        dt = _dtype.to_np(dtype) if dtype is not None else x._data.dtype
        t = Tensor._make(fill(_size(sizes, size), dt))
        return t.requires_grad_(requires_grad) if requires_grad else t

    return method


def _new_full(x: Tensor, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dt = _dtype.to_np(dtype) if dtype is not None else x._data.dtype
    return Tensor._make(xp.full(tuple(size), fill_value, dtype=dt)).requires_grad_(requires_grad)


def _new_tensor(x: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    from .._creation import tensor

    return tensor(data, dtype=dtype or x.dtype, requires_grad=requires_grad)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """input + value * tensor1 * tensor2."""
    prod = elementwise.mul(tensor1, tensor2)
    return elementwise.add(input, prod if value == 1 else elementwise.mul(prod, value))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """input + value * tensor1 / tensor2."""
    quot = elementwise.div(tensor1, tensor2)
    return elementwise.add(input, quot if value == 1 else elementwise.mul(quot, value))


def _reflected(fn):
    def method(self, other):
        return fn(other, self)

    return method


def _coverage_methods() -> dict:
    """Methods public code uses that the API-coverage scan (tools/api_coverage.py) found missing."""
    from .. import _sparse

    def cast_to(dtype):
        return lambda x, memory_format=None: cast(x, dtype)

    def new(x: Tensor, *args, device=None) -> Tensor:
        """PyTorch's legacy ``x.new(...)``: a tensor of ``x``'s dtype, uninitialised for sizes, else from data."""
        from .._legacy import legacy_array

        array, source = legacy_array(args, device, x.dtype, "new", typed=True)
        return source if source is not None else Tensor._make(array)

    return {
        "mode": statistics.mode, "new": new,
        "to_dense": lambda x, dtype=None, *, masked_grad=None: x if dtype is None else cast(x, dtype),
        "byte": cast_to(_dtype.uint8), "char": cast_to(_dtype.int8), "short": cast_to(_dtype.int16),
        "to_sparse": _sparse.to_sparse, "to_sparse_coo": lambda x: _sparse.to_sparse(x),
        "size": Tensor.size,  # bound again so that it takes size(axis=) as PyTorch's does
    }


def _install() -> None:
    ew, un, red, shp, idx, ip = elementwise, unary, reduction, shape, indexing, inplace
    pw, iu = pointwise, index_update
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
        # matrix structure, sorting, movement, sampling
        "tril": matrix.tril, "triu": matrix.triu, "tril_": matrix.tril_, "triu_": matrix.triu_,
        "diagonal": matrix.diagonal, "diag": matrix.diag, "diag_embed": matrix.diag_embed,
        "sort": sorting.sort, "argsort": sorting.argsort, "msort": sorting.msort, "topk": sorting.topk,
        "roll": movement.roll, "multinomial": sampling.multinomial, "bernoulli": sampling.bernoulli,
        # more pointwise math
        "tan": pw.tan, "atan": pw.atan, "arctan": pw.atan, "asin": pw.asin, "arcsin": pw.asin, "acos": pw.acos,
        "arccos": pw.acos, "sinh": pw.sinh, "cosh": pw.cosh, "asinh": pw.asinh, "arcsinh": pw.asinh,
        "acosh": pw.acosh, "arccosh": pw.acosh, "atanh": pw.atanh, "arctanh": pw.atanh, "log2": pw.log2,
        "log10": pw.log10, "expm1": pw.expm1, "exp2": pw.exp2, "erf": pw.erf, "erfc": pw.erfc,
        "erfinv": pw.erfinv, "logit": pw.logit, "frac": pw.frac, "sgn": pw.sgn, "atan2": pw.atan2,
        "arctan2": pw.atan2, "lerp": pw.lerp, "clamp_min": pw.clamp_min,
        "clamp_max": pw.clamp_max,
        "lerp_": lambda x, end, weight: iu._write_back(x, lambda t: pw.lerp(t, end, weight), end, weight),
        "clamp_min_": lambda x, min: iu._write_back(x, lambda t: pw.clamp_min(t, min), min),
        "clamp_max_": lambda x, max: iu._write_back(x, lambda t: pw.clamp_max(t, max), max),
        # updates at indices, and the in-place indexing ops
        "index_add": iu.index_add, "index_copy": iu.index_copy, "index_fill": iu.index_fill,
        "index_add_": iu.index_add_, "index_copy_": iu.index_copy_, "index_fill_": iu.index_fill_,
        "index_put": iu.index_put, "index_put_": iu.index_put_,
        "masked_fill_": iu.masked_fill_, "scatter_": iu.scatter_, "scatter_add_": iu.scatter_add_,
        # cumulative, movement, linear algebra, statistics
        "cumprod": cumulative.cumprod, "cummax": cumulative.cummax, "cummin": cumulative.cummin,
        "diff": cumulative.diff, "repeat_interleave": movement.repeat_interleave, "tile": movement.tile,
        "movedim": movement.movedim, "moveaxis": movement.movedim, "tensor_split": movement.tensor_split,
        "trace": matrix.trace, "addmm": linalg.addmm, "baddbmm": linalg.baddbmm, "addbmm": linalg.addbmm,
        "addmv": linalg.addmv, "addr": linalg.addr, "inner": linalg.inner, "median": statistics.median,
        "kthvalue": statistics.kthvalue, "count_nonzero": statistics.count_nonzero,
        "aminmax": statistics.aminmax, "dist": distance.dist, "addcmul": addcmul, "addcdiv": addcdiv,
        "nansum": statistics.nansum, "nanmean": statistics.nanmean, "logcumsumexp": cumulative.logcumsumexp,
        "fliplr": movement.fliplr, "flipud": movement.flipud, "rot90": movement.rot90,
        "unique": lookup.unique, "bincount": lookup.bincount, "take": lookup.take,
        "take_along_dim": lookup.take_along_dim, "nan_to_num": pw.nan_to_num, "logaddexp": pw.logaddexp,
        "hypot": pw.hypot, "fmod": pw.fmod, "bitwise_and": ew.bitwise_and, "bitwise_or": ew.bitwise_or,
        "bitwise_xor": ew.bitwise_xor, "bitwise_not": ew.bitwise_not,
        # in-place pointwise
        **{name + "_": ip._unary_inplace_of(op) for name, op in (
            ("log", un.log), ("log1p", un.log1p), ("sin", un.sin), ("cos", un.cos), ("floor", un.floor),
            ("ceil", un.ceil), ("trunc", un.trunc), ("round", un.round), ("sign", un.sign),
            ("reciprocal", un.reciprocal), ("rsqrt", un.rsqrt), ("square", un.square), ("tan", pw.tan),
            ("atan", pw.atan), ("sinh", pw.sinh), ("cosh", pw.cosh), ("erf", pw.erf), ("erfinv", pw.erfinv),
            ("expm1", pw.expm1), ("frac", pw.frac), ("nan_to_num", pw.nan_to_num), ("logit", pw.logit),
            ("lgamma", gamma_fns.lgamma), ("digamma", gamma_fns.digamma))},
        "unfold": movement.unfold, "ravel": lambda x: shp.reshape(x, -1), "swapdims": shp.transpose,
        "absolute": un.abs, "fmax": pw.fmax, "fmin": pw.fmin,
        "unsqueeze_": view_inplace.unsqueeze_, "squeeze_": view_inplace.squeeze_, "t_": view_inplace.t_,
        "transpose_": view_inplace.transpose_, "swapdims_": view_inplace.transpose_,
        "swapaxes_": view_inplace.transpose_,
        **linalg_compat.TENSOR_METHODS, **gamma_fns.TENSOR_METHODS,  # inverse, det, cholesky, lu, svd, qr, ...
        "remainder_": ip.remainder_, "fmod_": lambda x, other: iu._write_back(x, lambda t: pw.fmod(t, other), other),
    }
    methods.update(_coverage_methods())
    methods.update(_complex_methods())
    methods.update(_half_methods())
    for name, fn in methods.items():
        setattr(Tensor, name, with_numpy_names(name, fn))
    Tensor.T = property(shp.T)
    Tensor.mT = property(lambda x: shp.transpose(x, -2, -1))
    Tensor.real = property(complex.real, complex.set_real)
    Tensor.imag = property(complex.imag, complex.set_imag)
    Tensor.mH = Tensor.H = property(complex.adjoint)


def _complex_methods() -> dict:
    """The Tensor methods of complex numbers (ops/complex.py) and the complex dtype conversions."""
    c = complex
    return {
        "conj": c.conj, "conj_physical": c.conj_physical, "resolve_conj": c.resolve_conj,
        "resolve_neg": c.resolve_neg, "is_conj": c.is_conj, "is_neg": c.is_neg, "angle": c.angle,
        "adjoint": c.adjoint, "__complex__": lambda x: builtins.complex(x.item()),
        "cfloat": lambda x, memory_format=None: cast(x, _dtype.complex64),
        "cdouble": lambda x, memory_format=None: cast(x, _dtype.complex128),
        "chalf": lambda x, memory_format=None: cast(x, _dtype.complex32),
        "stft": _spectral("stft"), "istft": _spectral("istft"),
    }


def _half_methods() -> dict:
    """The Tensor methods of the half-precision dtypes (bfloat16 arrays come from ml_dtypes, see _dtype.py)."""
    return {"bfloat16": lambda x, memory_format=None: cast(x, _dtype.bfloat16)}


def _spectral(name: str):
    """``Tensor.stft`` / ``Tensor.istft``: ember.fft._stft's function, imported on first use."""
    def method(x: Tensor, *args, **kwargs) -> Tensor:
        from ..fft import _stft

        return getattr(_stft, name)(x, *args, **kwargs)

    method.__name__ = name
    return method


_install()
