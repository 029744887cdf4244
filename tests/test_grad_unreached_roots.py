"""Outputs given to autograd.grad / backward(inputs=...) that lead to none of the inputs, against PyTorch.

PyTorch's engine runs only what leads to the inputs. A single output is itself the engine's first node, so its
tensor hooks and retained gradient still see the root gradient; an output beside others hangs off the graph root and
does not run at all (no hook, no retained gradient). ember's engine prunes such roots (``_Walk.prune``).
"""

import pytest
import torch

import ember

FORMS = ["grad", "grad_create_graph", "grad_batched", "backward_inputs"]


def _run(lib, form: str, outputs: str):
    """Calls of the hooks and the retained gradients when differentiating roots that do (``w``) or do not (``y``,
    ``v``) lead to ``x``; and what the call returned for ``x``."""
    calls = []
    batched = form == "grad_batched"  # (a batched gradient's values cannot be read inside a hook: its shape only)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    z = lib.tensor([3.0, 4.0], requires_grad=True)
    y = z * 2
    v = z * 5
    w = x * 3
    for name, t in (("y", y), ("v", v), ("w", w)):
        t.register_hook(lambda g, name=name: calls.append((name, tuple(g.shape), None if batched else g.sum().item())))
        t.retain_grad()
    roots = {"y": [y], "y_v": [y, v], "y_w": [y, w]}[outputs]
    seeds = [lib.ones(2) for _ in roots]
    if form == "backward_inputs":
        lib.autograd.backward(roots, seeds, inputs=[x])
        got = None if x.grad is None else x.grad.tolist()
    elif form == "grad_batched":
        got = lib.autograd.grad(roots, [x], [lib.eye(2) for _ in roots], allow_unused=True, is_grads_batched=True)
        got = [None if g is None else g.tolist() for g in got]
    else:
        got = lib.autograd.grad(roots, [x], seeds, allow_unused=True, create_graph=form == "grad_create_graph")
        got = [None if g is None else g.tolist() for g in got]
    # (a batched backward leaves its dead batched wrapper in a retained .grad, as PyTorch's: only whether it is set)
    retained = {name: t.grad is not None if batched else (None if t.grad is None else t.grad.tolist())
                for name, t in (("y", y), ("v", v), ("w", w))}
    return got, sorted(calls), retained


@pytest.mark.parametrize("outputs", ["y", "y_v", "y_w"])
@pytest.mark.parametrize("form", FORMS)
def test_roots_that_reach_no_input_run_their_hooks_as_pytorchs(form, outputs):
    expected = _run(torch, form, outputs)
    assert _run(ember, form, outputs) == expected


def test_a_single_unreached_root_still_calls_its_hook():
    """The case the table rests on: PyTorch's hook of a lone output that reaches no input runs, with the seed."""
    got, calls, retained = _run(ember, "grad", "y")
    assert got == [None]
    assert calls == [("y", (2,), 2.0)]
    assert retained["y"] == [1.0, 1.0]
