"""ember.distributed.rpc and ember.distributed.autograd: what needs no ranks (names, options, errors before
init_rpc, what travels how), and the start and end of RPC on real ranks (tests/dist_scripts/rpc_lifecycle.py).
Calls, RRefs and distributed backward passes between ranks: tests/ranks/rank_rpc.py; a parameter server trained
over RPC: tests/programs/rpc_parameter_server.py."""

import os
import pickle
import subprocess
import sys

import pytest
import torch
import torch.distributed.rpc as torch_rpc
from conftest import ROOT

import ember
import ember.distributed.autograd as dist_autograd
import ember.distributed.rpc as rpc
from ember.distributed.rpc import _wire

SCRIPT = os.path.join(ROOT, "tests", "dist_scripts", "rpc_lifecycle.py")


def test_async_execution_marks_the_function_as_pytorch():
    def fn(x):
        return x

    ours, theirs = rpc.functions.async_execution(fn), torch_rpc.functions.async_execution(fn)
    assert ours._wrapped_async_rpc_function is theirs._wrapped_async_rpc_function is fn
    assert ours.__name__ == theirs.__name__ == "fn" and ours(3) == theirs(3) == 3


def test_names_and_defaults_match_pytorch():
    assert ember.Future is ember.futures.Future and hasattr(torch, "Future")
    for name in ("DEFAULT_RPC_TIMEOUT_SEC", "UNSET_RPC_TIMEOUT", "DEFAULT_NUM_WORKER_THREADS", "DEFAULT_INIT_METHOD",
                 "DEFAULT_SHUTDOWN_TIMEOUT", "DEFAULT_PROCESS_GROUP_TIMEOUT"):
        assert getattr(rpc.constants, name) == getattr(torch_rpc.constants, name), name
    ours, theirs = rpc.TensorPipeRpcBackendOptions(), torch_rpc.TensorPipeRpcBackendOptions()
    assert (ours.num_worker_threads, ours.rpc_timeout, ours.init_method) == \
        (theirs.num_worker_threads, theirs.rpc_timeout, theirs.init_method)
    assert rpc.BackendType.TENSORPIPE.name == torch_rpc.BackendType.TENSORPIPE.name
    assert repr(rpc.WorkerInfo("trainer1", 1)) == "WorkerInfo(id=1, name=trainer1)"
    assert pickle.loads(pickle.dumps(rpc.WorkerInfo("a", 2))) == rpc.WorkerInfo("a", 2)
    with pytest.raises(ValueError, match="num_worker_threads"):
        rpc.TensorPipeRpcBackendOptions(num_worker_threads=0)


def test_calls_before_init_rpc_raise_as_pytorch():
    for call in (lambda: rpc.rpc_sync("worker0", max, args=(1, 2)), lambda: rpc.rpc_async("w", max),
                 lambda: rpc.remote("w", max), rpc.get_worker_info, rpc.shutdown, lambda: rpc.RRef(1),
                 lambda: dist_autograd.context().__enter__()):
        with pytest.raises(RuntimeError, match="RPC has not been initialized"):
            call()
    with pytest.raises(RuntimeError, match="Could not find autograd context with id: 7"):
        dist_autograd.get_gradients(7)
    with pytest.raises(TypeError, match="backend must be a member of BackendType"):
        rpc.init_rpc("w", backend="gloo")


def test_functions_travel_by_reference():
    """ember's factory-made functions (ember.sin is a closure) travel by their public name; others as pickle does."""
    for fn in (ember.sin, ember.add, ember.nn.functional.relu, ember.linalg.norm, max, os.path.join):
        data = _wire.dumps(fn, None, 0, 1)
        assert _wire.loads(data) is fn and len(data) < 100  # a name, not code

    def local():
        pass

    with pytest.raises((AttributeError, pickle.PicklingError)):
        _wire.dumps(local, None, 0, 1)


def test_tensors_travel_by_value():
    t = ember.arange(6.0).reshape(2, 3)[:, 1:]
    back = _wire.loads(_wire.dumps((t, ember.ones(2, requires_grad=True) * 2), None, 0, 1))
    assert back[0].tolist() == t.tolist() and back[0].data_ptr() != t.data_ptr()
    assert back[1].requires_grad and back[1].is_leaf  # outside a context: the values, not the graph


