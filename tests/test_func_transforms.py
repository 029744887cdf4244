"""``torch.func``'s autodiff transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, linearize)
against PyTorch on the same inputs: values, structures, ``argnums``, ``has_aux``, errors, composition."""

import warnings

import numpy as np
import pytest
import torch

import ember
from tests.autodiff_oracle import arrays, assert_same, both, mlp, same_error, vector_mlp

SHAPES = ((3,), (4, 3), (4,), (2, 4))


def _run(call, shapes=SHAPES, requires_grad=False):
    """``call(m, xs)`` with ``m`` torch and ember on the same float64 inputs; the results compared."""
    theirs, mine = both(arrays(*shapes), requires_grad)
    t = call(torch, theirs)
    e = call(ember, mine)
    assert_same(e, t)
    return e, t


@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 2), (3, 1)])
def test_grad_and_grad_and_value_with_argnums(argnums):
    _run(lambda m, xs: m.func.grad(mlp(m), argnums=argnums)(*xs))
    _run(lambda m, xs: m.func.grad_and_value(mlp(m), argnums=argnums)(*xs))


def test_grad_of_a_pytree_argument_and_has_aux():
    def loss(m):
        def f(params, x):
            out = mlp(m)(x, params["w1"], params["b"][0], params["b"][1])
            return out, {"out": out * 2, "h": [x.sum()]}
        return f

    def call(m, xs):
        params = {"w1": xs[1], "b": [xs[2], xs[3]]}
        return (m.func.grad(loss(m), has_aux=True)(params, xs[0]),
                m.func.grad_and_value(loss(m), has_aux=True)(params, xs[0]))

    e, _ = _run(call)
    assert list(e[0][0]) == ["w1", "b"] and isinstance(e[0][0]["b"], list)


def test_grad_zeros_for_an_unused_input_and_kwargs_pass_through():
    _run(lambda m, xs: m.func.grad(lambda a, b, scale=1.0: (a.exp() * scale).sum(), argnums=(0, 1))(
        xs[0], xs[1], scale=3.0))


def test_grad_results_are_detached_unless_they_reach_the_callers_graph():
    def call(m, xs):
        x, w = xs
        plain = m.func.grad(lambda a: (a * a * w.detach()).sum())(x.detach())
        with m.no_grad():  # the caller records nothing: no graph even though x and w require grad
            under_no_grad = m.func.grad_and_value(lambda a: (a * a * w).sum())(x)
            jac = m.func.jacrev(lambda a: a.exp() * w)(x)
        return plain, under_no_grad, jac

    _run(call, ((3,), (3,)), requires_grad=True)


def test_grad_errors_as_pytorch():
    x = arrays((3,))[0]
    same_error(lambda m: m.func.grad(lambda a: a * 2)(m.tensor(x)))
    same_error(lambda m: m.func.grad(lambda a: 3.0)(m.tensor(x)))
    same_error(lambda m: m.func.grad(lambda a: a.sum(), has_aux=True)(m.tensor(x)))
    same_error(lambda m: m.func.grad(lambda a: a.sum(), argnums=2)(m.tensor(x)))
    same_error(lambda m: m.func.grad(lambda a: a.sum(), argnums=())(m.tensor(x)))
    same_error(lambda m: m.func.grad(lambda a, b: a.sum(), argnums=(0, 0))(m.tensor(x), m.tensor(x)))
    same_error(lambda m: m.func.grad(lambda a: a.sum(), argnums=[0])(m.tensor(x)))
    same_error(lambda m: m.func.grad(lambda a: a.sum(), argnums=0.5)(m.tensor(x)))
    same_error(lambda m: m.func.grad(lambda a: a, argnums=0)(2.0), ValueError)


def test_vjp_structures_has_aux_and_repeated_calls():
    def call(m, xs):
        x, w = xs[0], xs[1]
        out, fn, aux = m.func.vjp(lambda a, d: ({"y": m.tanh(d["w"] @ a)}, [a.sum() * 2]), x, {"w": w},
                                  has_aux=True)
        cot = {"y": m.tensor(arrays((4,), seed=4)[0])}
        return out, fn(cot), fn(cot), aux

    e, _ = _run(call)
    assert isinstance(e[1], tuple) and isinstance(e[1][1], dict)


def test_vjp_errors_as_pytorch():
    x = arrays((3,))[0]
    same_error(lambda m: m.func.vjp(lambda a: (a, a), m.tensor(x))[1](m.ones(3)))
    same_error(lambda m: m.func.vjp(lambda a: (a > 0).long(), m.tensor(x)))
    same_error(lambda m: m.func.vjp(lambda a: a, m.tensor(x), has_aux=True))
    same_error(lambda m: m.func.vjp(lambda a: None, m.tensor(x)))
    same_error(lambda m: m.func.vjp(lambda a: (a, 3), m.tensor(x)))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacrev_shapes_and_structures(argnums):
    _run(lambda m, xs: m.func.jacrev(vector_mlp(m), argnums=argnums)(xs[0], xs[1]))
    _run(lambda m, xs: m.func.jacrev(lambda d: {"a": d["p"].sin(), "b": [d["q"].sum() * d["p"]]})(
        {"p": xs[0], "q": xs[1]}))


