"""Every form of clamp (one bound or two, number or tensor bounds, clamp_min/clamp_max, clip, in place) against
PyTorch: the node its result comes from (ClampBackward1, ClampMinBackward0, ClampMaxBackward0 ... by the form, as
PyTorch's overloads), the values and the gradient, with elements below, at and above each bound."""

from __future__ import annotations

import pytest
import torch

import ember

FORMS = {
    "clamp(min=)": lambda m, x, b: m.clamp(x, min=0.0),
    "clamp(max=)": lambda m, x, b: m.clamp(x, max=0.0),
    "clamp(min, max)": lambda m, x, b: m.clamp(x, 0.0, 1.0),
    "clamp_min": lambda m, x, b: m.clamp_min(x, 0.0),
    "clamp_max": lambda m, x, b: m.clamp_max(x, 0.0),
    "method clamp_min": lambda m, x, b: x.clamp_min(1.0),
    "method clamp_max": lambda m, x, b: x.clamp_max(1.0),
    "clip(min=)": lambda m, x, b: x.clip(min=0.0),
    "clip(max=)": lambda m, x, b: x.clip(max=1.0),
    "clamp(min=tensor)": lambda m, x, b: m.clamp(x, min=b),
    "clamp(max=tensor)": lambda m, x, b: m.clamp(x, max=b),
    "clamp_min(tensor)": lambda m, x, b: x.clamp_min(b),
    "clamp_max(tensor)": lambda m, x, b: x.clamp_max(b),
    "clamp_(min=)": lambda m, x, b: (x * 1).clamp_(min=0.0),
    "clamp_min_": lambda m, x, b: (x * 1).clamp_min_(0.0),
    "clamp_max_": lambda m, x, b: (x * 1).clamp_max_(0.0),
}

VALUES = [-2.0, 0.0, 0.5, 1.0, 3.0, -0.0]


@pytest.mark.parametrize("form", list(FORMS))
def test_each_clamp_form_as_pytorch(form):
    got = []
    for m in (ember, torch):
        x = m.tensor(VALUES, dtype=m.float64, requires_grad=True)
        b = m.tensor([0.0, 0.0, 1.0, 1.0, 2.0, 0.0], dtype=m.float64)
        out = FORMS[form](m, x, b)
        out.backward(m.arange(1.0, 7.0, dtype=m.float64))
        got.append((type(out.grad_fn).__name__, out.tolist(), x.grad.tolist()))
    assert got[0] == got[1]
