"""A node keeps (and version-checks) a saved tensor only when a gradient that reads it will be computed, as
PyTorch: with only ``w`` requiring grad, ``w * x`` saves ``x`` but not ``w``, so changing ``w`` in place before
backward (an optimizer step, a parameter-server update) is fine; when the changed tensor is read, both raise
the same error. Each case runs in ember and torch on the same inputs, every requires-grad combination, each
operand changed in place: same outcome, same gradients, same message."""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close

F = "nn.functional"


def _fn(path: str):
    def get(m):
        for part in path.split("."):
            m = getattr(m, part)
        return m
    return get


# name -> (fn(m, a, b), shape of a, shape of b)
CASES = {
    "mul": (lambda m, a, b: a * b, (3, 4), (3, 4)),
    "mul_broadcast": (lambda m, a, b: a * b, (2, 3, 4), (4,)),
    "mul_scalar": (lambda m, a, b: a * 3.0 + b, (3, 4), (3, 4)),
    "rmul_scalar": (lambda m, a, b: 2.5 * a * b, (3, 4), (3, 4)),
    "div": (lambda m, a, b: a / b, (3, 4), (3, 4)),
    "div_scalar": (lambda m, a, b: a / 2.0 + b, (3, 4), (3, 4)),
    "matmul": (lambda m, a, b: a @ b, (3, 4), (4, 5)),
    "matmul_batched": (lambda m, a, b: m.matmul(a, b), (2, 3, 4), (4, 5)),
    "matmul_vec": (lambda m, a, b: m.matmul(a, b), (4,), (2, 4, 3)),
    "mm": (lambda m, a, b: m.mm(a, b), (3, 4), (4, 5)),
    "bmm": (lambda m, a, b: m.bmm(a, b), (2, 3, 4), (2, 4, 5)),
    "mv": (lambda m, a, b: m.mv(a, b), (3, 4), (4,)),
    "dot": (lambda m, a, b: m.dot(a, b), (4,), (4,)),
    "outer": (lambda m, a, b: m.outer(a, b), (4,), (3,)),
    "einsum": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), (3, 4), (4, 5)),
    "einsum_three": (lambda m, a, b: m.einsum("ij,jk,k->i", a, b, b.detach()[0] * 0 + 1), (3, 4), (4, 5)),
    "linear": (lambda m, a, b: _fn(F + ".linear")(m)(a, b), (2, 3, 4), (5, 4)),
    "linear_bias": (lambda m, a, b: _fn(F + ".linear")(m)(a, b, b[:, 0]), (3, 4), (5, 4)),
    "addcmul": (lambda m, a, b: m.addcmul(a, a, b, value=0.5), (3, 4), (3, 4)),
    "addcdiv": (lambda m, a, b: m.addcdiv(a, a, b * b + 1, value=0.5), (3, 4), (3, 4)),
    "addmm": (lambda m, a, b: m.addmm(b[0], a, b), (3, 4), (4, 5)),
    "baddbmm": (lambda m, a, b: m.baddbmm(a[:, :, :1], a, b), (2, 3, 4), (2, 4, 5)),
    "pow": (lambda m, a, b: m.pow(a.abs() + 1, b), (3, 4), (3, 4)),
    "atan2": (lambda m, a, b: m.atan2(a, b), (3, 4), (3, 4)),
    "hypot": (lambda m, a, b: m.hypot(a, b), (3, 4), (3, 4)),
    "maximum": (lambda m, a, b: m.maximum(a, b), (3, 4), (3, 4)),
    "lerp": (lambda m, a, b: m.lerp(a, b, 0.3), (3, 4), (3, 4)),
    "inner": (lambda m, a, b: m.inner(a, b), (3, 4), (5, 4)),
    "tensordot": (lambda m, a, b: m.tensordot(a, b, dims=1), (3, 4), (4, 5)),
    "addmv": (lambda m, a, b: m.addmv(b[:, 0], b, a[0]), (3, 4), (5, 4)),
    "addbmm": (lambda m, a, b: m.addbmm(a[0, :, :1], a, b), (2, 3, 4), (2, 4, 5)),
    "multi_dot": (lambda m, a, b: m.linalg.multi_dot([a, b, b.mT]), (3, 4), (4, 5)),
    "bilinear": (lambda m, a, b: _fn(F + ".bilinear")(m)(a, a, b), (2, 4), (3, 4, 4)),
    "conv_transpose2d": (lambda m, a, b: _fn(F + ".conv_transpose2d")(m)(a, b), (1, 2, 4, 4), (2, 3, 3, 3)),
    "conv2d_input_weight": (lambda m, a, b: _fn(F + ".conv2d")(m)(a, b), (1, 2, 5, 5), (3, 2, 3, 3)),
    "conv1d_input_weight": (lambda m, a, b: _fn(F + ".conv1d")(m)(a, b, padding=1), (2, 2, 6), (3, 2, 3)),
}


