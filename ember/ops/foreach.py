"""``torch._foreach_*``: one op over a list of tensors (optimizers and EMA updates in public code use them).

``_foreach_add(tensors, other)`` is ``tuple(add(t, o) for ...)`` where ``other`` is one scalar (or 0-d
tensor) for every tensor, or a list with one per tensor; the in-place forms (``_foreach_add_``) update
each tensor and return the list. PyTorch fuses these into few kernels on a GPU; on the CPU they are
the ops applied one by one, with the same results (and autograd) as the plain ops.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from .._arg_aliases import is_number
from .._tensor import Tensor
from ..autograd.graph import shown_as
from . import addcdiv, addcmul
from . import elementwise as ew
from . import pointwise as pw
from . import reduction as red
from . import unary as un

_SELF = "tuple of Tensors self"
_NUMBER_OR_LIST = (f"({_SELF}, Number scalar)", f"({_SELF}, tuple of Scalars scalars)",
                   f"({_SELF}, tuple of Tensors other)")
_PRODUCT = (f"({_SELF}, tuple of Scalars scalars)", f"({_SELF}, Tensor other)", f"({_SELF}, tuple of Tensors other)",
            f"({_SELF}, Number scalar)")
_POW = (f"({_SELF}, Number exponent)", f"({_SELF}, tuple of Scalars exponent)", f"({_SELF}, tuple of Tensors exponent)")
# PyTorch's overloads of the foreach ops of more than one form, as its TypeError lists them (the out-of-place pow
# also takes a number base: ``_foreach_pow(2, tensors)``)
_OVERLOADS = {
    "add": (f"({_SELF}, Number scalar)", f"({_SELF}, tuple of Scalars scalars)",
            f"({_SELF}, Tensor other, *, Number alpha = 1)", f"({_SELF}, tuple of Tensors other, *, Number alpha = 1)"),
    "sub": (f"({_SELF}, Number scalar)", f"({_SELF}, tuple of Scalars scalars)",
            f"({_SELF}, tuple of Tensors other, *, Number alpha = 1)"),
    "mul": _PRODUCT, "div": _PRODUCT, "maximum": _NUMBER_OR_LIST, "minimum": _NUMBER_OR_LIST,
    "clamp_min": _NUMBER_OR_LIST, "clamp_max": _NUMBER_OR_LIST, "pow_": _POW,
    "pow": ("(Number self, tuple of Tensors exponent)", *_POW),
    "lerp": (f"({_SELF}, tuple of Tensors tensors1, Number weight)",
             f"({_SELF}, tuple of Tensors tensors1, tuple of Scalars weight)",
             f"({_SELF}, tuple of Tensors tensors1, tuple of Tensors weights)"),
}
# the single-form ops' arguments that are lists of tensors (after ``self``)
_ADDC = tuple(f"({_SELF}, tuple of Tensors tensor1, tuple of Tensors tensor2, {last})"  # addcmul's, addcdiv's
              for last in ("tuple of Scalars scalars", "Tensor scalars", "Number value = 1"))
_BINARY_NAMES = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max")
_LIST_ARGUMENTS = {"addcmul": ("tensor1", "tensor2"), "addcdiv": ("tensor1", "tensor2"), "copy": ("src",)}


def _kind(value) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _is_list(value) -> bool:
    return isinstance(value, (list, tuple))


def _check_arguments(name: str, base: str, args: tuple, kwargs: dict) -> None:
    """PyTorch's TypeError where a foreach op's list of tensors is something else (a Tensor, a generator): for the
    ops of one form, which argument (``'self' (position 1) must be tuple of Tensors``); for those of several (a
    number or a list beside the tensors), the forms; and its RuntimeError for a tensor of elements where a 0-d one
    stands for a number (``_foreach_add(tensors, t)``)."""
    forms = _OVERLOADS.get(base + "_" if name.endswith("_") and base + "_" in _OVERLOADS else base)
    if forms is None:
        for position, (argument, value) in enumerate(zip(("self", *_LIST_ARGUMENTS.get(base, ())), args), 1):
            if not _is_list(value):
                raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be tuple of "
                                f"Tensors, not {_kind(value)}")
        return
    lists = (True, True) if base == "lerp" else (True,)  # (self; lerp's tensors1)
    fits = all(_is_list(a) for a, _ in zip(args, lists)) and len(args) > len(lists)
    if fits:
        other = args[len(lists)]
        if isinstance(other, Tensor) and other._data.ndim:  # a tensor where a number may be: its one value
            if any("Tensor other" in f for f in forms):
                raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other._data.ndim} dimensions and "
                                   f"{other._data.size} elements.")
            fits = False
        elif not (_is_list(other) or isinstance(other, (int, float, complex, Tensor))):
            fits = False
        elif "alpha" in kwargs:  # (alpha belongs to the forms of tensors: a number or list of numbers refuses it)
            if isinstance(other, Tensor):
                if not any("Tensor other," in f for f in forms):
                    raise TypeError(f"{name}(): argument 'other' (position 2) must be tuple of Tensors, not Tensor")
            elif not _is_list(other):
                fits = False
            else:
                for i, value in enumerate(other):
                    if not isinstance(value, Tensor):
                        raise TypeError(f"expected Tensor as element {i} in argument 1, but got {_kind(value)}")
    elif _number_base(name, args):
        fits = True
    if not fits:
        raise _invalid_combination(name, args, kwargs, forms)


def _invalid_combination(name: str, args: tuple, kwargs: dict, forms: tuple) -> TypeError:
    got = ", ".join([_kind(a) for a in args] + [f"{k}={_kind(v)}" for k, v in kwargs.items()])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + "".join(f" * {form}\n" for form in forms))


def _is_number(value) -> bool:
    return is_number(value) or (isinstance(value, Tensor) and value._data.ndim == 0)


def _numbers(value) -> bool:
    return _is_list(value) and all(is_number(v) for v in value)


def _tensors(value) -> bool:
    return _is_list(value) and all(isinstance(v, Tensor) for v in value)


# PyTorch's names for the foreach ops' arguments after ``self``, one tuple per position, each name with what it
# takes: ``_foreach_lerp_(ema, params, weight=0.1)`` (timm's EMA), ``_foreach_add(ts, scalar=1.)``,
# ``_foreach_addcmul_(ts, t1, t2, value=0.5)``. A name given a value of the wrong kind stays a keyword, for which
# the check below reports PyTorch's TypeError (``_foreach_add(ts, scalar=[1., 2.])`` matches no form).
_ANY = lambda value: True  # noqa: E731
_SCALAR_OR_OTHER = ({"scalar": _is_number, "scalars": _numbers,
                     "other": lambda v: isinstance(v, Tensor) or _tensors(v)},)
_KEYWORDS = {
    **{name: _SCALAR_OR_OTHER for name in _BINARY_NAMES},
    "pow": ({"exponent": _ANY},),
    "lerp": ({"tensors1": _ANY}, {"weight": lambda v: _is_number(v) or _numbers(v), "weights": _tensors}),
    **{name: ({"tensor1": _ANY}, {"tensor2": _ANY},
              {"value": _is_number, "scalars": lambda v: _numbers(v) or isinstance(v, Tensor)})
       for name in ("addcmul", "addcdiv")},
}


def _bind(function: str, name: str, self, others: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``others`` and ``kwargs`` with the arguments given by their PyTorch names moved to their positions; PyTorch's
    TypeError for a name left over (of the wrong kind, or of a position already given)."""
    positions = _KEYWORDS.get(name, ())
    if not kwargs or not positions:
        return others, kwargs
    others, kwargs = list(others), dict(kwargs)
    for names in positions[len(others):]:
        given = [key for key, fits in names.items() if key in kwargs and fits(kwargs[key])]
        if len(given) != 1:  # (absent, or of the wrong kind: what follows cannot be placed either)
            break
        others.append(kwargs.pop(given[0]))
    other = kwargs.get("other")
    if _is_list(other):  # (a list of numbers by the name of the tensors' form)
        for i, value in enumerate(other):
            if not isinstance(value, Tensor):
                raise TypeError(f"expected Tensor as element {i} in argument 1, but got {_kind(value)}")
    if any(key in names for key in kwargs for names in positions):
        forms = _OVERLOADS.get(name + "_" if function.endswith("_") and name + "_" in _OVERLOADS else name, _ADDC)
        raise _invalid_combination(function, (self, *others), kwargs, forms)
    return tuple(others), kwargs


