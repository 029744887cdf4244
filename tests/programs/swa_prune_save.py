"""Post-training tooling in the idioms of tutorials and repos: stochastic weight averaging (AveragedModel, SWALR
with cosine annealing after a CosineAnnealingLR phase, update_bn over a DataLoader of tuples), magnitude pruning with
torch.nn.utils.prune (l1_unstructured, random_unstructured's mask shape, ln_structured, global_unstructured,
is_pruned, weight_orig/weight_mask in the state_dict, prune.remove), a whole model saved with torch.save(model) and
reloaded with weights_only=False, torch.jit.trace / script called on the model."""
import io
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from _support import rng, same_weights
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
from torch.utils.data import DataLoader, TensorDataset


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = nn.Identity()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 3)
        self.dequant = nn.Identity()

    def forward(self, x):
        x = self.quant(x)
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.dequant(self.fc2(x))


r = rng(0)
X = torch.from_numpy(r.standard_normal((64, 1, 10, 10)).astype(np.float32))
Y = torch.from_numpy((X[:, 0, 2:5, 2:5].sum((1, 2)) > 0).long().numpy() + (X[:, 0, 6:, 6:].mean((1, 2)) > 0.2).long().numpy())
loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=False)
torch.manual_seed(0)
model = LeNet()
same_weights(model)
swa_model = AveragedModel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)
swa_start = 2
swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=2, anneal_strategy="cos")
for epoch in range(5):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    if epoch >= swa_start:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    print(f"epoch {epoch} loss {loss.item():.6f} lr {optimizer.param_groups[0]['lr']:.6f} "
          f"averaged {int(swa_model.n_averaged)}")
update_bn(loader, swa_model)
swa_model.eval()
with torch.no_grad():
    acc = (swa_model(X).argmax(1) == Y).float().mean().item()
print(f"swa acc {acc:.4f} bn mean {swa_model.module.bn1.running_mean.sum().item():.6f} "
      f"var {swa_model.module.bn1.running_var.sum().item():.6f}")

net = swa_model.module
prune.l1_unstructured(net.conv1, name="weight", amount=0.3)
prune.ln_structured(net.conv2, name="weight", amount=0.25, n=2, dim=0)
parameters_to_prune = ((net.fc1, "weight"), (net.fc2, "weight"))
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.5)
print("pruned", prune.is_pruned(net), sorted(k for k in net.state_dict() if "orig" in k or "mask" in k))
print("sparsity", [f"{100. * float(torch.sum(m.weight == 0)) / float(m.weight.nelement()):.2f}"
                   for m in (net.conv1, net.conv2, net.fc1, net.fc2)])
print("buffers", [n for n, _ in net.conv1.named_buffers()])
with torch.no_grad():
    out_pruned = net(X[:8])
for module, name in ((net.conv1, "weight"), (net.conv2, "weight"), (net.fc1, "weight"), (net.fc2, "weight")):
    prune.remove(module, name)
print("after remove", prune.is_pruned(net), sorted(net.state_dict().keys())[:4])

path = os.path.join(tempfile.mkdtemp(), "model.pt")
torch.save(net, path)
loaded = torch.load(path, weights_only=False)
loaded.eval()
with torch.no_grad():
    print("reloaded same", type(loaded).__name__, torch.equal(loaded(X[:8]), out_pruned))
buffer = io.BytesIO()
torch.save({"model": net.state_dict(), "epoch": 5}, buffer)
buffer.seek(0)
ckpt = torch.load(buffer)
print("checkpoint keys", sorted(ckpt), ckpt["epoch"])

traced = torch.jit.trace(net, X[:2])
with torch.no_grad():
    print("traced", torch.allclose(traced(X[:8]), out_pruned))
try:
    scripted = torch.jit.script(net)
    with torch.no_grad():
        print("scripted", torch.allclose(scripted(X[:8]), out_pruned))
except Exception as e:  # noqa: BLE001
    print("script refused", type(e).__name__)
