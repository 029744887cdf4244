"""Variational inference with torch.distributions: a ``LowRankMultivariateNormal`` posterior fitted by the
reparameterised ELBO against a full ``MultivariateNormal`` prior (``kl_divergence`` between the two), a logit-normal
built as ``TransformedDistribution(Normal, [SigmoidTransform()])``, a simplex parameter through
``biject_to(constraints.simplex)``, ``StickBreakingTransform`` forward/inverse/log-det, and log_prob / mean /
variance / entropy / cdf / icdf of Gumbel, HalfNormal, Uniform, Exponential, Cauchy, Chi2, Binomial and Geometric
(``n/a`` where a distribution raises NotImplementedError, as both frameworks do).

    python distributions_zoo.py [--steps N]
"""

import argparse

import numpy as np
import torch
from _support import rng, same_weights
from torch import nn
from torch.distributions import (
    Binomial,
    Cauchy,
    Chi2,
    Exponential,
    Geometric,
    Gumbel,
    HalfNormal,
    LowRankMultivariateNormal,
    MultivariateNormal,
    Normal,
    SigmoidTransform,
    StickBreakingTransform,
    TransformedDistribution,
    Uniform,
    biject_to,
    constraints,
    kl_divergence,
)

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
args = parser.parse_args()
r = rng(30)
data = torch.from_numpy((r.standard_normal((40, 4)) @ np.diag([1.0, 0.5, 2.0, 1.0]) + 1.0).astype(np.float32))


class Posterior(nn.Module):
    def __init__(self, d=4, rank=2):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(d))
        self.factor = nn.Parameter(torch.full((d, rank), 0.1))
        self.log_diag = nn.Parameter(torch.zeros(d))
        self.unconstrained = nn.Parameter(torch.zeros(3))
        self.ln_loc = nn.Parameter(torch.zeros(2))

    def q(self):
        return LowRankMultivariateNormal(self.loc, self.factor, self.log_diag.exp())


torch.manual_seed(0)
post = Posterior()
same_weights(post)
opt = torch.optim.Adam(post.parameters(), lr=0.05)
prior = MultivariateNormal(torch.zeros(4), torch.eye(4) * 4)
for step in range(args.steps):
    q = post.q()
    z = q.rsample((8,))
    loglik = Normal(z.unsqueeze(1), 1.0).log_prob(data).sum((1, 2))
    elbo = (loglik + prior.log_prob(z) - q.log_prob(z)).mean()
    simplex = biject_to(constraints.simplex)(post.unconstrained)
    logit_normal = TransformedDistribution(Normal(post.ln_loc, 1.0), [SigmoidTransform()])
    extra = -logit_normal.log_prob(torch.tensor([0.3, 0.8])).sum() - (simplex * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum()
    loss = -elbo + extra
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step + 1} loss {loss.item():.4f} loc {' '.join(f'{v:.5f}' for v in post.loc.tolist())} "
              f"entropy {q.entropy().item():.6f} kl {kl_divergence(q, prior).item():.6f} simplex {simplex.max().item():.6f}")
sb = StickBreakingTransform()
y = sb(torch.tensor([0.2, -0.4, 1.0]))
print("stickbreaking", " ".join(f"{v:.6f}" for v in y.tolist()), f"{sb.log_abs_det_jacobian(torch.tensor([0.2, -0.4, 1.0]), y).item():.6f}",
      " ".join(f"{v:.6f}" for v in sb.inv(y).tolist()))
x = torch.tensor([0.2, 0.5, 0.9])
for name, d in [("gumbel", Gumbel(0.5, 2.0)), ("halfnormal", HalfNormal(1.5)),
                ("uniform", Uniform(0.0, 2.0)), ("exp", Exponential(2.0)), ("cauchy", Cauchy(0.0, 0.5)), ("chi2", Chi2(3.0))]:
    parts = [f"{d.log_prob(x).sum().item():.6f}"]
    for attr in ("mean", "variance", "entropy", "cdf", "icdf"):
        try:
            v = getattr(d, attr)
            v = v(x) if attr in ("cdf", "icdf") else (v() if callable(v) else v)
            parts.append(f"{attr} {v.sum().item():.6f}")
        except NotImplementedError:
            parts.append(f"{attr} n/a")
    print(name, " ".join(parts))
counts = torch.tensor([0.0, 2.0, 5.0])
print("binomial", f"{Binomial(5, probs=torch.tensor(0.3)).log_prob(counts).sum().item():.6f}",
      f"{Binomial(5, logits=torch.tensor(0.4)).entropy().item():.6f}",
      "geometric", f"{Geometric(probs=torch.tensor(0.25)).log_prob(counts).sum().item():.6f}", f"{Geometric(0.25).entropy().item():.6f}")
