"""scatter_reduce / index_reduce (out of place and in place) against PyTorch: values for every reduction with and
without the old values, gradients (ties in amax/amin, zeros in prod), integer dtypes, errors."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember

# duplicates (rows 0 and 2 receive several values), a row that receives nothing (1), ties between values
SRC = np.array([[1.0, 5.0, 2.0], [5.0, 0.0, 3.0], [2.0, 5.0, 0.0], [4.0, 1.0, 0.0]], dtype=np.float32)
SELF = np.array([[5.0, 0.5, 3.0], [1.0, 2.0, 3.0], [0.0, 5.0, -1.0]], dtype=np.float32)
INDEX = np.array([[0, 2, 0], [0, 2, 2], [2, 0, 2], [0, 2, 0]])


def _both(fn, self_np=SELF, src_np=SRC):
    results = []
    for m in (ember, torch):
        x = m.tensor(self_np, requires_grad=True)
        s = m.tensor(src_np, requires_grad=True)
        out = fn(m, x * 1, s * 1)
        out.backward(m.tensor(np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape)) + 1))
        results.append((out, x.grad, s.grad))
    for e, t in zip(*results):
        assert_close(e, t)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_values_and_gradients(reduce, include_self):
    _both(lambda m, x, s: x.scatter_reduce(0, m.tensor(INDEX), s, reduce, include_self=include_self))
    _both(lambda m, x, s: m.scatter_reduce(x.t(), 1, m.tensor(INDEX[:2, :2]).t(), s[:2, :2].t(), reduce,
                                           include_self=include_self))


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_values_and_gradients(reduce, include_self):
    _both(lambda m, x, s: x.index_reduce(0, m.tensor([0, 2, 0, 2]), s, reduce, include_self=include_self))
    _both(lambda m, x, s: x.index_reduce(1, m.tensor([1, 1]), s[:3, :2], reduce, include_self=include_self))


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
def test_scatter_reduce_in_place_and_integers(reduce):
    a, src = np.arange(12).reshape(3, 4) - 4, np.array([[7, -3, 2, 9], [1, 1, 5, -8]])
    idx = np.array([[1, 2, 0, 1], [1, 1, 0, 0]])
    for include_self in (True, False):
        e = ember.tensor(a).scatter_reduce_(0, ember.tensor(idx), ember.tensor(src), reduce, include_self=include_self)
        t = torch.tensor(a).scatter_reduce_(0, torch.tensor(idx), torch.tensor(src), reduce, include_self=include_self)
        assert_close(e, t)
        e = ember.full((3,), float("-inf")).index_reduce_(0, ember.tensor([2, 2, 0]), ember.tensor([1.0, 4.0, -2.0]),
                                                           "amax")
        t = torch.full((3,), float("-inf")).index_reduce_(0, torch.tensor([2, 2, 0]), torch.tensor([1.0, 4.0, -2.0]),
                                                           "amax")
        assert_close(e, t)


def test_scatter_softmax_over_edges():
    """The graph-attention idiom: a softmax over each node's incoming edges from amax and sum scatters."""
    rng = np.random.default_rng(0)
    scores_np, dst_np = rng.standard_normal((12, 2)).astype(np.float32), rng.integers(0, 5, 12)
    outs = []
    for m in (ember, torch):
        scores, dst = m.tensor(scores_np, requires_grad=True), m.tensor(dst_np)
        idx = dst.unsqueeze(-1).expand_as(scores)
        smax = m.full((5, 2), float("-inf")).scatter_reduce(0, idx, scores, reduce="amax", include_self=True)
        e = (scores - smax[dst]).exp()
        alpha = e / m.zeros(5, 2).scatter_add_(0, idx, e)[dst]
        (alpha * m.tensor(np.arange(24.0, dtype=np.float32).reshape(12, 2))).sum().backward()
        outs.append((alpha, scores.grad))
    for e, t in zip(*outs):
        assert_close(e, t)


@pytest.mark.parametrize("call", [
    lambda m: m.zeros(3).scatter_reduce(0, m.tensor([0]), m.ones(1), "add"),
    lambda m: m.zeros(3).scatter_reduce(0, m.tensor([3]), m.ones(1), "sum"),
    lambda m: m.zeros(3).scatter_reduce(0, m.tensor([0]), m.ones(1, dtype=m.float64), "sum"),
    lambda m: m.zeros(3).index_reduce(0, m.tensor([0]), m.ones(1), "sum"),
])
@pytest.mark.filterwarnings("ignore:index_reduce")
def test_scatter_reduce_errors(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError):
        call(ember)


def test_older_reduce_names_and_beta_warning():
    for m in (ember, torch):
        out = m.tensor([2.0, 3.0]).scatter_reduce(0, m.tensor([0, 0]), m.tensor([1.0, 5.0]), "max")
        assert out.tolist() == [5.0, 3.0]
        assert m.tensor([2.0, 3.0]).scatter_reduce(0, m.tensor([0, 0]), m.tensor([1.0, 5.0]), "min").tolist() == [1, 3]
    with pytest.warns(UserWarning, match="index_reduce"):
        import ember._warnings as w
        w._warned_once.discard("index_reduce() is in beta and the API may change at any time.")
        ember.zeros(2).index_reduce(0, ember.tensor([1]), ember.ones(1), "amax")
    with pytest.raises(IndexError):
        ember.zeros(3).index_reduce(0, ember.tensor([5]), ember.ones(1), "prod")


def _modified_before_backward(m, reduce, changed, in_place):
    x = m.tensor(SELF, dtype=m.float64, requires_grad=True) * 1
    s = m.tensor(SRC, dtype=m.float64, requires_grad=True) * 1
    index = m.tensor(INDEX)
    out = x.clone().scatter_reduce_(0, index, s, reduce) if in_place else x.scatter_reduce(0, index, s, reduce)
    with m.no_grad():
        {"self": x, "src": s, "result": out}[changed].add_(1)
    try:
        out.sum().backward()
    except RuntimeError as err:
        return str(err).split(", expected")[0]
    return None


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "sum", "mean"])
@pytest.mark.parametrize("changed, in_place", [("self", False), ("src", False), ("result", False),
                                               ("src", True), ("result", True)])
def test_saved_inputs_and_result_changed_in_place_raise(reduce, changed, in_place):
    """PyTorch saves self, src and the result for every reduction: changing one in place before backward is its
    "modified by an inplace operation" error, naming the same tensor (scatter_reduce_ writes its result into self,
    whose old value is then no longer there to change)."""
    e, t = (_modified_before_backward(m, reduce, changed, in_place) for m in (ember, torch))
    assert t is not None and "modified by an inplace operation" in t
    assert e == t
