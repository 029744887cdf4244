"""nn.attention.flex_attention against PyTorch's: block masks, score mods, GQA, log-sum-exp, gradients."""

import numpy as np
import pytest
import torch
from torch.nn.attention import flex_attention as tfa

import ember
from ember.nn.attention import flex_attention as efa


def causal(b, h, q, kv):
    return q >= kv


def window_and_pad(lengths):
    def mask(b, h, q, kv):
        return (q >= kv) & (q - kv < 6) & (kv < lengths[b])
    return mask


@pytest.mark.parametrize("shape,block", [((2, 2, 13, 11), 4), ((1, 3, 8, 8), (2, 4)), ((2, 1, 5, 7), 128)])
def test_block_mask_summary_as_pytorch(shape, block):
    B, H, L, S = shape
    lengths = [S, S - 3]
    for mod in (causal, window_and_pad(lengths)):
        ours = efa.create_block_mask(mod if mod is causal else window_and_pad(ember.tensor(lengths)), B, H, L, S,
                                     BLOCK_SIZE=block)
        theirs = tfa.create_block_mask(mod if mod is causal else window_and_pad(torch.tensor(lengths)), B, H, L, S,
                                       device="cpu", BLOCK_SIZE=block)
        for name in ("kv_num_blocks", "full_kv_num_blocks", "q_num_blocks", "full_q_num_blocks"):
            np.testing.assert_array_equal(getattr(ours, name).numpy(), getattr(theirs, name).numpy(), err_msg=name)
        for name, count in (("kv_indices", "kv_num_blocks"), ("full_kv_indices", "full_kv_num_blocks")):
            n = getattr(theirs, count).numpy()
            e, t = getattr(ours, name).numpy(), getattr(theirs, name).numpy()
            for idx in np.ndindex(n.shape):  # the set blocks come first, in order; the rest is unspecified
                np.testing.assert_array_equal(e[idx][:n[idx]], t[idx][:n[idx]])
        np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
        assert ours.shape == theirs.shape and ours.BLOCK_SIZE == theirs.BLOCK_SIZE
        assert ours.sparsity() == pytest.approx(theirs.sparsity())


def _flex(m, fa, arrays, bias, lengths, gqa, block, scale, grad):
    q, k, v = (m.tensor(a, requires_grad=grad) for a in arrays)
    b = m.tensor(bias, requires_grad=grad)

    def score_mod(score, bi, h, qi, kvi):
        return score + b[h, qi - kvi + 12]

    mask = fa.create_block_mask(window_and_pad(m.tensor(lengths)), q.shape[0], None, q.shape[2], k.shape[2],
                                device="cpu", BLOCK_SIZE=block)
    out, lse = fa.flex_attention(q, k, v, score_mod=score_mod, block_mask=mask, enable_gqa=gqa, return_lse=True,
                                 scale=scale)
    return (q, k, v, b), out, lse


def _dense_torch(arrays, bias, lengths, gqa, scale):
    """The same attention written out in torch (PyTorch's flex_attention has no backward on the CPU)."""
    q, k, v = (torch.tensor(a, requires_grad=True) for a in arrays)
    b = torch.tensor(bias, requires_grad=True)
    kk, vv = (k.repeat_interleave(2, 1), v.repeat_interleave(2, 1)) if gqa else (k, v)
    L, S = q.shape[2], k.shape[2]
    qi, kvi = torch.arange(L)[:, None], torch.arange(S)[None, :]
    scores = q @ kk.transpose(-2, -1) * (scale or 0.5) + b[:, qi - kvi + 12]
    keep = window_and_pad(torch.tensor(lengths))(torch.arange(2)[:, None, None, None], None, qi, kvi)
    scores = scores.masked_fill(~keep, -torch.inf)
    lse = scores.logsumexp(-1)
    weights = torch.where(keep.any(-1, keepdim=True), (scores - lse.nan_to_num(0, 0, 0)[..., None]).exp(),
                          torch.zeros(()))
    return (q, k, v, b), weights @ vv, lse


@pytest.mark.parametrize("gqa,block,scale", [(False, 4, None), (True, 8, 0.3), (False, 128, None)])
def test_flex_attention_values_and_gradients_as_pytorch(gqa, block, scale):
    rng = np.random.default_rng(0)
    hkv = 1 if gqa else 2
    arrays = [rng.normal(size=(2, 2, 13, 4)), rng.normal(size=(2, hkv, 12, 4)), rng.normal(size=(2, hkv, 12, 3))]
    bias = rng.normal(size=(2, 25))
    lengths = [12, 0]  # the second batch keeps nothing: its rows are 0, their log-sum-exp -inf
    _, out_t, lse_t = _flex(torch, tfa, arrays, bias, lengths, gqa, block, scale, grad=False)
    inputs_e, out_e, lse_e = _flex(ember, efa, arrays, bias, lengths, gqa, block, scale, grad=True)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.numpy(), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(lse_e.detach().numpy(), lse_t.numpy(), rtol=1e-6)
    inputs_r, out_r, lse_r = _dense_torch(arrays, bias, lengths, gqa, scale)
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.numpy(), rtol=1e-6, atol=1e-9)  # the reference holds
    (out_e.square().sum() + lse_e[lse_e.isfinite()].sum()).backward()
    (out_r.square().sum() + lse_r[lse_r.isfinite()].sum()).backward()
    for e, r in zip(inputs_e, inputs_r):
        np.testing.assert_allclose(e.grad.numpy(), r.grad.numpy(), rtol=1e-6, atol=1e-9)


