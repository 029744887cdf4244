"""Edge cases where ember's behaviour or exception type had drifted from PyTorch's: each call runs in both."""

import numpy as np
import pytest
import torch

import ember


def outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)


def same(make):
    """make(lib) in ember and torch: the same exception type, or equal values."""
    expected, got = outcome(lambda: make(torch)), outcome(lambda: make(ember))
    if isinstance(expected, type):
        assert got is expected, f"ember gave {got}, PyTorch raised {expected.__name__}"
    else:
        assert not isinstance(got, type), f"ember raised {got.__name__}, PyTorch did not"
        np.testing.assert_allclose(np.asarray(got.detach().numpy()), expected.detach().numpy(), rtol=1e-6)
    return got


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_integer_logits_are_not_implemented(loss, dtype):
    got = same(lambda m: getattr(m.nn.functional, loss)(m.ones(2, 3, dtype=getattr(m, dtype)), m.tensor([0, 1])))
    assert got is NotImplementedError


@pytest.mark.parametrize("smoothing", [1.5, 1.0, -0.1])
@pytest.mark.parametrize("soft", [False, True])
def test_label_smoothing_above_one_is_a_runtime_error(smoothing, soft):
    def run(m):
        target = m.tensor([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0]]) if soft else m.tensor([0, 1])
        return m.nn.functional.cross_entropy(m.tensor([[1.0, -2.0, 0.5], [0.3, 0.1, 2.0]]), target,
                                             label_smoothing=smoothing)

    got = same(run)  # PyTorch checks only the upper end: a negative value means no smoothing
    assert (got is RuntimeError) == (smoothing > 1)


@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 5), (2, 3, 0)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_on_an_empty_batch(shape, training):
    def run(m):
        m.manual_seed(0)
        bn = (m.nn.BatchNorm1d(3) if len(shape) < 4 else m.nn.BatchNorm2d(3)).train(training)
        x = m.ones(*shape, requires_grad=True)
        out = bn(x)
        out.sum().backward()
        return m.cat([out.reshape(-1), bn.running_mean, bn.running_var, bn.weight.grad, bn.bias.grad,
                      bn.num_batches_tracked.reshape(1).float()])

    same(run)


def test_batch_norm_still_refuses_one_value_per_channel():
    assert same(lambda m: m.nn.BatchNorm1d(3)(m.ones(1, 3))) is ValueError


@pytest.mark.parametrize("padding", [-1, (1, -1)])
@pytest.mark.parametrize("nd", [1, 2])
def test_negative_convolution_padding_is_named(nd, padding):
    if nd == 1 and isinstance(padding, tuple):
        padding = (-1,)

    def run(m):
        conv = (m.nn.Conv1d if nd == 1 else m.nn.Conv2d)(1, 1, 3, padding=padding)  # accepted when built
        return conv(m.ones((1, 1) + (6,) * nd))

    assert same(run) is RuntimeError
    with pytest.raises(RuntimeError, match="negative padding is not supported"):
        ember.nn.functional.conv2d(ember.ones(1, 1, 5, 5), ember.ones(1, 1, 3, 3), padding=-1)


def test_tensor_dataset_size_mismatch_is_an_assertion_error():
    from ember.utils.data import TensorDataset

    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(ember.ones(3), ember.ones(4))
