"""BatchNorm's per-channel-row path (channels contiguous in memory, or a contiguous (N, C, *) array: N rows per
channel, as convolutions leave them) and ReLU's threaded passes: against PyTorch, against the reduction-over-axes reference, same bits at 1, 2 and 3 threads."""

import numpy as np
import pytest
import torch
from nn_oracle import batch_last
from oracle import assert_close

import ember
import ember._kernels
from ember.nn._ops import norm


def _run(module_cls, x, up, fw, affine, params, layout=None):
    bn = module_cls(x.shape[1], affine=affine)
    if x.dtype == np.float64:
        bn = bn.double()
    if affine:
        bn.weight.data.copy_(fw.tensor(params[0]))
        bn.bias.data.copy_(fw.tensor(params[1]))
    xt = fw.tensor(layout(x) if layout else x, requires_grad=True)
    out = bn(xt)
    out.backward(fw.tensor(up))
    got = [out.detach().numpy(), xt.grad.numpy(), bn.running_mean.numpy(), bn.running_var.numpy()]
    return got + ([bn.weight.grad.numpy(), bn.bias.grad.numpy()] if affine else [])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("module,shape,layout", [
    ("BatchNorm2d", (8, 5, 7, 3), batch_last),  # channels contiguous; odd H, W
    ("BatchNorm2d", (8, 5, 7, 3), None),        # (N, C, H, W) contiguous, the layout convolutions return: N planes
    ("BatchNorm3d", (3, 4, 2, 5, 3), None),
    ("BatchNorm2d", (1, 4, 5, 6), None),                      # batch 1, ordinary layout: channels already apart
    ("BatchNorm1d", (6, 3, 9), batch_last),
])
def test_channel_rows_path_matches_torch(dtype, affine, module, shape, layout):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    up = rng.standard_normal(shape).astype(dtype)
    params = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    assert norm._channel_major(layout(x) if layout else x) is not None
    ours = _run(getattr(ember.nn, module), x, up, ember, affine, params, layout)
    theirs = _run(getattr(torch.nn, module), x, up, torch, affine, params)
    tol = dict(atol=2e-5, rtol=1e-4) if dtype == np.float32 else dict(atol=1e-12, rtol=1e-12)
    names = ["output", "input grad", "running_mean", "running_var", "weight grad", "bias grad"]
    for name, a, t in zip(names, ours, theirs):
        assert_close(a, t, msg=name, **tol)
    if layout is not None:  # the output keeps the input's memory order
        assert np.moveaxis(ours[0], 0, -1).flags.c_contiguous and np.moveaxis(ours[1], 0, -1).flags.c_contiguous


@pytest.mark.parametrize("layout", [batch_last, None])
def test_channel_rows_path_equals_axes_reference(monkeypatch, layout):
    """The rows path and the reduction over (N, *) axes agree (float64), values and every gradient."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 6, 5, 5)) * 3
    up = rng.standard_normal(x.shape)
    params = rng.standard_normal(6), rng.standard_normal(6)
    fast = _run(ember.nn.BatchNorm2d, x, up, ember, True, params, layout)
    monkeypatch.setattr(norm, "_channel_major", lambda x: None)
    ref = _run(ember.nn.BatchNorm2d, x, up, ember, True, params, layout)
    for a, r in zip(fast, ref):
        np.testing.assert_allclose(a, r, rtol=1e-12, atol=1e-12)


def test_channel_major_detects_layouts():
    x = np.zeros((4, 3, 5, 6), np.float32)
    assert norm._channel_major(x) == "planes"  # (N, C, H, W): a channel is N separate blocks
    assert norm._channel_major(x[:, :, ::2]) is None  # strided: neither layout
    assert norm._channel_major(np.zeros((4, 3), np.float32)) is None  # (N, C): no planes to speak of
    assert norm._channel_major(batch_last(x)) == (1, 2, 3, 0)
    assert norm._channel_major(x[:1]) is not None
    assert norm._channel_major(np.zeros((0, 3, 2, 2), np.float32)) is None


@pytest.mark.parametrize("layout", [batch_last, None])
def test_batch_norm_and_relu_same_bits_at_1_2_3_threads(threads, layout):
    """Channels (BatchNorm) and memory chunks (ReLU) split over threads: identical bits for any count."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 16, 16, 16)).astype(np.float32)  # 131 072 elements: above the threading cut-off
    up = rng.standard_normal(x.shape).astype(np.float32)
    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        bn = ember.nn.BatchNorm2d(16)
        xt = ember.tensor(layout(x) if layout else x, requires_grad=True)
        out = ember.relu(bn(xt))
        out.backward(ember.tensor(up))
        results.append([out.detach().numpy(), xt.grad.numpy(), bn.weight.grad.numpy(), bn.running_var.numpy()])
    for other in results[1:]:
        for a, r in zip(other, results[0]):
            np.testing.assert_array_equal(a, r)


