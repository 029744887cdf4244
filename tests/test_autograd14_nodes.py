"""Nodes recorded as PyTorch records them (names, next functions in PyTorch's order), with PyTorch's values and
gradients: a number on the left of -, + and * (``2.5 - x`` is rsub, one input; ``0 + x`` is x.add(0)), rsub,
a reduction over all dims that keeps them, and the chain of a broadcast input's gradient under create_graph."""

import numpy as np
import pytest
import torch
from oracle import node_names

import ember

OPS = {
    "number - x": lambda m, x, y: 2.5 - x, "int - x": lambda m, x, y: 2 - x,
    "rsub(x, y)": lambda m, x, y: m.rsub(x, y), "rsub(x, y, alpha)": lambda m, x, y: m.rsub(x, y, alpha=3),
    "rsub(x, number)": lambda m, x, y: m.rsub(x, 2.0), "rsub(x, number, alpha)": lambda m, x, y: m.rsub(x, 2.0, alpha=0.5),
    "0 + x": lambda m, x, y: 0 + x, "2 * x": lambda m, x, y: 2 * x, "x - 2.5": lambda m, x, y: x - 2.5,
    "sum(None, True)": lambda m, x, y: x.sum(None, True), "sum(dim=None, keepdim=True)": lambda m, x, y: m.sum(x, dim=None, keepdim=True),
    "mean(None, True)": lambda m, x, y: x.mean(None, True),
}
DTYPES = ["float64", "float32", "float16", "bfloat16"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(OPS))
def test_nodes_values_and_gradients_are_pytorchs(op, dtype):
    seen = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 2.5, -0.3]], dtype=getattr(m, dtype), requires_grad=True)
        y = (x * 0.5 + 1).detach().requires_grad_()
        out = OPS[op](m, x, y)
        grads = m.autograd.grad((out * out).sum(), (x, y), allow_unused=True,
                                materialize_grads=True)
        seen.append((node_names(out.grad_fn), out.dtype, out.detach().double().numpy(),
                     [g.double().numpy() for g in grads]))
    assert seen[1][0] == seen[0][0] and str(seen[1][1]).split(".")[-1] == str(seen[0][1]).split(".")[-1]
    np.testing.assert_array_equal(seen[1][2], seen[0][2])
    for e, t in zip(seen[1][3], seen[0][3]):
        np.testing.assert_array_equal(e, t)


RSUB_CASES = {"int tensor": lambda m, i, b: 2 - i, "bool tensor": lambda m, i, b: 1 - b,
              "bool number": lambda m, i, b: True - i, "float alpha int": lambda m, i, b: m.rsub(i, 2, alpha=0.5),
              "float - int": lambda m, i, b: 2.5 - i}


@pytest.mark.parametrize("case", list(RSUB_CASES))
def test_rsub_dtypes_and_errors_are_pytorchs(case):
    got = []
    for m in (torch, ember):
        try:
            r = RSUB_CASES[case](m, m.tensor([1, 2, 3]), m.tensor([True, False]))
            got.append((str(r.dtype).split(".")[-1], r.tolist()))
        except Exception as e:  # noqa: BLE001 (PyTorch's error type and message are compared)
            got.append((type(e).__name__, str(e).split("\n")[0]))
    assert got[1] == got[0]


BROADCASTS = [((3, 1), (2, 3, 4)), ((1, 4), (3, 4)), ((4,), (3, 4)), ((), (3,)), ((1,), (3,)), ((2, 1, 1), (2, 3, 4))]


@pytest.mark.parametrize("shapes", BROADCASTS)
def test_broadcast_gradient_chain_under_create_graph_is_pytorchs(shapes):
    """A broadcast input's gradient is summed down as PyTorch's sum_to: a full sum (SumBackward0) for a 0-d input,
    else a sum keeping the dims (SumBackward1), viewed (ViewBackward0) only to drop leading dims."""
    seen = []
    for m in (torch, ember):
        x = m.ones(shapes[0], dtype=m.float64, requires_grad=True)
        y = m.arange(float(np.prod(shapes[1])), dtype=m.float64).reshape(shapes[1]).requires_grad_()
        (g,) = m.autograd.grad((x * y).sum(), [x], create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), [y])
        seen.append((node_names(g.grad_fn), g.detach().numpy(), gg.numpy()))
    assert seen[1][0] == seen[0][0]
    np.testing.assert_array_equal(seen[1][1], seen[0][1])
    np.testing.assert_array_equal(seen[1][2], seen[0][2])


