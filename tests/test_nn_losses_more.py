"""The margin, embedding, triplet, multi-class and likelihood losses, and the distance modules, against torch on the
same inputs: values and float64 gradients for every reduction, weights, edge shapes, errors, warnings, reprs,
constructor signatures, autocast dtypes, vmap and second derivatives."""

import inspect
import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, check

import ember
import ember.nn as nn

REDUCTIONS = ["mean", "sum", "none"]
F64 = {"dtype": np.float64, "atol": 1e-10, "rtol": 1e-8}


def signs(*shape, seed=0):
    return np.sign(np.random.default_rng(seed).standard_normal(shape))


def raises_like_torch(fn, match):
    """``fn(torch)`` and ``fn(ember)`` raise the same exception type; ember's message matches ``match``."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(expected.type, match=match):
        fn(ember)


# ----------------------------------------------------------------------------- margin_ranking / hinge / soft margin
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.4])
def test_margin_ranking_loss(reduction, margin):
    def fn(m, a, b, t):
        return m.nn.functional.margin_ranking_loss(a, b, t, margin=margin, reduction=reduction)

    check(fn, [(6,), (6,), signs(6)], **F64)  # the target's gradient too: PyTorch's is composite
    check(fn, [(3, 1), (1, 4), signs(3, 4)], **F64)  # the three broadcast together
    check(fn, [(), (), np.array(-1.0)], **F64)
    check(lambda m, a, b: m.nn.MarginRankingLoss(margin, reduction=reduction)(a, b, m.tensor([1, -1, 1])),
          [(3,), (3,)], **F64)  # an integer target


def test_margin_ranking_loss_gradient_at_the_margin_and_errors():
    """At -t (x1 - x2) + margin == 0 the gradient passes (PyTorch's clamp_min), and an empty batch's mean is NaN."""
    x = np.array([1.0, 2.0, 0.5])
    check(lambda m, a, b: m.nn.functional.margin_ranking_loss(a, b, m.tensor([1.0, -1.0, 1.0]), reduction="sum"),
          [x, x], **F64)
    check(lambda m, a, b, t: m.nn.functional.margin_ranking_loss(a, b, t), [(0,), (0,), (0,)], **F64)
    raises_like_torch(lambda m: m.nn.functional.margin_ranking_loss(m.ones(3), m.ones(3, 1), m.ones(3)),
                      r"All input tensors should have same dimension but got sizes: input1: .*\[3\]")
    raises_like_torch(lambda m: m.nn.functional.margin_ranking_loss(m.ones(3), m.ones(2), m.ones(3)), "size")
    raises_like_torch(lambda m: m.nn.functional.margin_ranking_loss(m.ones(3), m.ones(3), m.ones(3), reduction="x"),
                      "x is not a valid value for reduction")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding_loss(reduction):
    t = np.array([1.0, -1.0, 0.0, -1.0, 1.0, 2.0])  # a target of another value takes both terms, as in PyTorch
    x = np.array([0.3, 0.2, -0.4, 1.5, -2.0, 0.7])

    def fn(m, a, margin=1.0, target=t):
        return m.nn.functional.hinge_embedding_loss(a, m.tensor(target), margin=margin, reduction=reduction)

    check(fn, [x], **F64)
    check(lambda m, a: fn(m, a, margin=0.5), [(6,)], **F64)
    check(lambda m, a: fn(m, a, target=signs(4)), [(3, 1)], **F64)  # broadcast to (3, 4)
    check(lambda m, a: m.nn.HingeEmbeddingLoss(0.5, reduction=reduction)(a, m.tensor(-1.0)), [()], **F64)


def test_hinge_embedding_loss_edges():
    # input == margin where the target is -1: the gradient passes (-1), as PyTorch's clamp
    check(lambda m, a: m.nn.functional.hinge_embedding_loss(a, -m.ones(3), reduction="sum"),
          [np.array([1.0, 2.0, 0.0])], **F64)
    # the target takes no gradient, and its dtype does not change the input's
    for m in (ember, torch):
        x, t = m.ones(3, requires_grad=True), m.tensor([1.0, -1.0, 1.0], dtype=m.float64, requires_grad=True)
        loss = m.nn.functional.hinge_embedding_loss(x, t)
        assert loss.dtype == m.float32
        loss.backward()
        assert t.grad is None
    check(lambda m, a: m.nn.functional.hinge_embedding_loss(a, m.ones(0)), [(0,)], **F64)  # NaN
    raises_like_torch(lambda m: m.nn.functional.hinge_embedding_loss(m.ones(3), m.ones(2)), "size")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss(reduction):
    t = signs(3, 4)

    def fn(m, a, target=t):
        return m.nn.functional.soft_margin_loss(a, m.tensor(target), reduction=reduction)

    check(fn, [(3, 4)], **F64)
    check(lambda m, a: fn(m, a, signs(4)), [(3, 4)], **F64)  # the target broadcasts to the input
    check(lambda m, a: fn(m, a, np.array([1, -1, 1, 1])), [(2, 4)], **F64)  # an integer target
    # overflow: an infinite loss (PyTorch's gradient there is NaN or -inf depending on the reduction)
    check(lambda m, a: fn(m, a, np.ones(3)), [np.array([-100.0, 100.0, 0.0], np.float32)], grad=False)
    check(lambda m, a: m.nn.SoftMarginLoss(reduction=reduction)(a, m.tensor(-1.0)), [()], **F64)


def test_soft_margin_loss_errors_and_dtype():
    raises_like_torch(lambda m: m.nn.functional.soft_margin_loss(m.randn(3, 1), m.ones(3)),
                      r"output with shape \[3, 1\] doesn't match the broadcast shape \[3, 3\]")
    raises_like_torch(lambda m: m.nn.functional.soft_margin_loss(m.randn(3), m.ones(3, requires_grad=True)),
                      "not differentiable with respect to argument 'target'")
    raises_like_torch(lambda m: m.nn.functional.soft_margin_loss(m.tensor([1, 2]), m.ones(2)),
                      "result type Float can't be cast to the desired output type Long")
    with ember.no_grad():  # a target requiring grad is refused only where a graph would be built
        nn.functional.soft_margin_loss(ember.randn(3), ember.ones(3, requires_grad=True))
    for m in (ember, torch):  # computed in the input's dtype
        assert m.nn.functional.soft_margin_loss(m.randn(3), m.ones(3, dtype=m.float64)).dtype == m.float32


# ----------------------------------------------------------------------------- cosine embedding
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, -0.3, 0.5])
def test_cosine_embedding_loss(reduction, margin):
    def fn(m, a, b, target=(1.0, -1.0, 0.0, -1.0, 1.0)):
        return m.nn.functional.cosine_embedding_loss(a, b, m.tensor(target), margin=margin, reduction=reduction)

    check(fn, [(5, 4), (5, 4)], **F64)
    check(lambda m, a, b: fn(m, a, b, [-1.0]), [(3, 4), (3, 4)], **F64)  # a one-element target broadcasts
    check(lambda m, a, b: fn(m, a, b, [1, -1, -1]), [(3, 4), (1, 4)], **F64)  # rows broadcast; integer target
    check(lambda m, a, b: fn(m, a, b, -1.0), [(4,), (4,)], **F64)  # two vectors and a 0-d target
    zeros = np.zeros((2, 3))  # zero vectors: the 1e-12 in each squared norm keeps the cosine finite
    check(lambda m, a, b: m.nn.CosineEmbeddingLoss(margin, reduction=reduction)(a, b, m.tensor([1.0, -1.0])),
          [zeros, np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]])], **F64)


def test_cosine_embedding_loss_edges():
    check(lambda m, a, b: m.nn.functional.cosine_embedding_loss(a, b, m.ones(0)), [(0, 4), (0, 4)], **F64)  # NaN
    check(lambda m, a, b: m.nn.functional.cosine_embedding_loss(a, b, m.ones(2), reduction="none"),
          [(2, 0), (2, 0)], **F64)
    for m in (ember, torch):  # the target's dtype does not change the loss's; the inputs' do
        f = m.nn.functional.cosine_embedding_loss
        assert f(m.randn(3, 4), m.randn(3, 4), m.ones(3, dtype=m.float64)).dtype == m.float32
        assert f(m.randn(3, 4), m.randn(3, 4, dtype=m.float64), m.ones(3)).dtype == m.float64
    raises_like_torch(lambda m: m.nn.functional.cosine_embedding_loss(m.ones(3, 4), m.ones(3, 4), m.ones(3, 1)),
                      "0D or 1D target tensor expected, multi-target not supported")
    raises_like_torch(lambda m: m.nn.functional.cosine_embedding_loss(m.ones(4), m.ones(4), m.ones(1)),
                      r"1D target tensor expects 2D input tensors, but found inputs with sizes \[4\] and \[4\]\.")
    raises_like_torch(lambda m: m.nn.functional.cosine_embedding_loss(m.ones(3, 4), m.ones(3, 4), m.tensor(1.0)),
                      r"0D target tensor expects 1D input tensors, but found inputs with sizes \[3, 4\] and \[3, 4\]")
    raises_like_torch(lambda m: m.nn.functional.cosine_embedding_loss(m.ones(3, 4, 2), m.ones(3, 4, 2), m.ones(3)),
                      "1D target tensor expects 2D input tensors")
    raises_like_torch(lambda m: m.nn.functional.cosine_embedding_loss(m.ones(3, 4), m.ones(3, 5), m.ones(3)), "size")
    raises_like_torch(lambda m: m.nn.functional.cosine_embedding_loss(m.ones(3, 4), m.ones(3, 4), m.ones(2)), "size")


# ----------------------------------------------------------------------------- triplets
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [{}, {"p": 1.0, "margin": 0.5}, {"p": 3.0, "swap": True}, {"swap": True, "eps": 0.1}])
def test_triplet_margin_loss(reduction, kwargs):
    def fn(m, a, p, n):
        return m.nn.functional.triplet_margin_loss(a, p, n, reduction=reduction, **kwargs)

    check(fn, [(5, 4), (5, 4), (5, 4)], **F64)
    check(fn, [(4,), (4,), (4,)], **F64)
    check(fn, [(), (), ()], **F64)
    check(fn, [(2, 3, 4), (1, 3, 4), (2, 1, 4)], **F64)  # broadcast; the distance over the last dimension
    check(lambda m, a, p, n: m.nn.TripletMarginLoss(reduction=reduction, **kwargs)(a, p, n), [(3, 4)] * 3, **F64)


def _cosine_distance(m):
    return lambda x, y: 1.0 - m.nn.functional.cosine_similarity(x, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss(reduction, swap):
    def fn(m, a, p, n, distance=None, margin=1.0):
        return m.nn.functional.triplet_margin_with_distance_loss(a, p, n, distance_function=distance, margin=margin,
                                                                 swap=swap, reduction=reduction)

    check(fn, [(5, 4)] * 3, **F64)  # pairwise_distance by default
    check(lambda m, a, p, n: fn(m, a, p, n, _cosine_distance(m), 0.3), [(5, 4)] * 3, **F64)
    check(lambda m, a, p, n: fn(m, a, p, n, m.nn.PairwiseDistance(p=1.0)), [(5, 4)] * 3, **F64)
    for distance in (None, _cosine_distance, lambda m: m.nn.CosineSimilarity()):
        def module(m, a, p, n, d=distance):
            return m.nn.TripletMarginWithDistanceLoss(distance_function=d and d(m), swap=swap, reduction=reduction)(
                a, p, n)

        check(module, [(5, 4)] * 3, **F64)


def test_triplet_losses_share_their_rules():
    """The default distance makes the two losses one; an empty batch's mean is NaN; errors as PyTorch's."""
    a, p, n = (ember.randn(4, 3) for _ in range(3))
    F = nn.functional
    assert_close(F.triplet_margin_with_distance_loss(a, p, n, swap=True), F.triplet_margin_loss(a, p, n, swap=True))
    check(lambda m, x, y, z: m.nn.functional.triplet_margin_loss(x, y, z), [(0, 4)] * 3, **F64)
    for name in ("triplet_margin_loss", "triplet_margin_with_distance_loss"):
        def call(m, *args, f=name, **kwargs):
            return getattr(m.nn.functional, f)(*args, **kwargs)

        raises_like_torch(lambda m: call(m, m.ones(3, 4), m.ones(4), m.ones(3, 4)),
                          "expected to have the same number of dimensions, but got: anchor 2D, positive 1D, and "
                          "negative 2D inputs")
        raises_like_torch(lambda m: call(m, m.ones(3, 4), m.ones(3, 4), m.ones(3, 4), margin=0.0),
                          "margin must be greater than 0, got 0.0")
        raises_like_torch(lambda m: call(m, m.ones(3, 4), m.ones(3, 4), m.ones(3, 4), reduction="x"),
                          "x is not a valid value for reduction")
    raises_like_torch(lambda m: m.nn.TripletMarginLoss(margin=0.0),
                      "TripletMarginLoss: expected margin to be greater than 0, got 0.0 instead")
    raises_like_torch(lambda m: m.nn.TripletMarginWithDistanceLoss(margin=-1.0),
                      "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1.0 instead")


def test_triplet_margin_with_distance_loss_modules():
    """The default distance is a child PairwiseDistance; a module passed in is a child; a function is not."""
    for kwargs in ({}, {"distance_function": "CosineSimilarity"}):
        def make(m, k=kwargs):
            d = k.get("distance_function")
            return m.nn.TripletMarginWithDistanceLoss(distance_function=getattr(m.nn, d)() if d else None)

        assert repr(make(ember)) == repr(make(torch))
        assert [name for name, _ in make(ember).named_children()] == ["distance_function"]
    loss = nn.TripletMarginWithDistanceLoss(distance_function=_cosine_distance(ember))
    assert repr(loss) == "TripletMarginWithDistanceLoss()" and not list(loss.children())


# ----------------------------------------------------------------------------- multi-class margins
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(reduction, p, weighted):
    rng = np.random.default_rng(3)
    w = rng.uniform(0.5, 2.0, 4)

    def fn(m, x, target=(0, 3, 1, 3, 2), margin=1.0):
        weight = m.tensor(w) if weighted else None
        return m.nn.functional.multi_margin_loss(x, m.tensor(target), p=p, margin=margin, weight=weight,
                                                 reduction=reduction)

    check(fn, [(5, 4)], **F64)
    check(lambda m, x: fn(m, x, margin=0.3), [(5, 4)], **F64)
    check(lambda m, x: fn(m, x, 2), [(4,)], **F64)  # one sample; 'none' gives a 0-d loss for a 0-d target
    check(lambda m, x: fn(m, x, [2]), [(4,)], **F64)  # ... and (1,) for a (1,) target
    # a margin term of exactly 0 is not counted, nor its gradient (PyTorch counts z > 0)
    check(lambda m, x: fn(m, x, [1, 0]), [np.array([[0.0, 1.0, 0.5, -2.0], [0.0, -1.0, 3.0, 0.2]])], **F64)
    check(lambda m, x: m.nn.MultiMarginLoss(p, 0.5, m.tensor(w) if weighted else None, reduction=reduction)(
        x, m.tensor([1, 0, 0])), [(3, 4)], **F64)


def test_multi_margin_loss_edges():
    F = nn.functional
    check(lambda m, x: m.nn.functional.multi_margin_loss(x, m.tensor(0), reduction="none"), [()], **F64)
    for reduction in ("sum", "none"):
        check(lambda m, x, r=reduction: m.nn.functional.multi_margin_loss(x, m.zeros(0, dtype=m.long), reduction=r),
              [(0, 4)], **F64)
    assert F.multi_margin_loss(ember.zeros(0, 4), ember.zeros(0, dtype=ember.long)).isnan()  # PyTorch: unset
    x, t = (lambda m: m.ones(3, 4)), (lambda m: m.tensor([0, 1, 2]))
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), t(m), p=3), "only p == 1 and p == 2 supported")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), t(m), weight=m.ones(1, 4)),
                      "weight must be one-dimensional")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), t(m), weight=m.ones(3)),
                      r"inconsistent weight size, expected 4 but got \[3\]")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), t(m), weight=m.ones(4, dtype=m.float64)),
                      "expected scalar type Float but found Double")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), t(m), weight=m.ones(4, requires_grad=True)),
                      "not differentiable with respect to argument 'weight'")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), m.tensor([0, 1])),
                      r"Expected target size \[3\], but got \[2\]. Input has shape \[3, 4\].")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), m.zeros(3, 1, dtype=m.long)),
                      r"Expected target size \[3\], but got \[3, 1\]")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), m.tensor([0, 4, 1])), "target out of range")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), m.tensor([0, -1, 1])), "target out of range")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(x(m), m.tensor([0, 1, 1], dtype=m.int32)),
                      "expected scalar type Long but found Int")
    raises_like_torch(lambda m: m.nn.functional.multi_margin_loss(m.ones(3, 4, dtype=m.long), t(m)),
                      "\"multi_margin_loss_cpu_kernel\" not implemented for 'Long'")
    for shape in ((2, 0), (2, 3, 4)):
        raises_like_torch(lambda m, s=shape: m.nn.functional.multi_margin_loss(m.ones(s), m.zeros(2, dtype=m.long)),
                          r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: \[2, ")
    raises_like_torch(lambda m: m.nn.MultiMarginLoss(weight=m.ones(1, 4)),
                      "MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead")
    raises_like_torch(lambda m: m.nn.MultiMarginLoss(p=3), "only p == 1 and p == 2 supported")


TARGETS = np.array([[3, 0, -1, 1],   # classes 3 and 0, listed before the first -1 (the 1 after it is not a target)
                    [0, 1, 2, 3],    # every class a target: no pair
                    [-1, 0, 0, 0],   # no target
                    [1, 1, -1, 2],   # a class listed twice counts twice
                    [2, -1, -1, -1]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction):
    def fn(m, x, target=TARGETS):
        return m.nn.functional.multilabel_margin_loss(x, m.tensor(target), reduction=reduction)

    check(fn, [(5, 4)], **F64)
    check(lambda m, x: fn(m, x, TARGETS[0]), [(4,)], **F64)  # one sample: 'none' gives a 0-d loss
    check(lambda m, x: fn(m, x, TARGETS[2]), [(4,)], **F64)
    check(lambda m, x: fn(m, x, np.array(0)), [()], **F64)
    # 1 - (x[j] - x[d]) exactly 0 is not counted, nor its gradient
    check(lambda m, x: fn(m, x, TARGETS[:1]), [np.array([[1.0, 2.0, 0.5, 1.0]])], **F64)
    if reduction != "mean":  # PyTorch leaves an empty batch's mean unset; ember's is NaN
        check(lambda m, x: fn(m, x, np.zeros((0, 4), np.int64)), [(0, 4)], **F64)
    else:
        assert fn(ember, ember.zeros(0, 4), np.zeros((0, 4), np.int64)).isnan()
    check(lambda m, x: m.nn.MultiLabelMarginLoss(reduction=reduction)(x, m.tensor(TARGETS)), [(5, 4)], **F64)


def test_multilabel_margin_loss_errors():
    x = lambda m: m.ones(3, 4)  # noqa: E731
    raises_like_torch(lambda m: m.nn.functional.multilabel_margin_loss(x(m), m.zeros(3, dtype=m.long)),
                      r"inconsistent target size: \[3\] for input of size: \[3, 4\]")
    raises_like_torch(lambda m: m.nn.functional.multilabel_margin_loss(m.ones(4), m.zeros(3, dtype=m.long)),
                      r"inconsistent target size: \[3\] for input of size: \[4\]")
    for bad in (4, -2, 9):  # any entry, even after the first -1
        raises_like_torch(lambda m, b=bad: m.nn.functional.multilabel_margin_loss(x(m), m.tensor([[0, -1, b, 0]] * 3)),
                          "argument #2 'target' is out of range")
    raises_like_torch(lambda m: m.nn.functional.multilabel_margin_loss(x(m), m.zeros(3, 4)),
                      "expected scalar type Long but found Float")
    raises_like_torch(lambda m: m.nn.functional.multilabel_margin_loss(m.ones(2, 3, 4), m.zeros(2, 3, 4, dtype=m.long)),
                      r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: \[2, 3, 4\]")
    raises_like_torch(lambda m: m.nn.functional.multilabel_margin_loss(m.ones(3, 4, dtype=m.long),
                                                                      m.zeros(3, 4, dtype=m.long)),
                      "\"multilabel_margin_loss_forward_out_frame\" not implemented for 'Long'")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_soft_margin_loss(reduction):
    rng = np.random.default_rng(5)
    y, w = (rng.random((4, 3)) > 0.5).astype(np.float64), rng.uniform(0.5, 2, 3)

    def fn(m, x, target, weight=None):
        return m.nn.functional.multilabel_soft_margin_loss(x, target, weight=weight, reduction=reduction)

    check(fn, [(4, 3), y], **F64)  # the target's gradient too
    check(lambda m, x, t, c: fn(m, x, t, c), [(4, 3), y, w], **F64)  # and the weight's
    check(lambda m, x, t, c: fn(m, x, t, c), [(4, 3), y, w[:1, None] * np.ones((4, 1))], **F64)  # per sample
    check(lambda m, x: fn(m, x, m.tensor(y.astype(np.int64))), [(4, 3)], **F64)  # an integer target
    check(lambda m, x: fn(m, x, m.ones(3)), [(4, 3)], **F64)  # broadcast target
    check(lambda m, x, t: fn(m, x, t), [(3,), y[0]], **F64)
    check(lambda m, x, t: fn(m, x, t), [(2, 4, 3), (2, 4, 3)], **F64)  # the classes on the last dimension
    check(lambda m, x, t: fn(m, x, t), [(0, 3), (0, 3)], **F64)
    check(lambda m, x: m.nn.MultiLabelSoftMarginLoss(m.tensor(w), reduction=reduction)(x, m.tensor(y)), [(4, 3)],
          **F64)


def test_multilabel_soft_margin_loss_errors():
    raises_like_torch(lambda m: m.nn.functional.multilabel_soft_margin_loss(m.ones(()), m.ones(())),
                      "Dimension specified as -1 but tensor has no dimensions")
    raises_like_torch(lambda m: m.nn.functional.multilabel_soft_margin_loss(m.ones(2, 3), m.ones(2, 3), reduction="x"),
                      "x is not")
    assert list(nn.MultiLabelSoftMarginLoss(ember.ones(3)).state_dict()) == ["weight"]
    assert list(nn.MultiMarginLoss(weight=ember.ones(3)).state_dict()) == ["weight"]


# ----------------------------------------------------------------------------- likelihoods
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss(reduction, log_input, full):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.1, 2.0, (4, 5)) if not log_input else rng.standard_normal((4, 5))
    y = rng.poisson(2.0, (4, 5)).astype(np.float64) + rng.uniform(0, 0.5, (4, 5))

    def fn(m, a, b, eps=1e-8):
        return m.nn.functional.poisson_nll_loss(a, b, log_input=log_input, full=full, eps=eps, reduction=reduction)

    check(fn, [x, y], **F64)  # the target's gradient too
    check(lambda m, a, b: fn(m, a, b, eps=0.5), [x, y], **F64)
    check(fn, [x[:, :1], y], **F64)  # broadcast
    check(lambda m, a: fn(m, a, m.tensor(y.astype(np.int64))), [x], **F64)  # integer counts
    check(lambda m, a, b: m.nn.PoissonNLLLoss(log_input, full, eps=0.1, reduction=reduction)(a, b), [x, y], **F64)


def test_poisson_nll_loss_zero_counts():
    """A zero target with ``full``: Stirling's term is masked out, yet its gradient is NaN, as PyTorch's."""
    y = np.array([0.0, 1.0, 3.0, 0.5])
    check(lambda m, a, b: m.nn.functional.poisson_nll_loss(a, b, full=True, reduction="sum"), [(4,), y], **F64)
    raises_like_torch(lambda m: m.nn.functional.poisson_nll_loss(m.ones(3), m.ones(3), reduction="x"),
                      "x is not a valid value for reduction")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1), (1, 3)])
def test_gaussian_nll_loss(reduction, full, var_shape):
    rng = np.random.default_rng(9)
    var = rng.uniform(0.1, 2.0, var_shape)

    def fn(m, a, b, v):
        return m.nn.functional.gaussian_nll_loss(a, b, v, full=full, reduction=reduction)

    check(fn, [(4, 3), (4, 3), var], **F64)
    check(lambda m, a, b, v: m.nn.GaussianNLLLoss(full=full, eps=0.5, reduction=reduction)(a, b, v),
          [(4, 3), (4, 3), var], **F64)


def test_gaussian_nll_loss_variance_rules():
    # variances below eps: the loss uses eps, the gradient passes as if unclamped (PyTorch clamps untracked)
    check(lambda m, a, b, v: m.nn.functional.gaussian_nll_loss(a, b, v, reduction="sum"),
          [(3,), (3,), np.array([1e-9, 0.0, 2.0])], **F64)
    check(lambda m, a, b: m.nn.functional.gaussian_nll_loss(a, b, 0.7), [(4, 3), (4, 3)], **F64)  # a float
    check(lambda m, a, b, v: m.nn.functional.gaussian_nll_loss(a, b, v), [(3,), (3,), (1,)], positive=True,
          **F64)
    check(lambda m, a, b, v: m.nn.functional.gaussian_nll_loss(a, b, v), [(3,), (3,), ()], positive=True,
          **F64)
    check(lambda m, a, b, v: m.nn.functional.gaussian_nll_loss(a, b, v), [(4, 3), (1, 3), (4, 3)], positive=True,
          **F64)
    check(lambda m, a, b, v: m.nn.functional.gaussian_nll_loss(a, b, v), [(0, 3), (0, 3), (0, 3)], **F64)
    # a Python int variance, which PyTorch refuses (TypeError), is taken as the float
    assert_close(nn.functional.gaussian_nll_loss(ember.ones(3), ember.zeros(3), 2),
                 torch.nn.functional.gaussian_nll_loss(torch.ones(3), torch.zeros(3), 2.0))
    for shape in ((1, 1), (3,), (), (2, 4, 3), (4, 2)):
        raises_like_torch(lambda m, s=shape: m.nn.functional.gaussian_nll_loss(m.ones(4, 3), m.ones(4, 3), m.ones(s)),
                          "var is of incorrect size")
    raises_like_torch(lambda m: m.nn.functional.gaussian_nll_loss(m.ones(2), m.ones(2), -0.5),
                      "var has negative entry/entries")
    raises_like_torch(lambda m: m.nn.functional.gaussian_nll_loss(m.ones(2), m.ones(2), m.tensor([1.0, -1.0])),
                      "var has negative entry/entries")
    raises_like_torch(lambda m: m.nn.functional.gaussian_nll_loss(m.ones(2), m.ones(2), m.ones(2), reduction="x"),
                      "x is not valid")
    for m in (ember, torch):
        assert m.nn.functional.gaussian_nll_loss(m.ones(2), m.ones(2), m.ones(2, dtype=m.float64)).dtype == m.float64


# ----------------------------------------------------------------------------- distance modules
@pytest.mark.parametrize("kwargs", [{}, {"p": 1.0}, {"p": 3.0, "eps": 0.1, "keepdim": True}])
def test_pairwise_distance_module(kwargs):
    check(lambda m, a, b: m.nn.PairwiseDistance(**kwargs)(a, b), [(5, 4), (5, 4)], **F64)
    check(lambda m, a, b: m.nn.PairwiseDistance(**kwargs)(a, b), [(4,), (2, 4)], **F64)
    assert repr(nn.PairwiseDistance(**kwargs)) == repr(torch.nn.PairwiseDistance(**kwargs)) == "PairwiseDistance()"
    assert nn.PairwiseDistance(**kwargs).norm == torch.nn.PairwiseDistance(**kwargs).norm


@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"dim": -1, "eps": 0.5}])
def test_cosine_similarity_module(kwargs):
    check(lambda m, a, b: m.nn.CosineSimilarity(**kwargs)(a, b), [(5, 4), (5, 4)], **F64)
    # x2 broadcast along the dim: its norm is taken after broadcasting (of 3 copies), as in PyTorch
    check(lambda m, a, b: m.nn.CosineSimilarity(**kwargs)(a, b), [(3, 5, 4), (1, 5, 4)], **F64)
    assert repr(nn.CosineSimilarity(**kwargs)) == "CosineSimilarity()"


# ----------------------------------------------------------------------------- across the losses
NEW_LOSSES = ["MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "CosineEmbeddingLoss",
              "TripletMarginLoss", "TripletMarginWithDistanceLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
              "MultiLabelSoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "PairwiseDistance", "CosineSimilarity"]
NEW_FUNCTIONALS = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss",
                   "triplet_margin_loss", "triplet_margin_with_distance_loss", "multi_margin_loss",
                   "multilabel_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss"]


def _parameters(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", NEW_LOSSES)
def test_module_signatures_defaults_and_repr(name):
    """Constructor and forward take PyTorch's arguments, in its order, with its defaults; repr as PyTorch's."""
    ours, theirs = getattr(nn, name), getattr(torch.nn, name)
    assert _parameters(ours) == _parameters(theirs)
    assert _parameters(ours.forward) == _parameters(theirs.forward)
    assert repr(ours()) == repr(theirs())
    assert {k: v for k, v in vars(ours()).items() if not k.startswith("_") and k != "training"} == {
        k: v for k, v in vars(theirs()).items() if not k.startswith("_") and k != "training"}


@pytest.mark.parametrize("name", NEW_FUNCTIONALS)
def test_functional_signatures(name):
    assert _parameters(getattr(nn.functional, name)) == _parameters(getattr(torch.nn.functional, name))


def test_legacy_reduction_flags():
    """size_average / reduce map to a reduction and warn, naming it, as PyTorch does (functionals and modules)."""
    x, y, t = np.random.default_rng(0).standard_normal((3, 4)), signs(4), np.ones(4)
    messages = {}
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            a, b = m.tensor(x[0]), m.tensor(x[1])
            results = [m.nn.functional.margin_ranking_loss(a, b, m.tensor(y), size_average=False),
                       m.nn.SoftMarginLoss(reduce=False)(a, m.tensor(y)),
                       m.nn.functional.multilabel_soft_margin_loss(a, m.tensor(t), reduce=False),
                       m.nn.TripletMarginLoss(size_average=True)(a, b, m.tensor(x[2])),
                       m.nn.PoissonNLLLoss(size_average=False)(a, m.tensor(t))]
        messages[m] = [str(w.message) for w in record]
        results_of = messages.setdefault("results", [])
        results_of.append(results)
    assert messages[ember] == messages[torch] and len(messages[ember]) == 5
    for ours, theirs in zip(*messages["results"]):
        assert_close(ours, theirs)


def test_autocast_runs_the_aten_losses_in_float32():
    """Under CPU autocast PyTorch runs its native losses in float32; the Python-composed triplet variant (and
    the distances) stay in the inputs' dtype."""
    dtypes = {}
    for m in (ember, torch):
        with m.autocast("cpu", dtype=m.bfloat16):
            b = m.tensor(np.random.default_rng(0).standard_normal((3, 4))).to(m.bfloat16)
            F = m.nn.functional
            results = [F.margin_ranking_loss(b[0], b[1], m.ones(4)), F.hinge_embedding_loss(b, m.ones(3, 4)),
                       F.soft_margin_loss(b, m.ones(3, 4)), F.cosine_embedding_loss(b, b, m.ones(3)),
                       F.triplet_margin_loss(b, b, b), F.triplet_margin_with_distance_loss(b, b, b),
                       F.multi_margin_loss(b, m.tensor([0, 1, 2])),
                       F.multilabel_margin_loss(b, m.zeros(3, 4, dtype=m.long)),
                       F.multilabel_soft_margin_loss(b, m.ones(3, 4)), F.poisson_nll_loss(b, m.ones(3, 4)),
                       F.gaussian_nll_loss(b, b, m.ones(3, 4))]
        dtypes[m] = [str(r.dtype).split(".")[1] for r in results]
    assert dtypes[ember] == dtypes[torch]
    assert dtypes[ember][5] == "bfloat16" and dtypes[ember].count("float32") == 10


@pytest.mark.parametrize("name,kwargs,args", [
    ("soft_margin_loss", {}, ["x", "signs"]),
    ("poisson_nll_loss", {"full": True}, ["x", "counts"]),
])
def test_vmap(name, kwargs, args):
    rng = np.random.default_rng(0)
    arrays = {"x": rng.standard_normal((3, 5, 4)), "signs": signs(3, 5, 4), "counts": rng.poisson(2.0, (3, 5, 4)) * 1.0}
    outs = []
    for m in (ember, torch):
        f = getattr(m.nn.functional, name)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="There is a performance drop")  # torch's loop fallback
            outs.append(m.func.vmap(lambda *a, f=f: f(*a, **kwargs))(*[m.tensor(arrays[a]) for a in args]))
    assert_close(*outs, atol=1e-12)


