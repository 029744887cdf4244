"""Every loss against torch: values and gradients (input and, where differentiable, target), all reductions."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, check

import ember
import ember.nn as nn

REDUCTIONS = ["mean", "sum", "none"]


def loss_check(name, specs, reduction, *, positive=False, target_grad=True, atol=1e-5, **kwargs):
    def fn(m, x, y):
        return getattr(m.nn.functional, name)(x, y, reduction=reduction, **kwargs)

    check(fn, specs, positive=positive, atol=atol, grad=target_grad)


@pytest.mark.parametrize("make", [
    lambda: nn.functional.mse_loss(ember.ones(2), ember.zeros(2), size_average=False),
    lambda: nn.functional.nll_loss(ember.zeros(2, 3), ember.tensor([0, 1]), reduce=False),
    lambda: nn.MSELoss(size_average=False),
    lambda: nn.CrossEntropyLoss(reduce=False),
    lambda: nn.SmoothL1Loss(size_average=True, beta=0.5),
])
def test_legacy_reduction_flags_warn_at_the_callers_line(make):
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated") as record:
        make()
    assert [w.filename for w in record] == [__file__]


def test_losses_without_grad_compute_no_derivative(monkeypatch):
    """Under no_grad, or with no input requiring grad, a loss computes its value only; each derivative only when
    that input needs it."""
    from ember.nn._ops import loss

    asked = []
    mse = loss._mse
    monkeypatch.setattr(loss, "_mse", lambda x, t, nx, nt: asked.append((nx, nt)) or mse(x, t, nx, nt))
    x, t = ember.randn(3, requires_grad=True), ember.randn(3)
    nn.functional.mse_loss(x.detach(), t)
    with ember.no_grad():
        nn.functional.mse_loss(x, t)
    nn.functional.mse_loss(x, t)
    nn.functional.mse_loss(t, x)
    assert asked == [(False, False), (False, False), (True, False), (False, True)]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}),
                                         ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
                                         ("huber_loss", {}), ("huber_loss", {"delta": 0.3})])
def test_regression_losses(name, kwargs, reduction):
    loss_check(name, [(4, 5), (4, 5)], reduction, **kwargs)
    loss_check(name, [(7,), (7,)], reduction, **kwargs)
    loss_check(name, [(1,), (1,)], reduction, **kwargs)  # one element: the mean's gradient is divided by 1
    loss_check(name, [(), ()], reduction, **kwargs)


@pytest.mark.parametrize("name,kwargs", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.0}),
                                         ("smooth_l1_loss", {}), ("huber_loss", {})])
@pytest.mark.parametrize("needs", [(True, False), (False, True)])
def test_regression_losses_with_one_side_requiring_grad(name, kwargs, needs):
    """Only the input (the usual case: a fixed target) or only the target requires grad: its gradient is
    computed alone, as in PyTorch."""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 4, 5)).astype(np.float32)
    grads = []
    for m in (ember, torch):
        a, b = (m.tensor(v, requires_grad=n) for v, n in zip((x, y), needs))
        getattr(m.nn.functional, name)(a, b, **kwargs).backward()
        grads.append((a if needs[0] else b).grad)
    assert_close(*grads)


@pytest.mark.parametrize("name,kwargs", [("huber_loss", {"delta": 0.0}), ("huber_loss", {"delta": -0.5}),
                                         ("huber_loss", {"delta": 1e-30}), ("smooth_l1_loss", {"beta": -0.5}),
                                         ("smooth_l1_loss", {"beta": 1e-30})])
def test_regression_loss_parameter_at_its_bound_as_pytorch(name, kwargs):
    """huber_loss refuses delta <= 0 (0 included) and smooth_l1_loss only beta < 0, with PyTorch's messages; a
    tiny positive value is taken."""
    outcomes = []
    for m in (ember, torch):
        x, y = m.tensor([0.5, -1.0, 2.0]), m.tensor([0.0, 1.0, 2.0])
        try:
            outcomes.append(float(getattr(m.nn.functional, name)(x, y, **kwargs)))
        except RuntimeError as err:
            outcomes.append(str(err))
    if isinstance(outcomes[1], float):
        assert outcomes[0] == pytest.approx(outcomes[1])
    else:  # (ember's message adds the value given)
        assert isinstance(outcomes[0], str) and outcomes[0].startswith(outcomes[1].rstrip("."))


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("shape,target", [((1, 3), ()), ((2, 3), ()), ((1, 3, 2), ()), ((2, 3), (3,)),
                                          ((1, 3), (1, 1)), ((3,), ())])
def test_class_index_target_batch_errors_as_pytorch(name, shape, target):
    """A target whose batch does not match the input's (a 0-d one counting as batch 0, as PyTorch's message
    says) is PyTorch's ValueError; an unbatched (C,) input takes a 0-d target."""
    outcomes = []
    for m in (ember, torch):
        try:
            outcomes.append(float(getattr(m.nn.functional, name)(m.zeros(shape), m.zeros(target, dtype=m.int64))))
        except (ValueError, RuntimeError) as err:
            outcomes.append((type(err), str(err).split(" (")[0] if type(err) is ValueError else None))
    assert outcomes[0] == pytest.approx(outcomes[1]) if isinstance(outcomes[1], float) else outcomes[0] == outcomes[1]


