"""The autograd engine against PyTorch: accumulation, graph freeing, errors, grad modes, hooks, callbacks,
version counters, autograd.grad and custom Functions."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_error

import ember
from ember.autograd.engine import queue_callback


def both(fn):
    """Run ``fn(module)`` on ember and on torch; return both results."""
    return fn(ember), fn(torch)


# --------------------------------------------------------------------- the basic path
def test_grad_accumulates():
    for m in (ember, torch):
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (w ** 2).sum().backward()
        (w * 3).sum().backward()
        assert w.grad.tolist() == [5.0, 7.0, 9.0]


def test_shared_subexpression_and_diamond():
    def fn(m):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        a = x.exp()
        b = a * x + a.sin() * a
        (b.sum() + a.sum()).backward()
        return x.grad
    assert_close(*both(fn))


def test_deep_chain_is_iterative():
    x = ember.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.item(), 1.0001 ** 10_000, rtol=1e-3)


def test_wide_fan_out():
    x = ember.ones(2, requires_grad=True)
    ember.stack([x * i for i in range(500)]).sum().backward()
    assert x.grad.tolist() == [sum(range(500))] * 2


def test_graph_freed_after_backward():
    for m in (ember, torch):
        x = m.randn(4, 3, requires_grad=True)
        loss = (x.exp() * x).sum()
        loss.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            loss.backward()


def test_retain_graph():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        loss = (x.exp() * x).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        return x.grad
    assert_close(*both(fn))


def test_graph_without_saved_tensors_can_run_twice():
    # ops that save nothing (add, sum) leave nothing to free: PyTorch allows a second backward
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_non_scalar_backward_needs_gradient():
    x = ember.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(ember.full((2, 3), 0.5))
    assert x.grad.tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(ember.ones(3))


def test_one_element_non_scalar_backward():
    def fn(m):
        x = m.ones(1, 1, requires_grad=True)
        (x * 3).backward()
        return x.grad
    assert_close(*both(fn))


@pytest.mark.parametrize("make,why", [
    (lambda: ember.ones(2).sum(), "never had requires_grad=True"),
    (lambda: ember.ones(2, requires_grad=True).detach().sum(), r"\.detach\(\)"),
    (lambda: _under_no_grad(), "no_grad"),
])
def test_backward_without_grad_explains(make, why):
    with pytest.raises(RuntimeError, match="does not require grad") as err:
        make().backward()
    assert __import__("re").search(why, str(err.value))
    # PyTorch's sentence, then the reason once (not "does not have a grad_fn: it has no grad_fn: ...")
    assert str(err.value).startswith("element 0 of tensors does not require grad and does not have a grad_fn: ")
    assert str(err.value).count("grad_fn") == 1, str(err.value)


def _under_no_grad():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        return (x * 2).sum()


def test_backward_inside_no_grad_region_still_works():
    # PyTorch runs backward even inside no_grad: the graph was recorded before
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)
        y = (x * x).sum()
        with m.no_grad():
            y.backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_grad_of_unused_leaf_stays_none():
    a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    (a * 2).sum().backward()
    assert b.grad is None and a.grad is not None


def test_backward_inputs_argument():
    def fn(m):
        a, b = m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)
        (a * b * 3).sum().backward(inputs=[a])
        return a.grad, b.grad
    (ea, eb), (ta, tb) = both(fn)
    assert_close(ea, ta)
    assert eb is None and tb is None


def test_integer_ops_do_not_join_graph():
    x = ember.ones(3, requires_grad=True)
    idx = (x > 0).long()
    assert not idx.requires_grad and idx.grad_fn is None
    assert not x.argmax().requires_grad


# --------------------------------------------------------------------- grad modes
@pytest.mark.parametrize("ctx", ["no_grad", "inference_mode", "set_grad_enabled_false"])
def test_grad_disabled_contexts(ctx):
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)
        make = {"no_grad": m.no_grad, "inference_mode": m.inference_mode,
                "set_grad_enabled_false": lambda m=m: m.set_grad_enabled(False)}[ctx]
        with make():
            y = x * 2
            assert not m.is_grad_enabled()
        assert m.is_grad_enabled()
        assert not y.requires_grad and y.grad_fn is None


def test_enable_grad_inside_no_grad():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        with ember.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and not z.requires_grad


def test_grad_mode_decorators():
    x = ember.ones(2, requires_grad=True)

    @ember.no_grad()
    def f1():
        return x * 2

    @ember.no_grad
    def f2():
        return x * 2

    @ember.inference_mode()
    def f3():
        return x * 2

    @ember.enable_grad()
    def f4():
        return x * 2

    assert not f1().requires_grad and not f2().requires_grad and not f3().requires_grad
    with ember.no_grad():
        assert f4().requires_grad
    assert ember.is_grad_enabled()


def test_set_grad_enabled_as_function_and_restores_on_error():
    ember.set_grad_enabled(False)
    assert not ember.is_grad_enabled()
    ember.set_grad_enabled(True)
    with pytest.raises(ValueError):
        with ember.no_grad():
            raise ValueError
    assert ember.is_grad_enabled()
    assert ember.autograd.is_grad_enabled is ember.is_grad_enabled


def test_inference_mode_false_enables_grad():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad(), ember.inference_mode(False):
        assert (x * 2).requires_grad


# --------------------------------------------------------------------- detach / requires_grad / retain_grad
def test_requires_grad_flags():
    x = ember.ones(2)
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    x.requires_grad_(False)
    assert not x.requires_grad


def test_detach_cuts_graph():
    x = ember.ones(2, requires_grad=True)
    y = (x * 2).detach() * x
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_retain_grad():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        h.retain_grad()
        (h * h).sum().backward()
        return h.grad, x.grad
    (eh, ex), (th, tx) = both(fn)
    assert_close(eh, th)
    assert_close(ex, tx)
    x = ember.ones(2, requires_grad=True)
    h = x * 2
    (h.sum()).backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):  # as PyTorch's
        assert h.grad is None
    assert h.retains_grad is False


# --------------------------------------------------------------------- hooks
def test_register_hook_on_leaf_and_non_leaf_can_replace():
    def fn(m):
        seen = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        h.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
        x.register_hook(lambda g: g + 1)
        (h * h).sum().backward()
        return x.grad, seen
    (ex, es), (tx, ts) = both(fn)
    assert_close(ex, tx)
    assert es == ts


def test_autograd_grad_of_a_hooked_leaf_returns_the_hooked_gradient():
    """autograd.grad runs a leaf's tensor hooks once, in order, and returns what they leave (a hook returning None
    keeps the gradient), without touching ``.grad``; as PyTorch's, for the leaf alone and beside a non-leaf."""
    def fn(m):
        seen = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: seen.append(("first", g.tolist())) or g * 2)
        x.register_hook(lambda g: seen.append(("second", g.tolist())))  # (None: the gradient stays)
        h = x * 3
        y = (h * x).sum()
        gx, = m.autograd.grad(y, x, retain_graph=True)
        gh, gx2 = m.autograd.grad(y, [h, x])
        return [gx.tolist(), gh.tolist(), gx2.tolist()], seen, x.grad
    (eg, es, egrad), (tg, ts, tgrad) = both(fn)
    assert eg == tg and es == ts
    assert egrad is None and tgrad is None


