"""An input (or result) changed in place under ``no_grad`` between forward and backward, for ops whose saved
tensors ember composes differently from PyTorch: the same refusal at backward, or the same gradient computed
from the changed values, as PyTorch's saved tensors give."""

import pytest
import torch
from oracle import assert_close, outcomes

import ember

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"


def _same_outcome(run):
    (got, _), (want, _) = outcomes(run)
    if isinstance(want, Exception):
        assert type(got) is type(want) and MODIFIED in str(got) and MODIFIED in str(want), (got, want)
    else:
        assert not isinstance(got, Exception), got
        for g, w in zip(got, want):
            assert_close(g, w)


@pytest.mark.parametrize("changed", ["a", "b", "result"])
def test_kron_reads_an_operand_changed_in_place(changed):
    """PyTorch's kron multiplies ``_unsafe_view``s of its operands (no view's version counter): a change of either
    is read by backward, not refused."""
    def run(m):
        a = m.tensor([[1.0, 2.0]], requires_grad=True)
        b = m.tensor([[3.0], [4.0]], requires_grad=True)
        a2, b2 = a * 1, b * 1
        k = m.kron(a2, b2)
        with m.no_grad():
            {"a": a2, "b": b2, "result": k}[changed].mul_(10)
        k.sum().backward()
        return a.grad, b.grad

    _same_outcome(run)


def test_kron_is_no_view_and_named_as_pytorch():
    for m in (ember, torch):
        k = m.kron(m.ones(2, 2, requires_grad=True), m.ones(2, requires_grad=True))
        assert k._base is None
        assert type(k.grad_fn).__name__ == "UnsafeViewBackward0"
        assert [type(n).__name__ for n, _ in k.grad_fn.next_functions[0][0].next_functions] == \
            ["UnsafeViewBackward0"] * 2


@pytest.mark.parametrize("a,b", [((2, 3), (2,)), ((), ()), ((3,), (2, 2)), ((2, 1, 2), (1, 3))])
def test_kron_values_and_gradients(a, b):
    def run(m):
        x = m.arange(1.0, 1.0 + max(1, int(torch.Size(a).numel())), dtype=m.float64).reshape(a).requires_grad_()
        y = m.arange(2.0, 2.0 + max(1, int(torch.Size(b).numel())), dtype=m.float64).reshape(b).requires_grad_()
        k = m.kron(x, y)
        (k * m.arange(float(k.numel()), dtype=m.float64).reshape(k.shape)).sum().backward()
        return k.detach(), x.grad, y.grad

    _same_outcome(run)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("changed", ["input", "target", "loss"])
def test_soft_margin_loss_saves_input_and_target(changed, reduction):
    def run(m):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        t = m.tensor([1.0, -1.0, 1.0])
        x2 = x * 1
        loss = m.nn.functional.soft_margin_loss(x2, t, reduction=reduction)
        with m.no_grad():
            {"input": x2, "target": t, "loss": loss}[changed].mul_(3)
        loss.sum().backward()
        return (x.grad,)

    _same_outcome(run)


@pytest.mark.parametrize("op", ["median", "nanmedian", "median_dim"])
def test_median_result_changed_in_place(op):
    """``median()`` saves its result (PyTorch refuses a change of it); ``median(dim)`` saves only indices."""
    def run(m):
        x = m.tensor([3.0, 1.0, 2.0], requires_grad=True)
        r = x.median(0)[0] if op == "median_dim" else getattr(x, op)()
        with m.no_grad():
            r.add_(1)
        r.backward()
        return (x.grad,)

    _same_outcome(run)
