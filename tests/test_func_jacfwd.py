"""``jacfwd``, ``hessian`` and the forward-mode ``autograd.functional.jacobian`` by one forward-mode run over the
whole tangent basis (``ember/func/_basis.py``), against PyTorch on the same float64 inputs: values, structures,
compositions, randomness, and which path ran (no backward pass for a plain function)."""

import numpy as np
import pytest
import torch

import ember
import ember.autograd
import ember.autograd.engine
import ember.func._basis
import ember.func._transforms
from tests.autodiff_oracle import arrays, mlp, same_error, vector_mlp
from tests.test_func_transforms import _run


@pytest.fixture
def paths(monkeypatch):
    """Counts of backward passes and of batched runs (True) or fallbacks (False) of jacfwd's forward mode."""
    counts = {"backward": 0, "batched": []}
    run_backward = ember.autograd.engine.run_backward
    forward_columns = ember.func._transforms.forward_columns

    def counting_backward(*args, **kwargs):
        counts["backward"] += 1
        return run_backward(*args, **kwargs)

    def counting_columns(*args, **kwargs):
        out = forward_columns(*args, **kwargs)
        counts["batched"].append(out is not None)
        return out

    monkeypatch.setattr(ember.autograd.engine, "run_backward", counting_backward)
    monkeypatch.setattr(ember.autograd, "run_backward", counting_backward)
    monkeypatch.setattr(ember.func._transforms, "forward_columns", counting_columns)
    monkeypatch.setattr(ember.func._basis, "forward_columns", counting_columns)
    return counts


def two_layer(m, w1, b1, w2, b2):
    F = m.nn.functional
    return lambda x: F.linear(m.tanh(F.linear(x, w1, b1)), w2, b2)


@pytest.mark.parametrize("batch", [1, 16])
def test_jacfwd_of_an_mlp_runs_it_once_without_backward(paths, batch):
    calls = []

    def call(m, xs):
        f = two_layer(m, *xs[1:])

        def counted(x):
            calls.append(m.__name__)
            return f(x)
        return m.func.jacfwd(counted)(xs[0])

    _run(call, ((batch, 5), (7, 5), (7,), (3, 7), (3,)))
    assert calls.count("ember") == 1
    assert paths == {"backward": 0, "batched": [True]}


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
def test_jacfwd_argnums_and_output_structures(paths, argnums):
    _run(lambda m, xs: m.func.jacfwd(vector_mlp(m), argnums=argnums)(xs[0], xs[1]))
    _run(lambda m, xs: m.func.jacfwd(lambda d: {"p": d["a"] * d["b"].sum(), "q": [d["a"].exp().sum()]})(
        {"a": xs[0], "b": xs[2]}))
    _run(lambda m, xs: m.func.jacfwd(lambda a: (a ** 3).sum())(xs[1]))  # a scalar output
    assert paths["backward"] == 0 and all(paths["batched"])


def test_jacfwd_has_aux_and_outputs_independent_of_the_input(paths):
    _run(lambda m, xs: m.func.jacfwd(lambda a: (a.sin(), {"s": a.cos().sum(), "l": [a * 2, xs[2]]}),
                                     has_aux=True)(xs[0]))
    _run(lambda m, xs: m.func.jacfwd(lambda a: (a.sum() * 0 + 1, xs[2].exp()), argnums=0)(xs[0]))
    assert paths["backward"] == 0 and all(paths["batched"])


def test_jacfwd_over_reverse_mode_and_hessian(paths):
    def call(m, xs):
        f = mlp(m)
        return (m.func.jacfwd(m.func.grad(f))(*xs), m.func.hessian(f)(*xs), m.func.hessian(f, argnums=(0, 2))(*xs),
                m.func.jacfwd(m.func.jacrev(f), argnums=0)(*xs))

    _run(call)
    # one batched forward-mode run per Jacobian; the reverse-mode gradient inside is one backward each
    assert paths == {"backward": 4, "batched": [True] * 4}


def test_vmap_of_jacfwd(paths):
    shapes = ((5, 3), (4, 3), (4,), (2, 4))
    _run(lambda m, xs: m.func.vmap(m.func.jacfwd(lambda x, w, b: m.tanh(w @ x + b).exp()), in_dims=(0, None, None))(
        *xs[:3]), shapes)
    _run(lambda m, xs: m.func.vmap(m.func.jacfwd(lambda x, w: m.tanh(w @ x), argnums=1), in_dims=(0, None))(
        *xs[:2]), shapes)
    assert paths["backward"] == 0 and all(paths["batched"])


