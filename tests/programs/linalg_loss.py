"""torch.linalg in training objectives: an orthogonality penalty, QR-parametrised orthogonal layer, nuclear norm
via svdvals, Procrustes alignment with svd, a GP marginal likelihood with cholesky/cholesky_solve/logdet, eigh
spectrum of torch.cov, solve/lstsq ridge readout, matrix_exp rotation, det/slogdet."""
import math

import torch
import torch.nn as nn
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(21)


class GP(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_ls = nn.Parameter(torch.tensor(0.0))
        self.log_sf = nn.Parameter(torch.tensor(0.0))
        self.log_sn = nn.Parameter(torch.tensor(-1.0))

    def kernel(self, a, b):
        return self.log_sf.exp() ** 2 * torch.exp(-0.5 * torch.cdist(a, b) ** 2 / self.log_ls.exp() ** 2)

    def nll(self, x, y):
        K = self.kernel(x, x) + (self.log_sn.exp() ** 2 + 1e-5) * torch.eye(len(x), dtype=x.dtype)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y, L)
        return 0.5 * (y.T @ alpha).squeeze() + torch.log(torch.diagonal(L)).sum() + 0.5 * len(x) * math.log(2 * math.pi)


x = torch.from_numpy(r.uniform(-3, 3, (20, 1)))
y = torch.sin(x) + 0.1 * torch.from_numpy(r.standard_normal((20, 1)))
gp = GP().double()
opt = torch.optim.Adam(gp.parameters(), lr=0.1)
for step in range(6):
    loss = gp.nll(x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    K = gp.kernel(x, x) + torch.eye(20, dtype=torch.float64) * gp.log_sn.exp() ** 2
    print(f"gp step {step} nll {loss.item():.6f} logdet {torch.logdet(K).item():.6f} slogdet {torch.linalg.slogdet(K)[1].item():.6f}")

model = nn.Sequential(nn.Linear(6, 8, bias=False), nn.Tanh(), nn.Linear(8, 4))
same_weights(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
target_rot = torch.linalg.matrix_exp(torch.tensor([[0.0, -0.5], [0.5, 0.0]]))
for step in range(6):
    xb = torch.from_numpy(r.standard_normal((32, 6)).astype("float32"))
    z = model(xb)
    W = model[0].weight
    ortho = torch.linalg.matrix_norm(W @ W.T - torch.eye(8), ord="fro") ** 2
    nuclear = torch.linalg.svdvals(z).sum()
    cov = torch.cov(z.T) + 1e-3 * torch.eye(4)
    evals, evecs = torch.linalg.eigh(cov)
    spectral = -evals.log().sum()
    Q, R = torch.linalg.qr(W.T)
    qr_pen = (Q.T @ Q - torch.eye(6)).abs().sum() + R.diagonal().abs().sum() * 0
    loss = ortho + 0.01 * nuclear + 0.1 * spectral + qr_pen
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"reg step {step} ortho {ortho.item():.5f} nuclear {nuclear.item():.4f} spectral {spectral.item():.5f}")

A = torch.from_numpy(r.standard_normal((10, 2)).astype("float64"))
B = A @ target_rot.double().T + 0.01 * torch.from_numpy(r.standard_normal((10, 2)))
U, S, Vh = torch.linalg.svd(A.T @ B)
Rhat = (U @ Vh).T
print("procrustes", f"{(Rhat - target_rot.double()).abs().max().item():.4f}", f"det {torch.linalg.det(Rhat).item():.6f}")
feats = torch.from_numpy(r.standard_normal((40, 5)))
targets = feats @ torch.arange(1.0, 6.0, dtype=torch.float64).unsqueeze(1)
ridge = torch.linalg.solve(feats.T @ feats + 0.1 * torch.eye(5, dtype=torch.float64), feats.T @ targets)
lst = torch.linalg.lstsq(feats, targets).solution
print("ridge", [round(v, 4) for v in ridge.squeeze().tolist()], "lstsq", [round(v, 4) for v in lst.squeeze().tolist()],
      "pinv", f"{torch.linalg.pinv(feats).sum().item():.6f}", "inv", f"{torch.linalg.inv(feats.T @ feats).trace().item():.6f}")