def test_regression_modules_and_broadcast_warning():
    for cls, kwargs in [("MSELoss", {}), ("L1Loss", {"reduction": "sum"}), ("SmoothL1Loss", {"beta": 2.0}),
                        ("HuberLoss", {"delta": 0.5})]:
        check(lambda m, x, y, c=cls, k=kwargs: getattr(m.nn, c)(**k)(x, y), [(3, 4), (3, 4)])
        assert repr(getattr(nn, cls)(**kwargs)) == repr(getattr(torch.nn, cls)(**kwargs))
    with pytest.warns(UserWarning, match="target size"):
        nn.functional.mse_loss(ember.randn(3, 1), ember.randn(3))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        nn.functional.mse_loss(ember.randn(3), ember.randn(3), reduction="avg")


def test_legacy_size_average():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, x, y: m.nn.MSELoss(size_average=False)(x, y), [(3, 4), (3, 4)])
        check(lambda m, x, y: m.nn.functional.l1_loss(x, y, reduce=False), [(3, 4), (3, 4)])
        # the flag not given takes PyTorch's default (size_average=True: a mean; reduce=True)
        check(lambda m, x, y: m.nn.MSELoss(reduce=True)(x, y), [(3, 4), (3, 4)])
        check(lambda m, x, y: m.nn.functional.l1_loss(x, y, size_average=True), [(3, 4), (3, 4)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce(reduction, rng):
    x = rng.uniform(0.01, 0.99, (4, 3)).astype(np.float32)
    y = rng.uniform(0, 1, (4, 3)).astype(np.float32)
    w = rng.uniform(0.5, 2, (3,)).astype(np.float32)
    check(lambda m, a, b: m.nn.functional.binary_cross_entropy(a, b, reduction=reduction), [x, y])
    check(lambda m, a, b, c: m.nn.BCELoss(weight=c, reduction=reduction)(a, b), [x, y, w], grad=False)
    check(lambda m, a, b: m.nn.functional.binary_cross_entropy(a, b.detach(), reduction=reduction), [x, y])


def test_bce_edges():
    x = np.array([0.0, 1.0, 0.5, 1e-30], dtype=np.float32)
    y = np.array([1.0, 0.0, 1.0, 1.0], dtype=np.float32)
    check(lambda m, a, b: m.nn.functional.binary_cross_entropy(a, b.detach()), [x, y])
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        nn.functional.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
    with pytest.raises(ValueError, match="different to the input size"):
        nn.functional.binary_cross_entropy(ember.tensor([0.5, 0.5]), ember.tensor([1.0]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_bce_target_gradient_is_pytorchs_unclamped_logit(dtype, reduction, weighted):
    """The target's gradient is -logit(x) g w (/ n): +-inf at x = 0 and 1 (the loss's logs are clamped at -100,
    the gradient is not), and -0 at x = 0.5."""
    x = [0.0, 1e-30, 1e-7, 0.3, 0.5, 0.9999999, 1.0]
    t = [0.2, 0.7, 0.1, 0.4, 1.0, 0.0, 0.6]
    w = [2.0, 0.5, 1.5, 3.0, 1.0, 0.25, 0.75]
    grads = []
    for m in (ember, torch):
        dt = getattr(m, dtype)
        target = m.tensor(t, dtype=dt, requires_grad=True)
        loss = m.nn.functional.binary_cross_entropy(m.tensor(x, dtype=dt), target, reduction=reduction,
                                                    weight=m.tensor(w, dtype=dt) if weighted else None)
        (loss.sum() if reduction == "none" else loss).backward()
        grads.append(target.grad.numpy())
    got, want = grads
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_allclose(got, want, rtol=2e-7 if dtype == "float32" else 1e-15)


@pytest.mark.parametrize("x,y,which", [
    ([0.2, 0.7], [0.0, 2.0], "target"),  # a class index passed where BCE wants a probability: no silent loss
    ([0.2, 0.7], [-0.5, 1.0], "target"),
    ([0.2, 0.7], [0.0, float("nan")], "target"),
    ([0.2, float("nan")], [0.0, 1.0], "input"),
    ([1.5, 0.7], [0.0, 2.0], "input"),  # the input is checked first, as in PyTorch
])
def test_bce_refuses_values_outside_0_1_as_pytorch(x, y, which):
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=f"all elements of {which} should be between 0 and 1"):
            m.nn.functional.binary_cross_entropy(m.tensor(x), m.tensor(y))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(reduction, rng):
    x = (rng.standard_normal((5, 3)) * 10).astype(np.float32)  # large logits: stability
    y = rng.uniform(0, 1, (5, 3)).astype(np.float32)
    pw = rng.uniform(0.5, 3, (3,)).astype(np.float32)
    w = rng.uniform(0.5, 2, (5, 1)).astype(np.float32)
    check(lambda m, a, b: m.nn.functional.binary_cross_entropy_with_logits(a, b, reduction=reduction), [x, y])
    check(lambda m, a, b, p, c: m.nn.BCEWithLogitsLoss(weight=c.detach(), pos_weight=p.detach(), reduction=reduction)(a, b),
          [x, y, pw, w])
    with pytest.raises(ValueError, match="must be the same as input size"):
        nn.functional.binary_cross_entropy_with_logits(ember.randn(3), ember.randn(3, 1))


def _ce(m, reduction="mean", **kwargs):
    return lambda x, t: m.nn.functional.cross_entropy(x, t, reduction=reduction, **kwargs)


CE_CASES = [{}, {"ignore_index": 2}, {"label_smoothing": 0.2}, {"ignore_index": 1, "label_smoothing": 0.1}]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", CE_CASES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (2, 4, 3, 2), (4,)])
def test_cross_entropy_class_indices(shape, weighted, kwargs, reduction, rng):
    x = rng.standard_normal(shape).astype(np.float32) * 3
    tshape = (shape[0], *shape[2:]) if len(shape) > 1 else ()
    t = rng.integers(0, 4, tshape)
    if kwargs.get("ignore_index") is not None and t.ndim:
        t.flat[0] = kwargs["ignore_index"]
    w = rng.uniform(0.5, 2, 4).astype(np.float32) if weighted else None

    def fn(m, a):
        wt = m.tensor(w) if w is not None else None
        return m.nn.CrossEntropyLoss(weight=wt, reduction=reduction, **kwargs)(a, m.tensor(t))

    check(fn, [x])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probabilities(reduction, smoothing, weighted, rng):
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    p = rng.uniform(0, 1, (3, 4, 2)).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    w = rng.uniform(0.5, 2, 4).astype(np.float32)

    def fn(m, a, b):
        return m.nn.functional.cross_entropy(a, b, weight=m.tensor(w) if weighted else None, reduction=reduction,
                                             label_smoothing=smoothing)

    check(fn, [x, p])
    check(lambda m, a, b: m.nn.functional.cross_entropy(a, b, reduction=reduction), [x[:, :, 0], p[:, :, 0]])


def test_cross_entropy_all_ignored_and_errors():
    check(lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([-100, -100])), [(2, 3)])
    x = ember.randn(3, 4)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        nn.functional.cross_entropy(x, ember.tensor([0, 4, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        nn.functional.cross_entropy(x, ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        nn.functional.cross_entropy(x, ember.tensor([0, 1, 2]), weight=ember.ones(3))
    with pytest.raises(RuntimeError, match="label_smoothing"):
        nn.functional.cross_entropy(x, ember.tensor([0, 1, 2]), label_smoothing=1.5)



@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("target_shape", [(3, 1), (3, 2)])
def test_a_class_index_target_of_more_dims_is_refused_as_pytorch_does(name, target_shape):
    """Input (N, C) takes a target of shape (N,): PyTorch refuses an (N, 1) target (multi-target) rather than
    flattening it, however its batch dim matches."""
    x, t = np.random.default_rng(0).standard_normal((3, 4)), np.zeros(target_shape, dtype=np.int64)
    with pytest.raises(RuntimeError, match="multi-target"):
        getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(t))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        getattr(nn.functional, name)(ember.tensor(x), ember.tensor(t))

# (input shape, target shape, target dtype): common mistakes with class targets
TARGET_MISTAKES = [
    ((4, 3), (4,), "float32"),    # class indices left floating (e.g. read from a float array)
    ((4, 3), (4,), "float64"),
    ((2, 3, 5), (2, 5), "float32"),
    ((4, 3), (4,), "bool"),
    ((4, 3), (4,), "int32"),
    ((4, 3), (4, 3), "int64"),    # a one-hot target left integer
    ((3,), (3,), "int64"),        # unbatched input, several targets
    ((3,), (2,), "int64"),
    ((3,), (1, 1), "int64"),
    ((4, 3), (5,), "float32"),    # the batch mismatch is reported before the dtype
]


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("in_shape,t_shape,t_dtype", TARGET_MISTAKES)
def test_class_target_mistakes_are_refused_with_pytorchs_error(name, in_shape, t_shape, t_dtype):
    """The error type and PyTorch's message begin ember's (which may add what to do); a target of the input's shape
    is cross_entropy's class probabilities, any other its class indices, whose dtype is checked after the shapes."""
    x = np.random.default_rng(0).standard_normal(in_shape).astype(np.float32)
    t = np.zeros(t_shape, dtype=t_dtype)
    try:
        getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(t))
    except (RuntimeError, ValueError) as e:
        expected = e
    else:  # nll_loss reads an unbatched input's target of the input's shape as indices: PyTorch refuses it too
        pytest.fail("PyTorch accepted it")
    with pytest.raises(type(expected)) as got:
        getattr(nn.functional, name)(ember.tensor(x), ember.tensor(t))
    if "multi-target" not in str(expected) or in_shape == (3,):  # (N, C)'s (N, 1) target: ember names the size
        assert str(got.value).startswith(str(expected)), (str(got.value), str(expected))
    if "dtype" in str(expected):
        assert ".long()" in str(got.value) or ".float()" in str(got.value)


def test_unbatched_class_index_target_of_shape_1_is_one_index():
    """An unbatched (C,) input takes its class index 0-d or of shape (1,), as PyTorch does: the same loss."""
    x = np.random.default_rng(1).standard_normal(5).astype(np.float32)
    for name in ("cross_entropy", "nll_loss"):
        for t in ([3], 3):
            want = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(t), reduction="none")
            got = getattr(nn.functional, name)(ember.tensor(x), ember.tensor(t), reduction="none")
            assert got.shape == want.shape == ()
            assert_close(got, want)


def test_cross_entropy_float64_and_state_dict():
    check(lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([1, 0, 2])), [(3, 3)], dtype=np.float64,
          atol=1e-10)
    w = ember.tensor([1.0, 2.0])
    assert list(nn.CrossEntropyLoss(weight=w).state_dict()) == ["weight"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [{}, {"ignore_index": 0}])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, kwargs, weighted, rng):
    t = np.array([[0, 2], [1, 0], [2, 2]])
    w = rng.uniform(0.5, 2, 3).astype(np.float32)

    def fn(m, x):
        loss = m.nn.NLLLoss(weight=m.tensor(w) if weighted else None, reduction=reduction, **kwargs)
        return loss(m.log_softmax(x, 1), m.tensor(t))

    check(fn, [(3, 3, 2)])
    check(lambda m, x: m.nn.functional.nll_loss(x, m.tensor([2, 0]), reduction=reduction), [(2, 4)])


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target, rng):
    x = np.log(rng.uniform(0.1, 1, (4, 5))).astype(np.float32)
    y = rng.uniform(0.05, 1, (4, 5)).astype(np.float32)
    if log_target:
        y = np.log(y).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, a, b: m.nn.KLDivLoss(reduction=reduction, log_target=log_target)(a, b), [x, y])
        # a zero target contributes 0 (xlogy); its own gradient is NaN (test_kl_div_composed_as_pytorch)
        y[0, 0] = 0.0 if not log_target else y[0, 0]
        check(lambda m, a, b: m.nn.functional.kl_div(a, b.detach(), reduction=reduction, log_target=log_target),
              [x, y])



