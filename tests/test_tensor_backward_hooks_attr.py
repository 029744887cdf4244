"""``Tensor._backward_hooks`` as PyTorch's: None on a fresh tensor (leaf or not), an OrderedDict of the hooks
``register_hook`` added, in order, once one was registered (empty again after ``remove()``, not None)."""

import pytest
import torch

import ember


def _story(m, leaf: bool):
    x = m.ones(2, requires_grad=True)
    t = x if leaf else x * 2
    def now():
        h = t._backward_hooks
        return None if h is None else (type(h).__name__, len(h))

    seen = [now()]
    first = t.register_hook(lambda g: g * 2)
    seen.append(now())
    t.register_hook(lambda g: g + 1)
    seen.append(now())
    first.remove()
    seen.append(now())
    hooks = t._backward_hooks  # (ember's is a snapshot of the hooks at the time, PyTorch's the live dict)
    (t if leaf else t).sum().backward()
    grad = x.grad.tolist()
    return (seen,
            [h(m.ones(1)).tolist() for h in hooks.values()], grad)


@pytest.mark.parametrize("leaf", [True, False])
def test_backward_hooks_attribute_as_torch(leaf):
    assert _story(ember, leaf) == _story(torch, leaf)
