"""PyTorch's keyword names where ember's parameters are named otherwise, and NumPy's spellings that PyTorch accepts.

PyTorch names the tensor a function works on ``input`` (``torch.gather(input=x, dim=1, index=i)``,
``torch.add(input=a, other=b)``, ``torch.mm(input=a, mat2=b)``); ember's functions call it ``x``, ``a``, ``t`` or
``A``. ``torch_keyword_names`` gives, for one function, PyTorch's names for those parameters, and the wrapper below
accepts them (tests/test_torch_keyword_names.py checks the names against PyTorch's own signatures).

NumPy's spellings: ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=`` (``x.sum(axis=0, keepdims=True)``,
``torch.cumprod(x, axis=1)``).

PyTorch's argument parser maps these for every op it implements natively, whatever the op; its ops
written in Python (``torch.norm``, ``torch.split``, ``torch.unique``, ``Tensor.unflatten``) take only
PyTorch's own names. ember does the same with one wrapper, applied to the Tensor class's methods once, when
the class is defined (``accept_torch_names_in_methods`` on ``Tensor``), and to the functions of ``ember``,
``ember.linalg``, ``ember.special``, ``ember.fft`` and ``ember.nn.functional`` (``accept_torch_names``); it takes
PyTorch's names above too. Type checkers see the functions' own signatures (PyTorch's stubs do not list the
NumPy spellings either).
"""

from __future__ import annotations

import functools
import inspect
import keyword
from collections.abc import Callable
from types import FunctionType
from typing import TypeVar

from ._backend import xp
from ._signatures import Kinds, parameter_kinds, with_keywords
from ._size import c_type_name

_C = TypeVar("_C", bound=type)

ALIASES = {"axis": "dim", "keepdims": "keepdim"}
PYTHON_LEVEL = frozenset({"norm", "split", "unique"})  # PyTorch's Python ops: no NumPy spellings


# ember's names for the tensor a function works on, which PyTorch calls ``input``
INPUT_NAMES = frozenset({"x", "a", "t", "A", "tensor", "B", "b", "L"})
# ember's names for a second tensor operand (after one of INPUT_NAMES), which PyTorch calls ``other``
OTHER_NAMES = frozenset({"b", "v", "L"})
# where PyTorch's names for those differ (by the function's name under ``torch``; None: ember's names are PyTorch's)
FIRST = {"split": "tensor", "result_type": "tensor", "promote_types": "type1", "tensor": None, "as_tensor": None,
         "tensordot": None, "lu": None, "set_default_tensor_type": None, "linalg.solve": None,
         "linalg.solve_ex": None, "linalg.vecdot": None, "linalg.cross": None, "linalg.lu_solve": None,
         "linalg.ldl_solve": None,
         "linalg.vander": None, "linalg.multi_dot": None, "linalg.diagonal": None,
         "linalg.svd": None, "linalg.svdvals": None, "linalg.lu": None,
         "linalg.lu_factor": None, "linalg.lu_factor_ex": None, "linalg.inv": None, "linalg.inv_ex": None,
         "linalg.qr": None, "linalg.det": None, "linalg.slogdet": None,
         **dict.fromkeys(f"special.{kind}_polynomial_{letter}" for kind, letters in (
             ("chebyshev", "tuvw"), ("shifted_chebyshev", "tuvw"), ("laguerre", "l"), ("legendre", "p"))
             for letter in letters),
         "special.hermite_polynomial_h": None, "special.hermite_polynomial_he": None,
         "special.spherical_bessel_j0": None, "special.scaled_modified_bessel_k0": None,
         "special.scaled_modified_bessel_k1": None, "special.airy_ai": None}
SECOND = {"mm": "mat2", "bmm": "mat2", "outer": "vec2", "ger": "vec2", "dot": "tensor", "pow": "exponent",
          "float_power": "exponent", "mv": "vec", "cholesky_solve": "input2", "linalg.lstsq": "b",
          "promote_types": "type2", "result_type": "other", "linalg.tensorsolve": "other"}
# other parameters PyTorch names differently (pinv's rcond is PyTorch's NumPy-compatible name for rtol)
OTHERS = {"swapaxes": {"axis0": "dim0", "axis1": "dim1"}, "broadcast_to": {"size": "shape"},
          "max": {"other": "dim"}, "min": {"other": "dim"}, "scatter": {"value": "src"},
          "isin": {"test_element": "test_elements"}, "dist": {"input": "x1", "other": "x2"},
          "linalg.pinv": {"rcond": "rtol"},
          "swapaxes_": {"axis0": "dim0", "axis1": "dim1"}, "copy_": {"other": "src"},
          "resize_as_": {"the_template": "other"},
          # from= is a Python keyword: written only as random_(**{"from": 2, "to": 9}); it works, but no signature
          # can list it
          "random_": {"from": "from_"}, "uniform_": {"from": "from_"},
          "tensor_split": {"sections": "indices_or_sections", "indices": "indices_or_sections",
                           "tensor_indices_or_sections": "indices_or_sections"},
          **{name: {"sections": "indices_or_sections", "indices": "indices_or_sections"}
             for name in ("hsplit", "vsplit", "dsplit")}}