def _number_base(name: str, args: tuple) -> bool:
    """``_foreach_pow(number, tensors)``: a number raised to each tensor (PyTorch's Number: a bool, or a 0-d tensor
    that requires no gradient, too)."""
    if name != "_foreach_pow" or len(args) != 2 or not _is_list(args[1]):
        return False
    base = args[0]
    if isinstance(base, Tensor):
        return base._data.ndim == 0 and not base.requires_grad
    return is_number(base)  # (NumPy's scalars too; not a Fraction or a Decimal)


def _each(name: str, tensors, *others) -> list[tuple]:
    """``[(t, o1, o2, ...)]``: each list in ``others`` matched by position, any other value repeated."""
    tensors = list(tensors)
    if name in ("addcmul", "addcdiv") and len(others) == 3 and isinstance(others[2], Tensor):
        others = (*others[:2], _packed_scalars(others[2], len(tensors)))
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


def _packed_scalars(scalars: Tensor, count: int) -> list:
    """addcmul/addcdiv's scalars packed in a 1-d tensor, one per tensor (PyTorch's ``Tensor scalars`` form)."""
    if scalars._data.ndim != 1:
        raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {scalars._data.ndim} instead.")
    if scalars._data.shape[0] != count:
        raise RuntimeError(f"Expected length of scalars to match input of length {count} but got "
                           f"{scalars._data.shape[0]} instead.")
    return scalars._data.tolist()


