"""The quickstart's loop: a Flatten + Linear/ReLU stack, DataLoader, train and test functions, accuracy counted
with the legacy ``.type(torch.float)`` idiom; synthetic 8x8 "images" in place of a downloaded data set.

    python quickstart.py [--epochs N]
"""

import argparse

import numpy as np
import torch
from _support import same_weights
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()

gen = np.random.default_rng(5)
centers = gen.normal(0, 1, size=(4, 8, 8)).astype("float32")
y_all = gen.integers(0, 4, size=160)
x_all = (centers[y_all] + gen.normal(0, 0.8, size=(160, 8, 8))).astype("float32")
training_data = TensorDataset(torch.from_numpy(x_all[:128]), torch.from_numpy(y_all[:128]))
test_data = TensorDataset(torch.from_numpy(x_all[128:]), torch.from_numpy(y_all[128:]))
train_dataloader = DataLoader(training_data, batch_size=32)
test_dataloader = DataLoader(test_data, batch_size=32)

device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                                               nn.Linear(32, 4))

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


model = NeuralNetwork().to(device)
same_weights(model)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)


def train(dataloader, model, loss_fn, optimizer):
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"loss: {loss.item():>.8f}  [{(batch + 1) * len(X):>3d}/{len(dataloader.dataset):>3d}]")


def test(dataloader, model, loss_fn):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    print(f"Test: Accuracy: {100 * correct / len(dataloader.dataset):>0.1f}%, Avg loss: {test_loss / 1:>8f}")


for t in range(args.epochs):
    print(f"Epoch {t + 1}")
    train(train_dataloader, model, loss_fn, optimizer)
    test(test_dataloader, model, loss_fn)
