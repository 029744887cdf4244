"""DTensor's methods and operators: the ones with a sharding rule (``_ops.py``) and the local-safe ones; every
other Tensor method, property and operator raises NotImplementedError naming the op and the placements. The
functions with a rule (``torch.exp``, ``F.relu``, ``F.linear``, ``torch.matmul``) reach it through ember's
op recorder (``ember/autograd/graph.py``), which asks ``_api._dispatch`` first when a DTensor exists."""

from __future__ import annotations

import functools

from ..._missing import MissingTensorMethods
from ..._tensor import Tensor
from . import _ops
from ._api import _FUNCTIONS, DTensor, unsupported

# Metadata, autograd bookkeeping and methods that act on the piece alone correctly whatever the placement.
_ALLOWED = {
    "dtype", "device", "requires_grad", "requires_grad_", "grad_fn", "is_leaf", "layout", "is_cuda", "is_cpu",
    "is_meta", "is_sparse", "is_quantized", "is_nested", "is_floating_point", "is_complex", "element_size",
    "itemsize", "backward", "register_hook", "retain_grad", "retains_grad", "register_post_accumulate_grad_hook",
    "output_nr", "get_device", "is_contiguous", "is_inference", "names",
}
_OPERATORS = (
    "__iadd__", "__isub__", "__imul__", "__itruediv__", "__floordiv__", "__rfloordiv__", "__ifloordiv__",
    "__mod__", "__rmod__", "__pow__", "__rpow__", "__ipow__", "__rmatmul__", "__pos__", "__abs__",
    "__invert__", "__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__", "__lshift__", "__rshift__",
    "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__getitem__", "__setitem__", "__iter__",
    "__bool__", "__float__", "__int__", "__index__", "__array__", "__contains__", "__complex__",
)


def _binary(name: str, reflected: bool = False):
    def method(self, other, *, alpha=None):
        if alpha is not None and alpha != 1:
            other = _ops.elementwise("mul", other, alpha)
        return _ops.elementwise(name, other, self) if reflected else _ops.elementwise(name, self, other)

    method.__name__ = name
    method.__doc__ = f"``{name}`` with PyTorch's sharding rule (see ember.distributed.tensor._ops)."
    return method


def _unary(name: str):
    def method(self):
        return _ops.unary(name, self)

    method.__name__ = name
    return method


def _refuse(name: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(unsupported(name, (self,) + tuple(a for a in args if isinstance(a, Tensor))))

    method.__name__ = name
    return method


def _len(self) -> int:
    return self.shape[0]


def _zero_(self) -> DTensor:
    self._data[...] = 0  # zero is zero under every placement
    self._bump_version()
    return self


def _copy_(self, src, non_blocking: bool = False) -> DTensor:
    """Copy a DTensor of the same shape and placements, piece by piece."""
    if not isinstance(src, DTensor) or src.placements != self.placements or src.shape != self.shape:
        raise NotImplementedError(unsupported("copy_ (from a DTensor of the same shape and placements only)",
                                              (self, src)))
    self._data[...] = src._data
    self._bump_version()
    return self


def _like(self, fn):
    return DTensor.from_local(fn(self.to_local()), self.device_mesh, self.placements, shape=tuple(self.shape))


_METHODS = {
    "__add__": _binary("add"), "__radd__": _binary("add", True), "add": _binary("add"),
    "__sub__": _binary("sub"), "__rsub__": _binary("sub", True), "sub": _binary("sub"),
    "__mul__": _binary("mul"), "__rmul__": _binary("mul", True), "mul": _binary("mul"),
    "__truediv__": _binary("div"), "__rtruediv__": _binary("div", True), "div": _binary("div"),
    "__neg__": _unary("neg"),
    "__matmul__": _ops.matmul, "matmul": _ops.matmul, "mm": _ops.matmul,
    "transpose": _ops.transpose, "t": _ops.t, "sum": _ops.sum, "mean": _ops.mean,
    "clone": lambda self, *, memory_format=None: _like(self, Tensor.clone),
    "contiguous": lambda self, memory_format=None: _like(self, Tensor.contiguous),
    "item": lambda self: self.full_tensor().item(),
    "tolist": lambda self: self.full_tensor().tolist(),
    "numpy": lambda self, *, force=False: self.full_tensor().numpy(),
    "zero_": _zero_, "copy_": _copy_, "__len__": _len,
    **{name: _unary(name) for name in _ops._UNARY},
}


def _linear(x, weight, bias=None):
    """``F.linear`` on DTensors: ``x @ weight.t() + bias`` by the matmul and elementwise rules."""
    out = _ops.matmul(x, _ops.t(weight) if isinstance(weight, DTensor) else weight)
    return out if bias is None else _ops.elementwise("add", out, bias)


def install() -> None:
    """Put the methods on DTensor, the functions into the op recorder's table (``torch.exp(dt)``,
    ``F.relu(dt)``, ``F.linear``, ``torch.matmul``), and make every other public Tensor attribute refuse."""
    for name in _ops._UNARY:
        if name != "square":  # (recorded as a multiplication)
            _FUNCTIONS[name.capitalize()] = functools.partial(_ops.unary, name)
    _FUNCTIONS.update(Linear=_linear, MatMul=_ops.matmul)
    for name, fn in _METHODS.items():
        setattr(DTensor, name, fn)
    own = set(DTensor.__dict__)
    for name in _OPERATORS:
        if name not in own:
            setattr(DTensor, name, _refuse(name.strip("_")))
    # (not the names Tensor lacks: reading one raises MissingFeatureError naming PyTorch's, on a DTensor too)
    public = {n for klass in Tensor.__mro__ if klass is not MissingTensorMethods for n in vars(klass)
              if not n.startswith("_")}
    blocked = frozenset(public - _ALLOWED - own)

    def __getattribute__(self, name):
        if name in blocked:
            raise NotImplementedError(unsupported(name, (self,)))
        return object.__getattribute__(self, name)

    DTensor.__getattribute__ = __getattribute__
    DTensor.__hash__ = Tensor.__hash__
