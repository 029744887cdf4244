"""scaled_dot_product_attention's node where PyTorch's CPU takes its flash kernel (4-d inputs of one batch size,
one head size, no dropout, a mask needing no gradient; grouped-query heads too): its name,
ScaledDotProductFlashAttentionForCpuBackward0, and its three edges (query, key, value), with the same values and
gradients (PyTorch's flash node has no double backward; ember's still differentiates twice); a float mask changed in place before backward is PyTorch's error there. (Where
PyTorch takes its math composite, ember keeps its one node, named as the composite's last node: test_user42.py.)"""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, str(Path(__file__).parent))
from oracle import assert_same_grads, node_names, outcomes  # noqa: E402


def _t(m, shape, seed, rg=True):
    return m.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=rg)


CASES = {
    "plain": lambda m: dict(),
    "bool mask": lambda m: dict(attn_mask=m.tensor(np.tril(np.ones((4, 4), bool)))),
    "float mask": lambda m: dict(attn_mask=_t(m, (4, 4), 9, False)),
    "causal": lambda m: dict(is_causal=True),
    "scale": lambda m: dict(scale=0.3),
}


@pytest.mark.parametrize("case", list(CASES))
def test_flash_path_node_edges_and_gradients_as_pytorchs(case):
    out = {}
    for m in (torch, ember):
        q, k, v = (_t(m, (2, 2, 4, 8), s) for s in range(3))
        y = m.nn.functional.scaled_dot_product_attention(q, k, v, **CASES[case](m))
        (y * y).sum().backward()
        out[m] = node_names(y.grad_fn, 1), y.detach().numpy(), (q, k, v)
    assert out[ember][0] == out[torch][0]
    np.testing.assert_allclose(out[ember][1], out[torch][1], rtol=1e-10, atol=1e-12)
    assert_same_grads(out[ember][2], out[torch][2], rtol=1e-8, atol=1e-10)


def test_grouped_query_heads_take_the_flash_node_as_pytorchs():
    names = [node_names(m.nn.functional.scaled_dot_product_attention(
        _t(m, (2, 4, 4, 8), 0), _t(m, (2, 2, 4, 8), 1), _t(m, (2, 2, 4, 8), 2), enable_gqa=True).grad_fn, 1)
        for m in (torch, ember)]
    assert names[1] == names[0]


def test_only_the_query_needing_a_gradient_as_pytorchs():
    names = [node_names(m.nn.functional.scaled_dot_product_attention(
        _t(m, (2, 2, 4, 8), 0), _t(m, (2, 2, 4, 8), 1, False), _t(m, (2, 2, 4, 8), 2, False)).grad_fn, 1)
        for m in (torch, ember)]
    assert names[1] == names[0]


def test_a_float_mask_changed_in_place_before_backward_is_refused_as_pytorchs():
    def run(m):
        q, mask = _t(m, (2, 2, 4, 8), 0), m.zeros(4, 4, dtype=m.float64)
        y = m.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)
        mask.add_(1)
        y.sum().backward()

    (got, _), (want, _) = outcomes(run)
    assert isinstance(want, RuntimeError) and (type(got), str(got)) == (type(want), str(want))


def _laid(m, shape, order, pad, seed, leaves):
    """A (B, H, L, E) view of a leaf (appended to ``leaves``) whose dimensions run in ``order`` in memory (slowest
    first, E last), its rows ``pad`` elements longer than E (not dense where pad > 0): as a (B, L, H, E)
    projection's heads are."""
    memory = [shape[d] for d in order[:3]] + [shape[3] + pad]
    leaves.append(m.tensor(np.random.default_rng(seed).standard_normal(memory), requires_grad=True))
    return leaves[-1][..., :shape[3]].permute(*[order.index(d) for d in range(4)])


LAYOUTS = [(order, pad) for order in ((0, 1, 2, 3), (0, 2, 1, 3), (2, 0, 1, 3), (1, 0, 2, 3), (1, 2, 0, 3),
                                      (2, 1, 0, 3)) for pad in (0, 3)]


@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (1, 4, 6, 8), (2, 1, 5, 4), (1, 1, 5, 4)])
@pytest.mark.parametrize(("order", "pad"), LAYOUTS)
def test_flash_output_is_laid_out_as_the_query_as_pytorchs(shape, order, pad):
    """PyTorch's CPU flash kernel lays its output out as ``empty_like(query)``: the heads of a (B, L, H, E)
    projection give an output over (B, L, H, E) memory, whose ``transpose(1, 2)`` is contiguous (a GPT block's head
    merge then copies nothing); a padded (not dense) query, dense strides in its order; a size-1 dimension's stride
    as PyTorch's. Values and gradients as PyTorch's; key and value of other layouts change nothing."""
    out = {}
    for m in (torch, ember):
        leaves = []
        q = _laid(m, shape, order, pad, 0, leaves)
        k = _laid(m, (shape[0], shape[1], 7, shape[3]), (2, 0, 1, 3), 0, 1, leaves)
        v = _t(m, (shape[0], shape[1], 7, shape[3]), 2)
        y = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        (y * y).sum().backward()
        with m.no_grad():
            plain = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        out[m] = (y.stride(), plain.stride(), y.grad_fn.name(), y.transpose(1, 2).is_contiguous(),
                  y.detach().numpy(), [t.grad.numpy() for t in (*leaves, v)])
    assert out[ember][:4] == out[torch][:4]
    np.testing.assert_allclose(out[ember][4], out[torch][4], rtol=1e-10, atol=1e-12)
    for got, want in zip(out[ember][5], out[torch][5]):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpt_head_split_attention_and_merge_as_pytorchs(dtype):
    """A GPT block's heads: split a (B, T, 3C) projection, view each piece as (B, T, H, E) and transpose to
    (B, H, T, E); attention's output, transposed back, is contiguous in PyTorch (its flash kernel's layout), so
    ``contiguous()`` hands back the tensor itself; the merged rows' values and every gradient as PyTorch's."""
    out = {}
    for m in (torch, ember):
        qkv = m.tensor(np.random.default_rng(0).standard_normal((2, 6, 24)).astype(dtype), requires_grad=True)
        q, k, v = (t.view(2, 6, 2, 4).transpose(1, 2) for t in qkv.split(8, dim=2))
        y = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        t = y.transpose(1, 2)
        merged = t.contiguous().view(2, 6, 8)
        (merged * merged).sum().backward()
        out[m] = y.stride(), t.is_contiguous(), t.contiguous() is t, merged.detach().numpy(), qkv.grad.numpy()
    assert out[ember][:3] == out[torch][:3] == ((48, 4, 8, 1), True, True)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out[ember][3], out[torch][3], **tol)
    np.testing.assert_allclose(out[ember][4], out[torch][4], **tol)


