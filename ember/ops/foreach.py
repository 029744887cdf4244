"""``torch._foreach_*``: one op over a list of tensors (optimizers and EMA updates in public code use them).

``_foreach_add(tensors, other)`` is ``tuple(add(t, o) for ...)`` where ``other`` is one scalar (or 0-d
tensor) for every tensor, or a list with one per tensor; the in-place forms (``_foreach_add_``) update
each tensor and return the list. PyTorch fuses these into few kernels on a GPU; on the CPU they are
the ops applied one by one, with the same results (and autograd) as the plain ops.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from .._tensor import Tensor
from . import addcdiv, addcmul
from . import elementwise as ew
from . import pointwise as pw
from . import reduction as red
from . import unary as un


def _each(name: str, tensors, *others) -> list[tuple]:
    """``[(t, o1, o2, ...)]``: each list in ``others`` matched by position, any other value repeated."""
    tensors = list(tensors)
    columns = []
    for other in others:
        if isinstance(other, (list, tuple)):
            if len(other) != len(tensors):
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(tensors)} "
                                   f"and {len(other)}")
            columns.append(list(other))
        else:
            columns.append([other] * len(tensors))
    return list(zip(tensors, *columns))


def _call(fn: Callable, row: tuple, kwargs: dict):
    if len(row) == 4:  # addcmul/addcdiv: the scalars, given positionally to the foreach form, are `value`
        return fn(*row[:3], value=row[3], **kwargs)
    return fn(*row, **kwargs)


def _out_of_place(name: str, op: Callable, arity: int):
    def foreach(self, *others, **kwargs) -> tuple:
        return tuple(_call(op, row, kwargs) for row in _each(name, self, *others[:arity]))

    foreach.__name__ = foreach.__qualname__ = f"_foreach_{name}"
    foreach.__doc__ = f"``tuple({name}(t, ...) for t in tensors)``."
    return foreach


def _in_place(name: str, op: Callable, arity: int):
    method = getattr(Tensor, name + "_", None)

    def foreach_(self, *others, **kwargs) -> list:
        for row in _each(name, self, *others[:arity]):
            if method is not None:
                _call(method, row, kwargs)
            else:  # no in-place method of its own: the op's result written back
                row[0].copy_(_call(op, row, kwargs))
        return list(self)

    foreach_.__name__ = foreach_.__qualname__ = f"_foreach_{name}_"
    foreach_.__doc__ = f"``{name}`` of each tensor, in place; the list."
    return foreach_


# (the foreach maximum/minimum take a number as well: PyTorch's _foreach_maximum(tensors, 1.5), where its
# torch.maximum takes tensors only)
_BINARY = {"add": ew.add, "sub": ew.sub, "mul": ew.mul, "div": ew.div, "maximum": partial(ew.extreme, ew.Maximum),
           "minimum": partial(ew.extreme, ew.Minimum), "pow": ew.pow,
           "clamp_min": pw.clamp_min, "clamp_max": pw.clamp_max}
_UNARY = {"neg": un.neg, "sqrt": un.sqrt, "exp": un.exp, "log": un.log, "abs": un.abs, "sign": un.sign,
          "reciprocal": un.reciprocal, "sigmoid": un.sigmoid}


_TERNARY = {"addcmul": addcmul, "addcdiv": addcdiv, "lerp": pw.lerp}


FUNCTIONS: dict[str, Callable] = {}
for _name, _op in _BINARY.items():
    FUNCTIONS[f"_foreach_{_name}"] = _out_of_place(_name, _op, 1)
    FUNCTIONS[f"_foreach_{_name}_"] = _in_place(_name, _op, 1)
for _name, _op in _UNARY.items():
    FUNCTIONS[f"_foreach_{_name}"] = _out_of_place(_name, _op, 0)
    FUNCTIONS[f"_foreach_{_name}_"] = _in_place(_name, _op, 0)
for _name, _op in _TERNARY.items():
    _arity = 2 if _name == "lerp" else 3  # (tensors1, weight) / (tensors1, tensors2, value)
    FUNCTIONS[f"_foreach_{_name}"] = _out_of_place(_name, _op, _arity)
    FUNCTIONS[f"_foreach_{_name}_"] = _in_place(_name, _op, _arity)


def _foreach_zero_(self) -> list:
    for t in self:
        t.zero_()
    return list(self)


def _foreach_copy_(self, src, non_blocking: bool = False) -> list:
    for t, s in _each("copy", self, src):
        t.copy_(s)
    return list(self)


def _foreach_norm(self, ord=2, dtype=None) -> tuple:
    return tuple(red.norm(t, ord) for t in self)


FUNCTIONS.update(_foreach_zero_=_foreach_zero_, _foreach_copy_=_foreach_copy_, _foreach_norm=_foreach_norm)


# torch.ops.aten.<name>.overloads() of these ops (timm asks whether the Scalar form exists): the in-place forms'
# overloads that ember's foreach ops accept; an out-of-place form adds an ``_out`` variant of each.
_SCALAR_LIST = ("Scalar", "List", "ScalarList")
_OVERLOADS_INPLACE = {**{n: _SCALAR_LIST for n in _BINARY}, "lerp": _SCALAR_LIST,
                      **{n: (*_SCALAR_LIST, "Tensor") for n in ("add", "mul", "div")},
                      **{n: ("Scalar", "ScalarList", "Tensor") for n in ("addcmul", "addcdiv")}}


def overloads(name: str) -> list[str]:
    """The overload names of ``torch.ops.aten.<name>`` for one of ``FUNCTIONS``."""
    inplace = name.endswith("_")
    base = name.removeprefix("_foreach_").removesuffix("_")
    if name == "_foreach_norm":
        return ["Scalar", "Scalar_out"]
    names = list(_OVERLOADS_INPLACE.get(base, ("default",)))
    if inplace:
        return names
    return [v for n in names for v in (n, "out" if n == "default" else f"{n}_out")]
