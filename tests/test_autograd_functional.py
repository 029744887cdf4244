"""``torch.autograd.functional`` (jacobian, hessian, vjp, jvp, hvp, vhp) against PyTorch on the same inputs."""

import numpy as np
import pytest
import torch

import ember
from tests.autodiff_oracle import arrays, assert_same, both, mlp, same_error, vector_mlp


def _run(call, shapes=((3,), (4, 3)), requires_grad=False, grad_state=True):
    """``call(m, F, inputs)`` for torch and ember on the same float64 inputs; the results compared."""
    theirs, mine = both(arrays(*shapes), requires_grad)
    t = call(torch, torch.autograd.functional, theirs)
    e = call(ember, ember.autograd.functional, mine)
    assert_same(e, t, grad_state=grad_state)
    return e, t


def test_reachable_as_in_pytorch():
    import ember.autograd.functional as F

    assert ember.autograd.functional is F
    assert F.__all__ == torch.autograd.functional.__all__


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("tuple_in", [False, True])
def test_jacobian_structure_and_values(vectorize, tuple_in):
    def call(m, F, xs):
        f = vector_mlp(m)
        if tuple_in:
            return F.jacobian(f, (xs[0], xs[1]), vectorize=vectorize)
        return F.jacobian(lambda x: f(x, xs[1]), xs[0], vectorize=vectorize)

    e, _ = _run(call)
    assert isinstance(e, tuple) and len(e) == 2  # one entry per output
    assert tuple(e[0][1].shape if tuple_in else e[0].shape) == ((4, 4, 3) if tuple_in else (4, 3))


def test_jacobian_single_output_single_input_is_one_tensor_and_of_a_matrix_input():
    e, _ = _run(lambda m, F, xs: F.jacobian(lambda w: m.tanh(w @ xs[0]), xs[1]))
    assert tuple(e.shape) == (4, 4, 3)
    _run(lambda m, F, xs: F.jacobian(lambda x: (x * 2, x.sum()), xs[0]))  # tuple output, single input


def test_jacobian_zeros_for_an_unused_input_and_strict_errors():
    _run(lambda m, F, xs: F.jacobian(lambda a, b: a.exp(), (xs[0], xs[1])))
    x = arrays((3,))[0]
    same_error(lambda m: m.autograd.functional.jacobian(lambda a, b: a.exp(), (m.tensor(x), m.tensor(x)),
                                                       strict=True))
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: m.ones(2), m.tensor(x), strict=True))
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: a * 2, m.tensor(x), strict=True, vectorize=True))


def test_jacobian_argument_errors():
    x = arrays((3,))[0]
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: a, m.tensor(x), strategy="sideways"),
               AssertionError)
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: a, m.tensor(x), strategy="forward-mode"),
               NotImplementedError)
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: a, m.tensor(x), create_graph=True,
                                                       strategy="forward-mode"), NotImplementedError)
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: a, m.tensor(x), strict=True,
                                                       strategy="forward-mode", vectorize=True))
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: a, [m.tensor(x)]), TypeError)
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: a, (m.tensor(x), 3)), TypeError)
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: 3, m.tensor(x)), TypeError)


def test_results_are_detached_and_inputs_untouched():
    e, t = _run(lambda m, F, xs: F.jacobian(lambda x: x.exp() * xs[1][0, 0], xs[0]), requires_grad=True)
    assert not e.requires_grad and e.grad_fn is None


@pytest.mark.parametrize("kind", ["scalar", "tuple"])
def test_vjp(kind):
    def call(m, F, xs):
        if kind == "scalar":
            return F.vjp(lambda x, w1, b1, w2: mlp(m)(x, w1, b1, w2), tuple(xs))
        v = (m.tensor(arrays((4,), seed=3)[0]), m.tensor(1.5, dtype=m.float64))
        return F.vjp(vector_mlp(m), tuple(xs), v)

    shapes = ((3,), (4, 3), (4,), (2, 4)) if kind == "scalar" else ((3,), (4, 3))
    _run(call, shapes)
    _run(lambda m, F, xs: F.vjp(lambda x: x.pow(2).sum(), xs[0]))  # single input: a tensor, not a tuple


