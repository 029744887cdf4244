"""Gradients of gradients (create_graph=True): the engine's semantics, against PyTorch.

The op-by-op second-order checks live with each op family's tests (``higher_order_oracle.check_second_order``);
here: what create_graph does to ``.grad``, ``retain_graph``, hooks, custom Functions, third order, and the
clear error for a formula step that cannot be recorded.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from higher_order_oracle import check_second_order
from oracle import assert_close

import ember
from ember.autograd.recorded import HigherOrderError


def _pair(a):
    return ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.filterwarnings(r"ignore:Using backward\(\) with create_graph=True:UserWarning")
def test_backward_create_graph_leaves_a_grad_that_requires_grad():
    a = np.random.default_rng(0).standard_normal(5)
    for x in _pair(a):
        (x ** 3).sum().backward(create_graph=True)
        assert x.grad.requires_grad and x.grad.grad_fn is not None
        g = x.grad
        x.grad = None
        g.sum().backward()  # d/dx sum(3x^2) = 6x
        np.testing.assert_allclose(x.grad.detach().numpy(), 6 * a)


@pytest.mark.filterwarnings(r"ignore:Using backward\(\) with create_graph=True:UserWarning")
def test_create_graph_accumulates_out_of_place_into_an_existing_grad():
    a = np.random.default_rng(1).standard_normal(4)
    e, t = _pair(a)
    for x in (e, t):
        (x * x).sum().backward()
        held = x.grad
        (x ** 3).sum().backward(create_graph=True)
        assert x.grad is not held and x.grad.requires_grad
        np.testing.assert_allclose(held.numpy(), 2 * a)  # the held gradient is not written in place
    assert_close(e.grad, t.grad)


def test_create_graph_retains_the_graph_by_default_and_third_order():
    a = np.random.default_rng(2).standard_normal(6)
    results = []
    for lib, x in zip((ember, torch), _pair(a)):
        y = (lib.sin(x) * x).sum()
        (g1,) = lib.autograd.grad(y, x, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        (again,) = lib.autograd.grad(y, x)  # the first graph is still there: create_graph retains it
        results.append([g.detach().numpy() for g in (g1, g2, g3, again)])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, atol=1e-12)


def test_grad_outputs_that_require_grad_are_differentiated():
    """A Jacobian-vector product by the double-vjp trick needs d(vjp)/d(v)."""
    rng = np.random.default_rng(3)
    a, w, u = rng.standard_normal(3), rng.standard_normal((3, 4)), rng.standard_normal(3)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tanh(x @ lib.tensor(w))
        v = lib.zeros_like(y, requires_grad=True)
        (vjp,) = lib.autograd.grad(y, x, v, create_graph=True)
        (jvp,) = lib.autograd.grad(vjp, v, lib.tensor(u))
        results.append(jvp.numpy())
    np.testing.assert_allclose(results[0], results[1], atol=1e-12)


def test_a_constant_gradient_comes_back_as_a_tensor_without_grad():
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad((2 * x).sum(), x, create_graph=True)
        assert g.tolist() == [2.0, 2.0]
        assert not g.requires_grad


def test_tensor_hooks_see_and_replace_recorded_gradients():
    a = np.random.default_rng(4).standard_normal(3)
    results = []
    for lib, x in zip((ember, torch), _pair(a)):
        y = x * x
        y.register_hook(lambda g, y=y: g * y)  # the hook's result is recorded too
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        results.append((g.detach().numpy(), h.numpy()))
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, atol=1e-12)


def test_custom_function_backward_is_differentiated_when_written_in_tensor_ops():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    a = np.random.default_rng(5).standard_normal(4)
    x = ember.tensor(a, requires_grad=True)
    (g,) = ember.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 3 * a * a)
    np.testing.assert_allclose(h.numpy(), 6 * a)


def test_first_order_gradients_stay_plain_after_a_create_graph_backward():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    ember.autograd.grad((x ** 2).sum(), x, create_graph=True)
    (g,) = ember.autograd.grad((x ** 2).sum(), x)
    assert not g.requires_grad and g.grad_fn is None
    assert ember.is_grad_enabled()


def test_a_formula_step_that_cannot_be_recorded_is_a_clear_error():
    from ember.autograd.graph import Node

    class Opaque(Node):
        def forward(self, x):
            self.saved = (x,)
            return x * 2

        def backward(self, g):
            (x,) = self.saved
            return (np.asarray(g) * 2,)  # leaves the recorded world

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = Opaque.apply(x)
    with pytest.raises(HigherOrderError, match="OpaqueBackward0 cannot be differentiated twice.*conversion"):
        ember.autograd.grad(y.sum(), x, create_graph=True)
    assert ember.is_grad_enabled()  # the failed backward restored grad mode


@pytest.mark.parametrize("name, fn, specs", [
    ("exp*sin", lambda m, x: m.exp(x) * m.sin(x), [(3, 4)]),
    ("tanh(matmul)", lambda m, x, w: m.tanh(x @ w), [(3, 4), (4, 5)]),
    ("div and pow", lambda m, x, y: (x / (1 + y * y)) ** 3, [(4,), (4,)]),
    ("sum and mean dims", lambda m, x: (x * x).sum(dim=1) * x.mean(dim=0)[:3], [(3, 4)]),
    ("broadcast", lambda m, x, b: m.sigmoid(x * b + b), [(2, 3, 4), (4,)]),
    ("reshape/transpose", lambda m, x: (x.reshape(4, 3).t() ** 2).exp(), [(3, 4)]),
])
def test_second_order_of_basic_ops_matches_pytorch(name, fn, specs):
    check_second_order(fn, specs)


def test_a_formula_that_turns_a_gradient_into_a_python_number_is_a_clear_error():
    """float(g) would silently make the gradient a constant of the second backward."""
    from ember.autograd.graph import Node

    class ScaleByGrad(Node):
        def forward(self, x):
            return x * 2

        def backward(self, g):
            return (g * 0 + float(g.sum()),)

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(HigherOrderError, match="Python number"):
        ember.autograd.grad(ScaleByGrad.apply(x).sum(), x, create_graph=True)


def test_an_input_changed_in_place_before_a_rerun_is_the_usual_error():
    """LayerNorm's forward runs again under create_graph: an input changed in place since must not be read."""
    for lib in (ember, torch):
        x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
        h = x * 1.0
        y = lib.nn.functional.layer_norm(h, (4,))
        h.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            lib.autograd.grad(y.pow(2).sum(), x, create_graph=True)
