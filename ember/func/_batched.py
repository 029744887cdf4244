"""BatchedTensor: what a function under ``vmap`` sees in place of a batched input.

A ``BatchedTensor`` stands for one example of a batch. It wraps the whole batch (``_value``, batch at dim 0) and
the vmap level it belongs to, and reports the *logical* shape, the example's (``value.shape[1:]``). Nested vmaps
nest wrappers: the value of a level-2 tensor is a level-1 ``BatchedTensor`` (or a plain tensor), so each level
has its own batch dimension, as in PyTorch's functorch.

Every op on a BatchedTensor goes through ``dispatch``: the op's batching rule (``_rules.py``, ``_rules_nn.py``)
moves the batch dimension where the op expects it and calls the op once on the whole batch, with ordinary ember
ops, so autograd records the batched computation like any other. An op without a rule runs once per example
and the results are stacked (PyTorch's slow fallback), with PyTorch's performance warning.

How ops reach ``dispatch``, at no cost outside vmap: BatchedTensor overrides every Tensor method and operator,
and while a vmap runs the public functions (``torch.*``, ``torch.nn.functional.*``, ``torch.special.*``,
``torch.linalg.*``, ``torch.fft.*``) are replaced, in every ember module that binds them, by dispatching
stand-ins (``_patching.py``). Code that still reaches a BatchedTensor's array (``_data``) is code without a rule:
reading it raises ``NoBatchingRule``, and vmap then runs the whole function once per example.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import Any

from .. import _warnings
from .._backend import xp
from .._size import Size, inplace_broadcast_mismatch
from .._tensor import Tensor
from ..return_types import rebuilt


class PerExampleValue(RuntimeError):
    """PyTorch's vmap error for code that needs a batched tensor's value as a Python object (``.item()``,
    ``if x:``, ``.tolist()``, ``.numpy()``): one value per example, which vmap cannot give. Its own class so that
    ``jacfwd``'s batched run (``_basis.py``) can tell it from the function's other errors and fall back."""


class NoBatchingRule(BaseException):  # noqa: N818  (BaseException: no ``except Exception`` in ember swallows it)
    """Raised where code without a batching rule reads a BatchedTensor's array; vmap (of that level) catches it
    and runs the function once per example."""

    def __init__(self, level: int, where: str) -> None:
        super().__init__(level, where)
        self.level, self.where = level, where


class _Level:
    __slots__ = ("size", "randomness", "per_example", "no_loop")

    def __init__(self, size: int, randomness: str) -> None:
        self.size, self.randomness = size, randomness
        self.per_example = False  # running its function once per example (the fallback): nothing batched at it
        self.no_loop = False  # an op without a rule raises NoBatchingRule instead of looping (_batched_vjp.py)


class _ThreadState(threading.local):
    """vmap's state, per thread (as PyTorch's): another thread's ops are outside this thread's vmap."""

    top = 0  # how many levels the op being dispatched sees (a rule at level n runs its ops at n - 1)

    def __init__(self) -> None:
        self.levels: list[_Level] = []  # the active vmaps, outermost first; level n is levels[n - 1]


_State = _ThreadState()


def batch_size(level: int) -> int:
    return _State.levels[level - 1].size


def randomness(level: int) -> str:
    return _State.levels[level - 1].randomness


def visible_levels() -> list[int]:
    """The levels an op sees now, lowest first (not the ones running their function once per example)."""
    return [n for n in range(1, _State.top + 1) if not _State.levels[n - 1].per_example]


def _entry_point() -> str:
    """The ember function that read the array (for the fallback's message): the innermost public one."""
    frame = sys._getframe(2)
    while frame is not None:
        module, name = frame.f_globals.get("__name__", ""), frame.f_code.co_name
        if not module.startswith("ember."):
            break
        # (not a comprehension's or a lambda's frame: ``<listcomp>`` names no function a user knows)
        if not name.startswith(("_", "<")) and name not in ("apply", "forward"):
            return f"{module}.{name}"
        frame = frame.f_back
    return "an ember function"


def _no_rule_data(self: BatchedTensor):
    _check_inplace_on_unbatched(sys._getframe(1), self)
    raise NoBatchingRule(self._level, _entry_point())


def _check_inplace_on_unbatched(frame, batched: BatchedTensor) -> None:
    """An in-place method of a tensor that is not batched, given a batched argument (``batched``): PyTorch's error
    (running the function once per example would change that tensor once per example)."""
    while frame is not None and frame.f_globals.get("__name__", "").startswith("ember."):
        name = frame.f_code.co_name
        target = frame.f_locals.get("self")
        if (name.endswith("_") and not name.startswith("__") or name.startswith("__i")) and \
                isinstance(target, Tensor) and type(target) is not BatchedTensor:
            raise unbatched_inplace_error(overload_of(name, (), frame.f_locals), target.shape,
                                          [batched._value.shape], batched._level)
        frame = frame.f_back


# PyTorch's refusal of an in-place op of an unbatched tensor with a batched argument names what refuses it: its
# in-place binary arithmetic batching rule ("inplace arithmetic"), the fallback of an op with no batching rule (the
# ATen op: "aten::pow_"), an op's own rule (its name: "index_add_"); add_ and the bitwise ops reach the kernel's
# shape check instead
# shape check instead. masked_fill_ with a number (its Scalar overload) has the arithmetic rule, with a tensor value
# (``masked_fill_.Tensor``, ``overload_of``) the fallback
_INPLACE_ARITHMETIC = frozenset("sub_ mul_ div_ clamp_min_ clamp_max_ copy_ masked_fill_ __isub__ __imul__ "
                                "__itruediv__".split())
_INPLACE_SHAPE_CHECKED = frozenset("add_ atan2_ __iadd__ __iand__ __ior__ __ixor__".split())
_INPLACE_FALLBACK = {name: name for name in ("pow_ clamp_ clip_ masked_scatter_ lerp_ addcmul_ addcdiv_ remainder_ "
                                             "fmod_ floor_divide_").split()}
_INPLACE_FALLBACK.update({"masked_fill_.Tensor": "masked_fill_", "__ifloordiv__": "floor_divide_",
                          "__imod__": "remainder_", "__ipow__": "pow_"})


def overload_of(name: str, args: tuple, kwargs: dict) -> str:
    """The key ``unbatched_inplace_error`` reads for the in-place call ``name(*args, **kwargs)``: its name, or
    for masked_fill_ with a tensor value PyTorch's ``masked_fill_.Tensor`` overload, which has no batching rule."""
    if name == "masked_fill_" and isinstance(args[2] if len(args) > 2 else kwargs.get("value"), Tensor):
        return "masked_fill_.Tensor"
    return name


def unbatched_inplace_error(name: str, self_shape: tuple, batched_shapes: list, level: int) -> RuntimeError:
    """PyTorch's error for the in-place op ``name`` of an unbatched tensor of shape ``self_shape`` with batched
    arguments (``batched_shapes``: their batch values' shapes, the batch dim first) at vmap level ``level``."""
    if name in _INPLACE_SHAPE_CHECKED:  # (the kernel's check: sizes that do not broadcast, a shape other than self's)
        for shape in batched_shapes:  # (an example of fewer dims than self: the batch dim first, then 1s, as vmap's)
            shape = (shape[0],) + (1,) * max(0, len(self_shape) - len(shape) + 1) + tuple(shape[1:])
            mismatch = inplace_broadcast_mismatch(tuple(self_shape), shape)
            if mismatch is not None:
                return RuntimeError(mismatch)
    if name in _INPLACE_ARITHMETIC:
        return inplace_error("inplace arithmetic")
    if name in _INPLACE_FALLBACK:
        return inplace_error(f"aten::{_INPLACE_FALLBACK[name]}", f"at level {level}")
    return inplace_error(name)


def inplace_error(name: str, where: str = "in a vmap") -> RuntimeError:
    """PyTorch's error for an in-place op of an unbatched tensor with a batched argument (``where``: its fallback
    names the level, "at level 1")."""
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that "
        "has more elements than `self`. This happened due to `other` being vmapped over but `self` not being vmapped "
        f"over {where}. Please try to use out-of-place operators instead of {name}. If said operator is being "
        "called inside the PyTorch framework, please file a bug report instead.")


