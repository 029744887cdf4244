"""Forward-mode AD the way PyTorch's "Forward-mode Automatic Differentiation" tutorial uses it: dual tensors
through a function, through a module whose parameters are made dual (by replacing them, and with
torch.func.functional_call), and torch.func.jvp; each Jacobian-vector product checked against a reverse-mode
Jacobian. Then a few steps of training where the loss's directional derivative along a random direction is
printed before each step (forward mode inside a training loop).

    python forward_mode_jvp.py [--steps N]
"""

import argparse

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights
from torch.func import functional_call, jacrev, jvp

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()
torch.manual_seed(0)
r = rng(0)


def show(name, t):
    t = t.detach()
    print(f"{name}: shape {list(t.shape)} sum {t.sum().item():.10f} norm {t.norm().item():.10f} "
          f"first {t.flatten()[0].item():.10f}")


def fn(x, y):
    return x ** 2 + y ** 2


# Basics: a dual tensor through a function; tangents where there are none are None.
primal = torch.tensor(r.standard_normal((10, 10)), dtype=torch.float64)
tangent = torch.tensor(r.standard_normal((10, 10)), dtype=torch.float64)
plain = torch.tensor(r.standard_normal((10, 10)), dtype=torch.float64)
with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent
    dual_output = fn(dual_input, plain)
    jvp_fn = fwAD.unpack_dual(dual_output).tangent
    print("plain tensor has no tangent:", fwAD.unpack_dual(plain).tangent is None)
show("jvp of fn", jvp_fn)
print("matches 2 x t:", torch.allclose(jvp_fn, 2 * primal * tangent))

# A module: its parameters replaced by dual tensors.
model = nn.Linear(5, 5).double()
same_weights(model)
inputs = torch.tensor(r.standard_normal((16, 5)), dtype=torch.float64)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.tensor(r.standard_normal(tuple(p.shape)), dtype=torch.float64) for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(inputs)
    jvp_linear = fwAD.unpack_dual(out).tangent
show("jvp of linear wrt its parameters", jvp_linear)
print("matches x dW^T + db:", torch.allclose(jvp_linear, inputs @ tangents["weight"].T + tangents["bias"]))

# A network through torch.func.functional_call with dual parameters.
net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Sigmoid(), nn.Linear(16, 3)).double()
same_weights(net)
x = torch.tensor(r.standard_normal((8, 6)), dtype=torch.float64)
names = [n for n, _ in net.named_parameters()]
net_tangents = {n: torch.tensor(r.standard_normal(tuple(p.shape)), dtype=torch.float64)
                for n, p in net.named_parameters()}
with fwAD.dual_level():
    dual_params = {n: fwAD.make_dual(p, net_tangents[n]) for n, p in net.named_parameters()}
    jvp_net = fwAD.unpack_dual(functional_call(net, dual_params, (x,))).tangent
show("jvp of the network wrt its parameters", jvp_net)

# The same product with torch.func.jvp, and against a reverse-mode Jacobian.
detached = {n: p.detach() for n, p in net.named_parameters()}


def net_of(*values):
    return functional_call(net, dict(zip(names, values)), (x,))


out, jvp_func = jvp(net_of, tuple(detached[n] for n in names), tuple(net_tangents[n] for n in names))
print("torch.func.jvp matches dual tensors:", torch.allclose(jvp_func, jvp_net))
jacobians = jacrev(net_of, argnums=tuple(range(len(names))))(*[detached[n] for n in names])
by_jacobian = sum((j.flatten(2) @ net_tangents[n].flatten()) for j, n in zip(jacobians, names))
print("matches the Jacobian times the tangent:", torch.allclose(by_jacobian, jvp_net))

# Directional derivative of the input: J v with v along the input.
v = torch.tensor(r.standard_normal((8, 6)), dtype=torch.float64)
with fwAD.dual_level():
    y = net(fwAD.make_dual(x, v))
    show("jvp of the network wrt its input", fwAD.unpack_dual(y).tangent)

# Training, printing the loss's directional derivative along a random direction before each step.
one_hot = F.one_hot(torch.tensor(r.integers(0, 3, 8)), 3).double()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(args.steps):
    direction = {n: torch.tensor(r.standard_normal(tuple(p.shape)), dtype=torch.float64)
                 for n, p in net.named_parameters()}
    with fwAD.dual_level():
        dual_params = {n: fwAD.make_dual(p.detach(), direction[n]) for n, p in net.named_parameters()}
        dual_loss = F.mse_loss(functional_call(net, dual_params, (x,)), one_hot)
        directional = fwAD.unpack_dual(dual_loss).tangent.item()
    optimizer.zero_grad()
    loss = F.mse_loss(net(x), one_hot)
    loss.backward()
    by_gradient = sum((p.grad * direction[n]).sum() for n, p in net.named_parameters()).item()
    print(f"step {step} loss {loss.item():.10f} directional derivative {directional:.10f} "
          f"(gradient . direction {by_gradient:.10f})")
    optimizer.step()
