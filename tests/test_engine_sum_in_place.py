"""The autograd engine sums a tensor's second gradient into its first in place where the walk owns one of the two
arrays: a gradient that a node marked ``fresh_input_grads`` (convolution, BatchNorm, ReLU) returned, or a sum the
walk made (autograd/engine.py, ``_Walk.add_input_grad``). The sum of a residual block's input is then made without a
new array, with the bits of the sum into a new one and PyTorch's values; an array a hook, ``retain_grad``,
``autograd.grad`` or the user could see is never written: hooks see what PyTorch's see."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember.autograd import engine

SHAPE = (2, 8, 16, 16)  # 4096 elements: the least the engine sums in place


@pytest.fixture
def in_place(monkeypatch):
    """The arrays the engine added into (``xp.add``'s ``out``), in order."""
    written = []
    real = engine.xp

    class Spy:
        def __getattr__(self, name):
            return getattr(real, name)

        def add(self, a, b, out=None):
            if out is not None:
                written.append(out)
            return real.add(a, b, out=out)

    monkeypatch.setattr(engine, "xp", Spy())
    return written


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    w1, w2 = ((rng.standard_normal((8, 8, 3, 3)) / 8).astype(np.float32) for _ in range(2))
    ws = (rng.standard_normal((8, 8, 1, 1)) / 3).astype(np.float32)
    up = rng.standard_normal(SHAPE).astype(np.float32)
    return x, w1, w2, ws, up


def _block(lib, a, w1, w2, ws, shortcut, keep):
    """A ResNet basic block on ``a`` (BatchNorm without affine parameters): its two branches' gradients meet at
    ``a``. ``keep`` gets the intermediate tensors by name, for the hooks."""
    F = lib.nn.functional
    stride = 2 if shortcut == "conv" else 1
    h1 = F.conv2d(a, w1, padding=1, stride=stride)
    h = F.relu(F.batch_norm(h1, None, None, training=True))
    branch = F.batch_norm(F.conv2d(h, w2, padding=1), None, None, training=True)
    short = {"identity": lambda: a, "conv": lambda: F.conv2d(a, ws, stride=2),
             "two": lambda: a + F.conv2d(a, ws, padding=0)}[shortcut]()
    s = branch + short
    keep.update(h1=h1, s=s, branch=branch)
    return F.relu(s)


def _run(lib, shortcut="identity", setup=None, run=None):
    """x -> a = relu(x) -> the block -> backward of ``up``; ``setup(lib, t)`` may hook the named tensors first,
    ``run(lib, t, y, up)`` replaces ``y.backward(up)``. The tensors by name."""
    x, w1, w2, ws, up = _arrays()
    t = {"x": lib.tensor(x, requires_grad=True), "w1": lib.tensor(w1, requires_grad=True),
         "w2": lib.tensor(w2, requires_grad=True), "ws": lib.tensor(ws, requires_grad=True)}
    t["a"] = lib.relu(t["x"])
    y = _block(lib, t["a"], t["w1"], t["w2"], t["ws"], shortcut, t)
    if setup is not None:
        setup(lib, t)
    up = np.ascontiguousarray(up[:, :, :y.shape[2], :y.shape[3]])  # (8 x 8 after a stride-2 block)
    if run is None:
        y.backward(lib.tensor(up))
    else:
        run(lib, t, y, lib.tensor(up))
    return t


def _same_leaf_grads(ours, theirs):
    for name in ("x", "w1", "w2", "ws"):
        if theirs[name].grad is not None:
            want = theirs[name].grad
            # (float32 sums of a few hundred products: an absolute tolerance on the scale of the largest)
            assert_close(ours[name].grad, want, atol=max(1e-4, 2e-6 * float(want.abs().max())), msg=name)


@pytest.mark.parametrize("shortcut", ["identity", "conv", "two"])
def test_a_residual_sum_is_made_in_place_with_the_same_bits_and_pytorchs_gradients(in_place, shortcut, monkeypatch):
    """identity: the add's gradient (not the walk's: it also went down the branch) and the first convolution's
    (fresh) meet at a, summed into the convolution's; conv: both convolutions' gradients are fresh, the second
    summed into the first; two: a's three gradients (the identity, the shortcut convolution, the branch), summed
    twice in place into the array the walk owns."""
    ours = _run(ember, shortcut)
    assert len(in_place) == (2 if shortcut == "two" else 1)
    assert all(w.shape == SHAPE for w in in_place)
    _same_leaf_grads(ours, _run(torch, shortcut))
    monkeypatch.setattr(engine, "_IN_PLACE_MIN_ELEMENTS", 1 << 62)  # every sum into a new array, as before
    count = len(in_place)
    apart = _run(ember, shortcut)
    assert len(in_place) == count
    for name in ("x", "w1", "w2", "ws"):
        if apart[name].grad is not None:
            np.testing.assert_array_equal(ours[name].grad.numpy(), apart[name].grad.numpy(), err_msg=name)


def _node_hook_keeps(lib, t, seen):
    """A ``register_hook`` on each convolution's node reading ``a`` (its post-hook) keeps its input gradients."""
    for name in ("h1", "s"):
        fn = t[name].grad_fn
        if name == "s":  # the add's node: the shortcut convolution's below its second edge, where there is one
            fn = fn.next_functions[1][0]
            if "Convolution" not in fn.name():
                continue
        fn.register_hook(lambda gi, go, name=name: seen.append((name, gi[0])))


def _node_hook_replaces(lib, t, seen):
    """The first convolution's post-hook returns a tensor of its own as a's gradient: that tensor must not change."""
    mine = lib.full(SHAPE, 0.5)
    seen.append(("mine", mine))
    t["h1"].grad_fn.register_hook(lambda gi, go: (mine, *gi[1:]))


def _tensor_hooks(lib, t, seen):
    """Tensor hooks keep the gradients of a (the sum), of the add's output s (passed on to a unchanged) and of the
    branch (the same array, the add's other edge)."""
    for name in ("a", "s", "branch", "h1"):
        t[name].register_hook(lambda g, name=name: seen.append((name, g)))


def _retained(lib, t, seen):
    for name in ("a", "s", "branch"):
        t[name].retain_grad()
        seen.append((name, t[name]))


SETUPS = {"node_hook_keeps": _node_hook_keeps, "node_hook_replaces": _node_hook_replaces,
          "tensor_hooks": _tensor_hooks, "retain_grad": _retained}


@pytest.mark.parametrize("shortcut", ["identity", "conv", "two"])
@pytest.mark.parametrize("kind", sorted(SETUPS))
def test_an_in_place_sum_never_changes_what_a_hook_saw(in_place, kind, shortcut):
    """Every gradient a hook got (or returned) and every retained one reads, after the whole backward, as
    PyTorch's: the engine adds only into arrays that nothing outside the walk holds. (A convolution whose
    post-hook ran passes arrays the hook may keep: summed into a new array then.)"""
    found = {}
    for lib in (torch, ember):
        seen = []
        found[lib] = (_run(lib, shortcut, setup=lambda lib, t, seen=seen: SETUPS[kind](lib, t, seen)), seen)
    (ours, ours_seen), (theirs, theirs_seen) = found[ember], found[torch]
    assert [name for name, _ in ours_seen] == [name for name, _ in theirs_seen]
    assert ours_seen
    for (name, got), (_, want) in zip(ours_seen, theirs_seen):
        got = got.grad if kind == "retain_grad" else got
        want = want.grad if kind == "retain_grad" else want
        assert_close(got, want, atol=1e-4, msg=name)
    _same_leaf_grads(ours, theirs)
    if kind in ("tensor_hooks", "retain_grad"):  # (what they see is the sum: made in place all the same)
        assert in_place


def test_autograd_grad_returns_the_sum_and_the_add_gradient_as_pytorchs(in_place):
    """autograd.grad of a (the in-place sum), s and the branch (the add's gradient, which reached a first)."""
    found = {}
    for lib in (torch, ember):
        def run(lib, t, y, up):
            t["grads"] = lib.autograd.grad(y, [t["a"], t["s"], t["branch"], t["w1"]], up)
        found[lib] = _run(lib, run=run)["grads"]
    assert len(in_place) == 1
    for got, want in zip(found[ember], found[torch]):
        assert_close(got, want, atol=1e-4)


def test_a_root_gradient_the_user_gave_is_never_written(in_place):
    """a is a root of the backward (its gradient the user's tensor) and gets the block's gradients too: the user's
    tensor keeps its values; the sum goes into the convolution's fresh gradient."""
    found = {}
    for lib in (torch, ember):
        def run(lib, t, y, up):
            t["given"] = lib.full(SHAPE, 0.25)
            lib.autograd.backward([y, t["a"]], [up, t["given"]])
        found[lib] = _run(lib, run=run)
    assert np.all(found[ember]["given"].numpy() == 0.25)
    # (a's three gradients: the user's and the add's summed into a new array, the convolution's added into it)
    assert len(in_place) == 1
    assert not any(np.shares_memory(w, found[ember]["given"].numpy()) for w in in_place)
    _same_leaf_grads(found[ember], found[torch])


def test_create_graph_sums_recorded_gradients_as_before(in_place):
    """Under create_graph the gradients are recorded tensors: summed as recorded ops (nothing in place), and the
    second derivative through the sum is PyTorch's."""
    found = {}
    for lib in (torch, ember):
        def run(lib, t, y, up):
            (ga,) = lib.autograd.grad(y, [t["a"]], up, create_graph=True)
            t["ga"], t["written"] = ga, len(in_place)
            (ga * ga).sum().backward()  # (a plain backward: its own sums may be made in place)
        found[lib] = _run(lib, run=run)
    assert found[ember]["written"] == 0
    assert_close(found[ember]["ga"], found[torch]["ga"], atol=1e-4)
    _same_leaf_grads(found[ember], found[torch])


def test_retain_graph_backward_twice_accumulates_as_pytorchs(in_place):
    found = {}
    for lib in (torch, ember):
        def run(lib, t, y, up):
            y.backward(up, retain_graph=True)
            y.backward(up * 2)
        found[lib] = _run(lib, run=run)
    assert len(in_place) == 2
    _same_leaf_grads(found[ember], found[torch])


def test_small_gradients_and_unmarked_nodes_sum_into_a_new_array(in_place):
    """Below 4096 elements, and where neither gradient is the walk's (two adds' pass-through gradients), the sum is
    a new array; the values as PyTorch's."""
    found = {}
    for lib in (torch, ember):
        x = lib.tensor(np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16), requires_grad=True)
        a = lib.relu(x)
        (lib.relu(a) * a + a).sum().backward()  # three gradients of a: the small in-place case
        big = lib.tensor(np.linspace(-1, 1, 8192, dtype=np.float32), requires_grad=True)
        b = big * 1
        ((b + 1) * 2 + (b + 2) * 3).sum().backward()  # b's two gradients: MulBackward0's, not marked
        found[lib] = (x.grad, big.grad)
    assert in_place == []
    for got, want in zip(found[ember], found[torch]):
        assert_close(got, want)
