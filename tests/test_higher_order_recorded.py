"""The recorded stand-ins a backward formula computes on under create_graph (``ember/autograd/recorded.py``): the
forms of its namespace no formula uses yet, values and gradients against PyTorch's equivalent ops; NumPy's answers
for its metadata; and every formula step that cannot be recorded failing with ``HigherOrderError``, naming the node
and the step (never computing a constant, silently not differentiable)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember.autograd.recorded import HigherOrderError, RecordedArray, running

# ties in every row and column, so that min/max must share the gradient among equal values as PyTorch's amin/amax
X = np.array([[3.0, 1.0, 3.0], [1.0, 2.0, 1.0]])
W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -2.0]])

# (a NumPy form a formula may write, PyTorch's op computing the same on a tensor)
FORMS = {
    "min method, axis": (lambda a: a.min(axis=0), lambda t: t.amin(0)),
    "min method, all": (lambda a: a.min(), lambda t: t.amin()),
    "min method, keepdims": (lambda a: a.min(axis=1, keepdims=True), lambda t: t.amin(1, keepdim=True)),
    "max method, axis": (lambda a: a.max(axis=1), lambda t: t.amax(1)),
    "max method, all, keepdims": (lambda a: a.max(keepdims=True), lambda t: t.amax((0, 1), keepdim=True)),
    "dot method": (lambda a: a.dot(W.T), lambda t: t @ torch.tensor(W.T)),
    "dot method, recorded on both sides": (lambda a: a.dot(a.T), lambda t: t @ t.T),
    "mean function, axis": (lambda a: np.mean(a, axis=1), lambda t: t.mean(1)),
    "mean function, all": (lambda a: np.mean(a), lambda t: t.mean()),
    "mean function, keepdims": (lambda a: np.mean(a, axis=0, keepdims=True), lambda t: t.mean(0, keepdim=True)),
    "take, flat": (lambda a: np.take(a, [4, 0, 4]), lambda t: t.reshape(-1)[[4, 0, 4]]),
    "take, flat, 2-d indices": (lambda a: np.take(a, np.array([[5, 1], [1, 0]])),
                                lambda t: t.reshape(-1)[torch.tensor([[5, 1], [1, 0]])]),
    "number ** recorded": (lambda a: 2.0 ** a, lambda t: 2.0 ** t),
    "number ** recorded, integer base": (lambda a: 3 ** a, lambda t: 3 ** t),
    # NumPy's functions with their defaults (no axis: over the flat array or every axis) and optional arguments
    "repeat, flat": (lambda a: np.repeat(a, 2), lambda t: t.reshape(-1).repeat_interleave(2)),
    "repeat, axis 1": (lambda a: np.repeat(a, 2, axis=1), lambda t: t.repeat_interleave(2, dim=1)),
    "cumsum, flat": (lambda a: np.cumsum(a), lambda t: t.reshape(-1).cumsum(0)),
    "cumsum, axis 1": (lambda a: np.cumsum(a, axis=1), lambda t: t.cumsum(1)),
    "cumprod, flat": (lambda a: np.cumprod(a), lambda t: t.reshape(-1).cumprod(0)),
    "cumprod, axis 0": (lambda a: np.cumprod(a, axis=0), lambda t: t.cumprod(0)),
    "flip, all": (lambda a: np.flip(a), lambda t: t.flip((0, 1))),
    "flip, axis 1": (lambda a: np.flip(a, 1), lambda t: t.flip(1)),
    "roll, flat": (lambda a: np.roll(a, 2), lambda t: t.roll(2)),
    "roll, axis 1": (lambda a: np.roll(a, -1, axis=1), lambda t: t.roll(-1, 1)),
    "var, all": (lambda a: np.var(a), lambda t: t.var(correction=0)),
    "var, ddof 1, axis 1": (lambda a: np.var(a, axis=1, ddof=1), lambda t: t.var(1)),
    "sum, all, keepdims": (lambda a: np.sum(a, keepdims=True), lambda t: t.sum((0, 1), keepdim=True)),
    "tril": (lambda a: np.tril(a), lambda t: t.tril()),
    "triu, k 1": (lambda a: np.triu(a, 1), lambda t: t.triu(1)),
    "tril, k -1": (lambda a: np.tril(a, -1), lambda t: t.tril(-1)),
    "diagonal": (lambda a: np.diagonal(a), lambda t: t.diagonal()),
    "diagonal, offset 1": (lambda a: np.diagonal(a, 1), lambda t: t.diagonal(1)),
    "clip, both": (lambda a: np.clip(a, 0.75, 2.5), lambda t: t.clamp(0.75, 2.5)),
    "outer": (lambda a: np.outer(a, a[0]), lambda t: torch.outer(t.reshape(-1), t[0])),
    "squeeze, all": (lambda a: np.squeeze(a[None, :1]), lambda t: t[None, :1].squeeze()),
    "transpose, default": (lambda a: np.transpose(a), lambda t: t.T),
    "ravel": (lambda a: np.ravel(a), lambda t: t.reshape(-1)),
    "max, all": (lambda a: np.max(a), lambda t: t.amax()),
    "min, axis 0, keepdims": (lambda a: np.min(a, axis=0, keepdims=True), lambda t: t.amin(0, keepdim=True)),
    # over no axes (NumPy's axis=(): each element its own result, where PyTorch's dim=() reduces over every dim)
    "sum method, no axes": (lambda a: a.sum(axis=()), lambda t: t.clone()),
    "sum, no axes, keepdims": (lambda a: np.sum(a, axis=(), keepdims=True), lambda t: t.clone()),
    "mean method, no axes": (lambda a: a.mean(axis=()), lambda t: t.clone()),
    "mean, no axes, keepdims": (lambda a: np.mean(a, axis=(), keepdims=True), lambda t: t.clone()),
    "max method, no axes": (lambda a: a.max(axis=()), lambda t: t.clone()),
    "min, no axes, keepdims": (lambda a: np.min(a, axis=(), keepdims=True), lambda t: t.clone()),
    "amax, no axes": (lambda a: np.amax(a, axis=()), lambda t: t.clone()),
    "var, no axes": (lambda a: np.var(a, axis=()), lambda t: (t - t) ** 2),
}


@pytest.mark.parametrize("axis", [None, 0])
def test_repeat_by_counts_computes_as_numpy(axis):
    counts = np.array([1, 0, 2, 1, 3, 1]) if axis is None else np.array([2, 1])
    got = np.repeat(RecordedArray(ember.tensor(X, requires_grad=True)), counts, axis=axis)
    np.testing.assert_array_equal(got.t.detach().numpy(), np.repeat(X, counts, axis=axis), strict=True)


def _weights(shape) -> np.ndarray:
    return np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("name", list(FORMS))
def test_a_form_no_formula_uses_yet_computes_and_differentiates_as_pytorch(name):
    """NumPy's values (dtype and shape too), and the recorded result's gradient equals PyTorch's of the same op:
    what a formula written with this form would give under create_graph."""
    form, op = FORMS[name]
    x = ember.tensor(X, requires_grad=True)
    got = form(RecordedArray(x))
    assert type(got) is RecordedArray, name
    np.testing.assert_array_equal(got.t.detach().numpy(), form(X), err_msg=name, strict=True)
    t = torch.tensor(X, requires_grad=True)
    want = op(t)
    w = _weights(want.shape)
    (got.t * ember.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    assert_close(x.grad, t.grad, msg=name)


@pytest.mark.parametrize("sections,axis", [(3, 1), (2, 0), ([1], 1), ([0, 2], 1), (np.array([1]), 0)])
@pytest.mark.parametrize("split", ["split", "array_split"])
def test_split_by_a_count_or_by_indices_computes_and_differentiates_as_pytorch(split, sections, axis):
    """``numpy.split``/``array_split`` by a number of equal sections or at indices: NumPy's pieces, each
    differentiable as PyTorch's ``tensor_split``."""
    x = ember.tensor(X, requires_grad=True)
    got = getattr(np, split)(RecordedArray(x), sections, axis=axis)
    want = getattr(np, split)(X, sections, axis=axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is RecordedArray
        np.testing.assert_array_equal(g.t.detach().numpy(), w, strict=True)
    t = torch.tensor(X, requires_grad=True)
    theirs = torch.tensor_split(t, list(sections) if not isinstance(sections, int) else sections, dim=axis)
    sum(((g.t * ember.tensor(_weights(g.shape) + k)).sum() for k, g in enumerate(got)), ember.tensor(0.0)).backward()
    sum((p * torch.tensor(_weights(tuple(p.shape)) + k)).sum() for k, p in enumerate(theirs)).backward()
    assert_close(x.grad, t.grad)


def test_metadata_questions_are_answered_as_numpy():
    """What a formula asks of an array without computing on it: its length, truth (one element), the indices of
    its non-zero entries (``where`` with a condition only: constants, not recorded), and a readable repr."""
    r = RecordedArray(ember.tensor(X))
    assert len(r) == len(X) == 2
    assert len(RecordedArray(ember.tensor(X.T))) == 3
    for v in (0.0, 2.5, -1.0):
        assert bool(RecordedArray(ember.tensor([v]))) is bool(np.array([v]))
    for got, want in zip(np.where(r > 1.5), np.where(X > 1.5)):
        np.testing.assert_array_equal(got, want, strict=True)
    for got, want in zip(np.where(r), np.where(X)):
        np.testing.assert_array_equal(got, want, strict=True)
    assert repr(r) == f"RecordedArray({ember.tensor(X)!r})"


def test_recorded_stand_ins_never_share_memory_as_a_write_into_one_leaves_the_other():
    """A formula asks whether two arrays may share memory before it writes into one (embedding's sparse gradient
    copies its values when they may). A recorded stand-in's write is a functional update (the tensor cloned, then
    written), so no other array, a stand-in of the same tensor included, ever sees it: both questions answer False,
    and the write indeed leaves the other as it was."""
    r = RecordedArray(ember.tensor(X))
    same = r.copy()  # (a new stand-in for the same tensor)
    assert same.t is r.t
    for question in (np.may_share_memory, np.shares_memory):
        assert question(r, same) is False
        assert question(r, RecordedArray(ember.tensor(X))) is False
        assert question(same, X) is False
    same[0] = 5.0
    np.testing.assert_array_equal(r.t.numpy(), X)
    np.testing.assert_array_equal(same.t.numpy()[0], [5.0] * X.shape[1])


@pytest.mark.parametrize("other", ["number", "array", "recorded"])
def test_comparisons_answer_as_numpy_at_ties_too(other):
    """A formula's masks (``x >= 0``, ``a == m``, ``out != 0``): each of the six comparisons of a recorded array,
    written either way round, against a number, a plain array and another recorded array, NumPy's answer (plain
    boolean arrays, not recorded), where the operands tie as well as where they differ."""
    import operator

    r = RecordedArray(ember.tensor(X))
    y = 1.0 if other == "number" else np.array([[3.0, 2.0, 1.0], [1.0, 1.0, 0.5]])
    mine = RecordedArray(ember.tensor(y)) if other == "recorded" else y
    assert (X == y).any() and (X != y).any()  # ties and differences both
    for op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        for got, want in ((op(r, mine), op(X, y)), (op(mine, r), op(y, X))):
            assert type(got) is np.ndarray, op
            np.testing.assert_array_equal(got, want, err_msg=op.__name__, strict=True)


_PLAIN = X.copy()
# (a formula step that cannot be recorded, what the error names)
UNRECORDABLE = {
    "item()": (lambda r: r.item(), "a conversion to a Python number (item())"),
    "float()": (lambda r: float(r[0, 0]), "a conversion to a Python number (float())"),
    "a plain array of it": (lambda r: np.asarray(r), "a conversion to a plain NumPy array"),
    "a ufunc writing into out=": (lambda r: np.exp(r, out=np.empty((2, 3))),
                                  "numpy.exp(..., out=...) (writing into an array)"),
    "a ufunc's reduce": (lambda r: np.add.reduce(r), "numpy.add.reduce"),
    "a ufunc's outer": (lambda r: np.multiply.outer(r, r), "numpy.multiply.outer"),
    "accumulate of a ufunc without a cumulative op": (lambda r: np.add.accumulate(r), "numpy.add.accumulate"),
    "a ufunc with where=": (lambda r: np.add(r, 1.0, where=X > 1), "numpy.add with arguments ['where']"),
    "a ufunc with dtype=": (lambda r: np.multiply(r, 2.0, dtype=np.float32), "numpy.multiply with arguments ['dtype']"),
    "a ufunc with no recorded op": (lambda r: np.deg2rad(r), "numpy.deg2rad"),
    "add.at into a plain array": (lambda r: np.add.at(_PLAIN.copy(), [0], r[0]), "numpy.add.at into a plain array"),
    "another ufunc's at": (lambda r: np.subtract.at(r, [0], 2.0), "numpy.subtract.at into a plain array"),
    "multiply.at at rows": (lambda r: np.multiply.at(r, [0], 2.0),
                            "numpy.multiply.at with an index other than one integer array per dimension"),
    "pad other than constant": (lambda r: np.pad(r, 1, mode="edge"), "numpy.pad(mode='edge')"),
    "put_along_axis into a plain array": (lambda r: np.put_along_axis(_PLAIN.copy(), np.array([[0], [1]]), r[:, :1],
                                                                      axis=1), "numpy.put_along_axis into a plain array"),
    "a function with no recorded op": (lambda r: np.median(r), "numpy.median"),
    "a linalg function with no recorded op": (lambda r: np.linalg.pinv(r), "numpy.linalg.pinv"),
    "an fft function with no recorded op": (lambda r: np.fft.hfft(r), "numpy.fft.hfft"),
}


@pytest.mark.parametrize("name", list(UNRECORDABLE))
def test_an_unrecordable_formula_step_fails_naming_the_node_and_the_step(name):
    step, what = UNRECORDABLE[name]
    r = RecordedArray(ember.tensor(X, requires_grad=True))
    tail = ("which has no recorded counterpart (create_graph=True needs every step of the formula recorded)")
    with running("OuterBackward0"):
        with pytest.raises(HigherOrderError) as raised, running("FooBackward0"):
            step(r)
        assert str(raised.value) == f"FooBackward0 cannot be differentiated twice in ember yet: its gradient " \
                                    f"formula uses {what}, {tail}"
        with pytest.raises(HigherOrderError, match="^OuterBackward0 cannot"):  # the enclosing name is back
            step(r)
    with pytest.raises(HigherOrderError, match="^a backward formula cannot"):  # outside any node's formula
        step(r)
    assert isinstance(raised.value, RuntimeError)  # (PyTorch's error type for what it cannot differentiate)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_logaddexp_accumulate_computes_as_numpy_along_its_default_axis(axis):
    """``numpy.logaddexp.accumulate`` of a recorded array (a formula's running log-sum-exp), its axis left to
    NumPy's default (0) or given: NumPy's values, and a recorded result."""
    r = RecordedArray(ember.tensor(X))
    kwargs = {} if axis is None else {"axis": axis}
    got = np.logaddexp.accumulate(r, **kwargs)
    assert type(got) is RecordedArray
    np.testing.assert_allclose(got.t.numpy(), np.logaddexp.accumulate(X, **kwargs), rtol=1e-12)


@pytest.mark.parametrize("values", ["float64 array", "float32 array", "recorded float64", "number"])
def test_add_at_into_a_float32_recorded_buffer_casts_the_values_as_numpy(values):
    """``numpy.add.at`` into a recorded float32 buffer (a formula's scatter of its gradient) with values of another
    dtype or of its own: cast to the buffer's dtype, as NumPy's, the sums NumPy's, repeated positions added again."""
    buffer = X.astype(np.float32)
    plain = {"float64 array": np.array([0.5, 1.25, 2.0]), "float32 array": np.array([0.5, 1.25, 2.0], np.float32),
             "recorded float64": np.array([0.5, 1.25, 2.0]), "number": 1.5}[values]
    given = RecordedArray(ember.tensor(plain)) if values.startswith("recorded") else plain
    target = RecordedArray(ember.tensor(buffer.copy()))
    index = (np.array([0, 1, 0]), np.array([2, 0, 2]))
    np.add.at(target, index, given)
    np.add.at(buffer, index, plain)
    assert target.t.dtype == ember.float32
    np.testing.assert_array_equal(target.t.numpy(), buffer)
