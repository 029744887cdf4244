"""Learning a learning rate by differentiating through training (hypergradient descent, as MNIST-1D's notebook does
it): an MLP's weights are flattened into one vector with the legacy constructor (``torch.Tensor(p.reshape(-1))``,
an alias that keeps the parameters' history), an inner loop of plain SGD steps keeps its graph
(``autograd.grad(..., create_graph=True)``), and the mean inner loss is differentiated with respect to the inner
learning rate, a tensor that requires grad, which an outer gradient step updates.

    python metalearn_lr.py [--outer-steps N] [--inner-steps N]
"""

import argparse

import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch.autograd import Variable

parser = argparse.ArgumentParser()
parser.add_argument("--outer-steps", type=int, default=6)
parser.add_argument("--inner-steps", type=int, default=25)
parser.add_argument("--outer-lr", type=float, default=0.3)
args = parser.parse_args()

D, H, C = 12, 16, 4
data = rng(3)
centres = data.normal(0, 1.5, (C, D))
labels = data.integers(0, C, 400)
x_all = torch.tensor(centres[labels] + data.normal(0, 3.0, (400, D)), dtype=torch.float32)
y_all = torch.LongTensor(labels)

first, second = torch.nn.Linear(D, H), torch.nn.Linear(H, C)
same_weights(first, second)
start = torch.cat([torch.Tensor(p.reshape(-1)) for p in (first.weight, first.bias, second.weight, second.bias)])


def forward(x, flat):
    sizes = (H * D, H, C * H, C)
    w1, b1, w2, b2 = torch.split(flat, sizes)
    hidden = torch.tanh(x @ w1.view(H, D).t() + b1)
    return hidden @ w2.view(C, H).t() + b2


def inner_training(lr, flat):
    losses = []
    for step in range(args.inner_steps):
        i = (step * 40) % len(x_all)
        loss = F.cross_entropy(forward(x_all[i:i + 40], flat), y_all[i:i + 40])
        grad, = torch.autograd.grad(loss, flat, create_graph=True)
        flat = flat - lr * grad
        losses.append(loss)
    return torch.stack(losses), flat


lr = Variable(torch.FloatTensor([0.5]), requires_grad=True)
for outer in range(args.outer_steps):
    losses, trained = inner_training(lr, start)
    outer_loss = losses.mean()
    hypergrad, = torch.autograd.grad(outer_loss, lr)
    lr = lr - args.outer_lr * hypergrad
    with torch.no_grad():
        accuracy = (forward(x_all, trained).argmax(1) == y_all).float().mean()
    print(f"outer {outer} mean inner loss {outer_loss.item():.6f} last {losses[-1].item():.6f} "
          f"hypergrad {hypergrad.item():.6f} lr {lr.item():.6f} accuracy {accuracy.item():.4f}")

# the start vector is an alias of the parameters: a gradient through it reaches them
total = F.cross_entropy(forward(x_all, start), y_all)
total.backward()
print(f"gradient norm reaching the parameters {first.weight.grad.norm().item():.6f} {second.bias.grad.norm().item():.6f}")
