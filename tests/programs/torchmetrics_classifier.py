"""A small classifier trained and evaluated with torchmetrics, as public training code uses it: a MetricCollection
of multiclass metrics held by a LightningModule-style wrapper (metrics as submodules), ``forward`` for the batch
value while it accumulates, ``compute``/``reset`` per epoch, a MeanMetric for the loss, top-k accuracy, the
confusion matrix, binary and multilabel views of the same predictions, regression metrics, and the metric states
in ``state_dict`` once made persistent. Synthetic 4-class data.

    python torchmetrics_classifier.py [--epochs N]
"""

import argparse

import numpy as np
import torch
from _support import same_weights
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import MeanMetric, MetricCollection
from torchmetrics.classification import AUROC, Accuracy, ConfusionMatrix, F1Score, Precision, Recall
from torchmetrics.regression import MeanAbsoluteError, MeanSquaredError, R2Score

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()

CLASSES = 4
gen = np.random.default_rng(7)
centers = gen.normal(0, 1, size=(CLASSES, 10)).astype("float32")
y_all = gen.integers(0, CLASSES, size=192)
x_all = (centers[y_all] + gen.normal(0, 1.1, size=(192, 10))).astype("float32")
train_loader = DataLoader(TensorDataset(torch.from_numpy(x_all[:128]), torch.from_numpy(y_all[:128])), batch_size=32)
val_loader = DataLoader(TensorDataset(torch.from_numpy(x_all[128:]), torch.from_numpy(y_all[128:])), batch_size=16)


def fmt(value):
    """Every element of a metric's value (a 0-d tensor, a per-class vector, a matrix), six decimals."""
    return " ".join(f"{v:.6f}" for v in value.detach().reshape(-1).tolist())


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, CLASSES))
        metrics = MetricCollection({
            "acc": Accuracy(task="multiclass", num_classes=CLASSES),
            "acc_macro": Accuracy(task="multiclass", num_classes=CLASSES, average="macro"),
            "top2": Accuracy(task="multiclass", num_classes=CLASSES, top_k=2),
            "f1": F1Score(task="multiclass", num_classes=CLASSES, average="macro"),
            "precision": Precision(task="multiclass", num_classes=CLASSES, average="weighted"),
            "recall": Recall(task="multiclass", num_classes=CLASSES, average="none"),
            "auroc": AUROC(task="multiclass", num_classes=CLASSES),
        })
        self.train_metrics = metrics.clone(prefix="train_")
        self.val_metrics = metrics.clone(prefix="val_")
        self.confusion = ConfusionMatrix(task="multiclass", num_classes=CLASSES)
        self.train_loss = MeanMetric()

    def forward(self, x):
        return self.net(x)


model = Classifier()
same_weights(model.net)
print("submodules", " ".join(name for name, _ in model.named_children()))
print("state_dict", " ".join(model.state_dict()))
optimizer = torch.optim.SGD(model.net.parameters(), lr=0.2, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(args.epochs):
    model.train()
    for step, (x, y) in enumerate(train_loader):
        logits = model(x)
        loss = loss_fn(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch = model.train_metrics(logits.detach().softmax(-1), y)  # this batch's values; accumulates too
        model.train_loss(loss.detach())
        print(f"epoch {epoch} step {step} loss {loss.item():.6f} batch acc {fmt(batch['train_acc'])} "
              f"f1 {fmt(batch['train_f1'])} top2 {fmt(batch['train_top2'])}")
    for name, value in model.train_metrics.compute().items():
        print(f"epoch {epoch} {name} {fmt(value)}")
    print(f"epoch {epoch} mean loss {fmt(model.train_loss.compute())}")
    model.train_metrics.reset()
    model.train_loss.reset()

    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            probs = model(x).softmax(-1)
            model.val_metrics.update(probs, y)
            model.confusion.update(probs, y)
    for name, value in model.val_metrics.compute().items():
        print(f"epoch {epoch} {name} {fmt(value)}")
    print(f"epoch {epoch} confusion {fmt(model.confusion.compute())}")
    model.val_metrics.reset()
    model.confusion.reset()

# Binary and multilabel views of the last predictions, and regression metrics on the true class's probability
with torch.no_grad():
    x, y = torch.from_numpy(x_all[128:]), torch.from_numpy(y_all[128:])
    probs = model(x).softmax(-1)
    is_zero = (y == 0).long()
    for name, metric in [("binary acc", Accuracy(task="binary")), ("binary f1", F1Score(task="binary")),
                         ("binary precision", Precision(task="binary", threshold=0.3)),
                         ("binary recall", Recall(task="binary")), ("binary auroc", AUROC(task="binary")),
                         ("binary confusion", ConfusionMatrix(task="binary"))]:
        print(name, fmt(metric(probs[:, 0], is_zero)))
    onehot = nn.functional.one_hot(y, CLASSES)
    for name, metric in [("multilabel acc", Accuracy(task="multilabel", num_labels=CLASSES)),
                         ("multilabel f1", F1Score(task="multilabel", num_labels=CLASSES, average="macro")),
                         ("multilabel auroc", AUROC(task="multilabel", num_labels=CLASSES)),
                         ("multilabel confusion", ConfusionMatrix(task="multilabel", num_labels=CLASSES))]:
        print(name, fmt(metric(probs, onehot)))
    target_prob = probs.gather(1, y[:, None]).squeeze(1)
    for name, metric in [("mse", MeanSquaredError()), ("rmse", MeanSquaredError(squared=False)),
                         ("mae", MeanAbsoluteError()), ("r2", R2Score())]:
        first = metric(target_prob[:32], torch.linspace(0, 1, 32))
        metric.update(target_prob[32:], torch.linspace(1, 0.2, 32))
        print(name, "batch", fmt(first), "epoch", fmt(metric.compute()))

    mean = MeanMetric()
    mean.update(torch.tensor([1.0, 2.0]))
    mean.update(torch.tensor(3.0), weight=torch.tensor(2.0))
    print("weighted mean", fmt(mean.compute()))

    acc = Accuracy(task="multiclass", num_classes=CLASSES)
    acc.persistent(True)
    acc.update(probs, y)
    print("persistent state", " ".join(f"{k}={fmt(v)}" for k, v in acc.state_dict().items()))
    restored = Accuracy(task="multiclass", num_classes=CLASSES)
    restored.persistent(True)
    restored.load_state_dict(acc.state_dict())  # the states, popped by the metric's own _load_from_state_dict
    print("restored state", " ".join(f"{k}={fmt(getattr(restored, k))}" for k in ("tp", "fp", "tn", "fn")))
    holder = Classifier()
    holder.val_metrics.persistent(True)
    holder.val_metrics.update(probs, y)
    keys = [k for k in holder.state_dict() if k.startswith("val_metrics.")]
    print("persistent collection keys", len(keys), keys[0], keys[-1])
