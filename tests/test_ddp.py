"""DistributedDataParallel on real ranks started by ember's launcher (each run has a deadline).

New rank tests are written as ordinary pytest tests in tests/ranks/ (tests/test_on_ranks.py runs them); the
checks below still report through tests/ddp_scripts/_report.py."""

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


# Every check of tests/ddp_scripts/ddp_checks.py, and the world sizes it only runs at.
DDP_CHECKS = {
    **{f"{what}, {opt}": None for opt in ("SGD", "Adam", "Adam foreach=False")
       for what in ("ddp == full batch", "first step reduced in place", "reduced in place", "replicas identical")},
    "no_sync accumulation": None, "accumulation reduced in place": None, "grad is the global mean": None, "no_sync did not communicate": 2,
    "sum reduction": None, "several buckets": None, "one all-reduce per bucket": None,
    "first all-reduce starts before backward ends": None, "buckets launched in order": None, "bucket views": None,
    "bucket view: a held grad sees the next step": None, "separate: a held grad keeps its values": None,
    "reduced in place, gradient_as_bucket_view=False": None, "reduced in place, gradient_as_bucket_view=True": None,
    "param groups: one store in registration order, buckets are its slices": None,
    "param groups: reduced in place": None, "assigned grad reduced, gradient_as_bucket_view=False": None,
    "assigned grad reduced, gradient_as_bucket_view=True": None, "param groups: ddp == full batch": None,
    "buffers follow rank 0": None, "shards gave different local stats": 2, "no_grad forward leaves buffers local": 2,
    "forward_sync_buffers=False keeps buffers local": 2,
    "state_dict prefix": None,
    "unused parameter raises": None, "error names the parameter": None, "unused reduced as zeros": None,
    "unused reduced in place": None,
    "mismatch raises": 2, "mismatch message": 2,
}
_runs: dict = {}


def run_checks(script: str, nproc: int, tmp_path_factory) -> dict:
    """Run a check script once per (script, nproc); {check name: {rank: passed}} and the job's output."""
    key = (script, nproc)
    if key not in _runs:
        out = tmp_path_factory.mktemp("ddp_checks")
        proc = launch([os.path.join("tests", "ddp_scripts", script)], nproc, {"DDP_CHECKS_DIR": str(out)},
                      timeout=180)
        results: dict = {}
        for rank in range(nproc):
            path = out / f"rank{rank}.txt"
            for line in path.read_text().splitlines() if path.exists() else []:
                _, r, status, name = line.split(" ", 3)
                results.setdefault(name, {})[int(r)] = status == "ok"
        _runs[key] = (results, proc)
    return _runs[key]


def assert_check(results, proc, name: str, nproc: int) -> None:
    ranks = results.get(name, {})
    failed = [r for r, ok in sorted(ranks.items()) if not ok]
    missing = [r for r in range(nproc) if r not in ranks]
    assert not failed, f"check {name!r} failed on rank(s) {failed}"
    assert not missing, (f"check {name!r} did not run on rank(s) {missing} (exit code {proc.returncode}):\n"
                         + proc.stdout[-3000:] + proc.stderr[-3000:])


@pytest.mark.parametrize("nproc", [2, 3])
@pytest.mark.parametrize("name", list(DDP_CHECKS))
def test_ddp_check(name, nproc, tmp_path_factory):
    """tests/ddp_scripts/ddp_checks.py: full-batch equivalence (SGD+momentum, Adam), no_sync, sum,
    buckets overlapping backward, bucket views, buffers, unused parameters, mismatched models."""
    if DDP_CHECKS[name] is not None and nproc < DDP_CHECKS[name]:
        pytest.skip(f"needs {DDP_CHECKS[name]} ranks")
    assert_check(*run_checks("ddp_checks.py", nproc, tmp_path_factory), name, nproc)


@pytest.mark.parametrize("nproc", [2, 3])
def test_ddp_checks_script_ends_cleanly_running_only_known_checks(nproc, tmp_path_factory):
    results, proc = run_checks("ddp_checks.py", nproc, tmp_path_factory)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(results) <= set(DDP_CHECKS), f"checks this test does not list: {set(results) - set(DDP_CHECKS)}"
