"""``repr(tensor)`` in PyTorch's format: ``tensor([1.0000, 2.5000], requires_grad=True)``."""

from __future__ import annotations

from . import _dtype
from ._backend import xp

_PRINT = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Like ``torch.set_printoptions``."""
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _PRINT[k] = v
    _PRINT["sci_mode"] = sci_mode


def _float_formatter(values):
    finite = values[xp.isfinite(values)]
    p = _PRINT["precision"]
    if finite.size == 0:
        return lambda v: _special(v)
    absf = xp.abs(finite)
    nonzero = absf[absf > 0]
    ints = bool(xp.all(finite == xp.round(finite)))
    sci = _PRINT["sci_mode"]
    if sci is None:
        sci = nonzero.size > 0 and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8
                                     or nonzero.min() < 1e-4)
    if sci:
        return lambda v: _special(v) or f"{v:.{p}e}"
    if ints:
        return lambda v: _special(v) or f"{v:.0f}."
    return lambda v: _special(v) or f"{v:.{p}f}"


def _special(v) -> str:
    if xp.isnan(v):
        return "nan"
    if xp.isinf(v):
        return "inf" if v > 0 else "-inf"
    return ""


def _format_array(a) -> str:
    if a.dtype.kind == "f":
        fmt = _float_formatter(a.astype(xp.float64).reshape(-1))
    elif a.dtype.kind == "b":
        fmt = lambda v: "True" if v else "False"  # noqa: E731
    else:
        fmt = str
    summarize = a.size > _PRINT["threshold"]
    return xp.array2string(
        a, separator=", ", prefix="tensor(", max_line_width=_PRINT["linewidth"],
        formatter={"all": fmt}, threshold=_PRINT["threshold"] if summarize else a.size + 1,
        edgeitems=_PRINT["edgeitems"],
    )


def tensor_repr(t) -> str:
    a = t._data
    suffix = []
    if a.size == 0 and a.ndim == 1:
        body = "[]"
    elif a.size == 0:
        body = "[]"
        suffix.append(f"size={tuple(a.shape)}")
    else:
        body = _format_array(a)
    dt = _dtype.from_np(a.dtype)
    default = dt is _dtype.get_default_dtype() or dt is _dtype.int64 or dt is _dtype.bool_
    if not default:
        suffix.append(f"dtype={dt}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + suffix) + ")"
