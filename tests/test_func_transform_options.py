"""Each public function of ``torch.func``'s autodiff transforms (``ember/func/_transforms.py``) at its options and
refusals, against PyTorch on the same float64 inputs: every form of ``argnums`` (int, negative, tuple, nested,
out of range, None) for each transform that takes one; ``has_aux`` with an output that is not a pair; outputs that
are not tensors, not scalars, or empty; the keyword defaults (``vjp_fn``'s ``retain_graph`` and ``create_graph``,
``jvp``'s ``strict``, ``jacrev``'s ``chunk_size`` at and past the number of outputs, ``jacfwd``'s
``randomness``); ``jvp``'s and ``linearize``'s checks of primals and tangents; complex refusals on ``jacfwd``'s
one-column-at-a-time path; ``jvp`` run on dual tensors (no backward pass) unless its tangents require grad; and
each transform composed with ``vmap``."""

import warnings

import numpy as np
import pytest
import torch

import ember
from tests.autodiff_oracle import arrays, assert_same, both, same_error
from tests.test_func_jacfwd import paths  # noqa: F401  (the fixture)

A, B, C = arrays((3,), (3,), (2,), seed=11)


def _inputs(m, requires_grad=False):
    return tuple(m.tensor(v, requires_grad=requires_grad) for v in (A, B, C))


def _scalar(a, b, c):
    """A scalar of three inputs, each reaching it through a different op (so that each gradient differs)."""
    return (a.sin() * b).sum() + (c * a.sum()).pow(2).sum() + b.exp().mean()


TRANSFORMS = {
    "grad": lambda m, **kw: m.func.grad(_scalar, **kw),
    "grad_and_value": lambda m, **kw: m.func.grad_and_value(_scalar, **kw),
    "jacrev": lambda m, **kw: m.func.jacrev(_scalar, **kw),
    "jacfwd": lambda m, **kw: m.func.jacfwd(_scalar, **kw),
    "hessian": lambda m, **kw: m.func.hessian(_scalar, **kw),
}


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("argnums", [0, 1, 2, -1, -3, (0,), (2, 0), (1, -1), (0, 1, 2), (-1, -2, -3)])
def test_argnums_that_name_arguments(transform, argnums):
    """The result has one entry per argnum in the order given (a tuple for a tuple, even of one), negative
    argnums counting from the last argument. (PyTorch's ``jacfwd``, so its ``hessian``, gives zeros for a
    negative argnum: its argument replacement compares the argnum as given; docs/api.md lists the difference, and
    ember's is compared with PyTorch's for the same argnums counted from the first.)"""
    theirs = argnums
    if transform in ("jacfwd", "hessian"):
        theirs = argnums % 3 if isinstance(argnums, int) else tuple(a % 3 for a in argnums)
    assert_same(TRANSFORMS[transform](ember, argnums=argnums)(*_inputs(ember)),
                TRANSFORMS[transform](torch, argnums=theirs)(*_inputs(torch)))


def test_pytorchs_jacfwd_of_a_negative_argnum_is_zeros():
    """The difference above, pinned: if PyTorch's ``jacfwd`` changes, the comparison above must change too."""
    assert not torch.func.jacfwd(_scalar, argnums=-1)(*_inputs(torch)).any()
    assert ember.func.jacfwd(_scalar, argnums=-1)(*_inputs(ember)).abs().min() > 0


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("argnums", [3, -4, (0, 3), (-4, 1), ((0, 1), 2), (0, (1,)), [0, 1], (), (0, -3), 1.0,
                                     "0"])
def test_argnums_refused_as_pytorch(transform, argnums):
    """Out of range either way, nested, a list, empty, one argument named twice, not an int: PyTorch's
    RuntimeError and message, whichever transform."""
    same_error(lambda m: TRANSFORMS[transform](m, argnums=argnums)(*_inputs(m)))


