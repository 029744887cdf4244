"""ember.distributed: collectives on real ranks (the tests of tests/ranks/rank_collectives.py check each against its
definition; tests/test_on_ranks.py runs them under the launcher, here under plain mpiexec and in one process) and
the errors that need no ranks (before init, nccl, no mpi4py)."""

import os
import re
import subprocess
import sys
from datetime import timedelta

import pytest

import ember.distributed as dist
from ember.distributed import comm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILY = os.path.join(ROOT, "tests", "ranks", "rank_collectives.py")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")
needs_mpi = pytest.mark.skipif(not comm.is_available(), reason="mpi4py not installed")


def run(cmd, extra_env=None):
    env = {**os.environ, "PYTHONPATH": ROOT}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "OMP_NUM_THREADS", "MASTER_ADDR"):
        env.pop(name, None)
    env.update(extra_env or {})
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def run_family(launch):
    """tests/ranks/rank_collectives.py's tests, started by ``launch`` (mpiexec's arguments, or none)."""
    cmd = [*launch, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "rank_plugin", FAMILY]
    return run(cmd, {"PYTHONPATH": os.pathsep.join([ROOT, os.path.dirname(FAMILY)])})


@needs_mpi
def test_collectives_under_plain_mpiexec():
    # no launcher: init_process_group takes rank/size from MPI and sets RANK, LOCAL_RANK, ... itself
    p = run_family([MPIEXEC, "-n", "2"])
    assert p.returncode == 0 and " passed" in p.stdout and "failed" not in p.stdout, p.stdout + p.stderr


@needs_mpi
def test_single_process_without_launcher():
    p = run_family([])
    assert p.returncode == 0 and " passed" in p.stdout, p.stdout + p.stderr
    assert "skipped" in p.stdout, "the tests that need 2 ranks are skipped in one process"


@needs_mpi
def test_world_size_env_without_mpi_ranks_is_explained():
    code = "import ember.distributed as d; d.init_process_group('gloo')"
    p = run([sys.executable, "-c", code], {"WORLD_SIZE": "4"})
    assert p.returncode != 0
    assert "WORLD_SIZE=4 in the environment but MPI started 1 process" in p.stderr, p.stderr
    assert "ember.distributed.run" in p.stderr


@needs_mpi
def test_spawned_ranks_are_told_to_use_the_launcher():
    """PyTorch's DDP tutorial starts its ranks with mp.spawn, each calling init_process_group(rank=, world_size=);
    multiprocessing's children are not MPI ranks, and the error says how ember starts them instead."""
    code = "import ember.distributed as d; d.init_process_group('gloo', rank=1, world_size=2)"
    p = run([sys.executable, "-c", code], {})
    assert p.returncode != 0
    assert "ValueError: init_process_group: world_size=2 but MPI started 1 process(es)" in p.stderr, p.stderr
    assert "mp.spawn" in p.stderr and "python -m ember.distributed.run --nproc-per-node 2" in p.stderr, p.stderr


@needs_mpi
@pytest.mark.parametrize("extra", [{}, {"WORLD_SIZE": "1"}])
def test_a_rank_env_that_mpi_contradicts_is_explained(extra):
    """A RANK left in the environment (exported for another job) would make a script that reads it (nanoGPT's
    ``master_process = int(os.environ['RANK']) == 0``) disagree with get_rank(): PyTorch refuses RANK without a
    matching WORLD_SIZE; ember says what MPI sees."""
    code = "import ember.distributed as d; d.init_process_group('gloo')"
    p = run([sys.executable, "-c", code], {"RANK": "1", **extra})
    assert p.returncode != 0
    assert "RANK=1 in the environment but MPI says this process is rank 0 of 1" in p.stderr, p.stderr


def test_collective_before_init_is_a_clear_error():
    assert not dist.is_initialized()
    import ember

    for call in (lambda: dist.all_reduce(ember.ones(2)), lambda: dist.get_rank(), lambda: dist.barrier(),
                 lambda: dist.send(ember.ones(2), dst=1)):
        with pytest.raises(ValueError, match="default process group has not been initialized.*init_process_group"):
            call()


def test_before_init_under_a_launcher_the_error_does_not_suggest_the_launcher(monkeypatch):
    # A script started by ember.distributed.run (or torchrun) that forgot init_process_group: RANK and WORLD_SIZE
    # are set, so the fix is the call, not starting the ranks another way.
    import torch
    from torch.nn.parallel import DistributedDataParallel as TorchDDP

    import ember
    from ember.nn.parallel import DistributedDataParallel

    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError) as theirs:
        TorchDDP(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="not been initialized.*init_process_group") as ours:
        DistributedDataParallel(ember.nn.Linear(2, 2))
    assert "not been initialized" in str(theirs.value) and "init_process_group" in str(theirs.value)
    assert "started as rank 1 of 2 by a launcher" in str(ours.value)
    assert "ember.distributed.run" not in str(ours.value)


@pytest.mark.parametrize("backend", ["nccl", "NCCL", "cuda:nccl"])
def test_nccl_fails_at_once(backend):
    with pytest.raises(RuntimeError, match="no GPU.*'gloo'"):
        dist.init_process_group(backend)
    assert not dist.is_initialized()


