"""Max and average pooling split over threads by channel: PyTorch's values and gradients, the same bits at 1, 2, 3."""

import numpy as np
import pytest
import torch
from nn_oracle import batch_last
from oracle import assert_close

import ember


@pytest.mark.parametrize("name,kwargs", [
    ("max_pool2d", dict(kernel_size=2, stride=2)),                    # tiled windows: the gradient is written
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1)),         # overlapping windows: the gradient is added
    ("avg_pool2d", dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    ("avg_pool2d", dict(kernel_size=2, stride=2)),
])
@pytest.mark.parametrize("layout", ["batch_last", "contiguous"])
def test_pooling_same_bits_at_1_2_3_threads(threads, name, kwargs, layout):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 24, 12, 12)).astype(np.float32)  # 55 296 inputs: split above 64 Ki with 9 offsets
    x[0, 0, 0, :2] = 1.5  # a tie: the first maximum wins
    x[1, 3, 4, 4] = np.nan  # NaN wins its windows
    xin = batch_last(x) if layout == "batch_last" else x
    tx = torch.tensor(x, requires_grad=True)
    to = getattr(torch.nn.functional, name)(tx, **kwargs)
    up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    results = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        ex = ember.tensor(xin, requires_grad=True)
        eo = getattr(ember.nn.functional, name)(ex, **kwargs)
        eo.backward(ember.tensor(up))
        results.append([eo.detach().numpy(), ex.grad.numpy()])
    assert_close(results[0][0], to)
    assert_close(results[0][1], tx.grad)
    if layout == "batch_last":  # the output keeps the input's memory order
        assert results[0][0].transpose(1, 2, 3, 0).flags.c_contiguous
    for other in results[1:]:
        for a, r in zip(other, results[0]):
            np.testing.assert_array_equal(a, r)


def test_integer_max_pooling_with_padding_matches_torch():
    """The padding of an integer input is the dtype's minimum (-inf for floats); it raised OverflowError."""
    x = np.arange(-8, 12, dtype=np.int64).reshape(1, 1, 4, 5)
    ours = ember.nn.functional.max_pool2d(ember.tensor(x), 3, 1, 1)
    assert_close(ours, torch.nn.functional.max_pool2d(torch.tensor(x), 3, 1, 1))
