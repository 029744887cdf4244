"""1-d pooling as PyTorch's, the 2-d node on an unsqueezed view (``ember/nn/_ops/pooling.py``): the compiled
one-row max pooling kernel against the NumPy reference and PyTorch, a broadcast output gradient taking the compiled
gradient kernel, and adaptive average pooling's nodes (1-d, 2-d, 3-d, the all-ones output's mean) named and chained
as PyTorch's."""

import numpy as np
import pytest
import torch
from test_kernels import assert_same_bits, both_ways, compiled_only

import ember


def _chain(t) -> list[str]:
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(fn.name().replace("torch::autograd::", ""))
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return names


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                    {"kernel_size": 3, "stride": 1, "dilation": 2},
                                    {"kernel_size": 4, "stride": 3, "ceil_mode": True, "padding": 2}])
@pytest.mark.parametrize("batched", [True, False])
def test_max_pool1d_one_row_kernel_same_as_numpy_and_torch(monkeypatch, dtype, kwargs, batched):
    """(N, C, L) rows take the compiled one-row kernel: output and indices the reference's bits (ties: the first
    maximum; NaN windows), the gradient its values (to rounding where windows overlap), and PyTorch's."""
    from ember._kernels import pooling

    calls = []
    kernel = pooling.max_pool2d_planes_row
    monkeypatch.setattr(pooling, "max_pool2d_planes_row", lambda *a: calls.append(1) or kernel(*a))
    x = np.random.default_rng(0).standard_normal((3, 5, 23)).astype(dtype)
    x[0, 0, :3] = 1.5  # a tie
    x[1, 2, 7] = np.nan
    x[2, 4, 10:14] = -np.inf
    x = x if batched else x[0]
    g = np.random.default_rng(1).standard_normal(
        torch.nn.functional.max_pool1d(torch.tensor(x), **kwargs).shape).astype(dtype)

    def run(m=ember):
        t = m.tensor(x, requires_grad=True)
        out, idx = m.nn.functional.max_pool1d(t, return_indices=True, **kwargs)
        out.backward(m.tensor(g))
        return [out.detach().numpy(), idx.numpy(), t.grad.numpy()]

    fast, ref = both_ways(run)
    assert calls or not batched  # (an unbatched input is one sample: batch-last as well, the batch-last kernel's)
    assert_same_bits(fast[:2], ref[:2])
    np.testing.assert_allclose(fast[2], ref[2], rtol=1e-6, atol=1e-6)
    expected = run(torch)
    np.testing.assert_array_equal(fast[0], expected[0])
    np.testing.assert_array_equal(fast[1], expected[1])
    np.testing.assert_allclose(fast[2], expected[2], rtol=1e-6, atol=1e-6)


@compiled_only
def test_broadcast_output_gradient_takes_the_compiled_gradient_kernel(monkeypatch):
    """``pool(x).sum().backward()``: sum's gradient is a broadcast (zero strides); it is copied into the indices'
    layout for the compiled kernel instead of taking the reference's per-offset passes. PyTorch's gradient."""
    from ember._kernels import pooling

    calls = []
    kernel = pooling.max_pool1d_rows_grad
    monkeypatch.setattr(pooling, "max_pool1d_rows_grad", lambda *a: calls.append(1) or kernel(*a))
    x = np.random.default_rng(2).standard_normal((4, 6, 30)).astype(np.float32)
    grads = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        m.nn.functional.max_pool1d(t, 3, 2).sum().backward()
        grads.append(t.grad.numpy())
    assert calls
    np.testing.assert_array_equal(*grads)


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                    {"kernel_size": 3, "stride": 1, "dilation": 2},
                                    {"kernel_size": 4, "stride": 3, "ceil_mode": True, "padding": 2}])
@pytest.mark.parametrize("shape", [(3, 5, 23), (1, 4, 17), (5, 23)])
def test_max_pool1d_rows_gradient_is_the_planes_kernels_bits(monkeypatch, dtype, kwargs, shape):
    """1-d max pooling's gradient takes the rows kernel (``max_pool1d_rows_grad``): the bits of the planes kernel
    it stands in for (``max_pool2d_planes_grad``, each position's contributions added in output order, where
    windows overlap too), of the batch-last one a batch of one took before, and PyTorch's values."""
    from ember._kernels import pooling
    from ember.nn._ops import pooling as ops_pooling

    x = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    x[..., 0, 4:7] = 0.25  # a tie
    g = np.random.default_rng(6).standard_normal(
        torch.nn.functional.max_pool1d(torch.tensor(x), **kwargs).shape).astype(dtype)
    calls = []
    kernel = pooling.max_pool1d_rows_grad
    monkeypatch.setattr(pooling, "max_pool1d_rows_grad", lambda *a: calls.append(1) or kernel(*a))
    grads = []
    for rows in (True, False):
        if not rows:  # the general path's kernels (its branch off)
            monkeypatch.setattr(ops_pooling, "_COMPILED_FLOATS", ())
        t = ember.tensor(x, requires_grad=True)
        ember.nn.functional.max_pool1d(t, **kwargs).backward(ember.tensor(g))
        grads.append(t.grad.numpy())
        assert len(calls) == 1
    assert_same_bits(grads[0], grads[1])
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool1d(t, **kwargs).backward(torch.tensor(g))
    np.testing.assert_allclose(grads[0], t.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("nd", "shape", "kwargs"), [
    (3, (3, 4, 1, 6, 8), {"kernel_size": (1, 2, 2)}), (3, (2, 3, 1, 5, 7), {"kernel_size": (1, 3, 2), "stride": 1}),
    (3, (3, 1, 6, 8), {"kernel_size": (1, 2, 2)}), (2, (3, 4, 1, 9), {"kernel_size": (1, 3), "stride": (1, 2)}),
    (2, (3, 4, 1, 9), {"kernel_size": (1, 2), "padding": (0, 1)})])
