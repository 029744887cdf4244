"""Jacobians, Hessians, hvp and vhp of a small network, the way PyTorch's "Jacobians, Hessians, hvp, vhp, and
more: composing function transforms" tutorial computes them: row by row with autograd.grad, with torch.func's
jacrev / jacfwd / hessian (and their compositions), with torch.autograd.functional, and Hessian-vector products
from jvp of grad and from vjp. The tutorial's vmap-batched Jacobian is replaced by its "sum the batch" variant.

    python jacobians_hessians.py [--dim D]
"""

import argparse

import numpy as np
import torch
import torch.autograd.functional as AF
import torch.nn.functional as F
from _support import rng
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp

parser = argparse.ArgumentParser()
parser.add_argument("--dim", type=int, default=8)
args = parser.parse_args()
D = args.dim
r = rng(0)
weight = torch.tensor(r.standard_normal((D, D)) / np.sqrt(D), dtype=torch.float64)
bias = torch.tensor(r.standard_normal(D), dtype=torch.float64)
x = torch.tensor(r.standard_normal(D), dtype=torch.float64)
batch = torch.tensor(r.standard_normal((5, D)), dtype=torch.float64)
tangent = torch.tensor(r.standard_normal(D), dtype=torch.float64)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


def show(name, t):
    t = t.detach()
    print(f"{name}: shape {list(t.shape)} sum {t.sum().item():.10f} norm {t.norm().item():.10f} "
          f"first {t.flatten()[0].item():.10f}")


# Row by row with autograd.grad, then with jacrev: the same matrix.
xp = x.clone().requires_grad_()
rows = [torch.autograd.grad(predict(weight, bias, xp), xp, v)[0] for v in torch.eye(D, dtype=torch.float64)]
jac_rows = torch.stack(rows)
jac = jacrev(predict, argnums=2)(weight, bias, x)
show("jacobian by rows", jac_rows)
show("jacobian jacrev", jac)
print("rows == jacrev:", torch.allclose(jac_rows, jac))

# With respect to the weights and bias, reverse and forward mode.
jac_w, jac_b = jacrev(predict, argnums=(0, 1))(weight, bias, x)
fwd_w, fwd_b = jacfwd(predict, argnums=(0, 1))(weight, bias, x)
show("d/dweight", jac_w)
show("d/dbias", jac_b)
print("jacfwd == jacrev:", torch.allclose(jac_w, fwd_w) and torch.allclose(jac_b, fwd_b))

# A batch of Jacobians: each output row depends only on its own input row, so summing over the batch works.
batch_jac = jacrev(lambda w, b, xs: predict(w, b, xs).sum(0), argnums=2)(weight, bias, batch).movedim(1, 0)
show("batch jacobian", batch_jac)

# Hessians of a scalar function: the API, and jacfwd/jacrev compositions.
def energy(weight, bias, x):
    return predict(weight, bias, x).pow(2).sum() + (x * x.sin()).sum()


hess = hessian(energy, argnums=2)(weight, bias, x)
show("hessian", hess)
for name, h in (("jacrev(jacrev)", jacrev(jacrev(energy, argnums=2), argnums=2)(weight, bias, x)),
                ("jacfwd(jacfwd)", jacfwd(jacfwd(energy, argnums=2), argnums=2)(weight, bias, x)),
                ("autograd.functional", AF.hessian(lambda x: energy(weight, bias, x), x))):
    print(f"hessian == {name}:", torch.allclose(hess, h))
show("hessian wrt bias, x", hessian(energy, argnums=(1, 2))(weight, bias, x)[0][1])

# Hessian-vector products: forward-over-reverse, reverse-over-reverse, and autograd.functional's.
def f_x(x):
    return energy(weight, bias, x)


hvp_fr = jvp(grad(f_x), (x,), (tangent,))[1]
_, vjp_fn = vjp(grad(f_x), x)
hvp_rr = vjp_fn(tangent)[0]
show("hvp", hvp_fr)
print("hvp matches:", torch.allclose(hvp_fr, hess @ tangent), torch.allclose(hvp_rr, hvp_fr),
      torch.allclose(AF.hvp(f_x, x, tangent)[1], hvp_fr), torch.allclose(AF.vhp(f_x, x, tangent)[1], hvp_fr))
show("jvp of the network", AF.jvp(lambda x: predict(weight, bias, x), x, tangent)[1])
