"""ember's import graph has no circle through its core.

The graph is computed from the source with ``ast``: an edge ``a -> b`` for every import of an ember module that
runs when ``a`` is imported — module-level statements, including the bodies of module-level ``if``/``else`` and
``try``, but not ``if TYPE_CHECKING:`` blocks (type checkers read them; Python never runs them), a script's
``if __name__ == "__main__":`` block, nor imports inside functions (they run when the function is called). ``from pkg import name`` is an edge to ``pkg.name`` when that is a
module, else to ``pkg``.

Python itself runs a package's ``__init__`` before any of its submodules; that implicit edge is not counted, so the
re-export pattern (``pkg/__init__.py`` importing ``pkg.sub``, ``pkg.sub`` importing its siblings) is not a circle
here. Counting it would put every module under ``ember/`` in one circle with ``ember/__init__.py``, which imports
the whole public namespace — a fact of Python's packages, not of ember's layering.

The core is the code every op or training step runs (``CORE``): a circle there means no layer of it can be read,
tested or loaded without all the others, and import order starts to matter (the old circle: ``Tensor`` ->
its method mixins -> ``ember.ops`` -> ``Tensor``). The core's layers, bottom up: the leaves (``_backend``,
``_dtype``, ``_size``, ...), ``Tensor`` (``_tensor.py`` + ``_tensor_methods/``), autograd's graph and engine, the
ops, and the layers, optimizers and DDP over them. Tensor reaches the layers above it only through what they install
when they load: ``ember.ops`` binds itself into the method mixins (``_tensor_methods.bind_ops``), ``ember.autograd``
installs a leaf's edge and ``backward`` (``_tensor.install_autograd``).
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections import deque
from pathlib import Path

import ember

EMBER = Path(ember.__file__).parent

# Module-name prefixes of the core; why each is there:
CORE = (
    "ember._tensor",           # Tensor's state (_tensor.py) and its methods (_tensor_methods/): every op
    "ember.autograd",          # the graph (Node, AccumulateGrad), the engine, grad mode, the gradient store
    "ember.ops",               # every differentiable op
    "ember._sparse",           # sparse gradients through backward (Embedding(sparse=True))
    "ember._creation",         # tensor/zeros/randn: how every program makes its first tensors
    "ember._legacy",           # Tensor(2, 3), FloatTensor: the legacy constructors of Tensor itself
    "ember.random",            # the generator ops draw from (dropout, randn)
    "ember.nn._ops",           # the layers' fused ops (linear, conv, norms, losses)
    "ember.nn.modules.module",  # Module.__call__: every forward
    "ember.nn.parameter",      # Parameter: every weight
    "ember.optim",             # the optimizers and their step
    "ember.nn.parallel.distributed",  # DistributedDataParallel
    "ember.distributed.reducer",      # DDP's buckets and all-reduces
    "ember.distributed.grad_bucket",  # a bucket as a communication hook sees it
    "ember.distributed.lockstep",     # the per-backward table every rank agrees on
    "ember.distributed.comm",         # the collectives underneath
)


def _never_on_import(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` (read by type checkers only) and ``if __name__ == "__main__":`` (a script's body)."""
    if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
        return True
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__")


def _runtime_statements(body, *, into_functions: bool = False):
    """The statements of ``body`` that run when the module is imported (or, if asked, when its functions run)."""
    for node in body:
        if isinstance(node, ast.If):
            if not _never_on_import(node.test):
                yield from _runtime_statements(node.body, into_functions=into_functions)
            yield from _runtime_statements(node.orelse, into_functions=into_functions)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _runtime_statements(block, into_functions=into_functions)
        elif into_functions and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With)):
            yield from _runtime_statements(node.body, into_functions=True)
        elif into_functions and isinstance(node, (ast.For, ast.While)):
            yield from _runtime_statements(node.body + node.orelse, into_functions=True)
        else:
            yield node


def modules(root: Path = EMBER) -> dict[str, Path]:
    """Every module of the package at ``root``, by dotted name."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path], *, into_functions: bool = False) -> set[str]:
    """The package's modules that module ``name`` imports (at import time; also in functions if asked)."""
    top = name.split(".")[0]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in _runtime_statements(ast.parse(path.read_text()).body, into_functions=into_functions):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != top:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in known else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
    return out & known.keys()


def import_graph(root: Path = EMBER) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module importing itself); Tarjan's
    algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1 or v in graph[v]:
                        found.append(sorted(component))
    return found


def shortest_cycle(graph: dict[str, set[str]], through: str) -> list[str]:
    """A shortest import path from ``through`` back to itself (breadth first), to name a circle in a failure."""
    parent = {through: None}
    queue = deque([through])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w == through:
                path = [v]
                while path[-1] != through:
                    path.append(parent[path[-1]])
                return [*reversed(path), through]
            if w not in parent:
                parent[w] = v
                queue.append(w)
    return []


def is_core(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") or name.startswith(p + "_") for p in CORE)


def test_no_circle_through_the_core():
    graph = import_graph()
    bad = [c for c in circles(graph) if any(is_core(m) for m in c)]
    described = [" -> ".join(shortest_cycle(graph, next(m for m in c if is_core(m)))) + f"  ({len(c)} modules)"
                 for c in bad]
    assert not bad, "import circles through ember's core:\n" + "\n".join(described)


def test_the_whole_package_imports_as_a_dag():
    # Today no module of ember is on a circle at all; a new one outside the core fails here, not silently.
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(shortest_cycle(graph, c[0])) for c in found)


