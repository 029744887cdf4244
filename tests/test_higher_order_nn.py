"""Second-order gradients (create_graph=True) of normalisation, losses, softmax, attention, recurrent layers and
dropout, against PyTorch's (float64): ``check_second_order`` differentiates the first-order gradients again with
respect to the inputs and the output cotangents."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from higher_order_oracle import check_second_order
from oracle import assert_close

import ember


def F(m):
    return m.nn.functional


_IDX = np.array([1, 0, 3, 2])
_IDX_IGNORED = np.array([1, -100, 3, 2])
_IDX_2D = np.array([[1, 0, 2], [3, 3, 0]])


def _sdpa(m, *args, **kwargs):
    """PyTorch's math kernel for 4-D inputs: its fused CPU kernel (chosen for 4-D) has no double backward."""
    if m is ember:
        return F(m).scaled_dot_product_attention(*args, **kwargs)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return F(m).scaled_dot_product_attention(*args, **kwargs)


def _probs(m, t):
    return t.softmax(-1)


def _unit(m, t):  # probabilities in (0, 1) for binary_cross_entropy
    return t.sigmoid()


# name -> (fn(module, *inputs), input specs)
CASES = {
    # softmax family
    "softmax_dim1": (lambda m, x: F(m).softmax(x, 1), [(4, 5)]),
    "softmax_dim0_3d": (lambda m, x: F(m).softmax(x, 0), [(3, 4, 2)]),
    "softmax_middle": (lambda m, x: x.softmax(1), [(2, 3, 4)]),
    "softmax_0d": (lambda m, x: F(m).softmax(x, 0), [()]),
    "log_softmax_dim1": (lambda m, x: F(m).log_softmax(x, 1), [(4, 5)]),
    "log_softmax_dim0_3d": (lambda m, x: F(m).log_softmax(x, 0), [(3, 4, 2)]),
    "log_softmax_last": (lambda m, x: x.log_softmax(-1), [(2, 3, 4)]),
    # class-index and class-probability cross entropy, nll
    "cross_entropy": (lambda m, x, t: F(m).cross_entropy(x, t), [(4, 5), _IDX]),
    "cross_entropy_sum": (lambda m, x, t: F(m).cross_entropy(x, t, reduction="sum"), [(4, 5), _IDX]),
    "cross_entropy_none": (lambda m, x, t: F(m).cross_entropy(x, t, reduction="none"), [(4, 5), _IDX]),
    "cross_entropy_ignore": (lambda m, x, t: F(m).cross_entropy(x, t), [(4, 5), _IDX_IGNORED]),
    "cross_entropy_weight": (lambda m, x, t, w: F(m).cross_entropy(x, t, weight=w.detach().abs()),
                             [(4, 5), _IDX, (5,)]),
    "cross_entropy_smoothing": (lambda m, x, t, w: F(m).cross_entropy(x, t, weight=w.detach().abs(),
                                                                      label_smoothing=0.2, ignore_index=2),
                                [(4, 5), _IDX, (5,)]),
    "cross_entropy_spatial": (lambda m, x, t: F(m).cross_entropy(x, t), [(2, 4, 3), _IDX_2D]),
    "cross_entropy_unbatched": (lambda m, x, t: F(m).cross_entropy(x, t), [(5,), np.array(3)]),
    "cross_entropy_probs": (lambda m, x, y: F(m).cross_entropy(x, _probs(m, y)), [(4, 5), (4, 5)]),
    "cross_entropy_probs_smoothing": (lambda m, x, y, w: F(m).cross_entropy(
        x, _probs(m, y), weight=w.detach().abs(), label_smoothing=0.1, reduction="sum"), [(4, 5), (4, 5), (5,)]),
    "cross_entropy_probs_none": (lambda m, x, y: F(m).cross_entropy(x, _probs(m, y), reduction="none"),
                                 [(4, 5), (4, 5)]),
    "nll_loss": (lambda m, x, t: F(m).nll_loss(x.log_softmax(1), t), [(4, 5), _IDX]),
    "nll_loss_weight_ignore": (lambda m, x, t, w: F(m).nll_loss(x, t, weight=w.detach().abs(), ignore_index=3,
                                                               reduction="sum"), [(4, 5), _IDX, (5,)]),
    "nll_loss_none": (lambda m, x, t: F(m).nll_loss(x, t, reduction="none"), [(4, 5), _IDX]),
    # pointwise losses
    "mse": (lambda m, x, t: F(m).mse_loss(x, t), [(4, 5), (4, 5)]),
    "mse_none": (lambda m, x, t: F(m).mse_loss(x, t, reduction="none"), [(4, 5), (4, 5)]),
    "l1": (lambda m, x, t: F(m).l1_loss(x, t, reduction="sum"), [(4, 5), (4, 5)]),
    "smooth_l1": (lambda m, x, t: F(m).smooth_l1_loss(x, t, beta=0.5), [(4, 5), (4, 5)]),
    "huber": (lambda m, x, t: F(m).huber_loss(x, t, delta=0.7, reduction="none"), [(4, 5), (4, 5)]),
    "bce": (lambda m, x, t: F(m).binary_cross_entropy(_unit(m, x), _unit(m, t)), [(4, 5), (4, 5)]),
    "bce_weight": (lambda m, x, t, w: F(m).binary_cross_entropy(_unit(m, x), _unit(m, t), weight=w.detach().abs(),
                                                                reduction="sum"), [(4, 5), (4, 5), (5,)]),
    "bce_logits": (lambda m, x, t: F(m).binary_cross_entropy_with_logits(x, _unit(m, t)), [(4, 5), (4, 5)]),
    "bce_logits_pos_weight": (lambda m, x, t, p: F(m).binary_cross_entropy_with_logits(
        x, _unit(m, t), pos_weight=p.detach().abs(), reduction="none"), [(4, 5), (4, 5), (5,)]),
    "kl_div": (lambda m, x, t: F(m).kl_div(x.log_softmax(1), _probs(m, t), reduction="batchmean"), [(4, 5), (4, 5)]),
    "kl_div_log_target": (lambda m, x, t: F(m).kl_div(x, t, reduction="sum", log_target=True), [(4, 5), (4, 5)]),
    # normalisation
    "layer_norm": (lambda m, x, w, b: F(m).layer_norm(x, (5,), w, b), [(4, 5), (5,), (5,)]),
    "layer_norm_2d_shape": (lambda m, x, w: F(m).layer_norm(x, (3, 4), w, eps=1e-3), [(2, 3, 4), (3, 4)]),
    "layer_norm_plain": (lambda m, x: F(m).layer_norm(x, (6,)), [(2, 3, 6)]),
    # (PyTorch's own layer_norm double backward fails for a bias without a weight: its composed equivalent)
    "layer_norm_bias_only": (lambda m, x, b: F(m).layer_norm(x, (5,), None, b) if m is ember
                             else F(m).layer_norm(x, (5,)) + b, [(4, 5), (5,)]),
    "rms_norm": (lambda m, x, w: F(m).rms_norm(x, (5,), w), [(4, 5), (5,)]),
    "rms_norm_plain": (lambda m, x: F(m).rms_norm(x, (3, 4), eps=1e-4), [(2, 3, 4)]),
    "rms_norm_default_eps": (lambda m, x, w: F(m).rms_norm(x, (4,), w), [(2, 3, 4), (4,)]),
    "group_norm": (lambda m, x, w, b: F(m).group_norm(x, 2, w, b), [(3, 4, 5), (4,), (4,)]),
    "group_norm_plain_4d": (lambda m, x: F(m).group_norm(x, 3), [(2, 6, 2, 3)]),
    "batch_norm_train": (lambda m, x, w, b: F(m).batch_norm(x, None, None, w, b, training=True),
                         [(3, 4, 5), (4,), (4,)]),
    "batch_norm_train_2d": (lambda m, x: F(m).batch_norm(x, None, None, training=True), [(6, 3)]),
    "batch_norm_train_channels_last": (lambda m, x, w: F(m).batch_norm(
        x.permute(0, 3, 1, 2), None, None, w, training=True), [(2, 3, 2, 4), (4,)]),
    "batch_norm_eval": (lambda m, x, w, b, r: F(m).batch_norm(x, r.detach(), r.detach().abs() + 0.5, w, b),
                        [(3, 4, 5), (4,), (4,), (4,)]),
    "instance_norm": (lambda m, x, w, b: F(m).instance_norm(x, weight=w, bias=b), [(3, 4, 5), (4,), (4,)]),
    "instance_norm_plain_4d": (lambda m, x: F(m).instance_norm(x), [(2, 3, 2, 3)]),
    "instance_norm_running_stats": (lambda m, x, r: F(m).instance_norm(
        x, r.detach(), r.detach().abs() + 0.5, use_input_stats=False), [(2, 3, 4), (3,)]),
    "local_response_norm": (lambda m, x: F(m).local_response_norm(x, 3, alpha=0.1), [(2, 5, 3)]),
    "normalize": (lambda m, x: F(m).normalize(x, dim=1), [(3, 4)]),
    "normalize_p3": (lambda m, x: F(m).normalize(x, p=3, dim=0), [(3, 4)]),
    "cosine_similarity": (lambda m, a, b: F(m).cosine_similarity(a, b, dim=1), [(3, 4), (3, 4)]),
    "pairwise_distance": (lambda m, a, b: F(m).pairwise_distance(a, b), [(3, 4), (3, 4)]),
    "softmin": (lambda m, x: F(m).softmin(x, 1), [(3, 4)]),
    # attention
    "sdpa": (lambda m, q, k, v: F(m).scaled_dot_product_attention(q, k, v), [(2, 3, 4), (2, 5, 4), (2, 5, 4)]),
    "sdpa_causal": (lambda m, q, k, v: F(m).scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3),
                    [(2, 3, 4), (2, 3, 4), (2, 3, 2)]),
    "sdpa_float_mask": (lambda m, q, k, v, a: F(m).scaled_dot_product_attention(q, k, v, attn_mask=a),
                        [(2, 3, 4), (2, 5, 4), (2, 5, 4), (3, 5)]),
    "sdpa_bool_mask": (lambda m, q, k, v: F(m).scaled_dot_product_attention(
        q, k, v, attn_mask=m.tensor([[True, False, True], [False, False, False]])), [(2, 2, 4), (2, 3, 4), (2, 3, 4)]),
    "sdpa_gqa": (lambda m, q, k, v: _sdpa(m, q, k, v, enable_gqa=True), [(1, 4, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2)]),
    "sdpa_4d_causal": (lambda m, q, k, v: _sdpa(m, q, k, v, is_causal=True), [(2, 2, 3, 2), (2, 2, 4, 2), (2, 2, 4, 3)]),
    "sdpa_unbatched_2d": (lambda m, q, k, v: F(m).scaled_dot_product_attention(q, k, v), [(3, 4), (5, 4), (5, 2)]),
    "multi_head_attention": (lambda m, q, k, v, w, b, ow, ob: F(m).multi_head_attention_forward(
        q, k, v, 4, 2, w, b, None, None, False, 0.0, ow, ob, training=False)[0],
        [(3, 2, 4), (5, 2, 4), (5, 2, 4), (12, 4), (12,), (4, 4), (4,)]),
    "multi_head_attention_weights": (lambda m, q, w, ow: F(m).multi_head_attention_forward(
        q, q, q, 4, 2, w, None, None, None, False, 0.0, ow, None, training=False, average_attn_weights=False),
        [(3, 2, 4), (12, 4), (4, 4)]),
    # dropout off (p=0, eval), on: see the tests below
    "dropout_p0": (lambda m, x: F(m).dropout(x, 0.0) * x, [(3, 4)]),
    "dropout_eval": (lambda m, x: F(m).dropout(x, 0.5, training=False) * x, [(3, 4)]),
    "dropout2d_eval": (lambda m, x: F(m).dropout2d(x, 0.5, training=False) * x, [(2, 3, 2, 2)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_second_order_matches_pytorch(name):
    fn, specs = CASES[name]
    check_second_order(fn, specs)


# ---------------------------------------------------------------- recurrent layers: the parameters are inputs too
def _rnn(kind: str, hidden: int, **options):
    def fn(m, x, h0, *weights):
        layer = getattr(m.nn, kind)(x.shape[-1], hidden, **options).double()
        names = [n for n, _ in layer.named_parameters()]
        c0 = m.ones(*h0.shape[:-1], hidden, dtype=m.float64) * 0.5
        state = h0 if kind != "LSTM" else (h0, c0)
        out, h = m.func.functional_call(layer, dict(zip(names, weights)), (x, state))
        return (out, *(h if isinstance(h, tuple) else (h,)))
    return fn


def _rnn_specs(kind: str, inp: int, hid: int, *, layers=1, bidirectional=False, bias=True, proj=0,
               seq=(4, 2)) -> list:
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    out = proj or hid
    dirs = 2 if bidirectional else 1
    specs = [(*seq, inp), (layers * dirs, seq[1], out)]
    for layer in range(layers):
        for _ in range(dirs):
            size = inp if layer == 0 else out * dirs
            specs += [(gates * hid, size), (gates * hid, out)]
            if bias:
                specs += [(gates * hid,), (gates * hid,)]
            if proj:
                specs.append((proj, hid))
    return specs


RNN_CASES = {
    "rnn_tanh": (_rnn("RNN", 4), _rnn_specs("RNN", 3, 4)),
    "rnn_relu_2layers": (_rnn("RNN", 4, nonlinearity="relu", num_layers=2), _rnn_specs("RNN", 3, 4, layers=2)),
    "lstm": (_rnn("LSTM", 4), _rnn_specs("LSTM", 3, 4)),
    "lstm_bidirectional_no_bias": (_rnn("LSTM", 2, bidirectional=True, bias=False),
                                   _rnn_specs("LSTM", 3, 2, bidirectional=True, bias=False)),
    "lstm_proj": (_rnn("LSTM", 4, proj_size=2), _rnn_specs("LSTM", 3, 4, proj=2)),
    "gru": (_rnn("GRU", 4), _rnn_specs("GRU", 3, 4)),
    "gru_2layers_bidirectional": (_rnn("GRU", 3, num_layers=2, bidirectional=True),
                                  _rnn_specs("GRU", 2, 3, layers=2, bidirectional=True)),
}


@pytest.mark.parametrize("name", list(RNN_CASES))
def test_recurrent_layers_second_order_matches_pytorch(name):
    fn, specs = RNN_CASES[name]
    check_second_order(fn, specs, atol=1e-6)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_recurrent_cells_second_order_matches_pytorch(kind):
    def fn(m, x, h, *weights):
        cell = getattr(m.nn, kind)(3, 4).double()
        state = (h, h * 0.3) if kind == "LSTMCell" else h
        out = m.func.functional_call(cell, dict(zip([n for n, _ in cell.named_parameters()], weights)), (x, state))
        return out
    gates = {"RNNCell": 1, "LSTMCell": 4, "GRUCell": 3}[kind]
    check_second_order(fn, [(2, 3), (2, 4), (gates * 4, 3), (gates * 4, 4), (gates * 4,), (gates * 4,)])


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_packed_bidirectional_sequences_second_order_matches_pytorch(kind):
    """Sequences of different lengths: each direction's steps advance only the rows still running."""
    def fn(m, x, h0, *weights):
        layer = getattr(m.nn, kind)(3, 2, bidirectional=True).double()
        names = [n for n, _ in layer.named_parameters()]
        packed = m.nn.utils.rnn.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        out, h = m.func.functional_call(layer, dict(zip(names, weights)), (packed, (h0, h0) if kind == "LSTM" else h0))
        return (m.nn.utils.rnn.pad_packed_sequence(out)[0], *(h if kind == "LSTM" else (h,)))
    check_second_order(fn, _rnn_specs(kind, 3, 2, bidirectional=True, seq=(4, 3)))


# ---------------------------------------------------------------- running statistics, dropout, ctc_loss
@pytest.mark.parametrize("kind", ["BatchNorm1d", "InstanceNorm1d"])
def test_batch_norm_running_statistics_are_updated_once(kind):
    a = np.random.default_rng(0).standard_normal((4, 3, 5))
    results = []
    for m in (ember, torch):
        layer = getattr(m.nn, kind)(3, track_running_stats=True, affine=True).double()
        x = m.tensor(a, requires_grad=True)
        (g,) = m.autograd.grad(layer(x).pow(2).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.pow(2).sum(), x)
        results.append([t.detach().numpy() for t in (layer.running_mean, layer.running_var, g, gg)]
                       + [int(layer.num_batches_tracked)])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, atol=1e-9)


@pytest.mark.parametrize("name, shape", [("dropout", (5, 6)), ("dropout2d", (4, 3, 2, 2))])
def test_dropout_keeps_its_mask_in_the_second_order_formula(name, shape):
    """The mask is a constant of the recorded formula: with the mask ember drew, PyTorch's x * mask gives the same
    first- and second-order gradients (dropout is linear in x: d/dx of its vjp is 0, d/dv is the mask)."""
    a = np.random.default_rng(1).standard_normal(shape)
    ember.manual_seed(3)
    mask = getattr(F(ember), name)(ember.ones(*shape, dtype=ember.float64), 0.4).numpy()
    assert 0 < (mask == 0).sum() < mask.size

    def fn(m, x):
        if m is ember:
            ember.manual_seed(3)
            return getattr(F(m), name)(x, 0.4) * x
        return x * m.tensor(mask) * x
    check_second_order(fn, [a], arrays=[a])


def test_attention_dropout_keeps_its_mask_through_the_rerun():
    """scaled_dot_product_attention's dropout mask is drawn once: the second-order gradients are those of the
    composed formula with that mask (PyTorch's, on the same mask)."""
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 4))
    ember.manual_seed(7)
    mask = F(ember).dropout(ember.ones(2, 3, 5, dtype=ember.float64), 0.3).numpy()

    def fn(m, q, k, v):
        if m is ember:
            ember.manual_seed(7)
            return F(m).scaled_dot_product_attention(q, k, v, dropout_p=0.3)
        p = (q @ k.transpose(-1, -2) / 2).softmax(-1)
        return (p * m.tensor(mask)) @ v
    check_second_order(fn, [], arrays=[q, k, v])


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_module_second_order_matches_pytorch(batch_first):
    def fn(m, q, kv, *weights):
        layer = m.nn.MultiheadAttention(4, 2, batch_first=batch_first, kdim=3, vdim=3).double()
        names = [n for n, _ in layer.named_parameters()]
        out, attn = m.func.functional_call(layer, dict(zip(names, weights)), (q, kv, kv))
        return out, attn
    q, kv = ((2, 3, 4), (2, 5, 3)) if batch_first else ((3, 2, 4), (5, 2, 3))
    check_second_order(fn, [q, kv, (4, 4), (4, 3), (4, 3), (12,), (4, 4), (4,)])


