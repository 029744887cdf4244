"""Which hooks the engine runs, with what, in each form of a backward, against PyTorch's engine.

One graph, every kind of hook on every role a tensor or node can have in it (a leaf that is an input, a leaf that is
not, an intermediate, the root's node, a node off every path to the inputs), run by each form of a backward:
``backward``, ``backward(inputs=...)`` of a leaf or of an intermediate, ``autograd.grad`` of one input, of two, of an
intermediate, under ``create_graph``, with ``is_grads_batched``. Compared: each hook's calls in order (the gradient's
shape and sum, or None), what the call returns, the leaves' ``.grad`` and the retained gradients.
"""

import pytest
import torch

import ember

FORMS = ["backward", "backward_inputs_leaf", "backward_inputs_mid", "grad_x", "grad_x_z", "grad_mid",
         "grad_create_graph", "grad_batched"]


def _summary(g, batched):
    if g is None:
        return None
    return (tuple(g.shape), None if batched else round(float(g.detach().sum()), 9))


def _run(lib, form: str):
    batched = form == "grad_batched"
    calls = []

    def note(name):
        return lambda g: calls.append((name, _summary(g, batched)))

    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    z = lib.tensor([0.5, -1.0, 0.25], dtype=lib.float64, requires_grad=True)
    a = x * z
    b = a.exp()
    side = z * 3  # (off every path to x)
    out = b.sum() + side.sum()
    for name, t in (("x", x), ("z", z), ("a", a), ("b", b), ("side", side), ("out", out)):
        t.register_hook(note(name))
    for t in (a, b, side):
        t.retain_grad()
    for name, t in (("a", a), ("side", side)):
        t.grad_fn.register_prehook(lambda gs, name=name: calls.append(
            ("pre " + name, tuple(_summary(g, batched) for g in gs))))
        t.grad_fn.register_hook(lambda gi, go, name=name: calls.append(
            ("post " + name, tuple(_summary(g, batched) for g in gi))))
    got = None
    if form == "backward":
        out.backward()
    elif form == "backward_inputs_leaf":
        out.backward(inputs=[x])
    elif form == "backward_inputs_mid":
        out.backward(inputs=[a])
    elif form == "grad_batched":
        got = lib.autograd.grad(out, [x], lib.tensor([1.0, 2.0], dtype=lib.float64), is_grads_batched=True)
    else:
        inputs = {"grad_x": [x], "grad_x_z": [x, z], "grad_mid": [a], "grad_create_graph": [x]}[form]
        got = lib.autograd.grad(out, inputs, create_graph=form == "grad_create_graph")
    got = None if got is None else [_summary(g, batched) for g in got]
    grads = {name: None if t.grad is None else (True if batched else _summary(t.grad, False))
             for name, t in (("x", x), ("z", z), ("a", a), ("b", b), ("side", side))}
    return calls, got, grads


@pytest.mark.parametrize("form", FORMS)
def test_hooks_run_as_pytorchs_in_each_form_of_backward(form):
    want_calls, want_got, want_grads = _run(torch, form)
    calls, got, grads = _run(ember, form)
    assert sorted(calls, key=repr) == sorted(want_calls, key=repr)  # which hooks, with what
    assert got == want_got
    assert grads == want_grads
