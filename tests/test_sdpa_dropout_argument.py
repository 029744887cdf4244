"""``scaled_dot_product_attention``'s ``dropout_p`` as PyTorch's CPU dispatch reads it: a negative probability
leaves a 4-d input eligible for the flash kernel, which refuses any dropout (its RuntimeError); on the math
composite (3-d heads) it drops nothing; above 1 the composite's dropout refuses it (an empty input does not get
there); a string is the argument parser's TypeError."""

import warnings

import numpy as np
import pytest
import torch

import ember

MASK = np.tril(np.ones((4, 4), bool))


def _attention(lib, shape, grad=False, **kw):
    g = np.random.default_rng(0)
    q = lib.tensor(g.standard_normal(shape).astype(np.float32), requires_grad=grad)
    kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = lib.nn.functional.scaled_dot_product_attention(q, q * 1, q * 2, **kw)
    except (RuntimeError, TypeError) as err:
        return type(err).__name__, str(err)
    grads = None
    if grad:
        out.sum().backward()
        grads = q.grad.numpy().round(5).tolist()
    return "ok", out.detach().numpy().round(5).tolist(), grads


@pytest.mark.parametrize("shape", [(1, 2, 4, 8), (2, 4, 8), (1, 2, 4, 0), (0, 2, 4, 8)])
@pytest.mark.parametrize("kw", [dict(dropout_p=-0.1), dict(dropout_p=-1), dict(dropout_p=np.float64(-0.5)),
                                dict(dropout_p=1.5), dict(dropout_p=-0.1, attn_mask=MASK),
                                dict(dropout_p=-0.1, is_causal=True), dict(dropout_p=-0.1, attn_mask=MASK, is_causal=True),
                                dict(dropout_p=1.5, attn_mask=MASK, is_causal=True), dict(dropout_p="0.1"),
                                dict(dropout_p=None), dict(dropout_p=float("nan"))], ids=str)
def test_dropout_probability_as_pytorchs(shape, kw):
    if "attn_mask" in kw and 0 in shape[-2:]:
        pytest.skip("a mask of another sequence length")
    assert _attention(ember, shape, **kw) == _attention(torch, shape, **kw)


def test_negative_dropout_on_the_math_composite_drops_nothing_and_differentiates():
    got, want = _attention(ember, (2, 4, 8), grad=True, dropout_p=-0.25), _attention(torch, (2, 4, 8), grad=True,
                                                                                        dropout_p=-0.25)
    assert got[0] == want[0] == "ok"
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-5)
    assert got[1] == _attention(ember, (2, 4, 8), dropout_p=0.0)[1]