def test_relu_keeps_layout_and_matches_torch_on_special_values():
    """ReLU's threaded passes: NaN propagates forward; the gradient is 0 where the output is 0 and passes where it
    is NaN, as PyTorch's (the mask was `out > 0`, which dropped it there)."""
    x = np.array([[-1.0, 0.0, -0.0, 2.0], [np.nan, np.inf, -np.inf, 3.0]], np.float32)
    up = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, np.nan]], np.float32)
    xe, xt = ember.tensor(x.T.copy().T, requires_grad=True), torch.tensor(x, requires_grad=True)
    oe, ot = ember.relu(xe), torch.relu(xt)
    assert oe.detach().numpy().flags.f_contiguous
    assert_close(oe, ot)
    oe.backward(ember.tensor(up))
    ot.backward(torch.tensor(up))
    assert_close(xe.grad, xt.grad)


def test_relu_gradient_from_a_broadcast_gradient_and_a_sliced_input(threads):
    """parallel_flat's fallback: a gradient that is a broadcast view (from sum) and a non-contiguous input."""
    ember.set_num_threads(2)
    x = np.random.default_rng(3).standard_normal((64, 80, 30)).astype(np.float32)[:, ::2]  # 76 800 elements
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ember.relu(xe[:, :, 1:]).sum().backward()
    torch.relu(xt[:, :, 1:]).sum().backward()
    assert_close(xe.grad, xt.grad)


def test_relu_keeps_integer_dtypes_and_rejects_bool_as_torch():
    for dtype in (np.int64, np.uint8, np.float16):
        x = np.array([-2, 0, 3], dtype=dtype) if dtype != np.uint8 else np.array([0, 3], dtype=dtype)
        assert_close(ember.relu(ember.tensor(x)), torch.relu(torch.tensor(x)))
    with pytest.raises(RuntimeError) as theirs:
        torch.relu(torch.tensor([True, False]))
    with pytest.raises(RuntimeError) as ours:
        ember.relu(ember.tensor(np.array([True, False])))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.skipif(not ember._kernels.policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine, x_grad", [(True, True), (False, True), (True, False)])
@pytest.mark.parametrize("layout", [batch_last, None])
def test_compiled_channel_kernels_match_the_numpy_reference(dtype, affine, layout, x_grad):
    """The compiled forward/backward (float64 sums, fewer passes) against the BLAS-dot reference and PyTorch, with
    and without the input's gradient (the backward then computes only the parameter sums)."""
    from ember._kernels import policy

    rng = np.random.default_rng(4)
    x = (rng.standard_normal((6, 5, 9, 7)) * 3 + 2).astype(dtype)
    up = rng.standard_normal(x.shape).astype(dtype)
    w, b = rng.standard_normal(5).astype(dtype), rng.standard_normal(5).astype(dtype)

    def run(fw):
        bn = fw.nn.BatchNorm2d(5, affine=affine).to(getattr(fw, np.dtype(dtype).name))
        if affine:
            bn.weight.data.copy_(fw.tensor(w))
            bn.bias.data.copy_(fw.tensor(b))
        xt = fw.tensor(layout(x) if layout and fw is ember else x, requires_grad=x_grad)
        out = bn(xt)
        out.backward(fw.tensor(up))
        got = [out.detach().numpy(), bn.running_mean.numpy(), bn.running_var.numpy()]
        return got + ([xt.grad.numpy()] if x_grad else []) + ([bn.weight.grad.numpy(), bn.bias.grad.numpy()]
                                                              if affine else [])

    with policy.override(compiled=True):
        fast = run(ember)
    with policy.override(compiled=False):
        ref = run(ember)
    tol = dict(atol=2e-5, rtol=1e-4) if dtype == np.float32 else dict(atol=1e-12, rtol=1e-12)
    assert len(fast) == (3 + x_grad + 2 * affine)
    for a, r, t in zip(fast, ref, run(torch)):
        assert_close(a, r, **tol)
        assert_close(a, t, **tol)


@pytest.mark.parametrize("compiled", [True, False])
def test_forward_and_backward_on_different_kernels(compiled):
    """The policy may change between a forward and its backward: both keep x and the mean, either reads them."""
    from ember._kernels import policy

    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 6, 5)).astype(np.float32)
    up = rng.standard_normal(x.shape).astype(np.float32)
    grads = []
    for switch in (False, True):
        xt = ember.tensor(x, requires_grad=True)
        with policy.override(compiled=compiled and policy.use_compiled()):
            out = ember.nn.functional.batch_norm(xt, None, None, training=True)
        with policy.override(compiled=(compiled != switch) and policy.use_compiled()):
            out.backward(ember.tensor(up))
        grads.append(xt.grad.numpy())
    assert_close(grads[0], grads[1], atol=2e-5, rtol=1e-4)


def test_input_changed_in_place_before_backward_raises_as_torch():
    """BatchNorm keeps its input for the backward, as PyTorch's does: changing it in place first is an error."""
    x = np.random.default_rng(6).standard_normal((4, 3, 5, 5)).astype(np.float32)
    for fw in (torch, ember):
        xt = fw.tensor(x, requires_grad=True)
        h = xt * 2
        out = fw.nn.functional.batch_norm(h, None, None, training=True)
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
