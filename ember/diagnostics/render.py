"""Pictures of diagnostics with matplotlib (optional): the trace timeline, and the figure helper.

Figures are drawn on matplotlib's Agg canvas directly, never through ``pyplot``, so the
user's backend and open figures are left alone.
"""

from __future__ import annotations

from typing import Any

# Row order within a process, top to bottom: the order a training step runs in.
CATEGORY_ORDER = ("forward", "autograd", "backward", "hooks", "ddp", "optim")
COLORS = {"forward": "#4C72B0", "autograd": "#8C8C8C", "backward": "#DD8452", "hooks": "#937860",
          "ddp": "#C44E52", "optim": "#55A868"}


def new_figure(width: float, height: float):
    """A matplotlib Figure with an Agg canvas; a clear ImportError when matplotlib is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ImportError(
            "ember.diagnostics needs matplotlib to draw pictures; install it with `pip install matplotlib` "
            "(or, in ember's clone, `pip install -e \".[plot]\"`). The data itself needs no matplotlib: "
            "Trace.save() writes JSON and grad_report() returns rows."
        ) from err
    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _events(trace_or_path) -> list[dict[str, Any]]:
    from .trace import Trace, load

    if isinstance(trace_or_path, Trace):
        data = trace_or_path.to_json()
    elif isinstance(trace_or_path, dict):
        data = trace_or_path
    else:
        data = load(trace_or_path)
    return data["traceEvents"]


def _depths(spans: list[dict[str, Any]]) -> list[int]:
    """Nesting depth of each span (sorted by start) among the spans of its row."""
    ends: list[float] = []
    depths = []
    for e in spans:
        while ends and ends[-1] <= e["ts"]:
            ends.pop()
        depths.append(len(ends))
        ends.append(e["ts"] + e["dur"])
    return depths


def render_png(trace_or_path, png_path: str, title: str | None = None) -> None:
    """Draw a trace (a ``Trace``, a trace JSON object, or a path to one) as a PNG timeline.

    One row per (process, category), processes by pid (= rank in a merged trace), categories in
    the order a step runs (forward, autograd, backward, hooks, ddp, optim); nested spans are drawn
    as thinner bars inside their parent, so an all-reduce overlapping backward is visible at a glance.
    """
    events = _events(trace_or_path)
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    spans = [dict(e, dur=e.get("dur", 0.0)) for e in events if e.get("ph") in ("X", "i")]
    if not spans:
        raise ValueError("the trace has no events to draw (was anything run inside trace.record()?)")
    order = {c: i for i, c in enumerate(CATEGORY_ORDER)}
    rows = sorted({(e["pid"], e["cat"]) for e in spans}, key=lambda r: (r[0], order.get(r[1], len(order)), r[1]))
    row_of = {r: i for i, r in enumerate(rows)}
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e["dur"] for e in spans)
    total_ms = max((t1 - t0) / 1000.0, 1e-3)

    fig = new_figure(12, 1.2 + 0.55 * len(rows))
    ax = fig.add_subplot(1, 1, 1)
    for row in rows:
        mine = sorted((e for e in spans if (e["pid"], e["cat"]) == row), key=lambda e: (e["ts"], -e["dur"]))
        y = len(rows) - 1 - row_of[row]
        color = COLORS.get(row[1], "#64B5CD")
        depths = _depths(mine)
        for k, (e, depth) in enumerate(zip(mine, depths)):
            start, width = (e["ts"] - t0) / 1000.0, e["dur"] / 1000.0
            parent = k + 1 < len(mine) and depths[k + 1] > depth  # its label goes top-left, clear of the children
            if e["ph"] == "i":
                ax.plot([start], [y], marker="v", color=color)
                continue
            height = 0.8 * 0.7 ** depth
            ax.broken_barh([(start, max(width, total_ms * 1e-4))], (y - height / 2, height),
                           facecolors=color, edgecolors="white", linewidth=0.4, alpha=0.55 + 0.45 * 0.7 ** depth)
            if parent and depth == 0:
                ax.text(start, y + height / 2, f" {e['name']}", ha="left", va="bottom", fontsize=7, clip_on=True)
            elif not parent and depth <= 1 and width > total_ms * 0.06:
                ax.text(start + width / 2, y, e["name"], ha="center", va="center", fontsize=7, clip_on=True)
    multi = len({r[0] for r in rows}) > 1
    labels = [(f"{names.get(pid, f'pid {pid}')} · " if multi else "") + cat for pid, cat in rows]
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(list(reversed(labels)))
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlim(0, total_ms)
    ax.set_xlabel("time (ms)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title or f"ember trace: {len(spans)} events over {total_ms:.1f} ms")
    fig.tight_layout()
    fig.savefig(png_path)
