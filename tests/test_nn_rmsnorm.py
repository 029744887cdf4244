"""F.rms_norm against PyTorch: eps (None: the dtype's epsilon), dtypes, values and gradients, errors (the
nn.RMSNorm layer is compared with test_nn_layers.py's LayerNorm cases)."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import check

import ember
import ember.nn as nn


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rms_norm_functional(dtype):
    atol = 1e-5 if dtype == np.float32 else 1e-12
    check(lambda m, x, w: m.nn.functional.rms_norm(x, (4,), w), [(3, 5, 4), (4,)], dtype=dtype, atol=atol)
    check(lambda m, x: m.nn.functional.rms_norm(x, [5, 4], eps=0.1), [(3, 5, 4)], dtype=dtype, atol=atol)
    # eps=None is finfo(dtype).eps: it matters for inputs whose mean square is that small
    check(lambda m, x: m.nn.functional.rms_norm(x * 1e-4, (4,)), [(2, 4)], dtype=dtype, atol=atol)


def test_rms_norm_errors():
    x = ember.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"got weight of shape \[3\] and normalized_shape = \[4\]"):
        nn.functional.rms_norm(x, (4,), weight=ember.ones(3))
    with pytest.raises(NotImplementedError, match="rms_norm"):
        nn.functional.rms_norm(x.long(), (4,))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64"])
def test_default_eps_is_the_compute_dtypes_machine_epsilon(dtype):
    """eps=None: the machine epsilon of the dtype PyTorch computes in (float32's for a half-precision input, not the
    half type's, which is large: a small input's result was far from PyTorch's), for the function and the module."""
    import torch

    x = np.random.default_rng(0).standard_normal((4, 16)) * 0.05
    got = []
    for m in (ember, torch):
        t = m.tensor(x, dtype=getattr(m, dtype))
        got.append([m.nn.functional.rms_norm(t, (16,)).double().tolist(),
                    m.nn.RMSNorm(16, dtype=getattr(m, dtype))(t).detach().double().tolist()])
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("op", ["rms_norm", "layer_norm"])
@pytest.mark.parametrize("normalized", [(3,), (4, 4), (2, 3, 5), (5, 2, 3, 4)])
def test_a_normalized_shape_the_input_lacks_is_worded_as_pytorchs(op, normalized):
    """PyTorch's rms_norm writes the expected shape "[*3]" where its layer_norm writes "[*, 3]" (ember wrote the
    latter for both), and refuses an input of fewer dimensions than ``normalized_shape`` with a ValueError of its own
    (ember: the shape's RuntimeError)."""
    import torch

    errors = []
    for m in (torch, ember):
        with pytest.raises((RuntimeError, ValueError)) as caught:
            getattr(m.nn.functional, op)(m.randn(2, 3, 4), normalized)
        errors.append((type(caught.value), str(caught.value)))
    assert errors[1] == errors[0]
