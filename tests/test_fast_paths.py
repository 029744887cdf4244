"""Fast paths give the same answers as the readable reference paths (and as PyTorch).

- optimizers: the fast path (``_update``, threaded, in place) against the readable per-parameter
  reference (``foreach=False``), over several steps, for every option;
- gradient stores: backward writing into the optimizer's gradient store never overwrites a
  gradient someone still holds;
- clip_grad_norm_ over one flat buffer against the per-gradient computation;
- batch-last convolution and offset-loop pooling against PyTorch (layouts, ties, NaN, in place).
"""

from __future__ import annotations

import copy
import sys
import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember._kernels import policy
from ember.autograd.grad_store import GradStore, flat_grads

SHAPES = [(4, 3), (3,), (2, 2, 2), (), (5,)]

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), maximize=True, eps=1e-6)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Rprop", dict(lr=0.05, etas=(0.4, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=3, weight_decay=0.1, maximize=True)),
]


def _params(seed=0, shapes=SHAPES, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [ember.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in shapes]


# gradients that grow, shrink and change sign from step to step, so that running maxima (Adamax, AMSGrad),
# the centered variance and RAdam's switch to the rectified step (from step 6) are all exercised
SCALES = (1.0, -3.0, 0.5, -0.02, 2.0, -0.001, 0.3, -1.5)


def _set_grads(params, step, missing=()):
    rng = np.random.default_rng(100 + step)
    for i, p in enumerate(params):
        g = (rng.standard_normal(p.shape) * SCALES[step % len(SCALES)]).astype(p._data.dtype)
        p.grad = None if i in missing else ember.tensor(g)


def _train(name, kwargs, foreach, steps=8, missing=lambda step: (), groups=None, shapes=SHAPES):
    params = _params(shapes=shapes)
    spec = [{"params": [params[i] for i in idx], **opts} for idx, opts in groups] if groups else params
    if foreach is False:
        spec = [dict(g, foreach=False) for g in spec] if groups else [{"params": params, "foreach": False}]
    opt = getattr(ember.optim, name)(spec, **kwargs)
    for step in range(steps):
        _set_grads(params, step, missing(step))
        opt.step()
    return params, opt


def _same(a_params, b_params, a_opt=None, b_opt=None):
    for p, q in zip(a_params, b_params):
        assert_close(p, q, atol=1e-6, rtol=1e-5)
    if a_opt is not None:
        for p, q in zip(a_params, b_params):
            sa, sb = a_opt.state[p], b_opt.state[q]
            assert sa.keys() == sb.keys()
            for k in sa:
                assert_close(sa[k], sb[k], atol=1e-6, rtol=1e-5, msg=k)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_fast_step_matches_reference(name, kwargs):
    fast, fast_opt = _train(name, kwargs, None)
    ref, ref_opt = _train(name, kwargs, False)
    _same(fast, ref, fast_opt, ref_opt)


TORCH_CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, maximize=True, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.02)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.05)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.05, decoupled_weight_decay=True, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.2, amsgrad=True, betas=(0.5, 0.9))),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-3, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, alpha=0.8)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.05, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.3, initial_accumulator_value=0.2, eps=1e-3)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True, lr_decay=0.05)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.5, eps=1e-3)),
    ("Adadelta", dict(lr=2.0, rho=0.95, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.05, betas=(0.5, 0.8), eps=1e-3)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-4, momentum_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.05, betas=(0.5, 0.8), eps=1e-4)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.8, 0.9))),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.1), step_sizes=(1e-2, 0.1), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=3, weight_decay=0.1, maximize=True)),
    # an eps as large as the gradients' root mean square: a wrong sign or place of eps in a denominator shows
    # (PyTorch's defaults, 1e-8 to 1e-6, leave it below the comparison's tolerance)
    ("Adam", dict(lr=0.01, eps=0.5)),
    ("Adam", dict(lr=0.01, eps=0.5, amsgrad=True)),
    ("RMSprop", dict(lr=0.01, eps=0.5)),
    ("RMSprop", dict(lr=0.01, eps=0.5, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1, eps=0.5)),
    ("Adadelta", dict(lr=1.0, eps=0.5)),
    ("Adamax", dict(lr=0.05, eps=0.5)),
    ("NAdam", dict(lr=0.05, eps=0.5)),
    ("RAdam", dict(lr=0.05, betas=(0.5, 0.8), eps=0.5)),
    # a weight decay of exactly 1: a test `weight_decay != 0` turned into `!= 1` (or a factor 1 - lr * wd into
    # 1 + ...) skips or flips the decay there alone, and the configurations above all use 0.01 to 0.2
    ("SGD", dict(lr=0.1, weight_decay=1.0)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=1.0)),
    ("Adam", dict(lr=0.01, weight_decay=1.0)),
    ("Adam", dict(lr=0.01, weight_decay=1.0, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01, weight_decay=1.0)),
    ("RMSprop", dict(lr=0.01, weight_decay=1.0)),
    ("Adagrad", dict(lr=0.1, weight_decay=1.0)),
    ("Adadelta", dict(lr=1.0, weight_decay=1.0)),
    ("Adamax", dict(lr=0.05, weight_decay=1.0)),
    ("NAdam", dict(lr=0.05, weight_decay=1.0)),
    ("NAdam", dict(lr=0.05, weight_decay=1.0, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05, weight_decay=1.0)),
    ("RAdam", dict(lr=0.05, weight_decay=1.0, decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05, weight_decay=1.0)),
]


