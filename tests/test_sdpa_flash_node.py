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
