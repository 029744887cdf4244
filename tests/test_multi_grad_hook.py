"""``autograd.graph.register_multi_grad_hook`` against PyTorch: ``mode="all"`` calls the hook once per backward with
every tensor's gradient (None for one that backward does not compute), ``mode="any"`` with the first gradient, once
per backward; leaves and intermediate tensors, ``backward``, ``autograd.grad`` with some of the tensors as inputs,
the handle's ``remove``, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _values(grads):
    if grads is None:
        return None
    if isinstance(grads, (tuple, list)):
        return tuple(_values(g) for g in grads)
    return np.round(np.asarray(grads.tolist()), 5).tolist()


def _scenario(m, name):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, -1.0], requires_grad=True)
    seen = []
    if name == "all, leaves, two backwards":
        m.autograd.graph.register_multi_grad_hook((a, b), lambda gs: seen.append(_values(gs)))
        (a * 2).sum().backward()
        (a * b).sum().backward()
    elif name == "all, intermediates":
        h, k = a.sin(), (a * b).exp()
        m.autograd.graph.register_multi_grad_hook((h, k), lambda gs: seen.append(_values(gs)))
        (h * k).sum().backward()
    elif name == "all, autograd.grad of one intermediate":
        h, k = a * 2, b * 3
        m.autograd.graph.register_multi_grad_hook((h, k), lambda gs: seen.append(_values(gs)))
        seen.append(_values(m.autograd.grad((h * k).sum(), h)))
    elif name == "all, removed":
        handle = m.autograd.graph.register_multi_grad_hook((a, b), lambda gs: seen.append(_values(gs)))
        (a * b).sum().backward()
        handle.remove()
        (a * b).sum().backward()
    elif name == "all, backward with leaf inputs":
        m.autograd.graph.register_multi_grad_hook((a, b), lambda gs: seen.append(_values(gs)))
        (a * b).sum().backward(inputs=[a])
        (a * b * 2).sum().backward(inputs=[a, b])
    elif name == "any, two backwards":
        m.autograd.graph.register_multi_grad_hook((a, b), lambda g: seen.append(_values(g)), mode="any")
        (a * b).sum().backward()
        (b * 3).sum().backward()
    elif name == "any, intermediates":
        h, k = a * 2, a * 3
        m.autograd.graph.register_multi_grad_hook((h, k), lambda g: seen.append(_values(g)), mode="any")
        (h * k).sum().backward()
    seen.append(_values(a.grad))
    seen.append(_values(b.grad))
    return seen


SCENARIOS = ["all, leaves, two backwards", "all, intermediates", "all, autograd.grad of one intermediate", "all, removed",
             "all, backward with leaf inputs", "any, two backwards", "any, intermediates"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_multi_grad_hook_as_pytorch(name):
    assert _scenario(ember, name) == _scenario(torch, name)


def test_multi_grad_hook_mode_error_as_pytorch():
    messages = []
    for m in (torch, ember):
        with pytest.raises(ValueError) as caught:
            m.autograd.graph.register_multi_grad_hook((m.ones(2, requires_grad=True),), print, mode="some")
        messages.append(str(caught.value))
    assert messages[1] == messages[0]



def _grad_of_hooked_leaves(m, inputs: str, mode: str):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, -1.0], requires_grad=True)
    seen = []
    m.autograd.graph.register_multi_grad_hook((a, b), lambda gs: seen.append(_values(gs)), mode=mode)
    out = (a * 2 + b * 3).sum()
    try:
        seen.append(_values(m.autograd.grad(out, {"a": (a,), "b": (b,), "a and b": (a, b)}[inputs])))
    except RuntimeError as err:
        seen.append(("RuntimeError", str(err)))
    (a * b).sum().backward()  # (backward over them still runs the hook)
    return seen


@pytest.mark.parametrize("inputs", ["a", "b", "a and b"])
@pytest.mark.parametrize("mode", ["all", "any"])
def test_autograd_grad_of_leaves_under_an_all_hook_as_pytorch(inputs, mode):
    """``mode="all"`` over leaves that ``autograd.grad`` takes the gradient of: PyTorch's RuntimeError (its engine
    cannot tell whether a leaf will run there); ``mode="any"`` runs."""
    want = _grad_of_hooked_leaves(torch, inputs, mode)
    assert (want[0][0] == "RuntimeError") == (mode == "all")
    assert _grad_of_hooked_leaves(ember, inputs, mode) == want


def test_all_mode_over_the_root_of_a_one_gradient_backward_is_not_called_as_pytorchs():
    """PyTorch's ``mode="all"`` counts the tensors whose nodes its engine will run, which leaves out the node a
    backward from one gradient starts at: a hook over that root alone is never called, one over it and another
    tensor is called at each of their gradients (the count of one to come met at the first, then again);
    ``mode="any"`` and a backward from two roots call it."""
    import torch

    seen = {}
    for lib in (torch, ember):
        calls = []
        x = lib.ones(3, requires_grad=True)
        y, z = x * 2, x * 3
        lib.autograd.graph.register_multi_grad_hook([y], lambda grads, record=calls.append: record("all, root"))
        lib.autograd.graph.register_multi_grad_hook([y], lambda grad, record=calls.append: record("any, root"), mode="any")
        y.backward(lib.ones(3))
        u = x * 4
        v = u * 5
        lib.autograd.graph.register_multi_grad_hook(
            [v, u], lambda grads, record=calls.append: record(("root and inner", [g is None for g in grads])))
        v.backward(lib.ones(3))
        w = x * 6
        lib.autograd.graph.register_multi_grad_hook([w, z], lambda grads, record=calls.append: record("two roots"))
        lib.autograd.backward([w, z], [lib.ones(3), lib.ones(3)])
        seen[lib.__name__] = calls
    assert seen["ember"] == seen["torch"]
    assert seen["torch"] == ["any, root", ("root and inner", [False, True]), ("root and inner", [True, False]),
                             "two roots"]
