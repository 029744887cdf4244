"""Reverse-mode Jacobians from one backward pass over the whole basis of cotangents (``ember/func/_batched_vjp.py``):
``jacrev``, ``autograd.functional.jacobian``/``hessian`` with ``vectorize=True`` and ``autograd.grad`` with
``is_grads_batched=True``, against PyTorch on the same float64 inputs (values, structures, compositions), with
counts of the backward passes that ran (one, where a loop over the rows would run one per output element); and
vmap's batching rules for ``torch.fft``."""

import numpy as np
import pytest
import torch

import ember
import ember.autograd.engine
import ember.func._batched_vjp
from tests.autodiff_oracle import arrays, assert_same, both


@pytest.fixture
def paths(monkeypatch):
    """Counts of backward walks and of batched walks that ran (True) or fell back to one walk per row (False)."""
    counts = {"backward": 0, "batched": []}
    run_backward, batched_vjp = ember.autograd.engine.run_backward, ember.func._batched_vjp.batched_vjp

    def counting_backward(*args, **kwargs):
        counts["backward"] += 1
        return run_backward(*args, **kwargs)

    def counting_vjp(*args, **kwargs):
        out = batched_vjp(*args, **kwargs)
        counts["batched"].append(out is not None)
        return out

    monkeypatch.setattr(ember.autograd.engine, "run_backward", counting_backward)
    monkeypatch.setattr(ember.autograd, "run_backward", counting_backward)
    monkeypatch.setattr(ember.func._batched_vjp, "batched_vjp", counting_vjp)
    return counts


def _run(call, *shapes, atol=1e-10):
    theirs, mine = both(arrays(*shapes))
    e = call(ember, mine)
    assert_same(e, call(torch, theirs), atol=atol)
    return e


def _mlp(m, w1, b1, w2, b2):
    F = m.nn.functional
    return lambda x: F.linear(F.gelu(F.layer_norm(F.linear(x, w1, b1), (7,))), w2, b2).softmax(-1)


MLP = ((16, 5), (7, 5), (7,), (3, 7), (3,))


def test_jacrev_of_an_mlp_is_one_backward_pass(paths):
    # 16 x 3 = 48 output elements: a loop over the rows would walk the graph 48 times
    _run(lambda m, xs: m.func.jacrev(_mlp(m, *xs[1:]))(xs[0]), *MLP, atol=1e-6)  # (ember's GELU gradient: 1e-7)
    assert paths == {"backward": 1, "batched": [True]}


def test_jacrev_runs_a_custom_functions_backward_once_on_the_batch(paths):
    calls = []

    class Sine(ember.autograd.Function):  # (with setup_context: torch.func refuses the ctx-in-forward style)
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            calls.append(tuple(g.shape))
            return ctx.saved_tensors[0].cos() * g

    x = ember.tensor(arrays((2, 3))[0])
    jac = ember.func.jacrev(Sine.apply)(x)
    expected = torch.func.jacrev(torch.sin)(torch.tensor(x.numpy()))
    np.testing.assert_allclose(jac.numpy(), expected.numpy(), rtol=1e-12)
    assert calls == [(2, 3)] and paths["backward"] == 1  # one call, on the batch (its example's shape)


@pytest.mark.parametrize("argnums", [0, 1, (0, 2), (4, 1, 0)])
def test_jacrev_argnums_of_an_mlp(paths, argnums):
    def call(m, xs):
        return m.func.jacrev(lambda x, w1, b1, w2, b2: _mlp(m, w1, b1, w2, b2)(x), argnums=argnums)(*xs)

    _run(call, *MLP, atol=1e-6)
    assert paths["backward"] == 1 and paths["batched"] == [True]


def test_jacrev_of_cross_entropy_and_losses(paths):
    target = np.array([1, 0, 2, 2])

    def call(m, xs):
        F = m.nn.functional
        return (m.func.jacrev(lambda x: F.cross_entropy(x, m.tensor(target), label_smoothing=0.1))(xs[0]),
                m.func.jacrev(lambda x: F.mse_loss(x, xs[1], reduction="none"))(xs[0]),
                m.func.jacrev(lambda x: F.log_softmax(x * x[:, :1], 1))(xs[0]))

    _run(call, (4, 3), (4, 3))
    assert paths["backward"] == 3 and paths["batched"] == [True] * 3