def test_vjp_errors_as_pytorch():
    x = arrays((3,))[0]
    same_error(lambda m: m.autograd.functional.vjp(lambda a: a * 2, m.tensor(x)))
    same_error(lambda m: m.autograd.functional.vjp(lambda a: a * 2, m.tensor(x), m.ones(4)))
    same_error(lambda m: m.autograd.functional.vjp(lambda a: (a, a), m.tensor(x), (m.ones(3),)))
    same_error(lambda m: m.autograd.functional.vjp(lambda a: (a, a), m.tensor(x), (m.ones(3), m.ones(2))))
    same_error(lambda m: m.autograd.functional.vjp(lambda a, b: (a * 2).sum(), (m.tensor(x), m.tensor(x)),
                                                   strict=True))
    same_error(lambda m: m.autograd.functional.vjp(lambda a: m.ones(()), m.tensor(x), strict=True))


def test_vjp_zero_for_unused_input():
    _run(lambda m, F, xs: F.vjp(lambda a, b: (a * 2).sum(), (xs[0], xs[1])))


def test_jvp_and_its_errors():
    v = arrays((3,), (4, 3), seed=5)
    _run(lambda m, F, xs: F.jvp(vector_mlp(m), tuple(xs), tuple(m.tensor(a) for a in v)))
    _run(lambda m, F, xs: F.jvp(lambda x: (x.exp() * 2).sum(), xs[0], m.tensor(v[0])))
    x = arrays((3,))[0]
    same_error(lambda m: m.autograd.functional.jvp(lambda a: a * 2, m.tensor(x)))
    same_error(lambda m: m.autograd.functional.jvp(lambda a, b: a * 2, (m.tensor(x), m.tensor(x)),
                                                   (m.ones(3), m.ones(3)), strict=True))
    _run(lambda m, F, xs: F.jvp(lambda a, b: a * 2, (xs[0], xs[0]), (xs[0], xs[0])))


def test_jvp_runs_func_on_fresh_inputs_that_require_grad():
    """As PyTorch's, ``func`` gets inputs detached from the caller's and requiring grad, so it may differentiate
    inside (the jvp of a gradient: a Hessian-vector product) and its graph does not reach the caller's tensors."""
    v = arrays((3,), seed=6)[0]

    def call(m, F, xs):
        x, w = xs
        seen = []

        def grad_of(a):
            y = (m.tanh(w @ a) ** 2).sum()
            seen.append(a.requires_grad)
            if x.requires_grad:  # the caller's x is not in func's graph
                seen.append(m.autograd.grad(y, x, retain_graph=True, allow_unused=True)[0] is None)
            return m.autograd.grad(y, a, create_graph=True)[0]

        out = F.jvp(grad_of, x, m.tensor(v))
        assert seen == [True] + [True] * x.requires_grad
        return out

    _run(call)
    _run(call, requires_grad=True)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_forward_mode_and_hessian(strategy):
    _run(lambda m, F, xs: F.jacobian(vector_mlp(m), tuple(xs), vectorize=True, strategy=strategy))
    shapes = ((3,), (4, 3), (4,), (2, 4))
    # PyTorch's forward-over-reverse Hessian keeps a graph to tensors internal to the computation; ember's is detached
    _run(lambda m, F, xs: F.hessian(mlp(m), tuple(xs), vectorize=True, outer_jacobian_strategy=strategy), shapes,
         grad_state=strategy == "reverse-mode")
    _run(lambda m, F, xs: F.hessian(lambda x: mlp(m)(x, *xs[1:]), xs[0]), shapes)


@pytest.mark.parametrize("grad_mode", [True, False])
def test_forward_mode_results_of_inputs_that_require_grad_are_differentiable(grad_mode):
    """PyTorch's forward-mode Jacobian (and a Hessian's forward-mode outer one) is func's tangents as computed:
    with grad enabled, a function of the inputs that require grad, differentiable again; under no_grad, not (the
    Hessian's then keeps a graph to PyTorch's internal tensors only, none to the inputs; ember's is detached)."""
    def call(m, F, xs):
        x, w = xs
        with m.set_grad_enabled(grad_mode):
            jac = F.jacobian(lambda a, b: m.tanh(b @ a), (x, w), vectorize=True, strategy="forward-mode")
            h = F.hessian(lambda a: (m.tanh(w @ a) ** 3).sum(), x, vectorize=True,
                          outer_jacobian_strategy="forward-mode")
        assert all(j.requires_grad == grad_mode for j in jac) and (h.requires_grad or not grad_mode)
        total = sum(j.pow(2).sum() for j in jac) + h.sum()
        return (jac, h, m.autograd.grad(total, (x, w))) if grad_mode else (jac, h.detach())

    _run(call, requires_grad=True)


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp(name):
    shapes = ((3,), (4, 3), (4,), (2, 4))
    v = tuple(arrays(*shapes, seed=9))
    _run(lambda m, F, xs: getattr(F, name)(mlp(m), tuple(xs), tuple(m.tensor(a) for a in v)), shapes)
    x = arrays((3,))[0]
    same_error(lambda m: getattr(m.autograd.functional, name)(lambda a: a * 2, m.tensor(x), m.ones(3)))
    same_error(lambda m: getattr(m.autograd.functional, name)(lambda a: (a * 2).sum(), m.tensor(x), m.ones(3),
                                                              strict=True))
    # a one-element tuple is not a single Tensor, even holding one scalar
    same_error(lambda m: getattr(m.autograd.functional, name)(lambda a: ((a * 2).sum(),), m.tensor(x), m.ones(3)))