def test_jacrev_has_aux_chunk_size_and_errors():
    _run(lambda m, xs: m.func.jacrev(lambda a: (a.exp(), {"s": a.sum()}), has_aux=True)(xs[0]))
    for chunk in (1, 2, None):
        _run(lambda m, xs, chunk=chunk: m.func.jacrev(vector_mlp(m), chunk_size=chunk)(xs[0], xs[1]))
    same_error(lambda m: m.func.jacrev(lambda a: a, chunk_size=0), ValueError)
    x = arrays((3,))[0]
    same_error(lambda m: m.func.jacrev(lambda a: a)(m.tensor(x, dtype=m.complex128)))
    same_error(lambda m: m.func.jacrev(lambda a: a.to(m.complex128) * 2)(m.tensor(x)))  # a complex output


def test_jacrev_of_a_network_through_functional_call():
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    enet = ember.nn.Sequential(ember.nn.Linear(3, 5), ember.nn.Tanh(), ember.nn.Linear(5, 2)).double()
    enet.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    x = arrays((4, 3))[0]
    results = []
    for m, net in ((torch, tnet), (ember, enet)):
        params = {k: v.detach() for k, v in net.named_parameters()}
        def run(p, inp, m=m, net=net):
            return m.func.functional_call(net, p, (inp,))

        jac = m.func.jacrev(run)(params, m.tensor(x))
        g = m.func.grad(lambda p, inp, run=run: run(p, inp).pow(2).mean())(params, m.tensor(x))
        results.append((jac, g))
    assert_same(results[1], results[0])


def test_jvp_structures_has_aux_and_strict():
    v = arrays(*SHAPES, seed=7)

    def call(m, xs):
        tangents = tuple(m.tensor(a) for a in v)
        return (m.func.jvp(mlp(m), tuple(xs), tangents),
                m.func.jvp(lambda d: ({"o": d["a"].exp() * d["b"].sum()}, d["a"] * 0 + 1), ({"a": xs[0], "b": xs[1]},),
                           ({"a": tangents[0], "b": tangents[1]},), has_aux=True),
                m.func.jvp(lambda a, b: (a.exp(), m.ones(2)), (xs[0], xs[1]), tangents[:2]))

    _run(call)
    x = arrays((3,))[0]
    same_error(lambda m: m.func.jvp(lambda a: m.ones(2), (m.tensor(x),), (m.ones(3),), strict=True))
    same_error(lambda m: m.func.jvp(lambda a: a, m.tensor(x), m.ones(3)))
    same_error(lambda m: m.func.jvp(lambda a: a, (m.tensor(x),), [m.ones(3)]))
    same_error(lambda m: m.func.jvp(lambda a: a, (m.tensor(x),), (m.ones(4),)))
    same_error(lambda m: m.func.jvp(lambda a: a, (m.tensor([1, 2]),), (m.tensor([1, 2]),)), ValueError)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacfwd_matches_and_equals_jacrev(argnums):
    e, t = _run(lambda m, xs: m.func.jacfwd(vector_mlp(m), argnums=argnums)(xs[0], xs[1]))
    assert_same(e, torch.func.jacrev(vector_mlp(torch), argnums=argnums)(*both(arrays(*SHAPES))[0][:2]))
    _run(lambda m, xs: m.func.jacfwd(lambda a: (a.exp(), {"s": a.sum()}), has_aux=True)(xs[0]))


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("reads_a_value", [False, True])
def test_jacfwd_of_an_output_independent_of_the_input_is_zero(requires_grad, reads_a_value):
    """Zeros, not jvp(strict=True)'s error, on each of jacfwd's paths: the batched forward mode, and one column at
    a time (an input that requires grad, whose Jacobian stays differentiable, or a function reading its input's
    value)."""

    def call(m, xs):
        def f(a):
            return a.sin() * (float(a.sum()) if reads_a_value else 1.0), m.ones(2, dtype=a.dtype)

        return m.func.jacfwd(f)(xs[0])

    _run(call, shapes=((3,),), requires_grad=requires_grad)


def test_hessian_and_compositions():
    def call(m, xs):
        f = mlp(m)
        return (m.func.hessian(f)(*xs), m.func.hessian(f, argnums=(0, 3))(*xs),
                m.func.jacrev(m.func.jacrev(f))(*xs), m.func.jacfwd(m.func.jacrev(f, argnums=1), argnums=1)(*xs),
                m.func.grad(lambda x: m.func.grad(f)(x, *xs[1:]).sum())(xs[0]))

    e, t = _run(call)
    assert_same(e[2], t[0])  # jacrev(jacrev(f)) equals PyTorch's hessian


def test_grad_result_differentiable_by_the_caller():
    def call(m, xs):
        x, w1, b1, w2 = xs
        g = m.func.grad(lambda a: mlp(m)(a, w1, b1, w2))(x)  # depends on the weights, which require grad
        assert g.requires_grad
        return g, m.autograd.grad(g.pow(2).sum(), (w1, b1, w2))

    _run(call, requires_grad=True)


