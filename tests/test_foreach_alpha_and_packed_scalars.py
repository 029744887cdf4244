"""``torch._foreach_*`` forms PyTorch takes or refuses: ``alpha`` goes with a tensor or a list of tensors only
(``_foreach_add(xs, 2, alpha=2)`` is a TypeError, as is ``_foreach_sub``'s 0-d tensor with alpha), and
``_foreach_addcmul``/``_foreach_addcdiv`` take their scalars packed in a 1-d tensor, one per tensor."""

import numpy as np
import pytest
import torch

import ember


def _outcome(m, call):
    xs = [m.ones(2), m.full((3,), 2.0)]
    try:
        out = call(m, xs)
    except Exception as e:  # noqa: BLE001 (the error's type and message are compared)
        return type(e).__name__, str(e).split("\n")[0]
    return [np.asarray(t.tolist()) for t in (out if out is not None else xs)]


CALLS = {
    "add number alpha": lambda m, xs: m._foreach_add(xs, 2, alpha=2),
    "add_ number alpha": lambda m, xs: m._foreach_add_(xs, 2, alpha=2),
    "sub 0-d alpha": lambda m, xs: m._foreach_sub(xs, m.tensor(1.0), alpha=2),
    "add 0-d alpha": lambda m, xs: m._foreach_add(xs, m.tensor(1.0), alpha=2),
    "add list of numbers alpha": lambda m, xs: m._foreach_add(xs, [2, 3], alpha=2),
    "add tensors alpha": lambda m, xs: m._foreach_add(xs, xs, alpha=2),
    "sub tensors alpha": lambda m, xs: m._foreach_sub(xs, xs, alpha=3),
    "addcmul packed": lambda m, xs: m._foreach_addcmul(xs, xs, xs, m.tensor([1.0, 2.0])),
    "addcdiv packed": lambda m, xs: m._foreach_addcdiv(xs, xs, xs, m.tensor([1.0, 2.0])),
    "addcmul_ packed ints": lambda m, xs: m._foreach_addcmul_(xs, xs, xs, m.tensor([1, 2])),
    "addcmul packed too long": lambda m, xs: m._foreach_addcmul(xs, xs, xs, m.tensor([1.0, 2.0, 3.0])),
    "addcdiv packed 0-d": lambda m, xs: m._foreach_addcdiv(xs, xs, xs, m.tensor(2.0)),
    "addcmul packed 2-d": lambda m, xs: m._foreach_addcmul(xs, xs, xs, m.tensor([[1.0, 2.0]])),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_foreach_form_as_torch(case):
    got, want = _outcome(ember, CALLS[case]), _outcome(torch, CALLS[case])
    if isinstance(want, tuple):
        assert got == want
    else:
        assert not isinstance(got, tuple), got
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)
