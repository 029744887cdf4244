"""F.scaled_dot_product_attention against torch: values and gradients of query, key, value and float masks."""

import numpy as np
import pytest
import torch
from oracle import assert_close, check
from test_data_samplers import raises_like_torch

import ember
import ember.nn.functional as F


def sdpa(**kw):
    return lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


@pytest.mark.parametrize("shapes", [
    [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)],   # batch, heads, L != S, Ev != E
    [(4, 8), (5, 8), (5, 8)],                     # unbatched
    [(3, 1, 8), (3, 1, 8), (3, 1, 8)],            # size-1 sequences
    [(1, 2, 4, 8), (2, 5, 8), (2, 5, 3)],         # leading dims broadcast
    [(2, 4, 8), (1, 5, 8), (1, 5, 8)],
    [(2, 0, 8), (2, 5, 8), (2, 5, 8)],            # empty query
    [(2, 3, 8), (2, 0, 8), (2, 0, 8)],            # no keys: zeros
    [(0, 3, 8), (0, 5, 8), (0, 5, 8)],            # empty batch
])
def test_sdpa_shapes(shapes):
    check(sdpa(), shapes)


@pytest.mark.parametrize("L,S", [(4, 4), (3, 6), (6, 3), (1, 5)])
def test_sdpa_causal(L, S):
    """is_causal aligns the mask top-left when L != S, as PyTorch (tril of ones(L, S))."""
    check(sdpa(is_causal=True), [(2, 2, L, 8), (2, 2, S, 8), (2, 2, S, 8)])


@pytest.mark.parametrize("L,S,mask_kind", [(5, 5, "bool"), (3, 6, "bool"), (6, 3, "float"), (5, 5, "float")])
def test_sdpa_causal_with_mask_on_4d_inputs(L, S, mask_kind):
    """PyTorch's CPU flash kernel (4-d inputs, no dropout) takes attn_mask and is_causal together: the mask
    within the causal triangle (a row left with no key gives zeros)."""
    rng = np.random.default_rng(5)
    mask = rng.random((L, S)) > 0.4 if mask_kind == "bool" else rng.standard_normal((L, S)).astype(np.float32)
    if mask_kind == "bool":
        mask[1] = False
    check(lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m.tensor(mask),
                                                                          is_causal=True),
          [(2, 3, L, 8), (2, 3, S, 8), (2, 3, S, 8)])
    check(lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m.tensor(mask),
                                                                          is_causal=True, enable_gqa=True),
          [(1, 4, L, 8), (1, 2, S, 8), (1, 2, S, 8)])


def test_sdpa_causal_with_mask_refused_off_the_flash_path():
    """Where PyTorch's CPU runs its math composite (dropout, 3-d inputs, a mask that needs a gradient) the pair is
    its RuntimeError; empty inputs return before the check."""
    q = ember.randn(1, 2, 4, 8)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(4, 4, dtype=ember.bool), is_causal=True,
                                       dropout_p=0.5)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.zeros(4, 4, requires_grad=True), is_causal=True)
    empty = ember.randn(1, 2, 0, 8)
    out = F.scaled_dot_product_attention(empty, q, q, attn_mask=ember.ones(0, 4, dtype=ember.bool), is_causal=True,
                                         dropout_p=0.5)
    assert tuple(out.shape) == (1, 2, 0, 8)


def test_sdpa_scale_and_float64():
    check(sdpa(scale=0.3), [(2, 4, 8), (2, 5, 8), (2, 5, 8)])
    check(sdpa(is_causal=True, scale=2.0), [(2, 4, 8), (2, 4, 8), (2, 4, 8)], dtype=np.float64, atol=1e-10,
          rtol=1e-9)


@pytest.mark.parametrize("mask_shape", [(4, 5), (1, 5), (2, 1, 4, 5), (3, 1, 1), (3, 4, 5)])
def test_sdpa_bool_mask_broadcasts(mask_shape):
    mask = np.random.default_rng(3).random(mask_shape) > 0.3
    check(lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m.tensor(mask)),
          [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)])


@pytest.mark.parametrize("mask_shape", [(4, 5), (2, 1, 4, 5), (3, 4, 1)])
def test_sdpa_float_mask_with_gradient(mask_shape):
    """A float mask is added to the scores; its gradient is the scores' gradient summed to its shape."""
    check(sdpa_mask, [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), mask_shape])


def sdpa_mask(m, q, k, v, mask):
    return m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def test_sdpa_fully_masked_rows_are_zero():
    """A query row whose keys are all masked gives zeros and zero gradients (bool False or float -inf)."""
    bool_mask = np.ones((4, 5), bool)
    bool_mask[1] = False
    bool_mask[3, :4] = False
    check(lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m.tensor(bool_mask)),
          [(2, 4, 8), (2, 5, 8), (2, 5, 8)])
    float_mask = np.where(bool_mask, 0.0, -np.inf).astype(np.float32)
    check(lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m.tensor(float_mask)),
          [(2, 4, 8), (2, 5, 8), (2, 5, 8)])
    out = F.scaled_dot_product_attention(ember.randn(4, 8), ember.randn(5, 8), ember.randn(5, 8),
                                         attn_mask=ember.tensor(bool_mask))
    assert np.all(out.numpy()[1] == 0) and np.all(np.isfinite(out.numpy()))


def test_sdpa_gqa():
    check(sdpa(enable_gqa=True), [(2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 6)])
    check(sdpa(enable_gqa=True, is_causal=True), [(6, 4, 8), (2, 4, 8), (2, 4, 8)])