@pytest.mark.parametrize("foreach", [None, False], ids=["fast", "reference"])
@pytest.mark.parametrize("name,kwargs", TORCH_CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(TORCH_CONFIGS)])
def test_fast_and_reference_steps_match_torch(name, kwargs, foreach, monkeypatch):
    """Both implementations against PyTorch over eight steps of growing, shrinking and sign-changing gradients
    (a parameter missing its gradient at one), and ``foreach=False`` really runs the ``_single_tensor_*``
    reference."""
    module = sys.modules[getattr(ember.optim, name).__module__]
    reference = getattr(module, "_single_tensor_" + module.__name__.rsplit(".", 1)[1])
    calls = []
    monkeypatch.setattr(module, reference.__name__, lambda *a, **k: calls.append(1) or reference(*a, **k))
    params = _params()
    tparams = [torch.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    opt = getattr(ember.optim, name)(params, foreach=foreach, **kwargs)
    topt = getattr(torch.optim, name)(tparams, foreach=False, **kwargs)
    for step in range(len(SCALES)):
        _set_grads(params, step, missing=(1,) if step == 2 else ())
        for p, t in zip(params, tparams):
            t.grad = None if p.grad is None else torch.tensor(p.grad.numpy().copy())
        opt.step()
        topt.step()
    assert bool(calls) == (foreach is False)
    for p, t in zip(params, tparams):
        assert_close(p, t, atol=1e-6, rtol=1e-5)
    for p, t in zip(params, tparams):
        assert opt.state[p].keys() == topt.state[t].keys()
        for key, value in topt.state[t].items():
            assert_close(opt.state[p][key], value, atol=1e-6, rtol=1e-5, msg=key)


@pytest.mark.parametrize("name,kwargs", [CONFIGS[2], CONFIGS[5], CONFIGS[9]])
def test_param_groups_and_missing_grads(name, kwargs):
    groups = [((0, 1, 2), {}), ((3, 4), {"lr": 0.05})]
    if name != "Adagrad":
        groups[1][1]["weight_decay"] = 0.2
    missing = lambda step: (1,) if step in (1, 2) else (4,) if step == 3 else ()  # noqa: E731
    fast, fast_opt = _train(name, kwargs, None, steps=6, missing=missing, groups=groups)
    ref, ref_opt = _train(name, kwargs, False, steps=6, missing=missing, groups=groups)
    _same(fast, ref, fast_opt, ref_opt)


def test_mixed_dtypes_and_duplicates_fall_back():
    for dtypes in ([np.float32, np.float64], [np.float32, np.float32]):
        rng = np.random.default_rng(0)
        a = [ember.tensor(rng.standard_normal(3).astype(d), requires_grad=True) for d in dtypes]
        b = [ember.tensor(x.detach().numpy().copy(), requires_grad=True) for x in a]
        dup = dtypes[0] == dtypes[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt_a = ember.optim.Adam(a + a[:1] if dup else a, lr=0.1)
            opt_b = ember.optim.Adam([{"params": b + b[:1] if dup else b, "foreach": False}], lr=0.1)
        for step in range(3):
            _set_grads(a, step)
            _set_grads(b, step)
            opt_a.step()
            opt_b.step()
        _same(a, b)


def test_replacing_data_grad_and_state_rebuilds_the_layout():
    fast, fast_opt = _train("Adam", dict(lr=0.01, amsgrad=True), None, steps=2)
    ref, ref_opt = _train("Adam", dict(lr=0.01, amsgrad=True), False, steps=2)
    # the user replaces a parameter's data, and the optimizer's state through a state_dict round trip
    for params in (fast, ref):
        params[0].data = ember.ones(4, 3)
    fast_opt.load_state_dict(copy.deepcopy(fast_opt.state_dict()))
    ref_opt.load_state_dict(copy.deepcopy(ref_opt.state_dict()))
    for step in range(2, 5):
        for params, opt in ((fast, fast_opt), (ref, ref_opt)):
            _set_grads(params, step)
            opt.step()
    _same(fast, ref, fast_opt, ref_opt)


def test_parameters_are_updated_in_their_own_memory():
    """Arrays taken from parameters before the first step keep aliasing them (PyTorch's ``p.detach().numpy()``
    aliases forever), and the gradients stay where backward put them."""
    params = _params()
    taken = [p.detach().numpy() for p in params]
    arrays = [p._data for p in params]
    opt = ember.optim.SGD(params, lr=0.1, momentum=0.9)
    _set_grads(params, 0)
    grads = [p.grad for p in params]
    grad_arrays = [g._data for g in grads]
    for _ in range(2):  # the second time with the same (not zeroed) gradients
        opt.step()
        assert all(p._data is a for p, a in zip(params, arrays))
        assert all(np.array_equal(t, p.detach().numpy()) for t, p in zip(taken, params))
        assert all(p.grad is g and g._data is a for p, g, a in zip(params, grads, grad_arrays))


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01))])
def test_numpy_taken_before_the_first_step_sees_the_update_like_torch(name, kwargs):
    ember.manual_seed(0)
    model = ember.nn.Linear(4, 3)
    tmodel = torch.nn.Linear(4, 3)
    with torch.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    taken = [p.detach().numpy() for p in model.parameters()]
    ttaken = [q.detach().numpy() for q in tmodel.parameters()]
    opt, topt = getattr(ember.optim, name)(model.parameters(), **kwargs), getattr(torch.optim, name)(
        tmodel.parameters(), **kwargs)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    for _ in range(3):
        for m, o, fw in ((model, opt, ember), (tmodel, topt, torch)):
            o.zero_grad()
            m(fw.tensor(x)).square().sum().backward()
            o.step()
    for a, t, p in zip(taken, ttaken, model.parameters()):
        assert np.array_equal(a, p.detach().numpy())  # still the parameter's memory
        np.testing.assert_allclose(a, t, atol=1e-5, rtol=1e-5)


