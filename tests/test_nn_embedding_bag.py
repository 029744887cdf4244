"""EmbeddingBag / F.embedding_bag against PyTorch: every mode, 2-D and offsets input, include_last_offset, empty
bags, padding_idx, per_sample_weights (and their gradient), scale_grad_by_freq, max_norm, sparse gradients, float32
and float64, the module's parameters, repr and errors."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
import ember.nn as nn

TOL = {np.float32: dict(atol=1e-5, rtol=1e-5), np.float64: dict(atol=1e-12, rtol=1e-12)}


def run(m, weight, inp, offsets=None, psw=None, up=None, **kwargs):
    """F.embedding_bag in framework m: (output, weight grad, per_sample_weights grad)."""
    w = m.tensor(weight, requires_grad=True)
    p = None if psw is None else m.tensor(psw, requires_grad=True)
    out = m.nn.functional.embedding_bag(m.tensor(inp), w, None if offsets is None else m.tensor(offsets),
                                        per_sample_weights=p, **kwargs)
    out.backward(m.tensor(up))
    grad = w.grad.to_dense() if w.grad.is_sparse else w.grad
    return out, grad, None if p is None else p.grad


def compare(dtype, inp, offsets=None, psw=False, num=10, dim=4, seed=0, **kwargs):
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((num, dim)).astype(dtype)
    weights = rng.standard_normal(np.shape(inp)).astype(dtype) if psw else None
    bags = np.shape(inp)[0] if np.ndim(inp) == 2 else len(offsets) - bool(kwargs.get("include_last_offset"))
    up = rng.standard_normal((bags, dim)).astype(dtype)
    ours, theirs = run(ember, weight, inp, offsets, weights, up, **kwargs), run(torch, weight, inp, offsets, weights,
                                                                                 up, **kwargs)
    for name, a, t in zip(("output", "weight grad", "per_sample_weights grad"), ours, theirs):
        if t is not None:
            assert_close(a, t, msg=name, **TOL[dtype])


IDX_1D = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0, 7], np.int64)
CASES = [
    (np.array([[1, 2, 4, 5], [4, 3, 2, 9], [0, 0, 0, 7]], np.int64), None, {}),
    (IDX_1D, np.array([0, 4, 4, 9]), {}),                              # an empty bag
    (IDX_1D, np.array([0, 3, 3, 11]), {"include_last_offset": True}),  # empty bags, one at the end
    (IDX_1D, np.array([0, 5]), {"padding_idx": 4}),
    (np.array([[4, 4], [1, 4]], np.int64), None, {"padding_idx": -6}),  # a bag of padding only
    (np.array([3, 1, 1, 3, 7, 7]), np.array([0, 3]), {"scale_grad_by_freq": True}),  # see test_scale_grad_by_freq
    (IDX_1D, np.array([0, 1, 6]), {"sparse": True}),
    (IDX_1D, np.array([0, 1, 6]), {"sparse": True, "padding_idx": 4}),
    (np.zeros(0, np.int64), np.array([0, 0]), {}),                      # no lookups at all
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("inp,offsets,kwargs", CASES)
def test_matches_torch(dtype, mode, inp, offsets, kwargs):
    if mode == "max" and (kwargs.get("scale_grad_by_freq") or kwargs.get("sparse")):
        pytest.skip("not supported by max mode (tested in test_errors)")
    compare(dtype, inp, offsets, mode=mode, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("inp,offsets,kwargs", CASES[:6])
def test_per_sample_weights(dtype, inp, offsets, kwargs):
    compare(dtype, inp, offsets, psw=True, mode="sum", **kwargs)


def test_lookups_past_the_last_offset_are_left_out():
    """offsets[-1] short of the input's length with include_last_offset: PyTorch's float32 forward leaves the rest
    out (its float64 path adds them to the last bag); ember leaves them out in every dtype. PyTorch's backward
    gives the left-out rows (0 and 7, looked up only past offset 8) values read from memory it never wrote (they
    changed with the tests run before): ember's are 0, and every other row is compared."""
    dtype, offsets, kw = np.float32, np.array([0, 2, 6, 8]), dict(mode="sum", include_last_offset=True)
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((10, 4)).astype(dtype)
    up = rng.standard_normal((3, 4)).astype(dtype)
    ours, theirs = (run(m, weight, IDX_1D, offsets, None, up, **kw) for m in (ember, torch))
    assert_close(ours[0], theirs[0], msg="output", **TOL[dtype])
    left_out = np.setdiff1d(IDX_1D[8:], IDX_1D[:8])
    kept = np.setdiff1d(np.arange(10), left_out)
    assert list(left_out) == [0, 7] and not ours[1][left_out].any()
    assert_close(ours[1][kept], theirs[1][kept], msg="weight grad", **TOL[dtype])


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq(mode):
    """Each lookup's gradient divided by its index's frequency in the batch (as documented). PyTorch's CPU kernel
    divides by the frequency of another index where frequencies differ (test_matches_torch has equal ones)."""
    weight, idx = ember.ones(10, 2, requires_grad=True), np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0, 7])
    ember.nn.functional.embedding_bag(ember.tensor(idx), weight, ember.tensor([0, 6]), mode=mode,
                                      scale_grad_by_freq=True).sum().backward()
    bag, count = (np.arange(11) >= 6).astype(int), np.array([6, 5])
    share = 1 / count[bag] if mode == "mean" else np.ones(11)
    expected = np.zeros(10)
    np.add.at(expected, idx, share / np.bincount(idx, minlength=10)[idx])
    np.testing.assert_allclose(weight.grad.numpy(), np.repeat(expected[:, None], 2, 1), rtol=1e-6)


