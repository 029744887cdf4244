"""autocast("cpu") casts as PyTorch's CPU autocast: the lower-precision ops return the region's dtype, the
float32 ops float32, the rest their inputs' dtypes; values and gradients against torch."""

import numpy as np
import pytest
import torch

import ember

OPS = {
    "matmul": lambda m, x, w: x @ w.T, "mm": lambda m, x, w: m.mm(x, w.T), "bmm": lambda m, x, w: m.bmm(x[None], w.T[None]),
    "addmm": lambda m, x, w: m.addmm(m.zeros(5), x, w.T), "linear": lambda m, x, w: m.nn.functional.linear(x, w),
    "baddbmm": lambda m, x, w: m.baddbmm(m.zeros(1, 4, 5), x[None], w.T[None]),
    "einsum": lambda m, x, w: m.einsum("ij,kj->ik", x, w),
    "conv1d": lambda m, x, w: m.nn.functional.conv1d(x[None], w[:2, :4, None].expand(2, 4, 3).contiguous()),
    "conv_transpose1d": lambda m, x, w: m.nn.functional.conv_transpose1d(x[None], w[:4, :2, None]),
    "sdpa": lambda m, x, w: m.nn.functional.scaled_dot_product_attention(x[None], x[None], x[None]),
    "prelu": lambda m, x, w: m.nn.functional.prelu(x, m.ones(1)),
    # the layers, which reach the convolution by another path than the functions (seeded: the same weights)
    "Conv1d layer": lambda m, x, w: (m.manual_seed(0), m.nn.Conv1d(4, 2, 3)(x[None]))[1],
    "Conv2d layer": lambda m, x, w: (m.manual_seed(0), m.nn.Conv2d(1, 2, 3, padding=1)(x[None, None]))[1],
    "Conv2d layer reflect": lambda m, x, w: (m.manual_seed(0), m.nn.Conv2d(1, 2, 3, padding=1,
                                                                         padding_mode="reflect")(x[None, None]))[1],
    "Conv3d layer": lambda m, x, w: (m.manual_seed(0), m.nn.Conv3d(1, 1, 2)(x.reshape(1, 1, 2, 4, 4)))[1],
    "ConvTranspose1d layer": lambda m, x, w: (m.manual_seed(0), m.nn.ConvTranspose1d(4, 2, 3)(x[None]))[1],
    "ConvTranspose2d layer": lambda m, x, w: (m.manual_seed(0), m.nn.ConvTranspose2d(1, 2, 2, 2)(x[None, None]))[1],
    "LazyConv2d layer": lambda m, x, w: (m.manual_seed(0), m.nn.LazyConv2d(2, 3)(x[None, None]))[1],
    "softmax": lambda m, x, w: x.softmax(-1), "layer_norm": lambda m, x, w: m.nn.functional.layer_norm(x, (8,)),
    "gelu": lambda m, x, w: m.nn.functional.gelu(x), "sum": lambda m, x, w: x.sum(), "add_bf16": lambda m, x, w: x.bfloat16() + x,
    "softmax_bf16": lambda m, x, w: x.bfloat16().softmax(-1),
    "cross_entropy_bf16": lambda m, x, w: m.nn.functional.cross_entropy(x.bfloat16(), m.tensor([0, 1, 2, 3])),
    "mse_bf16": lambda m, x, w: m.nn.functional.mse_loss(x.bfloat16(), x.bfloat16()),
    "nll_bf16": lambda m, x, w: m.nn.functional.nll_loss(x.bfloat16(), m.tensor([0, 1, 2, 3])),
    "prod_bf16": lambda m, x, w: x.bfloat16().prod(), "cdist_bf16": lambda m, x, w: m.cdist(x.bfloat16(), x.bfloat16()),
    "bce_logits_bf16": lambda m, x, w: m.nn.functional.binary_cross_entropy_with_logits(x.bfloat16(), x.sigmoid().bfloat16()),
}


def _inputs(m):
    rng = np.random.default_rng(0)
    return (m.tensor(rng.standard_normal((4, 8)).astype(np.float32), requires_grad=True),
            m.tensor(rng.standard_normal((5, 8)).astype(np.float32), requires_grad=True))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(OPS))
def test_ops_in_a_region_take_torchs_dtypes(name, dtype):
    out = {}
    for m in (torch, ember):
        x, w = _inputs(m)
        with m.autocast("cpu", dtype=getattr(m, dtype)):
            y = OPS[name](m, x, w)
        upstream = np.random.default_rng(2).standard_normal(tuple(y.shape)).astype(np.float32)
        (y.float() * m.tensor(upstream)).sum().backward()
        out[m] = (y, x.grad)
    (ey, eg), (ty, tg) = out[ember], out[torch]
    assert str(ey.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    assert eg.dtype == ember.float32  # the casts are differentiable: float32 leaves get float32 gradients
    tol = 2 ** -7 if "bfloat16" in (str(ty.dtype) + dtype) else 2 ** -10
    top = ty.detach().float().abs().max().item()
    assert np.abs(ey.detach().float().numpy() - ty.detach().float().numpy()).max() <= 2 * tol * max(top, 1e-3)
    gtop = tg.abs().max().item()
    assert np.abs(eg.numpy() - tg.numpy()).max() <= 4 * tol * max(gtop, 1e-3)


def test_matmul_in_a_region_rounds_like_torch():
    a = np.random.default_rng(1).standard_normal((32, 64)).astype(np.float32)
    with torch.autocast("cpu"):
        t = torch.tensor(a) @ torch.tensor(a).T
    with ember.autocast("cpu"):
        e = ember.tensor(a) @ ember.tensor(a).T
    assert e.dtype == ember.bfloat16
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


def _gpt_block(m):
    m.manual_seed(0)
    rng = np.random.default_rng(0)

    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.ln = m.nn.Embedding(50, 32), m.nn.LayerNorm(32)
            self.attn = m.nn.MultiheadAttention(32, 4, batch_first=True)
            self.mlp = m.nn.Sequential(m.nn.Linear(32, 64), m.nn.GELU(approximate="tanh"), m.nn.Linear(64, 32))
            self.head = m.nn.Linear(32, 50, bias=False)

        def forward(self, idx):
            x = self.emb(idx)
            h = self.ln(x)
            mask = m.triu(m.ones(idx.shape[1], idx.shape[1], dtype=m.bool), 1)
            x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
            return self.head(x + self.mlp(self.ln(x)))

    model = Block()
    with m.no_grad():
        for p in model.parameters():
            p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.2))
    return model, m.tensor(rng.integers(0, 50, (2, 10)))


@pytest.mark.parametrize("mode", ["bfloat16_model", "autocast"])
def test_gpt_block_in_bfloat16_follows_torch(mode):
    res = {}
    for m in (torch, ember):
        model, idx = _gpt_block(m)
        if mode == "bfloat16_model":
            model.to(m.bfloat16)
            logits = model(idx)
        else:
            with m.autocast("cpu", dtype=m.bfloat16):
                logits = model(idx)
        loss = m.nn.functional.cross_entropy(logits.view(-1, 50).float() if mode == "autocast" else
                                             logits.view(-1, 50), idx.view(-1))
        loss.backward()
        res[m] = (str(logits.dtype).split(".")[-1], loss.item(), model.mlp[0].weight.grad.float().numpy())
    (ed, el, eg), (td, tl, tg) = res[ember], res[torch]
    assert ed == td == "bfloat16"
    assert abs(el - tl) <= 2 ** -7 * abs(tl)  # one bfloat16 ulp of the loss
    assert np.abs(eg - tg).max() <= 2 ** -6 * np.abs(tg).max()