def _mlp(fw, seed=0):
    # no bias before BatchNorm: its gradient is rounding noise, which Adam would amplify into divergence
    fw.manual_seed(seed)
    return fw.nn.Sequential(fw.nn.Linear(6, 8, bias=False), fw.nn.BatchNorm1d(8), fw.nn.ReLU(), fw.nn.Linear(8, 3))


def _copy_into(dst, src):
    for p, q in zip(dst.parameters(), src.parameters()):
        p.data = ember.tensor(q.detach().numpy().copy())


@pytest.mark.parametrize("set_to_none", [True, False])
def test_training_loop_with_backward_and_clip_matches_reference_and_torch(set_to_none):
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((5, 6)).astype(np.float32), rng.integers(0, 3, 5)) for _ in range(4)]
    tmodel = _mlp(torch)
    models = [_mlp(ember), _mlp(ember)]
    for m in models:
        _copy_into(m, tmodel)
    opts = [ember.optim.Adam(models[0].parameters(), lr=0.01),
            ember.optim.Adam(models[1].parameters(), lr=0.01, foreach=False)]
    topt = torch.optim.Adam(tmodel.parameters(), lr=0.01)
    for step in range(6):
        x, y = data[step % 4]
        for fw, model, opt in ((ember, models[0], opts[0]), (ember, models[1], opts[1]), (torch, tmodel, topt)):
            opt.zero_grad(set_to_none=set_to_none)
            loss = fw.nn.functional.cross_entropy(model(fw.tensor(x)), fw.tensor(y))
            loss.backward()
            fw.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
            opt.step()
    params = list(models[0].parameters())
    # backward wrote into the optimizer's gradient store (zero_grad both ways keeps them there): clipping ran flat
    assert flat_grads(params) is not None
    for p, q, t in zip(params, models[1].parameters(), tmodel.parameters()):
        assert_close(p, q, atol=1e-6, rtol=1e-5)
        assert_close(p, t, atol=1e-5, rtol=1e-4)


def _step_once(model, opt, x):
    opt.zero_grad()
    model(x).square().sum().backward()
    opt.step()


_HOLD = {"grad": lambda g: g, "detach": lambda g: g.detach(), "view": lambda g: g.view(-1),
         "numpy": lambda g: g.numpy(), "data": lambda g: g.data}


@pytest.mark.parametrize("hold", list(_HOLD))
def test_the_gradient_store_never_overwrites_a_held_gradient(hold):
    model = ember.nn.Linear(4, 3)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x = ember.randn(2, 4)
    _step_once(model, opt, x)
    _step_once(model, opt, x)
    assert flat_grads(list(model.parameters())) is not None  # backward writes into the store
    held = _HOLD[hold](model.weight.grad)
    before = np.array(held, copy=True)
    opt.zero_grad()
    (model(x) * 3).sum().backward()  # a different gradient
    assert np.array_equal(np.asarray(held), before)
    expected = 3 * x.numpy().sum(0)[None, :].repeat(3, 0)
    assert_close(model.weight.grad, expected.astype(np.float32), atol=1e-5)
    assert flat_grads(list(model.parameters())) is not None  # in a new generation of the store
    opt.step()
    assert np.array_equal(np.asarray(held), before)


def test_gradient_accumulation_and_hooks_with_a_store():
    model = ember.nn.Linear(3, 2)
    ref = ember.nn.Linear(3, 2)
    _copy_into(ref, model)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    ref_opt = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=0.5, foreach=False)
    seen = []
    model.weight.register_hook(lambda g: seen.append(g) or g * 2)
    ref.weight.register_hook(lambda g: g * 2)
    x = ember.randn(4, 3)
    for _ in range(3):
        for m, o in ((model, opt), (ref, ref_opt)):
            o.zero_grad()
            m(x).sum().backward()
            m(x * 2).sum().backward()  # accumulates into the store, in place
            o.step()
    _same(list(model.parameters()), list(ref.parameters()), opt, ref_opt)


