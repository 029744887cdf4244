"""A complex-valued CNN in the complexPyTorch idiom: images cast to ``torch.complex64``, a complex convolution and
linear layer made of two real layers applied to the real and imaginary parts (``(W_r x_r - W_i x_i) + 1j (W_r x_i
+ W_i x_r)``), a complex ReLU on each part, a max-pool that keeps the entry of largest modulus with its phase (the
modulus pooled with ``return_indices=True``, the phase taken with ``torch.atan2`` of every entry and gathered at
those indices, then ``abs * (cos + 1j sin)``), a naive complex batch norm (one ``BatchNorm`` per part), and the
modulus of the logits into ``log_softmax``. After the ReLU many entries are exactly 0 + 0j, where ``atan2`` sits
at its origin: the gradient it passes there must be 0, not NaN. Trained with SGD and momentum on synthetic
four-class images; prints the loss and accuracy per epoch.

    python complex_cnn.py [--epochs N]
"""

import argparse

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch_size", type=int, default=16)
args = parser.parse_args()


def images(n=128, size=16):
    gen = rng(7)
    labels = gen.integers(0, 4, n)
    x = 0.3 * gen.random((n, 1, size, size))
    for i, label in enumerate(labels):  # a bright quadrant per class
        r, c = divmod(int(label), 2)
        x[i, 0, r * 8:(r + 1) * 8, c * 8:(c + 1) * 8] += 0.25
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(labels)


def apply_complex(real_layer, imag_layer, z):
    return ((real_layer(z.real) - imag_layer(z.imag)).type(torch.complex64)
            + 1j * (real_layer(z.imag) + imag_layer(z.real)).type(torch.complex64))


def complex_relu(z):
    return F.relu(z.real).type(torch.complex64) + 1j * F.relu(z.imag).type(torch.complex64)


def complex_max_pool2d(z, kernel_size):
    modulus, indices = F.max_pool2d(z.abs(), kernel_size, return_indices=True)
    phase = torch.atan2(z.imag, z.real)
    phase = phase.flatten(start_dim=-2).gather(dim=-1, index=indices.flatten(start_dim=-2)).view_as(indices)
    return modulus.type(torch.complex64) * (torch.cos(phase).type(torch.complex64)
                                            + 1j * torch.sin(phase).type(torch.complex64))


class ComplexConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv_r = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.conv_i = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, z):
        return apply_complex(self.conv_r, self.conv_i, z)


class ComplexLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc_r = nn.Linear(in_features, out_features)
        self.fc_i = nn.Linear(in_features, out_features)

    def forward(self, z):
        return apply_complex(self.fc_r, self.fc_i, z)


class NaiveComplexBatchNorm2d(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn_r = nn.BatchNorm2d(channels)
        self.bn_i = nn.BatchNorm2d(channels)

    def forward(self, z):
        return self.bn_r(z.real).type(torch.complex64) + 1j * self.bn_i(z.imag).type(torch.complex64)


class ComplexNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = ComplexConv2d(1, 6, 3)
        self.bn = NaiveComplexBatchNorm2d(6)
        self.conv2 = ComplexConv2d(6, 8, 3)
        self.fc = ComplexLinear(8 * 2 * 2, 4)

    def forward(self, x):
        z = complex_max_pool2d(complex_relu(self.conv1(x)), 2)
        z = self.bn(z)
        z = complex_max_pool2d(complex_relu(self.conv2(z)), 2)
        z = self.fc(z.reshape(z.shape[0], -1))
        return F.log_softmax(z.abs(), dim=1)


x, y = images()
model = ComplexNet()
same_weights(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for epoch in range(args.epochs):
    model.train()
    order = rng(epoch).permutation(len(x))
    total, correct = 0.0, 0
    for start in range(0, len(x), args.batch_size):
        batch = torch.from_numpy(order[start:start + args.batch_size])
        data, target = x[batch].type(torch.complex64), y[batch]
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        assert all(torch.isfinite(p.grad).all() for p in model.parameters()), "a gradient is not finite"
        optimizer.step()
        total += loss.item() * len(batch)
        correct += (output.argmax(1) == target).sum().item()
    print(f"epoch {epoch} loss {total / len(x):.6f} accuracy {correct / len(x):.4f}")

model.eval()
with torch.no_grad():
    output = model(x.type(torch.complex64))
print(f"eval loss {F.nll_loss(output, y).item():.6f} accuracy {(output.argmax(1) == y).float().mean().item():.4f}")
