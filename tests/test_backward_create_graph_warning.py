"""``backward(create_graph=True)``: PyTorch's engine warns of the reference cycle a leaf's ``.grad`` may form with
its graph, once per process, at the first such backward (not at ``autograd.grad``, not without create_graph)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

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
    out.append((name, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught]))
print(json.dumps(out))
"""


def _run(module: str) -> list:
    done = subprocess.run([sys.executable, "-c", _PROGRAM.format(m=module)], capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_warned_once_at_the_first_backward_with_create_graph_as_pytorch():
    mine, theirs = _run("ember"), _run("torch")
    assert mine == theirs
    assert [n for n, w in theirs if w] == ["backward create_graph"]


def test_the_warning_is_pytorchs_and_points_at_the_user(monkeypatch):
    monkeypatch.setattr(ember._warnings, "_warned_once", set())  # as in a fresh process
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (x * x).sum().backward(create_graph=True)
    assert len(caught) == 1 and caught[0].category is UserWarning
    assert str(caught[0].message).startswith("Using backward() with create_graph=True will create a reference cycle")
    assert caught[0].filename == __file__