def test_grads_that_are_views_of_another_buffer_are_copied_not_repointed():
    params = _params()
    bucket = np.zeros(sum(p._data.size for p in params), np.float32)  # like DDP's gradient_as_bucket_view
    opt = ember.optim.Adam(params, lr=0.01)
    ref, ref_opt = _train("Adam", dict(lr=0.01), False, steps=0)
    for step in range(3):
        _set_grads(ref, step)
        start = 0
        for p, q in zip(params, ref):
            view = bucket[start:start + q._data.size].reshape(q._data.shape)
            view[...] = q.grad._data
            p.grad = ember.Tensor._make(view)
            start += q._data.size
        opt.step()
        ref_opt.step()
        assert all(np.shares_memory(p.grad._data, bucket) for p in params)
    _same(params, ref, opt, ref_opt)


def test_clip_grad_norm_flat_matches_per_gradient():
    model = _mlp(ember)
    opt = ember.optim.SGD(model.parameters(), lr=0.0)
    x = ember.randn(5, 6)
    for _ in range(2):
        opt.zero_grad()
        model(x).square().sum().backward()
        opt.step()
    params = list(model.parameters())
    assert flat_grads(params) is not None
    separate = [ember.tensor(p.grad.numpy().copy(), requires_grad=False) for p in params]
    for s in separate:
        s.grad = ember.tensor(s.numpy().copy())
    for norm_type in (2.0, 1.0, float("inf"), 3.0):
        total_flat = ember.nn.utils.clip_grad_norm_(params, 1e9, norm_type=norm_type)  # measure only
        total_sep = ember.nn.utils.clip_grad_norm_(separate, 1e9, norm_type=norm_type)
        assert_close(total_flat, total_sep, atol=1e-5, rtol=1e-5)
    total = ember.nn.utils.clip_grad_norm_(params, 0.1)
    ember.nn.utils.clip_grad_norm_(separate, 0.1)
    assert float(total) > 0.1
    for p, s in zip(params, separate):
        assert_close(p.grad, s.grad, atol=1e-7, rtol=1e-5)


# ----------------------------------------------------------------------------- conv and pooling
def _cnn(fw, inplace=False):
    fw.manual_seed(0)
    nn = fw.nn
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.ReLU(inplace=inplace),
                         nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=1), nn.ReLU(),
                         nn.MaxPool2d(3, stride=2, padding=1), nn.Flatten(), nn.Linear(6 * 2 * 2, 3))


@pytest.mark.parametrize("inplace", [False, True])
def test_conv_pool_stack_matches_torch(inplace):
    """Batch-last layout through conv -> relu -> pool -> (in-place relu) -> strided conv -> overlapping pool."""
    x = np.random.default_rng(0).standard_normal((3, 2, 12, 12)).astype(np.float32)
    tm, em = _cnn(torch, inplace), _cnn(ember, inplace)
    _copy_into(em, tm)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = em(ex), tm(tx)
    assert_close(eo, to, atol=1e-5)
    eo.square().sum().backward()
    to.square().sum().backward()
    assert_close(ex.grad, tx.grad, atol=1e-5)
    for p, q in zip(em.parameters(), tm.parameters()):
        assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-4)


def _batch_last(x):
    """x (N, C, H, W) as a view of a (C, H, W, N) array, as ember's convolutions produce."""
    return np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)


@pytest.mark.parametrize("slope", [0.2, 0.0, 1.0, 1.5, -0.3])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_leaky_relu_keeps_the_batch_last_layout_and_matches_torch(slope, requires_grad):
    """LeakyReLU of a convolution's batch-last output stays batch-last (no pass in C order); values at +-0, inf
    and NaN, and the gradient (slope where x <= 0), as PyTorch's."""
    x = np.random.default_rng(6).standard_normal((3, 4, 5, 6)).astype(np.float32)
    x[0, 0, 0, :5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    ex = ember.tensor(_batch_last(x), requires_grad=requires_grad)
    tx = torch.tensor(x, requires_grad=requires_grad)
    eo, to = ember.nn.functional.leaky_relu(ex, slope), torch.nn.functional.leaky_relu(tx, slope)
    assert eo._data.transpose(1, 2, 3, 0).flags.c_contiguous
    np.testing.assert_array_equal(eo.detach().numpy(), to.detach().numpy())
    assert np.array_equal(np.signbit(eo.detach().numpy()), np.signbit(to.detach().numpy()))
    if requires_grad:
        g = np.random.default_rng(7).standard_normal(x.shape).astype(np.float32)
        eo.backward(ember.tensor(_batch_last(g)))
        to.backward(torch.tensor(g))
        np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())


