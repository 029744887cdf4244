"""ember's main job: an MLP classifier trained data-parallel, with loss and accuracy per epoch.

    bash scripts/main.sh                                        # 2 processes over MPI (sets up .venv-main first)
    python -m ember.distributed.run --nproc-per-node 2 examples/train_mlp.py
    python examples/train_mlp.py                                # one process

The model is a 784-256-256-10 MLP with BatchNorm, ReLU and Dropout, trained with Adam and gradient
clipping. The data is synthetic but learnable: 10 Gaussian clusters in 784 dimensions (a stand-in for
flattened 28x28 images), a training set and a held-out test set. Under the launcher every process trains
on its own share of the training set (DistributedSampler) and ``loss.backward()`` averages the gradients
across processes, so all replicas stay identical; process 0 prints. A loss curve is written as a PNG when
matplotlib is installed, and a progress bar is shown with tqdm when it is installed and the output is a
terminal (otherwise a plain progress line every quarter epoch).
"""

import argparse
import os
import sys
import time

import ember
import ember.nn as nn
from ember.utils.data import DataLoader, TensorDataset


class MLPModel(nn.Module):
    """Two hidden layers, each Linear -> BatchNorm1d -> ReLU -> Dropout, then a linear classifier."""

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


def make_data(n_train, n_test, seed=0):
    """Training and test sets drawn from the same 10 Gaussian clusters (identical on every process)."""
    g = ember.Generator().manual_seed(seed)
    centers = ember.randn(10, 784, generator=g)
    labels = ember.randint(0, 10, (n_train + n_test,), generator=g)
    x = centers[labels] + 5.0 * ember.randn(n_train + n_test, 784, generator=g)
    return (x[:n_train], labels[:n_train]), (x[n_train:], labels[n_train:])


