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
