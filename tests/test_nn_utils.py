"""nn.utils (clipping, parameter vectors) and the remaining functionals (pad, normalize) against torch."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, check

import ember
import ember.nn as nn


def paired_params(rng, shapes=((3, 4), (5,), (2, 2, 2))):
    e, t = [], []
    for s in shapes:
        a = rng.standard_normal(s).astype(np.float32)
        g = rng.standard_normal(s).astype(np.float32) * 3
        ep, tp = nn.Parameter(ember.tensor(a)), torch.nn.Parameter(torch.tensor(a))
        ep.grad, tp.grad = ember.tensor(g), torch.tensor(g)
        e.append(ep)
        t.append(tp)
    return e, t


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e4])
def test_clip_grad_norm(norm_type, max_norm, rng):
    e, t = paired_params(rng)
    en = nn.utils.clip_grad_norm_(e, max_norm, norm_type=norm_type)
    tn = torch.nn.utils.clip_grad_norm_(t, max_norm, norm_type=norm_type)
    assert_close(en, tn)
    for ep, tp in zip(e, t):
        assert_close(ep.grad, tp.grad)


@pytest.mark.parametrize("foreach", [None, False])
def test_clip_grad_norm_of_order_zero_counts_nonzero_elements(foreach, rng):
    # PyTorch's 0-norm is the number of nonzero elements: of each gradient, then of those counts (a gradient of
    # zeros counts 0), here 4 + 0 + 8 = 12 elements over 2 nonzero tensors: total norm 2
    e, t = paired_params(rng)
    for ep, tp in zip(e, t):
        g = ep.grad.numpy().copy()
        g[..., ::2] = 0
        ep.grad, tp.grad = ember.tensor(g), torch.tensor(g)
    e[1].grad, t[1].grad = ember.zeros(5), torch.zeros(5)
    assert_close(nn.utils.get_total_norm([p.grad for p in e], 0), torch.nn.utils.get_total_norm([p.grad for p in t], 0))
    en = nn.utils.clip_grad_norm_(e, 1.5, norm_type=0, foreach=foreach)
    tn = torch.nn.utils.clip_grad_norm_(t, 1.5, norm_type=0, foreach=foreach)
    assert en.item() == 2.0
    assert_close(en, tn)
    for ep, tp in zip(e, t):
        assert_close(ep.grad, tp.grad)


def test_deprecated_clip_grad_norm_clips_and_warns_as_pytorch(rng):
    e, t = paired_params(rng)
    with pytest.warns(FutureWarning) as e_warned:
        en = nn.utils.clip_grad_norm(e, 0.5, 1.0)
    with pytest.warns(FutureWarning) as t_warned:
        tn = torch.nn.utils.clip_grad_norm(t, 0.5, 1.0)
    assert [str(w.message) for w in e_warned] == [str(w.message) for w in t_warned]
    assert e_warned[0].filename == __file__  # attributed to the caller's line
    assert_close(en, tn)
    for ep, tp in zip(e, t):
        assert_close(ep.grad, tp.grad)


def _clip_warnings(mod, params_of):
    """The (category, message, file) of each warning clip_grad_norm_ gives for each kind of parameters, and the
    total norms it returns."""
    import warnings
    seen, totals = [], []
    for kind in ("spent generator", "empty generator", "empty list", "empty iterator", "live generator"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            totals.append(float(mod.nn.utils.clip_grad_norm_(params_of(kind), 1.0)))
        seen.append([(w.category, str(w.message), w.filename) for w in caught])
    return seen, totals


def test_clip_grad_norm_of_an_empty_generator_warns_as_pytorch():
    # model.parameters() handed to an optimizer first is spent: PyTorch warns that nothing will be clipped
    # (MTGNN's trainer.Optim keeps the generator it gave to Adam and clips it every step); an empty list or
    # iterator that is not a generator does not warn, nor does a generator of parameters without gradients.
    def params_of(mod):
        def make(kind):
            model = mod.nn.Linear(2, 2)
            if kind == "spent generator":
                gen = model.parameters()
                mod.optim.Adam(gen, lr=0.1)
                return gen
            return {"empty generator": (p for p in []), "empty list": [], "empty iterator": iter([]),
                    "live generator": model.parameters()}[kind]
        return make
    e_seen, e_totals = _clip_warnings(ember, params_of(ember))
    t_seen, t_totals = _clip_warnings(torch, params_of(torch))
    assert e_seen == t_seen
    assert e_seen[0] == [(UserWarning, "`parameters` is an empty generator, no gradient clipping will occur.",
                          __file__)]
    assert e_totals == t_totals == [0.0] * 5


def test_clip_grad_norm_edge_cases(rng):
    e, _ = paired_params(rng)
    e[0].grad = None
    single = e[1]
    total = nn.utils.clip_grad_norm_(single, 1.0)  # a single tensor is accepted
    assert total.ndim == 0
    assert nn.utils.clip_grad_norm_([nn.Parameter(ember.zeros(2))], 1.0).item() == 0.0
    e[2].grad._data[0, 0, 0] = np.nan
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(e, 1.0, error_if_nonfinite=True)
    nn.utils.clip_grad_norm_(e, 1.0)
    assert np.isnan(e[1].grad.numpy()).all()  # NaN norm propagates, as in torch


def test_clip_grad_value(rng):
    e, t = paired_params(rng)
    assert nn.utils.clip_grad_value_(e, 0.7) is None
    torch.nn.utils.clip_grad_value_(t, 0.7)
    for ep, tp in zip(e, t):
        assert_close(ep.grad, tp.grad)


def test_parameters_vector_roundtrip(rng):
    e, t = paired_params(rng)
    ev, tv = nn.utils.parameters_to_vector(e), torch.nn.utils.parameters_to_vector(t)
    assert_close(ev, tv)
    ev.sum().backward()
    assert np.all(e[0].grad.numpy() != 0)
    new = np.arange(ev.numel(), dtype=np.float32)
    nn.utils.vector_to_parameters(ember.tensor(new), e)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), t)
    for ep, tp in zip(e, t):
        assert_close(ep.detach(), tp.detach())
    with pytest.raises(TypeError, match="expected ember.Tensor"):
        nn.utils.vector_to_parameters(new, e)


@pytest.mark.parametrize("pad,mode", [((1, 2), "constant"), ((1, 1, 2, 0), "constant"), ((-1, 2), "constant"),
                                      ((2, 1), "reflect"), ((1, 2, 2, 1), "reflect"), ((2, 3), "replicate"),
                                      ((1, 1, 1, 1), "replicate"), ((2, 1, 1, 2), "circular")])
def test_pad(pad, mode):
    shape = (2, 3, 4, 5) if len(pad) == 4 or mode == "constant" else (2, 3, 5)
    check(lambda m, x: m.nn.functional.pad(x, pad, mode=mode), [shape])


def test_pad_value_and_errors():
    check(lambda m, x: m.nn.functional.pad(x, (1, 1), value=2.5), [(3, 2)])
    with pytest.raises(RuntimeError, match="divisible by 2"):
        nn.functional.pad(ember.zeros(2), (1,))
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D"):
        nn.functional.pad(ember.zeros(1, 2, 3, 4), (1, 1), mode="reflect")


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1, 0), (2.0, -1)])
def test_normalize(p, dim):
    check(lambda m, x: m.nn.functional.normalize(x, p=p, dim=dim), [(3, 4)])


def test_functional_surface():
    import ember.nn.functional as F

    names = ["linear", "conv1d", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
             "layer_norm", "group_norm", "dropout", "embedding", "relu", "leaky_relu", "gelu", "silu", "tanh",
             "sigmoid", "softmax", "log_softmax", "mse_loss", "l1_loss", "smooth_l1_loss", "cross_entropy",
             "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "one_hot", "pad", "normalize"]
    assert all(callable(getattr(F, n)) for n in names)


@pytest.mark.parametrize("training", [True, False])
def test_functional_batch_norm(training, rng):
    rm, rv = rng.standard_normal(3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(np.float32)
    ebufs, tbufs = (ember.tensor(rm), ember.tensor(rv)), (torch.tensor(rm), torch.tensor(rv))

    def fn(m, x, w, b):
        bufs = ebufs if m is ember else tbufs
        return m.nn.functional.batch_norm(x, *bufs, w, b, training=training, momentum=0.2)

    check(fn, [(4, 3, 2), (3,), (3,)], atol=1e-4)
    for eb, tb in zip(ebufs, tbufs):
        assert_close(eb, tb)


def test_functional_layer_group_norm_without_affine():
    check(lambda m, x: m.nn.functional.layer_norm(x, (4,)), [(3, 4)], atol=1e-4)
    check(lambda m, x: m.nn.functional.group_norm(x, 2), [(2, 4, 3)], atol=1e-4)


@pytest.mark.parametrize("foreach", [None, True, False])
@pytest.mark.parametrize("make", [lambda m: [], lambda m: (), lambda m: iter([]), lambda m: (p for p in []),
                                  lambda m: [m.nn.Parameter(m.ones(2)), m.nn.Parameter(m.ones(3))],
                                  lambda m: m.nn.Parameter(m.ones(2))])
def test_clipping_no_gradient_as_pytorch(make, foreach):
    # clip_grad_value_ has nothing to clip: PyTorch's RuntimeError whatever foreach; clip_grad_norm_ returns 0
    with pytest.raises(RuntimeError) as et:
        torch.nn.utils.clip_grad_value_(make(torch), 1.0, foreach=foreach)
    with pytest.raises(RuntimeError) as ee:
        nn.utils.clip_grad_value_(make(ember), 1.0, foreach=foreach)
    assert str(ee.value) == str(et.value) and "nested_tensorlist[0].empty()" in str(ee.value)
    with warnings.catch_warnings(record=True) as te:
        warnings.simplefilter("always")
        t = torch.nn.utils.clip_grad_norm_(make(torch), 1.0, foreach=foreach)
    with warnings.catch_warnings(record=True) as ee:
        warnings.simplefilter("always")
        e = nn.utils.clip_grad_norm_(make(ember), 1.0, foreach=foreach)
    assert_close(e, t, 0, 0)
    assert [str(w.message) for w in ee] == [str(w.message) for w in te]


def test_clip_grad_value_skips_parameters_without_gradient_as_pytorch():
    outs = []
    for m in (torch, ember):
        a, b = m.nn.Parameter(m.tensor([3.0, -2.0, 0.5])), m.nn.Parameter(m.ones(2))
        a.grad = m.tensor([3.0, -2.0, 0.5])
        m.nn.utils.clip_grad_value_([a, b], 1.0)
        outs.append((a.grad, b.grad))
    assert_close(outs[1][0], outs[0][0], 0, 0)
    assert outs[1][1] is None and outs[0][1] is None
