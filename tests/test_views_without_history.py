"""Views that have no history of their own, as PyTorch's: a view made under no_grad of a tensor that requires grad,
a view made in grad mode before its base required grad, and either one after ``requires_grad_()``, ``retain_grad()``
or a write into its base. For each: requires_grad, is_leaf, the node of an op on it, and what a backward through it
gives (the base's and the view's .grad, or PyTorch's error), against PyTorch. (Which views count as made without
history is read from fields alone; reading it the other way round gave a view that has an accumulator no history and
one without an accumulator its own .grad.)"""

import numpy as np
import pytest
import torch

import ember


def _no_grad_view(m, x):
    with m.no_grad():
        return x[1:3]


def _view_before_requires_grad(m, x):
    v = x[1:3]
    x.requires_grad_()
    return v


def _no_grad_view_requires_grad_(m, x):
    v = _no_grad_view(m, x)
    v.requires_grad_()
    return v


def _no_grad_view_of_a_non_leaf(m, x):
    y = x * 1
    with m.no_grad():
        return y[1:3]


SCENARIOS = {
    "no_grad view": (_no_grad_view, True),
    "no_grad view, requires_grad_()": (_no_grad_view_requires_grad_, True),
    "no_grad view of a non-leaf": (_no_grad_view_of_a_non_leaf, True),
    "view made before its base required grad": (_view_before_requires_grad, False),
}


def _run(m, scenario, then):
    make, base_requires_grad = SCENARIOS[scenario]
    x = m.tensor(np.arange(4.0), requires_grad=base_requires_grad)
    v = make(m, x)
    facts = [v.requires_grad, v.is_leaf, v.grad_fn is None]
    try:
        if then == "retain_grad":
            v.retain_grad()
        y = v * m.tensor([2.0, 3.0])
        facts.append(None if y.grad_fn is None else y.grad_fn.name())
        root = y.sum() if then != "backward of the view" else v.sum()
        root.backward()
    except RuntimeError as e:
        return facts, type(e).__name__, str(e).split(".")[0][:60]
    grads = [None if t.grad is None else t.grad.tolist() for t in (x, v)]
    return facts, grads


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
@pytest.mark.parametrize("then", ["backward", "retain_grad", "backward of the view"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_views_without_history_as_pytorch(scenario, then):
    assert _run(ember, scenario, then) == _run(torch, scenario, then)


def _multi_output_and_leaf_view_errors(lib):
    """An in-place op on a view of a leaf that requires grad: PyTorch checks how the view was made first, so a view
    ``unbind``/``split`` returned (before or after the base came to require grad) or one made under no_grad gets
    that message, a plain view the leaf-view one (PyTorch's words, nothing appended)."""
    def message(update):
        with pytest.raises(RuntimeError) as err:
            update()
        return str(err.value)

    x = lib.zeros(2, 3, requires_grad=True)
    with lib.no_grad():
        under_no_grad = x[0]
    early = lib.zeros(2, 3)
    unbound, split, plain = early.unbind(0), early.split(1), early[0]
    early.requires_grad_()
    return [message(lambda: x.unbind(0)[0].add_(1)), message(lambda: x.split(1)[1].add_(1)),
            message(lambda: under_no_grad.add_(1)), message(lambda: unbound[0].add_(1)),
            message(lambda: split[0].add_(1)), message(lambda: plain.add_(1)), message(lambda: x[1].mul_(2)),
            message(lambda: x.add_(1))]


def test_multi_output_views_of_a_leaf_in_place_as_torch():
    assert _multi_output_and_leaf_view_errors(ember) == _multi_output_and_leaf_view_errors(torch)
