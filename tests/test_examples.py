"""The example programs under examples/ run as their docstrings say, on ember (and the single-process
PyTorch programs on PyTorch too, so that what they claim is PyTorch's behaviour)."""

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

EXAMPLES = os.path.join(ROOT, "examples")


def run(args, timeout=120, env=None):
    """Run `python ARGS` from the repository root with this checkout's ember importable; return stdout."""
    out = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                         env=dict(os.environ, PYTHONPATH=ROOT, **(env or {})))
    assert out.returncode == 0, f"{args} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    return out.stdout


def on_ember(name, *args, timeout=120):
    return run(["-m", "ember.compat", os.path.join("examples", name), *args], timeout=timeout)


def on_torch(name):
    return run([os.path.join("examples", name)])


@pytest.mark.parametrize("runner", [on_ember, on_torch], ids=["ember", "torch"])
def test_single_device_loss_falls(runner):
    first, last, steps = re.fullmatch(r"loss (\S+) -> (\S+) after (\d+) SGD steps\n", runner("single_device.py")).groups()
    assert int(steps) == 20 and float(last) < float(first)


@pytest.mark.parametrize("runner", [on_ember, on_torch], ids=["ember", "torch"])
def test_training_pitfalls_every_claim_holds(runner):
    with open(os.path.join(EXAMPLES, "training_pitfalls.py")) as f:
        written = len(re.findall(r"^claim\(", f.read(), flags=re.M))
    out = runner("training_pitfalls.py")
    assert written >= 18
    assert re.search(r"^training_pitfalls: (\d+) of (\d+) claims hold$", out, flags=re.M).groups() == (str(written),) * 2
    assert out.count("  ok  ") == written


def test_training_loop_learns_schedules_and_reloads():
    out = on_ember("training_loop.py", timeout=180)
    names = re.findall(r"^  (\S+): shape=", out, flags=re.M)
    assert names == [f"{layer}.{p}" for layer in ("fc1", "bn1", "fc2", "bn2", "fc3") for p in ("weight", "bias")]
    assert "no gradient" not in out
    epochs = re.findall(r"^epoch (\d)/6  loss (\S+)  lr (\S+)$", out, flags=re.M)
    assert [int(e) for e, _, _ in epochs] == [1, 2, 3, 4, 5, 6]
    losses, lrs = [float(x) for _, x, _ in epochs], [float(x) for _, _, x in epochs]
    assert losses[-1] < losses[0] / 5
    assert lrs == [0.001] * 4 + [0.0005] * 2          # StepLR(step_size=5, gamma=0.5) halves after epoch 5
    assert float(re.search(r"^test accuracy (\S+)%$", out, flags=re.M).group(1)) >= 90
    assert "checkpoint reloaded: predictions identical" in out


@pytest.mark.parametrize("backend", [None, "mpi"])
def test_ddp_train_on_two_ranks(backend):
    pytest.importorskip("mpi4py")
    env = {"DIST_BACKEND": backend} if backend else {}
    out = run(["-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "50", "-m", "ember.compat",
               os.path.join("examples", "ddp_train.py")], timeout=60, env=env)
    assert ("ddp_train: 2 processes, 5 steps: every .grad was the mean over processes, and the replicas are "
            "identical") in out