def test_half_precision_softmax_differentiates_twice_as_pytorch():
    """Its float32 output, rounded after the node saved it, stands for the half-precision output (as PyTorch saves
    the result): the formula reads the graph's output, not a constant."""
    got = []
    for m in (torch, ember):
        x = m.tensor(np.random.default_rng(0).standard_normal((3, 4)), dtype=m.float16, requires_grad=True)
        y = m.softmax(x, 1)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        assert g.dtype == gg.dtype == m.float16
        got.append((g.detach().float().numpy(), gg.float().numpy()))
    for e, t in zip(got[1], got[0]):
        np.testing.assert_allclose(e, t, rtol=2e-2, atol=2e-2 * np.abs(t).max())


def test_ctc_loss_gradient_cannot_be_differentiated_again_as_in_pytorch():
    lp = np.log(np.random.default_rng(3).dirichlet(np.ones(4), size=(5, 2)))
    firsts = []
    for m in (ember, torch):
        x = m.tensor(lp, requires_grad=True)
        loss = F(m).ctc_loss(x, m.tensor([[1, 2], [3, 1]]), [5, 4], [2, 1])
        (g,) = m.autograd.grad(loss, x, create_graph=True)
        assert g.requires_grad
        firsts.append(g)
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not implemented"):
            m.autograd.grad(g.sum(), x)
    assert_close(firsts[0].detach(), firsts[1].detach(), atol=1e-12)