def _first_inputs(t):
    """The node names from ``t``'s grad_fn down its first input edges."""
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(fn.name().replace("torch::autograd::", ""))
        fn = next((f for f, _ in fn.next_functions if f is not None), None)
    return names


@pytest.mark.parametrize("x_shape,y_shape", [((3, 1), (3, 4)), ((4,), (3, 4)), ((1, 4), (2, 3, 4)), ((3, 4), (3, 4))],
                         ids=str)
def test_an_unbroadcast_gradient_under_create_graph_is_summed_as_pytorchs(x_shape, y_shape):
    """Under create_graph the gradient of a broadcast operand is the recorded sum of the broadcast one, nothing
    expanded in between (the engine broadcasts a gradient only where it is smaller than the operand), and
    differentiates to PyTorch's values. (ember's sum keeps the reduced dims and reshapes them away: a
    ViewBackward0 above PyTorch's SumBackward1, left out of the comparison.)"""
    def fn(m):
        x = m.linspace(-1.0, 1.0, int(np.prod(x_shape)), dtype=m.float64).reshape(x_shape).requires_grad_()
        y = m.linspace(0.5, 2.0, int(np.prod(y_shape)), dtype=m.float64).reshape(y_shape).requires_grad_()
        gx, = m.autograd.grad((x * y).sin().sum(), x, create_graph=True)
        ggy, = m.autograd.grad((gx * gx).sum(), y)
        return [n for n in _first_inputs(gx) if n != "ViewBackward0"], gx, ggy
    (e_names, egx, eggy), (t_names, tgx, tggy) = both(fn)
    assert e_names == t_names
    assert_close(egx, tgx, atol=1e-12, rtol=1e-12)
    assert_close(eggy, tggy, atol=1e-12, rtol=1e-12)


def test_hook_removal():
    x = ember.ones(2, requires_grad=True)
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ember.ones(2).register_hook(lambda g: g)


def test_post_accumulate_grad_hook():
    seen = []
    x = ember.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[2.0, 2.0], [5.0, 5.0]]
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda p: None)


@pytest.mark.parametrize("returned", ["tuple", "tensor", "number"])
def test_post_accumulate_grad_hook_must_return_none(returned):
    """A post-accumulate-grad hook that returns something (a training step written as a lambda returning a tuple)
    stops backward with PyTorch's error, after the gradient was accumulated, as in PyTorch."""
    def run(m):
        x = m.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(
            {"tuple": lambda p: (p.grad, None), "tensor": lambda p: p.grad * 2, "number": lambda p: 3}[returned])
        (x * 2).sum().backward()

    assert_same_error(run)


def test_hooks_see_grad_before_accumulation():
    x = ember.ones(2, requires_grad=True)
    x.grad = ember.full((2,), 5.0)
    seen = []
    x.register_hook(lambda g: seen.append((g.tolist(), x.grad.tolist())))
    (x * 2).sum().backward()
    assert seen == [([2.0, 2.0], [5.0, 5.0])] and x.grad.tolist() == [7.0, 7.0]


