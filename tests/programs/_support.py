"""Shared by the programs in this folder: the same weights and data under PyTorch and under ember.

Every program here is an ordinary PyTorch script. tests/test_programs.py runs each one twice: first under PyTorch,
where ``same_weights`` saves the freshly initialised weights (``PROGRAM_MODE=save``), then under
``python -m ember.compat``, where it loads them (``PROGRAM_MODE=load``). Batches and noise come from NumPy with fixed
seeds, so both frameworks see the same data; the losses each program prints are compared line by line.
Run by hand (no environment variables), a program simply trains from its own initialisation.
"""

import os

import numpy as np
import torch

_calls = [0]

# Under the test, PyTorch's initialisation is seeded: a program that does not seed draws fresh weights on every run,
# and now and then draws some for which a gradient element lies within rounding of zero, where Adam's first step
# (about lr times its sign) turns float32 rounding into a visible difference. Seeded, each run checks the same case.
if os.environ.get("PROGRAM_MODE"):
    torch.manual_seed(int(os.environ.get("PROGRAM_SEED", "0")))


def same_weights(*modules):
    """Make ``modules`` start from the weights the PyTorch run started from (saved on rank 0 only). A program
    may call it more than once (one file per call)."""
    path, mode = os.environ.get("PROGRAM_WEIGHTS"), os.environ.get("PROGRAM_MODE")
    if not path or int(os.environ.get("RANK", "0")) != 0:
        return
    _calls[0] += 1
    path = f"{path}.{_calls[0]}.npz"
    if mode == "save":
        arrays = {f"{i}/{k}": v.detach().cpu().numpy() for i, m in enumerate(modules)
                  for k, v in m.state_dict().items()}
        np.savez(path, **arrays)
    elif mode == "load":
        with np.load(path) as saved:
            for i, m in enumerate(modules):
                present = {k: torch.from_numpy(saved[f"{i}/{k}"].copy()) for k in m.state_dict() if f"{i}/{k}" in saved}
                absent = set(m.state_dict()) - set(present)  # only buffers the other variant lacks (a causal mask)
                assert absent <= {name for name, _ in m.named_buffers()}, f"parameters not saved: {sorted(absent)}"
                m.load_state_dict(present, strict=not absent)


def rng(seed=0):
    return np.random.default_rng(seed)


TEXT = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
    "foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light, "
    "it was the season of Darkness, it was the spring of hope, it was the winter of despair, we had "
    "everything before us, we had nothing before us, we were all going direct to Heaven, we were all going "
    "direct the other way."
)
