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


_SIZES = {"none": None, "empty": 0, "three": 3}
# (shape, training, running statistics, weight and bias) with their sizes; a 0-d input in evaluation with empty
# running statistics and no weight of 3 elements is left out: PyTorch fails inside its kernel there ("SmallVector
# unable to grow", a RuntimeError no program relies on), where ember names the missing dimension (IndexError)
_WITHOUT_CHANNELS = [(shape, training, stats, params) for shape in [(), (3,)] for training in (True, False)
                     for stats in _SIZES for params in _SIZES
                     if not (shape == () and not training and stats == "empty" and params != "three")]


@pytest.mark.parametrize("shape, training, stats, params", _WITHOUT_CHANNELS,
                         ids=[f"{len(s)}-D {'training' if t else 'eval'} stats {r} weight and bias {p}"
                              for s, t, r, p in _WITHOUT_CHANNELS])
def test_batch_norm_without_channels_raises_pytorchs_error_for_each_mode_and_parameter(shape, training, stats,
                                                                                      params):
    """Which error PyTorch gives depends on the mode and on which parameters are given and how large: training
    reads the batch size first (a 0-d input: tuple index out of range), evaluation needs the running statistics,
    then any parameter with elements is too large for no channels, then dimension 1 is read."""
    errors = []
    for m in (torch, ember):
        n = {k: None if v is None else m.ones(v) for k, v in _SIZES.items()}
        with pytest.raises(Exception) as info:
            m.nn.functional.batch_norm(m.ones(shape), n[stats], None if n[stats] is None else n[stats].clone(),
                                       n[params], n[params], training=training)
        errors.append(info.value)
    t, e = errors
    assert type(e) is type(t)
    assert str(t) in str(e)