def _mlp_leaf_order():
    ember.manual_seed(0)
    params = [ember.randn(4, 4, requires_grad=True) for _ in range(6)]
    order = []
    for i, p in enumerate(params):
        p.register_post_accumulate_grad_hook(lambda _p, i=i: order.append(i))
    h = ember.randn(3, 4)
    for p in params[:3]:
        h = (h @ p).tanh()
    branch = (h @ params[3]).relu() + (h @ params[4]).sigmoid()
    (branch @ params[5]).sum().backward()
    return order


def test_leaf_hook_order_is_deterministic():
    first = _mlp_leaf_order()
    assert sorted(first) == list(range(6))
    for _ in range(5):
        assert _mlp_leaf_order() == first
    # leaves become ready from the output backwards: the last layer's gradient lands first
    assert first[0] == 5 and first[-1] == 0



def test_several_roots_run_latest_created_first_as_in_pytorch():
    """backward over several independent roots runs the most recently created graph first, whatever the order
    of the roots in the list (PyTorch orders its ready queue by creation)."""

    def order(m, roots_order):
        leaves = [m.ones(3, requires_grad=True) for _ in range(3)]
        seen = []
        for i, t in enumerate(leaves):
            t.register_post_accumulate_grad_hook(lambda _t, i=i: seen.append(i))
        a, b, c = leaves
        roots = [(a * 2).sum(), (b.exp() * 3).sum(), (c + 1).prod()]
        m.autograd.backward([roots[i] for i in roots_order])
        return seen

    for roots_order in ([0, 1, 2], [2, 0, 1], [1, 2, 0]):
        assert order(ember, roots_order) == order(torch, roots_order) == [2, 1, 0]


@pytest.mark.parametrize("requires_grad", [True, False])
def test_a_multi_output_op_records_exactly_when_an_input_requires_grad(requires_grad):
    """slogdet and QR (nodes of several outputs): outputs that require grad, and PyTorch's gradients, exactly
    when an input requires grad."""
    a = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 4.0]])
    flags, grads = [], []
    for fw in (torch, ember):
        x = fw.tensor(a, requires_grad=requires_grad)
        outs = [*fw.linalg.slogdet(x), *fw.linalg.qr(x)]
        flags.append([(o.requires_grad, o.grad_fn is None) for o in outs])
        if requires_grad:
            (outs[1] + outs[3].sum()).backward()
            grads.append(x.grad.numpy())
    assert flags[0] == flags[1]
    if requires_grad:
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)


def test_an_op_goes_to_the_dtensor_hook_only_when_it_returns_a_result(monkeypatch):
    """Once a DTensor exists every op asks its dispatch first (graph._dtensor_dispatch): a result is the op's
    result; None (no DTensor input) lets the op compute as usual. Single- and multi-output ops alike."""
    from ember.autograd import graph

    taken = object()
    asked = []

    def dispatch(cls, inputs, params):
        asked.append(cls.__qualname__)  # (ember's class name; __name__ is PyTorch's node name)
        if not any(isinstance(t, ember.Tensor) and t.shape == (5, 5) for t in inputs):
            return None
        return (taken, taken) if issubclass(cls, graph.MultiOutputNode) else taken

    monkeypatch.setattr(graph, "_dtensor_dispatch", dispatch)
    x = ember.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=ember.float64, requires_grad=True)
    sign, logabs = ember.linalg.slogdet(x * 2)
    assert sign.item() == 1.0 and logabs.item() == pytest.approx(np.log(20.0), rel=1e-14)
    logabs.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.linalg.inv(x.detach().numpy()).T)
    assert ember.eye(5) * 2 is taken and tuple(ember.linalg.slogdet(ember.eye(5))) == (taken, taken)
    assert {"Mul", "SlogDet"} <= set(asked)

@pytest.mark.parametrize("op", ["qr", "split"])
def test_retained_outputs_where_only_some_get_a_gradient(op):
    """retain_grad on every output of an op with several (qr's and split's, each of one node)
    when backward reaches only the first: it gets its gradient, the others keep None, as PyTorch's (a retained
    output of a node that runs without a gradient for it is skipped, not accumulated)."""
    def fn(m):
        x = m.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.1, 0.4, 4.0], [1.0, 0.0, 1.0]], requires_grad=True)
        y = x * 2
        outs = m.linalg.qr(y) if op == "qr" else y.split(2)
        for t in outs:
            t.retain_grad()
        (outs[0] * 3).sum().backward()
        return [t.grad for t in outs], x.grad
    (ours, ox), (theirs, tx) = both(fn)
    assert [g is None for g in ours] == [g is None for g in theirs] == [False] + [True] * (len(theirs) - 1)
    assert_close(ours[0], theirs[0])
    assert_close(ox, tx)