def test_argnums_none():
    """``jacfwd`` takes ``argnums=None`` as every positional argument (a tuple of Jacobians, as PyTorch's);
    ``grad``, ``grad_and_value``, ``jacrev`` and ``hessian`` refuse it."""
    def call(m, xs):
        a, b = xs
        return (m.func.jacfwd(lambda a, b: a.sin() * b.sum(), argnums=None)(a, b),
                m.func.jacfwd(lambda a: (a.exp(), {"s": a.sum()}), argnums=None)(a),
                m.func.jacfwd(lambda a, b: ((a * b).sum(), a), argnums=None, has_aux=True)(a, b))

    for requires_grad in (False, True):  # the batched forward-mode run, and one column at a time
        theirs, mine = both([A, B], requires_grad)
        assert_same(call(ember, mine), call(torch, theirs))
    for transform in ("grad", "grad_and_value", "jacrev", "hessian"):
        same_error(lambda m, transform=transform: TRANSFORMS[transform](m, argnums=None)(*_inputs(m)))


AUX_TRANSFORMS = {
    "grad": lambda m, f, x: m.func.grad(f, has_aux=True)(x),
    "grad_and_value": lambda m, f, x: m.func.grad_and_value(f, has_aux=True)(x),
    "vjp": lambda m, f, x: m.func.vjp(f, x, has_aux=True),
    "jvp": lambda m, f, x: m.func.jvp(f, (x,), (m.ones_like(x),), has_aux=True),
    "jacrev": lambda m, f, x: m.func.jacrev(f, has_aux=True)(x),
    "jacfwd": lambda m, f, x: m.func.jacfwd(f, has_aux=True)(x),
}
NOT_PAIRS = {
    "a tensor": lambda x: x.sum(),
    "a triple": lambda x: (x.sum(), x, x),
    "a one-tuple": lambda x: (x.sum(),),
    "a list pair": lambda x: [x.sum(), x],
    "None": lambda x: None,
}


@pytest.mark.parametrize("transform", list(AUX_TRANSFORMS))
@pytest.mark.parametrize("output", list(NOT_PAIRS))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_has_aux_refuses_an_output_that_is_not_a_pair(transform, output, requires_grad):
    """PyTorch's message names the transform's API (``jacfwd``'s is ``jvp``'s, ``jacrev``'s ``vjp``'s), on each of
    jacfwd's paths (an input requiring grad takes one column at a time)."""
    same_error(lambda m: AUX_TRANSFORMS[transform](m, NOT_PAIRS[output], m.tensor(A, requires_grad=requires_grad)))


def test_has_aux_of_a_pair():
    """The aux (a pytree of tensors depending on the input) comes back beside each transform's result, detached
    from the transform's input, as PyTorch's."""

    def f(m):
        return lambda x: ((x.sin() * x).sum(), {"h": [x.exp()], "s": x.sum()})

    def call(m):
        x = m.tensor(A)
        t = m.ones_like(x)
        out, fn, aux = m.func.vjp(f(m), x, has_aux=True)
        return (m.func.grad(f(m), has_aux=True)(x), m.func.grad_and_value(f(m), has_aux=True)(x),
                (out, fn(m.tensor(1.0, dtype=m.float64)), aux), m.func.jvp(f(m), (x,), (t,), has_aux=True),
                m.func.jacrev(f(m), has_aux=True)(x), m.func.jacrev(f(m), has_aux=True, chunk_size=1)(x),
                m.func.jacfwd(f(m), has_aux=True)(x))

    assert_same(call(ember), call(torch))


