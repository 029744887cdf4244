"""A view made under no_grad of a tensor that requires grad, as PyTorch's: it requires grad (a leaf without
history: a gradient reaching it goes nowhere, and it cannot be a root of backward), and changing it in place
in grad mode is PyTorch's error for a view made in no_grad mode, not the leaf's."""

from __future__ import annotations

import pytest
import torch

import ember


def _made(m, leaf: bool):
    x = m.ones(4, requires_grad=True)
    base = x if leaf else x * 1
    with m.no_grad():
        v = base[:2]
        vv = v.view(2, 1)
    return x, v, vv


@pytest.mark.parametrize("leaf", [True, False])
def test_flags_as_pytorchs(leaf):
    got = []
    for m in (ember, torch):
        x, v, vv = _made(m, leaf)
        y = v * 2
        got.append((v.requires_grad, v.is_leaf, v.grad_fn is None, vv.requires_grad, y.requires_grad,
                    [f is None for f, _ in y.grad_fn.next_functions]))
    assert got[0] == got[1] == (True, True, True, True, True, [True, True]), got


def test_gradient_through_it_goes_nowhere():
    got = []
    for m in (ember, torch):
        x, v, _ = _made(m, True)
        (v * 2).sum().backward()
        unused = m.autograd.grad((v * 2).sum(), x, allow_unused=True)
        got.append((x.grad, v.grad, unused))
    assert got[0] == got[1] == (None, None, (None,)), got


def _error(fn):
    out = []
    for m in (ember, torch):
        try:
            fn(m)
            out.append(None)
        except RuntimeError as err:
            out.append(str(err))
    return out


@pytest.mark.parametrize("leaf", [True, False])
def test_in_place_in_grad_mode_is_the_no_grad_view_error(leaf):
    e, t = _error(lambda m: _made(m, leaf)[1].mul_(2))
    assert t is not None and t.startswith("A view was created in no_grad mode and is being modified inplace")
    assert e == t


def test_backward_from_it_is_refused():
    e, t = _error(lambda m: _made(m, True)[1].backward(m.ones(2)))
    assert t is not None and e is not None
    assert e.startswith(t), (e, t)


def _state(m, t):
    """(requires_grad, grad_fn's name or its error's kind) of ``t``: reading grad_fn may be PyTorch's error."""
    try:
        fn = t.grad_fn
    except RuntimeError as e:
        return t.requires_grad, "error: no_grad view" if "created in no_grad mode" in str(e) else str(e)
    return t.requires_grad, None if fn is None else fn.name()


def _later(m, case):
    """A view made under no_grad, then what happens to its base (or another view of it) in grad mode."""
    x = m.ones(2, 3, requires_grad=True)
    if case == "root base of a view-leaf":  # requires_grad_() on a view: the root base is what counts
        base = m.arange(6.0).reshape(2, 3).requires_grad_()
        with m.no_grad():
            v = base[1]
        return v, v * 2
    base = x * 1 if case in ("base changed", "sibling view changed") else m.zeros(2, 3)
    with m.no_grad():
        v = base[0]
    if case == "base changed":
        base.mul_(2)
    elif case == "sibling view changed":
        base[1].mul_(2)
    elif case == "base made to require grad in place":
        base[1] = x[0]
    elif case == "base added a tensor that requires grad":
        base.add_(x)
    elif case == "base.requires_grad_()":
        base.requires_grad_()
    try:
        y = v * 2
    except RuntimeError as e:
        y = "error: no_grad view" if "created in no_grad mode" in str(e) else str(e)
    return v, y


LATER = ["root base of a view-leaf", "base changed", "sibling view changed", "base made to require grad in place",
         "base added a tensor that requires grad", "base.requires_grad_()"]


@pytest.mark.parametrize("case", LATER)
def test_requires_grad_follows_the_base_and_its_changes_are_pytorchs_error(case):
    got = []
    for m in (torch, ember):
        v, y = _later(m, case)
        seen = [_state(m, v), y if isinstance(y, str) else _state(m, y)]
        if not isinstance(y, str) and y.grad_fn is not None:
            seen.append([f is None for f, _ in y.grad_fn.next_functions])
        got.append(seen)
    assert got[1] == got[0]


@pytest.mark.parametrize("grad_mode", [False, True])
def test_a_view_of_a_tensor_without_grad_made_to_require_grad_is_an_ordinary_leaf(grad_mode):
    # torchdiffeq hands its function views of a flat state made under no_grad; flow_matching's likelihood calls
    # xt.requires_grad_() on one, then autograd.grad w.r.t. it
    got = []
    for m in (ember, torch):
        with m.set_grad_enabled(grad_mode):
            y = m.arange(10.0)
            xt = y[0:6].view(2, 3)
        xt.requires_grad_()
        g, = m.autograd.grad((xt ** 2).sum(), xt)
        (xt ** 3).sum().backward()
        got.append((xt.is_leaf, g.tolist(), xt.grad.tolist(), y.requires_grad, y.grad))
    assert got[0] == got[1]


