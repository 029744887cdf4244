"""``out=``: PyTorch's rules for the reductions whose out= forms check more than ``ember/_out.py``'s tables say.

- The ops returning two tensors: ``median``/``nanmedian`` (with a dim), ``mode``, ``cummax``/``cummin`` (values,
  indices) and ``aminmax`` (min, max) take a tuple (or list) of two tensors; anything else is the argument
  parser's TypeError (``median(): argument 'out' must be tuple of Tensors, not Tensor``, "expected tuple of 2
  elements but got 3", "expected Tensor as element 1 in argument 3, but got int"), and ``median``/``nanmedian``
  without a dim have no out= form ('median() missing 1 required positional arguments: "dim"'). Each out must
  have exactly the dtype of its result (the input's; int64 indices), in PyTorch's order and words:
  ``median``/``nanmedian`` check the indices, then the values, after the dim (their own legacy-type messages,
  both naming median); ``mode`` and ``cummax``/``cummin`` check the values, then the indices, before the dim;
  ``aminmax`` checks min, then max, after the dim.
- ``nansum`` computes in out's dtype (as ``sum``): a ``dtype=`` that is not out's is its RuntimeError ("nansum:
  provided dtype must match dtype of result"), and a floating input into an out that is not floating is its
  kernel's NotImplementedError (after the dims are checked). An integer or bool input's nansum is PyTorch's
  ``sum`` (its out= rules). ``nanmean(out=)`` is PyTorch's ``nansum(out=)`` divided in place by the count: the
  same rules, and PyTorch's autograd refusal names nansum; an integer or bool input is refused first, with its
  own words.
"""

from __future__ import annotations

from ._dtype import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES, int64
from ._size import c_type_name
from ._tensor import Tensor

PAIRS = frozenset("median nanmedian mode cummax cummin aminmax".split())
NAN_SUMS = frozenset({"nansum", "nanmean"})
# the pairs whose out's dtypes PyTorch checks before the dim (the others after it, as their computation does)
PAIRS_CHECKED_FIRST = frozenset({"mode", "cummax", "cummin"})
# the position of ``out`` in each op's signature, as the argument parser numbers it in its errors
_OUT_POSITION = {"median": 3, "nanmedian": 3, "mode": 3, "cummax": 2, "cummin": 2, "aminmax": 3}


def _positional_count(args: tuple, kwargs: dict) -> int:
    return len(args) + ("input" in kwargs)


def check_pair_form(name: str, args: tuple, kwargs: dict, out) -> None:
    """PyTorch's argument parser on a pair op's ``out``: a tuple (or list) of two tensors, and (median,
    nanmedian) a dim to go with it."""
    if name in ("median", "nanmedian") and _positional_count(args, kwargs) < 2 and "dim" not in kwargs:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {c_type_name(out)}")
    if len(out) != 2:
        raise TypeError(f"expected tuple of 2 elements but got {len(out)}")
    for i, o in enumerate(out):
        if not isinstance(o, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {_OUT_POSITION[name]}, but got "
                            f"{c_type_name(o)}")


def _legacy_type(d) -> str:
    return f"torch.{SCALAR_TYPE_NAMES[d.name]}Tensor"


def check_pair_dtypes(name: str, x: Tensor, out: tuple) -> None:
    """PyTorch's refusal of a pair op's out whose dtypes are not its results' (see the module's docstring)."""
    values, second = out
    second_dtype = x.dtype if name == "aminmax" else int64
    if name in ("median", "nanmedian"):
        if second.dtype != int64:
            raise RuntimeError(f"Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                               f"{_legacy_type(second.dtype)} instead (while checking arguments for median)")
        if values.dtype != x.dtype:
            raise RuntimeError(f"Expected tensor for 'values' to have the same type as tensor for argument #2 "
                               f"'self'; but type {_legacy_type(values.dtype)} does not equal "
                               f"{_legacy_type(x.dtype)} (while checking arguments for median)")
        return
    for part, o, expected in (("values", values, x.dtype), ("indices", second, second_dtype)):
        if o.dtype == expected:
            continue
        want, got = SCALAR_TYPE_NAMES[expected.name], SCALAR_TYPE_NAMES[o.dtype.name]
        if name == "mode":
            raise RuntimeError(f"expected scalar type '{want}' but got '{got}' for {part} output")
        if name == "aminmax":
            raise RuntimeError(f"Expected out tensor to have dtype {CPP_TYPE_NAMES[expected.name]}, but got "
                               f"{CPP_TYPE_NAMES[o.dtype.name]} instead")
        raise RuntimeError(f"expected scalar_type {want} but found {got}")  # (cummax, cummin)


def refuse_integral_nanmean(args: tuple, kwargs: dict) -> None:
    """PyTorch's nanmean(out=) of an integer or bool tensor (before its autograd check)."""
    x = args[0] if args else kwargs.get("input")
    if isinstance(x, Tensor) and not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError("nanmean(): integral types and 'Bool' are not supported for nanmean, even for empty "
                           "tensors.")


def nan_sum_dtype(args: tuple, kwargs: dict, out: Tensor) -> bool | None:
    """The ``dtype=`` nansum (nanmean) computes in with ``out``, set in ``kwargs``: out's. None where the input is
    an integer or bool one (PyTorch's ``sum``: its rules apply); else whether PyTorch's kernel refuses out's
    dtype (not floating), which it says after the dims are checked."""
    x = args[0] if args else kwargs.get("input")
    if not isinstance(x, Tensor) or not (x.is_floating_point() or x.is_complex()):
        return None
    dtype = kwargs.get("dtype")
    if dtype is not None and dtype != out.dtype:
        raise RuntimeError(f"nansum: provided dtype must match dtype of result. Got "
                           f"{SCALAR_TYPE_NAMES[out.dtype.name]} and {SCALAR_TYPE_NAMES[dtype.name]}.")
    kwargs["dtype"] = out.dtype
    return not out.dtype.is_floating_point



def mode_resize_shapes(args: tuple, kwargs: dict, x: Tensor, out: Tensor, result_shape: tuple) -> tuple | None:
    """The shapes PyTorch's resize warning names for mode's ``out`` tensor: without ``keepdim`` its kernel first
    unsqueezes ``out`` at the dim (where ``out`` has as many dims) and resizes it to the result's shape with the
    dim kept, then squeezes it; None for a 0-d input, whose out PyTorch resizes silently."""
    if x.dim() == 0:
        return None
    rest = list(args[1:] if "input" not in kwargs else args)
    dim = rest[0] if rest else kwargs.get("dim", -1)
    keepdim = rest[1] if len(rest) > 1 else kwargs.get("keepdim", False)
    shown, required = list(out.shape), list(result_shape)
    if not keepdim:
        dim %= x.dim()
        if dim <= len(shown):
            shown.insert(dim, 1)
        required.insert(dim, 1)
    return shown, required
