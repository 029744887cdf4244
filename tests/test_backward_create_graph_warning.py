"""``backward(create_graph=True)``: PyTorch's engine warns, once per process, of the reference cycle a leaf's
``.grad`` may form with its graph ("which can cause a memory leak": a cycle through C++ objects Python's collector
cannot free). ember's graph is Python objects, which the collector frees, so ember does not warn: these tests hold
both halves of that, the memory staying flat and no warning (docs/api.md's differences)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import tracemalloc
import weakref

import ember

# one process's calls in order: (what, how many warnings it gave)
_PROGRAM = """
import json, warnings, {m} as m
x = m.tensor([1.0, 2.0], requires_grad=True)
steps = {{
    "backward": lambda: (x * x).sum().backward(),
    "grad create_graph": lambda: m.autograd.grad((x * x).sum(), x, create_graph=True),
    "backward create_graph": lambda: (x * 2).sum().backward(create_graph=True),
    "again": lambda: (x * x).sum().backward(create_graph=True),
    "inputs": lambda: (x * x).sum().backward(inputs=[x], create_graph=True),
}}
out = []
for name, step in steps.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step()
    out.append((name, [str(w.message)[:60] for w in caught]))
print(json.dumps(out))
"""


def _run(module: str) -> list:
    done = subprocess.run([sys.executable, "-c", _PROGRAM.format(m=module)], capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_no_reference_cycle_warning_where_pytorch_warns():
    theirs = _run("torch")
    assert [n for n, w in theirs if w] == ["backward create_graph"]  # (PyTorch's: once, at the first)
    assert [w for _, w in _run("ember")] == [[]] * len(theirs)


def test_a_leafs_graph_holding_gradient_is_collected():
    """What PyTorch's warning is about: after backward(create_graph=True) a parameter's .grad holds a graph that
    reaches the parameter, so neither is freed by reference counts once the model is dropped. Python's collector
    frees them: no model outlives its program's last reference, and memory stays flat over many models."""

    def train_and_drop():
        layer = ember.nn.Linear(64, 64)
        ember.tanh(layer(ember.randn(16, 64))).pow(2).sum().backward(create_graph=True)
        assert layer.weight.grad.grad_fn is not None  # (the .grad does hold a graph)
        return weakref.ref(layer.weight)

    ember.manual_seed(0)
    gc.collect()
    tracemalloc.start()
    try:
        refs = [train_and_drop() for _ in range(5)]
        gc.collect()
        settled = tracemalloc.get_traced_memory()[0]
        refs += [train_and_drop() for _ in range(50)]
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - settled
    finally:
        tracemalloc.stop()
    assert all(ref() is None for ref in refs)
    assert grown < 256 * 1024, f"{grown} bytes more after 50 more models"
