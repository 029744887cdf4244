"""torch.embedding, torch.conv2d, torch.layer_norm, torch.dropout ...: the neural-network operators PyTorch also
exposes at the top level, in their native signatures (which differ from torch.nn.functional's), against PyTorch."""

import numpy as np
import pytest
import torch

import ember
from ember import _nn_toplevel


def _pair(shape, seed=0, requires_grad=False, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (ember.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad))


def test_every_lazy_name_is_defined_and_exported():
    assert set(ember._NN_TOPLEVEL) <= set(vars(_nn_toplevel))
    assert set(ember._NN_TOPLEVEL) <= set(ember.__all__)
    for name in ember._NN_TOPLEVEL:
        assert callable(getattr(torch, name)), name
        assert callable(getattr(ember, name)), name


@pytest.mark.parametrize("padding_idx", [-1, -2, 1])
@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_weight_first_and_negative_padding_is_none(padding_idx, scale_grad_by_freq):
    (ew, tw) = _pair((5, 3), requires_grad=True)
    idx = np.array([[0, 1], [1, 4]])
    eo = ember.embedding(ew, ember.tensor(idx), padding_idx, scale_grad_by_freq)
    to = torch.embedding(tw, torch.tensor(idx), padding_idx, scale_grad_by_freq)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy())
    eo.pow(2).sum().backward()
    to.pow(2).sum().backward()
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-6)


def test_batch_and_instance_norm_take_the_weight_before_the_running_statistics():
    (ex, tx) = _pair((4, 3, 5))
    (ew, tw) = _pair((3,), seed=1)
    (eb, tb) = _pair((3,), seed=2)
    erm, ervar = ember.zeros(3), ember.ones(3)
    trm, trvar = torch.zeros(3), torch.ones(3)
    eo = ember.batch_norm(ex, ew, eb, erm, ervar, True, 0.1, 1e-5, True)
    to = torch.batch_norm(tx, tw, tb, trm, trvar, True, 0.1, 1e-5, True)
    np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(erm.numpy(), trm.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ervar.numpy(), trvar.numpy(), rtol=1e-5)
    eo = ember.instance_norm(ex, ew, eb, None, None, True, 0.1, 1e-5, True)
    to = torch.instance_norm(tx, tw, tb, None, None, True, 0.1, 1e-5, True)
    np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError):
        torch.batch_norm(tx, tw, tb, trm, trvar)
    with pytest.raises(TypeError):
        ember.batch_norm(ex, ew, eb, erm, ervar)


def test_layer_group_rms_norm_with_cudnn_flags():
    (ex, tx) = _pair((2, 4, 6))
    (ew, tw) = _pair((6,), seed=1)
    (eg, tg) = _pair((4,), seed=3)
    pairs = [(ember.layer_norm(ex, [6], ew, None, 1e-5, False), torch.layer_norm(tx, [6], tw, None, 1e-5, False)),
             (ember.group_norm(ex, 2, eg, eg, 1e-5, True), torch.group_norm(tx, 2, tg, tg, 1e-5, True)),
             (ember.rms_norm(ex, (6,), ew), torch.rms_norm(tx, (6,), tw))]
    for eo, to in pairs:
        np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_alpha_dropout"])
def test_dropouts_need_train(name):
    (ex, tx) = _pair((2, 3, 4))
    np.testing.assert_array_equal(getattr(ember, name)(ex, 0.5, False).numpy(), getattr(torch, name)(tx, 0.5, False).numpy())
    assert getattr(ember, name)(ex, 0.0, True).shape == (2, 3, 4)
    with pytest.raises(TypeError):
        getattr(torch, name)(tx, 0.5)
    with pytest.raises(TypeError):
        getattr(ember, name)(ex, 0.5)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_pool_empty_stride_is_the_kernel_and_no_indices(dims):
    (ex, tx) = _pair((1, 2) + (6,) * dims)
    name = f"max_pool{dims}d"
    for args in [(2,), (2, ()), (3, 1, 1), (2, [], 0, 1, True)]:
        np.testing.assert_array_equal(getattr(ember, name)(ex, *args).numpy(), getattr(torch, name)(tx, *args).numpy())
    with pytest.raises(TypeError):
        getattr(torch, name)(tx, 2, return_indices=True)
    with pytest.raises(TypeError):
        getattr(ember, name)(ex, 2, return_indices=True)


def test_functional_aliases_and_activations():
    (ex, tx) = _pair((1, 4, 6, 6))
    (ew, tw) = _pair((3, 4, 3, 3), seed=1)
    np.testing.assert_allclose(ember.conv2d(ex, ew, None, 1, 1).numpy(), torch.conv2d(tx, tw, None, 1, 1).numpy(),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ember.pixel_shuffle(ex, 2).numpy(), torch.pixel_shuffle(tx, 2).numpy())
    np.testing.assert_allclose(ember.celu(ex, 0.5).numpy(), torch.celu(tx, 0.5).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ember.selu(ex).numpy(), torch.selu(tx).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ember.threshold(ex, 0.1, -2.0).numpy(), torch.threshold(tx, 0.1, -2.0).numpy())
    with pytest.raises(TypeError):
        torch.threshold(tx, 0.1, -2.0, True)
    with pytest.raises(TypeError):
        ember.threshold(ex, 0.1, -2.0, True)


def test_with_indices_variants_always_give_a_tuple():
    (ex, tx) = _pair((2, 3, 7))
    for args in [(2,), (3, 2, 1), (2, [], 0, 1, True)]:
        ev, ei = ember.max_pool1d_with_indices(ex, *args)
        tv, ti = torch.max_pool1d_with_indices(tx, *args)
        np.testing.assert_array_equal(ev.numpy(), tv.numpy())
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    er, tr = ember.adaptive_max_pool1d(ex, 3), torch.adaptive_max_pool1d(tx, 3)
    assert type(er) is type(tr) is tuple
    np.testing.assert_array_equal(er[0].numpy(), tr[0].numpy())
    np.testing.assert_array_equal(er[1].numpy(), tr[1].numpy())
