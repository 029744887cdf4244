"""``out=`` that requires grad under grad mode: PyTorch refuses it as it refuses an input that requires grad
("<op>(): functions with out=... arguments don't support automatic differentiation ..."), a leaf or not, before
any resize; a factory's (``arange``) only a leaf out. Under ``no_grad`` the result is written."""

import pytest
import torch
from oracle import assert_close, assert_same_error, outcomes

import ember

CALLS = {
    "add": lambda m, o: m.add(m.ones(3), 1, out=o),
    "exp": lambda m, o: m.exp(m.ones(3), out=o),
    "sum": lambda m, o: m.sum(m.ones(3, 2), 1, out=o),
    "mm": lambda m, o: m.mm(m.ones(3, 2), m.ones(2, 1), out=o.view(3, 1)),
    "cat": lambda m, o: m.cat([m.ones(3)], out=o),
    "clamp": lambda m, o: m.clamp(m.ones(3), 0, out=o),
    "max_dim": lambda m, o: m.max(m.ones(3, 2), 1, out=(o, m.zeros(3, dtype=m.long))),
    "max_all": lambda m, o: m.max(m.ones(3), out=o[0]),
    "outer": lambda m, o: m.outer(m.ones(3), m.ones(1), out=o.view(3, 1)),
    "special_erf": lambda m, o: m.special.erf(m.ones(3), out=o),
    "resized": lambda m, o: m.add(m.ones(4), 1, out=o),
    "arange_leaf": lambda m, o: m.arange(3.0, out=o),
    "softmax": lambda m, o: m.softmax(m.ones(3), 0, out=o),
    "log_softmax": lambda m, o: m.log_softmax(m.ones(3), 0, out=o),
}


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_requiring_grad_is_refused(name, leaf):
    if name in ("arange_leaf", "softmax", "log_softmax") and not leaf:
        pytest.skip("a factory (softmax) writes a non-leaf out (below)")

    def run(m):
        o = m.zeros(3, requires_grad=True)
        return CALLS[name](m, o if leaf else o * 1)

    assert_same_error(run)


def test_factory_writes_a_non_leaf_out():
    def run(m):
        o = m.zeros(3, requires_grad=True) * 1
        return m.arange(3.0, out=o).detach()

    (got, _), (want, _) = outcomes(run)
    assert_close(got, want)


@pytest.mark.parametrize("name", ["add", "sum", "cat"])
def test_out_requiring_grad_is_written_under_no_grad(name):
    def run(m):
        o = m.zeros(3, requires_grad=True)
        with m.no_grad():
            r = CALLS[name](m, o)
        assert r is o and o.requires_grad and o.grad_fn is None
        return o.detach()

    (got, _), (want, _) = outcomes(run)
    assert_close(got, want)


@pytest.mark.parametrize("call", [
    lambda m, x: m.lt(x, 0, out=m.empty(0, dtype=m.bool)),
    lambda m, x: m.eq(x, x, out=m.empty(0, dtype=m.bool)),
    lambda m, x: m.logical_and(x, x, out=m.empty(0, dtype=m.bool)),
    lambda m, x: m.logical_not(x, out=m.empty(0, dtype=m.bool)),
    lambda m, x: m.signbit(x, out=m.empty(0, dtype=m.bool)),
    lambda m, x: m.argmax(x, 0, out=m.empty(0, dtype=m.long)),
    lambda m, x: m.floor_divide(x, 2.0, out=m.empty(0)),
    lambda m, x: m.heaviside(x, x, out=m.empty(0)),
])
def test_ops_autograd_does_not_differentiate_write_out_from_inputs_that_require_grad(call):
    # PyTorch refuses out= only for ops it differentiates: comparisons, logical ops and argmax write their result
    def run(m):
        x = m.tensor([-1.5, 0.0, 2.0], requires_grad=True)
        result = call(m, x)
        return result, result.requires_grad

    (got, got_rg), (want, want_rg) = run(ember), run(torch)
    assert_close(got, want)
    assert got_rg == want_rg


SOFTMAXES = ["softmax", "log_softmax"]


@pytest.mark.parametrize("view", [False, True])
@pytest.mark.parametrize("name", SOFTMAXES)
def test_softmax_out_from_an_input_that_requires_grad_records_no_derivative(name, view):
    """torch.softmax / log_softmax with out= and an input that requires grad: PyTorch writes the values and gives
    out its ``NotImplemented`` node on that input (a view's base: CopySlices); the backward through it raises."""
    def run(m):
        x = m.tensor([[0.5, -1.0, 2.0], [0.0, 3.0, 1.0]], requires_grad=True)
        whole = m.zeros(2, 4)
        o = whole[:, :3] if view else m.zeros(2, 3)
        r = getattr(m, name)(x, 1, out=o)
        fn = (whole if view else o).grad_fn
        seen = (r is o, o.requires_grad, o.is_leaf, o._version, type(fn).__name__)
        if not view:  # (PyTorch's CopySlices keeps of the node's edges all but its first: not compared)
            seen += ([type(f).__name__ for f, _ in fn.next_functions],)
        try:
            o.sum().backward()
        except RuntimeError as err:
            return o.detach(), seen, str(err)
        return o.detach(), seen, None

    (got, got_seen, got_err), (want, want_seen, want_err) = run(ember), run(torch)
    assert_close(got, want)
    assert got_seen == want_seen
    assert got_err == want_err and want_err is not None


@pytest.mark.parametrize("name", SOFTMAXES)
def test_softmax_out_dtype_checked_exactly(name):
    """out's dtype is the result's (dtype= included): PyTorch's C++-typed refusal otherwise."""
    assert_same_error(lambda m: getattr(m, name)(m.ones(3), 0, out=m.zeros(3, dtype=m.float64)))
    for m in (ember, torch):
        o = m.zeros(3, dtype=m.float64)
        assert getattr(m, name)(m.ones(3), 0, dtype=m.float64, out=o) is o
    (got, _), (want, _) = outcomes(lambda m: getattr(m, name)(m.arange(3.0), 0, dtype=m.float64,
                                                           out=m.zeros(3, dtype=m.float64)))
    assert_close(got, want)


@pytest.mark.parametrize("name", SOFTMAXES)
def test_softmax_out_may_overlap_its_input(name):
    """PyTorch's softmax computes before writing: out the input itself, or overlapping it in part, is written."""
    def run(m):
        x = m.tensor([0.5, 1.5, 2.0, 3.0])
        getattr(m, name)(x[:3], 0, out=x[1:])
        y = m.tensor([0.5, 1.5, 2.0])
        getattr(m, name)(y, 0, out=y)
        return m.cat([x, y])

    (got, _), (want, _) = outcomes(run)
    assert_close(got, want)


@pytest.mark.parametrize("name", SOFTMAXES)
def test_softmax_out_that_is_no_leaf_takes_the_write(name):
    """A non-leaf out that requires grad is written (a leaf one is refused, above): its node is NotImplemented, with
    an edge to each input that requires grad and to out's previous history."""
    def run(m):
        o = m.zeros(3, requires_grad=True) * 1
        x = m.tensor([0.5, 1.5, 2.0], requires_grad=True)
        names = []
        for source in (x, x.detach()):
            getattr(m, name)(source, 0, out=o)
            names.append([type(f).__name__ for f, _ in o.grad_fn.next_functions])
        return o.detach(), type(o.grad_fn).__name__, names

    (got, *got_names), (want, *want_names) = run(ember), run(torch)
    assert_close(got, want)
    assert got_names == want_names