def test_backward_products_keep_their_operands_memory_order():
    """The threaded product of a backward (gradient times saved derivative) allocates in its operands' order:
    batch-last operands give a batch-last result (no copies); other pairs the plain product."""
    from ember._parallel import multiply

    rng = np.random.default_rng(8)
    a, b = (_batch_last(rng.standard_normal((2, 3, 4, 5)).astype(np.float32)) for _ in range(2))
    out = multiply(a, b)
    assert out.transpose(1, 2, 3, 0).flags.c_contiguous
    np.testing.assert_array_equal(out, a * b)
    c = np.ascontiguousarray(b)
    np.testing.assert_array_equal(multiply(a, c), a * c)
    np.testing.assert_array_equal(multiply(a[:, :, ::2], c[:, :, ::2]), a[:, :, ::2] * c[:, :, ::2])


@pytest.mark.parametrize("kernel,stride,padding,dilation", [(2, 2, 0, 1), (3, 1, 1, 1), (3, 2, 1, 2), (2, 3, 0, 1)])
def test_max_pool_ties_go_to_the_first_maximum_like_torch(kernel, stride, padding, dilation):
    rng = np.random.default_rng(1)
    x = np.maximum(rng.standard_normal((2, 3, 9, 9)), 0).astype(np.float32)  # many tied zeros
    x[0, 0, :3, :3] = 1.0
    g = rng.standard_normal
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo = ember.nn.functional.max_pool2d(ex, kernel, stride, padding, dilation)
    to = torch.nn.functional.max_pool2d(tx, kernel, stride, padding, dilation)
    assert_close(eo, to)
    up = g(tuple(to.shape)).astype(np.float32)
    eo.backward(ember.tensor(up))
    to.backward(torch.tensor(up))
    assert_close(ex.grad, tx.grad, atol=1e-6)
    _, ei = ember.nn.functional.max_pool2d(ex, kernel, stride, padding, dilation, return_indices=True)
    _, ti = torch.nn.functional.max_pool2d(tx, kernel, stride, padding, dilation, return_indices=True)
    assert np.array_equal(ei.numpy(), ti.numpy())


def test_max_pool_nan_propagates_and_gets_the_gradient():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 0, 1] = np.nan
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = ember.nn.functional.max_pool2d(ex, 2), torch.nn.functional.max_pool2d(tx, 2)
    assert_close(eo, to)
    eo.sum().backward()
    to.sum().backward()
    assert_close(ex.grad, tx.grad)