# ---------------------------------------------------------------- second-order terms of small models
def test_hessian_vector_product_through_cross_entropy_of_an_mlp():
    rng = np.random.default_rng(4)
    xs, w1, b1, w2 = rng.standard_normal((6, 5)), rng.standard_normal((8, 5)), rng.standard_normal(8), \
        rng.standard_normal((3, 8))
    vecs = [rng.standard_normal(a.shape) for a in (w1, b1, w2)]
    results = []
    for m in (ember, torch):
        params = [m.tensor(a, requires_grad=True) for a in (w1, b1, w2)]
        logits = F(m).linear(F(m).linear(m.tensor(xs), params[0], params[1]).tanh(), params[2])
        loss = F(m).cross_entropy(logits, m.tensor([0, 2, 1, 1, 0, 2]), label_smoothing=0.05)
        grads = m.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * m.tensor(v)).sum() for g, v in zip(grads, vecs))
        results.append([h.numpy() for h in m.autograd.grad(dot, params)])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, atol=1e-10, rtol=1e-8)


def test_gradient_penalty_through_layer_norm_batch_norm_and_tanh():
    """WGAN-GP's term: the squared norm of d critic / d input, differentiated with respect to the parameters."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in ((6, 4), (5, 4), (5,), (5,), (1, 5))]
    results = []
    for m in (ember, torch):
        x, w1, lw, bw, w2 = [m.tensor(a, requires_grad=True) for a in arrays]
        h = F(m).batch_norm(F(m).linear(x, w1), None, None, bw, None, training=True)
        critic = F(m).linear(F(m).layer_norm(h, (5,), lw).tanh(), w2)
        (gx,) = m.autograd.grad(critic.sum(), x, create_graph=True)
        penalty = ((gx.norm(dim=1) - 1) ** 2).mean()
        results.append([g.numpy() for g in m.autograd.grad(penalty, [x, w1, lw, bw, w2])])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, atol=1e-10, rtol=1e-8)


def test_second_order_term_through_layer_norm_and_gelu():
    """A gradient penalty (the norm of d loss / d input) through LayerNorm + GELU + a linear layer."""
    def fn(m, x, w, b, lw):
        return F(m).linear(F(m).gelu(F(m).layer_norm(x, (4,), w, b)), lw)
    check_second_order(fn, [(3, 4), (4,), (4,), (2, 4)])


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_saves_its_output_so_an_in_place_change_to_it_is_caught(op):
    """The backward formula reads the output itself (recorded under create_graph), so, as in PyTorch, writing into
    the output before backward is an error rather than a silently wrong gradient."""
    for m in (ember, torch):
        x = m.randn(3, 4, requires_grad=True)
        y = getattr(x, op)(0)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


@pytest.mark.parametrize("name", ["elu", "selu", "celu"])
def test_elu_family_second_derivative_at_zero_as_pytorch(name):
    """Under create_graph the ELU family's derivative selects x < 0 for its exponential branch, as PyTorch's
    second derivative does: at x = 0 the gradient of that branch is not passed."""
    x = np.array([-1.0, 0.0, 0.5, -0.0], dtype=np.float64)
    results = []
    for m in (torch, ember):
        t = m.tensor(x, requires_grad=True)
        kw = {"alpha": 2.0} if name == "celu" else {}
        (g,) = m.autograd.grad(getattr(m.nn.functional, name)(t, **kw).sum(), t, create_graph=True)
        (gg,) = m.autograd.grad((g * m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)).sum(), t)
        results.append((g.detach(), gg))
    for e, t in zip(results[1], results[0]):
        assert_close(e, t, atol=1e-12)


_SCORES = np.array([[0.3, -0.5, 0.7, 0.1], [0.1, 0.2, -0.3, 0.9], [1.2, -0.4, 0.0, 0.5]])
_PROBS = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]])


@pytest.mark.parametrize("kind", ["indices", "weight", "ignore_index", "smoothing", "probabilities", "none", "3d"])
def test_cross_entropy_second_order_after_its_scores_changed_in_place(kind):
    """PyTorch's cross_entropy saves log_softmax's output, not the scores: scores changed in place after the
    forward leave the first and the second order gradients those of the scores at the forward."""
    results = []
    for m in (torch, ember):
        x = m.tensor(_SCORES, requires_grad=True)
        s = x * 1
        scores = s.reshape(3, 2, 2) if kind == "3d" else s
        kw = {}
        if kind == "probabilities":
            target = m.tensor(_PROBS)
        else:
            target = m.tensor([[0, 1], [1, 0], [1, 1]] if kind == "3d" else [1, 3, 0])
        if kind == "weight":
            kw["weight"] = m.tensor([0.5, 2.0, 1.0, 1.5], dtype=m.float64)
        if kind == "ignore_index":
            kw["ignore_index"] = 3
        if kind == "smoothing":
            kw["label_smoothing"] = 0.2
        if kind == "none":
            kw["reduction"] = "none"
        loss = F(m).cross_entropy(scores, target, **kw)
        s.mul_(3.0)
        upstream = m.tensor([1.0, -2.0, 0.5], dtype=m.float64) if kind == "none" else m.tensor(1.5, dtype=m.float64)
        (g,) = m.autograd.grad(loss, x, upstream, create_graph=True)
        (gg,) = m.autograd.grad((g * g * m.tensor(_PROBS)).sum(), x)
        results.append((g.detach(), gg))
    for e, t in zip(results[1], results[0]):
        assert_close(e, t, atol=1e-12)


def test_bilinear_second_order_after_its_bias_changed_in_place():
    """PyTorch's bilinear does not save its bias (it is only added): changed in place after the forward, the
    gradients of every order are computed as before; the other inputs are saved (changed: the usual error)."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(2, 3), (2, 4), (5, 3, 4), (5,)]]
    results = []
    for m in (torch, ember):
        leaves = [m.tensor(a, requires_grad=True) for a in arrays]
        x1, x2, w, b = (t * 1 for t in leaves)
        y = F(m).bilinear(x1, x2, w, b)
        b.add_(1.0)
        grads = m.autograd.grad((y * y).sum(), leaves, create_graph=True)
        second = m.autograd.grad(sum((g * g).sum() for g in grads), leaves)
        results.append([g.detach() for g in grads] + list(second))
        x1, x2, w, b = (t * 1 for t in leaves)
        y = F(m).bilinear(x1, x2, w, b)
        x2.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            m.autograd.grad(y.sum(), leaves, create_graph=True)
    for e, t in zip(results[1], results[0]):
        assert_close(e, t, atol=1e-9, rtol=1e-10)
