"""A small image classifier trained with Adadelta and StepLR (the shape of the classic MNIST example), on
synthetic 16x16 images: a bright square in one of ten places is the label.

    python cnn_adadelta.py [--epochs N] [--dropout P]
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from _support import same_weights
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--dropout", type=float, default=0.25)
parser.add_argument("--lr", type=float, default=1.0)
parser.add_argument("--gamma", type=float, default=0.7)
args = parser.parse_args()
torch.manual_seed(1)

gen = np.random.default_rng(0)
labels = gen.integers(0, 10, size=96)
images = gen.normal(0, 0.3, size=(96, 1, 16, 16)).astype("float32")
for i, c in enumerate(labels):
    r, col = divmod(int(c), 5)
    images[i, 0, 2 + 6 * r:6 + 6 * r, 1 + 3 * col:4 + 3 * col] += 1.0
dataset = TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
train_loader = DataLoader(dataset, batch_size=32)


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(p)
        self.dropout2 = nn.Dropout(2 * p)
        self.fc1 = nn.Linear(16 * 6 * 6, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


model = Net(args.dropout)
same_weights(model)
optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
for epoch in range(1, args.epochs + 1):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}] Loss: {loss.item():.8f}")
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in train_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    print(f"Test set: Average loss: {test_loss / len(train_loader.dataset):.8f}, Accuracy: {correct}/96")
    scheduler.step()