@pytest.mark.parametrize("name,call", [
    ("max, all, keepdims", lambda a: np.max(a, keepdims=True)),
    ("amin, all, keepdims", lambda a: np.amin(a, keepdims=True)),
    ("max, axis", lambda a: np.max(a, axis=1, keepdims=True)),
    # keepdims left to its default (False) for each of the four names
    ("amax, axis", lambda a: np.amax(a, axis=1)),
    ("max, all", lambda a: np.max(a)),
    ("amin, axis", lambda a: np.amin(a, axis=0)),
    ("min, all", lambda a: np.min(a)),
    ("repeat, flat", lambda a: np.repeat(a, 2)),
    ("repeat, axis 0", lambda a: np.repeat(a, 2, axis=0)),
    ("repeat, axis 1", lambda a: np.repeat(a, 3, axis=1)),
    ("transpose, reversed", lambda a: a.transpose()),
    ("transpose, ints", lambda a: a.transpose(1, 0)),
    ("transpose, a tuple", lambda a: a.transpose((1, 0))),
    ("transpose, 1-d by one int", lambda a: a.reshape(-1).transpose(0)),
    ("sum, all", lambda a: a.sum()),
    ("sum, all, keepdims", lambda a: a.sum(keepdims=True)),
    ("sum, no axes", lambda a: a.sum(axis=())),
    ("sum, no axes, keepdims", lambda a: a.sum(axis=(), keepdims=True)),
    ("sum, axis", lambda a: np.sum(a, axis=1)),
    ("mean, all", lambda a: a.mean()),
    ("mean, all, keepdims", lambda a: a.mean(keepdims=True)),
    ("mean, axis, keepdims", lambda a: a.mean(axis=0, keepdims=True)),
    ("ones_like", lambda a: np.ones_like(a)),
    ("zeros_like", lambda a: np.zeros_like(a)),
    ("full_like", lambda a: np.full_like(a, 2.5)),
    ("clip", lambda a: np.clip(a, 1, 4)),
    ("cumsum", lambda a: np.cumsum(a, axis=1)),
    ("cumprod", lambda a: np.cumprod(a + 1, axis=0)),
    ("flip", lambda a: np.flip(a, axis=1)),
    ("roll", lambda a: np.roll(a, 1, axis=1)),
    ("swapaxes", lambda a: np.swapaxes(a, 0, 1)),
    ("moveaxis", lambda a: np.moveaxis(a, 0, -1)),
    ("tril", lambda a: np.tril(a)),
    ("triu", lambda a: np.triu(a, 1)),
    ("expand_dims", lambda a: np.expand_dims(a, 1)),
    ("squeeze", lambda a: np.squeeze(np.expand_dims(a, 0), 0)),
    ("ravel", lambda a: np.ravel(a)),
    ("outer", lambda a: np.outer(a, a)),
    ("einsum", lambda a: np.einsum("ij,ij->i", a, a)),
    ("tensordot", lambda a: np.tensordot(a, a, axes=([1], [1]))),
    ("concatenate", lambda a: np.concatenate([a, a * 2], axis=1)),
    ("stack", lambda a: np.stack([a, a * 2])),
    ("take", lambda a: np.take(a, [2, 0], axis=1)),
    ("pad", lambda a: np.pad(a, ((0, 1), (2, 0)))),
    ("var", lambda a: np.var(a, axis=1)),
    ("broadcast_to", lambda a: np.broadcast_to(a, (3, 2, 3))),
    # each function's default arguments too (a form no formula may use yet)
    ("where", lambda a: np.where(a > 2, a, a * 2)),
    ("take_along_axis", lambda a: np.take_along_axis(a, np.array([[2, 0], [1, 1]]), axis=1)),
    ("flip, all", lambda a: np.flip(a)),
    ("var, ddof", lambda a: np.var(a, axis=0, ddof=1)),
    ("cumsum, flat", lambda a: np.cumsum(a)),
    ("clip, upper only", lambda a: np.clip(a, None, 3)),
    ("diagonal", lambda a: np.diagonal(a)),
    ("diagonal, offset", lambda a: np.diagonal(a, 1)),
    ("cross, last axis", lambda a: np.cross(a, a * a)),
    ("cross, axis", lambda a: np.cross(np.swapaxes(a, 0, 1), np.swapaxes(a * a, 0, 1), axis=0)),
    ("reshape", lambda a: np.reshape(a, (3, 2))),
    ("copy", lambda a: np.copy(a)),
    ("dot", lambda a: np.dot(a, np.ones((3, 2)))),
    ("real", lambda a: np.real(a)),
    ("cumprod, flat", lambda a: np.cumprod(a + 1)),
    ("roll, flat", lambda a: np.roll(a, 2)),
    ("squeeze, all", lambda a: np.squeeze(np.expand_dims(a, (0, 2)))),
    # several axes at once, in any order and sign: each is the input's, not the one left after squeezing another
    ("squeeze, two axes", lambda a: np.squeeze(np.expand_dims(a, (0, 2)), (0, 2))),
    ("squeeze, negative axes, method", lambda a: np.expand_dims(a, (1, 3)).squeeze((-1, 1))),
    ("squeeze, axes out of order, keyword", lambda a: np.expand_dims(a, (0, 3)).squeeze(axis=(3, 0))),
    ("imag", lambda a: np.imag(a * (1 + 2j))),
    ("conj", lambda a: np.conj(a)),
    ("conjugate", lambda a: np.conjugate(a)),
    # the transposing attributes and methods on more than two dimensions (the last two axes, or the ones named)
    ("mT, 3-d", lambda a: a.reshape(1, 2, 3).mT),
    ("T, 3-d", lambda a: a.reshape(1, 2, 3).T),
    ("swapaxes, 3-d", lambda a: a.reshape(1, 2, 3).swapaxes(0, 2)),
    ("transpose, 3-d", lambda a: a.reshape(1, 2, 3).transpose(2, 0, 1)),
    # axes as NumPy gives them: its integers, an array (an inverse permutation by argsort), a list, None
    ("transpose, NumPy integers", lambda a: a.reshape(1, 2, 3).transpose(*np.array([2, 0, 1]))),
    ("transpose, an array", lambda a: a.reshape(1, 2, 3).transpose(np.argsort([1, 2, 0]))),
    ("transpose, a list", lambda a: a.reshape(1, 2, 3).transpose([1, 2, 0])),
    ("transpose, None", lambda a: a.reshape(1, 2, 3).transpose(None)),
])
def test_formulas_recorded_namespace_computes_as_numpy(name, call):
    """A backward formula is written once against NumPy's functions; under create_graph they run on recorded
    tensors and must give NumPy's results (here also for the forms no formula uses yet)."""
    from ember.autograd.recorded import RecordedArray

    x = np.arange(6.0).reshape(2, 3)
    got = call(RecordedArray(ember.tensor(x)))
    assert isinstance(got, RecordedArray), name
    np.testing.assert_array_equal(got.t.numpy(), call(x), err_msg=name, strict=True)  # (strict: shapes too)