def test_jacrev_pytrees_has_aux_and_several_outputs(paths):
    def f(m):
        def inner(d):
            h = d["x"] @ d["w"][0].T
            return {"h": h.tanh(), "rest": (h.sum(0), d["x"].exp()[:, 1:])}, {"aux": h.sum()}
        return inner

    def call(m, xs):
        return m.func.jacrev(f(m), has_aux=True)({"x": xs[0], "w": [xs[1]]})

    e = _run(call, (3, 4), (2, 4))
    assert list(e[0]) == ["h", "rest"] and list(e[0]["h"]) == ["x", "w"]
    assert paths["backward"] == 1 and paths["batched"] == [True]


@pytest.mark.parametrize("chunk_size", [1, 4, 7, 100])
def test_jacrev_chunk_size(paths, chunk_size):
    # 12 output elements: ceil(12 / chunk_size) batched passes
    _run(lambda m, xs: m.func.jacrev(lambda x: (x.sin() @ xs[1]) * x[:, :1], chunk_size=chunk_size)(xs[0]),
         (4, 3), (3, 3))
    assert paths["batched"] == [True] * -(-12 // chunk_size)


def test_jacrev_compositions(paths):
    def f(m):
        return lambda x: (x.sin() * x.exp()).sum(1) * x[0, 0]

    def call(m, xs):
        return (m.func.jacrev(m.func.jacrev(f(m)))(xs[0]), m.func.jacrev(m.func.jacfwd(f(m)))(xs[0]),
                m.func.jacfwd(m.func.jacrev(f(m)))(xs[0]), m.func.hessian(lambda x: f(m)(x).sum())(xs[0]))

    _run(call, (3, 2))
    assert all(paths["batched"]) and len(paths["batched"]) == 5  # jacrev(jacrev) has two


def test_vmap_of_jacrev_and_jacrev_of_vmap(paths):
    def call(m, xs):
        f = lambda x, w: (w @ x).tanh() * x.sum()  # noqa: E731
        return (m.func.vmap(m.func.jacrev(f, argnums=(0, 1)), in_dims=(0, None))(xs[0], xs[1]),
                m.func.vmap(m.func.vmap(m.func.jacrev(lambda x: x.sin() * x.cos())))(xs[0][..., None]),
                m.func.jacrev(m.func.vmap(lambda r: r.softmax(0)))(xs[0]))

    _run(call, (5, 3), (2, 3))
    assert paths["batched"] == [True] * 3 and paths["backward"] == 3


def test_jacrev_falls_back_to_rows_where_a_formula_cannot_run_batched(paths):
    # advanced indexing's gradient is an index_put, which has no batching rule yet: one pass per row
    def call(m, xs):
        return m.func.jacrev(lambda x, k: (x[[0, 2, 2], 1:3] * k).tanh(), argnums=(0, 1))(*xs)

    _run(call, (3, 4), (3, 2))
    assert paths["batched"] == [False] and paths["backward"] == 1 + 3 * 2


@pytest.mark.parametrize("create_graph", [False, True])
def test_functional_jacobian_and_hessian_vectorized(paths, create_graph):
    def call(m, xs):
        fn = m.autograd.functional
        x, w = (t.requires_grad_() for t in xs) if create_graph else xs
        f = lambda x, w: ((x @ w.T).tanh(), (x * x).sum())  # noqa: E731
        jac = fn.jacobian(f, (x, w), vectorize=True, create_graph=create_graph)
        hess = fn.hessian(lambda x: (x.sin() * x).sum(), x, vectorize=True, create_graph=create_graph)
        return jac, hess

    _run(call, (2, 3), (4, 3))
    assert paths["batched"][:1] == [True] and all(paths["batched"])


def test_autograd_grad_is_grads_batched(paths):
    def call(m, xs):
        x, w, unused = (t.requires_grad_() for t in xs)
        y = (x @ w.T).tanh()
        seeds = m.tensor(arrays((5, 2, 4), seed=1)[0])
        first = m.autograd.grad(y, (x, w), seeds, is_grads_batched=True, retain_graph=True)
        loose = m.autograd.grad(y, (x, unused), seeds, is_grads_batched=True, retain_graph=True,
                                materialize_grads=True)
        (g,) = m.autograd.grad(y, x, seeds, is_grads_batched=True, create_graph=True)
        second = m.autograd.grad((g * g).sum(), w)
        return first, g, second, loose

    _run(call, (2, 3), (4, 3), (2,))
    assert paths["batched"] == [True] * 3


def test_autograd_grad_is_grads_batched_unused_input_error():
    x, unused = ember.ones(3, requires_grad=True), ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ember.autograd.grad(x * 2, (x, unused), ember.eye(3), is_grads_batched=True)


# ----------------------------------------------------------------------------- torch.fft under vmap
FFTS = [
    ("rfft", lambda m, a: m.fft.rfft(a), False), ("rfft n dim", lambda m, a: m.fft.rfft(a, n=5, dim=0), False),
    ("irfft", lambda m, a: m.fft.irfft(a), True), ("irfft n", lambda m, a: m.fft.irfft(a, 7, 0, "ortho"), True),
    ("fft", lambda m, a: m.fft.fft(a, dim=1), True), ("ifft", lambda m, a: m.fft.ifft(a, norm="forward"), True),
    ("fft of real", lambda m, a: m.fft.fft(a), False), ("fft2", lambda m, a: m.fft.fft2(a), True),
    ("ifft2 s", lambda m, a: m.fft.ifft2(a, s=(3, 5)), True), ("rfft2", lambda m, a: m.fft.rfft2(a), False),
    ("irfft2", lambda m, a: m.fft.irfft2(a), True), ("fftn", lambda m, a: m.fft.fftn(a), True),
    ("fftn s", lambda m, a: m.fft.fftn(a, s=(5,)), True), ("ifftn", lambda m, a: m.fft.ifftn(a, dim=0), True),
    ("rfftn", lambda m, a: m.fft.rfftn(a), False), ("rfftn dim", lambda m, a: m.fft.rfftn(a, dim=(1, 0)), False),
    ("irfftn", lambda m, a: m.fft.irfftn(a), True), ("irfftn s", lambda m, a: m.fft.irfftn(a, s=(4, 6)), True),
    ("hfft", lambda m, a: m.fft.hfft(a), True), ("ihfft", lambda m, a: m.fft.ihfft(a).resolve_conj(), False),
    ("hfft2", lambda m, a: m.fft.hfft2(a), True), ("fftshift", lambda m, a: m.fft.fftshift(a), False),
    ("ifftshift dim", lambda m, a: m.fft.ifftshift(a, dim=(0,)), False),
    ("fftshift int", lambda m, a: m.fft.fftshift(a, 1), False),
]


@pytest.mark.parametrize("in_dims", [0, 1, -1])
@pytest.mark.parametrize("name, f, complex_input", FFTS, ids=[c[0] for c in FFTS])
def test_fft_under_vmap_runs_once_on_the_batch(name, f, complex_input, in_dims, monkeypatch):
    a = arrays((3, 4, 6))[0] + (1j * arrays((3, 4, 6), seed=1)[0] if complex_input else 0)
    calls = []
    original = ember.fft._ops.C2R.apply, ember.fft._ops.C2C.apply, ember.fft._ops.R2C.apply, ember.roll

    expected = torch.func.vmap(lambda v: f(torch, v), in_dims=in_dims)(torch.tensor(a))
    for cls, fn in zip((ember.fft._ops.C2R, ember.fft._ops.C2C, ember.fft._ops.R2C), original):
        monkeypatch.setattr(cls, "apply", lambda *args, _fn=fn, **kw: calls.append(1) or _fn(*args, **kw))
    got = ember.func.vmap(lambda v: f(ember, v), in_dims=in_dims)(ember.tensor(a))  # (no fallback warning)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-12)
    assert len(calls) <= 2  # once for the batch (twice for an N-D real transform), not once per example


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_through_fft_abs(transform):
    fs = [lambda m, a: m.fft.rfft(a).abs(), lambda m, a: m.fft.rfft2(a).abs(),
          lambda m, a: m.fft.irfft(m.fft.rfft(a) * 2, n=8), lambda m, a: m.fft.fftn(a, norm="ortho").abs(),
          lambda m, a: m.fft.ihfft(a).real, lambda m, a: m.fft.fftshift(a.sin())]

    def call(m, xs):
        return [getattr(m.func, transform)(lambda a, f=f: f(m, a))(xs[0]) for f in fs]

    _run(call, (3, 8), atol=1e-12)


@pytest.mark.parametrize("retain_graph", [False, True])
def test_is_grads_batched_frees_the_graph_unless_retained(paths, retain_graph):
    def call(m):
        x = m.ones(3, dtype=m.float64, requires_grad=True)
        y = x.exp() * 2
        m.autograd.grad(y, x, m.eye(3, dtype=m.float64), is_grads_batched=True, retain_graph=retain_graph)
        return m.autograd.grad(y.sum(), x)

    if retain_graph:
        assert_same(call(ember), call(torch))
    else:
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            call(torch)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            call(ember)
    assert paths["batched"] == [True]


def test_is_grads_batched_frees_only_the_nodes_it_ran():
    """Without retain_graph the batched walk frees what it ran, as PyTorch's: a branch to another input keeps its
    saved tensors for a later backward."""
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        z = lib.tensor([0.5, 0.25, 2.0], dtype=lib.float64, requires_grad=True)
        y = x.exp() + z.sin()
        gx = lib.autograd.grad(y, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)[0]
        return gx, lib.autograd.grad(y.sum(), z)[0]

    for ours, theirs in zip(run(ember), run(torch)):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name,f", [("advanced index", lambda lib, x: x[[0, 2, 2], 1:3]),
                                    ("gather", lambda lib, x: x.gather(1, lib.tensor([[0], [3], [1]]))),
                                    ("sort", lambda lib, x: x.sort(1).values),
                                    ("max(dim)", lambda lib, x: x.max(1).values)])
