"""A complete training program: an MLP with BatchNorm and Dropout, a trainer, a learning-rate schedule.

An ordinary PyTorch program. Run it on ember with

    python -m ember.compat examples/training_loop.py

or with PyTorch as ``python examples/training_loop.py``. What it does, in order:

1. builds a 784-256-256-10 MLP (Linear, BatchNorm1d, ReLU, Dropout) and a synthetic, learnable
   data set (10 Gaussian clusters) served by a shuffling ``DataLoader``;
2. runs one backward and prints every parameter's gradient (shape, mean, std, norm);
3. trains 6 epochs with Adam, gradient clipping and gradient accumulation (2 batches of 16 per
   step), a ``StepLR`` halving the learning rate after epoch 5, printing loss and LR per epoch;
4. evaluates the accuracy in ``eval()`` mode under ``no_grad()``, saves a checkpoint with
   ``torch.save`` and checks that a fresh model loaded from it predicts the same.
"""

import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self, inputs=784, hidden=256, classes=10, dropout=0.3):
        super().__init__()
        self.fc1 = nn.Linear(inputs, hidden)
        self.bn1 = nn.BatchNorm1d(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.bn2 = nn.BatchNorm1d(hidden)
        self.fc3 = nn.Linear(hidden, classes)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.dropout(self.relu(self.bn1(self.fc1(x))))
        x = self.dropout(self.relu(self.bn2(self.fc2(x))))
        return self.fc3(x)


class Trainer:
    """Owns the model, loss, optimizer and schedule; one call per epoch."""

    def __init__(self, model, lr=1e-3, accumulation_steps=2, max_norm=5.0):
        self.model = model
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = optim.Adam(model.parameters(), lr=lr)
        self.scheduler = optim.lr_scheduler.StepLR(self.optimizer, step_size=5, gamma=0.5)
        self.accumulation_steps = accumulation_steps
        self.max_norm = max_norm

    def print_gradients(self, data, target):
        """One backward on one batch, then a line per parameter (no optimizer step)."""
        self.model.train()
        self.optimizer.zero_grad()
        self.criterion(self.model(data), target).backward()
        print("gradients after one backward:")
        for name, p in self.model.named_parameters():
            if p.grad is None:
                print(f"  {name}: no gradient")
            else:
                g = p.grad
                print(f"  {name}: shape={tuple(g.shape)} mean={g.mean().item():+.2e} "
                      f"std={g.std().item():.2e} norm={g.norm().item():.2e}")
        self.optimizer.zero_grad()

    def train_epoch(self, loader):
        """Average loss per batch; the optimizer steps once every `accumulation_steps` batches."""
        self.model.train()
        self.optimizer.zero_grad()
        total = 0.0
        for i, (data, target) in enumerate(loader):
            loss = self.criterion(self.model(data), target)
            (loss / self.accumulation_steps).backward()       # gradients add up across the batches
            if (i + 1) % self.accumulation_steps == 0 or i + 1 == len(loader):
                nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=self.max_norm)  # after backward, before step
                self.optimizer.step()
                self.optimizer.zero_grad()
            total += loss.item()
        self.scheduler.step()
        return total / len(loader)

    @torch.no_grad()
    def accuracy(self, loader):
        self.model.eval()                     # BatchNorm uses its running statistics, Dropout is off
        correct = count = 0
        for data, target in loader:
            correct += (self.model(data).argmax(dim=1) == target).sum().item()
            count += target.numel()
        return correct / count


def clusters(n, generator):
    """n points around 10 random centres in 784 dimensions, labelled by centre."""
    centres = torch.randn(10, 784, generator=generator)
    labels = torch.randint(0, 10, (n,), generator=generator)
    return centres[labels] + 3.0 * torch.randn(n, 784, generator=generator), labels


def main(epochs=6):
    torch.manual_seed(0)
    x, y = clusters(1200, torch.Generator().manual_seed(1))
    train = DataLoader(TensorDataset(x[:1000], y[:1000]), batch_size=16, shuffle=True)
    test = DataLoader(TensorDataset(x[1000:], y[1000:]), batch_size=100)

    model = MLP()
    trainer = Trainer(model)
    data, target = next(iter(train))
    trainer.print_gradients(data, target)

    for epoch in range(1, epochs + 1):
        loss = trainer.train_epoch(train)
        print(f"epoch {epoch}/{epochs}  loss {loss:.4f}  lr {trainer.optimizer.param_groups[0]['lr']:.6f}")
    accuracy = trainer.accuracy(test)
    print(f"test accuracy {accuracy:.1%}")

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "mlp.pt")
        torch.save({"model": model.state_dict(), "optimizer": trainer.optimizer.state_dict()}, path)
        restored = MLP()
        restored.load_state_dict(torch.load(path)["model"])
    restored.eval()
    with torch.no_grad():
        same = torch.equal(restored(x[1000:]).argmax(dim=1), model(x[1000:]).argmax(dim=1))
    print(f"checkpoint reloaded: predictions {'identical' if same else 'DIFFER'}")
    assert same


if __name__ == "__main__":
    main()
