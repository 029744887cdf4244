"""``torch.utils.flop_counter``: ``FlopCounterMode``, the context manager that counts the floating-point operations
run inside it, in all ("Global") and per module.

PyTorch counts them by intercepting every ATen operator (a dispatch mode) and applying a formula per operator
(matrix products, convolutions, attention). ember's ops have no such dispatcher; each recorded op goes through
``Node.apply`` and each gradient through the engine's ``_run_node``, which call the entered counters
(``autograd.graph._op_observer``) for the nodes that have a formula (``_flop_formulas.py``: matrix products, ``einsum``,
``linear``, ``addmm``/``baddbmm``, convolutions and transposed convolutions, forward and backward), under the name of
the operator PyTorch's CPU kernels run for the same call. The module names are PyTorch's (``ModuleTracker``): the
outermost module called inside the counter by its class name, its submodules by their paths from it
(``"Net.block.fc"``); a module counts the forward ops run while it runs, and the gradients of its outputs from when
they arrive until those of its inputs are computed.

Differences from PyTorch: the operators are named by strings (``"aten.mm"``), where PyTorch's keys are its
``torch.ops.aten`` operator objects (whose ``str`` is the same); ``custom_mapping`` (formulas keyed by PyTorch's
operator objects) is refused, ember having no such operators; the table ``display`` prints is laid out by ember
(PyTorch's needs the ``tabulate`` package).
"""

from __future__ import annotations

import threading
import warnings
import weakref
from collections import defaultdict
from typing import Any

from .._missing import module_getattr
from .._tensor import Tensor
from ..autograd import graph as _graph
from ._pytree import tree_flatten

__all__ = ["FlopCounterMode"]


class _Counting:
    """The observer ``Node.apply`` and the engine call while at least one counter is entered: each op's counts
    go to every entered counter (nested counters each count what runs inside them, as PyTorch's modes)."""

    def __init__(self) -> None:
        self.counters: list[FlopCounterMode] = []

    def forward(self, node, inputs, out) -> None:
        formulas = _formulas_of(type(node))
        if formulas is not None:
            self._add(formulas[0](node, inputs, out))

    def backward(self, node, grads) -> None:
        formulas = _formulas_of(type(node))
        if formulas is not None and node.needs_input_grad is not None:
            self._add(formulas[1](node, grads))

    def _add(self, counts: list[tuple[str, int]]) -> None:
        thread = threading.get_ident()
        for counter in self.counters:
            if counter.thread != thread:  # (PyTorch's modes are per thread: another thread's ops are not counted)
                continue
            for name, flops in counts:
                for parent in counter.mod_tracker.parents:
                    counter.flop_counts[parent][name] += flops


_counting = _Counting()


def _formulas_of(node_class: type) -> tuple | None:
    """The (forward, backward) formulas of a node class or of the class it is shown as a subclass of (a node
    that takes the name of PyTorch's node for its call, ``autograd.graph.show_node_as``), else None."""
    from ._flop_formulas import FORMULAS  # (imports ember.nn's and ember.ops's nodes: loaded on first count)

    for cls in node_class.__mro__:
        if cls in FORMULAS:
            return FORMULAS[cls]
    return None


class _ModuleTracker:
    """The names of the modules running now (``parents``, "Global" always among them), as PyTorch's
    ``torch.utils.module_tracker.ModuleTracker``: a module enters at its forward's start and leaves at its end;
    in backward it enters when its outputs' gradients are computed and leaves when its inputs' are."""

    def __init__(self) -> None:
        self.parents: set[str] = {"Global"}
        self._known: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._seen: weakref.WeakSet = weakref.WeakSet()
        self._handles: list[Any] = []
        self._reset_queued = False

    def name(self, mod) -> str:
        """The module's name: its class's, for a module met first as the outermost one, else its parent's name
        and its attribute name there."""
        if mod not in self._known:
            self._known[mod] = type(mod).__name__
        name = self._known[mod]
        if mod not in self._seen:
            for child_name, child in mod.named_children():
                self._known[child] = f"{name}.{child_name}"
                self.name(child)
            self._seen.add(mod)
        return name

    def _enter(self, name: str, in_backward: bool):
        def enter(*args: Any) -> None:
            if in_backward and not self._reset_queued:
                # the backward's end leaves every module (PyTorch queues the same callback on its engine)
                from ..autograd.engine import queue_callback

                queue_callback(self._reset)
                self._reset_queued = True
            self.parents.add(name)

        return enter

    def _leave(self, name: str):
        def leave(*args: Any) -> None:
            self.parents.discard(name)

        return leave

    def _reset(self) -> None:
        self.parents = {"Global"}
        self._reset_queued = False

    def _pre_forward(self, mod, inputs) -> None:
        name = self.name(mod)
        self.parents.add(name)
        self._watch_gradients(inputs, self._leave(name))

    def _post_forward(self, mod, inputs, output) -> None:
        name = self.name(mod)
        self.parents.discard(name)
        self._watch_gradients(output, self._enter(name, True))

    def _watch_gradients(self, values, hook) -> None:
        """``hook`` over the gradients of ``values``' tensors. Its handle is not kept (as PyTorch's): the hook
        lives as long as the graph, so a counter held open over many steps holds no step's graph (a handle refers
        to the tensors it watches); one fired after the counter's exit changes only the tracker's names."""
        from ..autograd.graph import register_multi_grad_hook

        tensors = [t for t in tree_flatten(values)[0] if isinstance(t, Tensor) and t.requires_grad]
        if tensors:
            register_multi_grad_hook(tensors, hook)

    def __enter__(self) -> _ModuleTracker:
        from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

        self._handles = [register_module_forward_pre_hook(self._pre_forward),
                         register_module_forward_hook(self._post_forward)]
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()


