"""Per-example gradients, ``vmap(grad(loss))`` as in PyTorch's tutorial, against ``torch.func``.

``grad`` here is a minimal stand-in for ``torch.func.grad`` built on ember.autograd.grad through vmap's gradient
helpers (ember/func/_batched_grad.py), which is what makes each example's gradient its own."""

import threading

import numpy as np
import pytest
import torch

import ember
from ember._kernels import policy
from ember.func import functional_call, vmap
from ember.func._batched_grad import autograd_grad, grad_leaf
from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten


def grad(f, argnums=0):
    def g(*args):
        params = tree_map(grad_leaf, args[argnums])
        leaves, spec = tree_flatten(params)
        out = f(*args[:argnums], params, *args[argnums + 1:])
        return tree_unflatten(list(autograd_grad(out, leaves)), spec)
    return g


def _models():
    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Conv2d(4, 6, 3, stride=2, padding=1), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(6 * 2 * 2, 16), nn.Tanh(), nn.Linear(16, 10))
    torch.manual_seed(0)
    tnet, enet = build(torch.nn), build(ember.nn)
    enet.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    return tnet, enet


def _batch_and_torchs_grads(seed):
    """ember's model, a batch of six 10x10 images with their targets, and PyTorch's per-sample gradients on it."""
    tnet, enet = _models()
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((6, 1, 10, 10)).astype(np.float32)
    targets = rng.integers(0, 10, 6)
    want = _per_sample_grads(torch, tnet, data, targets, torch.func.vmap, torch.func.grad,
                             torch.func.functional_call)
    return enet, data, targets, want