def test_every_recorded_ufunc_computes_as_numpy():
    """Each NumPy ufunc a formula may call on recorded arrays (the whole table, used by a formula yet or not)
    gives NumPy's values, on one recorded operand and on two."""
    from ember.autograd import recorded
    from ember.autograd.recorded import RecordedArray

    rng = np.random.default_rng(0)
    a, b = rng.uniform(1.1, 1.9, (3, 3)), rng.uniform(1.1, 1.9, (3, 3))  # in every function's domain
    for name in recorded._UFUNCS:
        ufunc = getattr(np, name)
        x = a - 1 if name in ("arcsin", "arccos", "arctanh") else a - 1.5 if name == "cbrt" else a
        args = (x, b) if ufunc.nin == 2 else (x,)
        got = ufunc(*[RecordedArray(ember.tensor(v)) for v in args])
        assert isinstance(got, RecordedArray), name
        np.testing.assert_allclose(got.t.numpy(), ufunc(*args), rtol=1e-13, err_msg=name)
        if ufunc.nin == 2:  # a plain array on one side
            np.testing.assert_allclose(ufunc(x, RecordedArray(ember.tensor(b))).t.numpy(), ufunc(x, b), rtol=1e-13,
                                       err_msg=name)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "pow", "matmul", "eq", "ne", "lt", "le", "gt", "ge"])