def test_pooling_of_one_row_or_one_plane_is_pytorchs(nd, shape, kwargs):
    """Inputs of one row (2-d pooling's (N, C, 1, W), which 1-d pooling's rows kernels take too) and 3-d pooling of
    depth one (not a row: the general kernels): values, indices and gradients PyTorch's."""
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    got = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        out, idx = getattr(m.nn.functional, f"max_pool{nd}d")(t, return_indices=True, **kwargs)
        out.backward(m.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape))))
        got.append((out.detach().numpy(), idx.numpy(), t.grad.numpy()))
    (eo, ei, eg), (to, ti, tg) = got
    np.testing.assert_array_equal(eo, to)
    np.testing.assert_array_equal(ei, ti)
    np.testing.assert_allclose(eg, tg, rtol=1e-6, atol=1e-6)  # (overlapping windows: sums in another order)


@pytest.mark.parametrize("nd, shape, output_size", [
    (1, (2, 3, 9), 4), (1, (3, 9), 4), (1, (2, 3, 9), 1), (1, (2, 3, 8), 8), (2, (2, 3, 8, 7), 3),
    (2, (2, 3, 8, 7), 1), (2, (3, 8, 7), (1, 1)), (2, (2, 3, 8, 7), (1, 4)), (2, (2, 3, 8, 7), (None, 1)),
    (3, (2, 3, 4, 6, 5), 2), (3, (2, 3, 4, 6, 5), 1), (3, (3, 4, 6, 5), (1, 1, 1))])
def test_adaptive_avg_pool_nodes_as_torch(nd, shape, output_size):
    """AdaptiveAvgPool2DBackward0 / AdaptiveAvgPool3DBackward0; 1-d pooling is the 2-d node between Unsqueeze and
    Squeeze; an all-ones output is the spatial mean (MeanBackward1). Values and gradients PyTorch's."""
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    g = None
    results = []
    for m in (torch, ember):
        t = m.tensor(x, requires_grad=True)
        out = getattr(m.nn.functional, f"adaptive_avg_pool{nd}d")(t, output_size)
        if g is None:
            g = np.random.default_rng(4).standard_normal(tuple(out.shape)).astype(np.float32)
        out.backward(m.tensor(g))
        results.append((_chain(out), out.detach().numpy(), t.grad.numpy()))
    (names_t, out_t, grad_t), (names_e, out_e, grad_e) = results
    assert names_e == names_t
    np.testing.assert_allclose(out_e, out_t, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grad_e, grad_t, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", ["3d", "2d channels_last", "3d channels_last_3d", "1d of a transposed input"])
def test_adaptive_avg_pool_result_layout_as_pytorch(case):
    # PyTorch lays the result out contiguous, or channels last where the input is (suggest_memory_format): the 3-d
    # pool's depth product left its axes swapped (strides (36, 12, 2, 6, 1): .view of it raised), a channels-last
    # input gave a contiguous result
    def run(lib):
        F = lib.nn.functional
        if case == "3d":
            return F.adaptive_avg_pool3d(lib.ones(2, 3, 4, 7, 5), (3, 2, 2))
        if case == "2d channels_last":
            return F.adaptive_avg_pool2d(lib.ones(2, 3, 7, 5).to(memory_format=lib.channels_last), (3, 2))
        if case == "3d channels_last_3d":
            return F.adaptive_avg_pool3d(lib.ones(2, 3, 4, 7, 5).to(memory_format=lib.channels_last_3d), (3, 2, 2))
        return F.adaptive_avg_pool1d(lib.ones(2, 11, 3).transpose(1, 2), 4)

    expected, got = run(torch), run(ember)
    assert (tuple(got.shape), got.stride()) == (tuple(expected.shape), expected.stride())


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("nd", [1, 2])
def test_half_adaptive_avg_pool_values_as_pytorch(dt, nd):
    # computed in float32 with float32 weights, rounded once: the averaging weights were rounded to the half dtype
    # first (1/3 as bfloat16's 0.333984), giving other bits than PyTorch's in most outputs
    a = np.random.RandomState(0).randn(2, 3, 7, 11)[..., 0, :] if nd == 1 else np.random.RandomState(0).randn(2, 3, 7, 5)
    size = 4 if nd == 1 else (3, 2)
    out = [getattr(lib.nn.functional, f"adaptive_avg_pool{nd}d")(lib.tensor(a, dtype=getattr(lib, dt)), size)
           for lib in (torch, ember)]
    assert out[1].float().tolist() == out[0].float().tolist()
