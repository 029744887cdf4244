"""A reduction's result is laid out row-major, as PyTorch allocates it, whatever the input's layout: the sum (mean,
amax, prod, var, std, norm, logsumexp, any, all) over the batch of a channels-last tensor kept a permuted layout
(NumPy's follows its input's), and a keepdim result's size-1 dimensions had other strides than PyTorch's; also
nanmedian, count_nonzero, aminmax, nansum, nanmean and var_mean/std_mean's mean."""

import math

import pytest
import torch

import ember

OPS = {
    "sum0": lambda m, x: x.sum(0), "sum0 keepdim": lambda m, x: x.sum(0, keepdim=True),
    "sum1 keepdim": lambda m, x: x.sum(1, keepdim=True), "sum23 keepdim": lambda m, x: x.sum((2, 3), keepdim=True),
    "mean0": lambda m, x: x.mean(0), "mean0 keepdim": lambda m, x: x.mean(0, keepdim=True),
    "amax0": lambda m, x: x.amax(0), "amin0 keepdim": lambda m, x: x.amin(0, keepdim=True),
    "prod0": lambda m, x: x.prod(0), "var0 keepdim": lambda m, x: x.var(0, keepdim=True), "std0": lambda m, x: x.std(0),
    "norm0": lambda m, x: x.norm(dim=0), "vector_norm1 keepdim": lambda m, x: m.linalg.vector_norm(x, dim=1,
                                                                                                   keepdim=True),
    "logsumexp0": lambda m, x: x.logsumexp(0), "logsumexp1 keepdim": lambda m, x: x.logsumexp(1, keepdim=True),
    "nanmedian0 keepdim": lambda m, x: x.nanmedian(0, keepdim=True).values,
    "nanmedian0 keepdim indices": lambda m, x: x.nanmedian(0, keepdim=True).indices,
    "count_nonzero0": lambda m, x: x.count_nonzero(0), "aminmax1 keepdim": lambda m, x: x.aminmax(dim=1, keepdim=True).min,
    "aminmax0": lambda m, x: x.aminmax(dim=0).max,
    "nansum0": lambda m, x: x.nansum(0), "nansum1 keepdim": lambda m, x: x.nansum(1, keepdim=True),
    "nanmean0": lambda m, x: x.nanmean(0), "nanmean23 keepdim": lambda m, x: x.nanmean((2, 3), keepdim=True),
    "var_mean0 mean": lambda m, x: m.var_mean(x, 0)[1], "std_mean1 keepdim mean": lambda m, x: m.std_mean(
        x, 1, keepdim=True)[1],
    "any0": lambda m, x: (x > 3).any(0), "all0": lambda m, x: (x > 3).all(0), "half sum0": lambda m, x: x.half().sum(0),
}


@pytest.mark.filterwarnings("ignore")  # (var/std over one element: PyTorch's and ember's dof warning alike)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 5), (2, 1, 4, 1)])
@pytest.mark.parametrize("op", list(OPS))
def test_a_channels_last_inputs_reduction_is_laid_out_as_pytorchs(op, shape):
    def run(lib):
        x = lib.arange(math.prod(shape), dtype=lib.float32).reshape(*shape).to(memory_format=lib.channels_last)
        out = OPS[op](lib, x)
        return tuple(out.shape), out.stride(), out.is_contiguous(), repr(out.float().flatten().tolist())

    assert run(ember) == run(torch)
