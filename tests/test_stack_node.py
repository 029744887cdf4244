"""``stack`` records one StackBackward0 node (an edge per input), as PyTorch's: values, layout, dtypes and
gradients (first and second order, forward mode) as PyTorch's."""

import numpy as np
import pytest
import torch

import ember


def structure(t):
    fn = t.grad_fn
    return type(fn).__name__, [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


CASES = {
    "dim0": ([(3, 4)] * 3, 0),
    "last": ([(3, 4)] * 2, -1),
    "middle": ([(2, 3, 4)] * 3, 1),
    "zero_d": ([()] * 4, 0),
    "empty": ([(0,)] * 2, 1),
    "one": ([(2, 2)], 0),
    "transposed": ([(4, 3)] * 2, 2),
}


@pytest.mark.parametrize("case", CASES)
def test_stack_node_values_and_gradients(case):
    shapes, dim = CASES[case]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    out = []
    for lib in (torch, ember):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        ins = [x.t() if case == "transposed" else x * 2 for x in xs]
        y = lib.stack(ins, dim)
        w = lib.arange(y.numel(), dtype=lib.float64).sin().reshape(y.shape)
        grads = lib.autograd.grad((y * y * w).sum(), xs, create_graph=True)
        second = lib.autograd.grad(sum(g.sum() for g in grads), xs)
        out.append((structure(y), y.detach().numpy(), y.stride(), [g.detach().numpy() for g in grads],
                    [g.numpy() for g in second]))
    (ts, ty, tstr, tg, tgg), (es, ey, estr, eg, egg) = out
    assert es == ts and es[0] == "StackBackward0"
    np.testing.assert_allclose(ey, ty)
    if case != "transposed":  # (ember keeps non-contiguous inputs' layout in cat and stack; PyTorch's is contiguous)
        assert estr == tstr
    for e, t in zip(eg + egg, tg + tgg):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_stack_mixed_dtypes_and_partial_grad():
    out = []
    for lib in (torch, ember):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3, 4])
        y = lib.stack([b, a, b.double()])
        y.sum().backward()
        out.append((structure(y), str(y.dtype)[6:], y.tolist(), a.grad.tolist()))
    assert out[1] == out[0]


def test_stack_forward_ad():
    out = []
    for lib in (torch, ember):
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            a = fwd.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, -1.0]))
            out.append(fwd.unpack_dual(lib.stack([a, lib.ones(2), a * 3], 1)).tangent.tolist())
    assert out[1] == out[0]