def test_leaf_grads_land_as_soon_as_ready():
    # a leaf used only near the output is accumulated before the rest of the graph runs
    events = []
    a = ember.ones(3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    b.register_post_accumulate_grad_hook(lambda p: events.append("b"))
    h = a.exp()
    h.register_hook(lambda g: events.append("h"))
    (h * b).sum().backward()
    assert events == ["b", "h"]


# --------------------------------------------------------------------- queue_callback
def test_queue_callback_runs_once_after_backward():
    events = []
    x = ember.ones(2, requires_grad=True)

    def hook(g):
        events.append("hook")
        queue_callback(lambda: events.append(("callback", x.grad.tolist())))

    x.register_hook(hook)
    (x * 2).sum().backward()
    assert events == ["hook", ("callback", [2.0, 2.0])]
    (x * 2).sum().backward()
    assert events[-1] == ("callback", [4.0, 4.0]) and len(events) == 4
    assert ember.autograd.queue_callback is queue_callback


@pytest.mark.parametrize("create_graph", [False, True])
def test_queued_callbacks_run_in_order_under_the_backwards_grad_mode(create_graph):
    """Callbacks run once the backward is done, in the order queued, one queued by a callback after those queued
    before it, each under the backward's grad mode (enabled only with create_graph), as PyTorch's engine runs
    them."""
    def fn(m, queue):
        events = []
        x = m.ones(2, requires_grad=True)

        def hook(g):
            events.append("hook")
            queue(lambda: (events.append(("A", m.is_grad_enabled())), queue(lambda: events.append("D"))))
            queue(lambda: events.append(("B", x.grad.tolist())))
            queue(lambda: events.append("C"))

        y = x * 2
        y.register_hook(hook)
        y.sum().backward(create_graph=create_graph)
        return events

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (PyTorch: backward with create_graph=True on a leaf)
        theirs = fn(torch, torch.autograd.Variable._execution_engine.queue_callback)
    assert fn(ember, queue_callback) == theirs == ["hook", ("A", create_graph), ("B", [2.0, 2.0]), "C", "D"]


def test_queue_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match="backward"):
        queue_callback(lambda: None)


# --------------------------------------------------------------------- version counters
def test_inplace_on_saved_tensor_detected():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = x * 2
        z = y.exp()  # saves its output
        z.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_inplace_on_saved_input_detected_through_view():
    for m in (ember, torch):
        a = m.ones(2, 3)
        w = m.ones(3, requires_grad=True)
        y = (a * w).sum()
        a[0].fill_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_inplace_not_saved_is_fine():
    def fn(m):
        x = m.ones(3, requires_grad=True)
        y = x + 1  # add saves nothing
        y.mul_(2)
        y.sum().backward()
        return x.grad
    assert_close(*both(fn))


@pytest.mark.parametrize("equation", ["ij->j", "ij->ji", "ii->i", "ij->ij"])
def test_inplace_on_an_operand_no_gradient_reads_is_fine(equation):
    """A one-operand einsum is linear: its gradient reads only the operand's shape, so (as PyTorch, which saves
    nothing for it) changing the operand in place before backward is no error."""
    def fn(m):
        x = m.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
        a = x * 1
        y = m.einsum(equation, a)
        a.add_(1)
        (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return x.grad
    assert_close(*both(fn))


def test_inplace_on_leaf_requiring_grad_raises():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.mul_(2)
    with ember.no_grad():
        x.mul_(2)
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_grad_assignment_checks():
    x = ember.ones(2, requires_grad=True)
    x.grad = ember.zeros(2)
    x.grad = None
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = ember.zeros(3)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = ember.zeros(2, dtype=ember.float64)


# --------------------------------------------------------------------- autograd.grad
def test_autograd_grad():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0, -1.0], requires_grad=True)
        out = (x * y * x).sum()
        gx, gy = m.autograd.grad(out, [x, y])
        return gx, gy, x.grad
    (ex, ey, exg), (tx, ty, txg) = both(fn)
    assert_close(ex, tx)
    assert_close(ey, ty)
    assert exg is None and txg is None


def test_autograd_grad_options():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    u = ember.tensor([1.0], requires_grad=True)
    out = x * x
    (g,) = ember.autograd.grad(out, x, grad_outputs=ember.tensor([1.0, 0.5]), retain_graph=True)
    assert g.tolist() == [2.0, 2.0]
    (g,) = ember.autograd.grad(out.sum(), x, retain_graph=True)
    assert g.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="allow_unused"):
        ember.autograd.grad(out.sum(), [x, u], retain_graph=True)
    gx, gu = ember.autograd.grad(out.sum(), [x, u], allow_unused=True)
    assert gu is None and gx.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="second time"):
        ember.autograd.grad(out.sum(), x)


def test_autograd_grad_of_non_leaf():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()
        return m.autograd.grad((h * h).sum(), h)[0]
    assert_close(*both(fn))


# --------------------------------------------------------------------- custom Function
def _cube(m):
    """The same custom Function for ember and for torch: x -> k x^3."""

    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2 * ctx.k, None

    return Cube


Cube = _cube(ember)


def test_custom_function():
    def fn(m):
        x = m.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = _cube(m).apply(x, 2.0)
        (y.sin()).sum().backward()
        return y, x.grad
    (ey, eg), (ty, tg) = both(fn)
    assert_close(ey.detach(), ty.detach())
    assert_close(eg, tg)
    x = ember.ones(2, requires_grad=True)
    y = Cube.apply(x, 1.0)
    assert y.grad_fn is not None and y.requires_grad
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        _ = y.grad_fn.ctx.saved_tensors
    with ember.no_grad():
        assert Cube.apply(x, 1.0).grad_fn is None


