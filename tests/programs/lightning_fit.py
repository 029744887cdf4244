"""A small classifier fitted with PyTorch Lightning, as public training code writes it: a LightningDataModule, a
LightningModule (training/validation/test steps, AdamW with a StepLR scheduler, ``self.log(..., prog_bar=True)``),
``seed_everything``, ``Trainer(max_epochs=2, accelerator="cpu", devices=1, deterministic=True)`` with a CSVLogger,
gradient clipping, gradient accumulation, ModelCheckpoint, EarlyStopping and LearningRateMonitor; then
``trainer.validate``, ``trainer.test`` and ``load_from_checkpoint`` of the best checkpoint. Synthetic 3-class data.

    python lightning_fit.py [--precision 32-true bf16-mixed]
    torchrun --nproc-per-node 2 lightning_fit.py --strategy ddp --devices 2 --precision 32-true

``bf16-mixed`` runs each step's forward under ``torch.autocast("cpu", dtype=torch.bfloat16)`` (Lightning's
precision plugin).
"""

import argparse
import csv
import os
import shutil
import sys
import tempfile
import warnings

try:
    import lightning as L
    from lightning.pytorch.callbacks import Callback, EarlyStopping, LearningRateMonitor, ModelCheckpoint
    from lightning.pytorch.loggers import CSVLogger
except ImportError:
    print("skipped: lightning is not installed (pyproject.toml's test extra)")
    sys.exit(0)
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--precision", nargs="+", default=["32-true", "bf16-mixed"])
parser.add_argument("--strategy", default="auto")
parser.add_argument("--devices", type=int, default=1)
args = parser.parse_args()
# Lightning's advice (more DataLoader workers, a bigger log interval for few batches) is about speed, not results
warnings.filterwarnings("ignore", message=".*(does not have many workers|number of training batches).*")

CLASSES, FEATURES = 3, 8
gen = rng(3)
centers = gen.normal(0, 0.6, size=(CLASSES, FEATURES)).astype("float32")
labels = gen.integers(0, CLASSES, size=160)
inputs = (centers[labels] + gen.normal(0, 1.0, size=(160, FEATURES))).astype("float32")


class Blobs(L.LightningDataModule):
    def __init__(self, batch_size=16):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage):
        x, y = torch.from_numpy(inputs), torch.from_numpy(labels)
        self.train = TensorDataset(x[:96], y[:96])
        self.val = TensorDataset(x[96:128], y[96:128])
        self.held_out = TensorDataset(x[128:], y[128:])

    def train_dataloader(self):
        return DataLoader(self.train, batch_size=self.batch_size)  # no shuffling: the same batches in both runs

    def val_dataloader(self):
        return DataLoader(self.val, batch_size=self.batch_size)

    def test_dataloader(self):
        return DataLoader(self.held_out, batch_size=self.batch_size)


class Classifier(L.LightningModule):
    def __init__(self, hidden=16, lr=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(FEATURES, hidden), nn.LayerNorm(hidden), nn.GELU(),
                                 nn.Linear(hidden, CLASSES))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, prog_bar=True)
        if RANK0:
            print(f"epoch {self.current_epoch} batch {batch_idx} step {self.global_step} loss {loss.item():.6f}")
        return loss

    def _evaluate(self, batch, stage):
        x, y = batch
        logits = self(x)
        self.log(f"{stage}_loss", F.cross_entropy(logits, y), prog_bar=True)
        self.log(f"{stage}_acc", (logits.argmax(-1) == y).float().mean())

    def validation_step(self, batch, batch_idx):
        self._evaluate(batch, "val")

    def test_step(self, batch, batch_idx):
        self._evaluate(batch, "test")

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.01)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "epoch"}}


class PrintMetrics(Callback):
    """What the logger sees at the end of each epoch (epoch-level means, the learning rate)."""

    def on_train_epoch_end(self, trainer, module):
        shown = " ".join(f"{k} {v.item():.6f}" for k, v in sorted(trainer.callback_metrics.items()))
        say(f"epoch {trainer.current_epoch} end: {shown}")


def fmt(tensor):
    return " ".join(f"{v:.6f}" for v in tensor.detach().float().reshape(-1).tolist())


RANK0 = int(os.environ.get("RANK", "0")) == 0  # under DDP every rank runs all of it; rank 0 prints


def say(*parts):
    if RANK0:
        print(*parts)


def fit(precision):
    L.seed_everything(11, verbose=False)
    model = Classifier()
    same_weights(model.net)
    # one folder for every rank (the launcher is their parent): ModelCheckpoint writes on rank 0, all ranks load
    root = os.path.join(tempfile.gettempdir(), f"lightning-fit-{os.getppid()}-{precision}")
    checkpoint = ModelCheckpoint(dirpath=os.path.join(root, "checkpoints"), monitor="val_loss", save_top_k=1)
    trainer = L.Trainer(max_epochs=2, accelerator="cpu", devices=args.devices, strategy=args.strategy,
                        deterministic=True, precision=precision,
                        logger=CSVLogger(root, name="run", version=0), default_root_dir=root,
                        enable_checkpointing=True, enable_progress_bar=False, gradient_clip_val=0.5,
                        accumulate_grad_batches=2, log_every_n_steps=2,
                        callbacks=[checkpoint, EarlyStopping(monitor="val_loss", patience=3),
                                   LearningRateMonitor(logging_interval="epoch"), PrintMetrics()])
    data = Blobs()
    trainer.fit(model, datamodule=data)
    say("global steps", trainer.global_step, "epochs", trainer.current_epoch)
    for name, param in model.named_parameters():
        say("weights", name, fmt(param))
    say("best checkpoint", os.path.basename(checkpoint.best_model_path), f"{checkpoint.best_model_score.item():.6f}")
    for stage, results in (("validate", trainer.validate(model, datamodule=data, verbose=False)),
                           ("test", trainer.test(model, datamodule=data, verbose=False))):
        say(stage, " ".join(f"{k} {v:.6f}" for k, v in sorted(results[0].items())))

    restored = Classifier.load_from_checkpoint(checkpoint.best_model_path)
    say("restored hparams", dict(restored.hparams))
    restored.eval()
    with torch.no_grad():
        say("restored logits", fmt(restored(torch.from_numpy(inputs[:4]))))
    trainer.strategy.barrier()
    if RANK0:
        with open(os.path.join(root, "run", "version_0", "metrics.csv")) as fh:
            for row in csv.DictReader(fh):
                print("csv", " ".join(f"{k} {v}" for k, v in sorted(row.items()) if v != ""))
        shutil.rmtree(root)


for precision in args.precision:
    say("precision", precision)
    fit(precision)