def test_max_ties_send_the_gradient_to_the_first_maximum():
    compare(np.float64, np.array([[3, 3, 1]], np.int64), mode="max")


def test_max_norm_renormalises_the_used_rows():
    weight = np.random.default_rng(0).standard_normal((6, 3)) * 3
    ew, tw = ember.tensor(weight), torch.tensor(weight)
    idx = np.array([[0, 2], [2, 5]])
    eo = ember.nn.functional.embedding_bag(ember.tensor(idx), ew, max_norm=1.0)
    to = torch.nn.functional.embedding_bag(torch.tensor(idx), tw, max_norm=1.0)
    assert_close(eo, to, atol=1e-6)
    assert_close(ew, tw, atol=1e-6)


def test_module():
    em, tm = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2), torch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2)
    assert repr(em) == repr(tm) and list(em.state_dict()) == list(tm.state_dict())
    assert np.all(em.weight.detach().numpy()[2] == 0) and em.weight.shape == tm.weight.shape
    assert repr(nn.EmbeddingBag(5, 2, max_norm=1.0, scale_grad_by_freq=True)) == \
        repr(torch.nn.EmbeddingBag(5, 2, max_norm=1.0, scale_grad_by_freq=True))
    em.load_state_dict({"weight": ember.tensor(tm.weight.detach().numpy())})
    idx, offs, psw = np.array([1, 2, 3, 2, 5]), np.array([0, 2]), np.linspace(0.5, 1.5, 5).astype(np.float32)
    eo = em(ember.tensor(idx), ember.tensor(offs), ember.tensor(psw))
    to = tm(torch.tensor(idx), torch.tensor(offs), torch.tensor(psw))
    assert_close(eo, to)
    pre = ember.randn(4, 2)
    bag = nn.EmbeddingBag.from_pretrained(pre, mode="max")
    assert not bag.weight.requires_grad and bag.mode == "max"
    assert_close(bag(ember.tensor([[0, 1]])), pre.numpy()[:2].max(0, keepdims=True))


def test_errors():
    F, w = nn.functional, ember.randn(10, 3)
    idx1, idx2 = ember.tensor([1, 2, 3]), ember.tensor([[1, 2]])
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(idx2, w, ember.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(idx1, w)
    with pytest.raises(ValueError, match="input has to be 1D or 2D Tensor"):
        F.embedding_bag(ember.tensor([[[1]]]), w)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(idx2, w, mode="min")
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient"):
        F.embedding_bag(idx2, w, mode="max", scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        F.embedding_bag(idx2, w, mode="max", sparse=True)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(idx2, w, per_sample_weights=ember.ones(1, 2))
    with pytest.raises(ValueError, match="must have the same shape as the input"):
        F.embedding_bag(idx2, w, mode="sum", per_sample_weights=ember.ones(2))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(idx1, w, ember.tensor([1]))
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater than input's length 3"):
        F.embedding_bag(idx1, w, ember.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="not in the valid range"):
        F.embedding_bag(ember.tensor([[10]]), w)
    out = F.embedding_bag(idx2, ember.randn(10, 3, requires_grad=True), sparse=True, scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
        out.sum().backward()
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(3, 2, padding_idx=3)