def _call(fn: Callable, row: tuple, kwargs: dict):
    if len(row) == 4:  # addcmul/addcdiv: the scalars, given positionally to the foreach form, are `value`
        return fn(*row[:3], value=row[3], **kwargs)
    return fn(*row, **kwargs)


def _out_of_place(name: str, op: Callable, arity: int):
    def foreach(self, *others, **kwargs) -> tuple:
        others, kwargs = _bind(foreach.__name__, name, self, others, kwargs)
        _check_arguments(foreach.__name__, name, (self, *others), kwargs)
        if _number_base(foreach.__name__, (self, *others)):
            base = self.item() if isinstance(self, Tensor) else self  # (read as the number it holds)
            return tuple(op(base, t) for t in others[0])
        return tuple(_call(op, row, kwargs) for row in _each(name, self, *others[:arity]))

    foreach.__name__ = foreach.__qualname__ = f"_foreach_{name}"
    foreach.__doc__ = f"``tuple({name}(t, ...) for t in tensors)``."
    return foreach


def _in_place(name: str, op: Callable, arity: int):
    method = getattr(Tensor, name + "_", None)

    def foreach_(self, *others, **kwargs) -> list:
        others, kwargs = _bind(foreach_.__name__, name, self, others, kwargs)
        _check_arguments(foreach_.__name__, name, (self, *others), kwargs)
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
    _check_arguments("_foreach_zero_", "zero", (self,), {})
    for t in self:
        t.zero_()
    return list(self)


def _foreach_copy_(self, src, non_blocking: bool = False) -> list:
    _check_arguments("_foreach_copy_", "copy", (self, src), {})
    for t, s in _each("copy", self, src):
        t.copy_(s)
    return list(self)


def _foreach_norm(self, ord=2, dtype=None) -> tuple:
    _check_arguments("_foreach_norm", "norm", (self,), {})
    if ord == float("inf") and any(t._data.size == 0 for t in self):  # (its own kernel's check; -inf is norm's)
        raise RuntimeError("_foreach_norm cannot compute the infinity norm on an empty tensor because the operation "
                           "does not have an identity")
    return tuple(shown_as(red.norm(t, ord), "ForeachNormBackward0") for t in self)  # (PyTorch's node)


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