def test_jacfwd_whose_result_must_stay_differentiable(paths):
    """Differentiable with respect to the captured weights from the one batched run's graph (no second run); with
    respect to the inputs, one column at a time."""

    def call(m, xs):
        x, w1, b1, w2 = xs
        f = mlp(m)
        jac = m.func.jacfwd(lambda a: f(a, w1, b1, w2))(x.detach())  # the weights require grad
        return jac, m.autograd.grad(jac.pow(2).sum(), (w1, b1, w2))

    _run(call, requires_grad=True)
    assert paths["batched"] == [True]

    def outer(m, xs):  # the inputs require grad: reverse mode over jacfwd
        f = mlp(m)
        return (m.func.grad(lambda a: m.func.jacfwd(f)(a, *xs[1:]).pow(2).sum())(xs[0]),
                m.func.jacrev(m.func.jacfwd(lambda a: m.tanh(xs[1] @ a)))(xs[0]))

    _run(outer)


def test_jacfwd_under_no_grad_is_batched_with_weights_that_require_grad(paths):
    def call(m, xs):
        x, w1, b1, w2 = xs
        with m.no_grad():
            return m.func.jacfwd(lambda a: mlp(m)(a, w1, b1, w2))(x)

    _run(call, requires_grad=True)
    assert paths == {"backward": 0, "batched": [True]}


def test_jacfwd_where_the_batched_run_cannot_apply(paths):
    # nested forward mode (one dual level at a time), and per-example weights without a forward-mode rule of
    # their batched linear: the one-column-at-a-time path, same results and no warning
    _run(lambda m, xs: m.func.jacfwd(m.func.jacfwd(mlp(m)))(*xs))
    _run(lambda m, xs: m.func.jacfwd(lambda x, w: m.nn.functional.linear(x, w).exp(), argnums=(0, 1))(xs[0], xs[1]))
    assert False in paths["batched"]


def test_jacfwd_randomness():
    x = arrays((3, 2))[0]
    same_error(lambda m: m.func.jacfwd(lambda a: a * m.rand(3, 2, dtype=m.float64))(m.tensor(x)))

    def draws(m, mode):
        """The Jacobian's diagonal and the draws of the function under vmap over the 6 basis vectors."""
        f = lambda a: a * m.rand(3, 2, dtype=m.float64)  # noqa: E731
        m.manual_seed(0)
        jac = m.func.jacfwd(f, randomness=mode)(m.tensor(x)).reshape(6, 6)
        m.manual_seed(0)
        drawn = m.func.vmap(lambda v: f(m.ones(3, 2, dtype=m.float64)) + v.sum() * 0, randomness=mode)(
            m.zeros(6, 6, dtype=m.float64)).reshape(6, 6)
        return jac, drawn

    for m in (torch, ember):  # each framework's draws: their generators differ, the semantics must not
        jac, drawn = draws(m, "same")
        assert np.allclose(jac.numpy(), np.diag(drawn[0].numpy()), atol=1e-15, rtol=0)
        assert np.allclose(drawn.numpy(), drawn[0].numpy())  # every basis vector saw one draw
        jac, drawn = draws(m, "different")
        assert np.allclose(jac.numpy(), np.diag(np.diag(drawn.numpy())), atol=1e-15, rtol=0)
        assert not np.allclose(drawn.numpy(), drawn[0].numpy())


def test_autograd_functional_forward_mode_jacobian_is_batched(paths):
    def call(m, xs):
        F = m.autograd.functional
        return (F.jacobian(lambda a, b: (m.tanh(b @ a).exp(), a.sum()), (xs[0], xs[1]), vectorize=True,
                           strategy="forward-mode"),
                F.jacobian(lambda a: a.sin() * 2, xs[1], vectorize=True, strategy="forward-mode"))

    _run(call)
    assert paths == {"backward": 0, "batched": [True, True]}
    x = arrays((3,))[0]
    with pytest.raises(RuntimeError, match="random"):  # as PyTorch's (whose message speaks of its older vmap)
        ember.autograd.functional.jacobian(lambda a: a * ember.rand(3, dtype=ember.float64), ember.tensor(x),
                                           vectorize=True, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="random"):
        torch.autograd.functional.jacobian(lambda a: a * torch.rand(3, dtype=torch.float64), torch.tensor(x),
                                           vectorize=True, strategy="forward-mode")


