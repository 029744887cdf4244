"""``autograd.functional.jvp`` of a function that uses no_grad, changes its input in place, or differentiates
inside. PyTorch's jvp is the double-backward trick: the product is the derivative of what the graph records,
so an op under no_grad is a constant, an in-place change under no_grad is outside the graph (the product is the
derivative of what follows it, and ``v`` is only read), and a gradient computed without create_graph is a
constant. ember's forward-mode shortcut (taken without ``create_graph`` or ``strict``) runs at a level whose
tangents follow the recorded graph (``_jvp.graph_duals``), and its inputs are the leaves themselves."""

import pytest
import torch

import ember


def _changed_under_no_grad(m, x):
    with m.no_grad():
        x.mul_(2)
    return x * 3


def _constant_under_no_grad(m, x):
    with m.no_grad():
        y = x * 2
    return x * y


def _constant_under_set_grad_enabled(m, x):
    with m.set_grad_enabled(False):
        y = x.exp()
    return x * y + x.sin()


def _grad_without_create_graph(m, x):
    return m.autograd.grad((x ** 3).sum(), x)[0]


def _grad_with_create_graph(m, x):
    return m.autograd.grad((x ** 3).sum(), x, create_graph=True)[0]


def _view_made_under_no_grad(m, x):
    with m.no_grad():
        y = x[0:1]
    return y * 2


def _view_before_its_base_took_the_input(m, x):
    z = m.zeros(2)
    w = z[0:1]
    z.copy_(x)
    return w * 2


def _intermediate_changed_under_no_grad(m, x):
    y = x * 1
    with m.no_grad():
        y.mul_(2)
    return y


def _data_changed(m, x):
    x.data.mul_(2)
    return x * 3


def _detached_changed(m, x):
    x.detach().mul_(2)
    return x * 3


def _input_is_a_leaf(m, x):
    assert (x.is_leaf, x.grad_fn, x.requires_grad) == (True, None, True)
    return x * 2


FUNCS = [_changed_under_no_grad, _constant_under_no_grad, _constant_under_set_grad_enabled,
         _grad_without_create_graph, _grad_with_create_graph, _view_made_under_no_grad,
         _view_before_its_base_took_the_input, _intermediate_changed_under_no_grad, _data_changed,
         _detached_changed, _input_is_a_leaf]


def _run(m, fn, requires_grad, **kw):
    x, v = m.tensor([1.0, 2.0]), m.tensor([1.0, -1.0], requires_grad=requires_grad)
    out, product = m.autograd.functional.jvp(lambda t: fn(m, t), x, v, **kw)
    return [round(a, 5) for t in (out, product, v, x) for a in t.tolist()]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("fn", FUNCS, ids=lambda f: f.__name__.strip("_"))
def test_jvp_follows_the_recorded_graph_as_pytorchs(fn, requires_grad):
    assert _run(ember, fn, requires_grad) == _run(torch, fn, requires_grad)


@pytest.mark.parametrize("create_graph,strict", [(True, False), (False, True)])
@pytest.mark.parametrize("fn", [_changed_under_no_grad, _constant_under_no_grad], ids=lambda f: f.__name__.strip("_"))
def test_the_double_backward_path_as_pytorchs(fn, create_graph, strict):
    assert _run(ember, fn, False, create_graph=create_graph, strict=strict) == \
        _run(torch, fn, False, create_graph=create_graph, strict=strict)


def test_an_in_place_change_of_the_input_with_grad_enabled_is_refused_as_pytorchs():
    def k(m, x):
        return x.mul_(2)

    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            _run(m, k, False)


def test_forward_mode_ad_itself_still_ignores_no_grad_as_pytorchs():
    """``torch.func.jvp`` and ``forward_ad`` are forward mode proper: no_grad does not stop a tangent there."""
    def run(m):
        x, v = m.tensor([1.0, 2.0]), m.tensor([1.0, -1.0])
        out, product = m.func.jvp(lambda t: _changed_under_no_grad(m, t), (x,), (v,))
        return out.tolist(), product.tolist(), v.tolist(), x.tolist()

    assert run(ember) == run(torch)