ADDMV = {
    "plain": lambda m, b, a, v: m.addmv(b, a, v), "scaled": lambda m, b, a, v: m.addmv(b, a, v, beta=0.5, alpha=2),
    "beta 0, nan input": lambda m, b, a, v: m.addmv(b * float("nan"), a, v, beta=0),
    "broadcast input": lambda m, b, a, v: m.addmv(b[:1], a, v, alpha=-1),
    "0-d input": lambda m, b, a, v: m.addmv(b[0], a, v, beta=3), "method": lambda m, b, a, v: b.addmv(a, v),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("case", list(ADDMV))
def test_addmv_is_one_node_as_pytorchs(case, dtype):
    """addmv is one node (AddmvBackward0: input, mat, vec) with PyTorch's values and first and second gradients."""
    seen = []
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(3,), (3, 4), (4,)]]
    for m in (torch, ember):
        b, a, v = (m.tensor(x, dtype=getattr(m, dtype), requires_grad=True) for x in arrays)
        out = ADDMV[case](m, b, a, v)
        w = m.arange(1.0, 4.0, dtype=m.float64).to(out.dtype)
        grads = m.autograd.grad((out * w).abs().sum(), (b, a, v), create_graph=True)
        second = m.autograd.grad(sum((g.abs() ** 2).sum() for g in grads), (a, v))
        seen.append((node_names(out.grad_fn, 1), out.detach().numpy(), [g.detach().numpy() for g in grads],
                     [g.numpy() for g in second]))
    assert seen[1][0] == seen[0][0]
    np.testing.assert_allclose(seen[1][1], seen[0][1], rtol=1e-5)
    for e, t in zip(seen[1][2] + seen[1][3], seen[0][2] + seen[0][3]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shapes", [[(2,), (3, 4), (4,)], [(3, 3), (3, 4), (4,)], [(3, 3), (3,), (4,)]])
def test_addmv_input_shape_errors_are_pytorchs(shapes):
    got = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            m.addmv(*(m.ones(s) for s in shapes))
        got.append(str(info.value))
    assert got[1] == got[0]


LERPS = {
    "same shapes": lambda m, x, y, w: m.lerp(x, y, w), "broadcast weight": lambda m, x, y, w: m.lerp(x, y, w[0]),
    "0-d weight": lambda m, x, y, w: m.lerp(x, y, w[0, 1]), "method": lambda m, x, y, w: x.lerp(y, w),
    "broadcast start": lambda m, x, y, w: m.lerp(x[:1], y, w),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "complex128"])
@pytest.mark.parametrize("case", list(LERPS))
def test_lerp_with_a_tensor_weight_is_one_node_as_pytorchs(case, dtype):
    """LerpBackward1 (start, end, weight), PyTorch's kernel's values (its two formulas either side of |w| = 0.5),
    first and second gradients."""
    seen = []
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), np.array([[0.2, 0.5, 0.9], [-0.7, 0.49, 1.5]])]
    for m in (torch, ember):
        x, y, w = (m.tensor(a, dtype=getattr(m, dtype), requires_grad=True) for a in arrays)
        out = LERPS[case](m, x, y, w)
        grads = m.autograd.grad((out * out).abs().sum(), (x, y, w), create_graph=True)
        second = m.autograd.grad(sum((g.abs() ** 2).sum() for g in grads), (x, y, w))
        seen.append((node_names(out.grad_fn, 1), out.detach().to(m.complex128).numpy(),
                     [g.detach().to(m.complex128).numpy() for g in grads + second]))
    assert seen[1][0] == seen[0][0]
    tol = {"float16": 2e-2, "bfloat16": 5e-2}.get(dtype, 1e-5)
    np.testing.assert_allclose(seen[1][1], seen[0][1], rtol=tol, atol=0)  # (PyTorch fuses: the last bit)
    for e, t in zip(seen[1][2], seen[0][2]):
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol * np.abs(t).max())


POOLS = {
    "max_pool1d": lambda F, x: F.max_pool1d(x.reshape(2, 3, 8), 2),
    "max_pool1d indices": lambda F, x: F.max_pool1d(x.reshape(2, 3, 8), 3, 2, 1, return_indices=True),
    "max_pool1d unbatched": lambda F, x: F.max_pool1d(x.reshape(6, 8), 2, dilation=2, ceil_mode=True),
    "avg_pool1d": lambda F, x: F.avg_pool1d(x.reshape(2, 3, 8), 3, 2, 1, count_include_pad=False),
    "avg_pool1d unbatched": lambda F, x: F.avg_pool1d(x.reshape(6, 8), 2, ceil_mode=True),
    "avg_pool2d": lambda F, x: F.avg_pool2d(x.reshape(2, 3, 2, 4), 2), "avg_pool3d": lambda F, x: F.avg_pool3d(
        x.reshape(1, 3, 2, 2, 4), 2),
    "max_pool2d unbatched": lambda F, x: F.max_pool2d(x.reshape(3, 4, 4), 2, 1, 1, return_indices=True),
    "max_pool3d unbatched": lambda F, x: F.max_pool3d(x.reshape(3, 2, 2, 4), 2, return_indices=True),
    "avg_pool2d unbatched": lambda F, x: F.avg_pool2d(x.reshape(3, 4, 4), 3, 2, 1, divisor_override=2),
    "avg_pool3d unbatched": lambda F, x: F.avg_pool3d(x.reshape(3, 2, 2, 4), (1, 2, 2)),
}