def _shapeless(message: str) -> str:
    """The message without the tensor's shape and creator, which differ where PyTorch's op saves a view that
    its decomposition made (batched matmul's 2-D reshape, an as_strided)."""
    message = re.sub(r", which is output \d+ of \w+,", "", message)
    return re.sub(r"\[(torch\.\w+) \[[\d, ]*\]\]", r"[\1]", message)


def _run(m, fn, shapes, rg, changed):
    rng = np.random.default_rng(0)
    a, b = (m.tensor(rng.standard_normal(s), dtype=m.float64) for s in shapes)
    a.requires_grad_(rg[0])
    b.requires_grad_(rg[1])
    y = fn(m, a, b)
    with m.no_grad():
        (a, b)[changed].add_(1.0)
    try:
        y.sum().backward()
    except RuntimeError as err:
        return str(err), None
    return None, [t.grad for t in (a, b)]


@pytest.mark.parametrize("changed", [0, 1])
@pytest.mark.parametrize("rg", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("name", list(CASES))
def test_changed_in_place_before_backward(name, rg, changed):
    fn, *shapes = CASES[name]
    t_err, t_grads = _run(torch, fn, shapes, rg, changed)
    e_err, e_grads = _run(ember, fn, shapes, rg, changed)
    assert (e_err is None) == (t_err is None), f"torch: {t_err}\nember: {e_err}"
    if t_err is not None:  # (see _shapeless)
        assert _shapeless(e_err) == _shapeless(t_err)
        return
    for eg, tg in zip(e_grads, t_grads):
        assert (eg is None) == (tg is None)
        if tg is not None:
            assert_close(eg, tg, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("changed", [0, 1])
@pytest.mark.parametrize("rg", [(True, False), (False, True), (True, True)])
def test_kron_reads_the_changed_values_as_pytorch(rg, changed):
    """PyTorch's kron saves untracked views of its operands (``_unsafe_view``): one changed in place before
    backward, the gradient is computed from the new values, not refused; ember's the same."""
    fn, shapes = (lambda m, a, b: m.kron(a, b)), [(2, 3), (3, 2)]
    t_err, t_grads = _run(torch, fn, shapes, rg, changed)
    e_err, e_grads = _run(ember, fn, shapes, rg, changed)
    assert t_err is None and e_err is None, e_err
    for eg, tg in zip(e_grads, t_grads):
        assert (eg is None) == (tg is None)
        if tg is not None:
            assert_close(eg, tg, atol=1e-10, rtol=1e-10)


def _message(m, saved_output: bool, anomaly: bool = False):
    x = m.ones(2, 3, dtype=m.float32, requires_grad=True)
    with m.autograd.detect_anomaly() if anomaly else contextlib.nullcontext():
        h = x.exp()
        y = h if saved_output else h * x
        h.mul_(2) if saved_output else None
        if not saved_output:
            with m.no_grad():
                x.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    return str(info.value)


@pytest.mark.parametrize("saved_output", [True, False])
def test_message_names_type_shape_creator_and_versions(saved_output):
    assert _message(ember, saved_output) == _message(torch, saved_output)


@pytest.mark.filterwarnings("ignore")  # torch's anomaly mode warns with the forward trace
def test_message_under_anomaly_detection():
    assert _message(ember, False, anomaly=True) == _message(torch, False, anomaly=True)


def test_read_entry_changed_through_a_non_leaf():
    """The message for a non-leaf names the op whose output the tensor is now (the in-place op's, Add), as
    PyTorch's."""
    messages = []
    for m in (ember, torch):
        x = m.ones(2, 3, requires_grad=True)
        h = x * 2
        y = h * x
        h.add_(1)
        with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2, 3\]\], which is output 0 of Add, is at "
                                               r"version 1; expected version 0 instead") as caught:
            y.sum().backward()
        messages.append(str(caught.value).split(". Hint")[0])
    assert messages[0] == messages[1]