def test_custom_function_with_setup_context_as_pytorch():
    """PyTorch 2's style: forward takes no ctx; setup_context(ctx, inputs, output) fills it (no_grad in both)."""
    def fn(m):
        class ScaledTanh(m.autograd.Function):
            @staticmethod
            def forward(x, scale):
                assert not m.is_grad_enabled()
                return m.tanh(x) * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                assert not m.is_grad_enabled()
                x, scale = inputs
                ctx.save_for_backward(x, output)
                ctx.scale = scale

            @staticmethod
            def backward(ctx, g):
                x, out = ctx.saved_tensors
                return g * (ctx.scale - out * out / ctx.scale), None

        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = ScaledTanh.apply(x, 1.5)
        (y * y).sum().backward()
        return y, x.grad, type(y.grad_fn).__name__
    (ey, eg, ename), (ty, tg, tname) = both(fn)
    assert_close(ey.detach(), ty.detach())
    assert_close(eg, tg)
    assert ename == tname == "ScaledTanhBackward"


def test_custom_function_setup_context_sees_defaults_and_keywords():
    """PyTorch binds apply's arguments to forward's signature: setup_context's inputs hold the defaults and the
    keyword arguments, in forward's order."""
    def fn(m, **kw):
        class Scale(m.autograd.Function):
            @staticmethod
            def forward(x, scale=2.0):
                return x * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, scale = inputs
                ctx.scale = scale

            @staticmethod
            def backward(ctx, g):
                return g * ctx.scale, None

        x = m.ones(3, requires_grad=True)
        Scale.apply(x, **kw).sum().backward()
        return x.grad
    for kw in ({}, {"scale": 3.0}):
        assert_close(fn(ember, **kw), fn(torch, **kw))


def _weighted(m):
    class Weighted(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, w=None, scale=2.0):
            ctx.save_for_backward(x, w)
            ctx.scale, ctx.seen = scale, ctx.needs_input_grad
            return x * scale * (1 if w is None else w)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            grads = (g * ctx.scale * (1 if w is None else w), None if w is None else g * x * ctx.scale, None)
            return grads[:len(ctx.seen)]  # one per input forward was given
    return Weighted


@pytest.mark.parametrize("call", ["x=", "x, w=", "w=, x=", "x, w, scale"])
def test_custom_function_with_ctx_takes_tensors_by_keyword_as_inputs(call):
    """forward(ctx, ...) given keyword arguments: PyTorch makes those naming its parameters inputs in its order
    (up to the last one given, no defaults filled in), so a tensor passed by keyword gets its gradient."""
    def fn(m):
        gen = np.random.default_rng(0)
        x, w = (m.tensor(gen.standard_normal(3), requires_grad=True) for _ in range(2))
        weighted = _weighted(m)
        args, kwargs = {"x=": ((), {"x": x}), "x, w=": ((x,), {"w": w}), "w=, x=": ((), {"w": w, "x": x}),
                        "x, w, scale": ((x, w, 3.0), {})}[call]
        y = weighted.apply(*args, **kwargs)
        y.sum().backward()
        return y, x.grad, w.grad if w.grad is not None else m.zeros(3)
    for got, want in zip(fn(ember), fn(torch)):
        assert_close(got, want)


def test_custom_function_with_ctx_missing_an_earlier_keyword_is_pytorchs_error():
    assert_same_error(lambda m: _weighted(m).apply(m.ones(3, requires_grad=True), scale=3.0))


