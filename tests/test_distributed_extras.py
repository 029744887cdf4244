"""Distributed features beyond plain DDP: what a job does when a rank stays away from a monitored_barrier or a
communication hook is out of step (scripts in tests/dist_scripts/), and SyncBatchNorm without a process group.
On every rank of a job, as ordinary tests (tests/test_on_ranks.py runs them): object collectives
(tests/ranks/rank_object_collectives.py), SyncBatchNorm (rank_sync_batchnorm.py), ZeroRedundancyOptimizer
(rank_zero.py), DDP communication hooks and PowerSGD (rank_comm_hooks.py)."""

import os
import subprocess
import sys

import pytest

from ember.distributed import comm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(not comm.is_available(), reason="mpi4py not installed")


def _launch_script(name, nproc, *args, timeout=150):
    script = os.path.join(ROOT, "tests", "dist_scripts", name)
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc),
                           "--timeout", str(timeout - 20), script, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("nproc", [2, 3])
def test_monitored_barrier_names_the_rank_that_did_not_arrive(nproc):
    p = _launch_script("monitored_barrier_missing.py", nproc, timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"rank 0 raised: monitored_barrier: ranks [{nproc - 1}] failed to pass monitored_barrier" in p.stdout, \
        p.stdout + p.stderr


def test_sync_batchnorm_without_a_process_group_is_batchnorm():
    torch = pytest.importorskip("torch")
    import numpy as np

    import ember

    x = np.random.default_rng(0).normal(size=(4, 3, 5)).astype(np.float32)
    ours, theirs = ember.nn.SyncBatchNorm(3, momentum=0.3), torch.nn.BatchNorm1d(3, momentum=0.3)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ours(xe) * ember.arange(5.0)).sum().backward()
    (theirs(xt) * torch.arange(5.0)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5)
    with pytest.raises(ValueError, match="expected at least 2D input"):
        ours(ember.ones(3))


def test_convert_sync_batchnorm_keeps_parameters_and_pytorchs_keys():
    torch = pytest.importorskip("torch")
    import ember

    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)))

    model = build(ember.nn)
    model[2].eval()
    weight = model[1].weight
    converted = ember.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    reference = torch.nn.SyncBatchNorm.convert_sync_batchnorm(build(torch.nn))
    assert list(converted.state_dict()) == list(reference.state_dict())
    assert isinstance(converted[1], ember.nn.SyncBatchNorm) and isinstance(converted[2][1], ember.nn.SyncBatchNorm)
    assert converted[1].weight is weight and converted[2][1].training is False and converted[1].training is True
    assert isinstance(ember.nn.SyncBatchNorm.convert_sync_batchnorm(ember.nn.BatchNorm1d(4)), ember.nn.SyncBatchNorm)


def test_a_hook_out_of_step_is_named_not_a_hang():
    p = _launch_script("hook_out_of_step.py", 2, timeout=60)
    assert p.returncode != 0
    # rank 0 waits in the hook's all-reduce, rank 1 (which issued none) in DDP's next all-reduce on its own
    # communicator: a deadlock, named at once rather than at the process group's timeout. Whichever rank's wait
    # notices it first reports, naming the other rank (either order happens, depending on scheduling).
    assert "each rank waits for the other" in p.stderr, p.stderr
    assert ("cannot complete on rank 0" in p.stderr and "rank 1 has issued" in p.stderr) or \
        ("cannot complete on rank 1" in p.stderr and "rank 0 has issued" in p.stderr), p.stderr
    assert "out of step across ranks went unnoticed" not in p.stderr