def test_sdpa_gradients_only_where_needed():
    """Inputs that do not require grad get none; the others still match torch."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(2, 4, 8), (2, 5, 8), (2, 5, 8)]]
    for needs in [(True, False, False), (False, True, False), (False, False, True)]:
        e = [ember.tensor(a, requires_grad=n) for a, n in zip(arrays, needs)]
        t = [torch.tensor(a, requires_grad=n) for a, n in zip(arrays, needs)]
        F.scaled_dot_product_attention(*e, is_causal=True).sum().backward()
        torch.nn.functional.scaled_dot_product_attention(*t, is_causal=True).sum().backward()
        for ei, ti in zip(e, t):
            assert (ei.grad is None) == (ti.grad is None)
            if ti.grad is not None:
                assert_close(ei.grad, ti.grad)


def test_sdpa_dropout():
    """Dropout zeroes attention probabilities and scales the rest by 1/(1-p); p=1 gives zeros; the gradient
    matches the same computation written with explicit ops and the same mask."""
    ember.manual_seed(0)
    q, k, v = (ember.randn(2, 6, 8, requires_grad=True) for _ in range(3))
    assert np.all(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).detach().numpy() == 0)
    ember.manual_seed(1)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    ember.manual_seed(1)  # the same draw as the op's dropout mask
    from ember.nn._ops.dropout import dropout_mask
    dmask = ember.tensor(dropout_mask((2, 6, 6), 0.5, np.float32))
    assert set(np.unique(dmask.numpy())) <= {0.0, 2.0}
    ref = (ember.softmax(q @ k.transpose(-1, -2) / np.sqrt(8), -1) * dmask) @ v
    assert_close(out, ref)
    g = ember.randn(2, 6, 8)
    grads = ember.autograd.grad(out, (q, k, v), g)
    ref_grads = ember.autograd.grad(ref, (q, k, v), g)
    for a, b in zip(grads, ref_grads):
        assert_close(a, b)


def test_sdpa_errors_as_pytorch():
    q, k, v = ember.randn(2, 4, 8), ember.randn(2, 5, 8), ember.randn(2, 5, 8)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.ones(4, 5, dtype=ember.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="at least 2 dimensional"):
        F.scaled_dot_product_attention(ember.randn(8), ember.randn(8), ember.randn(8))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(q.double(), k, v)
    with pytest.raises(RuntimeError, match="attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.zeros(4, 5, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.zeros(4, 5).double())
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        F.scaled_dot_product_attention(q, ember.randn(3, 5, 8), ember.randn(3, 5, 8))
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.zeros(3, 4, 5))
    with pytest.raises(RuntimeError, match="embedding size"):
        F.scaled_dot_product_attention(q, ember.randn(2, 5, 7), v)
    with pytest.raises(RuntimeError, match="sequence length"):
        F.scaled_dot_product_attention(q, k, ember.randn(2, 6, 8))
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(ember.randn(2, 4, 4, 8), ember.randn(2, 3, 5, 8), ember.randn(2, 3, 5, 8),
                                       enable_gqa=True)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):  # heads differ without enable_gqa
        F.scaled_dot_product_attention(ember.randn(2, 4, 4, 8), ember.randn(2, 2, 5, 8), ember.randn(2, 2, 5, 8))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.zeros(3, 2, 4, 5))


_EMPTY_SDPA = [((2, 3, 0, 4), (2, 3, 5, 4), (2, 3, 5, 6)), ((0, 3, 4, 4), (0, 3, 5, 4), (0, 3, 5, 6)),
               ((2, 3, 4, 4), (2, 3, 5, 4), (2, 3, 5, 0)), ((2, 3, 4, 4), (2, 3, 0, 4), (2, 3, 0, 6)),
               ((3, 0, 4), (3, 5, 4), (3, 5, 6))]
_ZERO_E = ((2, 3, 4, 0), (2, 3, 5, 0), (2, 3, 5, 6))  # (keys, an empty embedding: not PyTorch's empty path)


# (a 1-d mask on PyTorch's flash path is its IndexError, which ember does not reproduce: not with _ZERO_E)
@pytest.mark.parametrize("shapes,mask_shape", [(s, m) for s in _EMPTY_SDPA + [_ZERO_E] for m in
                                               [(7, 5), (0, 0), (5,), (2, 1, 3, 5), (1, 1, 1, 7, 7), (4, 5)]
                                               if not (s is _ZERO_E and len(m) == 1)])
@pytest.mark.parametrize("mask_dtype", ["bool", "float32"])
@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_mask_of_an_empty_result_or_no_keys_as_pytorch(shapes, mask_shape, mask_dtype, is_causal):
    # PyTorch's path for an empty result or no keys neither checks the mask's shape nor uses it; with a zero
    # embedding size and keys the mask is checked as usual
    def run(m):
        q, k, v = (m.ones(s, requires_grad=True) for s in shapes)
        mask = m.ones(mask_shape, dtype=getattr(m, mask_dtype), requires_grad=mask_dtype == "float32")
        out = m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
        out.sum().backward()
        return out, q.grad, k.grad, v.grad, mask.grad

    try:
        expected = run(torch)
    except RuntimeError:
        e_msg, t_msg = raises_like_torch(run, RuntimeError)
        assert t_msg.split(" at non-singleton")[0] in e_msg or t_msg == e_msg
        return
    got = run(ember)
    assert got[0].grad_fn.name() == expected[0].grad_fn.name()
    for e, t in zip(got, expected):
        assert (e is None) == (t is None)
        if t is not None:
            assert tuple(e.shape) == tuple(t.shape)
            assert_close(e, t, 0, 0)