@pytest.mark.parametrize("reduction", ["sum", "batchmean", "mean", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_composed_as_pytorch(reduction, log_target):
    """kl_div is PyTorch's composition: the same graph (node names down to the leaves) and gradients, a zero
    target's own gradient NaN (0/0 in xlogy's derivative) as PyTorch's."""
    x = np.log([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]])
    y = np.array([[0.0, 0.4, 0.6], [0.7, 0.0, 0.3]])
    results = []
    for m in (torch, ember):
        a, b = m.tensor(x, requires_grad=True), m.tensor(np.log(y + 0.1) if log_target else y, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ('mean''s deprecation)
            loss = m.nn.functional.kl_div(a, b, reduction=reduction, log_target=log_target)
        names, todo = [], [loss.grad_fn]
        while todo:
            node = todo.pop(0)
            names.append(node.name())
            todo += [f for f, _ in node.next_functions if f is not None and not f.name().endswith("AccumulateGrad")]
        loss.backward(m.ones_like(loss))
        results.append((names, a.grad.numpy(), b.grad.numpy()))
    (tn, tx, ty), (en, ex, ey) = results
    assert en == tn
    np.testing.assert_allclose(ex, tx, rtol=1e-12)
    np.testing.assert_allclose(ey, ty, rtol=1e-12)  # (NaN where PyTorch's is)


def test_losses_are_pytorchs_nodes():
    x = ember.randn(4, 3, requires_grad=True)
    # cross_entropy is PyTorch's log_softmax node under its nll_loss node (test_class_loss_graph.py has the rest)
    ce = nn.functional.cross_entropy(x, ember.tensor([0, 1, 2, 0])).grad_fn
    assert (type(ce).__name__, type(ce.next_functions[0][0]).__name__) == ("NllLossBackward0", "LogSoftmaxBackward0")
    assert type(nn.functional.mse_loss(x, ember.zeros(4, 3)).grad_fn).__name__ == "MseLossBackward0"
    # an (N, C) input reaches the loss's node as it is: no reshape or permute node between, and its one edge
    nll = nn.functional.nll_loss(x, ember.tensor([2, 1, 0, 0])).grad_fn
    assert len(nll.next_functions) == 1 and nll.next_functions[0][0].variable is x


def test_one_hot():
    t = np.array([[0, 3], [2, 1]])
    assert_close(nn.functional.one_hot(ember.tensor(t)), torch.nn.functional.one_hot(torch.tensor(t)))
    assert_close(nn.functional.one_hot(ember.tensor(t), 6), torch.nn.functional.one_hot(torch.tensor(t), 6))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        nn.functional.one_hot(ember.tensor([3]), 2)


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_ignored_targets_never_index_a_class(name):
    """Ignored rows pick no class: one class only, and an ignored row whose other classes are -inf."""
    inf = float("-inf")
    for logits, target in (([[-1.0], [-2.0], [0.5]], [0, -100, 0]), ([[-1.0, inf], [0.0, inf]], [0, -100])):
        check(lambda m, x, t=target: getattr(m.nn.functional, name)(x, m.tensor(t)), [np.array(logits, np.float32)])


def test_loss_warnings_point_at_the_caller():
    """kl_div's reduction="mean" and a broadcast target warn as PyTorch does, attributed to the line that called
    the loss (not to ember's autocast wrapper around it)."""
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size") as record:
        nn.functional.kl_div(ember.zeros(2, 3), ember.ones(2, 3) / 3)
    with pytest.warns(UserWarning, match="Using a target size") as broadcast:
        nn.functional.mse_loss(ember.zeros(2, 3), ember.zeros(3))
    assert [w.filename for w in [*record, *broadcast]] == [__file__] * 2


def test_loss_dtype_errors_and_target_cast_as_pytorch():
    """Integral input to kl_div, a target of another dtype to binary_cross_entropy (and an integral one to the
    logits form): PyTorch's errors; a regression loss casts a target of another floating dtype to the input's."""
    for m in (torch, ember):
        F = m.nn.functional
        with pytest.raises(RuntimeError, match="kl_div: Integral inputs not supported."):
            F.kl_div(m.tensor([1, 2]), m.tensor([1, 2]), reduction="sum")
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            F.binary_cross_entropy(m.tensor([0.5, 0.2]), m.tensor([1.0, 0.0], dtype=m.float64))
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            F.binary_cross_entropy_with_logits(m.tensor([0.5, -0.2]), m.tensor([1, 0]))
    # (a float64 target of a float32 input: PyTorch's huber_loss keeps float32, its mse, l1 and smooth_l1 promote
    # to float64; ember's keep float32)
    for xd, td, names in ((np.float64, np.float32, ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")),
                          (np.float32, np.float64, ("huber_loss",))):
        x = np.array([1.0, 2.0, -3.0], dtype=xd)
        t = np.array([0.5, 2.5, 1.0 / 3.0], dtype=td)
        for name in names:
            got = getattr(ember.nn.functional, name)(ember.tensor(x), ember.tensor(t))
            want = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(t))
            assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] == np.dtype(xd).name
            assert_close(got, want)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_second_order_with_weights_and_smoothing_as_pytorch(smoothing):
    """The gradient of cross_entropy's gradient (create_graph: the backward formula recorded) against PyTorch's,
    with class weights, an ignored target and label smoothing."""
    rng = np.random.default_rng(3)
    x, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    t, w = np.array([0, 2, 1, 2]), np.array([0.5, 2.0, 1.0])
    out = {}
    for m in (torch, ember):
        xt = m.tensor(x, requires_grad=True)
        loss = m.nn.functional.cross_entropy(xt, m.tensor(t), weight=m.tensor(w), ignore_index=1,
                                             label_smoothing=smoothing)
        (g,) = m.autograd.grad(loss, xt, create_graph=True)
        (g * m.tensor(v)).sum().backward()
        out[m] = (g.detach().numpy(), xt.grad.numpy())
    for e, t_ in zip(out[ember], out[torch]):
        np.testing.assert_allclose(e, t_, rtol=1e-10, atol=1e-12)


def test_cross_entropy_of_integer_scores_is_pytorchs_error_type():
    with pytest.raises(NotImplementedError):
        torch.nn.functional.cross_entropy(torch.tensor([[1, 2]]), torch.tensor([0]))
    with pytest.raises(NotImplementedError, match="cross_entropy: input must hold floating-point scores"):
        ember.nn.functional.cross_entropy(ember.tensor([[1, 2]]), ember.tensor([0]))


@pytest.mark.parametrize("call", [
    lambda F, lib: F.binary_cross_entropy_with_logits(lib.zeros(3), lib.ones(3), pos_weight=np.float64(2.0)),
    lambda F, lib: F.binary_cross_entropy_with_logits(lib.zeros(3), lib.ones(3), pos_weight=2.0),
    lambda F, lib: F.binary_cross_entropy_with_logits(lib.zeros(3), lib.ones(3), weight=2.0),
    lambda F, lib: F.cross_entropy(lib.zeros(2, 3), lib.tensor([0, 1]), weight=[1.0, 2.0, 3.0]),
    lambda F, lib: F.nll_loss(lib.zeros(2, 3), lib.tensor([0, 1]), weight=np.ones(3)),
])
def test_a_loss_weight_that_is_no_tensor_is_refused_with_pytorchs_type_error(call):
    """A float or NumPy ``pos_weight``/``weight`` (the graph auto-encoder's ``pos_weight = float(...) / adj.sum()``)
    is a TypeError that names the argument and its position, as PyTorch's, not an AttributeError from inside."""
    with pytest.raises(TypeError) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(TypeError) as got:
        call(ember.nn.functional, ember)
    assert str(got.value).startswith(str(expected.value))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_an_ignored_target_with_a_nonfinite_score_adds_nothing_as_pytorch(loss, reduction):
    # PyTorch's kernel skips an ignored target's row: its loss is 0, not 0 * NaN
    scores = [[float("nan"), 1.0, 2.0], [float("inf"), 0.0, 1.0], [0.5, -1.0, 2.0]]
    results = [getattr(m.nn.functional, loss)(m.tensor(scores), m.tensor([-100, 1, 2]), reduction=reduction)
               for m in (ember, torch)]
    assert_close(*results)


@pytest.mark.parametrize("classes", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_label_smoothing_with_every_target_ignored_gradient_as_pytorch(classes, weighted):
    # (the mean is 0 / 0, NaN; its gradient 0, as PyTorch's: the ignored rows' smoothing term is filled, not scaled)
    results = []
    for m in (ember, torch):
        x = m.tensor([[1.5, -0.5, 0.25][:classes]] * 2, requires_grad=True)
        w = m.tensor([0.5, 2.0, 1.0][:classes]) if weighted else None
        loss = m.nn.functional.cross_entropy(x, m.tensor([-100, -100]), weight=w, label_smoothing=0.1)
        loss.backward()
        results.append((loss.detach(), x.grad))
    assert_close(results[0][0], results[1][0])
    assert_close(results[0][1], results[1][1])
