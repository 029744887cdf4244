"""nn.MultiheadAttention and F.multi_head_attention_forward against torch with the same weights."""

import numpy as np
import pytest
import torch
from nn_oracle import ember_state
from oracle import assert_close

import ember
import ember.nn as nn


def randn(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def compare_attention(em, tm, arrays, train=True, atol=1e-5, rtol=1e-4, same=None, **kwargs):
    """Load tm's weights into em; run both on ``arrays`` (query, key, value; ``same`` names inputs that are
    the same tensor) with ``kwargs`` (numpy masks become tensors); compare output, weights, the gradients of
    every float input and of every parameter under the same upstream gradients."""
    em.load_state_dict(ember_state(tm))
    em.train(train)
    tm.train(train)
    e_in = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    if same == "qkv":
        e_in, t_in = e_in[:1] * 3, t_in[:1] * 3
    elif same == "kv":
        e_in, t_in = [e_in[0], e_in[1], e_in[1]], [t_in[0], t_in[1], t_in[1]]
    e_kw = {k: ember.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    t_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    (eo, ew), (to, tw) = em(*e_in, **e_kw), tm(*t_in, **t_kw)
    assert_close(eo, to, atol, rtol, msg="output")
    assert (ew is None) == (tw is None)
    rng = np.random.default_rng(5)
    roots = [(eo, to)] + ([(ew, tw)] if tw is not None else [])
    if tw is not None:
        assert_close(ew, tw, atol, rtol, msg="weights")
    grads = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for _, t in roots]
    ember.autograd.backward([e for e, _ in roots], [ember.tensor(g) for g in grads])
    torch.autograd.backward([t for _, t in roots], [torch.tensor(g) for g in grads])
    for i, (ei, ti) in enumerate(zip(e_in, t_in)):
        assert_close(ei.grad, ti.grad, atol, rtol, msg=f"grad of input {i}")
    t_params = dict(tm.named_parameters())
    assert [n for n, _ in em.named_parameters()] == list(t_params)
    for name, p in em.named_parameters():
        assert_close(p.grad, t_params[name].grad, atol, rtol, msg=f"grad of {name}")
    return eo, ew


QKV = [randn(5, 3, 8), randn(6, 3, 8, seed=1), randn(6, 3, 8, seed=2)]


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("same", [None, "qkv", "kv"])
def test_mha_basic(train, same):
    qkv = [QKV[0], QKV[0], QKV[0]] if same == "qkv" else QKV
    compare_attention(nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2), qkv, train=train, same=same)
    compare_attention(nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2), qkv, train=train, same=same,
                      need_weights=False)


@pytest.mark.parametrize("kwargs", [
    {"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True}, {"add_bias_kv": True, "add_zero_attn": True},
    {"kdim": 3, "vdim": 5}, {"kdim": 3, "vdim": 5, "bias": False}, {"num_heads": 1}, {"num_heads": 4},
])
def test_mha_options(kwargs):
    kw = {"num_heads": 2, **kwargs}
    e, t = nn.MultiheadAttention(8, **kw), torch.nn.MultiheadAttention(8, **kw)
    arrays = [QKV[0], randn(6, 3, kw.get("kdim", 8), seed=1), randn(6, 3, kw.get("vdim", 8), seed=2)]
    mask = np.random.default_rng(1).random((5, 6)) > 0.7
    kpm = np.zeros((3, 6), bool)
    kpm[1, 4:] = True
    compare_attention(e, t, arrays, attn_mask=mask, key_padding_mask=kpm)
    compare_attention(e, t, arrays, attn_mask=mask, key_padding_mask=kpm, need_weights=False)
    compare_attention(e, t, arrays, average_attn_weights=False)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_masks(need_weights):
    """attn_mask bool/float, 2-D and 3-D; key_padding_mask bool/float; both together."""
    rng = np.random.default_rng(2)
    bool2 = rng.random((5, 6)) > 0.7
    bool3 = rng.random((3 * 2, 5, 6)) > 0.7
    float2 = rng.standard_normal((5, 6)).astype(np.float32)
    float3 = rng.standard_normal((6, 5, 6)).astype(np.float32)
    kpm = np.zeros((3, 6), bool)
    kpm[0, 5] = kpm[2, :2] = True
    kpm_float = np.where(kpm, -1e4, 0.5).astype(np.float32)
    for kw in [{"attn_mask": bool2}, {"attn_mask": bool3}, {"attn_mask": float2}, {"attn_mask": float3},
               {"key_padding_mask": kpm}, {"key_padding_mask": kpm_float},
               {"attn_mask": float3, "key_padding_mask": kpm_float}]:
        e, t = nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2)
        compare_attention(e, t, QKV, need_weights=need_weights, **kw)


def test_mha_is_causal_and_batch_first():
    causal = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
    x = randn(3, 5, 8)
    for need_weights in (True, False):
        e = nn.MultiheadAttention(8, 2, batch_first=True)
        t = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        compare_attention(e, t, [x, x, x], same="qkv", attn_mask=causal, is_causal=True, need_weights=need_weights)
        compare_attention(e, t, [x, randn(3, 6, 8, seed=1), randn(3, 6, 8, seed=2)], need_weights=need_weights)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        nn.MultiheadAttention(8, 2)(ember.randn(5, 3, 8), ember.randn(5, 3, 8), ember.randn(5, 3, 8), is_causal=True)