class FlopCounterMode:
    """Counts of the floating-point operations run inside the context, per module and operator
    (``torch.utils.flop_counter.FlopCounterMode``): ``get_total_flops()``, ``get_flop_counts()`` (by module name,
    "Global" for all, then by operator name), and a table of them printed on exit with ``display`` (modules down to
    ``depth`` levels). Not reentrant, as PyTorch's; it counts the ops of the thread that entered it (PyTorch's modes
    are per thread). Differences from PyTorch: see the module's docstring."""

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Any] | None = None) -> None:
        self.depth, self.display = depth, display
        self.flop_counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        if custom_mapping:
            raise NotImplementedError(
                "FlopCounterMode(custom_mapping=...): PyTorch keys the formulas by its torch.ops operators, "
                "which ember does not have")
        self.mod_tracker = _ModuleTracker()
        self.thread: int | None = None

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[str, int]]:
        """The counts, by module name ("Global": all of them), then by operator."""
        return {name: dict(counts) for name, counts in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        """The counts as a table: each module down to ``depth`` levels (its operators below it), with its share
        of the total; a "Global" row first where some count belongs to no module."""
        depth = self.depth if depth is None else depth
        if depth is None:
            depth = 999999
        total = self.get_total_flops()
        suffix = _suffix(total)
        rows: list[list[str]] = []
        subsumed = False

        def module_rows(name: str, level: int) -> list[list[str]]:
            nonlocal subsumed
            counts = self.flop_counts.get(name, {})
            flops = sum(counts.values())
            subsumed |= flops >= total
            pad = " " * level
            out = [[pad + name, _with_suffix(flops, suffix), _percent(flops, total)]]
            out += [[f"{pad} - {op}", _with_suffix(n, suffix), _percent(n, total)] for op, n in counts.items()]
            return out

        for name in sorted(self.flop_counts):
            if name != "Global" and name.count(".") + 1 <= depth:
                rows += module_rows(name, name.count("."))
        if "Global" in self.flop_counts and not subsumed:
            rows = module_rows("Global", 0) + [[" " + row[0], *row[1:]] for row in rows]
        if not rows:
            rows = [["Global", "0", "0%"]]
        return _layout(["Module", "FLOP", "% Total"], rows)

    def __enter__(self) -> FlopCounterMode:
        self.flop_counts.clear()
        self.thread = threading.get_ident()  # (the thread whose ops it counts)
        self.mod_tracker.__enter__()
        _counting.counters.append(self)
        _graph._op_observer = _counting
        return self

    def __exit__(self, *exc_info: Any) -> None:
        _counting.counters.remove(self)
        if not _counting.counters:
            _graph._op_observer = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))


_SUFFIXES = ["", "K", "M", "B", "T"]


def _suffix(number: int) -> str:
    """PyTorch's unit for the table: one per three digits, with a digit's overflow (1001M, not 1.001B)."""
    return _SUFFIXES[max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))]


def _with_suffix(number: int, suffix: str) -> str:
    value = number / 1000 ** _SUFFIXES.index(suffix)
    return f"{value:.3f}{suffix}"


def _percent(part: int, total: int) -> str:
    return f"{part / total * 100:.2f}%" if total else "0%"


def _layout(header: list[str], rows: list[list[str]]) -> str:
    """Columns under a dashed rule: the first left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


__getattr__ = module_getattr(__name__)
