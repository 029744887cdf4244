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


def _rng(shape, seed, low=None):
    a = np.random.default_rng(seed).standard_normal(shape)
    return np.abs(a) + low if low is not None else a


# name: (operand arrays (those first requiring grad), positional extras, the position of ``reduction``)
_T = np.array([1.0, -1.0, 1.0, -1.0])
LOSSES = {
    "kl_div": ([_rng((4, 3), 0), np.random.default_rng(1).random((4, 3))], (), 2),
    "binary_cross_entropy_with_logits": ([_rng((4, 3), 0), np.random.default_rng(1).random((4, 3)),
                                          _rng((4, 3), 2, 0.5), _rng((3,), 3, 0.5)], (), 4),
    "margin_ranking_loss": ([_rng((4,), 0), _rng((4,), 1), _T], (0.3,), 3),
    "triplet_margin_loss": ([_rng((4, 3), 0), _rng((4, 3), 1), _rng((4, 3), 2)], (0.5, 1.5, 1e-6, True), 3),
    "poisson_nll_loss": ([_rng((4, 3), 0), np.abs(_rng((4, 3), 1)) * 3], (False, True, 1e-8), 2),
    "cosine_embedding_loss": ([_rng((4, 3), 0), _rng((4, 3), 1), _T], (0.2,), 3),
    "hinge_embedding_loss": ([_rng((4,), 0), _T], (0.7,), 2),
}
# how many of the operands take a gradient (the others: targets of -1 and 1, weights)
_DIFFERENTIABLE = {"margin_ranking_loss": 2, "cosine_embedding_loss": 2, "hinge_embedding_loss": 1,
                   "binary_cross_entropy_with_logits": 2}


def _loss(m, name, dtype, reduction):
    arrays, extras, _ = LOSSES[name]
    n = _DIFFERENTIABLE.get(name, len(arrays))
    ts = [m.tensor(a, dtype=getattr(m, dtype), requires_grad=i < n) for i, a in enumerate(arrays)]
    out = getattr(m, name)(*ts, *extras, reduction)
    grads = m.autograd.grad(out.sum(), [t for t in ts if t.requires_grad])
    return [out.dtype == getattr(m, dtype), out.detach().double().numpy(),
            *(g.double().numpy() for g in grads)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", [0, 1, 2, 3, -1])
@pytest.mark.parametrize("name", list(LOSSES))
def test_native_losses_take_an_int_reduction_as_pytorch(name, reduction, dtype):
    ours, theirs = (_loss(m, name, dtype, reduction) for m in (ember, torch))
    assert ours[0] and theirs[0]
    assert len(ours) == len(theirs)
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", [name for name in LOSSES if name != "poisson_nll_loss"])  # (it has no default)
def test_native_losses_without_a_reduction_as_pytorch(name):
    # (PyTorch's binding gives the unreduced loss when reduction is left out, whatever its stubs say)
    arrays, extras, _ = LOSSES[name]
    outs = [getattr(m, name)(*(m.tensor(a) for a in arrays), *extras) for m in (ember, torch)]
    assert tuple(outs[0].shape) == tuple(outs[1].shape)
    np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("reduction", ["mean", 1.0, True, None])
def test_native_losses_refuse_a_reduction_not_an_int(name, reduction):
    arrays, extras, position = LOSSES[name]
    errors = []
    for m in (ember, torch):
        ts = [m.tensor(a) for a in arrays]
        with pytest.raises(TypeError) as info:
            getattr(m, name)(*ts, *extras, reduction)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_kl_div_gives_no_warning_and_takes_log_target_by_keyword(recwarn):
    x, t = _rng((4, 3), 0), np.random.default_rng(1).random((4, 3))
    for lt in (False, True):
        outs = [m.kl_div(m.tensor(x), m.tensor(np.log(t) if lt else t), 1, log_target=lt) for m in (ember, torch)]
        np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-12)
    assert not [w for w in recwarn.list if "batchmean" in str(w.message)]
    with pytest.raises(TypeError):
        ember.kl_div(ember.tensor(x), ember.tensor(t), 1, True)
    with pytest.raises(TypeError):
        ember.poisson_nll_loss(ember.tensor(x), ember.tensor(t))


def test_rrelu_with_a_generator_and_in_place_as_pytorch():
    x = _rng((6, 5), 0).astype(np.float32)
    got = []
    for m in (ember, torch):
        m.manual_seed(3)
        gen = m.Generator().manual_seed(7)
        a = m.rrelu(m.tensor(x), 0.1, 0.4, True, gen)
        b = m.rrelu(m.tensor(x), 0.1, 0.4, True)  # (the default generator, untouched by the first)
        c = m.tensor(x)
        m.rrelu_(c, 0.1, 0.4, True, gen)
        d = m.rrelu(m.tensor(x))  # (eval: the mean slope)
        got.append([v.numpy() for v in (a, b, c, d)] + [float(m.rand(1))])
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape, groups", [((2, 6, 3, 2), 3), ((2, 6, 3, 2), 2), ((1, 4, 5), 4), ((0, 4, 2), 2),
                                           ((3, 6, 1, 2, 2), 6), ((2, 5, 3), 1)])
def test_channel_shuffle_values_gradient_and_node_as_pytorch(shape, groups):
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    g = _rng(shape, 1)
    seen = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        out = m.channel_shuffle(t, groups)
        out.backward(m.tensor(g))
        seen.append((out.detach().numpy().tobytes(), t.grad.numpy().tobytes(), type(out.grad_fn).__name__,
                     out.is_contiguous()))
    assert seen[0] == seen[1]
    assert ember.channel_shuffle(ember.tensor(np.arange(8).reshape(1, 4, 2)), 2).tolist() == \
        torch.channel_shuffle(torch.tensor(np.arange(8).reshape(1, 4, 2)), 2).tolist()


@pytest.mark.parametrize("shape, groups, error", [((1, 4, 2, 2), 0, RuntimeError), ((1, 4, 2, 2), -2, RuntimeError),
                                                  ((4,), 2, RuntimeError), ((2, 4), 2, RuntimeError),
                                                  ((1, 4, 2), 3, RuntimeError), ((1, 4, 2), 2.0, TypeError)])
def test_channel_shuffle_errors_as_pytorch(shape, groups, error):
    messages = []
    for m in (ember, torch):
        with pytest.raises(error) as info:
            m.channel_shuffle(m.zeros(shape), groups)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d", "contiguous_format"])
def test_channel_shuffle_keeps_the_memory_format_as_pytorch(fmt):
    shape = (2, 4, 3, 3, 2) if fmt == "channels_last_3d" else (2, 4, 3, 3)
    x = np.random.default_rng(0).standard_normal(shape)
    outs = [m.channel_shuffle(m.tensor(x).contiguous(memory_format=getattr(m, fmt)), 2) for m in (ember, torch)]
    assert outs[0].stride() == outs[1].stride()
    np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())


def test_margin_ranking_loss_broadcasts_operands_of_other_ranks_as_pytorch():
    # (the native function has no check of the dimensions; F.margin_ranking_loss's refuses them)
    a, b = _rng((2, 3), 0), _rng((2, 3), 1)
    outs = [m.margin_ranking_loss(m.tensor(a), m.tensor(b), m.tensor([1.0, -1.0, 1.0]), 0.1, 0) for m in (ember, torch)]
    np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-12)