def _outcome(call, *args):
    """What ``call(*args)`` returns, its tensors left out, or its RuntimeError's message."""
    try:
        got = call(*args)
    except RuntimeError as err:
        return str(err)
    return got if type(got) is not tuple else tuple(v for v in got if not hasattr(v, "requires_grad"))


def _grad_fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


@pytest.mark.parametrize("case", [
    lambda m, z, v: (v.add_(1), _grad_fn_name(v)),
    lambda m, z, v: (v.requires_grad_(False), v.requires_grad_(), v.add_(1)) and None,
    lambda m, z, v: (z.mul_(m.ones(3, requires_grad=True)), v.requires_grad, v.is_leaf),
    lambda m, z, v: (z.add_(1), v.requires_grad, v.is_leaf, _grad_fn_name(v), v._version),
    lambda m, z, v: (v.view(1, 3).mul_(2), _grad_fn_name(v)),
    lambda m, z, v: ((v * 3).sum().backward(), v.grad.tolist(), z.grad),
], ids=["inplace", "inplace_after_toggle", "base_inplace_with_grad", "base_inplace", "view_of_it_inplace",
        "backward"])
def test_a_view_made_to_require_grad_stays_a_no_grad_view(case):
    """A no_grad view given ``requires_grad_()`` is a leaf that keeps its gradient, and still the view made in
    no_grad mode of PyTorch's in-place errors (a change of its base without history is no error)."""
    got = []
    for m in (ember, torch):
        z = m.zeros(3)
        with m.no_grad():
            v = z.view(3)
        v.requires_grad_()
        got.append(_outcome(case, m, z, v))
    assert got[0] == got[1]


def test_a_view_of_a_leaf_made_to_require_grad_keeps_its_own_gradient():
    """(Its gradient reached nowhere before ``requires_grad_()``, as PyTorch's: the flag it inherits gives it no
    accumulator, its own does.)"""
    got = []
    for m in (ember, torch):
        a = m.ones(3, requires_grad=True)
        with m.no_grad():
            v = a.view(3)
        (v * 2).sum().backward()
        before = v.grad
        v.requires_grad_()
        (v * 2).sum().backward()
        got.append((before, v.is_leaf, v.grad.tolist(), a.grad))
    assert got[0] == got[1]


def _flags(m, t):
    return t.requires_grad, t.is_leaf, t.grad_fn is None


def _follow(m, case):
    """What a view without history reports, and what backward through it does, as its base's flag changes."""
    if case.startswith("no_grad view"):
        base = m.ones(3, requires_grad=True)
        with m.no_grad():
            v = base[:2]
    else:  # a view made in grad mode while its base needed no gradient
        base = m.ones(3)
        v = base[:2]
        vv = v.view(2, 1)
        base.requires_grad_()
    if case.endswith("base stops requiring grad"):
        base.requires_grad_(False)
    if case.endswith("view.requires_grad_(False)"):
        v.requires_grad_(False)
    seen = [_flags(m, v)]
    if case == "grad-mode view, base.requires_grad_()":
        seen.append(_flags(m, vv))
    y = v * 2
    seen.append(y.requires_grad)
    if y.requires_grad:
        seen.append([f is None for f, _ in y.grad_fn.next_functions])
    try:
        y.sum().backward()
        seen.append((base.grad, v.grad))
    except RuntimeError as err:
        seen.append(str(err).split(":")[0])
    for allow_unused in (False, True):
        try:
            seen.append(m.autograd.grad((v * 3).sum(), v, allow_unused=allow_unused))
        except RuntimeError as err:
            seen.append(str(err).split(":")[0].split(" (")[0])
    return seen


FOLLOW = ["no_grad view", "no_grad view, base stops requiring grad", "no_grad view, view.requires_grad_(False)",
          "grad-mode view, base.requires_grad_()", "grad-mode view, base stops requiring grad"]


@pytest.mark.parametrize("case", FOLLOW)
def test_a_view_without_history_requires_grad_as_its_base_does_now(case):
    """PyTorch's view without history (made under no_grad, or in grad mode before its base required grad) reads
    its base's flag: it requires grad while the base does (its own requires_grad_(False) changes nothing) and
    not after, and a gradient reaching it goes nowhere (autograd.grad finds it unused)."""
    got, want = _follow(ember, case), _follow(torch, case)
    assert got == want


def test_in_place_on_a_view_of_a_leaf_made_before_it_required_grad_is_the_view_error():
    """A view made before its base was made to require grad is a view of a leaf that requires grad: changing it in
    place is PyTorch's error for a view of a leaf, not the leaf's."""
    e, t = _error(lambda m: _view_before(m).mul_(2))
    assert t is not None and t.startswith("a view of a leaf Variable that requires grad")
    assert e.startswith(t), (e, t)


def _view_before(m):
    base = m.ones(3)
    v = base.view(3)
    base.requires_grad_()
    return v
