"""``autograd.grad``'s whole signature and ``autograd.gradcheck``, against PyTorch."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import GradcheckError


def _both(a):
    return torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)


def test_is_grads_batched_gives_one_vector_jacobian_product_per_row():
    a = np.random.default_rng(0).standard_normal((3, 4))
    v = np.random.default_rng(1).standard_normal((5, 3, 2))
    w = np.random.default_rng(2).standard_normal((4, 2))
    results = []
    for m, x in zip((torch, ember), _both(a)):
        y = x @ m.tensor(w)
        (g,) = m.autograd.grad(y, x, m.tensor(v), is_grads_batched=True)
        results.append(g.numpy())
    assert results[1].shape == results[0].shape == (5, 3, 4)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    x = ember.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="same leading"):
        ember.autograd.grad([x.sum(1), x.sum(0)], x, [ember.ones(2, 3), ember.ones(3, 4)], is_grads_batched=True)


def test_only_inputs_false_warns_as_pytorch_and_is_ignored():
    tx, ex = _both(np.ones(3))
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.autograd.grad((tx * 2).sum(), tx, only_inputs=False)
    with warnings.catch_warnings(record=True) as mine:
        warnings.simplefilter("always")
        (g,) = ember.autograd.grad((ex * 2).sum(), ex, only_inputs=False)
    assert [str(w.message) for w in mine] == [str(w.message) for w in theirs]
    assert g.tolist() == [2.0, 2.0, 2.0] and ex.grad is None


def test_materialize_grads_with_allow_unused_false_is_pytorchs_value_error():
    for m in (torch, ember):
        x, y = m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
            m.autograd.grad(x.sum(), [x, y], materialize_grads=True, allow_unused=False)
        gx, gy = m.autograd.grad(x.sum(), [x, y], materialize_grads=True)
        assert gy.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_zeros_require_grad_under_create_graph(create_graph, batched):
    """An unused input's materialized zeros: PyTorch's ``zeros_like(input, requires_grad=create_graph)`` (a leaf),
    with is_grads_batched too."""
    got = []
    for m in (torch, ember):
        x, y = m.tensor([0.5, -1.0], requires_grad=True), m.ones(3, requires_grad=True)
        out = m.sigmoid(x)
        go = m.eye(2) if batched else m.ones(2)
        gx, gy = m.autograd.grad(out, [x, y], go, create_graph=create_graph, materialize_grads=True,
                                 is_grads_batched=batched)
        got.append((gy.tolist(), gy.requires_grad, gy.grad_fn is None, gx.requires_grad))
    assert got[1] == got[0]


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_passes_correct_gradients_as_pytorch(fast_mode):
    a = np.random.default_rng(0).standard_normal((3, 4))
    b = np.random.default_rng(1).standard_normal((4,))
    for m in (torch, ember):
        x, w = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        assert m.autograd.gradcheck(lambda x, w: ((x * w).tanh().sum(1), x.exp()), (x, w), fast_mode=fast_mode)


def _square(m, backward):
    """x * x as an autograd.Function of library ``m`` whose backward is ``backward(g, x)``."""
    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return backward(g, x)

    return Square.apply


_wrong_square = _square(ember, lambda g, x: g * x * 3)  # should be 2x


def _backward_calls(m, fast_mode: bool) -> int:
    """How often gradcheck runs a custom backward of two inputs of 5 elements: PyTorch's runs it once per output
    element for every input at once (twice, to check reentrancy), one output element's worth in fast mode, then once
    with zero output gradients and once with undefined ones; not once per (input, output element) pair."""
    calls = []

    class Product(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            x, y = ctx.saved_tensors
            return g * y, g * x

    x = m.tensor(np.linspace(0.5, 1.5, 5), requires_grad=True)
    y = m.tensor(np.linspace(1.0, 2.0, 5), requires_grad=True)
    assert m.autograd.gradcheck(Product.apply, (x, y), fast_mode=fast_mode)
    return len(calls)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_runs_backward_as_often_as_torch(fast_mode):
    ours, theirs = _backward_calls(ember, fast_mode), _backward_calls(torch, fast_mode)
    assert ours == theirs, (ours, theirs)


def _zero_grads_check(m, zero_gives: str, raise_exception: bool = True):
    """gradcheck's check_undefined_grad: a backward given zero output gradients must give None or zeros."""

    class Scaled(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            if not bool((g != 0).any()):
                if zero_gives == "raise":
                    raise RuntimeError("no gradient to work with")
                if zero_gives == "ones":
                    return m.ones_like(g)
            return g * 3

    x = m.tensor(np.linspace(0.5, 1.5, 3), requires_grad=True)
    if not raise_exception:
        return m.autograd.gradcheck(Scaled.apply, (x,), raise_exception=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's backwards-compatibility note before its error)
            return m.autograd.gradcheck(Scaled.apply, (x,))
    except RuntimeError as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("zero_gives", ["zeros", "ones", "raise"])
def test_gradcheck_checks_backward_of_zero_output_grads_as_torch(zero_gives):
    assert _zero_grads_check(ember, zero_gives) == _zero_grads_check(torch, zero_gives)
    if zero_gives != "raise":  # (backward's own error is no GradcheckError: it propagates, as PyTorch's)
        assert _zero_grads_check(ember, zero_gives, raise_exception=False) is (zero_gives == "zeros")


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_catches_a_wrong_backward(fast_mode):
    x = ember.tensor(np.linspace(0.5, 1.5, 4), requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        ember.autograd.gradcheck(_wrong_square, (x,), fast_mode=fast_mode)
    assert ember.autograd.gradcheck(_wrong_square, (x,), raise_exception=False, fast_mode=fast_mode) is False
    assert issubclass(GradcheckError, RuntimeError)


def test_gradcheck_warns_for_float32_inputs_and_needs_one_input_requiring_grad():
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        ember.autograd.gradcheck(lambda x: x * 2, (ember.ones(2, requires_grad=True),), eps=1e-3, atol=1e-2)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        ember.autograd.gradcheck(lambda x: x * 2, (ember.ones(2, dtype=ember.float64),))


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_compares_second_order_gradients_with_finite_differences(m, fast_mode):
    rng = np.random.default_rng(4)
    F = m.nn.functional
    x, w = m.tensor(rng.standard_normal((3, 4)), requires_grad=True), m.tensor(rng.standard_normal(4), requires_grad=True)
    t = m.tensor([1, 0, 3])
    assert m.autograd.gradgradcheck(lambda x, w: F.layer_norm(x, (4,), w), (x, w), fast_mode=fast_mode)
    assert m.autograd.gradgradcheck(lambda x: F.softmax(x, 1), (x,), fast_mode=fast_mode)
    assert m.autograd.gradgradcheck(lambda x: F.cross_entropy(x, t, label_smoothing=0.1), (x,), fast_mode=fast_mode)
    # explicit grad_outputs that need no gradient: only the input's second-order gradient is checked
    assert m.autograd.gradgradcheck(lambda x: x.tanh(), (x,), (m.ones(3, 4, dtype=m.float64),), fast_mode=fast_mode)
    wrong = _square(m, lambda g, x: 2 * g * x.detach())  # right first-order gradient, but a constant one
    assert m.autograd.gradcheck(wrong, (x,), fast_mode=fast_mode)  # first order is right ...
    assert m.autograd.gradgradcheck(wrong, (x,), raise_exception=False, fast_mode=fast_mode) is False
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        m.autograd.gradgradcheck(wrong, (x,), fast_mode=fast_mode)


def test_gradgradcheck_draws_its_random_grad_outputs_from_the_global_generator_as_pytorch():
    """PyTorch's default grad_outputs come from make_tensor(low=-1, high=1): the global generator, one output
    after another, none for an output that needs no gradient. A seeded program draws the same numbers after the check, and a
    wrong second derivative reports the same numerical Jacobian, whose values depend on those grad_outputs."""
    drawn, reports = [], []
    for m in (torch, ember):
        m.manual_seed(3)
        x = m.randn(2, 3, dtype=m.float64, requires_grad=True)
        assert m.autograd.gradgradcheck(lambda t: (t.exp(), (t * 2).sin()), (x,))
        assert m.autograd.gradgradcheck(lambda t: (t.sum(0).cos(), t.argmax()), (x,))
        drawn.append(m.randn(4).numpy())
        m.manual_seed(5)
        wrong = _square(m, lambda g, x: 2 * g * x.detach())
        with pytest.raises(RuntimeError) as info:
            m.autograd.gradgradcheck(wrong, (m.randn(3, dtype=m.float64, requires_grad=True),))
        reports.append(str(info.value).split("numerical:")[1].split("analytical")[0].split("dtype")[0])
    np.testing.assert_array_equal(drawn[1], drawn[0])
    assert reports[1] == reports[0]


def test_a_gradient_of_another_real_dtype_is_cast_to_the_outputs_as_pytorch():
    """PyTorch casts a real grad_output to its output's dtype (float64 or int64 cotangent, float32 output: float32
    gradients, differentiable under create_graph) and refuses a dtype mismatch involving a complex tensor."""
    results = {}
    for fw in (torch, ember):
        w = fw.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (g64,) = fw.autograd.grad(w * w, w, fw.tensor([1.0, 0.5, 2.0], dtype=fw.float64))
        (gint,) = fw.autograd.grad(w * 3, w, fw.ones(3, dtype=fw.int64))
        v = fw.tensor([1.0, 2.0, 4.0], dtype=fw.float64, requires_grad=True)
        (gv,) = fw.autograd.grad(w * w, w, v, create_graph=True)
        (hv,) = fw.autograd.grad(gv.sum(), v)
        with pytest.raises(RuntimeError, match="both grad_output and output are required to have the same dtype"):
            fw.autograd.grad(w * 2, w, fw.ones(3, dtype=fw.complex64))
        results[fw.__name__] = [(str(t.dtype).split(".")[-1], t.detach().numpy().tolist()) for t in (g64, gint, gv, hv)]
    assert results["ember"] == results["torch"]
    assert results["ember"][0][0] == "float32" and results["ember"][3][0] == "float64"


def _twice_keeping_gradient(m, made: list):
    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            made.append(g * 2)
            return made[-1]

    return Twice


def test_grad_returns_the_computed_gradient_and_copies_what_may_share_memory():
    """As PyTorch's, ``grad`` returns the gradient a backward made (no copy: per-sample gradients are megabytes);
    what may share memory with something else is copied: the grad_outputs passed through unchanged (PyTorch
    returns them themselves), an input listed twice (a sum's broadcast gradient is expanded, as PyTorch's, its one element a copy)."""
    for m in (torch, ember):
        made: list = []
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (g,) = m.autograd.grad(_twice_keeping_gradient(m, made).apply(x), x, m.ones(3))
        assert g.data_ptr() == made[0].data_ptr()  # the backward's own tensor, as PyTorch returns it
        g += 1  # and it is writeable
        np.testing.assert_array_equal(made[0].numpy(), [3.0, 3.0, 3.0])
    v = ember.ones(3)
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = ember.autograd.grad(x + 0, x, v)  # addition passes grad_outputs through: a copy, not v's memory
    g += 1
    np.testing.assert_array_equal(v.numpy(), [1.0, 1.0, 1.0])
    for m in (torch, ember):  # a broadcast gradient: expanded (stride 0), in-place arithmetic refused
        xm = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (g,) = m.autograd.grad(xm.sum(), xm)
        assert g.stride() == (0,)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            g += 1
    a, b = ember.autograd.grad((x * 3).sum(), [x, x])
    a += 1
    np.testing.assert_array_equal(b.numpy(), [3.0, 3.0, 3.0])


def test_grad_of_a_leaf_runs_its_tensor_hooks_as_pytorch_does():
    """autograd.grad runs the hooks registered on a leaf input, in order, and returns what they make; the leaf's
    .grad and its post-accumulate-grad hooks are left alone."""
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen, after = [], []
        x.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: seen.append(g.detach().clone()))
        x.register_post_accumulate_grad_hook(lambda t: after.append(1))
        g, = m.autograd.grad((x * x).sum(), [x])
        return g.numpy(), [s.numpy() for s in seen], x.grad, after

    (g, seen, grad, after), (tg, tseen, tgrad, tafter) = run(ember), run(torch)
    np.testing.assert_allclose(g, tg)
    assert len(seen) == len(tseen) == 1
    np.testing.assert_allclose(seen[0], tseen[0])
    assert grad is None and tgrad is None and after == tafter == []


def _two_wrong_pairs(m):
    """x * y and x + y as an autograd.Function of library ``m`` whose backward is wrong for (output 0, input 1) and
    (output 1, input 0)."""

    class Bad(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y

        @staticmethod
        def backward(ctx, g0, g1):
            x, y = ctx.saved_tensors
            return g0 * y + 2 * g1, 3 * g0 * x + g1

    return Bad.apply


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_names_pytorchs_first_mismatch_with_its_message(fast_mode):
    """Several (output, input) pairs mismatch: PyTorch's slow mode names the first by output, its fast mode the first
    by input (output 1 with respect to input 0 here), with PyTorch's projections (its fresh generator's draws: the
    same numbers) and its slow-mode recomputation of that pair's Jacobians."""
    messages = []
    for m in (torch, ember):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([4.0, 5.0], dtype=m.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            m.autograd.gradcheck(_two_wrong_pairs(m), (x, y), fast_mode=fast_mode)
        messages.append(str(err.value).replace("torch.", "ember."))
    assert messages[1] == messages[0]
    assert messages[0].startswith("Jacobian mismatch for output 1 with respect to input 0" if fast_mode else
                                  "Jacobian mismatch for output 0 with respect to input 1")


def test_gradcheck_fast_mode_scales_atol_as_pytorch():
    """Fast mode allows atol * sum(u) * sum(v) on the projection (PyTorch's ``_adjusted_atol``): an error within it
    passes, one past it fails, in both libraries alike."""
    for scale, passes in ((0.03, True), (0.2, False)):  # (errors past atol itself)
        seen = []
        for m in (torch, ember):
            class Off(m.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 2

                @staticmethod
                def backward(ctx, g, scale=scale):
                    return g * (2 + scale)

            x = m.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
            seen.append(m.autograd.gradcheck(Off.apply, (x,), fast_mode=True, raise_exception=False, atol=1e-2,
                                             rtol=0.0))
        assert seen == [passes, passes], (scale, seen)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_counts_inputs_among_those_checked_as_pytorch(fast_mode):
    """The input a mismatch names is counted among the inputs that require grad (a constant first input does not
    count), as PyTorch's, in slow mode and fast mode."""
    messages = []
    for m in (torch, ember):
        class Wrong(m.autograd.Function):
            @staticmethod
            def forward(ctx, c, y):
                ctx.save_for_backward(c)
                return c * y

            @staticmethod
            def backward(ctx, g):
                (c,) = ctx.saved_tensors
                return None, 3 * g * c

        c = m.tensor([1.0, 2.0], dtype=m.float64)
        y = m.tensor([4.0, 5.0], dtype=m.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            m.autograd.gradcheck(Wrong.apply, (c, y), fast_mode=fast_mode)
        messages.append(str(err.value).splitlines()[0])
    assert messages[1] == messages[0] == "Jacobian mismatch for output 0 with respect to input 0,"
