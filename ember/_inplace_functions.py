"""PyTorch's top-level spellings of in-place Tensor methods: ``torch.clamp_(x, 0, 1)`` is ``x.clamp_(0, 1)``.

Each function forwards to the method of the same name on its first argument, so both spellings share one
implementation (the version counter, autograd's in-place checks, views, dtype rules). The in-place activations
torch also exposes here (``torch.selu_``, ``torch.celu_``, ``torch.rrelu_``, ``torch.threshold_``) and the
dropout forms are not provided; ``ember.nn.functional`` has them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from . import _deprecated_overloads as _deprecated
from ._signatures import Kinds, on_first_read, parameter_kinds
from ._tensor import Tensor


def _method_form(name: str, operands: tuple[str, str] | None = None) -> Callable[..., Tensor]:
    """``operands`` (the names of addmv_'s two): PyTorch also takes the deprecated ``torch.addmv_(beta, input,
    [alpha,] mat, vec)`` (ember/_deprecated_overloads.py), not the method's ``(input, beta, [alpha,] mat, vec)``."""

    def function(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if operands is not None and len(args) > 2:
            input, first, second, beta, alpha = _deprecated.beta_first_function(
                name, operands, (input, *args), kwargs.pop("beta", 1), kwargs.pop("alpha", 1))
            args, kwargs = (first, second), dict(kwargs, beta=beta, alpha=alpha)
        try:
            return getattr(input, name)(*args, **kwargs)
        except TypeError as e:
            error = _as_function_error(name, e)
            if error is e:
                raise
            raise error from None

    # the method's parameters, ``self`` named ``input`` as PyTorch's functions name it (keyword calls and
    # introspection see PyTorch's names)
    def signature() -> inspect.Signature:
        method = inspect.signature(getattr(Tensor, name))
        params = list(method.parameters.values())
        return method.replace(parameters=[params[0].replace(name="input"), *params[1:]])

    def kinds() -> Kinds:
        method = parameter_kinds(getattr(Tensor, name))
        first = next(iter(method))
        return {("input" if p == first else p): kind for p, kind in method.items()}

    function.__signature__ = on_first_read(signature, kinds)
    function.__name__ = function.__qualname__ = name
    function.__module__ = "ember"
    function.__doc__ = f"``input.{name}(...)``: writes the result into ``input`` and returns it."
    return function


# the position an argument parser's TypeError names: "normal_(): argument 'mean' (position 1) must be float, ..."
_POSITION = re.compile(r"^(\w+\(\): argument '\w+' )\(position (\d+)\)")
# Python's own refusal of a call's arguments, which names the method it bound them to ("Tensor.trunc_() takes 1
# positional argument but 2 were given", for fix_ too); the count includes the input, as the function's does
_BINDING_ERROR = re.compile(r"Tensor\.\w+\(\)(?= takes | got an unexpected | got multiple | missing )")
# the parts of PyTorch's "invalid combination of arguments" message that list the arguments: what the call gave
# (its first line; a method given only keywords shows a trailing ", "), each overload, each overload's mismatch
_GIVEN = re.compile(r"(?<= - got \()(.*?)(?:, )?(?=\), but expected)")
_OVERLOAD = re.compile(r"^ \* \((\)?)", re.MULTILINE)
_MISMATCH = re.compile(r"(?<=have invalid types: \()", re.MULTILINE)


def _as_function_error(name: str, error: TypeError) -> TypeError:
    """``error``, the method's refusal of a call's arguments, worded as PyTorch words the function ``name``'s,
    whose parser sees the input as the first argument of each overload: Python's binding errors name ``name()``
    (PyTorch's "sqrt_() takes 1 positional argument but 2 were given", not the method's ``Tensor.sqrt_()``); a
    list of overloads ("received an invalid combination of arguments") gains the input: "got (Tensor, str)",
    " * (Tensor input, Number min = None, ...)", "invalid types: (Tensor, !str!)"; an argument's position counts
    the input ("argument 'indices' (position 2)" where the method's is position 1). Any other error is returned
    as it is."""
    message = str(error)
    if message.startswith(f"{name}(): ") and _POSITION.match(message):
        return TypeError(_POSITION.sub(lambda m: f"{m[1]}(position {int(m[2]) + 1})", message, count=1))
    if _BINDING_ERROR.match(message):
        return TypeError(_BINDING_ERROR.sub(f"{name}()", message, count=1))
    if message.startswith(f"{name}() received an invalid combination of arguments - got ("):
        message = _GIVEN.sub(lambda m: "Tensor" + (", " + m[1] if m[1] else ""), message, count=1)
        message = _OVERLOAD.sub(lambda m: " * (Tensor input" + (")" if m[1] else ", "), message)
        return TypeError(_MISMATCH.sub("Tensor, ", message))
    return error


abs_ = _method_form("abs_")
acos_ = _method_form("acos_")
addmv_ = _method_form("addmv_", ("mat", "vec"))
acosh_ = _method_form("acosh_")
arccos_ = _method_form("arccos_")
arccosh_ = _method_form("arccosh_")
arcsin_ = _method_form("arcsin_")
arcsinh_ = _method_form("arcsinh_")
arctan_ = _method_form("arctan_")
arctanh_ = _method_form("arctanh_")
asin_ = _method_form("asin_")
asinh_ = _method_form("asinh_")
atan_ = _method_form("atan_")
atanh_ = _method_form("atanh_")
ceil_ = _method_form("ceil_")
clamp_ = _method_form("clamp_")
clamp_max_ = _method_form("clamp_max_")
clamp_min_ = _method_form("clamp_min_")
clip_ = _method_form("clip_")
cos_ = _method_form("cos_")
cosh_ = _method_form("cosh_")
deg2rad_ = _method_form("deg2rad_")
detach_ = _method_form("detach_")
erf_ = _method_form("erf_")
erfc_ = _method_form("erfc_")
exp2_ = _method_form("exp2_")
exp_ = _method_form("exp_")
expm1_ = _method_form("expm1_")
fill_ = _method_form("fill_")
fix_ = _method_form("fix_")
floor_ = _method_form("floor_")
frac_ = _method_form("frac_")
i0_ = _method_form("i0_")
index_put_ = _method_form("index_put_")
log10_ = _method_form("log10_")
log1p_ = _method_form("log1p_")
log2_ = _method_form("log2_")
log_ = _method_form("log_")
logit_ = _method_form("logit_")
nan_to_num_ = _method_form("nan_to_num_")
neg_ = _method_form("neg_")
negative_ = _method_form("negative_")
rad2deg_ = _method_form("rad2deg_")
reciprocal_ = _method_form("reciprocal_")
relu_ = _method_form("relu_")
resize_as_ = _method_form("resize_as_")
round_ = _method_form("round_")
rsqrt_ = _method_form("rsqrt_")
sigmoid_ = _method_form("sigmoid_")
sin_ = _method_form("sin_")
sinc_ = _method_form("sinc_")
sinh_ = _method_form("sinh_")
sqrt_ = _method_form("sqrt_")
square_ = _method_form("square_")
tan_ = _method_form("tan_")
tanh_ = _method_form("tanh_")
trunc_ = _method_form("trunc_")
xlogy_ = _method_form("xlogy_")
zero_ = _method_form("zero_")
gcd_ = _method_form("gcd_")
lcm_ = _method_form("lcm_")