def test_formulas_without_a_batching_rule_fall_back_without_a_warning(name, f):
    """Gradients whose formulas use index_put or scatter (PyTorch batches them; ember has no rule yet) come one row
    at a time, with no vmap performance warning (the suite turns warnings into errors), and equal PyTorch's."""
    x = np.random.default_rng(2).standard_normal((3, 4))
    for jac in (lambda lib, t: lib.func.jacrev(lambda v: f(lib, v))(t),
                lambda lib, t: lib.autograd.functional.jacobian(lambda v: f(lib, v), t, vectorize=True)):
        np.testing.assert_allclose(jac(ember, ember.tensor(x)).numpy(), jac(torch, torch.tensor(x)).numpy())


@pytest.mark.parametrize("batched", [True, False], ids=["batched walk", "one walk per row"])
def test_is_grads_batched_runs_hooks_once_on_the_batch(paths, batched):
    """PyTorch runs a tensor's and a node's hooks once, on the batch of gradients. Where a formula below the hooks
    has no batching rule (advanced indexing's index_put) ember walks once per row: the hooks run once per row then,
    never once more for the batched walk that could not finish."""
    def call(lib):
        x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = (x if batched else x[[0, 2, 1]]).exp()
        calls = []
        y.register_hook(lambda g: calls.append(tuple(g.shape)) or g * 10)
        z = y * 2
        z.grad_fn.register_hook(lambda gi, go: calls.append("node"))
        (g,) = lib.autograd.grad(z, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
        return g, calls

    (mine, my_calls), (theirs, their_calls) = call(ember), call(torch)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-14)
    assert their_calls == ["node", (3,)]
    assert my_calls == their_calls * (1 if batched else 3)
    assert paths["batched"] == [batched]


def test_is_grads_batched_of_an_empty_batch():
    def call(lib):
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        return lib.autograd.grad(x.exp(), x, lib.zeros(0, 3, dtype=lib.float64), is_grads_batched=True)

    for lib in (torch, ember):
        with pytest.raises(IndexError, match="index 0 is out of bounds for dimension 0 with size 0"):
            call(lib)
