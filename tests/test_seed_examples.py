"""The reference programs beside the repository (../shared/seed_examples, written for PyTorch) run unmodified
on ember through ``python -m ember.compat``. Skipped where that folder is absent; tests/test_examples.py runs the
project's own programs covering the same ground."""

import os
import re
import subprocess
import sys

from conftest import ROOT, SEED_EXAMPLES, seed_example


def run_seed(name, timeout=120):
    path = seed_example(name)
    out = subprocess.run([sys.executable, "-m", "ember.compat", path], capture_output=True, text=True,
                         cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=timeout)
    assert out.returncode == 0, f"{name} failed:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def test_single_device_loss_falls():
    out = run_seed("single_device.py")
    first, last = map(float, re.fullmatch(r"loss (\S+) -> (\S+)\n", out).groups())
    assert last < first


def test_pitfalls_all_pass():
    out = run_seed("pitfalls.py")
    with open(os.path.join(SEED_EXAMPLES, "pitfalls.py")) as f:
        checks = len(re.findall(r"^check\(", f.read(), flags=re.M))
    assert checks >= 16 and re.search(r"^pitfalls: (\d+) passed$", out, flags=re.M).group(1) == str(checks)


def test_train_loop_full_loss_falls_and_lr_halves_at_epoch_5():
    out = run_seed("train_loop_full.py")
    names = re.findall(r"^  (\S+): shape=", out, flags=re.M)
    assert names == [f"{layer}.{p}" for layer in ("fc1", "bn1", "fc2", "bn2", "fc3") for p in ("weight", "bias")]
    assert "grad is None" not in out
    epochs = re.findall(r"Epoch \[(\d)/5\] Loss: (\S+) LR: (\S+)", out)
    assert [int(e) for e, _, _ in epochs] == [1, 2, 3, 4, 5]
    losses, lrs = [float(x) for _, x, _ in epochs], [float(x) for _, _, x in epochs]
    assert losses[-1] < losses[0] and all(b < a for a, b in zip(losses, losses[1:]))
    assert lrs == [0.001] * 4 + [0.0005]