def test_the_graph_finds_a_circle(tmp_path):
    # The test above can fail: the same graph code on a small package with the old circle's shape.
    pkg = tmp_path / "pkg"
    (pkg / "methods").mkdir(parents=True)
    (pkg / "ops").mkdir()
    (pkg / "__init__.py").write_text("from . import ops\n")
    (pkg / "_tensor.py").write_text("from .methods import M\n")
    (pkg / "methods" / "__init__.py").write_text("from .unary import M\n")
    (pkg / "methods" / "unary.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .. import ops as typed\nfrom .. import ops\n")
    (pkg / "ops" / "__init__.py").write_text("from . import unary\n")
    (pkg / "ops" / "unary.py").write_text("from .._tensor import Tensor\ndef f():\n    from .. import late\n")
    (pkg / "late.py").write_text("from ._tensor import Tensor\n")
    graph = import_graph(pkg)
    assert graph["pkg.methods.unary"] == {"pkg.ops"}
    assert graph["pkg.ops.unary"] == {"pkg._tensor"}  # the import inside f() runs only when f is called
    assert circles(graph) == [["pkg._tensor", "pkg.methods", "pkg.methods.unary", "pkg.ops", "pkg.ops.unary"]]
    assert shortest_cycle(graph, "pkg._tensor") == [
        "pkg._tensor", "pkg.methods", "pkg.methods.unary", "pkg.ops", "pkg.ops.unary", "pkg._tensor"]
    (pkg / "methods" / "unary.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                              "    from .. import ops\nelse:\n    ops = None\n")
    assert circles(import_graph(pkg)) == []


# The Tensor layer's imports of the rest of ember even inside its functions (they run on a call): each is a layer
# above Tensor that a rare path needs and that would cost `import ember` time or a circle if imported at the top.
TENSOR_LAYER_LATE_IMPORTS = {
    "ember._legacy",       # Tensor(2, 3) / x.type("torch.FloatTensor"): the legacy constructors build on Tensor
    "ember._sparse",       # x.to_sparse(): SparseTensor is a Tensor subclass
    "ember._sparse_compressed",  # x.to_sparse_csr(): likewise
    "ember.fft._stft",     # x.stft(): ember.fft loads on first use
    "ember.utils.hooks",   # register_hook's RemovableHandle (ember.utils would load with Tensor otherwise)
    "ember._tensor_str",   # repr
    "ember._torch_names",  # a failed attribute lookup: is it a PyTorch name ember lacks? (a large table)
    "ember._missing",      # ... then its error
    "ember._tensor_pickle",  # pickling a tensor (rare; the reductions for multiprocessing live there)
    "ember._resize",       # x.resize_() (its storage rules)
    "ember.nn._ops.activation_more",  # x.hardshrink(), x.prelu(): the nn activations load with ember.nn
    "ember._shared_memory",  # x.share_memory_() (the shared mapping)
    "ember.utils.dlpack",  # x.__dlpack_device__() (DLPack's device enum)
    "ember._creation",     # a NumPy ufunc's result on a tensor (__array_wrap__): from_numpy
}


def test_tensor_layer_calls_ops_and_autograd_only_through_what_they_install():
    known = modules()
    layer = {n: p for n, p in known.items() if n == "ember._tensor" or n.startswith("ember._tensor_methods")}
    late = {}
    for name, path in layer.items():
        above = imports_of(name, path, known, into_functions=True) - imports_of(name, path, known)
        above = {m for m in above if m != "ember._tensor" and not m.startswith("ember._tensor_methods")}
        for m in above:
            late.setdefault(m, []).append(name)
    upward = {m: by for m, by in late.items() if m.startswith(("ember.ops", "ember.autograd"))}
    assert not upward, f"the Tensor layer imports ops/autograd in a function: {upward}"
    assert set(late) <= TENSOR_LAYER_LATE_IMPORTS, set(late) - TENSOR_LAYER_LATE_IMPORTS


def test_the_installed_links_are_the_real_ones():
    import ember.autograd
    import ember.autograd.graph
    from ember import _tensor, _tensor_methods

    mixins = [c for c in ember.Tensor.__mro__ if c.__module__.startswith("ember._tensor_methods.")]
    assert sorted(mixins, key=str) == sorted(_tensor_methods.MIXINS, key=str)
    for mixin in mixins:
        assert sys.modules[mixin.__module__].ops is ember.ops, mixin.__module__
    from ember._tensor_methods import _bind

    assert _bind.ops.unary is ember.ops.unary  # the stand-in a method sees while ember.ops is still loading
    assert _tensor._autograd.leaf_edge is ember.autograd.graph.leaf_edge
    assert _tensor._autograd.backward is ember.autograd.backward


def test_hot_methods_import_nothing_per_call(monkeypatch):
    # An import statement inside a method costs a sys.modules lookup and a lock on every call; Tensor's methods
    # reach ops and autograd through globals that were bound once. Counted through builtins.__import__, which
    # every import statement calls when it is replaced.
    x = ember.randn(3, 4)
    y = ember.randn(3, 4)
    w = ember.randn(3, 4, requires_grad=True)
    calls = []
    real_import = builtins.__import__

    def counting_import(name, *args, **kwargs):
        calls.append((name, sys._getframe(1).f_code.co_filename))
        return real_import(name, *args, **kwargs)

    def step():
        (x + y).exp().sum()
        z = (w * x).relu().mean()
        z.backward()
        return x @ y.T, x[0], x.reshape(4, 3), w.grad

    step()  # warm: first-use loads are allowed
    monkeypatch.setattr(builtins, "__import__", counting_import)
    step()
    monkeypatch.undo()
    assert calls == []
