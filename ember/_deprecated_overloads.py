"""PyTorch's deprecated number-first overloads, which PyTorch 2.13 still accepts with a warning.

Before PyTorch 1.5 the scale of ``add``/``sub``, ``addcmul``/``addcdiv`` and the ``addmm`` family came first,
positionally: ``p.data.add_(-lr, d_p)``, ``exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)``,
``x.addmm(beta, alpha, mat1, mat2)``. Custom optimizers and samplers of that time are still common in public code,
and PyTorch's argument parser still takes these signatures, warning once per process (one warning for all of
them). ember does the same: each of those methods (and ``ember.add``/``sub``/``addcmul``/``addcdiv`` and the
``addmm`` family's functions, ``torch.addmm(beta, input, [alpha,] mat1, mat2)`` and ``torch.addmv_``, whose
number-first forms PyTorch keeps as functions too) collects extra positional arguments in ``*number_first`` and
hands them here, off its common path.
"""

from __future__ import annotations

from . import _warnings
from ._arg_aliases import is_number

_warned = False


def _is_number(value) -> bool:
    """PyTorch's ``Number`` in a signature: a Python or NumPy number, or a tensor of one element and no
    dimensions that does not require grad (its argument parser's rule)."""
    from ._tensor import Tensor

    if isinstance(value, Tensor):
        return value.dim() == 0 and not value.requires_grad
    return is_number(value)


def _warn_once(name: str, old: str, new: str, function: bool) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    if function:  # (the forms of ``torch.add``/``torch.addcmul``: PyTorch shows their input and out= too)
        old, new = f"Tensor input, {old}, *, Tensor out = None", f"Tensor input, {new}, Tensor out = None"
    _warnings.warn(f"This overload of {name} is deprecated:\n\t{name}({old})\nConsider using one of the following "
                   f"signatures instead:\n\t{name}({new})")


def _refuse(name: str, reason: str) -> TypeError:
    return TypeError(f"{name}() received an invalid combination of arguments - {reason}")


def _check_scale(name: str, keyword: str, scale, given) -> None:
    if given != 1:  # (the keyword was given as well: PyTorch's deprecated signature has no such keyword)
        raise _refuse(name, f"got unrecognized keyword arguments: {keyword}")
    if not _is_number(scale):
        raise _refuse(name, f"got a {type(scale).__name__} as the first positional argument where a number was "
                            f"expected: {keyword} comes first only in the deprecated {name}(Number {keyword}, ...); "
                            f"write {keyword}= as a keyword")


def alpha_first(name: str, alpha, rest: tuple, given_alpha, function: bool = False) -> tuple:
    """``x.add_(alpha, other)`` / ``torch.sub(x, alpha, other)``: ``(other, alpha)`` of the current signature.
    ``rest`` holds the arguments after ``alpha`` (one: ``other``); ``given_alpha`` the keyword's value."""
    if len(rest) != 1:
        raise _refuse(name, f"got {len(rest) + 2 - (not function)} positional arguments")
    _check_scale(name, "alpha", alpha, given_alpha)
    _warn_once(name, "Number alpha, Tensor other", "Tensor other, *, Number alpha = 1", function)
    return rest[0], _number(alpha)


def value_first(name: str, value, tensor1, rest: tuple, given_value, function: bool = False) -> tuple:
    """``x.addcmul_(value, tensor1, tensor2)``: ``(tensor1, tensor2, value)`` of the current signature (``tensor1``
    is what the call gave as the first tensor argument, ``rest`` what came after it: the second)."""
    if len(rest) != 1:
        raise _refuse(name, f"got {len(rest) + 3 - (not function)} positional arguments")
    _check_scale(name, "value", value, given_value)
    _warn_once(name, "Number value, Tensor tensor1, Tensor tensor2",
               "Tensor tensor1, Tensor tensor2, *, Number value = 1", function)
    return tensor1, rest[0], _number(value)