@pytest.mark.parametrize("style", ["ctx", "setup_context"])
def test_custom_function_mark_dirty_gradient_reaches_the_input_history(style):
    """An input modified in place, marked dirty and returned: the output is that tensor, and its gradient goes
    through the Function's backward to the history the input had (here x * 1, so to x)."""
    def fn(m):
        if style == "ctx":
            class Triple(m.autograd.Function):
                @staticmethod
                def forward(ctx, y, w):
                    y.mul_(w)
                    ctx.mark_dirty(y)
                    ctx.save_for_backward(w)
                    return y

                @staticmethod
                def backward(ctx, g):
                    w, = ctx.saved_tensors
                    return g * w, (g * 7).sum()
        else:
            class Triple(m.autograd.Function):
                @staticmethod
                def forward(y, w):
                    return y.mul_(w)

                @staticmethod
                def setup_context(ctx, inputs, output):
                    ctx.mark_dirty(inputs[0])
                    ctx.save_for_backward(inputs[1])

                @staticmethod
                def backward(ctx, g):
                    w, = ctx.saved_tensors
                    return g * w, (g * 7).sum()

        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = m.tensor(3.0, requires_grad=True)
        y = x * 1
        z = Triple.apply(y, w)
        (z * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        return z is y, x.grad, w.grad, z.grad_fn.name()
    (e_same, e_gx, e_gw, e_name), (t_same, t_gx, t_gw, t_name) = fn(ember), fn(torch)
    assert e_same and t_same
    assert e_gx is not None
    assert_close(e_gx, t_gx)
    assert_close(e_gw, t_gw)
    assert e_name == t_name == "TripleBackward"


def test_custom_function_mark_dirty_on_a_view_rewrites_the_base_history():
    """A view marked dirty: as an in-place op on a view, the base takes the Function's result in the view's region
    (PyTorch's CopySlices), and the rest of the base's gradient goes straight to its old history."""
    def fn(m):
        class Scale(m.autograd.Function):
            @staticmethod
            def forward(ctx, y, w):
                y.mul_(w)
                ctx.mark_dirty(y)
                ctx.save_for_backward(w)
                return y

            @staticmethod
            def backward(ctx, g):
                w, = ctx.saved_tensors
                return g * w, (g * 7).sum()

        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = m.tensor(3.0, requires_grad=True)
        base = x * 1
        y = base[1:]
        z = Scale.apply(y, w)
        (base * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        return z is y, base.detach(), x.grad, w.grad, type(base.grad_fn).__name__
    (e_same, e_base, e_gx, e_gw, e_fn), (t_same, t_base, t_gx, t_gw, t_fn) = fn(ember), fn(torch)
    assert e_same and t_same
    assert e_fn == t_fn == "CopySlices"
    assert_close(e_base, t_base)
    assert e_gx is not None
    assert_close(e_gx, t_gx)
    assert_close(e_gw, t_gw)


def test_custom_function_node_class_is_named_after_the_function():
    nodes = []
    for m in (ember, torch):
        y = _cube(m).apply(m.ones(2, requires_grad=True), 1.0)
        nodes.append(y.grad_fn)
    assert [type(n).__name__ for n in nodes] == ["CubeBackward", "CubeBackward"]
    assert repr(nodes[0]).startswith("<ember.autograd.function.CubeBackward object at ")
    assert repr(nodes[1]).startswith("<torch.autograd.function.CubeBackward object at ")
    assert isinstance(nodes[0], _cube(ember)._backward_cls.__mro__[1])  # (every Function's nodes share one base)


def test_custom_function_saved_tensor_modified():
    x = ember.ones(2, requires_grad=True)
    h = x * 1
    y = Cube.apply(h, 1.0)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# --------------------------------------------------------------------- misc
def test_grad_fn_names_and_next_functions():
    x = ember.ones(2, requires_grad=True)
    y = (x * 2 + 1).sum()
    assert y.grad_fn.name() == "SumBackward0"
    (add_fn, _), = y.grad_fn.next_functions
    assert add_fn.name() == "AddBackward0"
    acc = (x * 2).grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x  # (PyTorch's, in its namespace)


def test_next_functions_of_inputs_without_grad_match_pytorch():
    """An input that needs no gradient (a constant tensor, a Python scalar) is ``(None, 0)`` in
    ``next_functions``, in its operand's place, as PyTorch's."""
    def layout(m):
        x = m.ones(4, requires_grad=True)
        y = m.ones(4)
        return [[(fn is None, nr) for fn, nr in out.grad_fn.next_functions]
                for out in (x * y, y * x, x * 2, y / x, m.maximum(y, x))]

    assert layout(ember) == layout(torch)


def test_leaf_accumulator_is_kept_and_forms_no_cycle():
    import gc
    import weakref

    x = ember.ones(3, requires_grad=True)
    first = (x * 2).grad_fn.next_functions[0][0]
    again = (x + 1).grad_fn.next_functions[0][0]
    assert first is again  # one accumulator per leaf: hooks on it persist, as DDP relies on
    # Across graphs, gradients still accumulate into the same leaf.
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0]
    # The leaf is freed by reference counting alone (no cycle through its accumulator)...
    gc.disable()
    try:
        ref = weakref.ref(x)
        y = (x * 2).sum()
        del x
        assert ref() is None
        # ...and a graph that outlives its leaf still runs backward (the gradient has nowhere to go).
        y.backward()
        assert first.variable is None
    finally:
        gc.enable()


def test_gradient_dtype_matches_leaf():
    x = ember.ones(2, dtype=ember.float64, requires_grad=True)
    (x.float() * 2).sum().backward()
    assert x.grad.dtype == ember.float64


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_grad_mode_is_per_thread(lib):
    import threading

    inside, done, seen = threading.Event(), threading.Event(), {}

    def worker():
        with lib.no_grad():
            inside.set()
            done.wait(10)
            seen["worker"] = lib.is_grad_enabled()

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(10)
    x = lib.ones(2, requires_grad=True)
    seen["main"] = (lib.is_grad_enabled(), (x * 2).requires_grad)  # the worker's no_grad is its own
    with lib.no_grad():
        done.set()
        t.join(10)
        new = threading.Thread(target=lambda: seen.__setitem__("new thread", lib.is_grad_enabled()))
        new.start()
        new.join(10)  # a new thread starts recording, whatever its creator's mode
    seen["main after"] = lib.is_grad_enabled()
    assert seen == {"worker": False, "main": (True, True), "new thread": True, "main after": True}


def test_embedding_of_a_non_leaf_weight_gets_its_gradient_through_the_node():
    """A lookup's weight gradient is built in the leaf's gradient slot only when the weight is a leaf; a
    computed weight (``w * 2``) sends it through that node to the leaf, as in PyTorch."""
    w = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    grads = []
    for fw in (torch, ember):
        weight = fw.tensor(w, requires_grad=True)
        fw.nn.functional.embedding(fw.tensor([0, 2, 2]), weight * 2).sum().backward()
        grads.append(weight.grad)
    assert_close(grads[1], grads[0])


def test_gradient_kept_by_an_accumulators_pre_hook_is_not_the_grad_slot():
    """A pre-hook on a leaf's accumulator that keeps the gradient it is given keeps it intact when ``.grad``
    is then zeroed in place: the lookup does not build the gradient in the slot that becomes ``.grad``, as
    PyTorch copies a gradient still referenced elsewhere. (ember's accumulator takes the pre-hook as
    ``register_pre_hook(0, hook)`` with the gradient itself; PyTorch's ``register_prehook`` with a tuple.)"""
    kept = {}
    for fw in (torch, ember):
        fw.manual_seed(0)
        emb = fw.nn.Embedding(5, 3)
        opt = fw.optim.SGD(emb.parameters(), lr=0.1)  # (ember: the weight gets its gradient store's slot)
        out = emb(fw.tensor([0, 2, 2]))
        acc = out.grad_fn.next_functions[0][0]
        if fw is torch:
            acc.register_prehook(lambda g: kept.__setitem__(torch, g[0]))
        else:
            acc.register_pre_hook(0, lambda g: kept.__setitem__(ember, g))
        out.sum().backward()
        opt.zero_grad(set_to_none=False)
        assert float(emb.weight.grad.abs().sum()) == 0
    assert_close(kept[ember], kept[torch])
    assert float(kept[ember].sum()) == 9


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "sqrt"])
def test_second_derivative_of_an_op_that_saves_its_output_on_a_0d_tensor(op):
    """An op that saves its output (exp, tanh, sigmoid, sqrt) on a 0-d tensor, differentiated twice: the saved
    output is the tensor's own array (NumPy answers a 0-d op with a scalar), so create_graph records it as the
    output and the second derivative matches PyTorch's."""
    got = []
    for fw in (torch, ember):
        x = fw.tensor(0.7, requires_grad=True)
        (g,) = fw.autograd.grad(getattr(x, op)(), x, create_graph=True)
        (gg,) = fw.autograd.grad(g, x)
        got.append((g.detach(), gg))
    assert_close(got[1][0], got[0][0])
    assert_close(got[1][1], got[0][1])