def test_every_recorded_operator_computes_as_numpy(op):
    """A formula's operators on recorded arrays (recorded on the left, on the right, on both sides) give NumPy's
    values, on operands with ties (so that a strict comparison and a non-strict one differ) and NumPy's dtype."""
    import operator

    from ember.autograd.recorded import RecordedArray

    fn = getattr(operator, op)
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [2.0, 2.0, 2.0]])
    b = np.array([[1.0, 3.0, 2.0], [3.0, 1.0, 1.0], [2.0, 0.5, 4.0]])  # equal to a at four positions
    for left, right in ((RecordedArray(ember.tensor(a)), b), (a, RecordedArray(ember.tensor(b))),
                        (RecordedArray(ember.tensor(a)), RecordedArray(ember.tensor(b)))):
        got = fn(left, right)
        got = got.t.numpy() if isinstance(got, RecordedArray) else np.asarray(got)
        np.testing.assert_array_equal(got, fn(a, b), err_msg=op, strict=True)


@pytest.mark.parametrize("op", ["neg", "pos", "abs"])
def test_every_recorded_unary_operator_computes_as_numpy(op):
    import operator

    from ember.autograd.recorded import RecordedArray

    a = np.array([[-1.5, 0.0, 2.0]])
    got = getattr(operator, op)(RecordedArray(ember.tensor(a)))
    np.testing.assert_array_equal(got.t.numpy(), getattr(operator, op)(a), strict=True)


_SAME_ARRAY = {  # inputs that share one array: each saved entry is differentiated through its own input
    "x*x": lambda m, x: x * x,
    "x.detach()*x": lambda m, x: x.detach() * x,
    "x*x.detach()": lambda m, x: x * x.detach(),
    "atan2(x, x.detach())": lambda m, x: m.atan2(x, x.detach()),
    "atan2(x.detach(), x)": lambda m, x: m.atan2(x.detach(), x),
    "hypot(x, x)": lambda m, x: m.hypot(x, x + 1),
    "x.detach()*x*x": lambda m, x: m.mul(x.detach(), x) * x,
    "abs(x)**abs(x)": lambda m, x: x.abs() ** x.abs(),
}