def _no_signature(name: str, operands: tuple[str, str], args: tuple, function: bool) -> TypeError:
    """PyTorch's TypeError for positional ``args`` (all the call gave, a method's without the tensor itself) that
    fit neither the current signature nor a deprecated one: ``torch.addmm`` and ``torch.baddbmm``, which have a
    second visible signature (``out_dtype``), list both; the others count the positional arguments, as Python's own
    error."""
    if function and name in ("addmm", "baddbmm"):
        shown = ", ".join(type(a).__name__ for a in args)
        given = f"Tensor input, Tensor {operands[0]}, Tensor {operands[1]}"
        keywords = "*, Number beta = 1, Number alpha = 1, Tensor out = None"
        return _refuse(name, f"got ({shown}), but expected one of:\n * ({given}, {keywords})\n"
                             f" * ({given}, torch.dtype out_dtype, {keywords})\n")
    return TypeError(f"{name}() takes {3 if function else 2} positional arguments but {len(args)} were given")


def beta_first(name: str, operands: tuple[str, str], args: tuple, given_beta, given_alpha,
               function: bool = False, given_args: tuple | None = None) -> tuple:
    """``x.addmm(beta, mat1, mat2)`` or ``x.addmm(beta, alpha, mat1, mat2)`` (and addmv, addr, baddbmm, addbmm,
    their in-place forms): ``(mat1, mat2, beta, alpha)`` of the current signature, from all the call's positional
    ``args`` after the tensor itself; ``operands`` are the op's names for its two (``("mat1", "mat2")``).
    Neither scale may also come as a keyword (PyTorch's deprecated signatures have no keywords).
    ``function``: the form of ``torch.addmm(beta, input, [alpha,] mat1, mat2)``, ``args`` without its input, and
    ``given_args`` the call's positional arguments as given (for the error naming them)."""
    from ._tensor import Tensor

    if len(args) not in (3, 4) or not (isinstance(args[-2], Tensor) and isinstance(args[-1], Tensor)):
        raise _no_signature(name, operands, args if given_args is None else given_args, function)
    beta, alpha = args[0], args[1] if len(args) == 4 else given_alpha
    _check_scale(name, "beta", beta, given_beta)
    _check_scale(name, "alpha", alpha if len(args) == 4 else 1, given_alpha)
    first, second = operands
    scales = "Number beta, Number alpha" if len(args) == 4 else "Number beta"
    old, new = f"{scales}, Tensor {first}, Tensor {second}", \
        f"Tensor {first}, Tensor {second}, *, Number beta = 1, Number alpha = 1"
    if function:  # (PyTorch shows the function's input after beta, and out= for an out-of-place op)
        old, new = old.replace("Number beta", "Number beta, Tensor input", 1), f"Tensor input, {new}"
        if not name.endswith("_"):
            old, new = f"{old}, *, Tensor out = None", f"{new}, Tensor out = None"
        if name == "addmm":  # (its overload with out_dtype, listed too)
            new += (")\n\taddmm(Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, "
                    "Number alpha = 1, Tensor out = None")
    _warn_once(name, old, new, False)
    return args[-2], args[-1], _number(beta), _number(alpha)


def _number(scale):
    """A scale as the product ops take it: a 0-d tensor (PyTorch's Number in a signature) as its Python number."""
    from ._tensor import Tensor

    return scale.item() if isinstance(scale, Tensor) else scale


def beta_first_function(name: str, operands: tuple[str, str], args: tuple, given_beta, given_alpha) -> tuple:
    """``torch.addmm(beta, input, mat1, mat2)`` or ``torch.addmm(beta, input, alpha, mat1, mat2)`` (and addmv, addr,
    baddbmm, addbmm, addmv_): ``(input, mat1, mat2, beta, alpha)`` of the current signature, from all the call's
    positional ``args``."""
    from ._tensor import Tensor

    if len(args) not in (4, 5) or not isinstance(args[1], Tensor):
        raise _no_signature(name, operands, args, True)
    return (args[1], *beta_first(name, operands, (args[0], *args[2:]), given_beta, given_alpha, True, args))
