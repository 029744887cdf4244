"""``dist`` records PyTorch's one DistBackward0 node (an edge per operand), with its gradients (ties at the
extreme for inf, zeros of the difference, broadcast operands) and second derivatives."""

import numpy as np
import pytest
import torch

import ember

INF = float("inf")


def structure(t):
    fn = t.grad_fn
    return type(fn).__name__, [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


A = [[1.0, -2.0, 3.0], [0.5, 2.0, -3.0]]
B = [[1.0, 1.0, 0.0], [0.5, -1.0, 0.0]]


def _array(s):
    """A gradient as an array (PyTorch's zero tensor for an input the gradient does not depend on: zeros)."""
    if s is None:
        return None
    if isinstance(s, torch.Tensor) and s._is_zerotensor():
        return np.zeros(tuple(s.shape))
    return s.numpy()


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, INF, -INF])  # (p = 0: PyTorch has no gradient, ember zeros)
@pytest.mark.parametrize("shapes", ["same", "broadcast"])
def test_dist_node_and_gradients(p, shapes):
    out = []
    for lib in (torch, ember):
        a = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(B[:1] if shapes == "broadcast" else B, dtype=lib.float64, requires_grad=True)
        d = lib.dist(a, b, p)
        ga, gb = lib.autograd.grad(d, (a, b), create_graph=True)
        second = lib.autograd.grad((ga * ga).sum() + gb.sum(), (a, b), allow_unused=True)
        out.append((structure(d), d.item(), ga.detach().numpy(), gb.detach().numpy(),
                    [_array(s) for s in second]))
    (ts, td, tga, tgb, tss), (es, ed, ega, egb, ess) = out
    assert es == ts
    np.testing.assert_allclose(ed, td, rtol=1e-14)
    np.testing.assert_allclose(ega, tga, rtol=1e-14)
    np.testing.assert_allclose(egb, tgb, rtol=1e-14)
    for e, t in zip(ess, tss):
        if t is None or e is None:  # (an unused input: None or zeros, as each library materializes it)
            assert np.all((t if e is None else e) == 0) if (t is not None or e is not None) else True
        else:
            np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float16", "float16"), ("float32", "float64")])
def test_dist_dtypes_and_one_operand(dtypes):
    out = []
    for lib in (torch, ember):
        a = lib.tensor(A, dtype=getattr(lib, dtypes[0]), requires_grad=True)
        b = lib.tensor(B, dtype=getattr(lib, dtypes[1]))
        d = lib.dist(a, b)
        d.backward()
        out.append((type(d.grad_fn).__name__, str(d.dtype)[6:], d.item(), a.grad.double().numpy()))
    assert out[1][:2] == out[0][:2]
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-3)
    np.testing.assert_allclose(out[1][3], out[0][3], rtol=1e-3)


def test_dist_integer_error():
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            lib.dist(lib.tensor([1, 2]), lib.tensor([0, 0]))
        messages.append(str(info.value))
    assert messages[1] == messages[0]