PRIMAL_READERS = {  # functions that read an input's value: PyTorch's jacfwd batches the tangents only, so they run
    "float": lambda m, x: x * float(x.sum()),
    "item": lambda m, x: x.sin() * x.sum().item(),
    "control_flow": lambda m, x: x ** 3 if x.sum() > 0 else x ** 2,
}


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True to a scalar")  # PyTorch's hessian
@pytest.mark.parametrize("name", list(PRIMAL_READERS))
def test_jacfwd_of_a_function_reading_its_input_falls_back_with_pytorchs_result(paths, name):
    f = PRIMAL_READERS[name]
    _run(lambda m, xs: m.func.jacfwd(lambda x: f(m, x))(xs[0]), ((4,),))
    _run(lambda m, xs: m.func.hessian(lambda x: f(m, x).sum())(xs[0]), ((3,),))
    _run(lambda m, xs: m.autograd.functional.jacobian(lambda x: f(m, x), xs[0], strategy="forward-mode",
                                                       vectorize=True), ((3,),))


COMPLEX_INSIDE = {  # real inputs and outputs, complex steps between: each tangent through a complex op
    "times_complex": lambda m, x: (x * (1 + 2j)).abs(),
    "cast_then_scale": lambda m, x: (x.to(m.complex128) * (1 - 3j)).imag,
    "exp_of_imaginary": lambda m, x: (x * 1j).exp().real * x,
    "rfft_magnitude": lambda m, x: m.fft.rfft(x).abs(),
    "polar_angle": lambda m, x: m.polar(x.exp(), x).angle(),
}


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # ops whose vmap runs once per example
@pytest.mark.parametrize("name", list(COMPLEX_INSIDE))
def test_jacfwd_through_complex_intermediates(name):
    f = COMPLEX_INSIDE[name]
    _run(lambda m, xs: m.func.jacfwd(lambda x: f(m, x))(xs[0]), ((5,),))


@pytest.mark.parametrize("name", list(COMPLEX_INSIDE))
def test_forward_mode_tangents_through_complex_ops(name):
    """One tangent through each complex step, as PyTorch's forward-mode AD computes it (a complex derivative
    enters PyTorch's backward formulas conjugated, so those ops' tangents cannot come from them directly)."""
    f = COMPLEX_INSIDE[name]

    def call(m, xs):
        fa = m.autograd.forward_ad
        with fa.dual_level():
            return fa.unpack_dual(f(m, fa.make_dual(xs[0], xs[1]))).tangent

    _run(call, ((5,), (5,)))


@pytest.mark.parametrize("transform", ["jacfwd", "hessian"])
@pytest.mark.parametrize("randomness", ["same", "different"])
def test_a_function_capturing_a_weight_that_requires_grad_runs_once_per_call(transform, randomness):
    """The Jacobian must stay differentiable with respect to the captured weight; the function still runs once per
    call, as PyTorch's (a second run drew random numbers again: the values of every later call, and the generator's
    state after, differed from PyTorch's), and the weight's gradient through the Jacobian is PyTorch's."""
    results = {}
    for m in (torch, ember):
        w = m.tensor([0.5, -1.5, 2.0], dtype=m.float64, requires_grad=True)
        x = m.tensor([0.3, -0.7, 1.1], dtype=m.float64)
        calls = []

        def f(x, m=m, w=w, calls=calls):
            calls.append(1)
            return (m.sin(x * w) * x * m.rand(3, dtype=m.float64)).sum()

        inner = f if transform == "jacfwd" else m.func.jacrev(f)  # (hessian is jacfwd(jacrev(f)), here with randomness)
        m.manual_seed(0)
        jacobians = [m.func.jacfwd(inner, randomness=randomness)(x) for _ in range(2)]
        sum(j.sum() for j in jacobians).backward()
        results[m.__name__] = ([j.detach().numpy() for j in jacobians], w.grad.numpy(), m.rand(2).numpy(), len(calls))
    (want_j, want_g, want_next, want_calls), (got_j, got_g, got_next, got_calls) = results["torch"], results["ember"]
    assert got_calls == want_calls == 2
    for got, want in zip(got_j, want_j):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got_next, want_next)
