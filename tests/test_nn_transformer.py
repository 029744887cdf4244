"""Transformer layers against torch with the same weights: outputs, input, mask and parameter gradients."""

import numpy as np
import pytest
import torch
from nn_oracle import compare_module
from oracle import assert_close

import ember
import ember.nn as nn


def randn(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def wrap(fw, module, **kwargs):
    """``module`` called with fixed keyword arguments (is_causal, masks as arrays), as a Module of ``fw``."""
    kwargs = {k: fw.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}

    class Call(fw.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = module

        def forward(self, *args):
            return self.m(*args, **kwargs)

    return Call()


def pair(name, *args, kwargs_e=None, kwargs_t=None, **kwargs):
    """The same layer in ember and torch, torch's weights to be loaded into ember by compare_module."""
    return (getattr(nn, name)(*args, **{**kwargs, **(kwargs_e or {})}),
            getattr(torch.nn, name)(*args, **{**kwargs, **(kwargs_t or {})}))


CAUSAL = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
KPM = np.zeros((3, 5), bool)
KPM[1, 3:] = True


@pytest.mark.parametrize("kwargs", [
    {}, {"norm_first": True}, {"activation": "gelu"}, {"bias": False}, {"layer_norm_eps": 1e-3},
    {"batch_first": True}, {"batch_first": True, "norm_first": True, "activation": "gelu"},
])
@pytest.mark.parametrize("train", [True, False])
def test_encoder_layer(kwargs, train):
    drop = {"dropout": 0.0} if train else {}
    e, t = pair("TransformerEncoderLayer", 8, 2, 16, **drop, **kwargs)
    x = randn(3, 5, 8) if kwargs.get("batch_first") else randn(5, 3, 8)
    compare_module(e, t, x, train=train)
    compare_module(e, t, x, CAUSAL, KPM, train=train)


def test_encoder_layer_callable_activations_and_unbatched():
    for act_e, act_t in [(ember.nn.functional.gelu, torch.nn.functional.gelu), (nn.SiLU(), torch.nn.SiLU()),
                         (lambda x: x.tanh(), lambda x: x.tanh())]:
        e, t = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0, kwargs_e={"activation": act_e},
                    kwargs_t={"activation": act_t})
        compare_module(e, t, randn(5, 3, 8))
    e, t = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0)
    compare_module(e, t, randn(5, 8), CAUSAL)  # unbatched (S, E)
    e, t = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0, activation="gelu")
    compare_module(e, t, randn(5, 3, 8, dtype=np.float64).astype(np.float32), randn(5, 5, seed=3))  # float mask grad


def test_encoder_layer_is_causal():
    e, t = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0, batch_first=True)
    compare_module(wrap(ember, e, is_causal=True), wrap(torch, t, is_causal=True), randn(3, 5, 8), CAUSAL)


@pytest.mark.parametrize("is_causal", [None, True, False])
def test_encoder_stack(is_causal):
    layer_e, layer_t = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0)
    e = nn.TransformerEncoder(layer_e, 2, norm=nn.LayerNorm(8))
    t = torch.nn.TransformerEncoder(layer_t, 2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False)
    with torch.no_grad():  # layers start as copies; make them differ so a shared parameter would show
        for p in t.parameters():
            p.add_(0.1 * torch.randn_like(p))
    kw = {"is_causal": is_causal}
    compare_module(wrap(ember, e, **kw), wrap(torch, t, **kw), randn(5, 3, 8), CAUSAL)
    compare_module(wrap(ember, e, **kw), wrap(torch, t, **kw), randn(5, 3, 8), CAUSAL, KPM)
    compare_module(wrap(ember, e, src_key_padding_mask=KPM), wrap(torch, t, src_key_padding_mask=KPM),
                   randn(5, 3, 8), train=False)


def test_encoder_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    enc = nn.TransformerEncoder(layer, 3, enable_nested_tensor=True)
    t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16), 3, enable_nested_tensor=False)
    assert list(enc.state_dict()) == list(t.state_dict())
    assert "layers.0.self_attn.in_proj_weight" in enc.state_dict()
    w0, w1 = enc.layers[0].self_attn.in_proj_weight, enc.layers[1].self_attn.in_proj_weight
    assert w0 is not w1 and w0 is not layer.self_attn.in_proj_weight
    assert np.array_equal(w0.detach().numpy(), w1.detach().numpy())
    with ember.no_grad():
        w0.add_(1.0)
    assert not np.array_equal(w0.detach().numpy(), w1.detach().numpy())
    assert len(list(enc.parameters())) == 3 * len(list(layer.parameters()))


