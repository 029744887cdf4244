"""``torch.nn.parallel._functions`` (imported by multi-GPU code such as the widely copied SynchronizedBatchNorm):
on CPU tensors each Function refuses as PyTorch's does, with its exception type and words."""

import pytest
import torch
from torch.nn.parallel import _functions as tf

import ember
from ember.nn.parallel import _functions as ef


def calls(lib, fns):
    a = lib.ones(2, requires_grad=True)
    return [
        (fns.Broadcast, ([0, 1], a)),
        (fns.Broadcast, (["cuda:0"], a, a)),
        (fns.ReduceAddCoalesced, (0, 1, a, a)),
        (fns.ReduceAddCoalesced, (-1, 2, a, a)),
        (fns.ReduceAddCoalesced, (0, 2, a)),
        (fns.Gather, (0, 0, a, a)),
        (fns.Gather, ("cpu", 1, a)),
        (fns.Scatter, (["cpu"], None, 0, a)),
    ]


@pytest.mark.parametrize("k", range(8))
def test_cpu_tensors_are_refused_as_pytorch_refuses_them(k):
    fn, args = calls(torch, tf)[k]
    with pytest.raises(Exception) as want:
        fn.apply(*args)
    fn, args = calls(ember, ef)[k]
    with pytest.raises(Exception) as got:
        fn.apply(*args)
    assert (type(got.value), str(got.value)) == (type(want.value), str(want.value))


def test_broadcast_of_nothing_is_empty():
    assert tf.Broadcast.apply([0]) == () == ef.Broadcast.apply([0])


def test_scatter_to_a_gpu_is_the_no_gpu_error():
    # (a CPU build of PyTorch fails inside its missing C function; ember names the GPU it does not have)
    with pytest.raises(RuntimeError, match="CPU only"):
        ef.Scatter.apply([0], None, 0, ember.ones(2))


def test_synchronized_batchnorm_imports():
    # what SynchronizedBatchNorm's module imports, by PyTorch's names
    import subprocess
    import sys

    code = ("from torch.nn.parallel._functions import ReduceAddCoalesced, Broadcast\n"
            "from torch.nn.parallel.data_parallel import DataParallel\n"
            "from torch.nn.modules.batchnorm import _BatchNorm\nprint('ok')")
    out = subprocess.run([sys.executable, "-m", "ember.compat", "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


# ------------------------------------------------------------------ scatter_gather, replicate, parallel_apply
# DLRM's training script imports these at module level (it calls them only with several GPUs); on CPU tensors
# each stops as PyTorch's does, and what needs no tensor is computed as PyTorch computes it.
import collections  # noqa: E402
import importlib  # noqa: E402

# (``torch.nn.parallel.replicate`` is the function; its module is reached by its full name)
tpa, trep, tsg, epa, erep, esg = (importlib.import_module(f"{lib}.nn.parallel.{name}") for lib in ("torch", "ember")
                                  for name in ("parallel_apply", "replicate", "scatter_gather"))

Pair = collections.namedtuple("Pair", "a b")


def multi_gpu_calls(lib, sg, rep, pa):
    x = lib.ones(4, 2)
    lin, relu = lib.nn.Linear(2, 2), lib.nn.ReLU()
    return [
        lambda: sg.scatter(x, [0, 1]),
        lambda: sg.scatter((x, 1), ["cpu"]),
        lambda: sg.scatter_kwargs((x,), {"k": 1}, [0]),
        lambda: sg.gather([x, x], 0),
        lambda: sg.gather([{"a": x}, {"a": x, "b": x}], "cpu"),
        lambda: sg.gather([(None, x), (None, x)], -1),
        lambda: rep.replicate(lin, [0, 1]),
        lambda: rep.replicate(lin, ["cpu"]),
        lambda: rep.replicate(lin, [0], detach=True),
        lambda: rep.replicate(lib.nn.BatchNorm1d(2).requires_grad_(False), [0]),
        lambda: pa.parallel_apply([relu], [(x,)], None, [0]),
        lambda: pa.parallel_apply([relu], [(x,)], [{}, {}]),
        lambda: pa.parallel_apply([relu, relu], [(x,)]),
        lambda: pa.parallel_apply([relu], [(x,)], None, [0, 1]),
        lambda: pa.parallel_apply([relu], [(x,)], None, ["cpu"]),
        lambda: pa.parallel_apply([], []),
    ]


# where PyTorch's CPU build reaches for its CUDA scatter (an AttributeError), ember says it has no GPU, as
# ``Scatter`` does above
NO_GPU = {0, 2}


@pytest.mark.parametrize("k", range(16))
def test_multi_gpu_helpers_stop_on_cpu_tensors_as_pytorchs(k):
    with pytest.raises(Exception) as want:
        multi_gpu_calls(torch, tsg, trep, tpa)[k]()
    with pytest.raises(Exception) as got:
        multi_gpu_calls(ember, esg, erep, epa)[k]()
    if k in NO_GPU:
        assert "_scatter" in str(want.value) and "computes on the CPU only" in str(got.value)
    else:
        assert (type(got.value), str(got.value)) == (type(want.value), str(want.value))


def test_the_package_exports_pytorchs_functions():
    import torch.nn.parallel as tp

    import ember.nn.parallel as ep
    assert set(tp.__all__) == set(ep.__all__)
    for name in tp.__all__:
        assert callable(getattr(ep, name))
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        tp.data_parallel(torch.nn.ReLU(), torch.ones(1))
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        ep.data_parallel(ember.nn.ReLU(), ember.ones(1))


def test_scatter_repeats_what_is_not_a_tensor_as_pytorch():
    for sg in (tsg, esg):
        assert sg.scatter(5, [0, 1]) == [5, 5]
        assert sg.scatter((1, "a"), [0, 1]) == [(1, "a"), (1, "a")]
        assert sg.scatter({"a": 1}, [0, 1]) == [{"a": 1}, {"a": 1}]
        assert sg.scatter(Pair(1, 2), [0, 1]) == [Pair(1, 2), Pair(1, 2)]
        assert sg.scatter([], [0, 1]) == [[], []]
        assert sg.scatter_kwargs((1,), {"k": 2}, [0, 1]) == (((1,), (1,)), ({"k": 2}, {"k": 2}))
        assert sg.scatter_kwargs((), {"k": 2}, [0, 1]) == (((), ()), ({"k": 2}, {"k": 2}))
        assert sg.gather([None, None], 0) is None
        assert sg.gather([(None,), (None,)], 0) == (None,)
        assert sg.gather([Pair(None, None)] * 2, 0) == Pair(None, None)


def test_replicate_of_a_module_without_tensors_copies_it_as_pytorch():
    for lib, rep in ((torch, trep), (ember, erep)):
        net = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh())
        copies = rep.replicate(net, [0, 1])
        assert len(copies) == 2 and copies[0] is not copies[1] and copies[0] is not net
        assert type(copies[0]) is type(net) and type(copies[0][1]) is type(net[1]) and copies[0][1] is not net[1]
        assert copies[1][0] is not copies[0][0]
        assert getattr(copies[0], "_is_replica", False) and not getattr(net, "_is_replica", False)
        assert rep.replicate(net, []) == []
        x = lib.tensor([-1.0, 2.0])
        assert copies[1](x).tolist() == net(x).tolist()


def test_get_a_var_finds_the_first_tensor_as_pytorch():
    for lib, pa in ((torch, tpa), (ember, epa)):
        t = lib.ones(1)
        assert pa.get_a_var([1, (t,)]) is t and pa.get_a_var({"k": t}) is t and pa.get_a_var((1, "a")) is None