def test_has_aux_off_by_default():
    """Without ``has_aux`` a pair is the output itself: ``grad`` refuses it (not a tensor), the others
    differentiate both entries."""
    pair = lambda x: (x.sin().sum(), x.cos())  # noqa: E731
    same_error(lambda m: m.func.grad(pair)(m.tensor(A)))
    same_error(lambda m: m.func.grad_and_value(pair)(m.tensor(A)))

    def call(m):
        x = m.tensor(A)
        out, fn = m.func.vjp(pair, x)
        return (out, fn((m.tensor(1.0, dtype=m.float64), m.ones_like(x))), m.func.jvp(pair, (x,), (m.ones_like(x),)),
                m.func.jacrev(pair)(x), m.func.jacfwd(pair)(x), m.func.linearize(pair, x)[1](m.ones_like(x)))

    assert_same(call(ember), call(torch))


OUTPUT_TRANSFORMS = {
    "grad": lambda m, f, x: m.func.grad(f)(x),
    "grad_and_value": lambda m, f, x: m.func.grad_and_value(f)(x),
    "vjp": lambda m, f, x: m.func.vjp(f, x),
    "jvp": lambda m, f, x: m.func.jvp(f, (x,), (m.ones_like(x),)),
    "jacrev": lambda m, f, x: m.func.jacrev(f)(x),
    "jacfwd": lambda m, f, x: m.func.jacfwd(f)(x),
}
BAD_OUTPUTS = {
    "a number": lambda x: 3.0,
    "None": lambda x: None,
    "an empty tuple": lambda x: (),
    "an empty dict": lambda x: {},
    "a tensor and a number": lambda x: (x.sum(), 2.0),
    "a dict of a string": lambda x: {"a": x.sum(), "b": "s"},
}


@pytest.mark.parametrize("transform", list(OUTPUT_TRANSFORMS))
@pytest.mark.parametrize("output", list(BAD_OUTPUTS))
def test_outputs_that_are_not_tensors_refused_as_pytorch(transform, output):
    same_error(lambda m: OUTPUT_TRANSFORMS[transform](m, BAD_OUTPUTS[output], m.tensor(A)))


@pytest.mark.parametrize("transform", ["grad", "grad_and_value"])
@pytest.mark.parametrize("shape", [(1,), (3,), (1, 1), (2, 3), (1, 1, 1)])
def test_grad_refuses_an_output_that_is_not_a_scalar(transform, shape):
    """PyTorch's message counts the output's dims (one element is not enough: a scalar has none)."""
    same_error(lambda m: OUTPUT_TRANSFORMS[transform](m, lambda x: x.sum().expand(shape) * 1, m.tensor(A)))


def test_grad_takes_a_scalar_of_any_floating_dtype_and_integer_outputs_in_jacfwd():
    def call(m):
        x = m.tensor(A)
        return (m.func.grad(lambda a: a.float().sin().sum())(x), m.func.grad_and_value(lambda a: a.sum() * 0)(x),
                m.func.grad(lambda a: (a > 0).sum().to(a.dtype))(x), m.func.jacfwd(lambda a: (a > 0).long())(x))

    assert_same(call(ember), call(torch))


def _vjp_fn_of_captured(m, cotangent_requires_grad=False):
    w = m.tensor(B, requires_grad=True)
    out, fn = m.func.vjp(lambda a: (a * w).sin(), m.tensor(A))
    return w, fn, m.ones(3, dtype=m.float64, requires_grad=cotangent_requires_grad)


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("create_graph", [None, True, False])
@pytest.mark.parametrize("what", ["captured weight", "cotangent requiring grad", "plain"])
def test_vjp_fn_create_graph_default_follows_grad_mode(grad_mode, create_graph, what):
    """``create_graph=None`` records where grad mode is on; an explicit value wins either way; nothing is
    recorded where neither the outputs nor the cotangents reach a tensor outside the transform."""

    def call(m):
        if what == "plain":
            _, fn = m.func.vjp(lambda a: a.sin() * a, m.tensor(A))
            cot = m.ones(3, dtype=m.float64)
        else:
            _, fn, cot = _vjp_fn_of_captured(m, cotangent_requires_grad=what != "captured weight")
        with m.set_grad_enabled(grad_mode):
            return fn(cot) if create_graph is None else fn(cot, create_graph=create_graph)

    assert_same(call(ember), call(torch))