class BatchedTensor(Tensor):
    """One example of a batch, inside ``vmap`` (see the module docstring). Not constructed by users."""

    # ``_in_dim``: where vmap's caller had this input's batch dim (its in_dim; the value holds it at dim 0), which
    # a custom Function's ``vmap`` staticmethod is given as PyTorch's is; 0 for every tensor an op made
    __slots__ = ("_value", "_level", "_in_dim")
    _c_type_name = "Tensor"  # (the type PyTorch's messages name: its examples inside vmap are plain Tensors)

    # Shadows Tensor's ``_data`` slot: ember code reading the array directly has no batching rule.
    _data = property(_no_rule_data)

    @property
    def shape(self) -> Size:
        return Size(self._value.shape[1:])

    def _example_array(self):
        """A value-less array with the example's shape and dtype: what a backward formula run on batched
        cotangents (``autograd/recorded.py``) asks about its operand."""
        core = self._value
        while type(core) is BatchedTensor:
            core = core._value
        return xp.broadcast_to(xp.empty((), dtype=core._data.dtype), self.shape)

    def _spread(self, plain: Tensor) -> Tensor:
        """A copy of ``plain`` (not batched) for every example of this tensor's batch, at each of its levels: a
        buffer that the examples' values can be written into in place (a backward formula run on a batch of
        cotangents, ``autograd/recorded.py``)."""
        levels, core = [], self
        while type(core) is BatchedTensor:
            levels.append(core._level)
            core = core._value
        sizes = tuple(core.shape[:len(levels)])
        out = plain.reshape(*[1] * len(levels), *plain.shape).expand(*sizes, *plain.shape).clone()
        for level in reversed(levels):  # the lowest level's dim first
            out = wrap(out, level)
        return out

    def size(self, dim: int | None = None):
        shape = self._value.shape[1:]
        if dim is None:
            return Size(shape)
        if not -len(shape) <= dim < max(len(shape), 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(len(shape), 1)}, "
                             f"{max(len(shape), 1) - 1}], but got {dim})")
        return shape[dim]

    @property
    def ndim(self) -> int:
        return self._value.ndim - 1

    def dim(self) -> int:
        return self._value.ndim - 1

    ndimension = dim

    def numel(self) -> int:
        return math.prod(self._value.shape[1:])

    nelement = numel

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._value.shape[1]

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def device(self):
        return self._value.device

    def element_size(self) -> int:
        return self._value.element_size()

    def is_floating_point(self) -> bool:
        return self._value.is_floating_point()

    def is_complex(self) -> bool:
        return self._value.is_complex()

    def is_contiguous(self, memory_format=None) -> bool:
        return self._value.is_contiguous()

    @property
    def requires_grad(self) -> bool:
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._value.requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> BatchedTensor:
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def _requires_grad(self) -> bool:  # (ember's own code reads the slot; it answers for the batch)
        return self._value.requires_grad

    @property
    def grad_fn(self):
        return self._value.grad_fn

    @property
    def _grad_fn(self):  # (ember's own code reads the slot, as _requires_grad)
        return self._value._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._value.is_leaf

    @property
    def grad(self):
        g = self._value.grad
        return None if g is None else wrap(g, self._level)

    def __repr__(self) -> str:
        inner = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n    {inner}\n)"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self) if not spec else format(self._value, spec)

    def item(self):
        raise PerExampleValue("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations.")

    def __bool__(self) -> bool:
        raise PerExampleValue("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow. We don't support that yet, please shout over at "
                           "https://github.com/pytorch/functorch/issues/257 .")

    def tolist(self):
        raise PerExampleValue("vmap: It looks like you're calling .tolist() on a Tensor, which turns its values into "
                           "Python numbers; vmap cannot batch that. Return the tensor from the function instead.")

    __int__ = __float__ = __index__ = item

    def numpy(self, *, force: bool = False):
        raise PerExampleValue("vmap: .numpy() on a Tensor inside vmap has no value per example; return the tensor "
                           "from the function and convert the result instead.")

    def backward(self, *args, **kwargs) -> None:
        raise RuntimeError("vmap: backward() inside vmap is not supported (as in PyTorch); use torch.func.grad or "
                           "torch.autograd.grad through ember.func's helpers instead.")

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol):
        raise RuntimeError("vmap: a BatchedTensor cannot be saved or pickled; return it from the function first")

    @property
    def T(self):  # noqa: N802  (PyTorch's name)
        return self.permute(*range(self.ndim - 1, -1, -1))

    @property
    def mT(self):  # noqa: N802
        return self.transpose(-2, -1)

    @property
    def data(self):
        return wrap(self._value.data, self._level)


