"""Pooling an input too small for its windows (an image shrunk by too many poolings, the usual mistake) fails with
PyTorch's words: "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small", the sizes
per channel (1-d pooling as PyTorch's 2-d of a (C, 1, L) view); max_pool1d without indices says "Invalid computed
output size", and avg_pool3d (lp_pool3d) first refuses an input smaller than the kernel, whatever the padding."""

import numpy as np
import pytest
import torch

import ember


def _cases():
    cases = []
    for nd in (1, 2, 3):
        for batched in (True, False):
            small = ((2, 3) if batched else (3,)) + (2,) * nd
            ragged = ((2, 3) if batched else (3,)) + tuple(range(2, 2 + nd))
            cases += [(f"max_pool{nd}d", small, (3,), {}), (f"max_pool{nd}d", ragged, (3, 1), {}),
                      (f"max_pool{nd}d", ragged, (2, 1, 0, 2), {}), (f"max_pool{nd}d", small, (3,), {"return_indices": True}),
                      (f"max_pool{nd}d", ragged, (3, 2), {"ceil_mode": True}), (f"max_pool{nd}d", small, (9, 1), {}),
                      (f"avg_pool{nd}d", small, (3,), {}), (f"avg_pool{nd}d", ragged, (3, 1), {}),
                      (f"avg_pool{nd}d", small, (4, 1, 1), {}), (f"avg_pool{nd}d", small, (5, 2, 2), {}),
                      (f"avg_pool{nd}d", small, (9, 1), {}), (f"lp_pool{nd}d", small, (2.0, 3), {}),
                      (f"lp_pool{nd}d", small, (2.0, 5, 2), {})]
    cases += [("avg_pool3d", (1, 1, 2, 2, 2), (3, 1, 2), {}), ("avg_pool3d", (1, 1, 4, 4, 4), (6, 1, 3), {}),
              ("avg_pool3d", (1, 1, 3, 3, 2), ((3, 3, 2), 1, 1), {}), ("avg_pool3d", (0, 1, 2, 2, 2), (3,), {}),
              ("max_pool2d", (1, 3, 2, 20), (4, 2, 1), {"ceil_mode": True})]
    return cases


CASES = _cases()


def _outcome(m, name, shape, args, kwargs):
    x = m.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    try:
        out = getattr(m.nn.functional, name)(x, *args, **kwargs)
    except Exception as e:  # noqa: BLE001 (the error's type and message are compared)
        return type(e).__name__, str(e)
    out = out[0] if isinstance(out, tuple) else out
    return "ok", out.numpy()


@pytest.mark.parametrize("name,shape,args,kwargs", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_too_small_input_as_torch(name, shape, args, kwargs):
    want, got = _outcome(torch, name, shape, args, kwargs), _outcome(ember, name, shape, args, kwargs)
    assert got[0] == want[0], (got, want)
    if want[0] == "ok":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    else:
        assert got[1] == want[1]


def test_layer_in_a_network_reports_the_sizes():
    """A CIFAR-style stack on 8x8 images: the third MaxPool2d gets 2x2 maps and a 4x4 window."""
    outs = []
    for m in (torch, ember):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3, padding=1), m.nn.MaxPool2d(2), m.nn.MaxPool2d(2), m.nn.MaxPool2d(4))
        with pytest.raises(RuntimeError) as info:
            net(m.zeros(2, 3, 8, 8))
        outs.append(str(info.value))
    assert outs[0] == outs[1] == "Given input size: (4x2x2). Calculated output size: (4x0x0). Output size is too small"
