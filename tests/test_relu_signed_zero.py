"""ReLU bit for bit against PyTorch at -0.0: PyTorch's relu is ``clamp_min(x, 0)``, which returns x unless x is
below 0, so relu(-0.0) is -0.0 (``torch.signbit``), NaN passes; threshold(x, 0, 0) replaces x <= 0, -0.0 too, by
+0.0. Every spelling (relu, relu_, F.relu(inplace=True), Tensor.relu), every floating dtype, the one-chunk NumPy
path and the threaded / compiled one (a large input), a transposed input."""
import numpy as np
import pytest
import torch

import ember
from ember._kernels import policy

SPECIAL = [-0.0, 0.0, -1.0, 2.5, float("nan"), -float("inf"), float("inf"), -1e-30]

SPELLINGS = {
    "relu": lambda m, t: m.relu(t),
    "relu_": lambda m, t: m.relu_(t),
    "Tensor.relu": lambda m, t: t.relu(),
    "Tensor.relu_": lambda m, t: t.relu_(),
    "F.relu inplace": lambda m, t: m.nn.functional.relu(t, inplace=True),
    "F.relu_": lambda m, t: m.nn.functional.relu_(t),
    "threshold 0 0": lambda m, t: m.nn.functional.threshold(t, 0.0, 0.0),
    "threshold_ 0 0": lambda m, t: m.nn.functional.threshold(t, 0.0, 0.0, inplace=True),
}


def _values(n: int, transposed: bool) -> np.ndarray:
    rng = np.random.default_rng(4)
    x = rng.standard_normal(n)
    x[: len(SPECIAL)] = SPECIAL
    x[len(SPECIAL)::7] = -0.0  # (-0.0 also inside the vector loop, not only in its head)
    x = x.reshape(-1, 16)
    return x.T if transposed else x


def _bits(m, name, x, dtype):
    t = m.tensor(x, dtype=getattr(m, dtype))
    out = SPELLINGS[name](m, t).float().numpy()
    return out, np.signbit(out)


DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _assert_bits_as_pytorchs(name, x, dtype):
    (ours, our_signs), (theirs, their_signs) = _bits(ember, name, x, dtype), _bits(torch, name, x, dtype)
    np.testing.assert_array_equal(ours, theirs)  # (NaN where NaN)
    signed = ~np.isnan(theirs)  # (a NaN's sign is the tensor's conversion's, not relu's)
    np.testing.assert_array_equal(our_signs[signed], their_signs[signed])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(SPELLINGS))
@pytest.mark.parametrize("transposed", [False, True])
def test_relu_keeps_the_sign_of_zero_as_pytorchs(name, dtype, transposed):
    _assert_bits_as_pytorchs(name, _values(64, transposed), dtype)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["relu", "relu_"])
def test_relu_threaded_paths_keep_the_sign_of_zero(name, dtype, compiled, threads):
    """A large input split over threads (the compiled kernel for float32/float64, else NumPy's maximum per
    chunk): -0.0 stays, as in one chunk."""
    ember.set_num_threads(2)
    with policy.override(compiled=compiled):
        _assert_bits_as_pytorchs(name, _values(1 << 17, False), dtype)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("n", [1 << 14, 3 << 15])
def test_relu_one_chunk_compiled_pass_keeps_the_sign_of_zero(n, transposed, dtype, compiled):
    """One thread, one chunk of at least ``policy.min_compiled_elements`` (a CIFAR ResNet's activations): the
    compiled pass for contiguous float32/float64 inputs, NumPy's maximum otherwise; the same bits either way, and
    the gradient through it as PyTorch's."""
    with policy.override(compiled=compiled):
        _assert_bits_as_pytorchs("relu", _values(n, transposed), dtype)
        if dtype in ("float32", "float64"):
            x = _values(n, transposed)
            grads = []
            for m in (ember, torch):
                t = m.tensor(x, dtype=getattr(m, dtype), requires_grad=True)
                m.relu(t).backward(m.tensor(np.arange(x.size, dtype=np.float64).reshape(x.shape) - x.size / 2,
                                            dtype=getattr(m, dtype)))
                grads.append(t.grad.numpy())
            np.testing.assert_array_equal(grads[0], grads[1])