@pytest.mark.parametrize("kwargs", [{}, {"norm_first": True, "activation": "gelu"}, {"batch_first": True},
                                    {"bias": False}])
def test_decoder_layer(kwargs):
    e, t = pair("TransformerDecoderLayer", 8, 2, 16, dropout=0.0, **kwargs)
    tgt, mem = randn(3, 4, 8), randn(3, 6, 8, seed=1)
    if not kwargs.get("batch_first"):
        tgt, mem = tgt.transpose(1, 0, 2).copy(), mem.transpose(1, 0, 2).copy()
    tgt_mask = CAUSAL[:4, :4].copy()
    mem_mask = np.random.default_rng(1).random((4, 6)) > 0.8
    mem_kpm = np.zeros((3, 6), bool)
    mem_kpm[2, 4:] = True
    compare_module(e, t, tgt, mem)
    kw = {"tgt_mask": tgt_mask, "memory_mask": mem_mask, "memory_key_padding_mask": mem_kpm}
    compare_module(wrap(ember, e, **kw), wrap(torch, t, **kw), tgt, mem)
    compare_module(e, t, tgt, mem, tgt_mask, mem_mask, train=False)


def test_decoder_stack_and_causal_detection():
    layer_e, layer_t = pair("TransformerDecoderLayer", 8, 2, 16, dropout=0.0)
    e = nn.TransformerDecoder(layer_e, 2, norm=nn.LayerNorm(8))
    t = torch.nn.TransformerDecoder(layer_t, 2, norm=torch.nn.LayerNorm(8))
    tgt, mem = randn(4, 3, 8), randn(6, 3, 8, seed=1)
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(4).numpy()
    compare_module(e, t, tgt, mem, tgt_mask)
    compare_module(wrap(ember, e, tgt_is_causal=True), wrap(torch, t, tgt_is_causal=True), tgt, mem, tgt_mask)
    bool_causal = np.triu(np.ones((4, 4), bool), 1)
    compare_module(e, t, tgt, mem, bool_causal)


def test_transformer():
    kw = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 1, "dim_feedforward": 16}
    e, t = nn.Transformer(**kw, dropout=0.0), torch.nn.Transformer(**kw, dropout=0.0)
    assert list(e.state_dict()) == list(t.state_dict())
    src, tgt = randn(6, 3, 8), randn(4, 3, 8, seed=1)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(4).numpy()
    src_kpm = np.zeros((3, 6), bool)
    src_kpm[0, 4:] = True
    masks = {"tgt_mask": tgt_mask, "src_key_padding_mask": src_kpm, "memory_key_padding_mask": src_kpm}
    compare_module(wrap(ember, e, **masks), wrap(torch, t, **masks), src, tgt, atol=1e-4)
    e, t = nn.Transformer(**kw, batch_first=True, norm_first=True), torch.nn.Transformer(**kw, batch_first=True,
                                                                                          norm_first=True)
    compare_module(e, t, randn(3, 6, 8), randn(3, 4, 8, seed=1), train=False, atol=1e-4)


def test_transformer_init_and_errors():
    ember.manual_seed(0)
    m = nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=64)
    w = m.encoder.layers[0].linear1.weight.detach().numpy()  # xavier_uniform_ over (64, 16)
    bound = np.sqrt(6 / (16 + 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.all(m.encoder.norm.weight.detach().numpy() == 1)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        m(ember.randn(5, 2, 16), ember.randn(4, 3, 16))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        m(ember.randn(5, 2, 8), ember.randn(4, 2, 8))
    for act in ("relu", "gelu", nn.GELU(), nn.SiLU()):
        assert (nn.TransformerEncoderLayer(8, 2, activation=act).activation_relu_or_gelu
                == torch.nn.TransformerEncoderLayer(8, 2, activation=act if isinstance(act, str) else
                                                    getattr(torch.nn, type(act).__name__)()).activation_relu_or_gelu)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("sz", [0, 1, 4])
def test_generate_square_subsequent_mask(sz):
    ours = nn.Transformer.generate_square_subsequent_mask(sz)
    assert_close(ours, torch.nn.Transformer.generate_square_subsequent_mask(sz))
    assert_close(nn.Transformer.generate_square_subsequent_mask(sz, dtype=ember.float64),
                 torch.nn.Transformer.generate_square_subsequent_mask(sz, dtype=torch.float64))