def test_mha_unbatched_and_float64():
    rng = np.random.default_rng(4)
    q, k = randn(5, 8), randn(6, 8, seed=1)
    kpm = np.zeros(6, bool)
    kpm[2] = True
    compare_attention(nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2), [q, k, k], same="kv",
                      key_padding_mask=kpm, attn_mask=rng.random((2, 5, 6)) > 0.8)
    compare_attention(nn.MultiheadAttention(8, 2, batch_first=True), torch.nn.MultiheadAttention(8, 2, batch_first=True),
                      [q, k, k], need_weights=False)
    e, t = nn.MultiheadAttention(8, 2).double(), torch.nn.MultiheadAttention(8, 2).double()
    arrays = [a.astype(np.float64) for a in QKV]
    e.load_state_dict(ember_state(t))
    out, w = e(*(ember.tensor(a) for a in arrays))
    tout, tw = t(*(torch.tensor(a) for a in arrays))
    assert_close(out, tout, atol=1e-12, rtol=1e-10)
    assert_close(w, tw, atol=1e-12, rtol=1e-10)


def test_mha_fully_masked_rows_as_pytorch():
    """A query whose keys are all masked: NaN in the materialised weights path, zeros in the fused one."""
    mask = np.zeros((5, 6), bool)
    mask[2] = True
    e, t = nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2)
    e.load_state_dict(ember_state(t))
    for need_weights in (True, False):
        eo, _ = e(*(ember.tensor(a) for a in QKV), attn_mask=ember.tensor(mask), need_weights=need_weights)
        to, _ = t(*(torch.tensor(a) for a in QKV), attn_mask=torch.tensor(mask), need_weights=need_weights)
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=1e-5, rtol=1e-4)
        assert np.isnan(eo.detach().numpy()[2]).all() == need_weights


def test_mha_state_dict_and_init():
    for kw in [{}, {"bias": False}, {"add_bias_kv": True}, {"kdim": 3, "vdim": 5}]:
        e, t = nn.MultiheadAttention(8, 2, **kw), torch.nn.MultiheadAttention(8, 2, **kw)
        es, ts = e.state_dict(), t.state_dict()
        assert list(es) == list(ts)
        assert all(tuple(es[k].shape) == tuple(ts[k].shape) for k in es)
        assert (e.bias_k is None) == (t.bias_k is None) and e.head_dim == t.head_dim
    ember.manual_seed(0)
    m = nn.MultiheadAttention(64, 4, add_bias_kv=True)
    assert np.all(m.in_proj_bias.detach().numpy() == 0) and np.all(m.out_proj.bias.detach().numpy() == 0)
    bound = np.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ over the packed (192, 64) weight
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    wo = m.out_proj.weight.detach().numpy()  # Linear's default: U(+-1/sqrt(64))
    assert np.abs(wo).max() <= 1 / 8 and np.abs(wo).max() > 0.9 / 8
    assert 0.5 < m.bias_k.detach().numpy().std() / np.sqrt(2 / (64 + 64)) < 1.5  # xavier_normal_


def test_mha_dropout_only_in_training():
    ember.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = ember.randn(5, 3, 8)
    a = m(x, x, x, need_weights=False)[0]
    b = m(x, x, x, need_weights=False)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    m.eval()
    a = m(x, x, x)[0]
    assert np.allclose(a.detach().numpy(), m(x, x, x)[0].detach().numpy())


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    m = nn.MultiheadAttention(8, 2)
    x = ember.randn(5, 3, 8)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 6"):
        m(ember.randn(5, 3, 6), ember.randn(5, 3, 6), ember.randn(5, 3, 6))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \(4, 5\), but should be \(5, 5\)"):
        m(x, x, x, attn_mask=ember.zeros(4, 5))
    with pytest.raises(RuntimeError, match="The shape of the 3D attn_mask"):
        m(x, x, x, attn_mask=ember.zeros(2, 5, 5))
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D"):
        m(ember.randn(8), ember.randn(8), ember.randn(8))
    with pytest.raises(AssertionError, match="key_padding_mask"):
        m(x, x, x, key_padding_mask=ember.zeros(3, 4, dtype=ember.bool))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=ember.zeros(5, 5, dtype=ember.int64))


def test_functional_multi_head_attention_forward():
    """F.multi_head_attention_forward with separate projection weights and static keys/values, as PyTorch."""
    rng = np.random.default_rng(7)
    q, k, v = randn(4, 2, 8), randn(5, 2, 6, seed=1), randn(5, 2, 6, seed=2)
    wq, wk, wv, wo = (rng.standard_normal(s).astype(np.float32) * 0.3 for s in [(8, 8), (8, 6), (8, 6), (8, 8)])
    b, bo = rng.standard_normal(24).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    sk, sv = rng.standard_normal((2, 4, 7, 4)).astype(np.float32)
    results = []
    for m in (ember, torch):
        t = [m.tensor(a, requires_grad=True) for a in (q, k, v, wq, wk, wv, wo, b, bo, sk, sv)]
        out, w = m.nn.functional.multi_head_attention_forward(
            t[0], t[1], t[2], 8, 2, None, t[7], None, None, False, 0.0, t[6], t[8], training=True,
            use_separate_proj_weight=True, q_proj_weight=t[3], k_proj_weight=t[4], v_proj_weight=t[5],
            static_k=t[9], static_v=t[10], average_attn_weights=False)
        (out.sum() + (w * w).sum()).backward()
        results.append((out, w, [x.grad for x in t]))
    (eo, ew, eg), (to, tw, tg) = results
    assert_close(eo, to)
    assert_close(ew, tw)
    for i, (a, b_) in enumerate(zip(eg, tg)):
        if b_ is None:
            assert a is None, i
        else:
            assert_close(a, b_, msg=f"grad {i}")


def test_mha_empty_batch_and_single_position():
    for shape in [(5, 0, 8), (1, 3, 8)]:
        x = randn(*shape)
        for need_weights in (True, False):
            compare_attention(nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2), [x, x, x], same="qkv",
                              need_weights=need_weights)
