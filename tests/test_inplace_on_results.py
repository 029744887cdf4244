"""In-place ops on the results of other ops: every op's result owns writable memory, as in PyTorch.

NumPy returns a read-only scalar (not a 0-d array) from arithmetic on 0-d arrays and from full
reductions; a tensor wrapping one could not be written in place (``acc += loss`` after
``acc = 0.0 + loss``, the loss-accumulation pattern of many training loops).
"""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


def test_python_scalar_accumulator_takes_in_place_adds():
    for m in (ember, torch):
        acc = 0.0
        acc += m.tensor(0.5)
        acc += m.tensor(0.5)
        acc += m.tensor(0.25)
        if m is ember:
            e = acc
        else:
            t = acc
    assert_close(e, t)


RESULTS = {
    "radd": lambda m, x, v: 0.5 + x, "add": lambda m, x, v: x + x, "neg": lambda m, x, v: -x,
    "rpow": lambda m, x, v: 2 ** x, "exp": lambda m, x, v: x.exp(), "sum": lambda m, x, v: v.sum(),
    "mean": lambda m, x, v: v.mean(), "max": lambda m, x, v: v.max(), "argmax": lambda m, x, v: v.argmax(),
    "max_dim": lambda m, x, v: v.max(0)[0], "norm": lambda m, x, v: v.norm(), "std": lambda m, x, v: v.std(),
    "prod": lambda m, x, v: v.prod(), "dist": lambda m, x, v: v.dist(v * 2),
    "logsumexp": lambda m, x, v: v.logsumexp(0), "dot": lambda m, x, v: m.dot(v, v),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_results_can_be_written_in_place(name):
    outs = []
    for m in (ember, torch):
        x, v = m.tensor(0.5), m.tensor(np.array([1.0, -2.0, 3.0], dtype=np.float32))
        r = RESULTS[name](m, x, v)
        r += 1
        r.mul_(2)
        outs.append(r)
    assert_close(*outs)


@pytest.mark.parametrize("fn", [
    lambda m, a: a.expand_as(a), lambda m, a: a.expand(1, 2, 3), lambda m, a: m.broadcast_to(a, (2, 3)),
    lambda m, a: a[:, :1].expand(2, 1),
])
def test_expand_without_repeats_is_a_writable_view(fn):
    # An expand that repeats no element is an ordinary view: writes go through to the base.
    outs = []
    for m in (ember, torch):
        a = m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        fn(m, a).add_(1)
        outs.append(a)
    assert_close(*outs)


def test_expand_with_repeats_refuses_in_place_writes_as_pytorch():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            m.ones(1, 3).expand(2, 3).add_(1)


# In-place writes to an expanded tensor PyTorch allows (one number through the shared elements: fill_, zero_; a part
# of it whose elements do not overlap: any op) and those it refuses (ops reading the elements, fill_ of a tensor)
EXPANDED_WRITES = {
    "fill_": lambda m, e: e.fill_(2.5),
    "zero_": lambda m, e: e.zero_(),
    "fill_ of a row (stride 0)": lambda m, e: e[0].fill_(3.0),
    "fill_ of the transpose": lambda m, e: e.t().fill_(4.0),
    "add_ of a column (no overlap)": lambda m, e: e[:, :1].add_(2.0),
    "mul_ of a column (no overlap)": lambda m, e: e[:, 1:2].mul_(3.0),
    "add_": lambda m, e: e.add_(1.0),
    "copy_": lambda m, e: e.copy_(m.zeros(3, 4)),
    "fill_ of a 0-d tensor": lambda m, e: e.fill_(m.tensor(7.0)),
    "exp_": lambda m, e: e.exp_(),
    "normal_": lambda m, e: e.normal_(),
}


@pytest.mark.parametrize("write", EXPANDED_WRITES.values(), ids=EXPANDED_WRITES.keys())
def test_writes_to_an_expanded_tensor_as_pytorch(write):
    results = []
    for m in (torch, ember):
        base = m.tensor([[1.0], [2.0], [3.0]])
        try:
            write(m, base.expand(3, 4))
            results.append(base)
        except RuntimeError as e:
            results.append(str(e))
    if isinstance(results[0], str):
        assert isinstance(results[1], str) and "more than one element of the written-to tensor" in results[1]
    else:
        assert_close(results[1], results[0])


def test_filling_an_expanded_tensor_leaves_it_read_only_and_keeps_read_only_memory_refused(monkeypatch):
    e = ember.ones(3, 1).expand(3, 4)
    e.fill_(2.0)
    with pytest.raises(RuntimeError, match="more than one element"):
        e.add_(1)  # (the fill made it writable only while it wrote)
    frozen = np.ones(3)
    frozen.flags.writeable = False
    monkeypatch.setattr(ember._warnings, "_warned_once", set())  # (PyTorch's warning, once per process)
    with pytest.warns(UserWarning, match="not writable"), pytest.raises(RuntimeError, match="read-only"):
        ember.from_numpy(frozen).fill_(2.0)
    with pytest.raises(RuntimeError, match="read-only"):
        ember.from_numpy(frozen)[:2].add_(2.0)


# Results an in-place op (``nn.ReLU(inplace=True)`` after a norm layer, ``y += 1``) then modifies while they need a
# gradient: values and gradients as PyTorch's.
GRAD_RESULTS = {
    "instance_norm2d": lambda m, x: m.nn.functional.instance_norm(x),
    "instance_norm1d_affine": lambda m, x: m.nn.functional.instance_norm(
        x.flatten(2), weight=m.linspace(0.5, 2.0, 4, dtype=x.dtype), bias=m.linspace(-1.0, 1.0, 4, dtype=x.dtype)),
    "pixel_shuffle": lambda m, x: m.nn.functional.pixel_shuffle(x * 1, 2),
    "pixel_unshuffle": lambda m, x: m.nn.functional.pixel_unshuffle(x * 1, 2),
    "bilinear": lambda m, x: m.nn.functional.bilinear(x, x, m.ones(3, 6, 6, dtype=x.dtype) / 6),
    "transpose_reshape": lambda m, x: (x * 2).transpose(1, 3).reshape(2, -1),  # a copy, no view
}


@pytest.mark.parametrize("inplace", ["relu_", "iadd", "mul_"])
@pytest.mark.parametrize("name", sorted(GRAD_RESULTS))
def test_results_needing_a_gradient_take_in_place_ops_as_pytorch(name, inplace):
    data = np.random.default_rng(0).standard_normal((2, 4, 6, 6))
    outs, grads = [], []
    for m in (ember, torch):
        x = m.tensor(data, requires_grad=True)
        y = GRAD_RESULTS[name](m, x)
        if inplace == "relu_":
            y.relu_()
        elif inplace == "iadd":
            y += 1
        else:
            y.mul_(y.detach() + 0.5)
        (y * m.tensor(np.linspace(-1, 1, y.numel()).reshape(y.shape))).sum().backward()
        outs.append(y)
        grads.append(x.grad)
    assert_close(*outs)
    assert_close(*grads)


def test_reshape_that_copies_is_no_view_and_a_contiguous_reshape_is():
    """PyTorch's reshape is a view when strides allow it and a copy otherwise: writes to the copy leave the
    source alone, writes to the view reach it."""
    for m in (ember, torch):
        a = m.arange(6.0).reshape(2, 3)
        copy = a.t().reshape(-1)
        copy += 100
        assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        a.reshape(3, 2).add_(1)
        assert a.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
        assert a.t().reshape(-1)._version == 0  # a new tensor: not the source's version counter


def test_apply_calls_a_python_function_per_element_as_pytorch():
    """Old programs binarise with ``t.apply_(lambda x: 0 if x < 0.5 else 1)``: values in the tensor's dtype (a float
    result in an integer tensor truncated), views write through to their base, a tensor needing grad is refused."""
    out = []
    for m in (torch, ember):
        f = m.tensor([[0.2, 0.7, 0.5], [0.9, 0.1, 0.4]])
        i = m.tensor([1, 2, 3])
        base = m.zeros(2, 3)
        r = f.apply_(lambda v: 0 if v < 0.5 else 1)
        base[1].apply_(lambda v: v + 2.5)
        empty = m.zeros(0, 3).apply_(lambda v: v + 1)
        with pytest.raises(RuntimeError, match="Can't call apply_"):
            m.ones(2, requires_grad=True).apply_(lambda v: v)
        out.append((r is f, f.numpy(), i.apply_(lambda v: v * 2.7).numpy(), base.numpy(), tuple(empty.shape)))
    (t_same, *t_rest), (e_same, *e_rest) = out
    assert t_same and e_same
    for a, b in zip(t_rest[:3], e_rest[:3]):
        np.testing.assert_array_equal(b, a)
        assert b.dtype == a.dtype
    assert t_rest[3] == e_rest[3]


def _compare_in_place(m, name, other, where):
    """``x.<name>(other)`` on a result needing a gradient (``where='result'``), on a view of one, or on a view of a
    tensor that needs none with a tensor ``other`` that does: (requires_grad, grad_fn name, values, gradients)."""
    leaf = m.tensor([0.5, -1.5, 2.0, 0.0], requires_grad=True)
    o = 0.0 if other == "number" else m.tensor([0.5, 0.0, 3.0, 0.0], requires_grad=other == "tensor_req") * 1
    if where == "result":
        base = x = leaf * 2
    else:
        base = leaf * 2 if where == "view" else m.tensor([0.5, -1.5, 2.0, 0.0])
        x = base[1:]
        o = o if other == "number" else o[1:]
    r = getattr(x, name)(o)
    assert r is x
    state = (r.requires_grad, r.grad_fn.name() if r.grad_fn is not None else None, r.tolist())
    inputs = [t for t in (leaf, o) if isinstance(t, m.Tensor) and t.requires_grad]
    if not base.requires_grad:
        return state, None
    grads = m.autograd.grad((base * m.arange(4.0)).sum(), inputs, allow_unused=True)
    return state, [None if g is None else g.tolist() for g in grads]


@pytest.mark.parametrize("where", ["result", "view", "view_of_a_tensor_without_grad"])
@pytest.mark.parametrize("other", ["number", "tensor", "tensor_req"])
@pytest.mark.parametrize("name", ["gt_", "ge_", "lt_", "le_", "eq_", "ne_"])
def test_comparisons_in_place_on_tensors_needing_a_gradient(name, other, where):
    """As PyTorch: the result keeps requiring a gradient (GtBackward0 with a number, GtBackward1 with a tensor),
    and both operands' gradients are zeros."""
    assert _compare_in_place(ember, name, other, where) == _compare_in_place(torch, name, other, where)


@pytest.mark.parametrize("result", [None, "a", [1], 1 + 2j])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_apply_refuses_a_result_that_is_no_real_number_as_pytorch(result, dtype):
    """PyTorch's TypeError for a callable returning None, a string, a list or (into a real tensor) a complex;
    NumPy would have written nan or warned."""
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as err:
            m.tensor([1, 2], dtype=getattr(m, dtype)).apply_(lambda v: result)
        messages.append(str(err.value))
    assert messages[1] == messages[0]
