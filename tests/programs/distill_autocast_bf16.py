"""Knowledge distillation under mixed-precision idioms: a teacher trained first, then a student trained on
KL(student/T || teacher/T) * T^2 (F.kl_div with log_target both ways, reduction="batchmean") plus hard-label CE,
inside torch.autocast("cpu", dtype=torch.bfloat16) with a GradScaler(enabled=False) doing scale/step/update as
CUDA code does; torch.amp.GradScaler("cpu") API, autocast nested with enabled=False for a float32 island,
feature (hint) distillation with MSE on an adapter, bf16 parameters cast back, temperature-scaled calibration."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
gen = rng(9)
D, K = 20, 5
W_true = gen.standard_normal((D, K)).astype(np.float32)


def batch(n):
    x = gen.standard_normal((n, D)).astype(np.float32)
    y = (x @ W_true + 0.5 * gen.standard_normal((n, K))).argmax(1)
    return torch.from_numpy(x), torch.from_numpy(y)


class Net(nn.Module):
    def __init__(self, width, norm=True):
        super().__init__()
        self.fc1 = nn.Linear(D, width)
        self.ln = nn.LayerNorm(width) if norm else nn.Identity()
        self.fc2 = nn.Linear(width, K)

    def forward(self, x, return_feat=False):
        h = F.gelu(self.ln(self.fc1(x)))
        out = self.fc2(h)
        return (out, h) if return_feat else out


teacher, student = Net(64), Net(16)
adapter = nn.Linear(16, 64, bias=False)
same_weights(teacher, student, adapter)
scaler = torch.amp.GradScaler("cpu", enabled=False)
opt_t = torch.optim.SGD(teacher.parameters(), lr=0.1, momentum=0.9)
for step in range(6):
    x, y = batch(32)
    with torch.autocast(device_type="cpu", dtype=torch.float32, enabled=False):
        loss = F.cross_entropy(teacher(x), y)
    opt_t.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt_t)
    scaler.update()
    print(f"teacher {step} loss {loss.item():.6f} scale {scaler.get_scale():.1f} enabled {scaler.is_enabled()}")

T, alpha = 4.0, 0.7
params = list(student.parameters()) + list(adapter.parameters())
opt_s = torch.optim.Adam(params, lr=1e-2)
teacher.eval()
for step in range(6):
    x, y = batch(32)
    with torch.no_grad():
        t_logits, t_feat = teacher(x, return_feat=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        s_logits, s_feat = student(x, return_feat=True)
        with torch.autocast("cpu", enabled=False):
            s32 = s_logits.float()
            kd = F.kl_div(F.log_softmax(s32 / T, dim=1), F.softmax(t_logits / T, dim=1), reduction="batchmean") * T * T
            kd2 = F.kl_div(F.log_softmax(s32 / T, dim=1), F.log_softmax(t_logits / T, dim=1), reduction="batchmean",
                           log_target=True) * T * T
        ce = F.cross_entropy(s_logits, y)
        hint = F.mse_loss(adapter(s_feat.float()), t_feat)
    loss = alpha * kd + (1 - alpha) * ce + 0.1 * hint
    opt_s.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(opt_s)
    gn = torch.nn.utils.clip_grad_norm_(params, max_norm=5.0)
    scaler.step(opt_s)
    scaler.update()
    print(f"student {step} kd {kd.item():.6f} same {abs(kd.item() - kd2.item()) < 1e-5} ce {ce.item():.4f} "
          f"hint {hint.item():.6f} dtypes {s_logits.dtype} {ce.dtype} gn {gn.item():.4f}")

with torch.no_grad():
    x, y = batch(256)
    t_out, s_out = teacher(x), student(x)
    for name, out in (("teacher", t_out), ("student", s_out)):
        acc = (out.argmax(1) == y).float().mean().item()
        nll = F.cross_entropy(out, y).item()
        calibrated = F.cross_entropy(out / 1.5, y).item()
        agree = (out.argmax(1) == t_out.argmax(1)).sum().item()
        print(f"{name} acc {acc:.4f} nll {nll:.6f} T1.5 {calibrated:.6f} agree {agree}")
    half = Net(16).to(torch.bfloat16)
    half.load_state_dict({k: v.to(torch.bfloat16) for k, v in student.state_dict().items()})
    hb = half(x.bfloat16())
    print("bf16 model", hb.dtype, f"{hb.float().sum().item():.3f}", (hb.argmax(1) == s_out.argmax(1)).sum().item() > 200)
