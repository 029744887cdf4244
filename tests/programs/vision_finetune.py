"""A vision researcher's CPU debugging run before the cluster: a small hand-written ResNet and ViT (no pretrained
weights), initialised with model.apply(init_fn) and trunc_normal_, moved to channels_last with
torch.backends.cudnn.benchmark set as cluster code sets it, wrapped in torch.compile (eager on the CPU); AdamW over
timm's parameter groups (no weight decay on norms and biases) with a frozen stem and a lower backbone learning rate,
warm-up then cosine through SequentialLR, label smoothing, mixup (torch.distributions.Beta, randperm) and cutmix
(timm's box and soft targets), gradient accumulation under autocast(bfloat16) with clip_grad_norm_, EMA weights both
through AveragedModel(avg_fn=...) and timm's ModelEmaV3 (torch._foreach_lerp_(..., weight=...)); a DataLoader with
a custom collate_fn and sampler over two workers; a checkpoint saved mid-epoch (model, optimizer, scheduler, scaler,
RNG states) and resumed; evaluation under torch.inference_mode with top-k accuracy and a torch.bincount confusion
matrix; and the mistakes such a user makes, with PyTorch's errors (a float64 image, a (N, 1) target, too many
poolings, float labels into an embedding, a channels_last view).

    python vision_finetune.py
"""

import copy
import io
import math
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights
from torch.optim.swa_utils import AveragedModel
from torch.utils.data import DataLoader, Dataset, Sampler

torch.backends.cudnn.benchmark = True  # (set unconditionally, as training scripts do; no effect on the CPU)
torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
CLASSES = 4


class Shapes(Dataset):
    """12x12 RGB images of four kinds: stripes across, stripes down, a blob, a ring."""

    def __init__(self, n, seed):
        g = rng(seed)
        yy, xx = np.mgrid[0:12, 0:12]
        self.labels = g.integers(0, CLASSES, n)
        phase = g.uniform(0, 6.28, (n, 1, 1))
        cy, cx = g.uniform(4, 8, (2, n, 1, 1))
        r2 = (yy - cy) ** 2 + (xx - cx) ** 2
        kinds = [np.sin(xx * 1.3 + phase), np.sin(yy * 1.3 + phase), np.exp(-r2 / 5.0) * 2 - 1,
                 np.exp(-(np.sqrt(r2) - 3.5) ** 2) * 2 - 1]
        img = np.choose(self.labels[:, None, None], kinds)
        color = g.uniform(0.5, 1.0, (n, 3, 1, 1))
        self.images = (img[:, None] * color + 0.2 * g.standard_normal((n, 3, 12, 12))).astype(np.float32)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"image": torch.from_numpy(self.images[i]), "label": int(self.labels[i]), "index": i}


def collate(batch):
    return (torch.stack([b["image"] for b in batch]), torch.tensor([b["label"] for b in batch]),
            [b["index"] for b in batch])


class InterleavedSampler(Sampler):
    """Even indices, then odd ones: a fixed order the workers must keep."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter([*range(0, self.n, 2), *range(1, self.n, 2)])

    def __len__(self):
        return self.n


class BasicBlock(nn.Module):
    def __init__(self, inp, out, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.shortcut = nn.Sequential()
        if stride != 1 or inp != out:
            self.shortcut = nn.Sequential(nn.Conv2d(inp, out, 1, stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, classes=CLASSES):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1, self.layer2 = BasicBlock(8, 8), BasicBlock(8, 16, 2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layer2(self.layer1(self.stem(x)))), 1))


def init_fn(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=0.02)
        nn.init.zeros_(m.bias)


class ViT(nn.Module):
    def __init__(self, patch=4, dim=24, depth=2, heads=3, classes=CLASSES):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, (12 // patch) ** 2 + 1, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        return self.head(self.norm(self.blocks(x))[:, 0])


def param_groups_weight_decay(model, weight_decay, backbone_lr_scale):
    """timm's idiom: no decay on norms, biases and tokens; here the backbone at a lower learning rate too."""
    groups = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        decay = 0.0 if p.ndim <= 1 or name.endswith(".bias") or name in ("cls_token", "pos_embed") else weight_decay
        scale = 1.0 if name.startswith(("fc.", "head.")) else backbone_lr_scale
        groups.setdefault((decay, scale), {"params": [], "weight_decay": decay, "lr_scale": scale})
        groups[(decay, scale)]["params"].append(p)
    return list(groups.values())


class ModelEmaV3:
    """timm's EMA of the weights: one foreach lerp over the parameters, buffers copied."""

    def __init__(self, model, decay):
        self.module, self.decay = copy.deepcopy(model).eval(), decay
        for p in self.module.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        torch._foreach_lerp_(list(self.module.parameters()), list(model.parameters()), weight=1.0 - self.decay)
        for e, m in zip(self.module.buffers(), model.buffers()):
            e.copy_(m)