@pytest.mark.parametrize("layout", ["contiguous", "batch_last"])
def test_avg_pool_and_conv1d_match_torch_in_both_layouts(layout):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 10, 10)).astype(np.float32)
    ex = ember.tensor(np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2) if layout == "batch_last"
                      else x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    eo = ember.nn.functional.avg_pool2d(ex, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    to = torch.nn.functional.avg_pool2d(tx, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    assert_close(eo, to, atol=1e-6)
    eo.square().sum().backward()
    to.square().sum().backward()
    assert_close(ex.grad, tx.grad, atol=1e-5)
    w = rng.standard_normal((6, 1, 3)).astype(np.float32)
    seq = x.reshape(4, 3, 100)[:, :, :30]
    e1 = ember.nn.functional.conv1d(ember.tensor(seq), ember.tensor(w), stride=2, padding=2, dilation=2, groups=3)
    t1 = torch.nn.functional.conv1d(torch.tensor(seq), torch.tensor(w), stride=2, padding=2, dilation=2, groups=3)
    assert_close(e1, t1, atol=1e-5)


def test_malloc_tuning_can_be_switched_off(monkeypatch):
    from ember import _malloc

    monkeypatch.setenv("EMBER_MALLOC_TUNING", "0")
    assert _malloc.tune() is False
    monkeypatch.delenv("EMBER_MALLOC_TUNING")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000")  # the user's own glibc setting wins
    assert _malloc.tune() is False


@pytest.mark.parametrize("order", ["same", "reversed"])
def test_a_store_built_by_someone_else_is_used_where_it_lies(order):
    """A store built before the optimizer (as DistributedDataParallel builds one at construction) belongs to its
    owner: the optimizer keeps it, whatever its own parameter order, and steps each parameter on its gradient
    where it lies; the result is the reference path's."""
    ember.manual_seed(0)
    model, ref = _mlp(ember), _mlp(ember)
    _copy_into(ref, model)
    params = list(model.parameters())
    store = GradStore(params)
    opt = ember.optim.Adam(params if order == "same" else params[::-1], lr=0.01)
    ref_opt = ember.optim.Adam(ref.parameters(), lr=0.01, foreach=False)
    x = ember.randn(5, 6)
    for _ in range(3):
        for m, o in ((model, opt), (ref, ref_opt)):
            o.zero_grad()
            m(x).square().sum().backward()
            o.step()
        assert all(p._grad_slot == (store, i) for i, p in enumerate(params))  # still the owner's store
        assert all(np.shares_memory(p.grad._data, store.flat) for p in params)  # backward wrote there
    _same(params, list(ref.parameters()))


def _resblock(fw):
    fw.manual_seed(0)
    nn = fw.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
            self.c2, self.b2 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
            self.relu, self.pool, self.fc = nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Linear(4, 2)

        def forward(self, x):
            h = self.relu(self.b1(self.c1(x)))
            self.conv_out = self.c2(h)
            h = self.relu(self.b2(self.conv_out) + h)
            return self.fc(self.pool(h).flatten(1))

    return Net()


def test_resnet_block_layouts_and_gradients_match_torch():
    """conv -> BN -> in-place ReLU -> residual add -> global average pool: the convolution's output and the gradient
    reaching its backward are laid out as PyTorch's (contiguous (N, C, H, W)), and every value and gradient equals
    PyTorch's."""
    x = np.random.default_rng(3).standard_normal((5, 3, 6, 6)).astype(np.float32)
    tm, em = _resblock(torch), _resblock(ember)
    _copy_into(em, tm)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = em(ex), tm(tx)
    assert em.conv_out.is_contiguous() and em.conv_out.stride() == tm.conv_out.stride()
    layouts = {}

    def record(name):
        def hook(g) -> None:
            layouts[name] = (g.is_contiguous(), g.stride())
        return hook

    em.conv_out.register_hook(record("ember"))
    tm.conv_out.register_hook(record("torch"))
    assert_close(eo, to, atol=1e-5)
    eo.square().sum().backward()
    to.square().sum().backward()
    assert layouts["ember"] == layouts["torch"] == (True, tm.conv_out.stride())
    assert_close(ex.grad, tx.grad, atol=1e-5)
    for p, q in zip(em.parameters(), tm.parameters()):
        assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("nd,kernel,padding,dilation,groups", [
    (2, 3, 1, 1, 1), (2, 3, 0, 1, 2), (2, (2, 3), (1, 2), (2, 1), 1), (2, 1, 0, 1, 1), (2, 3, "same", 2, 3),
    (2, 3, 3, 1, 1),  # padding beyond the kernel's reach: only the col2im path applies
    (1, 3, 2, 2, 3), (1, 5, 0, 1, 1), (1, 4, "same", 1, 1),
])
def test_stride1_input_gradient_as_a_convolution_equals_col2im_and_torch(monkeypatch, nd, kernel, padding, dilation,
                                                                       groups):
    """A stride-1 convolution's input gradient is computed as a convolution of the output gradient with the flipped
    kernel; it equals the col2im (scatter-add) reference and PyTorch, values and gradients."""

    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 6) + (7, 6)[:nd]).astype(np.float32)
    ks = (kernel,) * nd if isinstance(kernel, int) else kernel
    w = rng.standard_normal((6 * groups, 6 // groups, *ks)).astype(np.float32)
    b = rng.standard_normal(6 * groups).astype(np.float32)
    fe, ft = (ember.nn.functional.conv1d, torch.nn.functional.conv1d) if nd == 1 else \
        (ember.nn.functional.conv2d, torch.nn.functional.conv2d)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    to = ft(tx, tw, tb, padding=padding, dilation=dilation, groups=groups)
    up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(up))
    grads = []
    for force in (False, True):
        monkeypatch.setattr(policy, "transposed_as_conv", not force)
        ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
        eo = fe(ex, ew, eb, padding=padding, dilation=dilation, groups=groups)
        assert_close(eo, to, atol=1e-4)
        eo.backward(ember.tensor(up))
        for e, t in ((ex, tx), (ew, tw), (eb, tb)):
            assert_close(e.grad, t.grad, atol=1e-4, rtol=1e-4)
        grads.append(ex.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("layout", ["contiguous", "batch_last"])
@pytest.mark.parametrize("affine,training", [(True, True), (False, True), (True, False)])
def test_batch_norm_fused_backward_equals_reference_and_torch(layout, affine, training):
    """BatchNorm's backward (per-channel sums, then one fused input-gradient expression) against the shared
    normalisation gradient formula and PyTorch."""
    from ember.nn._ops.norm import _normalize, _normalized_grad

    rng = np.random.default_rng(5)
    x = (rng.standard_normal((6, 4, 5, 3)) * 3 + 1).astype(np.float32)
    up = rng.standard_normal(x.shape).astype(np.float32)
    xe = np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2) if layout == "batch_last" else x
    eb, tb = ember.nn.BatchNorm2d(4, affine=affine), torch.nn.BatchNorm2d(4, affine=affine)
    if affine:
        w, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
        for m in (eb, tb):
            m.weight.data.copy_(torch.tensor(w) if m is tb else ember.tensor(w))
            m.bias.data.copy_(torch.tensor(b) if m is tb else ember.tensor(b))
    if not training:
        stats = rng.standard_normal(4).astype(np.float32), rng.uniform(0.5, 2, 4).astype(np.float32)
        for m, fw in ((eb, ember), (tb, torch)):
            m.running_mean.copy_(fw.tensor(stats[0]))
            m.running_var.copy_(fw.tensor(stats[1]))
            m.eval()
    ex, tx = ember.tensor(xe, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = eb(ex), tb(tx)
    assert_close(eo, to, atol=1e-5)
    eo.backward(ember.tensor(up))
    to.backward(torch.tensor(up))
    assert_close(ex.grad, tx.grad, atol=1e-5, rtol=1e-5)
    if affine:
        assert_close(eb.weight.grad, tb.weight.grad, atol=1e-4, rtol=1e-5)
        assert_close(eb.bias.grad, tb.bias.grad, atol=1e-4, rtol=1e-5)
    if training:  # the reference formula, from the same statistics
        axes = (0, 2, 3)
        xhat, invstd = _normalize(x, axes, 1e-5)
        gxhat = up * (w.reshape(1, 4, 1, 1) if affine else 1)
        np.testing.assert_allclose(ex.grad.numpy(), _normalized_grad(gxhat, xhat, invstd, axes), atol=1e-5, rtol=1e-5)


def test_op_result_has_every_field_a_made_tensor_has():
    """``Node.apply`` sets a result's fields inline (``_tensor._fill``'s work without its call): an op's result,
    recorded or not, has the same fields set, to the same values, as a tensor ``_fill`` makes."""
    from ember._tensor import _fill

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ember.tensor([3.0, 4.0])
    made = object.__new__(ember.Tensor)
    _fill(made, np.zeros(2, np.float32), None, 0)
    slots = [s for s in ember.Tensor.__slots__ if s not in ("__weakref__", "__dict__")]
    for result, grad_fn in ((x + y, True), (y + y, False)):
        assert [hasattr(result, s) for s in slots] == [hasattr(made, s) for s in slots]
        for s in slots:
            if s not in ("_data", "_grad_fn", "_vc", "_requires_grad") and hasattr(made, s):
                assert getattr(result, s) == getattr(made, s), s
        assert result._vc == [0] and result._vc is not x._vc
        assert (result._grad_fn is not None) is grad_fn and result._requires_grad is grad_fn
        assert result._data.__class__ is np.ndarray


@pytest.mark.parametrize("mode", ["no_grad", "grad mode", "grad mode, of a split piece", "no_grad, leaf base"])
def test_view_without_a_node_has_the_fields_apply_gives(mode, monkeypatch):
    """``view``, ``reshape``, ``transpose`` and ``split`` make a view that records nothing without its node
    (``graph.unrecorded_view``): the same fields, to the same values, as ``Node.apply`` of the view's node gives,
    and the same note of the view on its base's version counter (``watch_view``)."""
    from ember import _meta
    from ember.autograd.graph import unrecorded_view

    # (the fast path is off for good once a process has made a meta tensor, as an earlier test may have)
    monkeypatch.setattr(_meta, "made", [False])  # (a new list for this test; the modules hold the old one)
    monkeypatch.setattr(ember.autograd.graph, "_meta_made", _meta.made)
    from ember.ops.shape import TransposeBackward0, ViewBackward0

    src = ember.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4), requires_grad=mode.endswith("leaf base"))
    ctx = ember.no_grad() if mode.startswith("no_grad") else ember.enable_grad()
    with ctx:
        x = src.split(2, dim=2)[0] if mode.endswith("split piece") else src
        shape = (6, x.shape[2])  # (a view of a split piece too)
        ViewBackward0.apply(x, shape=shape)  # (apply works out a view of a view's label once: as it would have)
        TransposeBackward0.apply(x, dims=(0, 2, 1))
        cases = [(ViewBackward0, x._data.reshape, shape, dict(shape=shape)),
                 (TransposeBackward0, x._data.transpose, (0, 2, 1), dict(dims=(0, 2, 1)))]
        for cls, make, arg, params in cases:
            watched = len(x._vc[1].refs) if len(x._vc) > 1 else 0
            made = cls.apply(x, **params)
            after_apply = len(x._vc[1].refs) if len(x._vc) > 1 else 0
            fast = unrecorded_view(x, make, arg, cls)
            assert fast is not None
            after_fast = len(x._vc[1].refs) if len(x._vc) > 1 else 0
            assert after_fast - after_apply == after_apply - watched
            slots = [s for s in ember.Tensor.__slots__ if s not in ("__weakref__", "__dict__")]
            assert [hasattr(fast, s) for s in slots] == [hasattr(made, s) for s in slots]
            for s in slots:
                if s == "_data":
                    np.testing.assert_array_equal(fast._data, made._data)
                    assert np.shares_memory(fast._data, src._data)
                elif hasattr(made, s):
                    a, b = getattr(fast, s), getattr(made, s)
                    assert a is b or (not isinstance(a, ember.Tensor) and a == b), s
            assert fast._vc is made._vc and fast._base is made._base and fast._grad_fn is None