def test_bad_arguments_to_init():
    with pytest.raises(ValueError, match="invalid backend 'ucc'"):
        dist.init_process_group("ucc")
    with pytest.raises(TypeError, match="timedelta"):
        dist.init_process_group("gloo", timeout=30)
    assert not dist.is_initialized()


def test_import_needs_no_mpi4py_and_use_says_how_to_install(monkeypatch):
    # importing ember.distributed never touches mpi4py ...
    p = run([sys.executable, "-c", "import sys, ember.distributed; assert 'mpi4py' not in sys.modules"])
    assert p.returncode == 0, p.stderr
    # ... and using it without mpi4py names the packages to install
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.setattr(comm, "_MPI", None)
    with pytest.raises(RuntimeError, match="pip install mpi4py mpich"):
        dist.init_process_group("gloo", timeout=timedelta(seconds=5))
    assert not dist.is_initialized()


def test_availability_flags():
    assert dist.is_available() == comm.is_available()
    assert dist.is_gloo_available() == dist.is_mpi_available() == comm.is_available()
    assert not dist.is_nccl_available()
    assert {op.name for op in dist.ReduceOp} >= {"SUM", "AVG", "PRODUCT", "MIN", "MAX"}


def test_backend_names_and_default_backend_for_device_as_pytorch():
    import torch.distributed as tdist

    import ember

    for name in ("UNDEFINED", "GLOO", "NCCL", "UCC", "MPI", "XCCL", "FAKE"):
        assert getattr(dist.Backend, name) == getattr(tdist.Backend, name)
    for name in ("GLOO", "nccl", "Mpi", "custom"):
        assert dist.Backend(name) == tdist.Backend(name)
    with pytest.raises(ValueError):
        dist.Backend(3)
    for device in ("cpu", "cuda", "cuda:1", "mps"):
        assert dist.get_default_backend_for_device(device) == tdist.get_default_backend_for_device(device)
    assert dist.get_default_backend_for_device(ember.device("cpu")) == "gloo"
    for m in (dist, tdist):
        with pytest.raises(ValueError):
            m.get_default_backend_for_device("meta")



# A message to or from a rank the group does not have, in PyTorch's API (m: torch or ember, d: its distributed):
# each case prints its error's type, whether it is a DistError, the rank asked for and the first line of the message.
_NO_SUCH_PEER = """
import sys, datetime
m = __import__(sys.argv[1]); d = __import__(sys.argv[1] + '.distributed', fromlist=['x'])
if sys.argv[1] == 'torch':
    W = 2
    d.init_process_group('gloo', init_method='tcp://127.0.0.1:' + sys.argv[3], rank=int(sys.argv[2]), world_size=W,
                         timeout=datetime.timedelta(seconds=1))
else:
    d.init_process_group('gloo'); W = 1
cases = [('send', 'dst', W), ('recv', 'src', -1), ('isend', 'group_dst', W + 3), ('irecv', 'src', W)]
if sys.argv[1] == 'torch':
    cases = cases[int(sys.argv[4]):int(sys.argv[4]) + 1]  # (PyTorch's process crashes after the first)
for name, arg, peer in cases:
    try:
        work = getattr(d, name)(m.zeros(2), **{arg: peer})
        work.wait() if hasattr(work, 'wait') else None
        print('NONE', name, flush=True)
    except Exception as e:
        print('\t'.join(['ERR', name, str(peer), type(e).__name__, str(isinstance(e, d.DistError)),
                         str(e).splitlines()[0]]), flush=True)
"""


def _errors(stdout: str) -> list[list[str]]:
    return [line.split("\t")[1:] for line in stdout.splitlines() if line.startswith("ERR")]


@needs_mpi
def test_message_to_a_rank_that_does_not_exist_is_pytorchs_store_error():
    """PyTorch's gloo looks the peer's address up in the store and raises DistStoreError ("wait timeout after
    1000ms, keys: .../<rank>") once the store's timeout passes; ember raises that type with those words at once (a
    rank outside the group never comes). PyTorch runs on 2 ranks, one case per job (its processes crash after the
    error), ember in one process."""
    import socket

    ours = run([sys.executable, "-c", _NO_SUCH_PEER, "ember"])
    mine = _errors(ours.stdout)
    jobs = []
    for case in (0, 3):  # (started together: PyTorch's start-up is most of the time)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
        jobs.append([subprocess.Popen([sys.executable, "-c", _NO_SUCH_PEER, "torch", str(r), port, str(case)],
                                      cwd=ROOT, stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, text=True) for r in range(2)])
    theirs = []
    try:
        for job in jobs:
            theirs += _errors(job[0].communicate(timeout=90)[0])
    finally:
        for p in (p for job in jobs for p in job):
            p.kill()
            p.wait()
    assert len(mine) == 4 and len(theirs) == 2, (ours.stdout + ours.stderr, theirs)
    theirs = dict(zip(("send", "irecv"), theirs))
    for name, peer, kind, is_dist, message in mine:
        t_name, t_peer, t_kind, t_dist, t_message = theirs.get(name, theirs["send"])
        assert (kind, is_dist) == (t_kind, t_dist) == ("DistStoreError", "True"), (mine, theirs)
        for words, rank in ((message, peer), (t_message, t_peer)):
            assert "wait timeout" in words and re.search(rf"keys: \S*/{re.escape(rank)}\b", words), words
