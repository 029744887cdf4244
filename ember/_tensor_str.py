"""``repr(tensor)`` in PyTorch's format: ``tensor([1.0000, 2.5000], requires_grad=True)``.

The rules PyTorch follows, which this module reproduces:

- one width for every element, so columns align (positives get a leading space
  when negatives are present); the width is measured on the elements printed
  (only the edges when the tensor is summarized);
- floats whose non-zero finite values are all integers print as ``3.``; floats
  switch to scientific notation when the non-zero magnitudes span more than
  1000x, exceed 1e8, or (non-integers) go below 1e-4;
- more than ``threshold`` elements are summarized with ``...``, keeping
  ``edgeitems`` at each end of every dimension;
- suffixes (``dtype=``, ``grad_fn=``/``requires_grad=True``, ``size=`` for
  empty tensors) wrap onto a new line past ``linewidth``.
"""

from __future__ import annotations

import math

from . import _dtype
from ._backend import xp
from ._dtype import np_kind

_PRINT = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
# PyTorch's named profiles: each sets these four options (the others given beside it then apply on top)
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Like ``torch.set_printoptions``: ``profile`` ("default", "short" or "full"; another name is ignored, as
    PyTorch ignores it) sets precision, threshold, edgeitems and linewidth, then the options given apply;
    ``sci_mode`` is always set (None: the notation is chosen per tensor)."""
    _PRINT.update(_PROFILES.get(profile, {}))
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _PRINT[k] = v
    _PRINT["sci_mode"] = sci_mode


class _Formatter:
    """Formats single values of one tensor at a common width."""

    def __init__(self, values) -> None:
        self.floating = np_kind(values.dtype) == "f"
        self.int_mode, self.sci_mode = True, False
        p = _PRINT["precision"]
        if not self.floating:
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        finite = values[xp.isfinite(values) & (values != 0)].astype(xp.float64)
        self.width = 1
        if finite.size:
            absf = xp.abs(finite)
            lo, hi = float(absf.min()), float(absf.max())
            self.int_mode = bool(xp.all(finite == xp.ceil(finite)))
            # set_printoptions(sci_mode=...) decides the notation before the width is measured, as in PyTorch:
            # a forced fixed notation pads every value to the widest fixed-notation one (and a tensor with no
            # finite nonzero value keeps the fixed notation whatever sci_mode says)
            self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or (not self.int_mode and lo < 1.0e-4)
                             if _PRINT["sci_mode"] is None else bool(_PRINT["sci_mode"]))
            fmt = f".{p}e" if self.sci_mode else ".0f" if self.int_mode else f".{p}f"
            extra = 1 if self.int_mode and not self.sci_mode else 0  # the "." after an integer
            self.width = max(len(format(v, fmt)) for v in finite.tolist()) + extra

    def format(self, value) -> str:
        if not self.floating:
            s = str(value)
        elif self.sci_mode:
            s = f"{value:.{_PRINT['precision']}e}"
        elif self.int_mode:
            s = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            s = f"{value:.{_PRINT['precision']}f}"
        return " " * (self.width - len(s)) + s


class _ComplexFormatter:
    """PyTorch's complex format: the real parts and the imaginary parts each get a ``_Formatter`` of their own,
    and a value prints as ``real`` then ``+imag`` / ``-imag`` with a ``j`` (``1.0000+2.5000j``)."""

    def __init__(self, values) -> None:
        self.re, self.im = _Formatter(values.real), _Formatter(values.imag)
        self.width = self.re.width + self.im.width + 1  # the "j" (the line length counts width + 2 per element)

    def format(self, value) -> str:
        imag = (self.im.format(value.imag) + "j").lstrip()
        return self.re.format(value.real) + ("" if imag[0] in "+-" else "+") + imag


def _summarized(a, edge: int):
    """Only the elements that get printed: ``edge`` at each end of every long dimension."""
    for axis, n in enumerate(a.shape):
        if n > 2 * edge:
            a = xp.take(a, list(range(edge)) + list(range(n - edge, n)), axis=axis)
    return a


def _body(a, fmt: _Formatter, indent: int, summarize: bool) -> str:
    edge = _PRINT["edgeitems"]
    long = summarize and a.shape[0] > 2 * edge
    if a.ndim == 1:
        vals = a.tolist()
        items = ([fmt.format(v) for v in vals[:edge]] + [" ..."] + [fmt.format(v) for v in vals[-edge:]]
                 if long else [fmt.format(v) for v in vals])
        per_line = max(1, math.floor((_PRINT["linewidth"] - indent) / (fmt.width + 2)))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(a.shape[0])
    parts = ([_body(a[i], fmt, indent + 1, summarize) for i in rows[:edge]] + ["..."]
             + [_body(a[i], fmt, indent + 1, summarize) for i in rows[-edge:]]) if long else \
        [_body(a[i], fmt, indent + 1, summarize) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _with_suffixes(text: str, suffixes: list, indent: int) -> str:
    out = [text]
    last_line = len(text) - text.rfind("\n") + 1  # PyTorch's measure (2 more than the length on one line)
    for s in suffixes:
        if last_line + len(s) + 2 > _PRINT["linewidth"]:
            out.append(",\n" + " " * indent + s)
            last_line = indent + len(s)
        else:
            out.append(", " + s)
            last_line += len(s) + 2
    return "".join(out) + ")"


def array_text(a, indent: int) -> str:
    """The elements of array ``a`` as PyTorch prints a tensor's inside ``tensor(...)``, continuation lines indented
    by ``indent`` (no dtype or size suffix; an empty array is ``[]``)."""
    if a.size == 0:
        return "[]"
    summarize = a.size > _PRINT["threshold"]
    shown = (_summarized(a, _PRINT["edgeitems"]) if summarize else a).reshape(-1)
    fmt = (_ComplexFormatter if a.dtype.kind == "c" else _Formatter)(shown)
    return fmt.format(a.item()) if a.ndim == 0 else _body(a, fmt, indent, summarize)


def dtype_is_shown(dt) -> bool:
    """Whether a non-empty tensor's repr names its dtype: not when its values imply it (the default floating and
    complex dtypes, int64, bool)."""
    return dt not in (_dtype.get_default_dtype(), _dtype.category_dtype(3), _dtype.int64, _dtype.bool_)


def tensor_repr(t) -> str:
    a = t._data
    prefix = "tensor("
    dt = _dtype.from_np(a.dtype)
    suffixes = []
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dt is not _dtype.get_default_dtype():  # nothing to infer the dtype from
            suffixes.append(f"dtype={dt}")
    else:
        body = array_text(a, len(prefix))
        if dtype_is_shown(dt):
            suffixes.append(f"dtype={dt}")
    try:
        fn = t.grad_fn
    except RuntimeError:  # a view that cannot be regenerated (an output of split changed in place): PyTorch's text
        suffixes.append("grad_fn=<Invalid>")
        fn = False
    if fn is not None and fn is not False:
        suffixes.append(f"grad_fn=<{fn.name().rpartition('::')[2]}>")
    elif fn is None and t._requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, len(prefix))


def meta_repr(t) -> str:
    """A meta tensor's repr, as PyTorch's: no values, its device, size and (when not the default) dtype."""
    a = t._data
    dt = _dtype.from_np(a.dtype)
    parts = ["...", "device='meta'", f"size={tuple(a.shape)}"]
    if dt is not _dtype.get_default_dtype():
        parts.append(f"dtype={dt}")
    fn = t.grad_fn
    if fn is not None:
        parts.append(f"grad_fn=<{fn.name().rpartition('::')[2]}>")
    elif t._requires_grad:
        parts.append("requires_grad=True")
    return f"tensor({', '.join(parts)})"
