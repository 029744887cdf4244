"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch: parameter layout, (output, loss), gradients of the input and of
every parameter, log_prob and predict, the unbatched form, and PyTorch's errors."""

import numpy as np
import pytest
import torch

import ember


def _pair(in_features=12, n_classes=20, cutoffs=(5, 12), div_value=2.0, head_bias=True):
    e = ember.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs), div_value, head_bias)
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs), div_value, head_bias)
    assert list(e.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        assert tuple(e.state_dict()[k].shape) == tuple(v.shape), k
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return e, t


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("targets", [[0, 3, 7, 19, 12, 4, 11, 15], [1, 2, 3, 4], [13, 19, 14], [6], [17]])
@pytest.mark.parametrize("head_bias", [False, True])
def test_forward_backward_match_torch(targets, head_bias):
    e, t = _pair(head_bias=head_bias)
    x = np.random.default_rng(len(targets)).normal(size=(len(targets), 12)).astype(np.float32)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oe, ot = e(xe, ember.tensor(targets)), t(xt, torch.tensor(targets))
    _close(oe.output, ot.output)
    _close(oe.loss, ot.loss)
    assert tuple(oe.output.shape) == tuple(ot.output.shape)
    (oe.loss + oe.output.sum()).backward()
    (ot.loss + ot.output.sum()).backward()
    _close(xe.grad, xt.grad)
    for (name, pe), pt in zip(e.named_parameters(), t.parameters()):
        if pt.grad is None:
            assert pe.grad is None or not pe.grad.numpy().any(), name
        else:
            _close(pe.grad, pt.grad)


def test_a_cluster_with_no_hidden_units():
    # in_features // div_value**2 == 0: the last cluster's projection is Linear(8, 0) then Linear(0, 10), as in
    # PyTorch (which warns that initialising its zero-element weight is a no-op)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        e, t = _pair(in_features=8, n_classes=20, cutoffs=(5, 10), div_value=4.0, head_bias=False)
    x = np.random.default_rng(4).normal(size=(6, 8)).astype(np.float32)
    targets = [3, 7, 19, 0, 12, 5]
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oe, ot = e(xe, ember.tensor(targets)), t(xt, torch.tensor(targets))
    _close(oe.output, ot.output)
    oe.loss.backward()
    ot.loss.backward()
    _close(xe.grad, xt.grad)
    for pe, pt in zip(e.parameters(), t.parameters()):
        _close(pe.grad, pt.grad)
    _close(e.log_prob(xe), t.log_prob(xt))


def test_unbatched_log_prob_and_predict():
    e, t = _pair(in_features=8, n_classes=10, cutoffs=[4], div_value=4.0, head_bias=False)
    x = np.random.default_rng(3).normal(size=(16, 8)).astype(np.float32) * 3
    oe, ot = e(ember.tensor(x[0]), ember.tensor(7)), t(torch.tensor(x[0]), torch.tensor(7))
    assert oe.output.dim() == ot.output.dim() == 0
    _close(oe.output, ot.output)
    _close(e.log_prob(ember.tensor(x)), t.log_prob(torch.tensor(x)))
    np.testing.assert_array_equal(e.predict(ember.tensor(x)).numpy(), t.predict(torch.tensor(x)).numpy())
    # rows predicted in the head only, in the tail only, and mixed
    with torch.no_grad():
        t.head.weight[4:] -= 100
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    np.testing.assert_array_equal(e.predict(ember.tensor(x)).numpy(), t.predict(torch.tensor(x)).numpy())
    with torch.no_grad():
        t.head.weight[4:] += 200
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    np.testing.assert_array_equal(e.predict(ember.tensor(x)).numpy(), t.predict(torch.tensor(x)).numpy())


def test_errors_match_torch():
    for m in (ember, torch):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
            m.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])
        for bad in ([5, 3], [0, 4], [4, 10], [3, 3]):
            with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
                m.nn.AdaptiveLogSoftmaxWithLoss(4, 10, bad)
        asm = m.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])
        with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\], but values in range \[2, 12\]"):
            asm(m.zeros(2, 4), m.tensor([2, 12]))
        with pytest.raises(RuntimeError, match="Input and target should have the same size in the batch dimension"):
            asm(m.zeros(3, 4), m.tensor([1, 2]))
        with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
            asm(m.zeros(2, 4, 1), m.tensor([1, 2]))
        with pytest.raises(RuntimeError, match="0D target tensor expects 1D input tensors"):
            asm(m.zeros(2, 4), m.tensor(1))
        with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
            asm(m.zeros(2, 4), m.tensor([[1, 2]]))
