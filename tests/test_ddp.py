"""DistributedDataParallel's seed example program, run unmodified on real ranks by ember's launcher (each run has a
deadline). What DDP computes on each rank is checked by the ordinary pytest tests of tests/ranks/rank_ddp.py, which
tests/test_reducer_on_ranks.py runs at 2 ranks and tests/test_on_ranks.py at 3."""

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


needs_seed_examples = pytest.mark.skipif(
    not os.path.isdir(SEED_EXAMPLES), reason=f"the seed example programs are not present ({SEED_EXAMPLES} is missing)")


@needs_seed_examples
@pytest.mark.parametrize("backend", [None, "mpi", "gloo"])
def test_seed_ddp_example_runs_unmodified(backend):
    env = {} if backend is None else {"DIST_BACKEND": backend}
    proc = launch(["-m", "ember.compat", os.path.join(SEED_EXAMPLES, "ddp_train.py")], 2, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ddp_train: world=2 replicas identical, grads are global means" in proc.stdout
