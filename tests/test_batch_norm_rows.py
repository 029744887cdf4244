"""BatchNorm's per-channel-row path (channels contiguous in memory, as convolutions leave them) and ReLU's threaded
passes: against PyTorch, against the reduction-over-axes reference, same bits at 1, 2 and 3 threads."""

import numpy as np
import pytest
import torch
from nn_oracle import batch_last
from oracle import assert_close

import ember
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
    ("BatchNorm2d", (8, 5, 7, 3), batch_last),  # the layout convolutions produce; odd H, W
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


def test_channel_rows_path_equals_axes_reference(monkeypatch):
    """The rows path and the reduction over (N, *) axes agree (float64), values and every gradient."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 6, 5, 5)) * 3
    up = rng.standard_normal(x.shape)
    params = rng.standard_normal(6), rng.standard_normal(6)
    fast = _run(ember.nn.BatchNorm2d, x, up, ember, True, params, batch_last)
    monkeypatch.setattr(norm, "_channel_major", lambda x: None)
    ref = _run(ember.nn.BatchNorm2d, x, up, ember, True, params, batch_last)
    for a, r in zip(fast, ref):
        np.testing.assert_allclose(a, r, rtol=1e-12, atol=1e-12)


def test_channel_major_detects_layouts():
    x = np.zeros((4, 3, 5, 6), np.float32)
    assert norm._channel_major(x) is None  # (N, C, H, W): a channel is N separate blocks
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