def test_flex_attention_defaults_and_aux_as_pytorch():
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=(1, 2, 6, 4)).astype(np.float32) for _ in range(3)]
    out_e, aux_e = efa.flex_attention(*(ember.tensor(a) for a in arrays),
                                      return_aux=efa.AuxRequest(lse=True, max_scores=True))
    out_t, aux_t = tfa.flex_attention(*(torch.tensor(a) for a in arrays), return_aux=tfa.AuxRequest(lse=True))
    for e, t in ((out_e, out_t), (aux_e.lse, aux_t.lse)):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    q, k = (torch.tensor(a) for a in arrays[:2])  # PyTorch returns max scores only on a GPU
    np.testing.assert_allclose(aux_e.max_scores.numpy(), (q @ k.transpose(-2, -1) / 2).amax(-1).numpy(), rtol=1e-6)
    np.testing.assert_array_equal(efa.create_mask(causal, 1, 1, 4, 5).numpy(),
                                  tfa.create_mask(causal, 1, 1, 4, 5, device="cpu").numpy())
    with pytest.raises(ValueError, match="enable_gqa=True"):
        efa.flex_attention(ember.ones(1, 2, 3, 4), ember.ones(1, 1, 3, 4), ember.ones(1, 1, 3, 4))


@pytest.mark.parametrize("shape,block", [((2, 2, 13, 11), 4), ((1, 3, 8, 8), (2, 4))])
@pytest.mark.parametrize("with_full", [True, False])
def test_block_mask_from_kv_blocks_as_pytorch(shape, block, with_full):
    B, H, L, S = shape
    made = tfa.create_block_mask(window_and_pad(torch.tensor([S, S - 3])), B, H, L, S, device="cpu",
                                 BLOCK_SIZE=block)
    parts = [made.kv_num_blocks, made.kv_indices] + ([made.full_kv_num_blocks, made.full_kv_indices]
                                                     if with_full else [])
    theirs = tfa.BlockMask.from_kv_blocks(*parts, BLOCK_SIZE=block, mask_mod=made.mask_mod, seq_lengths=(L, S))
    ours = efa.BlockMask.from_kv_blocks(*(ember.tensor(p.numpy()) for p in parts), BLOCK_SIZE=block,
                                        mask_mod=window_and_pad(ember.tensor([S, S - 3])), seq_lengths=(L, S))
    np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
    for name in ("kv_num_blocks", "q_num_blocks") + (("full_kv_num_blocks", "full_q_num_blocks") if with_full else ()):
        np.testing.assert_array_equal(getattr(ours, name).numpy(), getattr(theirs, name).numpy(), err_msg=name)
    assert ours.shape == theirs.shape and ours.BLOCK_SIZE == theirs.BLOCK_SIZE
    assert ours.sparsity() == pytest.approx(theirs.sparsity())
    if with_full:  # the same mask as create_block_mask's, so the same attention
        q, k, v = (ember.tensor(np.random.default_rng(i).standard_normal((B, H, n, 4)), dtype=ember.float32)
                   for i, n in ((0, L), (1, S), (2, S)))
        direct = efa.create_block_mask(window_and_pad(ember.tensor([S, S - 3])), B, H, L, S, BLOCK_SIZE=block)
        np.testing.assert_array_equal(efa.flex_attention(q, k, v, block_mask=ours).numpy(),
                                      efa.flex_attention(q, k, v, block_mask=direct).numpy())


def test_block_mask_from_kv_blocks_defaults_and_errors_as_pytorch():
    num, idx = torch.tensor([[[1, 2]]], dtype=torch.int32), torch.tensor([[[[0, 1], [1, 0]]]], dtype=torch.int32)
    theirs = tfa.BlockMask.from_kv_blocks(num, idx, BLOCK_SIZE=(2, 3))
    ours = efa.BlockMask.from_kv_blocks(ember.tensor(num.numpy()), ember.tensor(idx.numpy()), BLOCK_SIZE=(2, 3))
    assert ours.shape == theirs.shape == (1, 1, 4, 6) and ours.mask_mod is efa.noop_mask
    np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
    for lib, fa in ((torch, tfa), (ember, efa)):
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            fa.BlockMask.from_kv_blocks(lib.tensor([1]), lib.tensor([0]))
        with pytest.raises(AssertionError, match="both provided or omitted"):
            fa.BlockMask.from_kv_blocks(lib.tensor([[1]]), lib.tensor([[0]]), full_kv_num_blocks=lib.tensor([[1]]))