def rand_bbox(size, lam, gen):
    h, w = size[2], size[3]
    cut = math.sqrt(1.0 - lam)
    ch, cw = int(h * cut), int(w * cut)
    cy, cx = int(gen.integers(h)), int(gen.integers(w))
    return (max(cy - ch // 2, 0), min(cy + ch // 2, h), max(cx - cw // 2, 0), min(cx + cw // 2, w))


def mix(x, y, step, gen, smoothing=0.1):
    """Mixup on even steps, cutmix on odd ones; soft targets with label smoothing (timm's mixup_target)."""
    off = smoothing / CLASSES
    y1 = torch.full((len(y), CLASSES), off).scatter_(1, y[:, None], 1.0 - smoothing + off)
    if step % 2 == 0:
        lam = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4)).sample().item()
        perm = torch.randperm(x.shape[0])
        return lam * x + (1 - lam) * x[perm], lam * y1 + (1 - lam) * y1[perm]
    lam = float(gen.beta(1.0, 1.0))
    y0, y1_, x0, x1 = rand_bbox(x.shape, lam, gen)
    x = x.clone()
    x[:, :, y0:y1_, x0:x1] = x.flip(0)[:, :, y0:y1_, x0:x1]
    lam = 1 - (y1_ - y0) * (x1 - x0) / (x.shape[-1] * x.shape[-2])
    return x, lam * y1 + (1 - lam) * y1.flip(0)


EMA_DECAY = 0.8


def ema_avg(averaged, current, num_averaged):
    """AveragedModel's custom avg_fn: an exponential moving average."""
    return EMA_DECAY * averaged + (1 - EMA_DECAY) * current


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.reshape(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum(0) * 100.0 / target.size(0) for k in topk]


@torch.inference_mode()
def evaluate(model, loader):
    model.eval()
    logits, labels = [], []
    for images, y, _ in loader:
        logits.append(model(images.to(device).contiguous(memory_format=torch.channels_last)))
        labels.append(y)
    out, y = torch.cat(logits), torch.cat(labels)
    top1, top2 = accuracy(out, y, topk=(1, 2))
    confusion = torch.bincount(y * CLASSES + out.argmax(1), minlength=CLASSES ** 2).reshape(CLASSES, CLASSES)
    return F.cross_entropy(out, y).item(), top1.item(), top2.item(), confusion, out.is_inference()


def make(arch):
    model = ResNet() if arch == "resnet" else ViT()
    if arch == "resnet":
        model.apply(init_fn)
    return model


def training_state(model, warmup=3, total=12, lr=3e-3):
    for p in (model.stem if hasattr(model, "stem") else model.patch_embed).parameters():
        p.requires_grad_(False)  # the stem frozen, as when fine-tuning
    groups = param_groups_weight_decay(model, 0.05, backbone_lr_scale=0.5)
    opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999))
    for g in opt.param_groups:
        g["lr"] = g["initial_lr"] = lr * g["lr_scale"]
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [
        torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=warmup),
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=1e-5)], milestones=[warmup])
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    return opt, sched, scaler


def train(model, opt, sched, scaler, batches, start, stop, gen, emas, log, accumulate=2, autocast=False):
    """Optimizer steps ``start`` to ``stop``, each over ``accumulate`` micro-batches."""
    model.train()
    for step in range(start, stop):
        total = 0.0
        for micro in range(accumulate):
            x, y = batches[(step * accumulate + micro) % len(batches)]
            x, target = mix(x, y, step, gen)
            x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=autocast):
                loss = F.cross_entropy(model(x), target) / accumulate
            scaler.scale(loss).backward()
            total += loss.item()
        scaler.unscale_(opt)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        sched.step()
        for ema in emas:
            ema.update_parameters(model) if isinstance(ema, AveragedModel) else ema.update(model)
        log.append(f"step {step} loss {total:.5f} grad norm {norm.item():.5f} lr {sched.get_last_lr()[0]:.6e}")