def test_strict_hessian_errors():
    x = arrays((3,))[0]
    same_error(lambda m: m.autograd.functional.hessian(lambda a: (a * 2).sum(), m.tensor(x), strict=True))
    same_error(lambda m: m.autograd.functional.hessian(lambda a: a * 2, m.tensor(x)))


@pytest.mark.parametrize("vectorize", [False, True])
def test_create_graph_results_differentiate_again(vectorize):
    """The results of create_graph=True carry a graph through func's own (its saved outputs): one backward pass
    per row, or one batched pass over the whole basis, must keep func's graph for that second differentiation."""
    def call(m, F, xs):
        x, w = xs
        jac = F.jacobian(lambda a: m.tanh(w @ a), x, create_graph=True, vectorize=vectorize)
        _, vj = F.vjp(lambda a: m.sigmoid(w @ a).sum(), x, create_graph=True)
        h = F.hessian(lambda a: (m.tanh(w @ a) ** 2).sum(), x, create_graph=True, vectorize=vectorize)
        assert jac.requires_grad and vj.requires_grad and h.requires_grad
        return m.autograd.grad((jac.pow(2).sum() + vj.sum() + h.sum()), (x, w))

    _run(call, requires_grad=True)


def test_create_graph_of_jvp_hvp_vhp_differentiates_again():
    v = arrays((3,), seed=4)[0]

    def call(m, F, xs):
        x, w = xs
        f = lambda a: (m.tanh(w @ a) ** 2).sum()  # noqa: E731
        _, jv = F.jvp(lambda a: m.sigmoid(w @ a), x, m.tensor(v), create_graph=True)
        _, hv = F.hvp(f, x, m.tensor(v), create_graph=True)
        _, vh = F.vhp(f, x, m.tensor(v), create_graph=True)
        return jv, hv, vh, m.autograd.grad((jv.sum() + hv.pow(2).sum() + vh.sum()), (x, w))

    _run(call, requires_grad=True)


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("name", ["jvp", "vjp", "hvp", "vhp"])
def test_create_graph_products_differentiate_through_a_vector_of_another_dtype(name, grad_mode):
    """A float32 ``v`` that requires grad against float64 inputs: the product, made with create_graph, is
    differentiable with respect to ``v`` through the cast to the inputs' dtype (PyTorch's grad_outputs are cast by
    a recorded ``.to``), whatever the grad mode around the call."""
    def call(m, F, xs):
        x, w = xs
        v = m.tensor([0.5, -1.0, 2.0], dtype=m.float32, requires_grad=True)
        f = (lambda a: m.sin(w @ a)[:3] * a) if name in ("jvp", "vjp") else (lambda a: (m.tanh(w @ a) ** 2).sum())
        with m.set_grad_enabled(grad_mode):
            _, product = getattr(F, name)(f, x, v, create_graph=True)
        return product, m.autograd.grad(product.pow(2).sum(), (v, x))

    _run(call, requires_grad=True)


def test_strict_with_create_graph_rejects_a_linear_function():
    x = arrays((3,))[0]
    same_error(lambda m: m.autograd.functional.vjp(lambda a: a * 2, m.tensor(x), m.ones(3), create_graph=True,
                                                   strict=True))
    same_error(lambda m: m.autograd.functional.jacobian(lambda a: a * 2, m.tensor(x), create_graph=True,
                                                       strict=True))
    same_error(lambda m: m.autograd.functional.vhp(lambda a: (a * a).sum(), m.tensor(x), m.ones(3),
                                                   create_graph=True, strict=True))


@pytest.mark.parametrize("path", ["reverse", "reverse-vectorized", "forward", "hessian-reverse",
                                  "hessian-forward-vectorized"])