def test_nodes_made_by_apply_define_no_init():
    """``Node.apply`` makes its node without calling ``__init__`` (a Python frame per recorded op): a node class
    with an ``__init__`` of its own would silently go without it. Only the nodes made directly have one:
    AccumulateGrad (per leaf) and RecvRpcBackward (where a tensor received over RPC leads back to its sender)."""
    import ember.distributed.autograd  # noqa: F401 (their nodes too)
    import ember.distributions  # noqa: F401
    import ember.fft  # noqa: F401
    import ember.linalg  # noqa: F401
    import ember.special  # noqa: F401
    from ember.autograd.graph import AccumulateGrad, Node
    from ember.distributed.rpc._grad_context import RecvRpcBackward

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    with_init = {c for c in subclasses(Node) if c.__init__ is not Node.__init__} - {AccumulateGrad, RecvRpcBackward}
    assert not with_init
    assert len(set(subclasses(Node))) > 100


def test_a_broadcast_gradient_from_a_custom_function_is_summed_to_its_input_as_in_pytorch():
    """A Function's backward may return a gradient that broadcasts against its input: it is summed down to the
    input's shape (leading dims and dims of size 1), as PyTorch does."""
    def run(m):
        class Spread(m.autograd.Function):
            @staticmethod
            def forward(ctx, b):
                return b * 2

            @staticmethod
            def backward(ctx, g):
                return g * m.arange(12.0, dtype=g.dtype).reshape(3, 1, 4)  # (3, 2, 4) for an input of (2, 1)

        b = m.tensor([[1.0], [2.0]], requires_grad=True)
        (Spread.apply(b).expand(2, 4) * m.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return b.grad.numpy()

    np.testing.assert_array_equal(run(ember), run(torch))


def test_a_node_post_hook_returning_the_wrong_number_of_gradients_is_pytorchs_error():
    for m in (torch, ember):
        x = m.ones(2, requires_grad=True)
        y = (x * 2).sum()
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0], grad_inputs[0]))
        with pytest.raises(RuntimeError, match=r"hook '<lambda>' has returned an incorrect number of values "
                                               r"\(got 2, but expected 1\)"):
            y.backward()


def test_grad_of_several_outputs_skips_a_root_that_reaches_no_input_as_pytorch():
    """autograd.grad of two roots, one of which does not depend on the input: that root's node runs pruned (no
    gradient computed), the other's gradient is the answer, and the unrelated leaf gets no .grad."""
    got = {}
    for m in (torch, ember):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        z = m.tensor([3.0], requires_grad=True)
        (gx,) = m.autograd.grad([(x * x).sum(), (z * 3).sum()], [x])
        got[m] = gx.numpy().tolist()
        assert z.grad is None
    assert got[ember] == got[torch] == [2.0, 4.0]


def _view_of_a_split_output(m):
    p, _ = m.ones(4, requires_grad=True).clone().split(2)
    p[:1].mul_(2)


def _view_of_a_no_grad_view(m):
    x = m.ones(4, requires_grad=True).clone()
    with m.no_grad():
        v = x[:2]
    v.unsqueeze(0).mul_(2)


def _view_of_an_unbind_output(m):
    p, _ = m.ones(1, 4, 2, requires_grad=True).clone().unbind(2)
    p.squeeze(0).add_(1)


@pytest.mark.parametrize("case", [_view_of_a_split_output, _view_of_a_no_grad_view, _view_of_an_unbind_output])
def test_in_place_on_a_view_of_a_view_names_the_last_view_op_as_pytorch(case):
    """A view of a view inherits how the first was made (an output of a multi-view op, or made under no_grad):
    writing it in place is PyTorch's error, word for word, naming the last view's op as PyTorch labels it."""
    assert_same_error(case)