def test_views_that_record_keep_their_node():
    """A view that records (of a tensor that needs a gradient, in grad mode) or of a Parameter is ``apply``'s, not
    the node-less fast path's; its gradient and in-place rules are PyTorch's."""
    from ember.autograd.graph import unrecorded_view
    from ember.ops.shape import ViewBackward0

    x = ember.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    assert unrecorded_view(x, x._data.reshape, (3, 2), ViewBackward0) is None
    assert unrecorded_view(ember.nn.Parameter(x.detach()), x._data.reshape, (3, 2), ViewBackward0) is None
    for e in (ember, torch):
        a = e.tensor(np.arange(12, dtype=np.float32).reshape(4, 3), requires_grad=True)
        q, k = a.split(2, dim=0)
        (q.view(6).transpose(0, 0) * 2).sum().backward()
        if e is ember:
            got = a.grad.numpy()
        else:
            np.testing.assert_array_equal(got, a.grad.numpy())
    with ember.no_grad():
        v = ember.ones(2, 3).view(3, 2)
    w = ember.ones(2, 3, requires_grad=True)
    with ember.no_grad():
        vw = w.view(3, 2).transpose(0, 1)
    assert not v.requires_grad and vw.requires_grad and vw.grad_fn is None and vw._base is w


def _layer_norm_run(fw, shape, change: bool, dtype: str = "float32"):
    """A LayerNorm layer (its tuple shape, weight and bias: ``layer_norm``'s one-test path) on an input that
    requires grad, the input changed in place before backward when ``change``: the output, the gradients, or
    the error."""
    rng = np.random.default_rng(5)
    x = fw.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    ln = fw.nn.LayerNorm(shape[-1])
    with fw.no_grad():
        ln.weight.copy_(fw.tensor(rng.standard_normal(shape[-1]).astype(np.float32)))
        ln.bias.copy_(fw.tensor(rng.standard_normal(shape[-1]).astype(np.float32)))
    ln = ln.to(getattr(fw, dtype))
    xi = x.to(getattr(fw, dtype))
    out = ln(xi)
    if change:
        with fw.no_grad():
            xi.mul_(2.0)
    try:
        out.float().sum().backward()
    except RuntimeError as err:
        return str(err).split(";")[0].split(":")[0], None
    return out.detach().float().numpy(), [x.grad.numpy(), ln.weight.grad.float().numpy(), ln.bias.grad.float().numpy()]


