"""The rank test files (tests/ranks/rank_*.py: ordinary pytest tests) run on several ranks by ember's launcher;
each of their tests passes here when it passed on every rank (tests/ranks/rank_plugin.py says how to write one).

One job per world size runs every family (file) listed for that size, so a job's start-up (a few seconds) is paid
once per size, not per family. A test function here stands for all its parametrizations; a test every rank
skipped (``@pytest.mark.min_world``) is reported as skipped."""

import ast
import os
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")

from conftest import ROOT  # noqa: E402

RANKS = os.path.join(ROOT, "tests", "ranks")
# (DDP's families, which exercise its reducer, run at 2 ranks in tests/test_reducer_on_ranks.py's job of their own:
# rank_reducer_battery.py, rank_ddp_vs_torch.py, rank_ddp.py, rank_comm_hooks.py, rank_lockstep.py,
# rank_ddp_eval.py)
FAMILIES = {  # file: the world sizes it runs at
    "rank_ddp.py": (3,),
    "rank_lockstep.py": (3,),
    "rank_collectives.py": (2, 3),
    "rank_funcol_vs_torch.py": (2, 3),
    "rank_errors_vs_torch.py": (2, 3),
    "rank_p2p_vs_torch.py": (2, 3),
    "rank_dist_nn.py": (2, 3),
    "rank_object_collectives.py": (2, 3),
    "rank_comm_hooks.py": (3,),
    "rank_sync_batchnorm.py": (2, 3),
    "rank_zero.py": (2, 3),
    "rank_rpc.py": (3,),
    "rank_device_mesh.py": (4,),
    "rank_dtensor.py": (2,),
    "rank_dtensor_2d.py": (4,),
    "rank_tensor_parallel.py": (2,),
    "rank_dtensor_vs_torch.py": (2,),
    "rank_fsdp.py": (2,),
}
JOB_TIMEOUT_S = 300  # the launcher's --timeout for one job (every family of one world size). Measured: the 2-rank job
# took 106 s at load 15-17 (the 3-rank one 190 s), and 266 s at load 12-14 with other jobs of higher priority beside
# it, where a 3-rank job passed 300 s; a rank stuck in a collective fails it after RANK_TIMEOUT_S (60 s) anyway, so
# this deadline stops only a job stuck elsewhere, within 5 minutes
_runs: dict = {}


def names_in(family: str) -> list[str]:
    with open(os.path.join(RANKS, family)) as f:
        tree = ast.parse(f.read())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def launch(files: list[str], nproc: int, out, timeout: int = JOB_TIMEOUT_S, pytest_args: tuple = ()):
    """Run the rank test ``files`` in one job of ``nproc`` ranks (each rank's pytest also given ``pytest_args``):
    {test id: {rank: [(phase, outcome, message)]}}, the test each rank started last, and the job."""
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), "--timeout", str(timeout),
           "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "rank_plugin", *pytest_args, *files]
    env = {k: v for k, v in os.environ.items() if k != "DIST_BACKEND"}
    env.update(PYTHONPATH=os.pathsep.join([ROOT, RANKS]), RANK_RESULTS_DIR=str(out), EMBER_EXPECT_LAUNCHER="1")
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout + 30)
    results: dict = {}
    last: dict = {}
    for rank in range(nproc):
        path = out / f"rank{rank}.txt"
        for line in path.read_text().splitlines() if path.exists() else []:
            nodeid, phase, outcome, message = line.split("\t")
            if phase == "start":
                last[rank] = nodeid
                results.setdefault(nodeid, {}).setdefault(rank, [])
            else:
                results.setdefault(nodeid, {}).setdefault(rank, []).append((phase, outcome, message))
    return results, last, proc


def launched_once(cache: dict, key, start):
    """``start()``'s result, cached under ``key`` for the session's later tests. A launch that raised (the job
    hung past its deadline: subprocess.TimeoutExpired) is cached too, so one hang costs one deadline: the tests after
    the first fail at once, naming it, instead of each launching the job again."""
    if key not in cache:
        try:
            cache[key] = start()
        except Exception as error:
            cache[key] = error
            raise
    outcome = cache[key]
    if isinstance(outcome, Exception):
        pytest.fail(f"the job was not launched again: its launch failed earlier in this session: "
                    f"{type(outcome).__name__}: {outcome}")
    return outcome


def run_job(nproc: int, tmp_path_factory):
    """Every family of world size ``nproc``, launched once (the first test that asks)."""
    files = [os.path.join("tests", "ranks", f) for f, sizes in FAMILIES.items() if nproc in sizes]
    return launched_once(_runs, nproc, lambda: launch(files, nproc, tmp_path_factory.mktemp(f"ranks{nproc}")))


def of_function(results: dict, family: str, name: str) -> dict:
    """The results of test function ``name`` of ``family``, every parametrization."""
    return {nodeid: ranks for nodeid, ranks in results.items()
            if nodeid == f"{family}::{name}" or nodeid.startswith(f"{family}::{name}[")}


def verdict(results: dict, last: dict, nproc: int, family: str, name: str):
    """What went wrong with test function ``name`` on any rank, the skip reasons, and whether it passed anywhere."""
    mine = of_function(results, family, name)
    problems, skips, passed = [], [], False
    for nodeid, ranks in sorted(mine.items()):
        for rank in range(nproc):
            if rank not in ranks:
                problems.append(f"{nodeid}: rank {rank} never started it")
                continue
            if not ranks[rank]:
                running = " (still running when the job ended)" if last.get(rank) == nodeid else ""
                problems.append(f"{nodeid}: no result from rank {rank}{running}")
            for phase, outcome, message in ranks[rank]:
                if outcome == "skipped":
                    skips.append(f"{nodeid} on rank {rank}: {message}")
                elif outcome != "passed":
                    problems.append(f"{nodeid}: {outcome} in {phase} on rank {rank}: {message}")
            passed |= ("call", "passed", "") in ranks[rank]
    if not mine:
        problems.append(f"{family}::{name} did not run on any rank (the job ended before it)")
    return problems, skips, passed


