"""cross_entropy / nll_loss of a 0-d input and batch_norm of an input without a channel dimension raise PyTorch's
error types (with the gist of its messages), which depend on the target and on the parameters given."""

import pytest
import torch

import ember

CASES = {
    "cross_entropy 0-d, 0-d long target": lambda m, F: F.cross_entropy(m.tensor(1.0), m.tensor(0)),
    "cross_entropy 0-d, 0-d float target": lambda m, F: F.cross_entropy(m.tensor(1.0), m.tensor(1.0)),
    "cross_entropy 0-d, 1-D target": lambda m, F: F.cross_entropy(m.tensor(1.0), m.tensor([0])),
    "cross_entropy 0-d, smoothing": lambda m, F: F.cross_entropy(m.tensor(1.0), m.tensor(0), label_smoothing=0.1),
    "nll_loss 0-d": lambda m, F: F.nll_loss(m.tensor(1.0), m.tensor(0)),
    "batch_norm 1-D, running stats": lambda m, F: F.batch_norm(m.ones(4), m.zeros(4), m.ones(4)),
    "batch_norm 1-D, training": lambda m, F: F.batch_norm(m.ones(4), None, None, training=True),
    "batch_norm 1-D, eval without stats": lambda m, F: F.batch_norm(m.ones(4), None, None),
    "batch_norm 1-D, weight": lambda m, F: F.batch_norm(m.ones(4), None, None, m.ones(4), training=True),
    "batch_norm 0-d, training": lambda m, F: F.batch_norm(m.tensor(1.0), None, None, training=True),
    "batch_norm 0-d, running stats": lambda m, F: F.batch_norm(m.tensor(1.0), m.zeros(1), m.ones(1)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_error_type_and_message_are_pytorchs(case):
    errors = []
    for m in (torch, ember):
        with pytest.raises(Exception) as info:
            CASES[case](m, m.nn.functional)
        errors.append(info.value)
    t, e = errors
    assert type(e) is type(t)
    assert str(t).split(": ")[-1].split("(got")[0].split(", got")[0].strip() in str(e)
