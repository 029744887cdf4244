"""A capsule network with dynamic routing in the idiom of gram-ai/capsule-networks: a softmax over an arbitrary
dim by transposing and calling F.softmax without dim (PyTorch's implicit-dim warning), squash, routing by
agreement with broadcast matmuls, one-hot labels via torch.sparse.torch.eye(...).index_select, margin loss plus a
masked reconstruction (MSELoss(size_average=True), the deprecated spelling), ReduceLROnPlateau. Tiny 12x12
synthetic 'digits' (one of 4 bar patterns)."""

# ruff: noqa: UP008 (super(CapsuleLayer, self), as the program it imitates writes it)
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn
from torch.autograd import Variable
from torch.optim import Adam
from torch.optim.lr_scheduler import ReduceLROnPlateau

NUM_CLASSES, NUM_ROUTING_ITERATIONS = 4, 3
r = rng(1)


def softmax(input, dim=1):
    transposed_input = input.transpose(dim, len(input.size()) - 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        softmaxed_output = F.softmax(transposed_input.contiguous().view(-1, transposed_input.size(-1)))
    assert any("Implicit dimension choice" in str(w.message) for w in caught)
    return softmaxed_output.view(*transposed_input.size()).transpose(dim, len(input.size()) - 1)


class CapsuleLayer(nn.Module):
    def __init__(self, num_capsules, num_route_nodes, in_channels, out_channels, kernel_size=None, stride=None,
                 num_iterations=NUM_ROUTING_ITERATIONS):
        super(CapsuleLayer, self).__init__()
        self.num_route_nodes = num_route_nodes
        self.num_iterations = num_iterations
        self.num_capsules = num_capsules
        if num_route_nodes != -1:
            self.route_weights = nn.Parameter(torch.randn(num_capsules, num_route_nodes, in_channels, out_channels))
        else:
            self.capsules = nn.ModuleList(
                [nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride, padding=0)
                 for _ in range(num_capsules)])

    def squash(self, tensor, dim=-1):
        squared_norm = (tensor ** 2).sum(dim=dim, keepdim=True)
        scale = squared_norm / (1 + squared_norm)
        return scale * tensor / torch.sqrt(squared_norm)

    def forward(self, x):
        if self.num_route_nodes != -1:
            priors = x[None, :, :, None, :] @ self.route_weights[:, None, :, :, :]
            logits = Variable(torch.zeros(*priors.size()))
            for i in range(self.num_iterations):
                probs = softmax(logits, dim=2)
                outputs = self.squash((probs * priors).sum(dim=2, keepdim=True))
                if i != self.num_iterations - 1:
                    delta_logits = (priors * outputs).sum(dim=-1, keepdim=True)
                    logits = logits + delta_logits
        else:
            outputs = [capsule(x).view(x.size(0), -1, 1) for capsule in self.capsules]
            outputs = torch.cat(outputs, dim=-1)
            outputs = self.squash(outputs)
        return outputs


class CapsuleNet(nn.Module):
    def __init__(self):
        super(CapsuleNet, self).__init__()
        self.conv1 = nn.Conv2d(in_channels=1, out_channels=16, kernel_size=3, stride=1)
        self.primary_capsules = CapsuleLayer(num_capsules=4, num_route_nodes=-1, in_channels=16, out_channels=4,
                                             kernel_size=3, stride=2)
        self.digit_capsules = CapsuleLayer(num_capsules=NUM_CLASSES, num_route_nodes=4 * 4 * 4, in_channels=4,
                                           out_channels=8)
        self.decoder = nn.Sequential(nn.Linear(8, 32), nn.ReLU(inplace=True), nn.Linear(32, 144), nn.Sigmoid())

    def forward(self, x, y=None):
        x = F.relu(self.conv1(x), inplace=True)
        x = self.primary_capsules(x)
        x = self.digit_capsules(x).squeeze().transpose(0, 1)
        classes = (x ** 2).sum(dim=-1) ** 0.5
        classes = F.softmax(classes, dim=-1)
        if y is None:
            _, max_length_indices = classes.max(dim=1)
            y = Variable(torch.sparse.torch.eye(NUM_CLASSES)).index_select(dim=0, index=max_length_indices.data)
        reconstructions = self.decoder((x * y[:, :, None]).sum(dim=1))
        return classes, reconstructions


class CapsuleLoss(nn.Module):
    def __init__(self):
        super(CapsuleLoss, self).__init__()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.reconstruction_loss = nn.MSELoss(size_average=True)

    def forward(self, images, labels, classes, reconstructions):
        left = F.relu(0.9 - classes, inplace=True) ** 2
        right = F.relu(classes - 0.1, inplace=True) ** 2
        margin_loss = labels * left + 0.5 * (1. - labels) * right
        margin_loss = margin_loss.sum()
        reconstruction_loss = self.reconstruction_loss(reconstructions, images.view(images.size(0), -1))
        return (margin_loss + 0.0005 * reconstruction_loss) / images.size(0)


def digits(n):
    labels = r.integers(0, NUM_CLASSES, size=n)
    images = r.uniform(0, 0.2, size=(n, 12, 12)).astype(np.float32)
    for i, c in enumerate(labels):
        if c == 0:
            images[i, 2:10, 5:7] += 0.8
        elif c == 1:
            images[i, 5:7, 2:10] += 0.8
        elif c == 2:
            images[i, np.arange(2, 10), np.arange(2, 10)] += 0.8
        else:
            images[i, 2:10, 2:4] += 0.8
            images[i, 2:10, 8:10] += 0.8
    return torch.from_numpy(images), torch.from_numpy(labels)


model = CapsuleNet()
same_weights(model)
optimizer = Adam(model.parameters(), lr=2e-3)
scheduler = ReduceLROnPlateau(optimizer, "max", patience=1)
capsule_loss = CapsuleLoss()
for epoch in range(3):
    for step in range(3):
        data, labels = digits(16)
        data = data.unsqueeze(1).float()
        labels = torch.sparse.torch.eye(NUM_CLASSES).index_select(dim=0, index=torch.LongTensor(labels))
        data, labels = Variable(data), Variable(labels)
        optimizer.zero_grad()
        classes, reconstructions = model(data, labels)
        loss = capsule_loss(data, labels, classes, reconstructions)
        loss.backward()
        optimizer.step()
        print(f"[Epoch {epoch}] step {step} loss {loss.data.item():.6f}")
    model.eval()
    with torch.no_grad():
        data, labels = digits(32)
        classes, recon = model(data.unsqueeze(1))
        acc = (classes.max(1)[1] == labels).float().mean().item()
    model.train()
    scheduler.step(acc)
    print(f"[Epoch {epoch}] accuracy {acc:.4f} recon mean {recon.mean().item():.6f} lr {optimizer.param_groups[0]['lr']:.6f}")
