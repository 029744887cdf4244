"""LoRA fine-tuning of a small pretrained transformer classifier (the minLoRA idiom): the base weights frozen,
W + (B @ A) * alpha / r attached with torch.nn.utils.parametrize, only the LoRA factors trained, then merged."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(0)
V, D, T, C = 20, 16, 8, 3


class LoRAParametrization(nn.Module):
    def __init__(self, fan_in, fan_out, rank=4, lora_alpha=8):
        super().__init__()
        self.lora_A = nn.Parameter(torch.zeros(rank, fan_in))
        self.lora_B = nn.Parameter(torch.zeros(fan_out, rank))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scaling = lora_alpha / rank
        self.enabled = True

    def forward(self, W):
        if not self.enabled:
            return W
        return W + torch.matmul(self.lora_B, self.lora_A).view(W.shape) * self.scaling

    @classmethod
    def from_linear(cls, layer, rank=4, lora_alpha=8):
        fan_out, fan_in = layer.weight.shape
        return cls(fan_in, fan_out, rank=rank, lora_alpha=lora_alpha)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.pos = nn.Parameter(torch.randn(1, T, D) * 0.02)
        layer = nn.TransformerEncoderLayer(D, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(D, C)

    def forward(self, x):
        h = self.encoder(self.emb(x) + self.pos)
        return self.head(h.mean(1))


model = Classifier()
same_weights(model)
tokens = torch.from_numpy(r.integers(0, V, (32, T)))
labels = (tokens[:, 0] % C)
# "pretraining": a few full steps
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    loss = F.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"pretrain loss {loss.item():.6f}")

# attach LoRA to every Linear in the encoder's feed-forward and the head
for p in model.parameters():
    p.requires_grad_(False)
targets = [m for name, m in model.named_modules() if isinstance(m, nn.Linear)]
for layer in targets:
    parametrize.register_parametrization(layer, "weight", LoRAParametrization.from_linear(layer, rank=2))
lora_params = [p for n, p in model.named_parameters() if "lora_" in n]
same_weights(*[m.parametrizations.weight[0] for m in targets])
print("trainable", sum(p.numel() for p in lora_params), "of", sum(p.numel() for p in model.parameters()))
print("parametrized", parametrize.is_parametrized(model.head), parametrize.is_parametrized(model.head, "bias"))

opt = torch.optim.AdamW(lora_params, lr=5e-2, weight_decay=0.01)
new_labels = (tokens[:, 1] % C)
for step in range(6):
    logits = model(tokens)
    loss = F.cross_entropy(logits, new_labels, label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    acc = (logits.argmax(-1) == new_labels).float().mean()
    print(f"lora step {step} loss {loss.item():.6f} acc {acc.item():.4f}")

def set_enabled(module, enabled):
    for m in module.modules():
        if isinstance(m, LoRAParametrization):
            m.enabled = enabled

with torch.no_grad():
    set_enabled(model, False)
    base = F.cross_entropy(model(tokens), new_labels).item()
    set_enabled(model, True)
    tuned = model(tokens)
print(f"without lora {base:.6f}")
for layer in targets:
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
with torch.no_grad():
    merged = model(tokens)
print("merged equal", torch.allclose(merged, tuned, atol=1e-5), type(model.head.weight).__name__,
      model.head.weight.requires_grad)
print("state keys", sorted(model.state_dict())[:3])
