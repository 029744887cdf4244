"""InstanceNorm1d/2d/3d and F.instance_norm, LocalResponseNorm against PyTorch: outputs, input/weight/bias gradients
and running statistics, in training and eval, with and without affine and tracking, batched and unbatched, and the errors."""

import warnings

import numpy as np
import pytest
import torch
from nn_oracle import batch_last, compare_module
from oracle import assert_same_error, assert_same_outcome, check

import ember
import ember.nn as nn

TOL = {np.float32: dict(atol=1e-4, rtol=1e-4), np.float64: dict(atol=1e-10, rtol=1e-10)}


def randn(*shape, dtype=np.float32, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 2 + 1).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (3, 4, 7)), ("InstanceNorm2d", (2, 4, 5, 6)),
                                       ("InstanceNorm3d", (2, 4, 3, 4, 2)), ("InstanceNorm2d", (4, 5, 6)),
                                       ("InstanceNorm1d", (4, 2))])
@pytest.mark.parametrize("kwargs", [{}, {"affine": True}, {"track_running_stats": True, "momentum": 0.3},
                                    {"affine": True, "track_running_stats": True, "momentum": None}])
def test_modules_train_and_eval(dtype, cls, shape, kwargs):
    em, tm = getattr(nn, cls)(4, **kwargs), getattr(torch.nn, cls)(4, **kwargs)
    if dtype == np.float64:
        em, tm = em.double(), tm.double()
    if kwargs.get("affine"):  # weights other than ones/zeros, so that their use is tested
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            tm.bias.uniform_(-1, 1)
    compare_module(em, tm, randn(*shape, dtype=dtype), steps=2, **TOL[dtype])
    compare_module(em, tm, randn(*shape, dtype=dtype, seed=1), train=False, **TOL[dtype])
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())


def test_batch_last_input():
    compare_module(nn.InstanceNorm2d(3, affine=True), torch.nn.InstanceNorm2d(3, affine=True),
                   batch_last(randn(4, 3, 5, 5)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_functional(dtype):
    rm, rv = np.zeros(3, dtype), np.ones(3, dtype)
    ers, trs = [ember.tensor(rm), ember.tensor(rv)], [torch.tensor(rm), torch.tensor(rv)]

    def fn(m, x, w, b):
        rs = ers if m is ember else trs
        return m.nn.functional.instance_norm(x, *rs, w, b, momentum=0.2, eps=1e-3)

    check(fn, [(2, 3, 4, 5), (3,), (3,)], dtype=dtype, **TOL[dtype])
    for e, t in zip(ers, trs):
        np.testing.assert_allclose(e.numpy(), t.numpy(), **TOL[dtype])
    check(lambda m, x: m.nn.functional.instance_norm(x), [(2, 3, 6)], dtype=dtype, **TOL[dtype])
    check(lambda m, x, w, b: m.nn.functional.instance_norm(x, ember.tensor(rm) if m is ember else torch.tensor(rm),
                                                           ember.tensor(rv) if m is ember else torch.tensor(rv),
                                                           w, b, use_input_stats=False),
          [(2, 3, 6), (3,), (3,)], dtype=dtype, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_functional_of_an_input_without_spatial_dims(dtype):
    """(N, C): with the running statistics (use_input_stats=False) it is normalised as PyTorch's; in training it
    is PyTorch's error, one spatial element being too few."""
    rm, rv = np.full(3, 0.5, dtype), np.full(3, 2.0, dtype)
    check(lambda m, x, w, b: m.nn.functional.instance_norm(x, m.tensor(rm), m.tensor(rv), w, b,
                                                           use_input_stats=False),
          [(2, 3), (3,), (3,)], dtype=dtype, **TOL[dtype])
    with pytest.raises(ValueError, match=r"Expected more than 1 spatial element when training, got input size "
                                         r".*\[2, 3\]"):
        nn.functional.instance_norm(ember.randn(2, 3))


def _instance_norm_error(m, shape, use_input_stats):
    running = {} if use_input_stats else {"running_mean": m.zeros(5), "running_var": m.ones(5)}
    with pytest.raises(Exception) as info:
        m.nn.functional.instance_norm(m.ones(shape), use_input_stats=use_input_stats, **running)
    return info.type, str(info.value).replace("torch.Size(", "").replace("ember.Size(", "").replace("])", "]")


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("shape", [(5,), (), (2, 5), (2, 5, 1), (1, 5, 1, 1)])
def test_functional_errors_for_too_few_dims_or_positions_as_pytorch(shape, use_input_stats):
    """Training needs more than one spatial position per instance, checked first (also for 1-D and 0-d input:
    PyTorch's ValueError); with the running statistics a 1-D or 0-d input is PyTorch's IndexError, and one
    position per channel is normalised."""
    if not use_input_stats and len(shape) >= 2:
        rm, rv = np.full(5, 0.5, np.float32), np.full(5, 2.0, np.float32)
        check(lambda m, x: m.nn.functional.instance_norm(x, m.tensor(rm), m.tensor(rv), use_input_stats=False),
              [shape], atol=1e-5, rtol=1e-5)
        return
    assert _instance_norm_error(ember, shape, use_input_stats) == _instance_norm_error(torch, shape, use_input_stats)


def test_errors():
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        nn.InstanceNorm2d(3)(ember.randn(2, 3, 1, 1))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(ember.randn(2, 3))
    with pytest.raises(ValueError, match="expected input's size at dim=1 to match num_features"):
        nn.InstanceNorm2d(3, affine=True)(ember.randn(2, 4, 3, 3))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm2d(3)(ember.randn(2, 4, 3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # eval with running statistics: one position per channel is fine
        nn.InstanceNorm2d(3, track_running_stats=True).eval()(ember.randn(2, 3, 1, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,size", [((2, 7, 5), 3), ((2, 6, 4, 3), 4), ((1, 5, 2, 3, 2), 5), ((2, 3, 4), 7),
                                        ((2, 4, 5), 1)])
def test_local_response_norm(dtype, shape, size):
    kwargs = dict(alpha=0.5, beta=0.6, k=1.5)  # large alpha: the window term matters
    em, tm = nn.LocalResponseNorm(size, **kwargs), torch.nn.LocalResponseNorm(size, **kwargs)
    compare_module(em, tm, randn(*shape, dtype=dtype), **TOL[dtype])
    assert repr(em) == repr(tm)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        em(ember.randn(2, 3))


@pytest.mark.parametrize("given", ["mean", "var", "neither"])
@pytest.mark.parametrize("fn,kwargs", [("batch_norm", {"training": True}), ("batch_norm", {"training": False}),
                                       ("instance_norm", {"use_input_stats": True}),
                                       ("instance_norm", {"use_input_stats": False})])
def test_running_statistics_both_or_neither_as_pytorch(fn, kwargs, given):
    """Only one of running_mean and running_var refused with PyTorch's error and message (ValueError when the batch
    statistics are used, RuntimeError when the running ones are needed), as is neither where they are needed;
    neither with batch statistics normalises and updates nothing."""
    x = randn(2, 3, 4, dtype=np.float64)

    def call(m):
        stats = {"running_mean": m.zeros(3, dtype=m.float64) if given == "mean" else None,
                 "running_var": m.ones(3, dtype=m.float64) if given == "var" else None}
        return getattr(m.nn.functional, fn)(m.tensor(x), **stats, **kwargs)

    if given == "neither":
        assert_same_outcome(call, atol=1e-12, rtol=1e-7)
    else:
        assert_same_error(call)
