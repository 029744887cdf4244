"""``torch.func``'s scope decides by a walk of the recorded graph whether a result reaches outside the transform
(then it stays differentiable there) or not (returned detached); a second walk in the same scope stops at the nodes
the first found inner. The results' ``requires_grad`` and their gradients against PyTorch's."""

import numpy as np
import pytest
import torch

import ember


def _run(fw, captured: bool, vmapped: bool):
    rng = np.random.default_rng(0)
    w = fw.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    x = fw.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    p = fw.tensor(rng.standard_normal(4).astype(np.float32))

    def loss(p, xi):
        y = xi * p
        if captured:  # the value and gradient reach w, outside the transform
            y = fw.nn.functional.linear(y, w)
        return y.tanh().sum()

    f = fw.func.grad_and_value(loss)
    g, v = fw.func.vmap(f, in_dims=(None, 0))(p, x) if vmapped else f(p, x[0])
    out = [g.requires_grad, v.requires_grad]
    if captured:
        (gw,) = fw.autograd.grad((g.sum() + v.sum()), w)
        out.append(gw.detach().numpy())
    return out, g.detach().numpy(), v.detach().numpy()


@pytest.mark.parametrize("captured", [False, True])
@pytest.mark.parametrize("vmapped", [False, True])
def test_results_reach_outside_as_pytorchs(captured, vmapped):
    want, tg, tv = _run(torch, captured, vmapped)
    got, eg, ev = _run(ember, captured, vmapped)
    assert got[:2] == want[:2]
    np.testing.assert_allclose(eg, tg, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ev, tv, rtol=1e-5, atol=1e-6)
    if captured:
        np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-5)


def test_second_walk_stops_at_inner_nodes():
    from ember.func._scope import Scope

    x = ember.randn(4)  # (not requiring grad: the scope's input is its own leaf, not an alias of x)
    w = ember.randn(4, requires_grad=True)  # a tensor outside the scope (one made inside would be the scope's own)
    with Scope() as scope:
        t = scope.differentiable(x)
        y = (t * 2).sin().sum()
        assert not scope.reaches_outer([y])
        assert y.grad_fn in scope._inner
        assert not scope.reaches_outer([y])
        assert scope.reaches_outer([y + (t * w).sum()])
