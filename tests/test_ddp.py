"""DistributedDataParallel on real ranks started by ember's launcher (each run has a deadline)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")

from conftest import ROOT, SEED_EXAMPLES  # noqa: E402


def launch(args, nproc, env=None, timeout=120):
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), "--timeout",
           str(timeout - 10), *args]
    full_env = {k: v for k, v in os.environ.items() if k != "DIST_BACKEND"}
    full_env.update(PYTHONPATH=ROOT, **(env or {}))
    return subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("backend", [None, "mpi", "gloo"])
def test_seed_ddp_example_runs_unmodified(backend):
    env = {} if backend is None else {"DIST_BACKEND": backend}
    proc = launch(["-m", "ember.compat", os.path.join(SEED_EXAMPLES, "ddp_train.py")], 2, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ddp_train: world=2 replicas identical, grads are global means" in proc.stdout


@pytest.mark.parametrize("nproc", [2, 3])
def test_ddp_matches_single_process_and_reports_misuse(nproc):
    """tests/ddp_scripts/ddp_checks.py: full-batch equivalence (SGD+momentum, Adam), no_sync, sum,
    buckets overlapping backward, bucket views, buffers, unused parameters, mismatched models."""
    proc = launch([os.path.join("tests", "ddp_scripts", "ddp_checks.py")], nproc, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ddp_checks: 24 passed" in proc.stdout
