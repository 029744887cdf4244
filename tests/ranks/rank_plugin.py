"""Ordinary pytest tests that run on every rank of a job (tests/test_on_ranks.py launches them).

``python -m ember.distributed.run --nproc-per-node N -m pytest -p rank_plugin tests/ranks/rank_<family>.py ...``
(with tests/ranks on PYTHONPATH) runs the same tests in the same order on each rank, so the collectives inside them
pair up. tests/test_on_ranks.py starts one such job per world size, holding every family (file) that runs at it
(tests/test_reducer_on_ranks.py one more, of DDP's families at 2 ranks), and reports each test on each rank. A plugin rather than a conftest.py: a second conftest module would shadow
tests/conftest.py's imports. The files are named ``rank_*.py``, so a plain ``pytest tests`` does not collect them:
outside a launched job there are no ranks.

What the plugin gives a rank test:

- the fixtures ``process_group`` (ember.distributed, initialised once per rank with a collective timeout of
  ``RANK_TIMEOUT_S`` seconds, default 60: a collective a rank never joins fails the test naming the rank, well
  before the launcher's ``--timeout``), ``rank`` and ``world``, and ``rpc`` (ember.distributed.rpc started on every rank, worker names
  ``worker<rank>``, shut down gracefully at the end of the job);
- ``@pytest.mark.min_world(n)``: the test is skipped (reported as skipped, not failed) in a job of fewer than
  ``n`` ranks; every rank skips it alike, so the collectives of the tests after it still pair up;
- with ``RANK_RESULTS_DIR`` set, each rank appends to ``rank<r>.txt`` there a line when a test starts and one per
  outcome (``<test id>\\t<phase>\\t<outcome>\\t<message>``), written at once: when a job hangs and the launcher's
  ``--timeout`` stops it, the last started test of each rank says where it was;
- after each test a barrier: a rank whose test failed before a collective the others are in meets them there,
  the mismatch fails that test (collectives check that the ranks' calls match) and the job stops, rather than
  shift every later collective by one; the tests after it are reported as never started.

How to write one: compute on every rank, run every collective, then assert (collect what differs on the way and
assert once at the end). A failed assertion between two collectives leaves the other ranks waiting in the second:
the barrier above then stops the job, and the tests after it are lost. A family runs in any job of at least its
``min_world`` ranks, also under plain ``mpiexec -n N python -m pytest -p rank_plugin ...`` or in one process.

What remains a script (tests/dist_scripts/, run by their own tests through the launcher): programs whose subject
is the job itself rather than what the ranks compute — a rank that exits, is killed, hangs or never arrives, and
what the launcher and the other ranks then report (fail.py, graceful.py, straggler.py, lockstep_hangs.py,
monitored_barrier_missing.py, hook_out_of_step.py), restarts from a checkpoint (checkpointed.py, dcp_training.py),
the environment and module start-up of the launcher (env.py), an unmodified PyTorch program under ember.compat
(torch_ddp.py) and the files one DDP step runs, traced from a fresh process (step_files.py). A test that ends its
rank, or leaves a collective or message unanswered, would break every test after it in the same job.
"""

import os
from datetime import timedelta

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "min_world(n): run only in a job of at least n ranks (else skipped)")


def join_torch_gloo(process_group) -> None:
    """Make this rank join a PyTorch gloo process group over the same ranks (rank 0 picks the port), for tests
    that run the same program on PyTorch's distributed package and ember's; ``tdist.destroy_process_group()``
    leaves it."""
    import socket

    import torch.distributed as tdist

    port = [None]
    if process_group.get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port[0] = s.getsockname()[1]
    process_group.broadcast_object_list(port, src=0)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port[0]}", rank=process_group.get_rank(),
                             world_size=process_group.get_world_size())


def init_group(backend: str = "mpi"):
    """ember.distributed, initialised as the ``process_group`` fixture does (for a test that re-initialises it)."""
    import ember.distributed as dist

    dist.init_process_group(backend, timeout=timedelta(seconds=float(os.environ.get("RANK_TIMEOUT_S", "60"))))
    return dist


@pytest.fixture(scope="module")
def ranks(process_group):
    """(rank, world size), this rank also in a PyTorch gloo process group over the same ranks for the module's
    tests (``join_torch_gloo``), left after them: for tests that compare ember's collectives with PyTorch's."""
    import torch.distributed as tdist

    join_torch_gloo(process_group)
    yield process_group.get_rank(), process_group.get_world_size()
    tdist.destroy_process_group()


@pytest.fixture(scope="session")
def process_group():
    dist = init_group()
    yield dist
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture(autouse=True)
def _min_world(request, process_group):
    marker = request.node.get_closest_marker("min_world")
    if marker is not None and process_group.get_world_size() < marker.args[0]:
        pytest.skip(f"needs {marker.args[0]} ranks, the job has {process_group.get_world_size()}")
    yield
    if process_group.is_initialized():
        try:
            process_group.barrier()
        except RuntimeError:
            # the ranks are out of step (one is in another collective, or gone): every later collective would
            # pair with the wrong partner, so the job stops here rather than fail or hang in each later test
            request.session.shouldstop = f"the ranks went out of step in {request.node.nodeid}"
            raise


@pytest.fixture(scope="session")
def rpc():
    """``ember.distributed.rpc`` started on every rank (worker names ``worker<rank>``); a graceful shutdown at the
    end, which waits for every rank's outstanding calls."""
    import ember.distributed.rpc as rpc

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world,
                 rpc_backend_options=rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=60))
    yield rpc
    rpc.shutdown()


@pytest.fixture
def rank(process_group) -> int:
    return process_group.get_rank()


@pytest.fixture
def world(process_group) -> int:
    return process_group.get_world_size()


def _record(nodeid: str, *fields: str) -> None:
    directory = os.environ.get("RANK_RESULTS_DIR")
    if directory:
        path, _, test = nodeid.partition("::")  # the file's name and the test's (a parameter may hold a "/")
        line = "\t".join([f"{os.path.basename(path)}::{test}", *(" ".join(f.split()) for f in fields)])
        with open(os.path.join(directory, f"rank{os.environ['RANK']}.txt"), "a") as f:
            f.write(line + "\n")


def pytest_runtest_logstart(nodeid, location):
    _record(nodeid, "start", "", "")


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        if report.skipped and isinstance(report.longrepr, tuple):
            message = report.longrepr[2]
        else:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash is not None else ""
        _record(report.nodeid, report.when, report.outcome, message[:2000])