def torch_keyword_names(qualname: str, params: Kinds, method: bool = False) -> dict[str, str]:
    """PyTorch's keyword names for the parameters ember names otherwise, each mapped to ember's name, for the
    function ``qualname`` (``"gather"``, ``"linalg.inv"``, ``"nn.functional.one_hot"``; a Tensor ``method``:
    its name, ``"mul"``) whose parameters' names and kinds (``ember._signatures.parameter_kinds(fn)``) are
    ``params``; the NumPy spellings included where PyTorch takes them."""
    name = qualname.rpartition(".")[2]
    names: dict[str, str] = {}
    positional = [p for p, kind in params.items() if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    if positional and (method or positional[0] in INPUT_NAMES):
        first = None if method else FIRST.get(qualname, "input")
        if first is not None:
            names[first] = positional[0]
        if (method or first is not None) and len(positional) > 1 and (
                positional[1] in OTHER_NAMES or qualname in SECOND):
            names[SECOND.get(qualname, "other")] = positional[1]
    names.update(OTHERS.get(qualname, {}))
    if name not in PYTHON_LEVEL:
        names.update({alias: own for alias, own in ALIASES.items() if own in params})
    return {alias: own for alias, own in names.items() if alias != own and alias not in params and own in params}


def _rename(name: str, kwargs: dict, names: dict[str, str]) -> dict:
    for alias, own in names.items():
        if alias in kwargs:
            if kwargs[alias] is None:  # the wrapper's own default, which a bound call's apply_defaults() passes
                del kwargs[alias]
                continue
            if own in kwargs:
                spelling = "NumPy spelling" if alias in ALIASES else "PyTorch name"
                raise TypeError(f"{name}() got both '{own}' and its {spelling} '{alias}'")
            kwargs[own] = kwargs.pop(alias)
    return kwargs


class NotATensorError(TypeError):
    """An op's first input was not a tensor (``autograd.graph.Node.apply``): the function wrapping the op names
    itself and its argument in the message instead, as PyTorch's does."""


class ParserRuntimeError(RuntimeError):
    """The RuntimeError PyTorch's argument parser itself raises for an argument (a 0-d NumPy array for a list of
    ints: its internal assert, ``roll(x, numpy.array(1))``): passed on as it is, not read as an op's failure on a
    NumPy array (``refuse_arrays_met_as_error``), since PyTorch's parser raises it before any TypeError."""


class MethodArgumentError(TypeError):
    """PyTorch's TypeError for an argument of the Tensor method ``op`` (``x.reshape([Decimal(2)])``: "reshape():
    argument 'shape' (position 1) must be tuple of ints, ..."), raised where the op cannot tell a method's call
    from the function's: the function's wrapper (``with_torch_names``) names it one position further
    (``torch.reshape(x, ...)``: position 2, the tensor being its position 1)."""

    def __init__(self, op: str, argument: str, position: int, problem: str) -> None:
        super().__init__(f"{op}(): argument '{argument}' (position {position}) {problem}")
        self.op, self.argument, self.position, self.problem = op, argument, position, problem

    def in_function(self) -> TypeError:
        return TypeError(f"{self.op}(): argument '{self.argument}' (position {self.position + 1}) {self.problem}")


def operand_type_error(operand) -> TypeError:
    """The TypeError for a binary op's operand that is neither a tensor nor a number (``torch.add(x, "a")``), met
    where the op's name is unknown (``ops.elementwise.promote``): the function wrapping the op, which knows its name
    and how each argument came, raises PyTorch's instead (``_operand_error``)."""
    error = TypeError(f"unsupported operand type for a tensor op: {type(operand).__name__}")
    error.operand = operand  # type: ignore[attr-defined]
    return error


def is_operand(value) -> bool:
    """Whether a binary op takes ``value`` as an operand: a tensor, a Python or NumPy number or a NumPy array (which
    ember's own callers pass); PyTorch's argument parser refuses anything else (a str, None, a list, and the
    standard library's other numbers: a Fraction, a Decimal)."""
    global _OPERAND_TYPES
    if not _OPERAND_TYPES:  # (Tensor's module imports this one: its class is looked up once, at the first call)
        from ._tensor import Tensor

        _OPERAND_TYPES = (Tensor, int, float, complex, xp.generic, xp.ndarray)
    return isinstance(value, _OPERAND_TYPES)


_OPERAND_TYPES: tuple[type, ...] = ()


def is_number(value) -> bool:
    """Whether ``value`` is a ``Number`` to PyTorch's argument parser: a Python or NumPy number (a bool too), not
    the standard library's other numbers (a Fraction, a Decimal), which it refuses."""
    return isinstance(value, (int, float, complex, xp.number, xp.bool_))


def is_int(value) -> bool:
    """Whether ``value`` is an ``int`` to PyTorch's argument parser: a Python or NumPy integer (not a bool), or an
    integer tensor of no dimensions; not a NumPy array, not even a 0-d one."""
    if isinstance(value, (int, xp.integer)):
        return not isinstance(value, bool)
    return is_tensor(value) and value.dim() == 0 and not value.is_floating_point() and not value.is_complex() \
        and value.dtype.name != "bool"


def is_tensor(value) -> bool:
    """Whether ``value`` is a tensor (Tensor's class looked up as ``is_operand`` looks it up)."""
    if not _OPERAND_TYPES:
        is_operand(value)
    return isinstance(value, _OPERAND_TYPES[0])


def operator_refusal(error: TypeError, other):
    """What a binary operator (``Tensor.__add__``, ``__ipow__``) returns when its op raised ``error``: NotImplemented
    where ``other`` is not an operand (Python then tries ``other``'s method and words its own TypeError, ``unsupported
    operand type(s) for +: 'Tensor' and 'str'``, as for PyTorch's operators); else ``error`` is raised."""
    if not is_operand(other):
        return NotImplemented
    raise error  # (another refusal: of alpha=, of a dtype)


# Tensor methods (by name, without the in-place "_") whose refusal of a non-operand PyTorch words "argument 'other'
# (position 1) must be Tensor" (the others': an invalid combination of its Tensor and Number overloads, below)
_MUST_BE_TENSOR = frozenset({"add", "sub", "mul", "div", "logical_and", "logical_or", "logical_xor", "matmul",
                             "igamma", "igammac"})
# those of them that take no number either (PyTorch's signature has only the Tensor overload)
_TENSOR_ONLY = frozenset({"logical_and", "logical_or", "logical_xor", "matmul", "igamma", "igammac"})
# the overloads' parameter, where PyTorch's methods take a Tensor or a Number of that name
_TENSOR_OR_NUMBER = {**dict.fromkeys((
    "multiply", "floor_divide", "fmod", "remainder", "copysign", "eq", "ne", "lt", "le", "gt", "ge", "greater",
    "less", "greater_equal", "less_equal", "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "xlogy", "subtract", "divide", "true_divide"), "other"),
    "pow": "exponent", "float_power": "exponent", "clamp_min": "min", "clamp_max": "max"}


def method_operand_error(name: str, operand) -> TypeError:
    """PyTorch's TypeError of the method ``x.<name>(operand)`` for an operand that is neither a tensor nor a number
    (``x.mul("a")``: "mul(): argument 'other' (position 1) must be Tensor, not str"; ``x.pow_("a")``: its
    overloads, each with the argument that did not match). The type is named as PyTorch's C++ names it
    (``c_type_name``: ``Foo`` for a Python class, ``decimal.Decimal`` for an extension type)."""
    shown = c_type_name(operand)
    base = name.removesuffix("_")
    if base in _MUST_BE_TENSOR:
        return TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {shown}")
    mismatch = f"      didn't match because some of the arguments have invalid types: (!{shown}!)\n"
    if base == "subtract":  # (no line says why: the alpha overloads differ in more than the operand)
        overloads = " * (Tensor other, *, Number alpha = 1)\n * (Number other, Number alpha = 1)\n"
    elif base == "divide":
        overloads = (f" * (Tensor other)\n{mismatch} * (Tensor other, *, str rounding_mode)\n * (Number other)\n"
                     f"{mismatch} * (Number other, *, str rounding_mode)\n")
    else:
        argument = _TENSOR_OR_NUMBER[base]
        overloads = f" * (Tensor {argument})\n{mismatch} * (Number {argument})\n{mismatch}"
    return TypeError(f"{name}() received an invalid combination of arguments - got ({shown}), but expected one of:\n"
                     f"{overloads}")


_OUT = ", *, Tensor out = None"
# the functions taking a Tensor or a Number operand (``torch.fmod(x, "a")``: PyTorch lists their overloads), by the
# kind of their overload list (below), with the operand's parameter name
_NUMBER_OVERLOAD_NO_OUT = frozenset({"multiply", "floor_divide", "true_divide"})
_TWO_OVERLOADS = {**dict.fromkeys((
    "fmod", "copysign", "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal",
    "not_equal"), "other"), "clamp_min": "min", "clamp_max": "max"}
_NUMBER_SELF_NO_OUT = frozenset({"remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                                 "bitwise_right_shift"})
_NUMBER_SELF = {"xlogy": "other", "pow": "exponent", "float_power": "exponent"}


def _mismatch_name(value) -> str:
    """How PyTorch's parser names an argument in its "didn't match" line: a list or tuple with its elements' types
    (``list of [int, str]``, ``tuple of (int,)``), anything else by its type."""
    if type(value) is list:
        return f"list of [{', '.join(c_type_name(v) for v in value)}]"
    if type(value) is tuple:  # (a tuple of one with its comma)
        return f"tuple of ({', '.join(c_type_name(v) for v in value)}{',' if len(value) == 1 else ''})"
    return c_type_name(value)


# the matrix products to which PyTorch gives a second overload taking a positional ``out_dtype`` (``torch.mm(a, b,
# torch.float32)``): their tensor parameters and their keywords before ``out``
_OUT_DTYPE_OVERLOADS = {
    "mm": ("Tensor input, Tensor mat2", ""), "bmm": ("Tensor input, Tensor mat2", ""),
    "addmm": ("Tensor input, Tensor mat1, Tensor mat2", ", Number beta = 1, Number alpha = 1"),
    "baddbmm": ("Tensor input, Tensor batch1, Tensor batch2", ", Number beta = 1, Number alpha = 1"),
}


def overloads_error(name: str, args: tuple, kwargs: dict) -> TypeError | None:
    """PyTorch's TypeError for a call of a function with several overloads whose argument does not match (an
    operand that is no tensor), where its parser finds more than one overload plausible for the count of the
    arguments, keywords included (``torch.baddbmm(x, [[1.0]], y, beta=2)``: "received an invalid combination of
    arguments", both listed; without the keyword only the first takes three arguments: its "must be Tensor"); None
    where one overload is plausible. The keywords are shown last, in the reverse of their order, as its parser
    does."""
    spec = _OUT_DTYPE_OVERLOADS.get(name)
    if spec is None:
        return None
    tensors, numbers = spec
    count, first = len(args) + len(kwargs), tensors.count("Tensor")
    if not first + 1 <= count <= first + numbers.count("=") + 1:  # (out_dtype's least count, the first's most)
        return None
    return TypeError(f"{name}() received an invalid combination of arguments - got ({_got(args, kwargs)}), but "
                     f"expected one of:\n * ({tensors}, *{numbers}, Tensor out = None)\n"
                     f" * ({tensors}, torch.dtype out_dtype, *{numbers}, Tensor out = None)\n")


def _got(args: tuple, kwargs: dict) -> str:
    """The arguments of a call as PyTorch's parser lists them after "got": the types of the positional ones, then
    the keywords in the reverse of their order (a trailing comma where there is no positional one)."""
    given = [c_type_name(a) for a in args] + [f"{k}={c_type_name(kwargs[k])}" for k in reversed(kwargs)]
    return ", ".join(given) + (", " if kwargs and not args else "")


def rsub_overloads_error(args: tuple, kwargs: dict) -> TypeError | None:
    """PyTorch's TypeError for a call of ``torch.rsub`` that matches neither of its overloads (a number or no input,
    an operand that is neither a tensor nor a number, an alpha that is no number, an alpha given by position with
    a tensor operand, a missing or unknown argument); None for a call one overload takes. Its parser explains the
    overload whose count of arguments is the call's: the second where there are three (the keywords it calls
    incorrect, or the positional types it could not take), the first where four are given by position."""
    bound = dict(zip(("input", "other", "alpha"), args))
    if len(args) > 3 or bound.keys() & kwargs.keys() or not kwargs.keys() <= {"input", "other", "alpha"}:
        bound = {}  # (too many, twice given, unknown: no overload takes them)
    bound.update(kwargs)
    other, alpha = bound.get("other"), bound.get("alpha", 1)
    # (a Number to PyTorch's parser is a number or a 0-d tensor that requires no grad)
    if is_tensor(bound.get("input")) and (is_tensor(other) or is_number(other)) and \
            (is_number(alpha) or is_tensor(alpha) and alpha.dim() == 0 and not alpha.requires_grad) \
            and not (len(args) == 3 and is_tensor(other)):
        return None
    why = ""
    count = len(args) + len(kwargs)
    if count == 3 and kwargs.keys() - {"input", "other"}:
        incorrect = [k for k in reversed(kwargs) if k not in ("input", "other")]
        why = f"      didn't match because some of the keywords were incorrect: {', '.join(incorrect)}\n"
    elif count in (3, 4) and not kwargs:
        marked = ", ".join([c_type_name(args[0])] + [f"!{c_type_name(a)}!" for a in args[1:]])
        why = f"      didn't match because some of the arguments have invalid types: ({marked})\n"
    first, second = " * (Tensor input, Tensor other, *, Number alpha = 1)\n", \
        " * (Tensor input, Number other, Number alpha = 1)\n"
    overloads = first + why + second if count == 4 else first + second + why
    return TypeError(f"rsub() received an invalid combination of arguments - got ({_got(args, kwargs)}), but "
                     f"expected one of:\n{overloads}")


def function_operand_error(name: str, args: tuple, kwargs: dict, operand) -> TypeError | None:
    """PyTorch's TypeError of the function ``torch.<name>(tensor, operand)`` for an operand that is neither a
    tensor nor a number, where its signature has a Tensor and a Number overload (``torch.fmod(x, "a")``: "fmod()
    received an invalid combination of arguments - got (Tensor, str), but expected one of: ..."; each overload that
    PyTorch's parser explains with the arguments it did not match; ``overloads_error``'s for the others with
    several overloads); None for a function that PyTorch words "must be Tensor" (``torch.add``), or where the first
    argument is not a tensor (but for the comparisons' two overloads: ``torch.eq(3, x)`` matches neither)."""
    several = overloads_error(name, args, kwargs)
    if several is not None:
        return several
    if not args or not is_tensor(args[0]) and name not in _TWO_OVERLOADS:
        return None
    shown = _mismatch_name(operand)
    got = ", ".join([c_type_name(a) for a in args] + [f"{k}={c_type_name(v)}" for k, v in kwargs.items()])
    tensor_first = f"      didn't match because some of the arguments have invalid types: (Tensor, !{shown}!)\n"
    both = f"      didn't match because some of the arguments have invalid types: (!Tensor!, !{shown}!)\n"
    if name in _TWO_OVERLOADS:
        other = _TWO_OVERLOADS[name]
        overloads = f" * (Tensor input, Tensor {other}{_OUT})\n * (Tensor input, Number {other}{_OUT})\n"
    elif name in _NUMBER_OVERLOAD_NO_OUT:
        overloads = f" * (Tensor input, Tensor other{_OUT})\n * (Tensor input, Number other)\n{tensor_first}"
    elif name in _NUMBER_SELF_NO_OUT:
        overloads = (f" * (Tensor input, Tensor other{_OUT})\n * (Number self, Tensor other)\n{both}"
                     f" * (Tensor input, Number other{_OUT})\n")
    elif name in _NUMBER_SELF:
        other = _NUMBER_SELF[name]
        overloads = (f" * (Tensor input, Tensor {other}{_OUT})\n * (Number self, Tensor {other}{_OUT})\n"
                     f" * (Tensor input, Number {other}{_OUT})\n")
    elif name == "subtract":
        overloads = (" * (Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)\n"
                     " * (Tensor input, Number other, Number alpha = 1)\n")
    elif name == "divide":
        overloads = (f" * (Tensor input, Tensor other{_OUT})\n * (Tensor input, Tensor other, *, str rounding_mode, "
                     f"Tensor out = None)\n * (Tensor input, Number other)\n{tensor_first}"
                     " * (Tensor input, Number other, *, str rounding_mode)\n")
    else:
        return None
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f"{overloads}")


def clamp_bounds_error(name: str, bounds: tuple, keyword_bounds: dict, method: bool) -> TypeError:
    """PyTorch's TypeError for ``clamp``'s (``clip``'s, in place too) bounds that match neither of its overloads,
    given as ``bounds`` by position (after the input, for the function) and ``keyword_bounds`` by keyword, worded
    as PyTorch's parser: the keywords last, in the reverse of their order (``got (Tensor, max=str, min=int)``), a
    method's overloads listing no input and saying why where it was given both bounds."""
    def kind(value) -> str:
        return "Tensor" if is_tensor(value) else type(value).__name__

    keywords = list(reversed(keyword_bounds))
    given = [kind(b) for b in bounds] + [f"{k}={kind(keyword_bounds[k])}" for k in keywords]
    if method:
        got = ", ".join(given) + (", " if keywords and not bounds else "")
        why = ""
        if len(bounds) + len(keywords) == 2:
            why = "      didn't match because some of the " + (
                f"keywords were incorrect: {', '.join(keywords)}\n" if keywords else
                f"arguments have invalid types: (!{'!, !'.join(given)}!)\n")
        expected = "".join(f" * ({k} min = None, {k} max = None)\n{why}" for k in ("Tensor", "Number"))
    else:
        got = ", ".join(["Tensor", *given])
        expected = "".join(f" * (Tensor input, {k} min = None, {k} max = None, *, Tensor out = None)\n"
                           for k in ("Tensor", "Number"))
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f"{expected}")


def _rewording_clamp_bounds(name: str, fn: Callable, method: bool) -> Callable:
    """``fn`` (``clamp``, ``clip``, the function or a method, in place too) whose refusal of its bounds is worded
    for the call as made (``clamp_bounds_error``: which bounds came by keyword), which ``fn`` cannot see."""

    @functools.wraps(fn)
    def rewording(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            if not hasattr(e, "clamp_bounds"):
                raise
            raise clamp_bounds_error(name, args[1:], kwargs, method) from None

    return rewording


def method_refusal(name: str, error: TypeError, operand) -> TypeError:
    """What the method ``x.<name>(operand)`` raises when its op raised ``error``: PyTorch's TypeError
    (``method_operand_error``) where ``operand`` is not an operand, else ``error`` itself. (The methods whose calls
    go straight to their function, without ``_refusing_non_operands``' wrapper, call it on their error path.)"""
    return error if is_operand(operand) else method_operand_error(name, operand)


# the methods that word their refusal themselves (method_refusal): no wrapper on their call path
_OWN_REFUSAL = frozenset({"add", "sub", "mul", "div", "subtract", "multiply", "divide", "true_divide",
                          "floor_divide", "remainder", "pow", "pow_", "eq", "ne", "lt", "le", "gt", "ge", "greater",
                          "greater_equal", "less", "less_equal", "not_equal", "logical_and", "logical_or",
                          "logical_xor", "matmul", "add_", "sub_", "mul_", "div_", "fmod", "fmod_", "copysign",
                          "copysign_", "xlogy", "xlogy_", "bitwise_and", "bitwise_or", "bitwise_xor",
                          "bitwise_left_shift", "bitwise_right_shift"})


def _refusing_non_operands(name: str, method: Callable) -> Callable:
    """The binary Tensor ``method`` raising PyTorch's TypeError (``method_operand_error``) for a first argument that
    is not an operand (not a tensor, for ``_TENSOR_ONLY``'s), before the op runs (the operator it may share its
    function with gives NotImplemented)."""

    if name.removesuffix("_") in _TENSOR_ONLY:
        @functools.wraps(method)
        def refusing_non_tensors(self, *args, **kwargs):
            if args and not is_tensor(args[0]):
                raise method_operand_error(name, args[0])
            return method(self, *args, **kwargs)

        return refusing_non_tensors

    @functools.wraps(method)
    def refusing_non_operands(self, *args, **kwargs):
        if args and not (args[0].__class__ is float or args[0].__class__ is int or is_operand(args[0])):
            raise method_operand_error(name, args[0])
        out = method(self, *args, **kwargs)
        if out is NotImplemented:  # (an operand given by keyword)
            raise method_operand_error(name, next(iter(kwargs.values()), None))
        return out

    return refusing_non_operands


def _operand_error(name: str, error: TypeError, args: tuple, kwargs: dict, torch_names: dict[str, str],
                   method: bool) -> TypeError:
    """PyTorch's TypeError for the operand ``error`` names, found among the ``args`` and ``kwargs`` of a function
    (a Tensor ``method``: ``self`` is not counted) whose parameters PyTorch names as ``torch_names`` maps them
    (``add(): argument 'other' (position 2) must be Tensor, not str``; an argument given by keyword has no
    position); ``error`` itself where the operand is not one of them."""
    operand = error.operand  # type: ignore[attr-defined]
    if not method:
        overloads = function_operand_error(name, args, {torch_names.get(k, k): v for k, v in kwargs.items()},
                                           operand)
        if overloads is not None:
            return overloads
    shown = c_type_name(operand)
    positional = list(torch_names.values())[int(method):]
    for position, value in enumerate(args[int(method):][:len(positional)]):
        if value is operand:
            return TypeError(f"{name}(): argument '{positional[position]}' (position {position + 1}) must be "
                             f"Tensor, not {shown}")
    for argument, value in kwargs.items():
        if value is operand:
            return TypeError(f"{name}(): argument '{torch_names.get(argument, argument)}' must be Tensor, not {shown}")
    return error


def _refuse_non_tensor(name: str, argument: str, value, position: int | None = 1) -> None:
    """PyTorch's TypeError for a function's tensor argument given something else (a NumPy array, a list), where
    ember's code met it as an AttributeError (``x._data``); nothing when ``value`` is a tensor. ``position``
    None: the argument came by keyword (PyTorch's message then has no position)."""
    from ._tensor import Tensor

    if isinstance(value, Tensor):
        return
    hint = " (convert it with ember.from_numpy or ember.as_tensor)" if type(value).__module__ == "numpy" else ""
    where = "" if position is None else f" (position {position})"
    raise TypeError(f"{name}(): argument '{argument}'{where} must be Tensor, not {c_type_name(value)}{hint}") \
        from None


# the namespaces whose functions PyTorch's parser names with their prefix (``special_gammainc()``, ``linalg_det()``)
_PARSED_WITH_PREFIX = ("special.", "linalg.", "fft.")


def with_torch_names(qualname: str, fn: Callable, *, method: bool = False) -> Callable:
    """``fn``, also accepting PyTorch's names for its parameters (``torch_keyword_names``) and NumPy's
    ``axis=``/``keepdims=``; ``fn`` itself when it needs none."""
    name = qualname.rpartition(".")[2]
    if name.startswith("__") or not callable(fn):
        return fn
    try:
        params = parameter_kinds(fn)
    except (TypeError, ValueError):
        return fn
    names = torch_keyword_names(qualname, params, method)
    # the name PyTorch's argument parser gives the function in its errors (torch.special.gammainc's:
    # "special_gammainc")
    parsed = qualname.replace(".", "_") if qualname.startswith(_PARSED_WITH_PREFIX) else name
    if not names:
        first = next(iter(params), None)
        if method or first != "input" or params[first] is inspect.Parameter.KEYWORD_ONLY:
            return fn
        return _refusing_non_tensors(parsed, fn, {p: p for p, kind in params.items()
                                                  if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD})

    first = next((alias for alias, own in names.items() if own == next(iter(params), None)), None)
    # PyTorch's names of the parameters, by ember's (its two positional operands first: a binary op's error)
    torch_names = {own: alias for alias, own in names.items() if alias not in ALIASES}
    torch_names = {p: torch_names.get(p, p) for p, kind in params.items()
                   if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
    positional = tuple(torch_names.values())[int(method):]
    # ember's spellings of parameters PyTorch names with a Python keyword (``from_`` for ``uniform_``'s ``from``):
    # not names PyTorch's parser knows
    own_spellings = frozenset(own for alias, own in names.items() if keyword.iskeyword(alias))

    @functools.wraps(fn)
    def accepting_torch_names(*args, **kwargs):
        if own_spellings and not own_spellings.isdisjoint(kwargs):
            raise TypeError(f"{name}() got an unexpected keyword argument '{min(own_spellings & kwargs.keys())}'")
        if kwargs and not names.keys().isdisjoint(kwargs):
            _rename(name, kwargs, names)
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            if first is None or not args or getattr(e, "obj", None) is not args[0]:
                refuse_arrays_met_as_error(parsed, args[int(method):], kwargs, positional)
                raise
            _refuse_non_tensor(name, first, args[0])
            raise
        except NotATensorError:
            if first is None or not args:
                raise
            _refuse_non_tensor(name, first, args[0])
            raise
        except ParserRuntimeError:
            raise
        except (RuntimeError, ValueError, IndexError):
            refuse_arrays_met_as_error(parsed, args[int(method):], kwargs, positional)
            raise
        except TypeError as e:  # (NotATensorError's above)
            if type(e) is MethodArgumentError and not method:
                raise e.in_function() from None
            if hasattr(e, "clamp_bounds") and not method:  # (clamp's bounds: worded with the keywords given)
                raise clamp_bounds_error(name, args[1:], kwargs, False) from None
            if not hasattr(e, "operand"):
                raise
            error = _operand_error(parsed, e, args, kwargs, torch_names, method)
            if error is e:
                raise
            raise error from None

    # inspect.signature tells what the wrapper accepts: fn's parameters and the other names
    accepting_torch_names.__signature__ = with_keywords(
        fn, [(alias, None) for alias in names if not keyword.iskeyword(alias)])
    return accepting_torch_names


def _refusing_non_tensors(name: str, fn: Callable, torch_names: dict[str, str]) -> Callable:
    """``fn`` (whose first parameter is PyTorch's ``input``) raising PyTorch's TypeError when that argument is no
    tensor and ``fn`` failed on it (``F.gelu(array)``: an AttributeError of ``input.dtype``, or the op's refusal),
    or when it refused an operand (``_operand_error``, ``fn``'s positional parameters ``torch_names``: PyTorch's
    names already)."""
    positional = tuple(torch_names.values())

    @functools.wraps(fn)
    def refusing_non_tensors(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (AttributeError, NotATensorError) as e:
            given = args[0] if args else kwargs.get("input", e)  # PyTorch's input, by position or by keyword
            if given is e or (isinstance(e, AttributeError) and getattr(e, "obj", None) is not given):
                refuse_arrays_met_as_error(name, args, kwargs, positional)
                raise
            several = overloads_error(name, args, kwargs)
            if several is not None:
                raise several from None
            _refuse_non_tensor(name, "input", given, 1 if args else None)
            raise
        except ParserRuntimeError:
            raise
        except (RuntimeError, ValueError, IndexError):
            refuse_arrays_met_as_error(name, args, kwargs, positional)
            raise
        except TypeError as e:  # (an operand that is neither a tensor nor a number: operand_type_error)
            if type(e) is MethodArgumentError:
                raise e.in_function() from None
            if not hasattr(e, "operand"):
                raise
            error = _operand_error(name, e, args, kwargs, torch_names, False)
            if error is e:
                raise
            raise error from None

    return refusing_non_tensors


def accept_torch_names(namespace: dict, prefix: str = "") -> None:
    """Wrap each public function of a module's ``namespace`` with ``with_torch_names`` (``prefix``: the module's
    name under ``torch``, ``"linalg."``)."""
    for name, fn in list(namespace.items()):
        if not name.startswith("_") and callable(fn) and not isinstance(fn, type):
            wrapped = with_torch_names(prefix + name, fn)
            if wrapped is not fn:
                _named_where_reachable(wrapped, namespace["__name__"], name)
            namespace[name] = wrapped


def _named_where_reachable(wrapper: Callable, module: str, qualname: str) -> None:
    """Pickle finds a function by its ``__module__`` and ``__qualname__`` and insists on the same object there: the
    wrapper's are where it is installed (``functools.wraps`` gave it the wrapped function's, which holds that)."""
    wrapper.__module__, wrapper.__qualname__ = module, qualname


def refuse_numpy_arrays(name: str, args: tuple, kwargs: dict, parameters: tuple[str, ...]) -> None:
    """PyTorch's TypeError for a NumPy array given where ``name`` takes a tensor or a number (an in-place method's
    operand, ``x.add_(array)``; any argument of a function called with ``out=``): PyTorch's argument parser takes
    neither an array nor a 0-d one for them. ember's ops accept the arrays its own code passes, so the public
    in-place methods and ``out=`` forms check here, once, before the op runs (else ``x.mul_(array)`` would compute
    where ``x.mul(array)`` and PyTorch refuse it). ``parameters``: the names of the positional parameters
    (``args``' names, ``self`` excluded), for the message."""
    for position, value in enumerate(args):
        if isinstance(value, xp.ndarray):
            argument = parameters[position] if position < len(parameters) else "other"
            _refuse_non_tensor(name, argument, value, position + 1)
    for argument, value in kwargs.items():
        if isinstance(value, xp.ndarray):
            hint = " (convert it with ember.from_numpy or ember.as_tensor)"
            raise TypeError(f"{name}(): argument '{argument}' must be Tensor, not {c_type_name(value)}{hint}")


def refuse_arrays_met_as_error(name: str, args: tuple, kwargs: dict, parameters: tuple[str, ...]) -> None:
    """``refuse_numpy_arrays`` for a call that failed (an AttributeError of ``array._data``, a RuntimeError of the
    array's dtype, NumPy's own ValueError): PyTorch's argument parser refuses a NumPy array before the op runs, so
    its TypeError is the error, not the one ember met computing with it. Checked only once the call failed: a
    correct call pays nothing. The functions whose data may be an array (``tensor``, ``as_tensor``) keep theirs."""
    if name not in _TAKING_ARRAYS:
        refuse_numpy_arrays(name, args, kwargs, parameters)


# the functions whose data may be a NumPy array (PyTorch's too): their errors are about that data, not its type
_TAKING_ARRAYS = frozenset({"tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "from_dlpack", "save"})


def refuse_numpy_array(name: str, value, argument: str, position: int) -> None:
    """``refuse_numpy_arrays`` for one argument, for the in-place methods that check their operand themselves
    (``_CHECKS_ARRAYS_ITSELF``), on the path a number or a tensor does not take."""
    if isinstance(value, xp.ndarray):
        _refuse_non_tensor(name, argument, value, position)


def refuse_numpy_numbers(name: str, kind: str, **arguments) -> None:
    """PyTorch's TypeError for a NumPy array, even a 0-d one, given for a number parameter of ``name``
    (``logit(x, eps=array)``: "must be float, not numpy.ndarray"); ``arguments``: each parameter's position in the
    function's call and value, ``(position, value)``."""
    for argument, (position, value) in arguments.items():
        if isinstance(value, xp.ndarray):
            raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be {kind}, not "
                            f"{c_type_name(value)}")


def positional_names(fn: Callable, method: bool) -> tuple[str, ...]:
    """The names of ``fn``'s positional parameters, a method's ``self`` left out (none when they cannot be read)."""
    try:
        params = parameter_kinds(fn)
    except (TypeError, ValueError):
        return ()
    names = tuple(p for p, kind in params.items() if kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                               inspect.Parameter.POSITIONAL_OR_KEYWORD))
    return names[int(method):]


# the in-place methods that refuse a NumPy array themselves, at no cost to a correct call (an optimizer's step calls
# them on every parameter): their ops' checks of an operand that is not a number (``refuse_numpy_array``), or an
# out-of-place op that refuses it (fmod_: fmod)
_CHECKS_ARRAYS_ITSELF = frozenset({"add_", "sub_", "mul_", "div_", "true_divide_", "floor_divide_", "remainder_",
                                   "pow_", "fmod_", "copysign_", "xlogy_", "addcmul_", "addcdiv_", "lerp_",
                                   "copy_"})


# the in-place methods whose arguments are sizes or a list of dims, not operands: PyTorch's parser reads a 0-d NumPy
# integer array there as its int (``x.resize_(numpy.array(2))``) and words a larger one as not a tuple of ints; their
# own parsing does the same
_PARSES_SIZES_ITSELF = frozenset({"resize_", "squeeze_"})


def _refusing_numpy_arrays(name: str, method: Callable) -> Callable:
    """The in-place Tensor ``method`` refusing a NumPy array argument with PyTorch's TypeError
    (``refuse_numpy_arrays``) before it writes anything."""
    parameters = positional_names(method, True)

    @functools.wraps(method)
    def refusing_numpy_arrays(self, *args, **kwargs):
        if args or kwargs:
            refuse_numpy_arrays(name, args, kwargs, parameters)
        return method(self, *args, **kwargs)

    return refusing_numpy_arrays


# the augmented assignments, which give NotImplemented for a NumPy array: Python then calls the binary operator
# (``x + array``), whose TypeError says to convert it (PyTorch computes both in NumPy and wraps the result)
_AUGMENTED = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__idiv__", "__ifloordiv__", "__imod__", "__ipow__",
              "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__imatmul__")


def _augmented_refusing_numpy_arrays(method: Callable) -> Callable:
    @functools.wraps(method)
    def refusing_numpy_arrays(self, other):
        if isinstance(other, xp.ndarray):
            return NotImplemented
        return method(self, other)

    return refusing_numpy_arrays


def accept_torch_names_in_methods(cls: _C) -> _C:
    """Class decorator: each method of ``cls`` (its own and its mixins') also takes PyTorch's names for its
    parameters (``x.mul(other=y)``) and, where it has ``dim``/``keepdim``, ``axis=``/``keepdims=``; the binary ones
    that do not word it themselves (``_OWN_REFUSAL``) refuse a non-operand with PyTorch's TypeError
    (``_refusing_non_operands``); the in-place ones refuse a NumPy array (``_refusing_numpy_arrays``; the augmented
    assignments leave it to the binary operator's refusal); the others are left as they are."""
    for name in _AUGMENTED:
        method = getattr(cls, name, None)
        if isinstance(method, FunctionType):
            wrapped = _augmented_refusing_numpy_arrays(method)
            _named_where_reachable(wrapped, cls.__module__, f"{cls.__qualname__}.{name}")
            setattr(cls, name, wrapped)
    for name in dir(cls):
        if name.startswith("__"):  # (with_torch_names leaves these as they are)
            continue
        # inspect.getattr_static(cls, name), as it finds a name dir(cls) lists, at a tenth of its cost
        method = next(klass.__dict__[name] for klass in cls.__mro__ if name in klass.__dict__)
        if isinstance(method, FunctionType):
            wrapped = with_torch_names(name, method, method=True)
            if name not in _OWN_REFUSAL and (name.removesuffix("_") in _MUST_BE_TENSOR
                                             or name.removesuffix("_") in _TENSOR_OR_NUMBER):
                wrapped = _refusing_non_operands(name, wrapped)
            if name.removesuffix("_") in ("clamp", "clip"):
                wrapped = _rewording_clamp_bounds(name, wrapped, True)
            if name.endswith("_") and not name.startswith("_") and name not in _CHECKS_ARRAYS_ITSELF and \
                    name not in _PARSES_SIZES_ITSELF and len(parameter_kinds(method)) > 1:
                wrapped = _refusing_numpy_arrays(name, wrapped)  # (an in-place method taking arguments)
            if wrapped is not method:
                _named_where_reachable(wrapped, cls.__module__, f"{cls.__qualname__}.{name}")
                setattr(cls, name, wrapped)
    return cls


def name_as_native_ops(namespace: dict, prefix: str, names) -> None:
    """Name each function ``names`` lists in a module's ``namespace`` as PyTorch names the function of its namespace:
    the bindings of ``torch.linalg``, ``torch.fft`` and ``torch.special`` are the ATen ops they call, so
    ``torch.linalg.inv.__name__`` is ``"linalg_inv"`` (``prefix`` ``"linalg_"``), and a traced graph's node is
    ``linalg_inv``. Set on the function itself, once (no wrapper on the call path); its ``__module__`` and
    ``__qualname__`` are where pickle finds it, the module and its name there (ember has no ``linalg_inv`` beside
    ``inv``; a function the module imports, or wraps as ``special.polygamma``, is pickled by that name too)."""
    for name in names:
        fn = namespace[name]
        if callable(fn) and not isinstance(fn, type):
            fn.__name__ = prefix + name
            _named_where_reachable(fn, namespace["__name__"], name)