def _select_of_a_split_output(m):
    p, _ = m.ones(4, 3, requires_grad=True).clone().split(2)
    p[0].mul_(2)


def _slice_of_a_split_output(m):
    p, _ = m.ones(4, 3, requires_grad=True).clone().split(2)
    p[:1].mul_(2)


def _transpose_of_a_split_output(m):
    p, _ = m.ones(4, 3, requires_grad=True).clone().split(2)
    p.transpose(0, 1).mul_(2)


def test_view_of_a_view_labels_follow_each_op_and_index():
    """The label of the last view op is worked out once per op class, except for indexing, whose label follows the
    index (``x[0]``: Select, ``x[:1]``: Slice): each case, run twice in turns, gives PyTorch's message."""
    cases = [_select_of_a_split_output, _slice_of_a_split_output, _transpose_of_a_split_output] * 2
    for case in cases:
        assert_same_error(case)


BROADCAST_SHAPES = [(), (1,), (3,), (4, 1), (1, 3), (1, 4, 3), (1, 4, 1), (2, 1, 1), (1, 1, 3), (2, 4, 3), (1, 1, 1, 1)]


def test_gradients_of_broadcast_operands_are_summed_to_their_shapes_as_pytorchs():
    """Every pair of shapes that broadcast (leading dims added, size-1 dims stretched, a size-1 leading dim of the
    result, 0-d): each operand's gradient of a weighted product is the output's summed back to its shape
    (engine.sum_to_shape), against PyTorch's."""
    rng = np.random.default_rng(0)
    for sa in BROADCAST_SHAPES:
        for sb in BROADCAST_SHAPES:
            try:
                out_shape = np.broadcast_shapes(sa, sb)
            except ValueError:
                continue
            a, b, c = rng.standard_normal(sa), rng.standard_normal(sb), rng.standard_normal(out_shape)
            grads = []
            for m in (ember, torch):
                ta, tb = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
                (ta * tb * m.tensor(c)).sum().backward()
                grads.append((ta.grad, tb.grad))
            for ours, theirs in zip(*grads):
                assert_close(ours, theirs, atol=1e-12, rtol=1e-12, msg=f"{sa} * {sb}")


def test_an_op_on_an_empty_broadcast_view_gives_pytorchs_contiguous_strides():
    """An empty result whose array NumPy gives all-zero strides (an op on an expanded empty view) has PyTorch's
    contiguous strides, as every recorded op's result does."""
    for make in (lambda m: m.tensor(1.0, requires_grad=True).expand(0, 3) * 1,
                 lambda m: m.ones(1, 3, requires_grad=True).expand(0, 3).exp()):
        e, t = make(ember), make(torch)
        assert (tuple(e.shape), e.stride()) == (tuple(t.shape), t.stride()) == ((0, 3), (3, 1))


def _saved_identity_run(m):
    seen = {}

    class Scale(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            y, top = x * w, x.argmax()
            ctx.mark_non_differentiable(top)
            ctx.save_for_backward(x, w, y, top)
            return y, top

        @staticmethod
        def backward(ctx, g, g_top):
            x, w, y, top = ctx.saved_tensors
            seen.update(x=x is X, w=w is W, y=y is Y, w_grad=w.requires_grad, y_grad=y.requires_grad,
                        top_grad=top.requires_grad)
            with m.enable_grad():  # (torchdiffeq's adjoint: a gradient of the saved parameters inside backward)
                (inner,) = m.autograd.grad((w * w).sum(), (w,))
            return g * w, g * x + 0 * inner

    W = m.nn.Parameter(m.tensor([1.0, 2.0, 3.0]))
    X = m.tensor([2.0, 3.0, 4.0], requires_grad=True) * 1
    Y, _ = Scale.apply(X, W)
    Y.sum().backward()
    return seen, W.grad.tolist()


def test_saved_inputs_come_back_as_the_callers_tensors_as_pytorchs():
    """``ctx.saved_tensors`` gives back a saved input as the very tensor passed (still requiring grad, so backward
    can differentiate through it, as torchdiffeq's adjoint does); a saved output comes back as a new tensor with
    the Function's history (a non-differentiable one without)."""
    got, expected = _saved_identity_run(ember), _saved_identity_run(torch)
    assert got == expected
    assert expected[0] == {"x": True, "w": True, "y": False, "w_grad": True, "y_grad": True, "top_grad": False}


def _hooked_backward_with_inputs(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([1.0], requires_grad=True)
    calls = []
    x.register_hook(lambda g: (calls.append("x"), g * 2)[1])
    w.register_post_accumulate_grad_hook(lambda p: calls.append("w post"))
    (x * 3).sum().backward(inputs=[x])
    first = x.grad.tolist()
    (w * x).sum().backward(inputs=[w, x])
    return first, w.grad.tolist(), x.grad.tolist(), calls


def test_backward_with_inputs_runs_a_leafs_hooks_once_as_pytorchs():
    """``backward(inputs=[leaf])``: the leaf's tensor hooks run once before its gradient is accumulated (a doubling
    hook doubled it twice), its post-accumulate-grad hooks after."""
    assert _hooked_backward_with_inputs(ember) == _hooked_backward_with_inputs(torch)