@pytest.mark.parametrize("captured", [False, True])
def test_vjp_fn_retains_the_graph_by_default(captured):
    """Called again after the default, the graph is still there; after ``retain_graph=False`` PyTorch's
    "backward through the graph a second time" (checked where nothing is recorded: where the results are
    recorded, ember keeps the graph)."""

    def fn_and_cotangent(m):
        if captured:
            return _vjp_fn_of_captured(m)[1:]
        return m.func.vjp(lambda a: a.sin() * a, m.tensor(A))[1], m.ones(3, dtype=m.float64)

    def call(m, **kw):
        fn, cot = fn_and_cotangent(m)
        first = fn(cot, **kw)
        return first, fn(cot * 2)

    assert_same(call(ember), call(torch))
    assert_same(call(ember, retain_graph=True), call(torch, retain_graph=True))
    if not captured:
        same_error(lambda m: call(m, retain_graph=False))


def test_vjp_of_no_primals_and_of_a_primal_that_is_not_a_tensor():
    def call(m):
        out, fn = m.func.vjp(lambda: m.ones(2, dtype=m.float64) * 3)
        return out, fn(m.ones(2, dtype=m.float64))

    assert_same(call(ember), call(torch))
    same_error(lambda m: m.func.vjp(lambda a: a, 2.0), ValueError)
    same_error(lambda m: m.func.vjp(lambda a, b: a * b, m.tensor(A), [2.0]), ValueError)


@pytest.mark.parametrize("independent", ["a constant", "a detached input", "an output and a constant"])
def test_jvp_strict_defaults_to_zeros(independent):
    """``strict=False`` (the default) gives a zero tangent to an output independent of the primals; ``strict=True``
    refuses it, with or without ``has_aux``."""
    f = {"a constant": lambda m: lambda a: m.ones(2, dtype=m.float64),
         "a detached input": lambda m: lambda a: a.detach() * 2,
         "an output and a constant": lambda m: lambda a: (a.sin(), m.zeros(2, dtype=m.float64))}[independent]

    def call(m, **kw):
        return m.func.jvp(f(m), (m.tensor(A),), (m.tensor(B),), **kw)

    assert_same(call(ember), call(torch))
    assert_same(call(ember, strict=False), call(torch, strict=False))
    same_error(lambda m: call(m, strict=True))
    same_error(lambda m: m.func.jvp(lambda a: (f(m)(a), a), (m.tensor(A),), (m.tensor(B),), strict=True,
                                    has_aux=True))


def test_jvp_of_a_dependent_output_with_strict():
    def call(m):
        return m.func.jvp(lambda a, b: (a * b, {"s": b.exp().sum()}), (m.tensor(A), m.tensor(B)),
                          (m.tensor(B), m.tensor(A)), strict=True)

    assert_same(call(ember), call(torch))


def test_jvp_primals_and_tangents_checked_as_pytorch():
    x = A
    same_error(lambda m: m.func.jvp(lambda a: a, [m.tensor(x)], (m.tensor(x),)))  # primals a list
    same_error(lambda m: m.func.jvp(lambda a, b: a * b, (m.tensor(x), m.tensor(x)), (m.tensor(x),)))
    same_error(lambda m: m.func.jvp(lambda d: d["a"], ({"a": m.tensor(x)},), ({"b": m.tensor(x)},)))
    same_error(lambda m: m.func.jvp(lambda a: a, (m.tensor(x),), (m.tensor(x)[:2],)))  # another shape
    same_error(lambda m: m.func.jvp(lambda a: a, (m.tensor(x),), (None,)))
    same_error(lambda m: m.func.jvp(lambda a: a, (m.tensor([1, 2]),), (m.tensor([1.0, 2.0]),)), ValueError)

    def another_dtype(m):  # a tangent of another floating dtype is accepted
        return m.func.jvp(lambda a: a.sin() * 2, (m.tensor(x),), (m.tensor(x, dtype=m.float32),))

    assert_same(another_dtype(ember), another_dtype(torch), atol=1e-6)