def wrap(value: Tensor, level: int) -> BatchedTensor:
    """``value`` (batch at dim 0) as one example at ``level``."""
    t = object.__new__(BatchedTensor)
    t._value = value
    t._level = level
    t._in_dim = 0
    t._grad = None
    t._hooks = None
    t._base = None
    return t


def wrap_out(out, level: int):
    """A rule's result (a tensor, or a tuple/list of them) wrapped at ``level``."""
    if isinstance(out, Tensor):
        return wrap(out, level)
    if isinstance(out, tuple):
        return rebuilt(type(out), (wrap_out(o, level) for o in out))
    if isinstance(out, list):
        return type(out)(wrap_out(o, level) for o in out)
    return out


def peel_as_given(x, level: int) -> tuple[Any, int | None]:
    """``x``'s batch value with its batch dim where vmap's caller had it (an input's in_dim, else 0), and that dim;
    ``x`` and None if it is not batched at ``level`` (the arguments of a custom Function's ``vmap`` staticmethod,
    as PyTorch's)."""
    if type(x) is BatchedTensor and x._level == level:
        dim = x._in_dim
        return (x._value.movedim(0, dim) if dim else x._value), dim
    return x, None


def peel(x, level: int) -> tuple[Any, bool]:
    """``x``'s batch value and True if it is batched at ``level``; else ``x`` and False."""
    if type(x) is BatchedTensor and x._level == level:
        return x._value, True
    return x, False


