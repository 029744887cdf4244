"""Every normalisation split over ember's threads, on both of its paths, against PyTorch and its own one-thread bits.

The row kernels (LayerNorm, RMSNorm) split their rows, and BatchNorm its channels, among ``ember.set_num_threads(n)``
threads only from ``policy.min_parallel_pass_elements`` (512 Ki) or ``min_parallel_elements`` (64 Ki): the other
normalisation tests run below those sizes, so a split that walks the wrong extent (the features for the rows, a
chunk's rows off by one) is never taken there. Here the thresholds are lowered to a few elements, so inputs of a few
thousand take every split: tall inputs (more rows than features, where a split by the features' count leaves rows
unwritten) and wide ones, at 1 and 3 threads, with the compiled kernels and without them (the NumPy path's
``parallel_rows``), forward and every gradient."""

import numpy as np
import pytest
import torch

import ember
from ember._kernels import policy

# every split threshold at a few elements (the kernels' choice of path is unchanged: min_compiled_elements stays)
_SPLIT_ALL = {"min_parallel_pass_elements": 8, "min_parallel_elements": 8, "min_elementwise_elements": 8}


def _layer_norm(m, x, w, b):
    return m.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5)


def _layer_norm_plain(m, x, w, b):
    return m.nn.functional.layer_norm(x, x.shape[-1:])


def _layer_norm_two_dims(m, x, w, b):
    return m.nn.functional.layer_norm(x, x.shape[-2:])


def _rms_norm(m, x, w, b):
    return m.nn.functional.rms_norm(x, x.shape[-1:], w, 1e-5)


def _rms_norm_plain(m, x, w, b):
    return m.nn.functional.rms_norm(x, x.shape[-1:])


def _batch_norm_train(m, x, w, b):
    c = x.shape[1]
    mean, var = m.zeros(c, dtype=x.dtype), m.ones(c, dtype=x.dtype)
    return m.nn.functional.batch_norm(x, mean, var, w, b, training=True, momentum=0.1, eps=1e-5)


def _batch_norm_eval(m, x, w, b):
    c = x.shape[1]
    mean = m.linspace(-0.5, 0.5, c, dtype=x.dtype)
    var = m.linspace(0.5, 2.0, c, dtype=x.dtype)
    return m.nn.functional.batch_norm(x, mean, var, w, b, training=False, eps=1e-5)


def _group_norm(m, x, w, b):
    return m.nn.functional.group_norm(x, 3, w, b, 1e-5)


def _instance_norm(m, x, w, b):
    return m.nn.functional.instance_norm(x, weight=w, bias=b, eps=1e-5)


# name -> (op, input shape, the weight's shape or None, whether a bias of that shape is given)
CASES = {
    "layer_norm_tall": (_layer_norm, (6, 50, 7), (7,), True),  # 300 rows of 7 features
    "layer_norm_wide": (_layer_norm, (3, 301), (301,), True),  # 3 rows of 301
    "layer_norm_plain_tall": (_layer_norm_plain, (300, 7), None, False),
    "layer_norm_plain_wide": (_layer_norm_plain, (5, 211), None, False),
    "layer_norm_two_dims": (_layer_norm_two_dims, (40, 3, 5), None, False),
    "rms_norm_tall": (_rms_norm, (6, 50, 7), (7,), False),
    "rms_norm_wide": (_rms_norm, (3, 301), (301,), False),
    "rms_norm_plain_tall": (_rms_norm_plain, (300, 7), None, False),
    "batch_norm_train": (_batch_norm_train, (4, 5, 9, 11), (5,), True),
    "batch_norm_train_many_channels": (_batch_norm_train, (30, 70), (70,), True),
    "batch_norm_eval": (_batch_norm_eval, (4, 5, 9, 11), (5,), True),
    "group_norm": (_group_norm, (4, 6, 130), (6,), True),
    "instance_norm": (_instance_norm, (4, 5, 130), (5,), True),
}


def _inputs(shape, param_shape, with_bias, dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    x[..., ::5] *= 40  # rows far apart in scale
    w = None if param_shape is None else rng.uniform(0.5, 1.5, param_shape).astype(dtype)
    b = rng.uniform(-1, 1, param_shape).astype(dtype) if with_bias else None
    g = rng.standard_normal(shape).astype(dtype)
    return x, w, b, g


def _run(m, op, x, w, b, g):
    """(output, and the gradient of every input given) of ``op`` in library ``m``."""
    tensors = [None if a is None else m.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = op(m, *tensors)
    out.backward(m.tensor(g))
    return [out.detach().numpy()] + [t.grad.numpy() for t in tensors if t is not None]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_normalisation_split_over_threads_matches_torch_and_one_thread(name, dtype, compiled, threads):
    op, shape, param_shape, with_bias = CASES[name]
    x, w, b, g = _inputs(shape, param_shape, with_bias, dtype)
    results = []
    for n in (1, 3):
        ember.set_num_threads(n)
        with policy.override(compiled=compiled, **_SPLIT_ALL):
            results.append(_run(ember, op, x, w, b, g))
    expected = _run(torch, op, x, w, b, g)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-10}
    for i, (one, three, e) in enumerate(zip(*results, expected)):
        # (the split never changes what a row or channel computes: the same bits at any count)
        np.testing.assert_array_equal(three, one, err_msg=f"array {i}: 3 threads differ from 1")
        assert one.shape == e.shape and one.dtype == e.dtype
        np.testing.assert_allclose(one, e, **tol, err_msg=f"array {i} differs from PyTorch's")