@pytest.mark.parametrize("change", [False, True])
@pytest.mark.parametrize("shape", [(1, 120), (1, 64, 128), (128, 120), (3, 0, 5)])
def test_layer_norm_layer_as_pytorch(shape, change):
    """``layer_norm`` takes a layer's call (a tuple shape, weight and bias of it and of the input's dtype) through
    one test instead of its argument checks: the same values and gradients as PyTorch's, and its error when the
    input (which the node's formula stands for) is changed in place before backward."""
    got, want = _layer_norm_run(ember, shape, change), _layer_norm_run(torch, shape, change)
    if change:
        assert want[1] is None and got == want
        return
    assert_close(got[0], want[0], atol=1e-5, rtol=1e-5)
    for g, w in zip(got[1], want[1]):
        assert_close(g, w, atol=1e-4, rtol=1e-5)


def test_layer_norm_layer_path_is_the_checked_paths_bits():
    """The one-test path gives the bits of the checked one (the shape as a list, or weight and bias apart)."""
    rng = np.random.default_rng(6)
    x = ember.tensor(rng.standard_normal((4, 7, 16)).astype(np.float32))
    w = ember.tensor(rng.standard_normal(16).astype(np.float32))
    b = ember.tensor(rng.standard_normal(16).astype(np.float32))
    F = ember.nn.functional
    fast = F.layer_norm(x, (16,), w, b)
    np.testing.assert_array_equal(fast.numpy(), F.layer_norm(x, [16], w, b).numpy())
    np.testing.assert_array_equal(fast.numpy(), F.layer_norm(x, ember.Size([16]), w, b).numpy())
    tx, tw, tb = (torch.from_numpy(t.numpy()) for t in (x, w, b))
    for bad in ((8,), (7, 16)):  # (a shape the input does not end in, weight and bias of another: the checks')
        with pytest.raises(RuntimeError):
            F.layer_norm(x, bad, w, b)
        with pytest.raises(RuntimeError):
            torch.nn.functional.layer_norm(tx, bad, tw, tb)


@pytest.mark.parametrize("rows", [1, 3, 128, 5000])
def test_linear_bias_add_below_the_threading_size_is_the_same(rows):
    """A Linear's bias is added in one pass below the size its rows are split among threads at: the same bits
    as the split pass (the rows' sums do not depend on the split), and PyTorch's values."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((rows, 4)).astype(np.float32)
    lin = ember.nn.Linear(4, 120)
    want = x @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
    with policy.override(min_elementwise_elements=2):
        split = lin(ember.tensor(x)).detach().numpy()
    np.testing.assert_array_equal(lin(ember.tensor(x)).detach().numpy(), split)
    np.testing.assert_array_equal(split, want)
    t = torch.nn.functional.linear(torch.from_numpy(x), torch.from_numpy(lin.weight.detach().numpy()),
                                   torch.from_numpy(lin.bias.detach().numpy()))
    assert_close(split, t.numpy(), atol=1e-5, rtol=1e-5)
