"""LoRA injected into a pretrained MLP in the idiom of microsoft/LoRA (loralib) and peft: a LoRALinear that subclasses
nn.Linear (lora_A kaiming_uniform_(a=sqrt(5)), lora_B zeros, scaling = alpha / r, weight.requires_grad = False,
merge on eval() by overriding train(mode), unmerge on train()), injected by walking named_modules() and setattr on
the parent; mark_only_lora_as_trainable by name, requires_grad_(False) on the base; parameter groups (LoRA factors
and the head at different lr); the lora_state_dict saved alone and loaded into a fresh injected copy; merged and
unmerged outputs compared."""
import copy
import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(7)


class LoRALinear(nn.Linear):
    def __init__(self, in_features, out_features, r=4, lora_alpha=8, merge_weights=True, **kwargs):
        nn.Linear.__init__(self, in_features, out_features, **kwargs)
        self.r, self.lora_alpha, self.merge_weights, self.merged = r, lora_alpha, merge_weights, False
        self.lora_A = nn.Parameter(self.weight.new_zeros((r, in_features)))
        self.lora_B = nn.Parameter(self.weight.new_zeros((out_features, r)))
        self.scaling = self.lora_alpha / self.r
        self.weight.requires_grad = False
        self.reset_parameters()

    def reset_parameters(self):
        nn.Linear.reset_parameters(self)
        if hasattr(self, "lora_A"):
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            nn.init.zeros_(self.lora_B)

    def train(self, mode: bool = True):
        nn.Linear.train(self, mode)
        if mode:
            if self.merge_weights and self.merged:
                self.weight.data -= (self.lora_B @ self.lora_A) * self.scaling
                self.merged = False
        else:
            if self.merge_weights and not self.merged:
                self.weight.data += (self.lora_B @ self.lora_A) * self.scaling
                self.merged = True
        return self

    def forward(self, x: torch.Tensor):
        result = F.linear(x, self.weight, bias=self.bias)
        if self.r > 0 and not self.merged:
            result += (x @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1)) * self.scaling
        return result


def inject_lora(model, targets=("fc1", "fc2"), **kw):
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Linear) and name.split(".")[-1] in targets:
            parent = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
            new = LoRALinear(module.in_features, module.out_features, bias=module.bias is not None, **kw)
            new.weight.data.copy_(module.weight.data)
            if module.bias is not None:
                new.bias.data.copy_(module.bias.data)
            setattr(parent, name.split(".")[-1], new)
    return model


def mark_only_lora_as_trainable(model, bias="none"):
    for n, p in model.named_parameters():
        if "lora_" not in n:
            p.requires_grad = False


def lora_state_dict(model):
    return {k: v for k, v in model.state_dict().items() if "lora_" in k}


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.fc2, self.norm = nn.Linear(d, 2 * d), nn.Linear(2 * d, d), nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.fc2(F.gelu(self.fc1(x))))


base = nn.Sequential(nn.Linear(6, 16), Block(16), Block(16))
head = nn.Linear(16, 3)
same_weights(base, head)
X = torch.from_numpy(r.normal(0, 1, (96, 6)).astype("float32"))
Y = torch.from_numpy((r.normal(0, 1, (6, 3)).astype("float32").T @ X.numpy().T).argmax(0))
model = nn.Sequential(inject_lora(copy.deepcopy(base), r=4, lora_alpha=8), head)
same_weights(model)  # the LoRA A factors too
mark_only_lora_as_trainable(model[0])
head.requires_grad_(True)
trainable = [n for n, p in model.named_parameters() if p.requires_grad]
print("trainable", len(trainable), sum(p.numel() for p in model.parameters() if p.requires_grad),
      "frozen", sum(p.numel() for p in model.parameters() if not p.requires_grad))
opt = torch.optim.AdamW([
    {"params": [p for n, p in model.named_parameters() if "lora_" in n], "lr": 1e-2, "weight_decay": 0.0},
    {"params": head.parameters(), "lr": 3e-3}])
for step in range(12):
    idx = torch.from_numpy(r.integers(0, 96, 32))
    loss = F.cross_entropy(model(X[idx]), Y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f} base-grad {base[0].weight.grad is None} "
          f"B-norm {model[0][1].fc1.lora_B.norm().item():.5f}")

model.eval()
with torch.no_grad():
    merged_out = model(X)
    print("merged", model[0][1].fc1.merged, f"acc {(merged_out.argmax(1) == Y).float().mean().item():.4f}")
    model.train()
    unmerged_out = model(X)
    print("unmerged", model[0][1].fc1.merged, f"max diff {(merged_out - unmerged_out).abs().max().item() < 1e-5}")
buf = io.BytesIO()
torch.save(lora_state_dict(model), buf)
buf.seek(0)
fresh = nn.Sequential(inject_lora(copy.deepcopy(base), r=4, lora_alpha=8), copy.deepcopy(head))
missing, unexpected = fresh.load_state_dict(torch.load(buf), strict=False)
print("missing", len(missing), "unexpected", len(unexpected))
fresh[1].load_state_dict(head.state_dict())
with torch.no_grad():
    print(f"reloaded max diff {(fresh(X) - model(X)).abs().max().item() < 1e-5} out-sum {fresh(X).sum().item():.4f}")
