"""The class losses of a 0-d input (no class dimension) against every kind of target: PyTorch's error for each, and
the calls beside them that it accepts (a (C,) input, unbatched) with its values and gradients.

PyTorch's nll_loss checks its input's rank first (a ValueError, whatever the target); cross_entropy of a 0-d input
reaches its kernel, which takes a target of the input's shape (0-d) as class probabilities, so that an integer 0-d
target is its dtype error and a floating one the kernel's read of dim 1 (an IndexError); any other target holds class
indices, and the kernel's read of dim 1 of the 0-d input is "Dimension out of range"."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ember

# target name -> the target in module m (its dtype and rank are what the checks branch on)
TARGETS = {
    "0-d int64": lambda m: m.tensor(0),
    "0-d int32": lambda m: m.tensor(0, dtype=m.int32),
    "0-d uint8": lambda m: m.tensor(0, dtype=m.uint8),
    "0-d bool": lambda m: m.tensor(False),
    "0-d float32": lambda m: m.tensor(0.5),
    "0-d float64": lambda m: m.tensor(0.5, dtype=m.float64),
    "(1,) int64": lambda m: m.tensor([0]),
    "(1,) float32": lambda m: m.tensor([0.5]),
    "(0,) int64": lambda m: m.zeros(0, dtype=m.long),
    "(1, 1) int64": lambda m: m.zeros(1, 1, dtype=m.long),
}

OPTIONS = {"default": {}, "sum": {"reduction": "sum"}, "none": {"reduction": "none"},
           "label smoothing": {"label_smoothing": 0.1}, "ignore_index 0": {"ignore_index": 0},
           "ignore_index -1": {"ignore_index": -1}}


def _error(m, fn: str, target: str, options: dict, dtype: str) -> tuple[type, str]:
    x = m.tensor(1.5, dtype=getattr(m, dtype), requires_grad=True)
    kwargs = dict(options)
    if fn == "nll_loss":
        kwargs.pop("label_smoothing", None)
    with pytest.raises(Exception) as err:
        getattr(m.nn.functional, fn)(x, TARGETS[target](m), **kwargs)
    return type(err.value), str(err.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_a_0d_input_is_refused_as_pytorch_refuses_it(fn, target, options, dtype):
    (t_type, t_msg), (e_type, e_msg) = (_error(m, fn, target, OPTIONS[options], dtype) for m in (torch, ember))
    assert e_type is t_type, (t_msg, e_msg)
    # ember's message is PyTorch's, followed by what the input lacks
    assert e_msg.startswith(t_msg), (t_msg, e_msg)


# a (C,) input (one sample, unbatched: a 0-d class index, or probabilities of the input's shape) and an (N, C) one
# with probabilities: PyTorch's values and gradients, or its refusal (an ignore_index of 0 or more with
# probabilities)
ACCEPTED = {
    "(C,), 0-d index": ((3,), lambda m: m.tensor(2)),
    "(C,), probabilities": ((3,), lambda m: m.tensor([0.25, 0.25, 0.5], dtype=m.float64)),
    "(N, C), probabilities": ((2, 3), lambda m: m.tensor([[0.25, 0.25, 0.5], [1.0, 0.0, 0.0]], dtype=m.float64)),
}


@pytest.mark.parametrize("options", [*OPTIONS, "ignore_index 5"])
@pytest.mark.parametrize("target", ACCEPTED)
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_a_1d_input_and_probabilities_as_pytorchs(fn, target, options):
    if fn == "nll_loss" and "probabilities" in target:
        pytest.skip("nll_loss takes class indices only")
    kwargs = dict(OPTIONS[options]) if options in OPTIONS else {"ignore_index": int(options.split()[-1])}
    if fn == "nll_loss":
        kwargs.pop("label_smoothing", None)
    shape, make_target = ACCEPTED[target]
    out = {}
    for m in (torch, ember):
        x = m.tensor([0.5, -1.0, 2.0, 0.0, 1.0, -2.0][:math.prod(shape)], dtype=m.float64).reshape(shape)
        x.requires_grad_()
        try:
            loss = getattr(m.nn.functional, fn)(x, make_target(m), **kwargs)
        except Exception as err:
            out[m] = (type(err), str(err))
            continue
        loss.sum().backward()
        out[m] = (tuple(loss.shape), loss.detach().numpy().copy(), x.grad.numpy().copy())
    if isinstance(out[torch][0], type):
        assert out[ember][0] is out[torch][0] and out[ember][1].startswith(out[torch][1]), (out[torch], out[ember])
        return
    assert out[ember][0] == out[torch][0]
    np.testing.assert_allclose(out[ember][1], out[torch][1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out[ember][2], out[torch][2], rtol=1e-12, atol=1e-15)
