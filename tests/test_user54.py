"""Found by running small NLP programs (tokenizer, encoder, seq2seq, decoding) under PyTorch and ember side by side:
each checked against torch on the same weights and inputs."""

import warnings

import numpy as np
import pytest
import torch
from nn_oracle import ember_state
from oracle import assert_close

import ember


def _encoders(norm=True, **layer_kw):
    """The same TransformerEncoder (2 layers, batch_first by default, optional final LayerNorm) in torch and ember,
    torch's weights loaded into ember; both left with PyTorch's defaults (enable_nested_tensor=True)."""
    layer_kw = {"dropout": 0.0, "batch_first": True, **layer_kw}
    made = []
    for m in (torch, ember):
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the nested-tensor route's "not used because ..." warning
            made.append(m.nn.TransformerEncoder(m.nn.TransformerEncoderLayer(8, 2, 16, **layer_kw), 2,
                                                norm=m.nn.LayerNorm(8) if norm else None))
    t, e = made
    with torch.no_grad():  # a final norm with a bias other than 0 shows where padded positions were zeroed
        for p in t.parameters():
            p.add_(0.1 * torch.randn_like(p))
    e.load_state_dict(ember_state(t))
    return t, e


def _padding(lengths, seq=5, left=False):
    """(batch, seq) bool key padding mask, True = padded: each row's last (first with ``left``) positions."""
    pos = np.arange(seq)[None, :]
    lengths = np.asarray(lengths)[:, None]
    return pos < seq - lengths if left else pos >= lengths


X = np.random.default_rng(0).standard_normal((3, 5, 8)).astype(np.float32)


def _run(m, mod, x, train=False, grad=False, float_mask=False, lengths=(5, 3, 0), left=False, **kw):
    mod.train(train)
    kpm = m.tensor(_padding(lengths, x.shape[1], left))
    if float_mask:
        kpm = m.zeros(kpm.shape).masked_fill(kpm, float("-inf"))
    with m.set_grad_enabled(grad), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's "nested tensors are a prototype" warning, once per process
        return mod(m.tensor(x), src_key_padding_mask=kpm, **kw).detach()


@pytest.mark.parametrize("case", [
    {},                                  # eval without gradients: PyTorch's nested-tensor route
    {"float_mask": True},                # a float mask: padded where it is not 0
    {"lengths": (5, 3, 2)},              # no fully padded sequence, every position of the last column padded
    {"norm": False},
    {"train": True},                     # the general path: every position computed
    {"grad": True},
    {"left": True, "lengths": (5, 3, 2)},  # padding not left-aligned: the general path
    {"mask": True, "lengths": (5, 3, 2)},  # a src mask beside the padding mask: the general path
    {"layer_kw": {"norm_first": True}, "lengths": (5, 3, 2)},  # layers that do not allow the route
])
def test_encoder_nested_route_zeroes_padded_positions(case):
    """PyTorch's TransformerEncoder, in eval() without gradients with a left-aligned src_key_padding_mask (and
    enable_nested_tensor), runs its layers on nested tensors and pads the result with zeros: padded positions are 0
    before the final norm (its bias after). Elsewhere, and at unpadded positions, the layers' computed values."""
    case = dict(case)
    t, e = _encoders(norm=case.pop("norm", True), **case.pop("layer_kw", {}))
    if case.pop("mask", False):
        case["mask"] = np.zeros((5, 5), bool)
    t_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in case.items()}
    e_kw = {k: ember.tensor(v) if isinstance(v, np.ndarray) else v for k, v in case.items()}
    want = _run(torch, t, X, **t_kw)
    got = _run(ember, e, X, **e_kw)
    assert_close(got, want, atol=1e-5, rtol=1e-4)


def test_encoder_nested_route_follows_mask_check_and_fastpath_switch():
    """``mask_check=False`` leaves the alignment unchecked (a left-aligned mask still takes the route), and
    ``torch.backends.mha.set_fastpath_enabled(False)`` turns the route off, in both libraries."""
    t, e = _encoders()
    t.mask_check = e.mask_check = False
    assert_close(_run(ember, e, X), _run(torch, t, X))
    assert ember.backends.mha.get_fastpath_enabled() is torch.backends.mha.get_fastpath_enabled() is True
    for m in (torch, ember):
        m.backends.mha.set_fastpath_enabled(False)
    try:
        assert ember.backends.mha.get_fastpath_enabled() is False
        want = _run(torch, t, X)
        assert_close(_run(ember, e, X), want)
        assert want[2].abs().sum() > 0  # computed, not zeroed
    finally:
        for m in (torch, ember):
            m.backends.mha.set_fastpath_enabled(True)