@pytest.mark.parametrize("case", list(POOLS))
def test_pooling_node_chains_are_pytorchs(case):
    """PyTorch's 1-d pooling is its 2-d pooling of an unsqueezed view, squeezed back; its kernels pool an unbatched
    input as it is (no unsqueeze or squeeze recorded); its average pooling nodes are AvgPool2DBackward0 /
    AvgPool3DBackward0. The chain, values, indices and gradients are PyTorch's."""
    x = np.random.default_rng(0).standard_normal(48)
    got = []
    for m in (torch, ember):
        t = m.tensor(x, requires_grad=True)
        out = POOLS[case](m.nn.functional, t * 1)
        out, idx = out if isinstance(out, tuple) else (out, None)
        (g,) = m.autograd.grad((out * out).sum(), t)
        chain, fn = [], out.grad_fn
        while fn is not None and len(chain) < 4:
            chain.append(fn.name().split("::")[-1])
            fn = fn.next_functions[0][0] if fn.next_functions else None
        got.append((chain, out.detach().numpy(), None if idx is None else idx.numpy(), g.numpy()))
    assert got[1][0] == got[0][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-12)
    np.testing.assert_array_equal(got[1][2], got[0][2])
    np.testing.assert_allclose(got[1][3], got[0][3], rtol=1e-12)


@pytest.mark.parametrize("expr", ["2 ** x", "m.pow(2.5, x)", "m.tensor(2.0, dtype=m.float64) ** x"])
def test_number_base_power_is_one_input_node_as_pytorchs(expr):
    """``2 ** x`` is PowBackward2 with x its one input (a 0-d tensor base is PowBackward1's two), PyTorch's values
    and gradients (to an ulp: NumPy's and PyTorch's pow differ there)."""
    seen = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 2.5, -0.3]], dtype=m.float64, requires_grad=True)
        out = eval(expr, {"m": m, "x": x})
        (g,) = m.autograd.grad((out * out).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        seen.append((node_names(out.grad_fn, 1), out.detach().numpy(), g.detach().numpy(), gg.numpy()))
    assert seen[1][0] == seen[0][0]
    for e, t in zip(seen[1][1:], seen[0][1:]):
        np.testing.assert_allclose(e, t, rtol=1e-14)


RSUB_ALPHA_CASES = {
    "int32, NumPy int alpha": lambda m: m.rsub(m.tensor([1, 2], dtype=m.int32), m.tensor([5, 6], dtype=m.int32),
                                               alpha=np.int64(2)),
    "int32 number, NumPy int alpha": lambda m: m.rsub(m.tensor([1, 2], dtype=m.int32), 5, alpha=np.int64(2)),
    "int8, alpha past its range": lambda m: m.rsub(m.tensor([1, 2], dtype=m.int8), m.tensor([5, 6], dtype=m.int8),
                                                   alpha=300),
    "uint8, alpha -1": lambda m: m.rsub(m.tensor([1, 2], dtype=m.uint8), m.tensor([5, 6], dtype=m.uint8), alpha=-1),
    "float32, NumPy float alpha": lambda m: m.rsub(m.tensor([1.5, 2.0]), 5.0, alpha=np.float64(0.25)),
}


@pytest.mark.parametrize("case", list(RSUB_ALPHA_CASES))
def test_rsub_alpha_is_read_and_converted_as_pytorchs(case):
    """rsub's alpha as sub's: a NumPy scalar read as its Python number (an int32 result stays int32), converted to an
    integer result's dtype with PyTorch's overflow error."""
    got = []
    for m in (torch, ember):
        try:
            r = RSUB_ALPHA_CASES[case](m)
            got.append((str(r.dtype).split(".")[-1], r.tolist()))
        except Exception as e:  # noqa: BLE001 (PyTorch's error type and message are compared)
            got.append((type(e).__name__, str(e).split("\n")[0]))
    assert got[1] == got[0]


@pytest.mark.parametrize("other", ["tensor", "number"])
def test_rsub_complex_alpha_gradient_is_pytorchs(other):
    """rsub's input gradient with a complex alpha is g times -conj(alpha), as PyTorch's formula."""
    got = []
    for m in (torch, ember):
        x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        y = m.rsub(x, m.tensor([2 - 1j, 1 + 1j]) if other == "tensor" else 2.0, alpha=2 + 3j)
        y.abs().sum().backward()
        got.append((np.asarray(y.detach().tolist()), np.asarray(x.grad.tolist())))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-6)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rsub_half_number_with_alpha_rounds_once_as_pytorchs(dtype):
    """number - alpha * x of a half-precision x is computed as sub's fused kernel (one rounding), not the product
    rounded to the half dtype and then subtracted."""
    vals = (np.random.default_rng(0).standard_normal(2000) * 10).astype(np.float32)
    t = torch.rsub(torch.tensor(vals).to(getattr(torch, dtype)), 0.1, alpha=3.3).float().numpy()
    x = ember.tensor(vals).to(getattr(ember, dtype))
    e = ember.rsub(x, 0.1, alpha=3.3).float().numpy()
    assert (e != t).sum() == (ember.sub(ember.full_like(x, 0.1), x, alpha=3.3).float().numpy() != t).sum() <= 10