def test_remote_exception_rebuilds_the_type():
    try:
        int("x")
    except ValueError as e:
        remote = _wire.RemoteException.of(e, rpc.WorkerInfo("worker3", 3))
    exc = pickle.loads(pickle.dumps(remote)).to_exception()
    assert type(exc) is ValueError
    assert str(exc).startswith("On WorkerInfo(id=3, name=worker3):\nValueError(\"invalid literal")
    assert "Traceback (most recent call last)" in str(exc)

    class NeedsTwo(Exception):
        def __init__(self, a, b):
            super().__init__(a, b)

    odd = _wire.RemoteException.of(NeedsTwo(1, 2), rpc.WorkerInfo("w", 0))
    assert odd.exc_type is RuntimeError  # a local class cannot be found by name on the other side
    assert isinstance(_wire.RemoteException(NeedsTwo, "m").to_exception(), RuntimeError)


def run_script(*args):
    env = {**os.environ, "PYTHONPATH": ROOT}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "3", "--timeout", "100", SCRIPT, *args]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


@pytest.mark.skipif(not rpc.is_available(), reason="mpi4py not installed")
def test_init_checks_and_graceful_shutdown_on_ranks():
    out = run_script()
    for r in range(3):
        assert f"rank {r} wrong rank: init_rpc: rank=6, world_size=3 do not match" in out
        assert f"rank {r} wrong world_size: init_rpc: rank={r}, world_size=4 do not match" in out
        assert f"rank {r} bad name: Worker name must match" in out
        assert f"rank {r} same names: init_rpc: worker names must be unique" in out
        assert f"rank {r} after shutdown: RPC has not been initialized" in out
    # the calls rank 1 left in flight ran before shutdown returned on the workers serving them
    assert "rank 0 after shutdown served ['from rank 1']" in out
    assert "rank 2 after shutdown served ['remote from rank 1']" in out


@pytest.mark.skipif(not rpc.is_available(), reason="mpi4py not installed")
def test_a_call_to_a_stopped_worker_fails_within_its_timeout():
    out = run_script("stopped")
    line = next(x for x in out.splitlines() if x.startswith("rank 1 calling the stopped worker"))
    assert "RPC ran for more than set timeout (1500 ms)" in line and "worker2" in line
    assert float(line.split(" after ")[1].split(" s:")[0]) < 5
    assert all(f"rank {r} finished" in out for r in range(3))


SOLO = """
import ember, ember.distributed.autograd as dist_autograd, ember.distributed.rpc as rpc
rpc.init_rpc("solo", rank=0, world_size=1)
x = ember.tensor([1.0, 2.0], requires_grad=True)
assert rpc.rpc_sync("solo", ember.mul, args=(x, 2)).tolist() == [2.0, 4.0]
with dist_autograd.context() as cid:
    y = rpc.rpc_sync(0, ember.mul, args=(x, x))
    dist_autograd.backward(cid, [y.sum()])
    print("grad", dist_autograd.get_gradients(cid)[x].tolist())
print("rref", rpc.remote("solo", ember.ones, args=(2,)).to_here().tolist(), rpc.RRef(3).to_here())


@rpc.functions.async_execution
def doubled_sum(x, y):  # the reply waits for the chained call's Future
    return rpc.rpc_async("solo", ember.add, args=(x, y)).then(lambda fut: fut.wait() * 2)


@rpc.functions.async_execution
def not_a_future(x):
    return x


@rpc.functions.async_execution
def failing(x):
    fut = ember.futures.Future()
    fut.set_exception(ValueError("no value"))
    return fut


assert isinstance(doubled_sum(ember.ones(2), 1), ember.futures.Future)  # a direct call: the Future itself
print("async", rpc.rpc_sync("solo", doubled_sum, args=(ember.ones(2), 1)).tolist(),
      rpc.rpc_async("solo", doubled_sum, args=(ember.ones(1), 2)).wait().tolist(),
      rpc.remote("solo", doubled_sum, args=(ember.zeros(1), 3)).to_here().tolist())
for f, error, text in ((not_a_future, RuntimeError, "must return a torch.futures.Future, got int"),
                       (failing, ValueError, "no value")):
    try:
        rpc.rpc_sync("solo", f, args=(1,))
    except error as e:
        print(type(e).__name__, text in str(e))
rpc.shutdown()
print("done")
"""


@pytest.mark.skipif(not rpc.is_available(), reason="mpi4py not installed")
def test_one_worker_without_a_launcher():
    """``python script.py`` alone: a job of one worker (MPI's singleton), calling itself."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    out = subprocess.run([sys.executable, "-c", SOLO], cwd=ROOT, env={**env, "PYTHONPATH": ROOT},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:6] == [
        "grad [2.0, 4.0]", "rref [1.0, 1.0] 3", "async [4.0, 4.0] [6.0] [6.0]",
        "RuntimeError True", "ValueError True", "done"]