def test_unread_entry_is_not_held():
    """The memory side: an entry no computed gradient reads is a one-element stand-in, not the array."""
    w = ember.randn(64, 64, requires_grad=True)
    x = ember.randn(64, 64)
    y = ember.matmul(x, w)
    a, b = y.grad_fn.saved
    assert a is x._data
    assert b.strides == (0, 0) and b.shape == w.shape and b.dtype == w._data.dtype


@pytest.mark.parametrize("rg", [(True, False), (False, True), (True, True)])
def test_saved_tensors_hooks_see_only_what_is_saved(rg):
    """saved_tensors_hooks' pack runs once per tensor actually saved, as PyTorch's."""
    counts = []
    for m in (ember, torch):
        packed = []
        a = m.ones(3, 4, dtype=m.float64, requires_grad=rg[0])
        b = m.ones(4, 5, dtype=m.float64, requires_grad=rg[1])
        def pack(t, packed=packed):
            packed.append(tuple(t.shape))
            return t

        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = (a @ b) * 2.0
        y.sum().backward()
        counts.append(sorted(packed))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("fails_in", ["post_hook", "formula"])
def test_a_backward_that_raised_in_a_node_leaves_its_saved_tensors_packed(fails_in):
    """The node's unpack hook runs again in each later backward (retain_graph), and its gradient reads what the
    hook gives then, as PyTorch's engine unpacks at each use: a backward that raised in the node's post-hook, or in
    its formula (an unpack hook's tensor of another shape), after the unpacking left it unpacked, so the next
    backward read the first one's arrays and called no hook."""
    got = []
    for m in (ember, torch):
        calls, fail = [], [True]
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)

        def unpack(t, m=m, calls=calls, fail=fail):
            calls.append(1)
            if fail[0] and fails_in == "formula":
                return m.ones(2, dtype=t.dtype)  # (broadcasts with no operand: the formula raises)
            return t * len(calls)  # (a value that differs per call: a stale unpacked array shows in the gradient)

        with m.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = x * x

        def post(grad_inputs, grad_outputs, fail=fail):
            if fail[0]:
                raise ValueError("once")

        y.grad_fn.register_hook(post)
        record = []
        for _ in range(3):
            x.grad = None
            try:
                y.sum().backward(retain_graph=True)
                record.append((len(calls), x.grad.tolist()))
            except (ValueError, RuntimeError):  # (the post-hook's ValueError; the formula's RuntimeError, as PyTorch's)
                record.append((len(calls), "raised"))
            fail[0] = False
        got.append(record)
    assert got[0] == got[1]


class _Packed:
    """What a pack hook gives: a box holding the saved tensor (a weak reference to it tells whether it is kept)."""


@pytest.mark.parametrize("retain", [False, True])
def test_what_the_pack_hooks_gave_is_freed_with_the_graph(retain):
    """A backward that does not retain the graph frees what the saved-tensor hooks packed, as PyTorch's: a
    program's packed copies (offloaded, compressed) are not held after it; one that retains keeps them for the
    next, whose release frees them."""
    import gc
    import weakref

    got = []
    for m in (ember, torch):
        boxes = []

        def pack(t, boxes=boxes):
            box = _Packed()
            box.t = t
            boxes.append(weakref.ref(box))
            return box

        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, lambda box: box.t):
            y = (x * x.exp()).sum()
        y.backward(retain_graph=retain)
        gc.collect()
        after_first = [r() is not None for r in boxes]
        if retain:
            y.backward()
            gc.collect()
        got.append((after_first, [r() is not None for r in boxes], x.grad.tolist()))
    assert got[0][:2] == got[1][:2] and len(got[0][0]) == 3
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-12)


@pytest.mark.parametrize("name", ["mul", "div", "matmul", "dot", "einsum", "linear", "bilinear", "addcmul"])
@pytest.mark.parametrize("which", [0, 1])
def test_second_order_with_one_input_requiring_grad(name, which):
    """create_graph with one operand requiring grad (the other's saved entry dropped): the gradient is still
    differentiable, and the second derivative is PyTorch's."""
    fn, *shapes = CASES[name]
    results = []
    for m in (ember, torch):
        rng = np.random.default_rng(1)
        a, b = (m.tensor(rng.standard_normal(s) + 2.0, dtype=m.float64) for s in shapes)
        t = (a, b)[which].requires_grad_(True)
        y = fn(m, a, b)
        (g,) = m.autograd.grad((y * y).sum(), t, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), t)
        results.append((g.detach(), gg))
    for e, t in zip(*results):
        assert_close(e, t, atol=1e-8, rtol=1e-8)