def _second_order(m, fn, hooks: bool):
    x = m.tensor([0.5, -1.5, 2.0], dtype=m.float64, requires_grad=True)
    if hooks:  # a pack hook that copies: the two entries of x * x are packed apart
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = fn(m, x)
    else:
        y = fn(m, x)
    (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
    if not g.requires_grad:
        return g, None
    (gg,) = m.autograd.grad((g * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum(), x, allow_unused=True)
    return g, gg


@pytest.mark.parametrize("hooks", [False, True])
@pytest.mark.parametrize("name", list(_SAME_ARRAY))
def test_second_order_of_inputs_sharing_an_array(name, hooks):
    (eg, egg), (tg, tgg) = (_second_order(m, _SAME_ARRAY[name], hooks) for m in (ember, torch))
    assert_close(eg, tg)
    assert eg.requires_grad == tg.requires_grad
    assert (egg is None) == (tgg is None)
    if tgg is not None:
        assert_close(egg, tgg)


@pytest.mark.parametrize("name,call", [
    ("result_type, plain first", lambda a, p: np.result_type(p.astype(np.float32), a)),
    ("result_type, recorded first", lambda a, p: np.result_type(a, p.astype(np.int64))),
    ("shape of each", lambda a, p: np.shape(a) + np.shape(p)),
    ("ndim, size", lambda a, p: (np.ndim(a), np.size(a), np.ndim(p), np.size(p))),
    ("isrealobj, iscomplexobj", lambda a, p: (np.isrealobj(a), np.iscomplexobj(a), np.isrealobj(p * 1j),
                                              np.iscomplexobj(p * 1j), np.isrealobj(a * 1j), np.iscomplexobj(a * 1j))),
    ("concatenate", lambda a, p: np.concatenate([p, a], axis=0)),
    ("stack", lambda a, p: np.stack([a, p], axis=1)),
    ("where, plain branch", lambda a, p: np.where(p > 2, a, p)),
    ("add, plain left", lambda a, p: np.add(p, a)),
    ("maximum", lambda a, p: np.maximum(a, p)),
    ("take", lambda a, p: np.take(a, np.array([[1], [0]]), axis=0)),
    ("zeros_like of the recorded, shaped as the plain", lambda a, p: np.zeros_like(a, shape=np.shape(p))),
])
def test_recorded_namespace_with_a_plain_operand_computes_as_numpy(name, call):
    """Formulas mix recorded arrays with plain ones (a saved mask, a constant): each function given both, either
    first, gives NumPy's result, and its metadata (shape, ndim, dtype) reads the plain array as it is."""
    from ember.autograd.recorded import RecordedArray

    x, p = np.arange(6.0).reshape(2, 3), np.linspace(0.5, 4.0, 6).reshape(2, 3)
    got, want = call(RecordedArray(ember.tensor(x)), p), call(x, p)
    if isinstance(got, RecordedArray):
        np.testing.assert_array_equal(got.t.numpy(), want, err_msg=name, strict=True)
    else:
        assert got == want, name


@pytest.mark.parametrize("index", [
    (np.array([0.0, 1.0]), np.array([1, 2])), [0, 1], (np.array([True, False]),), (slice(None), np.array([0])),
], ids=["float array", "list", "bool mask", "slice"])
def test_recorded_multiply_at_takes_one_integer_array_per_dimension(index):
    """``numpy.multiply.at`` on a recorded buffer (a product formula's scatter) multiplies as NumPy's, repeated
    positions again, with one integer array per dimension; any other index is refused as a formula ember cannot
    record (never computed wrongly or failing inside NumPy)."""
    from ember.autograd.recorded import RecordedArray

    x = np.arange(1.0, 7.0).reshape(2, 3)
    rows, cols = np.array([0, 1, 0]), np.array([2, 2, 2])
    got, want = RecordedArray(ember.tensor(x)), x.copy()
    np.multiply.at(got, (rows, cols), np.array([2.0, 3.0, 5.0]))
    np.multiply.at(want, (rows, cols), np.array([2.0, 3.0, 5.0]))
    np.testing.assert_array_equal(got.t.numpy(), want, strict=True)
    with pytest.raises(HigherOrderError, match="numpy.multiply.at with an index other than one integer array"):
        np.multiply.at(RecordedArray(ember.tensor(x)), index, 2.0)