def main():
    train_set, val_set = Shapes(48, 1), Shapes(24, 2)
    loader = DataLoader(train_set, batch_size=8, sampler=InterleavedSampler(len(train_set)), collate_fn=collate,
                        num_workers=2)
    batches = [(x, y) for x, y, _ in loader]
    print("loader", len(loader), "first indices", [i for _, _, i in loader][0], "batch", tuple(batches[0][0].shape))
    val_loader = DataLoader(val_set, batch_size=12, collate_fn=collate)

    for arch in ("resnet", "vit"):
        model = make(arch)
        same_weights(model)
        model = model.to(device, memory_format=torch.channels_last)
        first_conv = next(m for m in model.modules() if isinstance(m, nn.Conv2d))
        print(arch, "params", sum(p.numel() for p in model.parameters()),
              "channels_last", first_conv.weight.is_contiguous(memory_format=torch.channels_last))
        # (the ResNet compiled, as cluster scripts do; the eager backend: dynamo's tracing without inductor's C++
        # build, which takes PyTorch a minute on a CPU)
        compiled = torch.compile(model, backend="eager") if arch == "resnet" else model
        opt, sched, scaler = training_state(model)
        print(arch, "groups", [(len(g["params"]), g["weight_decay"], f"{g['lr']:.1e}") for g in opt.param_groups])
        ema = AveragedModel(model, avg_fn=ema_avg)
        ema_v3 = ModelEmaV3(model, EMA_DECAY)
        log, gen = [], rng(5)
        train(compiled, opt, sched, scaler, batches, 0, 6, gen, [ema, ema_v3], log)
        print("\n".join(log))
        print(arch, "stem frozen", all(p.grad is None for p in (model.stem if arch == "resnet" else model.patch_embed)
                                       .parameters()))
        sums = [sum(p.double().sum().item() for p in m.parameters()) for m in (model, ema.module, ema_v3.module)]
        print(arch, "ema n_averaged", ema.n_averaged.item(), "weight sums model/ema/ema_v3",
              " ".join(f"{v:.5f}" for v in sums))
        for name, m in (("model", model), ("ema", ema.module)):
            loss, top1, top2, confusion, inference = evaluate(m, val_loader)
            print(arch, name, f"val loss {loss:.5f} top1 {top1:.2f} top2 {top2:.2f} inference {inference}")
        print(confusion)

    # a checkpoint saved mid-epoch and resumed into fresh objects continues as the uninterrupted run
    def run(stop, state=None):
        torch.manual_seed(3)
        random.seed(3)
        np.random.seed(3)
        model = make("resnet")
        same_weights(model)
        opt, sched, scaler = training_state(model)
        gen, log = rng(7), []
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            sched.load_state_dict(state["scheduler"])
            scaler.load_state_dict(state["scaler"])
            torch.set_rng_state(state["torch_rng"])
            np.random.set_state(state["numpy_rng"])
            random.setstate(state["python_rng"])
            gen.bit_generator.state = state["gen"]
        start = 0 if state is None else state["step"]
        train(model, opt, sched, scaler, batches, start, stop, gen, [], log)
        return model, opt, sched, scaler, gen, log

    *_, full = run(8)
    model, opt, sched, scaler, gen, first = run(4)
    buffer = io.BytesIO()
    torch.save({"step": 4, "model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "scaler": scaler.state_dict(), "torch_rng": torch.get_rng_state(), "numpy_rng": np.random.get_state(),
                "python_rng": random.getstate(), "gen": gen.bit_generator.state}, buffer)
    buffer.seek(0)
    try:
        torch.load(buffer)  # NumPy's RNG state is no tensor: refused under weights_only, PyTorch's default
    except Exception as e:  # noqa: BLE001
        print("weights_only load:", type(e).__name__)
    buffer.seek(0)
    *_, rest = run(8, torch.load(buffer, weights_only=False))
    print("resumed run identical:", first + rest == full, "| last", full[-1])

    # gradient accumulation under autocast(bfloat16): the convolutions and linears run in bfloat16
    model = make("resnet")
    same_weights(model)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        out = model.stem[0](batches[0][0])
        logits = model(batches[0][0])
        loss = F.cross_entropy(logits, batches[0][1])
    print("autocast dtypes", out.dtype, logits.dtype, loss.dtype)
    opt, sched, scaler = training_state(model)
    log = []
    train(model, opt, sched, scaler, batches, 0, 3, rng(9), [], log, autocast=True)
    print("bf16 steps", len(log), "finite", all(math.isfinite(float(line.split()[3])) for line in log))

    # the mistakes, and PyTorch's words for them
    model.eval()
    attempts = {
        "float64 image": lambda: model(torch.from_numpy(val_set.images[:2].astype(np.float64))),
        "grayscale image": lambda: model(torch.zeros(2, 1, 12, 12)),
        "(N, 1) target": lambda: F.cross_entropy(torch.zeros(4, CLASSES), torch.zeros(4, 1, dtype=torch.long)),
        "too many poolings": lambda: nn.Sequential(nn.MaxPool2d(2), nn.MaxPool2d(2), nn.MaxPool2d(4))(torch.zeros(1, 3, 12, 12)),
        "float labels to an embedding": lambda: nn.Embedding(CLASSES, 2)(torch.tensor([1.0, 2.0])),
        "view of channels_last": lambda: batches[0][0].contiguous(memory_format=torch.channels_last).view(8, -1),
        "a tensor to the optimizer": lambda: torch.optim.SGD(model.fc.weight, lr=0.1),
        "missing keys": lambda: ResNet(classes=3).load_state_dict(model.state_dict()),
    }
    for name, attempt in attempts.items():
        try:
            attempt()
            print(name, "ran")
        except Exception as e:  # noqa: BLE001 (the error is what is printed)
            print(name, type(e).__name__, str(e).splitlines()[0][:120])
    print("strict=False:", ResNet().load_state_dict({k: v for k, v in model.state_dict().items()
                                                     if not k.startswith("fc.")}, strict=False))


if __name__ == "__main__":
    main()