SECOND_ORDER = {
    "soft_margin": lambda m, x: m.nn.functional.soft_margin_loss(x, m.tensor(signs(3, 4))),
    "cosine_embedding": lambda m, x: m.nn.functional.cosine_embedding_loss(
        x, m.tensor(np.linspace(-1, 1, 12).reshape(3, 4)), m.tensor([1.0, -1.0, 1.0]), margin=-0.5),
    "triplet": lambda m, x: m.nn.functional.triplet_margin_loss(
        x, m.tensor(np.ones((3, 4))), m.tensor(np.eye(3, 4)), margin=5.0, swap=True),
    "triplet_cosine": lambda m, x: m.nn.functional.triplet_margin_with_distance_loss(
        x, m.tensor(np.ones((3, 4))), m.tensor(np.eye(3, 4)), distance_function=_cosine_distance(m), margin=5.0),
    "poisson": lambda m, x: m.nn.functional.poisson_nll_loss(x, m.tensor(np.arange(12.0).reshape(3, 4)), full=True),
    "gaussian": lambda m, x: m.nn.functional.gaussian_nll_loss(m.tensor(np.zeros((3, 4))), x.sin(), x.exp()),
    "multilabel_soft_margin": lambda m, x: m.nn.functional.multilabel_soft_margin_loss(
        x, m.tensor(signs(3, 4) > 0).double(), weight=m.tensor([1.0, 2.0, 0.5, 1.0])),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivatives(name):
    """The gradient of the squared gradient norm (a Hessian-vector product) as PyTorch's."""
    x0 = np.random.default_rng(1).standard_normal((3, 4))
    results = []
    for m in (ember, torch):
        x = m.tensor(x0, requires_grad=True)
        (g,) = m.autograd.grad(SECOND_ORDER[name](m, x), x, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), x)
        results.append((g.detach(), h))
    assert_close(results[0][0], results[1][0], atol=1e-10)
    assert_close(results[0][1], results[1][1], atol=1e-10)


@pytest.mark.parametrize("p", [1, 2])
def test_multi_class_margins_differentiate_twice(p):
    """PyTorch's multi_margin and multilabel_margin have no second derivative; ember's (composed) have, and they
    agree with finite differences of the first."""
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = ember.tensor(rng.uniform(0.5, 2, 4))

    def multi(x):
        return nn.functional.multi_margin_loss(x, ember.tensor([0, 1, 3]), p=p, weight=w, margin=2.0)

    def multilabel(x):
        return nn.functional.multilabel_margin_loss(x * p, ember.tensor(TARGETS[:3]))

    for fn in (multi, multilabel):
        assert ember.autograd.gradgradcheck(fn, (x,))
