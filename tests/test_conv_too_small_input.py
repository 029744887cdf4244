"""A convolution whose (padded) input is smaller than its (dilated) kernel fails with PyTorch's words: "Calculated
padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than actual input
size", for the functions and the layers alike."""

import numpy as np
import pytest
import torch

import ember

CASES = [("conv2d", (1, 3, 2, 2), (4, 3, 3, 3), {}), ("conv1d", (1, 3, 2), (4, 3, 3), {}),
         ("conv3d", (1, 3, 2, 2, 2), (4, 3, 3, 3, 3), {}), ("conv2d", (1, 3, 4, 4), (4, 3, 3, 3), {"dilation": 2}),
         ("conv2d", (3, 2, 2), (4, 3, 3, 3), {"padding": "same"}), ("conv2d", (1, 3, 2, 5), (4, 3, 3, 3), {"padding": (0, 1)}),
         ("conv2d", (3, 2, 2), (4, 3, 3, 3), {})]


def _outcome(m, name, x_shape, w_shape, kwargs):
    rng = np.random.default_rng(0)
    x, w = (m.tensor(rng.standard_normal(s).astype(np.float32)) for s in (x_shape, w_shape))
    try:
        return "ok", getattr(m.nn.functional, name)(x, w, **kwargs).numpy()
    except RuntimeError as e:
        return "RuntimeError", str(e)


@pytest.mark.parametrize("name,x_shape,w_shape,kwargs", CASES)
def test_kernel_larger_than_input_as_torch(name, x_shape, w_shape, kwargs):
    want, got = _outcome(torch, name, x_shape, w_shape, kwargs), _outcome(ember, name, x_shape, w_shape, kwargs)
    assert got[0] == want[0]
    if want[0] == "ok":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    else:
        assert got[1] == want[1]


def test_layer_on_a_too_small_image():
    messages = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            m.nn.Conv2d(3, 8, 5)(m.zeros(1, 3, 4, 4))
        messages.append(str(info.value))
    assert messages[1] == messages[0]