def test_jvp_runs_the_function_on_dual_tensors_without_backward(paths):  # noqa: F811
    """Plain primals and tangents: ``f`` runs once, each op computing its tangent, no backward pass (the
    double-backward trick would run two); tangents that require grad take the double-backward trick, so that the
    output tangents are differentiable with respect to them, as PyTorch's."""
    calls = []

    def call(m, tangent_requires_grad):
        def f(a, b):
            calls.append(m.__name__)
            return (a.sin() * b).tanh(), b.exp().sum()

        t = (m.tensor(B, requires_grad=tangent_requires_grad), m.tensor(A))
        out = m.func.jvp(f, (m.tensor(A), m.tensor(B)), t)
        return out, (m.autograd.grad(out[1][0].sum(), t[0]) if tangent_requires_grad else None)

    assert_same(call(ember, False), call(torch, False))
    assert calls.count("ember") == 1 and paths["backward"] == 0
    assert_same(call(ember, True), call(torch, True))
    assert paths["backward"] > 0


@pytest.mark.parametrize("chunk_size", [1, 2, 5, 6, 7, 100])
@pytest.mark.parametrize("preallocate", [False, True])
def test_jacrev_chunk_size_at_and_past_the_number_of_outputs(chunk_size, preallocate):
    """Six output elements in two outputs: chunks that split an output, end at its edge, hold all six, or ask
    for more; PyTorch's private ``_preallocate_and_copy`` is accepted and gives the same Jacobian."""

    def call(m):
        f = lambda a, b: ((a * b).sin(), (a.sum() * b).exp())  # noqa: E731
        return m.func.jacrev(f, argnums=(0, 1), chunk_size=chunk_size, _preallocate_and_copy=preallocate)(
            m.tensor(A), m.tensor(B))

    assert_same(call(ember), call(torch))


@pytest.mark.parametrize("chunk_size", [0, -1, -100])
def test_jacrev_refuses_a_chunk_size_below_one_when_built(chunk_size):
    same_error(lambda m: m.func.jacrev(lambda a: a, chunk_size=chunk_size), ValueError)


def test_jacfwd_randomness_defaults_to_error():
    same_error(lambda m: m.func.jacfwd(lambda a: a * m.rand(3, dtype=m.float64))(m.tensor(A)))
    same_error(lambda m: m.func.hessian(lambda a: (a * m.rand(3, dtype=m.float64)).sum())(m.tensor(A)))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_complex_refusals_name_the_side_on_each_jacfwd_path(requires_grad):
    """An input requiring grad takes ``jacfwd``'s one-column-at-a-time path: its refusal of a complex output
    still names the outputs (and the flattened index), as the batched path's and PyTorch's."""

    def x(m):
        return m.tensor(A, requires_grad=requires_grad)

    same_error(lambda m: m.func.jacfwd(lambda a: (a, a.to(m.complex128)))(x(m)))
    same_error(lambda m: m.func.jacfwd(lambda a: {"r": a * 2, "c": a * 1j})(x(m)))
    same_error(lambda m: m.func.jacfwd(lambda a, z: a * z.real, argnums=(0, 1))(x(m), m.ones(3, dtype=m.complex128)))
    same_error(lambda m: m.func.jacrev(lambda a, z: a * z.real, argnums=1)(x(m), m.ones(3, dtype=m.complex128)))
    same_error(lambda m: m.func.jacrev(lambda a: (a, a * 1j))(x(m)))


