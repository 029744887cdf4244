"""A binarized network trained with an evidential (Dirichlet) loss, in the idioms of public BinaryNet and evidential
deep learning repos: a straight-through sign written as a legacy ``torch.autograd.function.InplaceFunction``
subclass whose forward and backward are plain (not static) methods called through ``apply``, binarized Conv2d and
Linear subclasses, the full-precision latent weights kept on each parameter as ``p.org`` (copied back before the
step, clamped to [-1, 1] after it), the model and loss cast with ``.type('torch.DoubleTensor')``, a regime that
rebuilds the optimizer from the previous one's ``param_groups`` (SGD, then ``Adam(optimizer.param_groups)``), the
evidential loss (ReLU evidence, Dirichlet KL to the uniform prior through ``lgamma`` and ``digamma``, annealed by
``torch.min`` of two tensors), a hinge loss written with ``output[output.le(0)] = 0``, and a straight-through
Gumbel-softmax head (hard one-hot by ``scatter_``, ``(y_hard - y).detach() + y``) on NumPy-drawn noise."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights
from torch.autograd.function import InplaceFunction

torch.manual_seed(0)
r = rng(252)


class Binarize(InplaceFunction):
    def forward(ctx, input, quant_mode="det", inplace=False):
        ctx.inplace = inplace
        if ctx.inplace:
            ctx.mark_dirty(input)
            output = input
        else:
            output = input.clone()
        return output.sign()

    def backward(ctx, grad_output):
        return grad_output, None, None  # straight through


def binarized(input):
    return Binarize.apply(input, "det")


class BinarizeConv2d(nn.Conv2d):
    def forward(self, input):
        input_b = binarized(input) if input.size(1) != 1 else input
        if not hasattr(self.weight, "org"):
            self.weight.org = self.weight.data.clone()
        self.weight.data = binarized(self.weight.org)
        return F.conv2d(input_b, self.weight, None, self.stride, self.padding)


class BinarizeLinear(nn.Linear):
    def forward(self, input):
        if not hasattr(self.weight, "org"):
            self.weight.org = self.weight.data.clone()
        self.weight.data = binarized(self.weight.org)
        out = F.linear(binarized(input), self.weight)
        if self.bias is not None:
            self.bias.org = self.bias.data.clone()
            out += self.bias.view(1, -1).expand_as(out)
        return out


class HingeLoss(nn.Module):
    def forward(self, input, target):
        output = 1.0 - input.mul(target)
        output[output.le(0)] = 0
        return output.mean()


class Net(nn.Module):
    def __init__(self, classes=4, latent=3):
        super().__init__()
        self.features = nn.Sequential(
            BinarizeConv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.Hardtanh(inplace=True),
            nn.MaxPool2d(2),
            BinarizeConv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.Hardtanh(inplace=True),
            nn.MaxPool2d(2))
        self.fc1 = BinarizeLinear(16 * 3 * 3, 32, bias=False)
        self.bn = nn.BatchNorm1d(32)
        self.fc2 = BinarizeLinear(32, classes)
        self.code = nn.Linear(32, latent * classes)
        self.latent, self.classes = latent, classes

    def forward(self, x):
        h = F.hardtanh(self.bn(self.fc1(self.features(x).flatten(1))))
        return self.fc2(h), self.code(h).view(-1, self.latent, self.classes)


def kl_divergence(alpha, num_classes):
    ones = torch.ones([1, num_classes], dtype=alpha.dtype)
    sum_alpha = torch.sum(alpha, dim=1, keepdim=True)
    first_term = (torch.lgamma(sum_alpha) - torch.lgamma(alpha).sum(dim=1, keepdim=True)
                  + torch.lgamma(ones).sum(dim=1, keepdim=True) - torch.lgamma(ones.sum(dim=1, keepdim=True)))
    second_term = (alpha - ones).mul(torch.digamma(alpha) - torch.digamma(sum_alpha)).sum(dim=1, keepdim=True)
    return first_term + second_term


def edl_digamma_loss(output, y, epoch, num_classes, annealing_step=4):
    alpha = F.relu(output) + 1
    S = torch.sum(alpha, dim=1, keepdim=True)
    A = torch.sum(y * (torch.digamma(S) - torch.digamma(alpha)), dim=1, keepdim=True)
    annealing_coef = torch.min(torch.tensor(1.0, dtype=torch.float32),
                               torch.tensor(epoch / annealing_step, dtype=torch.float32))
    kl_alpha = (alpha - 1) * (1 - y) + 1
    return torch.mean(A + annealing_coef * kl_divergence(kl_alpha, num_classes))


def gumbel_softmax(logits, noise, temperature):
    y = F.softmax((logits - torch.log(-torch.log(noise + 1e-20) + 1e-20)) / temperature, dim=-1)
    _, ind = y.max(dim=-1)
    y_hard = torch.zeros_like(y).view(-1, y.size(-1))
    y_hard.scatter_(1, ind.view(-1, 1), 1)
    return (y_hard.view(*y.shape) - y).detach() + y


def make_data(n):
    labels = r.integers(0, 4, n)
    yy, xx = np.mgrid[0:12, 0:12]
    centres = np.array([[3, 3], [3, 8], [8, 3], [8, 8]])
    images = np.exp(-((xx - centres[labels, 0, None, None]) ** 2 + (yy - centres[labels, 1, None, None]) ** 2) / 6)
    images = images + 0.3 * r.standard_normal((n, 12, 12))
    return torch.from_numpy(images[:, None]), torch.from_numpy(labels)


model = Net()
same_weights(model)
model.type("torch.DoubleTensor")
hinge = HingeLoss().type("torch.DoubleTensor")
regime = {0: {"optimizer": "SGD", "lr": 0.05, "momentum": 0.9}, 2: {"optimizer": "Adam", "lr": 5e-3}, 4: {"lr": 1e-3}}
optimizers = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam}
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images, labels = make_data(192)
test_images, test_labels = make_data(128)
for epoch in range(5):
    if epoch in regime:
        setting = regime[epoch]
        if "optimizer" in setting:  # (BinaryNet's adjust_optimizer: the new one takes the old one's groups)
            optimizer = optimizers[setting["optimizer"]](optimizer.param_groups)
        for group in optimizer.param_groups:
            for key in group.keys():
                if key in setting:
                    group[key] = setting[key]
    model.train()
    total = 0.0
    for i in range(0, 192, 32):
        x, target = images[i:i + 32], labels[i:i + 32]
        y = torch.eye(4, dtype=torch.float64)[target]
        output, code_logits = model(x)
        noise = torch.from_numpy(r.random(code_logits.shape))
        code = gumbel_softmax(code_logits, noise, temperature=max(0.5, 1.0 - 0.1 * epoch))
        loss = (edl_digamma_loss(output, y, epoch, 4) + 0.1 * hinge(output, 2 * y - 1)
                + 0.01 * (code * torch.arange(4.0, dtype=torch.float64)).sum(-1).var())
        optimizer.zero_grad()
        loss.backward()
        for p in model.parameters():
            if hasattr(p, "org"):
                p.data.copy_(p.org)
        optimizer.step()
        for p in model.parameters():
            if hasattr(p, "org"):
                p.org.copy_(p.data.clamp_(-1, 1))
        total += loss.item()
    model.eval()
    with torch.no_grad():
        output, _ = model(test_images)
        alpha = F.relu(output) + 1
        uncertainty = 4 / torch.sum(alpha, dim=1, keepdim=True)
        accuracy = (output.argmax(1) == test_labels).double().mean().item()
    print(f"epoch {epoch} {type(optimizer).__name__} lr {optimizer.param_groups[0]['lr']:.4f} "
          f"loss {total / 6:.6f} accuracy {accuracy:.4f} uncertainty {uncertainty.mean().item():.6f} "
          f"binary weights {model.fc1.weight.sum().item():.1f}")