def job_output(proc, last: dict) -> str:
    started = ", ".join(f"rank {r}: {t}" for r, t in sorted(last.items()))
    return (f"(job exit code {proc.returncode}; the last test each rank started: {started})\n"
            + proc.stdout[-4000:] + proc.stderr[-3000:])


@pytest.mark.timeout(JOB_TIMEOUT_S + 60)
@pytest.mark.parametrize("nproc,family,name", [(n, f, t) for f, sizes in FAMILIES.items() for n in sizes
                                               for t in names_in(f)])
def test_on_every_rank(nproc, family, name, tmp_path_factory):
    results, last, proc = run_job(nproc, tmp_path_factory)
    problems, skips, passed = verdict(results, last, nproc, family, name)
    assert not problems, "\n".join(problems) + "\n" + job_output(proc, last)
    if not passed:
        pytest.skip(skips[0] if skips else "skipped on every rank")


@pytest.mark.timeout(JOB_TIMEOUT_S + 60)
@pytest.mark.parametrize("nproc", sorted({n for sizes in FAMILIES.values() for n in sizes}))
def test_the_job_ends_cleanly(nproc, tmp_path_factory):
    results, last, proc = run_job(nproc, tmp_path_factory)
    assert proc.returncode == 0, job_output(proc, last)
    families = [f for f, sizes in FAMILIES.items() if nproc in sizes]
    listed = {f"{f}::{n}" for f in families for n in names_in(f)}
    assert {nodeid.split("[")[0] for nodeid in results} == listed, job_output(proc, last)


HARNESS = '''
import time

import pytest

import ember


@pytest.mark.min_world(9)
def test_needs_nine(process_group):
    process_group.barrier()


def test_fails_on_rank_1(rank, process_group):
    t = ember.ones(1)
    process_group.all_reduce(t)
    assert rank != 1, "rank 1 disagrees"


def test_passes(process_group):
    process_group.barrier()


def test_{last}(rank, process_group):
    if rank == 1:
        {action}
    process_group.all_reduce(ember.ones(1))


def test_after(process_group):
    process_group.barrier()
'''


@pytest.mark.parametrize("last,action", [("out_of_step", 'raise ValueError("rank 1 leaves early")'),
                                         ("hangs", "time.sleep(60)")], ids=["out_of_step", "hangs"])
def test_the_harness_reports_skips_failures_and_where_a_job_stopped(last, action, tmp_path):
    """The reporting itself, on a made-up family: a test skipped by min_world, one that failed on one rank only, and
    a job that stopped, the ranks out of step (the failed rank never joined the others' collective) or hung (the
    launcher's --timeout, 15 s here)."""
    family = tmp_path / "rank_harness.py"
    family.write_text(HARNESS.format(last=last, action=action))
    out = tmp_path / "results"
    out.mkdir()
    results, ran_last, proc = launch([str(family)], 2, out, timeout=15)

    def report(name):
        return verdict(results, ran_last, 2, "rank_harness.py", name)

    assert report("test_needs_nine") == ([], ["rank_harness.py::test_needs_nine on rank 0: Skipped: needs 9 ranks, "
                                              "the job has 2", "rank_harness.py::test_needs_nine on rank 1: Skipped: "
                                              "needs 9 ranks, the job has 2"], False), job_output(proc, ran_last)
    assert report("test_fails_on_rank_1") == (["rank_harness.py::test_fails_on_rank_1: failed in call on rank 1: "
                                               "AssertionError: rank 1 disagrees assert 1 != 1"], [], True)
    assert report("test_passes") == ([], [], True)
    problems = report(f"test_{last}")[0]
    if last == "hangs":
        assert problems == [f"rank_harness.py::test_hangs: no result from rank {r} (still running when the job "
                            "ended)" for r in (0, 1)], job_output(proc, ran_last)
        assert "exceeded --timeout 15 s" in proc.stderr, proc.stderr
    else:  # rank 1's error, then the barrier after the test meets rank 0's all_reduce: both fail, the job stops
        assert any("failed in call on rank 1: ValueError: rank 1 leaves early" in p for p in problems), problems
        assert any("on rank 0: RuntimeError: all_reduce: the ranks' calls do not match" in p for p in problems), \
            problems
    assert report("test_after")[0] == ["rank_harness.py::test_after did not run on any rank (the job ended before "
                                       "it)"], job_output(proc, ran_last)


@pytest.mark.parametrize("module_name", ["test_on_ranks", "test_reducer_on_ranks"])
def test_a_job_that_hangs_costs_one_deadline(module_name, monkeypatch, tmp_path_factory):
    """A launch that times out is not repeated by the module's later tests: they fail at once, naming the timeout."""
    import importlib

    module = importlib.import_module(module_name)
    calls = []

    def hanging_launch(files, nproc, out, **kwargs):
        calls.append(nproc)
        raise subprocess.TimeoutExpired(["ember.distributed.run"], JOB_TIMEOUT_S + 30)

    monkeypatch.setattr(module, "launch", hanging_launch)
    monkeypatch.setattr(module, "_runs", {})
    call = (lambda: module.run_job(2, tmp_path_factory)) if module_name == "test_on_ranks" else \
        (lambda: module.run_job(tmp_path_factory))
    with pytest.raises(subprocess.TimeoutExpired):
        call()
    for _ in range(3):
        with pytest.raises(pytest.fail.Exception, match="launch failed earlier in this session: TimeoutExpired"):
            call()
    assert calls == [2]