class Progress:
    """Steps of one epoch: a tqdm bar (mode "bar"), a plain line every quarter (mode "lines"), or nothing."""

    def __init__(self, mode, total, desc):
        self.mode, self.total, self.desc, self.done = mode, total, desc, 0
        self.bar = None
        if mode == "bar":
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="step", leave=False, file=sys.stdout,
                            dynamic_ncols=True)

    def step(self, loss):
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
        elif self.mode == "lines" and self.done < self.total and self.done % max(1, self.total // 4) == 0:
            print(f"  {self.desc}: {self.done}/{self.total} steps ({self.done / self.total:.0%}), "
                  f"loss {loss:.4f}", flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def progress_mode(requested):
    """"auto": a bar when tqdm is installed and stdout is a terminal, else plain lines."""
    if requested == "auto":
        requested = "bar" if sys.stdout.isatty() else "lines"
    if requested == "bar":
        try:
            import tqdm  # noqa: F401
        except ImportError:
            return "lines"
    return requested


def save_loss_curve(path, losses, test_accuracy):
    """A PNG of the mean training loss per epoch (and test accuracy); returns False without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return False
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    fig = Figure(figsize=(6, 3.6), dpi=110)
    ax = fig.subplots()
    epochs = range(1, len(losses) + 1)
    ax.plot(epochs, losses, "o-", color="#4C72B0", label="training loss")
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy loss", color="#4C72B0")
    ax.set_xticks(list(epochs))
    ax.grid(alpha=0.3)
    acc = ax.twinx()
    acc.plot(epochs, [100 * a for a in test_accuracy], "s--", color="#55A868", label="test accuracy")
    acc.set_ylabel("test accuracy (%)", color="#55A868")
    ax.set_title("ember main job: MLP on 10 Gaussian clusters")
    fig.tight_layout()
    fig.savefig(path)
    return True


@ember.no_grad()
def accuracy(model, x, y, batch_size=512):
    model.eval()  # BatchNorm uses its running statistics, Dropout is off
    correct = sum((model(x[i:i + batch_size]).argmax(dim=1) == y[i:i + batch_size]).sum().item()
                  for i in range(0, len(y), batch_size))
    return correct / len(y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32, help="per process (default 32)")
    parser.add_argument("--samples", type=int, default=2048, help="training samples (default 2048)")
    parser.add_argument("--test-samples", type=int, default=512)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--plot", default=os.path.join("out", "train_mlp_loss.png"),
                        help="where to write the loss curve (PNG; needs matplotlib); '' for none")
    parser.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto",
                        help="auto: a tqdm bar when installed and stdout is a terminal, else plain lines")
    args = parser.parse_args()
    if args.epochs < 1 or args.samples < 1 or args.test_samples < 1 or args.batch_size < 1:
        parser.error("--epochs, --samples, --test-samples and --batch-size must be at least 1")

    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        import ember.distributed as dist
        from ember.nn.parallel import DistributedDataParallel
        from ember.utils.data.distributed import DistributedSampler

        dist.init_process_group()
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    say = print if rank == 0 else (lambda *a, **k: None)

    ember.manual_seed(42)
    (x_train, y_train), (x_test, y_test) = make_data(args.samples, args.test_samples)
    dataset = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(dataset, shuffle=True, seed=0) if distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler)

    net = MLPModel()
    model = DistributedDataParallel(net) if distributed else net
    criterion = nn.CrossEntropyLoss()
    optimizer = ember.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = ember.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    mode = progress_mode(args.progress) if rank == 0 else "none"

    how = f"data-parallel on {world} processes (MPI)" if distributed else "in one process"
    say(f"ember main job: an MLP classifier (784-256-256-10 with BatchNorm, ReLU, Dropout; "
        f"{sum(p.numel() for p in net.parameters()):,} parameters),\n"
        f"  trained {how}, Adam lr {args.lr:g}, batch {args.batch_size} per process, "
        f"{args.epochs} epoch{'s' * (args.epochs != 1)}")
    say("data: synthetic, 10 Gaussian clusters in 784 dimensions (a stand-in for flattened 28x28 images);\n"
        f"  {args.samples} training samples" + (f" split {world} ways" if distributed else "") +
        f", {args.test_samples} held out for testing", flush=True)

    losses, test_accuracy = [], []
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        epoch_start = time.perf_counter()
        # per-process sums: loss x samples, correct predictions, samples
        loss_sum, correct, seen = 0.0, 0, 0
        progress = Progress(mode, len(loader), f"epoch {epoch}/{args.epochs}")
        for data, target in loader:
            optimizer.zero_grad()
            output = model(data)
            loss = criterion(output, target)
            loss.backward()  # under DDP the gradients are averaged across processes here
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
            loss_sum += loss.item() * len(target)
            correct += (output.argmax(dim=1) == target).sum().item()
            seen += len(target)
            progress.step(loss.item())
        progress.close()
        scheduler.step()
        totals = ember.tensor([loss_sum, correct, seen], dtype=ember.float64)
        if distributed:
            dist.all_reduce(totals)  # sums over processes: the epoch's figures for the whole training set
        loss_sum, correct, seen = totals.tolist()
        losses.append(loss_sum / seen)
        test_accuracy.append(accuracy(net, x_test, y_test))
        seconds = time.perf_counter() - epoch_start
        say(f"epoch {epoch}/{args.epochs}  loss {losses[-1]:.4f}  train acc {correct / seen:.1%}  "
            f"test acc {test_accuracy[-1]:.1%}  lr {optimizer.param_groups[0]['lr']:.6f}  "
            f"({seconds:.1f} s, {1000 * seconds / len(loader):.1f} ms/step)", flush=True)
    total = time.perf_counter() - start

    say(f"done: {args.epochs} epoch{'s' * (args.epochs != 1)} in {total:.1f} s; "
        f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, test accuracy {test_accuracy[-1]:.1%}")
    if rank == 0 and args.plot:
        if save_loss_curve(args.plot, losses, test_accuracy):
            say(f"loss curve: {os.path.abspath(args.plot)}")
        else:
            say("loss curve: not drawn (matplotlib is not installed; pip install matplotlib)")
    say("next: examples/ holds PyTorch programs that run on ember (python -m ember.compat examples/FILE);\n"
        "  README.md and docs/ explain what happens inside loss.backward(); bash scripts/test.sh runs the tests")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