def test_linearize_checks_each_tangent_as_pytorch():
    """The first tangent that differs from its primal is named by its flattened index, shape before dtype."""

    def fn(m):
        return m.func.linearize(lambda a, d: a * d["b"] + d["c"].sum(), m.tensor(A), {"b": m.tensor(B),
                                                                                       "c": m.tensor(C)})[1]

    def tangents(m, b=(3,), c=(2,), dtype_b=None, dtype_c=None):
        return (m.ones(3, dtype=m.float64), {"b": m.ones(b, dtype=dtype_b or m.float64),
                                             "c": m.ones(c, dtype=dtype_c or m.float64)})

    same_error(lambda m: fn(m)(*tangents(m, c=(3,))))
    same_error(lambda m: fn(m)(*tangents(m, b=(2,), c=(4,))))
    same_error(lambda m: fn(m)(*tangents(m, dtype_c=m.float32)))
    same_error(lambda m: fn(m)(*tangents(m, dtype_b=m.float32, c=(3,))))
    same_error(lambda m: fn(m)(*tangents(m, b=(3, 1))))
    same_error(lambda m: fn(m)(tangents(m)))  # the tangents as one tuple
    assert_same(fn(ember)(*tangents(ember)), fn(torch)(*tangents(torch)))


def test_linearize_refuses_primals_jvp_refuses():
    same_error(lambda m: m.func.linearize(lambda a: a * 2, m.tensor([1, 2])), ValueError)
    same_error(lambda m: m.func.linearize(lambda a, b: a * b, m.tensor(A), m.tensor([1, 2, 3])), ValueError)


def _vmapped(m):
    f = lambda a: (a.sin() * a.sum()).exp()  # noqa: E731
    scalar = lambda a, w: (a.tanh() * w).pow(2).sum()  # noqa: E731
    xs, w = m.tensor(np.stack([A, B, A * B])), m.tensor(C[:1].repeat(3))
    vmap = m.func.vmap
    return (vmap(m.func.grad(scalar))(xs, m.tensor(np.stack([B, A, B]))),
            vmap(m.func.grad_and_value(scalar, argnums=1), in_dims=(0, None))(xs, w),
            vmap(m.func.jacrev(f, chunk_size=2))(xs), vmap(m.func.jacfwd(f))(xs),
            vmap(m.func.hessian(lambda a: f(a).sum()))(xs),
            vmap(lambda p, c: m.func.vjp(f, p)[1](c))(xs, xs.cos()),
            m.func.grad(lambda a: vmap(lambda r: f(r).sum())(a).sum())(xs),
            m.func.jacrev(vmap(f))(xs), m.func.jacfwd(vmap(f))(xs),
            vmap(lambda p, t: m.func.jvp(f, (p,), (t,)))(xs, xs.cos()),
            vmap(m.func.linearize(f, xs[0])[1])(xs.cos()))


def test_each_transform_composed_with_vmap():
    with warnings.catch_warnings():
        # (ember runs vmap of jvp and of linearize's jvp_fn once per example, and says so; PyTorch's
        # linearize warns of its constant folding)
        warnings.filterwarnings("ignore", "There is a performance drop")
        warnings.filterwarnings("ignore", "Attempted to insert a get_attr Node")
        assert_same(_vmapped(ember), _vmapped(torch))


def test_results_stay_on_the_graph_of_a_captured_weight_the_caller_let_go_of():
    """A weight the function captured that requires grad, no longer held by the caller (only the recorded graph
    holds it, and ember's accumulator of a leaf holds it weakly): ``vjp_fn``'s and ``jvp``'s results still depend
    on it and require grad, as PyTorch's."""

    def call(m):
        def make():
            w = m.tensor(B, requires_grad=True)
            return lambda a: (a * w).sin()

        f = make()
        _, fn = m.func.vjp(f, m.tensor(A))
        return (fn(m.ones(3, dtype=m.float64)), m.func.vjp(make(), m.tensor(A))[1](m.ones(3, dtype=m.float64)),
                m.func.jvp(make(), (m.tensor(A),), (m.ones(3, dtype=m.float64),)))

    assert_same(call(ember), call(torch))
