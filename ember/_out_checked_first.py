"""``out=``: the ops whose ``out`` dtype PyTorch checks before computing (``ember/_out.py`` checks the others' after).

PyTorch's ``amax``/``amin``, ``dot``/``vdot``, ``any``/``all``, ``logsumexp``, ``logcumsumexp`` (exactly the
input's dtype, before its dim), ``float_power``, ``ldexp``,
``heaviside``, ``where`` and the pointwise ops keeping their input's dtype (``ceil``, ``floor``, ``frac``,
``round``, ``bitwise_not``, ``abs`` of a real tensor) refuse an ``out`` of the wrong dtype before they look
further: ``torch.amax(x, dim=5, out=longs)`` of a float ``x`` is the dtype's RuntimeError, not the dim's
IndexError; ``torch.ceil(bools, out=longs)`` is "Found dtype Long but expected Bool", not the kernel's missing
dtype. ``gather``, ``index_select``, ``take`` and ``masked_select`` check their dim and index (mask) first, then
out's dtype (``gather`` only its dim: out's dtype before its index's), then compute (an index out of bounds
comes after); ``max``/``min`` of all elements check that the
input's dtype can be cast into out's (``max.unary_out``) before the kernel's refusal of a complex input; ``cat``
(``concat``, ``hstack``, ``vstack``) that its inputs' promoted dtype can be, before their shapes.
"""

from __future__ import annotations

from ._dtype import bool_ as _bool
from ._dtype import complex128, float64, get_default_dtype, promote_types
from ._tensor import Tensor

# the pointwise ops keeping their input's dtype whose out= PyTorch's TensorIterator checks before its kernel (of
# a complex input, ceil/floor/frac/abs give their own refusal, or abs's real result, first: round checks out first)
_SAME_DTYPE_POINTWISE = frozenset("ceil floor frac bitwise_not abs absolute".split())


def _argument(args: tuple, kwargs: dict, position: int, name: str):
    return args[position] if len(args) > position else kwargs.get(name)


def _dim_in_range(dim, x: Tensor) -> bool:
    """Whether ``dim`` is an int dim of ``x`` (PyTorch wraps it, refusing one out of range, before out's check)."""
    n = max(x.dim(), 1)
    return isinstance(dim, int) and -n <= dim < n


def _floating(d):
    """The dtype of a float result computed from ``d`` (an integral or bool input: the default dtype)."""
    return d if d.is_floating_point or d.is_complex else get_default_dtype()


# PyTorch's cat (and the joinings it serves) checks that the inputs' promoted dtype casts into out's before their
# shapes (after its refusal of a 0-d tensor and its wrapping of the dim)
_JOININGS = frozenset("cat concat concatenate hstack vstack".split())


def _joined_dtype(name: str, args: tuple, kwargs: dict) -> tuple | None:
    """The promoted dtype of a joining's tensors, cast into out's (see ``_JOININGS``); None where the checks that
    come first would fail."""
    tensors = _argument(args, kwargs, 0, "tensors")
    if not isinstance(tensors, (list, tuple)) or not tensors or not all(isinstance(t, Tensor) for t in tensors):
        return None
    if name not in ("hstack", "vstack"):  # (those make every tensor 1-d or 2-d, then join along a dim they pick)
        if any(t.dim() == 0 for t in tensors):
            return None
        shaped = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)]  # (PyTorch's legacy skip)
        if not _dim_in_range(_argument(args, kwargs, 1, "dim") or 0, shaped[0] if shaped else tensors[0]):
            return None
    result = tensors[0].dtype
    for t in tensors[1:]:
        result = promote_types(result, t.dtype)
    return result, False


def dtype_checked_first(name: str, args: tuple, kwargs: dict) -> tuple | None:
    """The result's dtype and whether out's must equal it (else be one it can be cast to), for a call whose out's
    dtype PyTorch checks before computing (see the module's docstring); None for the others, and where the call's
    own checks that come first would fail (the op's computation then raises them)."""
    if name in _JOININGS:
        return _joined_dtype(name, args, kwargs)
    x = _argument(args, kwargs, 0, "input")
    if name == "where":  # (out's dtype checked before the condition's)
        values = [_argument(args, kwargs, 1, "input"), _argument(args, kwargs, 2, "other")]
        if len(args) + len(kwargs) < 3 or not any(isinstance(v, Tensor) for v in values):
            return None
        from .ops.elementwise import promote

        promoted = promote(*values)
        return next(v for v in promoted if isinstance(v, Tensor)).dtype, True
    if not isinstance(x, Tensor):
        return None
    d = x.dtype
    if name in ("amax", "amin", "dot", "vdot") or name in _SAME_DTYPE_POINTWISE and not d.is_complex:
        return d, True
    if name == "round":  # (a decimals that is no int: the argument parser's TypeError first)
        return (d, True) if isinstance(_argument(args, kwargs, 1, "decimals") or 0, int) else None
    if name in ("any", "all"):
        return _bool, True
    if name == "logsumexp":
        return _floating(d), False
    if name == "logcumsumexp":  # (the input's dtype, an integer one too: before the kernel refuses it)
        return d, True
    if name == "float_power":
        other = _argument(args, kwargs, 1, "exponent")
        complex_input = d.is_complex or isinstance(other, complex) or isinstance(other, Tensor) and other.is_complex()
        return (complex128 if complex_input else float64), True
    if name == "ldexp":
        other = _argument(args, kwargs, 1, "other")
        return (_floating(promote_types(d, other.dtype)), False) if isinstance(other, Tensor) else None
    if name == "heaviside":
        values = _argument(args, kwargs, 1, "values")
        if not isinstance(values, Tensor) or d.is_complex or values.is_complex() or values.dtype != d:
            return None  # (PyTorch's own refusals of these come first)
        return d, True
    if name in ("gather", "index_select", "take"):
        if name != "take" and not _dim_in_range(_argument(args, kwargs, 1, "dim"), x):
            return None
        index = _argument(args, kwargs, 1 if name == "take" else 2, "index")
        if name == "take" and not (isinstance(index, Tensor) and index.dtype.name == "int64"):
            return None
        if name == "index_select" and not (isinstance(index, Tensor) and index.dtype.name in ("int64", "int32")
                                           and index.dim() <= 1):
            return None
        return d, True  # (gather: out's dtype before its index's)
    if name == "masked_select":
        mask = _argument(args, kwargs, 1, "mask")
        return (d, True) if isinstance(mask, Tensor) and mask.dtype == _bool else None
    return None