def _per_sample_grads(m, net, data, targets, vm, gr, call):
    params = {k: v.detach() for k, v in net.named_parameters()}
    buffers = {k: v.detach() for k, v in net.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        predictions = call(net, (params, buffers), (sample.unsqueeze(0),))
        return m.nn.functional.cross_entropy(predictions, target.unsqueeze(0))

    return vm(gr(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, m.tensor(data), m.tensor(targets))


@pytest.mark.parametrize("batch", [1, 5])
def test_per_sample_gradients_of_a_small_cnn_match_torch_func(batch):
    tnet, enet = _models()
    rng = np.random.default_rng(0)
    data = rng.standard_normal((batch, 1, 10, 10)).astype(np.float32)
    targets = rng.integers(0, 10, batch)
    want = _per_sample_grads(torch, tnet, data, targets, torch.func.vmap, torch.func.grad,
                             torch.func.functional_call)
    got = _per_sample_grads(ember, enet, data, targets, vmap, grad, functional_call)
    assert set(got) == set(want)
    for k in want:
        assert tuple(got[k].shape) == (batch, *tnet.state_dict()[k].shape)
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-4, atol=1e-6, err_msg=k)
    # and each example's gradient is the gradient of that example's loss alone
    one = _per_sample_grads(ember, enet, data[-1:], targets[-1:], vmap, grad, functional_call)
    for k in want:
        np.testing.assert_allclose(one[k].numpy()[0], got[k].numpy()[-1], rtol=1e-5, atol=1e-7)


def test_per_sample_gradients_of_a_linear_model_with_mse_and_unbatched_targets():
    rng = np.random.default_rng(1)
    w, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    x, y = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    results = []
    for m, vm, gr in ((torch, torch.func.vmap, torch.func.grad), (ember, vmap, grad)):
        def loss(p, xi, yi, m=m):
            return m.nn.functional.mse_loss(m.nn.functional.linear(xi, p[0], p[1]).tanh(), yi)
        out = vm(gr(loss), in_dims=(None, 0, None))((m.tensor(w), m.tensor(b)), m.tensor(x), m.tensor(y))
        results.append([t.numpy() for t in out])
    for a, e in zip(*results):
        np.testing.assert_allclose(e, a, rtol=1e-5, atol=1e-6)


def test_grad_of_batched_inputs_and_nested_vmap():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    results = []
    for m, vm, gr in ((torch, torch.func.vmap, torch.func.grad), (ember, vmap, grad)):
        def f(v, m=m):
            return (v.sin() * v).sum()
        results.append(vm(vm(gr(f)))(m.tensor(x)).numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


def test_implicit_seed_needs_a_scalar_per_example():
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        vmap(grad(lambda v: v * 2))(ember.ones(3, 2))


@pytest.mark.parametrize("kw", [{"groups": 2, "dilation": 2, "padding": 2}, {"stride": 2, "padding": 1},
                                {"groups": 4, "stride": (2, 1)}])
def test_per_sample_gradients_through_grouped_strided_dilated_conv_and_input(kw):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 4 // kw.get("groups", 1), 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    x = rng.standard_normal((3, 4, 9, 9)).astype(np.float32)
    results = []
    for m, vm, gr in ((torch, torch.func.vmap, torch.func.grad), (ember, vmap, grad), (ember, vmap, grad)):
        def loss(p, xi, m=m):
            y = m.nn.functional.conv2d((p[2] * xi).unsqueeze(0), p[0], p[1], **kw)
            return (y.tanh() * y).sum()
        with policy.override(compiled=len(results) < 2):  # the last: ember's NumPy kernels (col2im of the input)
            out = vm(gr(loss), in_dims=(None, 0))((m.tensor(w), m.tensor(b), m.tensor(x[0])), m.tensor(x))
        results.append([t.numpy() for t in out])
    for a, e, ref in zip(*results):
        np.testing.assert_allclose(e, a, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(e, ref)  # compiled and NumPy kernels: the same bits


def test_jacobian_rows_by_vmap_of_a_vector_jacobian_product():
    x0 = np.random.default_rng(5).standard_normal(4).astype(np.float32)
    w0 = np.random.default_rng(6).standard_normal((3, 4)).astype(np.float32)
    want = torch.func.jacrev(lambda x: (torch.tensor(w0) @ x).tanh())(torch.tensor(x0)).numpy()
    x = ember.tensor(x0, requires_grad=True)
    y = (ember.tensor(w0) @ x).tanh()
    rows = vmap(lambda v: autograd_grad(y, x, grad_outputs=v, retain_graph=True)[0])(ember.eye(3))
    np.testing.assert_allclose(rows.numpy(), want, rtol=1e-5, atol=1e-7)


def test_per_sample_gradients_of_an_ensemble_nested_vmap():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((3, 4, 5)).astype(np.float32)  # 3 models
    x = rng.standard_normal((6, 5)).astype(np.float32)  # 6 samples, shared by the models
    t = rng.integers(0, 4, 6)
    results = []
    for m, vm, gr in ((torch, torch.func.vmap, torch.func.grad), (ember, vmap, grad)):
        def loss(wi, xi, ti, m=m):
            return m.nn.functional.cross_entropy(m.nn.functional.linear(xi, wi).unsqueeze(0), ti.unsqueeze(0))
        per_model = vm(vm(gr(loss), in_dims=(None, 0, 0)), in_dims=(0, None, None))
        results.append(per_model(m.tensor(w), m.tensor(x), m.tensor(t)).numpy())
    assert results[1].shape == (3, 6, 4, 5)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


def test_autograd_grad_called_inside_vmap_runs_per_example():
    x = np.random.default_rng(8).standard_normal((4, 3)).astype(np.float32)
    w = ember.ones(3, requires_grad=True)
    with pytest.warns(UserWarning, match="performance drop .* ember.autograd.grad"):
        out = vmap(lambda xi: ember.autograd.grad((xi * w).sin().sum(), w)[0])(ember.tensor(x))
    np.testing.assert_allclose(out.numpy(), np.cos(x) * x, rtol=1e-5)


def test_per_sample_conv_gradients_same_bits_at_1_and_2_threads(threads, monkeypatch):
    """The per-example convolution's im2col copies split over threads by kernel offset (``_per_example._im2col``):
    the same bits at one and two threads, and PyTorch's values."""
    from ember import _parallel
    from ember.func import _per_example

    monkeypatch.setattr(policy, "min_elementwise_elements", 1 << 10)  # (the split from these small inputs on)
    monkeypatch.setattr(policy, "min_parallel_elements", 1 << 10)
    split = []
    parallel_for = _parallel.parallel_for
    monkeypatch.setattr(_per_example, "parallel_for",
                        lambda fn, rows, *a: split.append(rows) or parallel_for(fn, rows, *a))
    enet, data, targets, want = _batch_and_torchs_grads(3)
    got = []
    for n in (1, 2):
        ember.set_num_threads(n)
        got.append(_per_sample_grads(ember, enet, data, targets, vmap, grad, functional_call))
    assert 9 in split  # the 3x3 kernels' offsets went through the split
    for k in want:
        np.testing.assert_array_equal(got[1][k].numpy(), got[0][k].numpy(), err_msg=k)
        np.testing.assert_allclose(got[0][k].numpy(), want[k].numpy(), rtol=1e-4, atol=1e-6, err_msg=k)


def test_per_sample_linear_head_gradient_split_over_threads(threads, monkeypatch):
    """A classifier head's per-example weight gradient (one row per example: an outer product per example,
    ``_per_example._outer``) split over the examples at two threads: the same bits as one thread, PyTorch's values."""
    from ember import _parallel
    from ember.func import _per_example

    split = []
    parallel_for = _parallel.parallel_for
    monkeypatch.setattr(_per_example, "parallel_for",
                        lambda fn, rows, *a: split.append(rows) or parallel_for(fn, rows, *a))
    rng = np.random.default_rng(4)
    batch, n_in, n_out = 16, 512, 10  # 80 Ki products: above the test's threshold (64 Ki)
    # (weights at a layer's initial scale: logits of order 1, not 20, whose softmax would amplify the BLAS's
    # summation order, which differs between CPUs, past the tolerance)
    w = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
    b = rng.standard_normal(n_out).astype(np.float32)
    x = rng.standard_normal((batch, n_in)).astype(np.float32)
    y = rng.integers(0, n_out, batch)

    def per_sample(m, vm, gr):
        def loss(p, xi, yi):
            return m.nn.functional.cross_entropy(m.nn.functional.linear(xi.unsqueeze(0), p[0], p[1]),
                                                 yi.unsqueeze(0))
        return vm(gr(loss), in_dims=(None, 0, 0))((m.tensor(w), m.tensor(b)), m.tensor(x), m.tensor(y))

    want = per_sample(torch, torch.func.vmap, torch.func.grad)
    got = []
    for n in (1, 2):
        ember.set_num_threads(n)
        got.append(per_sample(ember, vmap, grad))
    assert batch in split  # the examples went through the split
    for one, two, t in zip(got[0], got[1], want):
        np.testing.assert_array_equal(two.numpy(), one.numpy())
        np.testing.assert_allclose(one.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_per_sample_conv_gradients_side_by_side_same_bits(threads, monkeypatch):
    """``policy.inter_op``: a per-example convolution's input and weight gradients computed at once, one on ember's
    worker and one on the calling thread (``_parallel.side_by_side``), give the bits of the two computed one
    after the other, each in the same place (the input gradient is not the weight's, nor swapped), and PyTorch's
    values."""
    from ember.func import _per_example

    monkeypatch.setattr(policy, "min_parallel_elements", 1 << 10)  # (two threads from these small inputs on)
    ran_on = []  # the thread of each of the two computations

    def noted(fn):
        def run():
            ran_on.append(threading.get_ident())
            return fn()
        return run

    side_by_side = _per_example.side_by_side
    monkeypatch.setattr(_per_example, "side_by_side",
                        lambda first, second, elements: side_by_side(noted(first), noted(second), elements))
    enet, data, targets, want = _batch_and_torchs_grads(5)
    ember.set_num_threads(2)
    got = {}
    for inter_op in (False, True):
        with policy.override(inter_op=inter_op):
            got[inter_op] = _per_sample_grads(ember, enet, data, targets, vmap, grad, functional_call)
    # the second convolution (its input gradient needed), with inter_op on only, on two threads
    assert len(ran_on) == 2 and ran_on[0] != ran_on[1]
    for k in want:
        np.testing.assert_array_equal(got[True][k].numpy(), got[False][k].numpy(), err_msg=k)
        np.testing.assert_allclose(got[True][k].numpy(), want[k].numpy(), rtol=1e-4, atol=1e-6, err_msg=k)
