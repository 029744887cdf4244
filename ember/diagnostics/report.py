"""The gradient report: per parameter, the statistics one prints while debugging a training loop.

    rows = ember.diagnostics.grad_report(model)       # after loss.backward()
    ember.diagnostics.print_grad_report(model)
    ember.diagnostics.plot_grad_norms(model, "grad_norms.png")

The statistics are PyTorch's: ``grad.mean()``, ``grad.std()`` (unbiased), ``grad.norm()`` (2-norm),
plus the fraction of elements that are NaN or inf.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import IO

from .._backend import xp
from .._tensor import Tensor


@dataclass(frozen=True)
class GradStats:
    """One parameter's gradient statistics; ``mean``..``nonfinite`` are None when ``.grad`` is None.

    ``std`` is NaN for a gradient of fewer than two elements (as PyTorch's ``grad.std()``, which also warns
    there; the report does not call it then, and its table shows "—").
    """

    name: str
    shape: tuple[int, ...]
    mean: float | None
    std: float | None
    norm: float | None
    nonfinite: float | None  # fraction of NaN/inf elements, 0.0 .. 1.0


def _named(model) -> list[tuple[str, Tensor]]:
    if hasattr(model, "named_parameters"):
        return list(model.named_parameters())
    pairs = list(model)
    if not all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[1], Tensor) for p in pairs):
        raise TypeError("grad_report expects an nn.Module or an iterable of (name, tensor) pairs, "
                        "e.g. model.named_parameters()")
    return pairs


def grad_report(model) -> list[GradStats]:
    """Statistics of every trainable parameter's ``.grad`` (parameters with requires_grad=False are left out).

    Args:
        model: an ``nn.Module`` (its ``named_parameters()``) or an iterable of ``(name, tensor)`` pairs.
    """
    rows = []
    for name, p in _named(model):
        if not p.requires_grad:
            continue
        g = p.grad
        if g is None:
            rows.append(GradStats(name, tuple(p.shape), None, None, None, None))
            continue
        if g.is_sparse:  # (Embedding(sparse=True)): the statistics of the gradient it stands for
            g = g.to_dense()
        bad = g._data.size - int(xp.count_nonzero(xp.isfinite(g._data)))
        std = g.std().item() if g._data.size > 1 else math.nan  # unbiased std of one element is undefined
        rows.append(GradStats(name, tuple(g.shape), g.mean().item(), std, g.norm().item(),
                              bad / g._data.size if g._data.size else 0.0))
    return rows


def print_grad_report(model, file: IO[str] | None = None) -> None:
    """Print ``grad_report(model)`` as a table (to ``file``, default stdout)."""
    rows = grad_report(model)
    out = file if file is not None else sys.stdout
    width = max([len("parameter")] + [len(r.name) for r in rows])
    header = f"{'parameter':<{width}}  {'shape':<14} {'mean':>12} {'std':>12} {'norm':>12} {'non-finite':>10}"
    print(header, file=out)
    print("-" * len(header), file=out)
    for r in rows:
        shape = "x".join(map(str, r.shape)) or "scalar"
        if r.mean is None:
            print(f"{r.name:<{width}}  {shape:<14} {'grad is None':>12}", file=out)
        else:
            # a one-element gradient has no spread: "—" rather than the NaN that could be read as a bad gradient
            std = f"{r.std:>12.4e}" if math.prod(r.shape) > 1 else f"{'—':>12}"
            print(f"{r.name:<{width}}  {shape:<14} {r.mean:>12.4e} {std} {r.norm:>12.4e} "
                  f"{r.nonfinite:>10.1%}", file=out)


def plot_grad_norms(model, path: str, log: bool = True, title: str | None = None) -> list[GradStats]:
    """Save a bar chart of each parameter's gradient norm to ``path`` (PNG); returns the rows drawn.

    Bars are on a log scale by default (norms of different layers differ by orders of magnitude).
    Parameters without a gradient are marked "no grad", non-finite norms are drawn red at the top.
    Needs matplotlib.
    """
    from .render import new_figure

    rows = grad_report(model)
    if not rows:
        raise ValueError("plot_grad_norms: the model has no trainable parameters")
    finite = [r.norm for r in rows if r.norm is not None and math.isfinite(r.norm) and r.norm > 0]
    top = max(finite, default=1.0) * 2
    fig = new_figure(9, 1.4 + 0.32 * len(rows))
    ax = fig.add_subplot(1, 1, 1)
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows):
        if r.norm is None:
            ax.text(min(finite, default=1.0) if log else 0, y, "  no grad", va="center", fontsize=8, color="gray")
        elif not math.isfinite(r.norm):
            ax.barh(y, top, color="#C44E52")
            ax.text(top, y, f" {r.norm}", va="center", fontsize=8, color="#C44E52")
        else:
            ax.barh(y, r.norm, color="#4C72B0")
            ax.text(r.norm, y, f" {r.norm:.3g}", va="center", fontsize=8)
    if log and finite:
        ax.set_xscale("log")
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r.name} {list(r.shape)}" for r in rows], fontsize=8)
    ax.set_xlabel("gradient 2-norm" + (" (log scale)" if log and finite else ""))
    ax.set_title(title or "gradient norm per parameter")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    return rows