def test_laid_out_output_has_the_bits_of_two_threads_and_one(monkeypatch):
    """The output laid out as the query's, computed with ember's threads splitting the heads' products
    (``stack_matmul``'s chunks, then written into the laid-out array), has the bits of one thread's."""
    from ember import _parallel
    from ember.nn._ops import attention

    chunked = []

    def counting(*args, **kwargs):
        chunked.append(args[1])
        return parallel_for(*args, **kwargs)

    parallel_for = _parallel.parallel_for
    monkeypatch.setattr(_parallel, "parallel_for", counting)
    # (and attention's own name for it: its products and softmax split over the heads at once,
    # ``policy.attention_at_once``)
    monkeypatch.setattr(attention, "parallel_for", counting)
    got = []
    threads = ember.get_num_threads()
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            qkv = ember.tensor(np.random.default_rng(0).standard_normal((4, 64, 384)).astype(np.float32))
            q, k, v = (t.view(4, 64, 4, 32).transpose(1, 2) for t in qkv.split(128, dim=2))
            y = ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            got.append((y.stride(), y.numpy().copy()))
    finally:
        ember.set_num_threads(threads)
    assert chunked  # (two threads split the stack)
    assert got[0][0] == got[1][0] == (8192, 32, 128, 1)
    np.testing.assert_array_equal(got[0][1], got[1][1])


def _transposed_last(m, shape, seed):
    """A leaf and its view of ``shape`` whose last dimension is not contiguous (stride(-1) != 1): the transpose of
    the last two dimensions of a contiguous leaf."""
    a = m.tensor(np.random.default_rng(seed).standard_normal(shape[:-2] + (shape[-1], shape[-2])), requires_grad=True)
    return a, a.transpose(-1, -2)


def _leaf(m, shape, seed, view=lambda t: t):
    a = _t(m, shape, seed)
    return a, view(a)


LAST_STRIDE_CASES = {  # (leaf, the input it gives) for query, key and value
    "query transposed": lambda m: (_transposed_last(m, (2, 3, 5, 4), 0), _leaf(m, (2, 3, 7, 4), 1),
                                   _leaf(m, (2, 3, 7, 4), 2)),
    "key transposed": lambda m: (_leaf(m, (2, 3, 5, 4), 0), _transposed_last(m, (2, 3, 7, 4), 1),
                                 _leaf(m, (2, 3, 7, 4), 2)),
    "value transposed": lambda m: (_leaf(m, (2, 3, 5, 4), 0), _leaf(m, (2, 3, 7, 4), 1),
                                   _transposed_last(m, (2, 3, 7, 4), 2)),
    "head size 1, stride 2": lambda m: (_leaf(m, (2, 3, 5, 2), 0, lambda t: t[..., ::2]), _leaf(m, (2, 3, 7, 1), 1),
                                        _leaf(m, (2, 3, 7, 1), 2)),
    "head size 1, stride 1": lambda m: (_leaf(m, (2, 3, 5, 2), 0, lambda t: t[..., 1:]), _leaf(m, (2, 3, 7, 1), 1),
                                        _leaf(m, (2, 3, 7, 1), 2)),
    "last dimension broadcast": lambda m: (_leaf(m, (2, 3, 5, 1), 0, lambda t: t.expand(2, 3, 5, 4)),
                                           _leaf(m, (2, 3, 7, 4), 1), _leaf(m, (2, 3, 7, 4), 2)),
}


@pytest.mark.parametrize("case", list(LAST_STRIDE_CASES))
def test_a_last_dimension_of_stride_other_than_1_takes_pytorchs_math_path(case):
    """PyTorch's CPU takes its flash kernel only where query, key and value each have ``stride(-1) == 1`` (a size-1
    head's too), else its math composite: the node names, output strides, values and gradients are PyTorch's."""
    out = {}
    for m in (torch, ember):
        (lq, q), (lk, k), (lv, v) = LAST_STRIDE_CASES[case](m)
        y = m.nn.functional.scaled_dot_product_attention(q, k, v)
        (y * y).sum().backward()
        out[m] = y.grad_fn.name(), y.stride(), y.detach().numpy(), [t.grad.numpy() for t in (lq, lk, lv)]
    assert out[ember][:2] == out[torch][:2]
    np.testing.assert_allclose(out[ember][2], out[torch][2], rtol=1e-10, atol=1e-12)
    for got, want in zip(out[ember][3], out[torch][3]):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
