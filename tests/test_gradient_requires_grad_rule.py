"""PyTorch writes some gradient formulas with differentiable ops of the saved input (the 1-norm's
``grad * x.sgn()``, the inf-norm's mask, a max pool's backward taking ``self``, nll_loss's backward): under
create_graph the gradient requires grad even where it does not depend on the input, a second backward gives zeros
(not an error), and nll_loss's saved weight and target changed in place since are its error, as cross_entropy's."""

import numpy as np
import pytest
import torch

import ember

OPS = {
    "vector_norm 1": lambda m, F, x: m.linalg.vector_norm(x, 1),
    "vector_norm 1 at zeros": lambda m, F, x: m.linalg.vector_norm(x * 0, 1),
    "vector_norm inf": lambda m, F, x: m.linalg.vector_norm(x, float("inf")),
    "vector_norm inf at zeros": lambda m, F, x: m.linalg.vector_norm(x * 0, float("inf")),
    "norm p=1": lambda m, F, x: x.norm(p=1),
    "adaptive_max_pool1d": lambda m, F, x: F.adaptive_max_pool1d(x.reshape(1, 2, 3), 2).sum(),
    "adaptive_max_pool2d": lambda m, F, x: F.adaptive_max_pool2d(x.reshape(1, 1, 2, 3), 1).sum(),
    "max_pool1d": lambda m, F, x: F.max_pool1d(x.reshape(1, 2, 3), 2).sum(),
    "max_pool2d": lambda m, F, x: F.max_pool2d(x.reshape(1, 1, 2, 3), 2).sum(),
    "nll_loss": lambda m, F, x: F.nll_loss(x, m.tensor([0, 1])),
    "nll_loss weighted": lambda m, F, x: F.nll_loss(x, m.tensor([0, 2]), weight=m.tensor([1.0, 2.0, 3.0],
                                                                                          dtype=m.float64)),
}


@pytest.mark.parametrize("op", list(OPS))
def test_second_backward_of_a_formula_reading_the_input(op):
    got = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 2.5, -0.3]], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(OPS[op](m, m.nn.functional, x), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x, allow_unused=True)
        got.append((g.requires_grad, g.detach().numpy(), None if gg is None else gg.numpy(force=True) if m is torch else gg.numpy()))
    assert got[1][0] == got[0][0]
    np.testing.assert_array_equal(got[1][1], got[0][1])
    np.testing.assert_array_equal(got[1][2], got[0][2])


@pytest.mark.parametrize("changed", ["weight", "target"])
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_a_saved_weight_or_target_changed_after_create_graph_is_the_error(loss, changed):
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0, 0.1], [1.5, 2.5, -0.3, 0.2], [0.0, 1.0, 2.0, 3.0]], requires_grad=True)
        w, t = m.tensor([1.0, 2.0, 3.0, 4.0]), m.tensor([0, 1, 3])
        scores = x.log_softmax(1) if loss == "nll_loss" else x
        (g,) = m.autograd.grad(getattr(m.nn.functional, loss)(scores, t, weight=w), x, create_graph=True)
        w.mul_(2) if changed == "weight" else t.__setitem__(0, 2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            m.autograd.grad((g * g).sum(), x)


SPREADS = {
    "var 0-d": lambda m, x: m.var(x[0]), "var_mean 0-d": lambda m, x: sum(m.var_mean(x[0])),
    "std_mean 0-d": lambda m, x: sum(m.std_mean(x[0])), "var, correction 3": lambda m, x: m.var(x, correction=3),
    "var over dim, correction 3": lambda m, x: m.var(x, 0, correction=3),
    "var_mean over dim, correction 2": lambda m, x: m.var_mean(x, 0, correction=2)[0],
    "std over dim, correction 3": lambda m, x: m.std(x, 0, correction=3), "var 1 element": lambda m, x: m.var(x[:1]),
}


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
@pytest.mark.parametrize("op", list(SPREADS))
def test_spread_without_degrees_of_freedom_is_pytorchs(op):
    """PyTorch's variance formula over every element with degrees of freedom <= 0 is ``grad * where(x == mean,
    nan, inf)``, a constant (a second backward of var/var_mean then raises); over given dims its divisor is the
    degrees of freedom, negative too."""
    got = []
    for m in (torch, ember):
        x = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(SPREADS[op](m, x), x, create_graph=True)
        try:
            (gg,) = m.autograd.grad(g.sum(), x, allow_unused=True)
            second = None if gg is None else gg.numpy(force=True) if m is torch else gg.numpy()
        except RuntimeError as e:
            second = str(e).split(" and ")[0]
        got.append((g.requires_grad, g.detach().numpy(), second))
    assert got[1][0] == got[0][0]
    np.testing.assert_array_equal(got[1][1], got[0][1])
    if isinstance(got[0][2], str):
        assert got[1][2] == got[0][2]
    else:
        np.testing.assert_array_equal(got[1][2], got[0][2])


HALF_OPS = ["max_pool1d", "max_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", HALF_OPS)
def test_second_backward_of_a_formula_reading_the_input_in_half_precision(op, dtype):
    """bfloat16 as float16 (its NumPy kind is not "f"): the max pools' gradients require grad under create_graph
    and a second backward gives zeros, as PyTorch's."""
    got = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 2.5, -0.3]], dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad(OPS[op](m, m.nn.functional, x), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x, allow_unused=True)
        got.append((g.requires_grad, g.detach().float().tolist(), None if gg is None else gg.float().tolist()))
    assert got[1] == got[0]
