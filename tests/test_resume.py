"""Exact resume: a run interrupted at any step and resumed from its checkpoint ends with bit-identical parameters.

The run is examples/resume_training.py (the recipe docs/checkpoints.md describes): model, optimizer,
scheduler, the loader's generator at the start of the epoch, the batches consumed, and the states of
ember's, NumPy's and Python's random generators.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

import ember

sys.path.insert(0, os.path.join(ROOT, "examples"))
import resume_training  # noqa: E402

STEPS = 12  # 10 batches an epoch on one process: the run crosses an epoch boundary


def same(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.fixture(scope="module")
def uninterrupted():
    return resume_training.train(STEPS)


@pytest.mark.parametrize("stop_after", range(1, STEPS))
def test_resuming_after_any_step_is_bit_identical(stop_after, uninterrupted, tmp_path):
    interrupted = resume_training.train(STEPS, str(tmp_path), stop_after=stop_after)
    assert not same(interrupted, uninterrupted)
    resumed = resume_training.train(STEPS, str(tmp_path), resume=True)
    assert same(resumed, uninterrupted)


@pytest.mark.parametrize("forgotten", ["set_rng_state", "generator"])
def test_the_recipe_needs_every_piece(forgotten, uninterrupted, tmp_path, monkeypatch):
    """Leaving out one piece of the state changes the result: the comparison above can fail."""
    resume_training.train(STEPS, str(tmp_path), stop_after=5)
    if forgotten == "set_rng_state":
        monkeypatch.setattr(resume_training.torch, "set_rng_state", lambda state: None)
    else:
        monkeypatch.setattr(ember.Generator, "set_state", lambda self, state: self)
    assert not same(resume_training.train(STEPS, str(tmp_path), resume=True), uninterrupted)


def run_script(args, nproc=None, timeout=120):
    script = os.path.join("examples", "resume_training.py")
    if nproc is None:
        cmd = [sys.executable, script, *args]
    else:
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), "--timeout",
               str(timeout - 10), script, "--ddp", *args]
    env = {k: v for k, v in os.environ.items() if k != "DIST_BACKEND"}
    env["PYTHONPATH"] = ROOT
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("nproc", [None, 2], ids=["1-process", "2-ranks-ddp"])
def test_a_restarted_process_resumes_bit_identically(nproc, tmp_path):
    if nproc:
        pytest.importorskip("mpi4py")
    ckpts = str(tmp_path / "ckpts")
    os.mkdir(ckpts)
    full, resumed = str(tmp_path / "full.pt"), str(tmp_path / "resumed.pt")
    run_script(["--steps", str(STEPS), "--out", full], nproc)
    run_script(["--steps", str(STEPS), "--ckpt-dir", ckpts, "--stop-after", "7"], nproc)  # mid-epoch
    log = run_script(["--steps", str(STEPS), "--ckpt-dir", ckpts, "--resume", "--out", resumed], nproc)
    assert "resuming from step 7" in log and f"trained to step {STEPS}" in log, log
    assert same(ember.load(full, weights_only=False), ember.load(resumed, weights_only=False))  # (NumPy arrays)
    if nproc:  # one complete directory per step, each with both ranks' parts
        assert sorted(os.listdir(ckpts)) == [f"step_{s:06d}" for s in range(1, STEPS + 1)]
        assert sorted(os.listdir(os.path.join(ckpts, f"step_{STEPS:06d}"))) == [".metadata", "__0_0.distcp",
                                                                                 "__1_0.distcp"]
