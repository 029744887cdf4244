"""Train the seed documents' MLP (784-256-256-10 with BatchNorm and Dropout) and watch the loss fall.

    bash scripts/main.sh                                        # 2 ranks, data-parallel (the README's main job)
    python examples/train_mlp.py                                # one process
    python -m ember.distributed.run --nproc-per-node 2 examples/train_mlp.py

The data is synthetic but learnable: 10 Gaussian clusters in 784 dimensions.
Under the launcher every rank trains on its own shard (DistributedSampler) and
loss.backward() averages the gradients across ranks; rank 0 prints.
"""

import argparse
import os
import time

import ember
import ember.nn as nn
from ember.utils.data import DataLoader, TensorDataset


class MLPModel(nn.Module):
    """The model of seed document 003: two hidden layers with BatchNorm, ReLU and Dropout."""

    def __init__(self, input_dim=784, hidden_dim=256, num_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, hidden_dim)
        self.bn1 = nn.BatchNorm1d(hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, hidden_dim)
        self.bn2 = nn.BatchNorm1d(hidden_dim)
        self.fc3 = nn.Linear(hidden_dim, num_classes)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(0.3)

    def forward(self, x):
        x = self.dropout(self.relu(self.bn1(self.fc1(x))))
        x = self.dropout(self.relu(self.bn2(self.fc2(x))))
        return self.fc3(x)


def make_data(n, seed=0):
    """n samples from 10 Gaussian clusters (the same on every rank)."""
    g = ember.Generator().manual_seed(seed)
    centers = ember.randn(10, 784, generator=g)
    labels = ember.randint(0, 10, (n,), generator=g)
    return centers[labels] + 2.0 * ember.randn(n, 784, generator=g), labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank")
    parser.add_argument("--samples", type=int, default=2048)
    args = parser.parse_args()

    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        import ember.distributed as dist
        from ember.nn.parallel import DistributedDataParallel
        from ember.utils.data.distributed import DistributedSampler

        dist.init_process_group()
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1

    ember.manual_seed(42)
    X, y = make_data(args.samples)
    dataset = TensorDataset(X, y)
    sampler = DistributedSampler(dataset, shuffle=True, seed=0) if distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler)

    model = MLPModel()
    if distributed:
        model = DistributedDataParallel(model)
    criterion = nn.CrossEntropyLoss()
    optimizer = ember.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = ember.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)

    if rank == 0:
        print(f"training the seed MLP on {world} process(es), batch {args.batch_size} per process")
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        start, total, batches = time.perf_counter(), 0.0, 0
        for data, target in loader:
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()  # under DDP the gradients are averaged across ranks here
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
            total += loss.item()
            batches += 1
        scheduler.step()
        if rank == 0:
            ms = 1000 * (time.perf_counter() - start) / batches
            print(f"epoch {epoch + 1}/{args.epochs}  loss {total / batches:.4f}  "
                  f"lr {optimizer.param_groups[0]['lr']:.6f}  {ms:.2f} ms/step")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
