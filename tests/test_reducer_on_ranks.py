"""DDP's reducer on real ranks in ONE job of 2 ranks: ember's launcher (MPI through mpi4py) runs every rank family
that exercises ``ember/distributed/reducer.py`` in one process pair, with one deadline, instead of one launch per
family or per check.

These families run at 2 ranks here, not in tests/test_on_ranks.py's 2-rank job (which holds every other family
and would run them a second time); their 3-rank runs stay there. The job is small enough (its families only, the
battery of reducer checks first) to sit early in the reducer's mutation map (scripts/mutation_sample.py's
TARGETS), where tests/test_on_ranks.py's whole 2- and 3-rank jobs took most of the 700-800 s a mutant cost.
Reported as tests/test_on_ranks.py reports its jobs: one test per rank test function, passed when it passed on
every rank."""

import pytest

pytest.importorskip("mpi4py")

from test_on_ranks import JOB_TIMEOUT_S, job_output, launch, launched_once, names_in, verdict  # noqa: E402

NPROC = 2
FAMILIES = [  # in launch order: the battery of reducer checks first, so a wrong reducer fails the job early
    "rank_reducer_battery.py",
    "rank_ddp_vs_torch.py",
    "rank_ddp.py",
    "rank_comm_hooks.py",
    "rank_lockstep.py",
    "rank_ddp_eval.py",
]
_runs: dict = {}


def run_job(tmp_path_factory):
    """The one job, launched by the first test that asks (a launch that hung is not repeated: ``launched_once``)."""
    files = [f"tests/ranks/{f}" for f in FAMILIES]
    return launched_once(_runs, NPROC, lambda: launch(files, NPROC, tmp_path_factory.mktemp("reducer_ranks"),
                                                      pytest_args=("-x",)))


@pytest.mark.timeout(JOB_TIMEOUT_S + 60)
@pytest.mark.parametrize("family,name", [(f, t) for f in FAMILIES for t in names_in(f)])
def test_on_both_ranks(family, name, tmp_path_factory):
    results, last, proc = run_job(tmp_path_factory)
    problems, skips, passed = verdict(results, last, NPROC, family, name)
    assert not problems, "\n".join(problems) + "\n" + job_output(proc, last)
    if not passed:
        pytest.skip(skips[0] if skips else "skipped on every rank")


@pytest.mark.timeout(JOB_TIMEOUT_S + 60)
def test_the_job_ends_cleanly(tmp_path_factory):
    results, last, proc = run_job(tmp_path_factory)
    assert proc.returncode == 0, job_output(proc, last)
    listed = {f"{f}::{n}" for f in FAMILIES for n in names_in(f)}
    assert {nodeid.split("[")[0] for nodeid in results} == listed, job_output(proc, last)