def top_level(args, kwargs) -> int:
    """The highest vmap level among the tensors in ``args``/``kwargs`` (and lists of them); 0 if none."""
    level = 0
    for a in args:
        if type(a) is BatchedTensor:
            if a._level > level:
                level = a._level
        elif type(a) in (list, tuple):
            for b in a:
                if type(b) is BatchedTensor and b._level > level:
                    level = b._level
    if kwargs:
        for a in kwargs.values():
            if type(a) is BatchedTensor and a._level > level:
                level = a._level
    return level


# ----------------------------------------------------------------------------- dispatch
RULES: dict[str, Callable] = {}  # name -> rule(name, op, level, args, kwargs)


def rule(*names: str):
    """Register a batching rule under ``names`` (method / ``torch.*`` name; ``F.x`` for torch.nn.functional.x)."""
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return register


def at_level(level: int, fn: Callable, *args, **kwargs):
    """Run ``fn`` seeing only the vmap levels below ``level`` (a rule's ops act on the level's batch values)."""
    saved = _State.top
    _State.top = level - 1
    try:
        return fn(*args, **kwargs)
    finally:
        _State.top = saved


def dispatch(name: str, op: Callable, args: tuple, kwargs: dict, level: int | None = None):
    """Run op ``name`` (``op(*args, **kwargs)`` unbatched) on its batched arguments: its rule, else the loop."""
    if level is None:
        level = top_level(args, kwargs)
        if level == 0:
            return op(*args, **kwargs)
    found = RULES.get(name)
    if found is None:
        return at_level(level, loop, name, op, level, args, kwargs)
    return at_level(level, found, name, op, level, args, kwargs)


