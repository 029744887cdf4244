"""``torch.embedding_bag`` (the native operator under ``F.embedding_bag``: weight first, 1-D indices with offsets, the
mode as a number, four results) against PyTorch: the output and its gradients, offset2bag, bag_size and
max_indices as PyTorch's CPU kernel fills them, the integer types and the errors."""

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_error

import ember

W = np.random.default_rng(0).standard_normal((10, 3)).astype(np.float32)
IDX = [1, 2, 4, 5, 4, 3, 2, 9]
CASES = {
    "offsets": dict(offs=[0, 2, 2, 5]),
    "include_last_offset": dict(offs=[0, 2, 2, 5, 8], ilo=True),
    "padding_idx": dict(offs=[0, 2, 3, 5], pad=2),
    "padding_idx negative": dict(offs=[0, 2, 3, 5], pad=-1),
    "a bag of padding only": dict(offs=[0, 2, 3, 5], pad=4, idx=[4, 4, 1, 4, 2, 3, 2, 9]),
    "per_sample_weights": dict(offs=[0, 2, 2, 5], psw=True),
    "per_sample_weights with padding": dict(offs=[0, 2, 2, 5], psw=True, pad=2),
    "empty": dict(offs=[0, 0], idx=[]),
    "float64": dict(offs=[0, 3], dtype="float64"),
    "int32": dict(offs=[0, 3, 6], itype="int32"),
    "int32 indices, int64 offsets": dict(offs=[0, 3, 6], itype="int32", otype="int64"),
}


def _run(lib, mode, offs, idx=IDX, ilo=False, pad=None, psw=False, dtype="float32", itype="int64", otype=None):
    w = lib.tensor(W).to(getattr(lib, dtype)).requires_grad_()
    i = lib.tensor(np.array(idx, dtype=itype))
    o = lib.tensor(np.array(offs, dtype=otype or itype))
    p = lib.tensor(np.linspace(-1, 2, len(idx)).astype(dtype), requires_grad=True) if psw else None
    out, offset2bag, bag_size, max_indices = lib.embedding_bag(w, i, o, False, mode, False, p, ilo, pad)
    (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
    return out, w.grad, p.grad if psw else None, offset2bag, bag_size, max_indices


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("case", list(CASES))
def test_the_four_results_and_the_gradients_are_pytorchs(mode, case):
    kw = CASES[case]
    if kw.get("psw") and mode != 0:
        assert_same_error(lambda lib: _run(lib, mode, **kw))
        return
    got, want = _run(ember, mode, **kw), _run(torch, mode, **kw)
    for g, t in zip(got[:3], want[:3]):
        if t is None:
            assert g is None
        else:
            assert_close(g, t, atol=1e-5)
    for g, t in zip(got[3:], want[3:]):  # offset2bag, bag_size, max_indices: exact, with their integer type
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert g.tolist() == t.tolist()
    assert not any(r.requires_grad for r in got[3:]) and got[0].grad_fn.name() == want[0].grad_fn.name()


@pytest.mark.parametrize("call", [
    lambda lib: lib.embedding_bag(lib.zeros(4, 2), lib.tensor([1, 2]), None),
    lambda lib: lib.embedding_bag(lib.zeros(4, 2), lib.tensor([1, 2]), lib.tensor([0]), False, "sum"),
    lambda lib: lib.embedding_bag(lib.zeros(4, 2), lib.tensor([1, 2]), lib.tensor([0]), False, 3),
    lambda lib: lib.embedding_bag(lib.zeros(4, 2), lib.tensor([1, 2]), lib.tensor([[0]])),
    lambda lib: lib.embedding_bag(lib.zeros(4, 2), lib.tensor([1, 2]), lib.tensor([0, 3])),
    lambda lib: lib.embedding_bag(lib.zeros(4, 2), lib.tensor([1, 2]), lib.tensor([0]), False, 1, False,
                                  lib.ones(2)),
], ids=["offsets None", "mode a str", "mode 3", "2-D offsets", "offsets past the end", "weights with mean"])
def test_errors_are_pytorchs(call):
    assert_same_error(call)


def test_it_is_what_the_functional_computes():
    idx, offs = ember.tensor(IDX), ember.tensor([0, 2, 2, 5])
    w = ember.tensor(W)
    for mode, name in enumerate(["sum", "mean", "max"]):
        assert_close(ember.embedding_bag(w, idx, offs, mode=mode)[0],
                     ember.nn.functional.embedding_bag(idx, w, offs, mode=name))