def test_a_block_independent_of_an_input_is_zeros_on_every_path(path):
    """An output (or a gradient) that does not depend on an input gives a zero block, as PyTorch's, on each of
    jacobian's and hessian's paths: one backward pass per row, one batched backward, one batched forward-mode run,
    and the one-column-at-a-time double-backward trick (the forward-mode outer Jacobian of hessian, whose inner
    reverse-mode Jacobian cannot run under forward-mode vmap)."""
    def call(m, F, xs):
        if path.startswith("hessian"):
            # x enters linearly: its gradient is a constant, its rows and columns of the Hessian zeros
            f = lambda x, w: x.sum() + (w.tanh() ** 3).sum() + 0 * x[0]  # noqa: E731
            return F.hessian(f, tuple(xs), vectorize=path == "hessian-forward-vectorized",
                             outer_jacobian_strategy="forward-mode" if "forward" in path else "reverse-mode")
        f = lambda x, w: (m.tanh(w @ x), w.exp().sum(), m.ones(2) * 3)  # noqa: E731  (no x; neither)
        return F.jacobian(f, tuple(xs), vectorize=path != "reverse",
                          strategy="forward-mode" if path == "forward" else "reverse-mode")

    e, _ = _run(call, grad_state=False)
    flat = [b for row in e for b in row]
    assert any(not b.any() for b in flat) and any(b.any() for b in flat)


@pytest.mark.parametrize("name", ["vjp", "jvp", "jvp-create_graph", "jacobian", "jacobian-vectorized", "hessian",
                                  "hvp", "vhp"])
def test_a_function_of_no_input_gives_zeros(name):
    """func's output does not depend on the inputs (it does not require grad at all): without strict, every
    function gives PyTorch's zeros (no backward pass has anything to differentiate)."""
    v = arrays((3,), seed=4)[0]

    def call(m, F, xs):
        x = xs[0]
        const = lambda a: (m.ones(3, dtype=m.float64) * 2).sum() if name in ("hessian", "hvp", "vhp") \
            else m.ones(3, dtype=m.float64) * 2  # noqa: E731
        if name.startswith("jacobian"):
            return F.jacobian(const, x, vectorize=name.endswith("vectorized"))
        if name == "hessian":
            return F.hessian(const, x)
        return getattr(F, name.split("-")[0])(const, x, m.tensor(v), create_graph=name.endswith("create_graph"))

    _run(call, shapes=((3,),))


def _old_style_function_forward_jacobian(lib, extra=None):
    """``jacobian(strategy="forward-mode", vectorize=True)`` over a custom Function with a ``jvp`` and no vmap
    support (its backward refuses): PyTorch's legacy vmap runs it, through its jvp. ``extra(lib, x, y)``: more
    outputs of the function beside the Function's two."""

    class Product(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_forward(x, y)
            return x * y, x.sum() * 3

        @staticmethod
        def backward(ctx, g, h):
            raise NotImplementedError("no backward")

        @staticmethod
        def jvp(ctx, tx, ty):
            x, y = ctx.saved_tensors
            return tx * y + x * ty, tx.sum() * 3

    def func(x, y):
        return Product.apply(x, y) if extra is None else (*Product.apply(x, y), *extra(lib, x, y))

    x, y = lib.tensor([1.0, 2.0, 3.0]), lib.tensor([4.0, 5.0, 6.0])
    jac = lib.autograd.functional.jacobian(func, (x, y), strategy="forward-mode", vectorize=True)
    return [[block.tolist() for block in row] for row in jac]


def test_forward_mode_jacobian_runs_a_function_without_vmap_support_as_torch():
    assert _old_style_function_forward_jacobian(ember) == _old_style_function_forward_jacobian(torch)


@pytest.mark.parametrize("extra", [
    lambda lib, x, y: (lib.ones(2) * 2,),  # (no tangent at all: no input reaches it)
    lambda lib, x, y: (y.detach() * 2, x.exp()),  # (one independent of the inputs, one of x only)
], ids=["constant", "detached and of x only"])
def test_forward_mode_jacobian_without_vmap_support_gives_zeros_for_an_output_independent_of_the_inputs(extra):
    """The one-column-at-a-time path (a Function without vmap support) is not strict (strict is refused with
    forward mode): an output no input reaches has zero blocks, as PyTorch's."""
    got, want = (_old_style_function_forward_jacobian(lib, extra) for lib in (ember, torch))
    assert len(got) == len(want)
    for got_row, want_row in zip(got, want):
        assert len(got_row) == len(want_row)
        for g, w in zip(got_row, want_row):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
