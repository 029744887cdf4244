"""A nanoGPT-style training setup on a tiny model: configure_optimizers splitting parameters into decay / no-decay
groups by module type (whitelist Linear, blacklist LayerNorm and Embedding, every bias no-decay) with
named_modules + named_parameters and a check that the groups cover every parameter exactly once, weight tying
(lm_head.weight = wte.weight, so the tied parameter is seen twice by named_parameters(remove_duplicate=False)),
AdamW(betas=(0.9, 0.95)), get_lr with linear warmup + cosine decay written into param_group['lr'], gradient
accumulation over micro-steps, clip_grad_value_; then the same model under each of torch's schedulers in turn:
OneCycleLR (three_phase, cycle_momentum with betas), SequentialLR(LinearLR -> ExponentialLR), ChainedScheduler,
CosineAnnealingWarmRestarts(T_mult=2) stepped with fractional epochs, CyclicLR(triangular2) on SGD momentum,
ReduceLROnPlateau on an evaluation loss (mode='min', patience, cooldown), and MultiplicativeLR."""
import inspect
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import TEXT, rng, same_weights

torch.manual_seed(0)
r = rng(71)
chars = sorted(set(TEXT))
data = torch.tensor([chars.index(c) for c in TEXT])
V, T, C = len(chars), 16, 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.c_attn, self.c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(approximate="tanh"), nn.Linear(4 * C, C))

    def forward(self, x):
        B, L, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (z.view(B, L, 2, C // 2).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, L, C))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.h = nn.ModuleList([Block(), Block()])
        self.ln_f = nn.LayerNorm(C)
        self.lm_head = nn.Linear(C, V, bias=False)
        self.lm_head.weight = self.wte.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * len(self.h)))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, V), targets.view(-1))

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        decay, no_decay = set(), set()
        for mn, m in self.named_modules():
            for pn, _p in m.named_parameters():
                fpn = f"{mn}.{pn}" if mn else pn
                if pn.endswith("bias"):
                    no_decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, nn.Linear):
                    decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, (nn.LayerNorm, nn.Embedding)):
                    no_decay.add(fpn)
        decay.remove("lm_head.weight")
        param_dict = {pn: p for pn, p in self.named_parameters()}
        assert len(decay & no_decay) == 0 and len(param_dict.keys() - (decay | no_decay)) == 0
        groups = [{"params": [param_dict[pn] for pn in sorted(decay)], "weight_decay": weight_decay},
                  {"params": [param_dict[pn] for pn in sorted(no_decay)], "weight_decay": 0.0}]
        fused = "fused" in inspect.signature(torch.optim.AdamW).parameters and False
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, fused=fused)


def get_batch(bs=4):
    ix = r.integers(0, len(data) - T - 1, bs)
    return torch.stack([data[i:i + T] for i in ix]), torch.stack([data[i + 1:i + T + 1] for i in ix])


def get_lr(it, warmup=3, decay_iters=10, lr=6e-3, min_lr=6e-4):
    if it < warmup:
        return lr * (it + 1) / (warmup + 1)
    if it > decay_iters:
        return min_lr
    coeff = 0.5 * (1.0 + math.cos(math.pi * (it - warmup) / (decay_iters - warmup)))
    return min_lr + coeff * (lr - min_lr)


model = GPT()
same_weights(model)
print("params", sum(p.numel() for p in model.parameters()), "with duplicates",
      sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False)))
init = {k: v.clone() for k, v in model.state_dict().items()}
opt = model.configure_optimizers(0.1, 6e-3, (0.9, 0.95))
print("groups", [len(g["params"]) for g in opt.param_groups])
for it in range(8):
    lr = get_lr(it)
    for g in opt.param_groups:
        g["lr"] = lr
    for _micro in range(2):
        x, y = get_batch()
        loss = model(x, y) / 2
        loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.05)
    opt.step()
    opt.zero_grad(set_to_none=True)
    print(f"iter {it} lr {lr:.6f} loss {loss.item() * 2:.5f}")


def run(name, make_opt, make_sched, steps=6, per_step=None):
    model.load_state_dict(init)
    opt = make_opt(model)
    sched = make_sched(opt)
    line = []
    for i in range(steps):
        x, y = get_batch()
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if per_step:
            per_step(sched, i, loss)
        else:
            sched.step()
        line.append(f"{opt.param_groups[0]['lr']:.6f}")
    print(f"{name} loss {loss.item():.5f} lrs {' '.join(line)}")


adamw = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-3, betas=(0.9, 0.95))
sgd = lambda m: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
lr_s = torch.optim.lr_scheduler
run("onecycle", adamw, lambda o: lr_s.OneCycleLR(o, max_lr=5e-3, total_steps=6, three_phase=True, anneal_strategy="linear"))
run("sequential", adamw, lambda o: lr_s.SequentialLR(o, [lr_s.LinearLR(o, start_factor=0.1, total_iters=3),
                                                         lr_s.ExponentialLR(o, gamma=0.8)], milestones=[3]))
run("chained", adamw, lambda o: lr_s.ChainedScheduler([lr_s.ConstantLR(o, factor=0.5, total_iters=2),
                                                         lr_s.ExponentialLR(o, gamma=0.9)]))
run("warm-restarts", sgd, lambda o: lr_s.CosineAnnealingWarmRestarts(o, T_0=1, T_mult=2, eta_min=1e-4),
    per_step=lambda s, i, loss: s.step(i / 2))
run("cyclic", sgd, lambda o: lr_s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2"))
run("plateau", adamw, lambda o: lr_s.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=0, cooldown=1, threshold=0.05),
    per_step=lambda s, i, loss: s.step(loss.item() + 0.2 * (i % 2 == 0)))
run("multiplicative", adamw, lambda o: lr_s.MultiplicativeLR(o, lr_lambda=lambda e: 0.7))