def test_linearize():
    v = arrays((3,), seed=2)[0]

    def call(m, xs):
        out, fn = m.func.linearize(lambda a: (m.tanh(xs[1] @ a), a.exp().sum()), xs[0])
        return out, fn(m.tensor(v)), fn(m.tensor(v) * 2)

    _run(call)
    x = arrays((3,))[0]
    same_error(lambda m: m.func.linearize(lambda a: a.sin(), m.tensor(x))[1](m.ones(4)))


def test_linearize_of_an_output_independent_of_the_input_is_zero():
    # not an error (linearize is not jvp(strict=True)); PyTorch's tangent of a constant comes back as a
    # Parameter, so requires_grad is not compared
    x, v = arrays((3,), (3,), seed=3)

    def call(m):
        _, fn = m.func.linearize(lambda a: (a.sin(), m.ones(2, dtype=m.float64), a.sum() * 0), m.tensor(x))
        return fn(m.tensor(v))

    with warnings.catch_warnings():  # PyTorch warns (torch.jit.script, constant folding) inside linearize
        warnings.simplefilter("ignore")
        theirs = call(torch)
    assert_same(call(ember), theirs, grad_state=False)


def test_func_namespace_matches_pytorch():
    for name in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
                 "functional_call", "stack_module_state"):
        assert callable(getattr(ember.func, name)) and hasattr(torch.func, name)
    assert np.isfinite(ember.func.grad(lambda a: a.sum())(ember.ones(2)).numpy()).all()


def test_grad_of_inputs_that_require_grad_stays_on_the_callers_graph():
    def call(m, xs):
        x, w = xs
        g, value = m.func.grad_and_value(lambda a: (m.sin(a) * w).pow(2).sum())(x)
        assert g.requires_grad and value.requires_grad
        return g, value, m.autograd.grad(g.sum() + value, (x, w))

    _run(call, ((3,), (3,)), requires_grad=True)


def test_per_sample_gradients_of_a_network_parameters_that_require_grad():
    """The tutorial's pattern: grad of a loss with respect to a module's parameters, one sample at a time."""
    torch.manual_seed(1)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid(), torch.nn.Linear(4, 2)).double()
    enet = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Sigmoid(), ember.nn.Linear(4, 2)).double()
    enet.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    x, y = arrays((5, 3), (5, 2), seed=3)
    results = []
    for m, net in ((torch, tnet), (ember, enet)):
        params = dict(net.named_parameters())

        def loss(p, xi, yi, m=m, net=net):
            return (m.func.functional_call(net, p, (xi,)) - yi).pow(2).mean()

        per_sample = [m.func.grad(loss)(params, m.tensor(x[i]), m.tensor(y[i])) for i in range(5)]
        results.append(per_sample)
    assert_same(results[1], results[0])


def test_vjp_fn_create_graph_and_jvp_of_a_function_with_captured_weights():
    def call(m, xs):
        x, w = xs
        _, fn = m.func.vjp(lambda a: m.tanh(a * w), x.detach())
        (g,) = fn(m.ones(3))
        (g2,) = fn(m.ones(3), create_graph=False)
        _, t = m.func.jvp(lambda a: m.exp(a * w), (x.detach(),), (m.ones(3, dtype=m.float64),))
        return g, g2, t, m.autograd.grad((g.sum() + t.sum()), w)

    _run(call, ((3,), (3,)), requires_grad=True)


def test_nested_transforms_keep_their_inputs_apart():
    def call(m, xs):
        x = xs[0]
        f = lambda a: (a.sin() * a.exp()).sum()  # noqa: E731
        return (m.func.grad(lambda a: m.func.grad(lambda b: (a * b).sum())(a).sum())(x),  # b's gradient is a
                m.func.grad(lambda a: m.func.grad(lambda b: (a * b * b).sum())(a).pow(2).sum())(x),
                m.func.jacrev(m.func.grad(f))(x), m.func.vjp(m.func.grad(f), x)[1](m.ones_like(x)),
                m.func.jvp(m.func.grad(f), (x,), (m.ones_like(x),)),
                m.func.jacrev(m.func.jacfwd(lambda a: a.tanh() * a.sum()))(x))

    _run(call, ((3,),))


def test_hessian_of_a_module_loss_with_respect_to_its_parameters():
    torch.manual_seed(2)
    tnet = torch.nn.Linear(3, 2).double()
    enet = ember.nn.Linear(3, 2).double()
    enet.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    x = arrays((3,), seed=6)[0]
    results = []
    for m, net in ((torch, tnet), (ember, enet)):
        def loss(p, inp, m=m, net=net):
            return m.func.functional_call(net, p, (inp,)).tanh().pow(2).sum()

        results.append(m.func.hessian(loss)({k: v.detach() for k, v in net.named_parameters()}, m.tensor(x)))
    assert_same(results[1], results[0])
