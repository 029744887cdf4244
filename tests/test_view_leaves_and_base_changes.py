"""Views without a grad_fn of their own (made under no_grad, made in grad mode while their base needed no gradient,
``unbind``'s and ``split``'s outputs, views of such views), their own ``requires_grad_()``, their base's
``requires_grad_()`` and in-place changes of the base, in each order: where the gradient goes (the view's own
accumulator, the base's history, nowhere), which tensor is a leaf, and PyTorch's error for a view it forbids
rebasing, each against PyTorch, and each through every path of ember's ops (``FORMS``). (PyTorch's rule: a view
requires grad when its base does; it keeps a gradient of its own only when told to require grad itself; a view whose
base changed in place since it was made takes its grad_fn from the base's history when next used, whether or not it
had become a leaf.)"""

from __future__ import annotations

import pytest
import torch

import ember


def _grads(*tensors):
    return [None if t is None else t.tolist() for t in tensors]


def _slice_leaf_then_base(m, use):
    x = m.ones(4)
    u = x[:2]
    u.requires_grad_()
    x.requires_grad_()
    use(m, u).sum().backward()
    return _grads(u.grad, x.grad), u.is_leaf, u.requires_grad


def _base_then_slice_leaf(m, use):
    x = m.ones(4)
    u = x[:2]
    x.requires_grad_()
    u.requires_grad_()
    use(m, u).sum().backward()
    return _grads(u.grad, x.grad), u.is_leaf


def _slice_follows_base(m, use):
    x = m.ones(4)
    u = x[:2]
    x.requires_grad_()
    y = use(m, u)
    return u.requires_grad, u.is_leaf, y.requires_grad, y.grad_fn is not None


def _view_of_no_grad_view_leaf_then_base(m, use):
    x = m.ones(4)
    with m.no_grad():
        v = x[:3]
    w = v[:2]
    w.requires_grad_()
    x.requires_grad_()
    use(m, w).sum().backward()
    return _grads(w.grad, x.grad), w.is_leaf


def _view_of_no_grad_view_follows_base(m, use):
    x = m.ones(4)
    with m.no_grad():
        v = x[:3]
    w = v[:2]
    x.requires_grad_()
    return w.requires_grad, use(m, w).requires_grad


def _unbind_output_leaf_then_base(m, use):
    x = m.ones(3)
    a, _, _ = x.unbind()
    a.requires_grad_()
    x.requires_grad_()
    use(m, a).sum().backward()
    return _grads(a.grad, x.grad), a.is_leaf


def _unbind_outputs_follow_base(m, use):
    x = m.ones(3)
    a, _, _ = x.unbind()
    b, _ = x.split(2)
    x.requires_grad_()
    y = use(m, a)
    z = use(m, b)
    z.sum().backward()
    return a.requires_grad, b.requires_grad, y.requires_grad, _grads(x.grad, b.grad)


def _unbind_output_after_recorded_base_change(m, use):
    x = m.ones(3) * 1
    a, _, _ = x.unbind()
    x.mul_(m.ones(3, requires_grad=True))
    return a.requires_grad, use(m, a).grad_fn is not None


def _leaf_of_no_grad_view_after_no_grad_base_change(m, use):
    x = m.ones(4)
    with m.no_grad():
        v = x[:3]
    w = v[:2]
    w.requires_grad_()
    x.requires_grad_()
    with m.no_grad():
        x.mul_(3)
    use(m, w).sum().backward()
    return _grads(w.grad)


def _unbind_leaf_after_recorded_base_change(m, use):
    x = m.ones(3)
    a, _, _ = x.unbind()
    a.requires_grad_()
    z = m.ones(3, requires_grad=True)
    x.mul_(z)
    use(m, a).sum().backward()
    return _grads(a.grad, z.grad)


def _slice_leaf_after_recorded_base_change(m, use):
    x = m.ones(4)
    u = x[:2]
    u.requires_grad_()
    z = m.ones(4, requires_grad=True)
    x.mul_(z)
    use(m, u).sum().backward()
    return _grads(z.grad), u.is_leaf


def _used_slice_leaf_after_recorded_base_change(m, use):
    x = m.ones(4)
    u = x[:2]
    u.requires_grad_()
    use(m, u).sum().backward()  # (its accumulator made and used)
    z = m.ones(4, requires_grad=True)
    x.mul_(z)
    use(m, u).sum().backward()
    return _grads(z.grad), u.is_leaf


def _no_grad_view_leaf_after_no_grad_change_of_its_grad_base(m, use):
    x = m.ones(4, requires_grad=True)
    with m.no_grad():
        v = x[:2]
    v.requires_grad_()
    with m.no_grad():
        x.mul_(2)
    use(m, v).sum().backward()
    return _grads(v.grad, x.grad)


def _used_no_grad_view_leaf_after_no_grad_change_of_its_grad_base(m, use):
    x = m.ones(4, requires_grad=True)
    with m.no_grad():
        v = x[:2]
    v.requires_grad_()
    use(m, v).sum().backward()
    with m.no_grad():
        x.mul_(2)
    use(m, v).sum().backward()
    return _grads(v.grad, x.grad)


def _no_grad_view_leaf_of_plain_base_changed(m, use):
    x = m.ones(4)
    with m.no_grad():
        v = x[:2]
    v.requires_grad_()
    use(m, v).sum().backward()
    x.mul_(2)
    use(m, v).sum().backward()
    return _grads(v.grad), v.is_leaf


def _slice_leaf_of_plain_base_changed(m, use):
    x = m.ones(4)
    u = x[:2]
    u.requires_grad_()
    x.mul_(3)
    y = use(m, u)
    y.sum().backward()
    return _grads(u.grad), y.grad_fn is not None


CASES = [_slice_leaf_then_base, _base_then_slice_leaf, _slice_follows_base, _view_of_no_grad_view_leaf_then_base,
         _view_of_no_grad_view_follows_base, _unbind_output_leaf_then_base, _unbind_outputs_follow_base,
         _unbind_output_after_recorded_base_change, _leaf_of_no_grad_view_after_no_grad_base_change,
         _unbind_leaf_after_recorded_base_change, _slice_leaf_after_recorded_base_change,
         _used_slice_leaf_after_recorded_base_change, _no_grad_view_leaf_after_no_grad_change_of_its_grad_base,
         _used_no_grad_view_leaf_after_no_grad_change_of_its_grad_base, _no_grad_view_leaf_of_plain_base_changed,
         _slice_leaf_of_plain_base_changed]


# each case through every path an op on the view may take: Node.apply (a product with a number), apply_one (a
# unary op, a full sum, a square) and apply_same (a product with a tensor of its shape), each finding the view's
# edge its own way (a view leaf whose base changed since: a new grad_fn from the base's history, not its accumulator;
# apply_same finds each operand's edge by its own inlined test, so the view goes first and second)
FORMS = {
    "times_number": lambda m, t: t * 2,
    "neg": lambda m, t: t.neg(),
    "sum": lambda m, t: t.sum(),
    "square": lambda m, t: t.square(),
    "times_tensor": lambda m, t: t * m.full(tuple(t.shape), 2.0),
    "tensor_times": lambda m, t: m.full(tuple(t.shape), 2.0) * t,
}


def _outcome(case, m, form):
    try:
        return case(m, FORMS[form])
    except RuntimeError as err:
        return "RuntimeError: " + str(err)


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_view_leaves_and_base_changes_as_pytorch(case, form):
    assert _outcome(case, ember, form) == _outcome(case, torch, form)
