"""With inputs given (autograd.grad, backward(inputs=...)) PyTorch's engine runs only the nodes that lead to
them: an output that leads to none runs nothing (no tensor hook, no node hook), except that a single output is
the engine's first node and still calls its tensor hooks; an input of autograd.grad is captured, not run."""

import pytest
import torch

import ember


def _graph(lib, log):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    a = w * 2
    a.register_hook(lambda g: log.append("a_hook"))
    a.grad_fn.register_prehook(lambda g: log.append("a_pre"))
    a.grad_fn.register_hook(lambda gi, go: log.append("a_post"))
    r = a.sum()
    r.register_hook(lambda g: log.append("r_hook"))
    r.grad_fn.register_prehook(lambda g: log.append("r_pre"))
    r.retain_grad()
    z = (x * a).sum()
    z.grad_fn.register_prehook(lambda g: log.append("z_pre"))
    return x, w, a, r, z


CASES = {
    "grad of two outputs, one leading nowhere": lambda lib, x, w, a, r, z: lib.autograd.grad([z, a], [x],
                                                                                           [None, lib.ones(2)]),
    "grad of two outputs, a scalar leading nowhere": lambda lib, x, w, a, r, z: lib.autograd.grad([z, r], [x]),
    "grad of a single output leading nowhere": lambda lib, x, w, a, r, z: lib.autograd.grad(r, [x],
                                                                                          allow_unused=True),
    "backward with inputs": lambda lib, x, w, a, r, z: lib.autograd.backward([z, r], inputs=[x]),
}


@pytest.mark.parametrize("case", CASES)
def test_only_what_leads_to_the_inputs_runs(case):
    results = []
    for lib in (torch, ember):
        log = []
        x, w, a, r, z = _graph(lib, log)
        out = CASES[case](lib, x, w, a, r, z)
        grads = [None if g is None else g.tolist() for g in (out or (x.grad,))]
        results.append((log, grads, None if r.grad is None else r.grad.tolist(), w.grad))
    assert results[1] == results[0]


@pytest.mark.parametrize("lib", [torch, ember])
def test_an_input_of_grad_is_captured_not_run(lib):
    log = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    a.register_hook(lambda g: log.append("a_hook"))
    a.grad_fn.register_prehook(lambda g: log.append("a_pre"))
    a.grad_fn.register_hook(lambda gi, go: log.append("a_post"))
    b = a * 3
    (ga,) = lib.autograd.grad((a * a).sum(), [a])
    gab = lib.autograd.grad((b * a).sum(), [a, b])
    assert log == ["a_hook", "a_hook"]
    assert ga.tolist() == [4.0, 8.0] and [g.tolist() for g in gab] == [[12.0, 24.0], [2.0, 4.0]]
    # not run, so not freed: a later backward through it still works
    (gx,) = lib.autograd.grad(a.sum(), [x])
    assert gx.tolist() == [2.0, 2.0]


def test_backward_inputs_a_retained_non_leaf_accumulates_once():
    results = []
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        a = x * 2
        lib.autograd.backward((a * a).sum(), inputs=[a])
        y = x * 3
        y.retain_grad()
        lib.autograd.backward((y * y).sum(), inputs=[y])
        u = x * 3
        (u * u).sum().backward(inputs=[u, u])
        results.append((a.retains_grad, a.grad.tolist(), y.grad.tolist(), u.grad.tolist()))
    assert results[1] == results[0]