def method_op(name: str) -> Callable:
    """``op(self, *args)`` calling the method ``name`` of ``self`` (so a nested BatchedTensor dispatches again)."""
    def op(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    op.__name__ = name
    return op


def _slice(x, level: int, i: int):
    if type(x) is BatchedTensor and x._level == level:
        return x._value.select(0, i)
    if type(x) in (list, tuple):
        return type(x)(_slice(y, level, i) for y in x)
    return x


def loop(name: str, op: Callable, level: int, args: tuple, kwargs: dict):
    """PyTorch's slow fallback: ``op`` once per example, results stacked along a new batch dimension."""
    if _State.levels[level - 1].no_loop:
        raise NoBatchingRule(level, name)
    # the line of the vmapped function that called the op, as PyTorch's warning names: a fixed stacklevel named one
    # of ember's frames (the dispatch between that line and here is deeper for some ops than for others)
    _warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                   f"{name}. ember runs it once per example of the vmapped batch and stacks the results.",
                   UserWarning)
    return per_example(name, op, level, args, kwargs)


def per_example(name: str, op: Callable, level: int, args: tuple, kwargs: dict):
    """``op`` once per example of ``level``'s batch, results stacked along a new batch dimension: the loop, and the
    rule a custom ``autograd.Function`` with ``generate_vmap_rule`` gets (its forward and backward are ember ops, so
    each example's call records its own graph, as PyTorch's generated rule's vmapped forward and backward)."""
    outs = [op(*_slice(args, level, i), **{k: _slice(v, level, i) for k, v in kwargs.items()})
            for i in range(batch_size(level))]
    if name.endswith("_") and not name.startswith("__") and args and isinstance(args[0], Tensor):
        return args[0]  # in place: the examples' slices were changed in place
    return stack_outputs(outs, level, name)


def stack_outputs(outs: list, level: int, name: str):
    from .. import stack

    first = outs[0]
    if isinstance(first, Tensor):
        return wrap(stack(outs), level)
    if isinstance(first, (tuple, list)):
        parts = [stack_outputs([o[j] for o in outs], level, name) for j in range(len(first))]
        return rebuilt(type(first), parts) if isinstance(first, tuple) else type(first)(parts)
    if first is None or all(o == first for o in outs[1:]):
        return first
    raise RuntimeError(f"vmap: {name} returned a Python value that differs between the examples of the batch "
                       f"({type(first).__name__}); vmap can only batch tensors")


# ----------------------------------------------------------------------------- BatchedTensor's methods
_METADATA = set(vars(BatchedTensor)) | {
    "__init__", "__new__", "__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__init_subclass__",
    "__subclasshook__", "__class__", "__dir__", "__sizeof__", "__format__", "__reduce__", "__getstate__",
    "__setstate__", "__array__", "__array_wrap__", "__deepcopy__", "__copy__", "__class_getitem__",
    "_make", "_init", "_fill", "_edge", "_bump_version", "get_device", "is_shared", "is_pinned",
    "dim_order", "storage_offset", "stride", "data_ptr", "untyped_storage", "storage", "is_signed",
    "is_inference", "retain_grad", "register_hook", "register_post_accumulate_grad_hook",
}


def _make_method(name: str):
    op = method_op(name)

    def method(self, *args, **kwargs):
        return dispatch(name, op, (self, *args), kwargs)

    method.__name__ = name
    return method


def _install_methods() -> None:
    import inspect

    for name in dir(Tensor):
        if name in _METADATA or (name.startswith("_") and not name.startswith("__")):
            continue
        attr = inspect.getattr_static(Tensor, name)
        if isinstance(attr, (staticmethod, classmethod)) or not callable(attr):
            continue
        setattr(BatchedTensor, name, _make_method(name))


_install_methods()
