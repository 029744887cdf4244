"""ember.optim.lr_scheduler against torch.optim.lr_scheduler: the same lr (and momentum) sequence, step by step."""

import math
import warnings

import pytest
import torch

import ember

STEPS = 25


def make_opt(m, name="SGD", **kwargs):
    """Two param groups with different lrs, so per-group behaviour is exercised."""
    groups = [{"params": [m.zeros(2, requires_grad=True)], "lr": 0.1},
              {"params": [m.zeros(3, requires_grad=True)], "lr": 0.02}]
    return getattr(m.optim, name)(groups, **kwargs)


def record(opt):
    return [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]


def run(m, make_sched, steps=STEPS, name="SGD", opt_kwargs=None):
    opt = make_opt(m, name, **(opt_kwargs or {}))
    sched = make_sched(m.optim.lr_scheduler, opt)
    seq = [record(opt)]
    last = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append(record(opt))
        last.append(sched.get_last_lr())
    return seq, last


def assert_same(e, t):
    for k, (a, b) in enumerate(zip(e, t)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert x == pytest.approx(y, rel=1e-10, abs=1e-14), f"epoch {k}: {a} != {b}"
    assert len(e) == len(t)


def flat(seq):
    """Nested records as flat lists of floats (None dropped), for approx comparison."""
    out = []
    for rec in seq:
        row = []
        for item in rec:
            for v in item if isinstance(item, tuple) else (item,):
                if isinstance(v, tuple):
                    row.extend(v)
                elif v is not None:
                    row.append(v)
        out.append(row)
    return out


def check(make_sched, steps=STEPS, name="SGD", opt_kwargs=None):
    (es, el), (ts, tl) = (run(m, make_sched, steps, name, opt_kwargs) for m in (ember, torch))
    assert_same(flat(es), flat(ts))
    assert_same(el, tl)


SCHEDULERS = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=4),
    "StepLR-gamma": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[3, 7, 7, 15], gamma=0.3),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=10),
    "CosineAnnealingLR-eta": lambda s, o: s.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda e: 1.0 / (e + 1)),
    "LambdaLR-list": lambda s, o: s.LambdaLR(o, [lambda e: 0.95**e, lambda e: e % 3 + 1]),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.9),
    "LinearLR": lambda s, o: s.LinearLR(o),
    "LinearLR-args": lambda s, o: s.LinearLR(o, start_factor=0.25, end_factor=0.5, total_iters=8),
    "ConstantLR": lambda s, o: s.ConstantLR(o),
    "ConstantLR-args": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=10),
    "WarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=5),
    "WarmRestarts-mult": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
    "OneCycleLR-cos": lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=STEPS),
    "OneCycleLR-linear": lambda s, o: s.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=30, anneal_strategy="linear",
                                                   pct_start=0.4, div_factor=10.0, final_div_factor=100.0),
    "OneCycleLR-3phase": lambda s, o: s.OneCycleLR(o, max_lr=0.3, epochs=5, steps_per_epoch=6, three_phase=True,
                                                   base_momentum=0.8, max_momentum=0.9),
    "OneCycleLR-nomomentum": lambda s, o: s.OneCycleLR(o, max_lr=0.3, total_steps=26, cycle_momentum=False),
    "SequentialLR": lambda s, o: s.SequentialLR(o, [s.LinearLR(o, start_factor=0.1, total_iters=5),
                                                    s.CosineAnnealingLR(o, T_max=15)], milestones=[5]),
    "SequentialLR-3": lambda s, o: s.SequentialLR(o, [s.ConstantLR(o, factor=0.5, total_iters=3),
                                                      s.ExponentialLR(o, gamma=0.8), s.StepLR(o, 3)],
                                                  milestones=[4, 12]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler([s.ConstantLR(o, factor=0.1, total_iters=4),
                                                         s.ExponentialLR(o, gamma=0.9)]),
    "CyclicLR": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda s, o: s.CyclicLR(o, base_lr=[0.01, 0.001], max_lr=[0.1, 0.05], step_size_up=3,
                                                    step_size_down=5, mode="triangular2", base_momentum=[0.7, 0.85]),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range",
                                                  gamma=0.9, cycle_momentum=False),
    "CyclicLR-scale_fn": lambda s, o: s.CyclicLR(o, 0.02, 0.2, step_size_up=3, scale_fn=lambda x: 0.8 ** x,
                                                 scale_mode="iterations"),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o),
    "PolynomialLR-power": lambda s, o: s.PolynomialLR(o, total_iters=12, power=0.9),
    "Chained-cosine": lambda s, o: s.ChainedScheduler([s.CosineAnnealingLR(o, T_max=6),
                                                       s.MultiStepLR(o, [5, 9])], optimizer=o),
}


@pytest.mark.parametrize("key", sorted(SCHEDULERS))
def test_sequence_matches_torch(key):
    steps = 29 if key in ("OneCycleLR-linear", "OneCycleLR-3phase") else STEPS
    check(SCHEDULERS[key], steps=steps, opt_kwargs={"momentum": 0.9} if "OneCycle" in key else None)


@pytest.mark.parametrize("name,kwargs", [("Adam", {"betas": (0.9, 0.99)}), ("SGD", {}), ("RMSprop", {"momentum": 0.5})])
def test_cyclic_lr_cycles_momentum_of_each_optimizer(name, kwargs):
    """betas[0] for Adam; SGD built without momentum gets one (PyTorch's CyclicLR sets it)."""
    make = lambda s, o: s.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=3, mode="triangular2")  # noqa: E731
    check(make, name=name, opt_kwargs=kwargs)


def test_cyclic_lr_errors_and_custom_scale_state():
    for m in (ember, torch):
        s = m.optim.lr_scheduler
        with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
            s.CyclicLR(make_opt(m), 0.01, 0.1, mode="cosine")
        with pytest.raises(ValueError, match="must support momentum or beta1"):
            s.CyclicLR(make_opt(m, "Adagrad"), 0.01, 0.1)
        with pytest.raises(ValueError, match="base_lr must have the same length as optimizer.param_groups"):
            s.CyclicLR(make_opt(m), [0.01], 0.1)

    class Halving:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, x):
            return self.rate ** x

    states = []
    for m in (ember, torch):
        fn = Halving()
        sched = m.optim.lr_scheduler.CyclicLR(make_opt(m), 0.01, 0.1, step_size_up=2, scale_fn=fn)
        state = sched.state_dict()
        assert state["_scale_fn_custom"] == {"rate": 0.5}
        states.append(sorted(state))
        fn2 = Halving()
        fn2.rate = 0.9
        other = m.optim.lr_scheduler.CyclicLR(make_opt(m), 0.01, 0.1, step_size_up=2, scale_fn=fn2)
        other.load_state_dict(state)
        assert fn2.rate == 0.5
        assert m.optim.lr_scheduler.CyclicLR(make_opt(m), 0.01, 0.1, scale_fn=lambda x: 1.0).state_dict()[
            "_scale_fn_custom"] is None
    assert states[0] == states[1]


@pytest.mark.parametrize("kwargs", [{}, {"anneal_strategy": "linear", "base_momentum": [0.7, 0.8]}])
def test_one_cycle_cycles_adam_beta1(kwargs):
    make = lambda s, o: s.OneCycleLR(o, max_lr=0.01, total_steps=STEPS, **kwargs)  # noqa: E731
    check(make, name="Adam", opt_kwargs={"betas": (0.9, 0.99)})


def test_one_cycle_errors():
    for m in (ember, torch):
        s = m.optim.lr_scheduler
        opt = make_opt(m)
        sched = s.OneCycleLR(opt, max_lr=0.1, total_steps=3, cycle_momentum=False)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total steps is 3"):
            sched.step()
        with pytest.raises(ValueError, match="must support momentum or beta1"):
            s.OneCycleLR(make_opt(m, "Adagrad"), max_lr=0.1, total_steps=3)
        with pytest.raises(ValueError, match="You must define either total_steps OR"):
            s.OneCycleLR(opt, max_lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of"):
            s.OneCycleLR(opt, max_lr=0.1, total_steps=5, anneal_strategy="exp")
        with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
            s.OneCycleLR(opt, max_lr=[0.1], total_steps=5)


PLATEAU = [
    ({}, [1.0, 0.9, 0.9, 0.9] + [0.95] * 20),
    ({"patience": 2}, [5, 4, 4.5, 4.2, 4.1, 3, 3.5, 3.6, 3.7, 2.0, 2.0, 2.0, 2.0, 1.9999, 1.0] + [1.5] * 10),
    ({"patience": 1, "cooldown": 3, "factor": 0.5}, [3.0] * 25),
    ({"patience": 0, "min_lr": [0.01, 0.005], "factor": 0.2}, [1.0] * 25),
    ({"patience": 0, "min_lr": 0.019, "eps": 1e-3}, [1.0] * 10),
    ({"mode": "max", "patience": 1}, [1, 2, 2, 3, 3, 3, 2, 1, 4, 4, 4, 4]),
    ({"mode": "max", "threshold_mode": "abs", "threshold": 0.5, "patience": 1}, [1, 1.4, 1.8, 2.4, 2.5, 2.6, 3.5]),
    ({"threshold_mode": "abs", "threshold": 0.1, "patience": 2}, [1, 0.95, 0.92, 0.85, 0.84, 0.83, 0.82, 0.7]),
]


@pytest.mark.parametrize("kwargs,metrics", PLATEAU)
def test_reduce_lr_on_plateau_matches_torch(kwargs, metrics):
    results = []
    for m in (ember, torch):
        opt = make_opt(m)
        sched = m.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seq = []
        for metric in metrics:
            opt.step()
            sched.step(m.tensor(metric) if metric == 3 else metric)
            seq.append((record(opt), sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter, sched.best))
        results.append(seq)
    assert results[0] == results[1]


def test_reduce_lr_on_plateau_errors():
    for m in (ember, torch):
        s, opt = m.optim.lr_scheduler, make_opt(m)
        with pytest.raises(ValueError, match="Factor should be < 1.0"):
            s.ReduceLROnPlateau(opt, factor=1.0)
        with pytest.raises(ValueError, match="mode foo is unknown!"):
            s.ReduceLROnPlateau(opt, mode="foo")
        with pytest.raises(ValueError, match="threshold mode bar is unknown!"):
            s.ReduceLROnPlateau(opt, threshold_mode="bar")
        with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
            s.ReduceLROnPlateau(opt, min_lr=[0.1])
        with pytest.raises(TypeError, match="is not an Optimizer"):
            s.ReduceLROnPlateau(object())


def test_reduce_lr_on_plateau_state_dict():
    opt = make_opt(ember)
    sched = ember.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, mode="max")
    for v in [1, 2, 2]:
        sched.step(v)
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["best"] == 2 and sd["num_bad_epochs"] == 1
    other = ember.optim.lr_scheduler.ReduceLROnPlateau(make_opt(ember))
    other.load_state_dict(sd)
    assert other.mode == "max" and other.mode_worse == -math.inf and other.num_bad_epochs == 1


def test_warns_when_scheduler_steps_before_optimizer():
    for m in (ember, torch):
        opt = make_opt(m)
        sched = m.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
            sched.step()
        opt = make_opt(m)
        sched = m.optim.lr_scheduler.StepLR(opt, 2)
        opt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sched.step()
            sched.step()


def test_initial_lr_and_base_lrs():
    for m in (ember, torch):
        opt = make_opt(m)
        sched = m.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.02]
        assert sched.base_lrs == [0.1, 0.02] and sched.last_epoch == 0
        opt2 = make_opt(m)
        with pytest.raises(KeyError, match="initial_lr"):
            m.optim.lr_scheduler.StepLR(opt2, 3, last_epoch=4)
        with pytest.raises(TypeError, match="is not an Optimizer"):
            m.optim.lr_scheduler.StepLR(object(), 3)


def test_resume_with_last_epoch():
    """A scheduler rebuilt with last_epoch (initial_lr already in the groups) continues torch's sequence."""
    for key in ("CosineAnnealingLR", "StepLR-gamma", "ExponentialLR"):
        def make(s, o, key=key):
            first = SCHEDULERS[key](s, o)
            for _ in range(6):
                o.step()
                first.step()
            return type(first)(o, **{k: getattr(first, k) for k in _ARGS[key]}, last_epoch=first.last_epoch)
        check(make, steps=10)


_ARGS = {"CosineAnnealingLR": ["T_max"], "StepLR-gamma": ["step_size", "gamma"], "ExponentialLR": ["gamma"]}


@pytest.mark.parametrize("key", ["StepLR-gamma", "MultiStepLR", "LinearLR-args", "ConstantLR-args",
                                 "CosineAnnealingLR-eta", "ExponentialLR", "WarmRestarts-mult",
                                 "PolynomialLR-power"])
def test_step_with_epoch_uses_closed_form(key):
    results = []
    for m in (ember, torch):
        opt = make_opt(m)
        sched = SCHEDULERS[key](m.optim.lr_scheduler, opt)
        seq = []
        for epoch in [3, 7, 2, 11.5 if "Warm" in key else 11, 20]:
            opt.step()
            with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)` was not necessary") \
                    if "Warm" not in key else warnings.catch_warnings():
                sched.step(epoch)
            seq.append(sched.get_last_lr())
        results.append(seq)
    assert_same(*results)


@pytest.mark.parametrize("key", ["StepLR", "LambdaLR", "OneCycleLR-cos", "SequentialLR", "ChainedScheduler",
                                 "WarmRestarts-mult", "CyclicLR-triangular2", "PolynomialLR"])
def test_state_dict_round_trip(key):
    make = SCHEDULERS[key]
    full, _ = run(ember, make, steps=20, opt_kwargs={"momentum": 0.9})
    opt = make_opt(ember, momentum=0.9)
    sched = make(ember.optim.lr_scheduler, opt)
    for _ in range(8):
        opt.step()
        sched.step()
    saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
    assert "optimizer" not in saved_sched
    opt2 = make_opt(ember, momentum=0.9)
    sched2 = make(ember.optim.lr_scheduler, opt2)
    sched2.load_state_dict(saved_sched)
    opt2.load_state_dict(saved_opt)
    assert_same(flat(_steps_recorded(opt2, sched2, 12)), flat(full[9:]))


def _steps_recorded(opt, sched, steps: int) -> list:
    """``record(opt)`` after each of ``steps`` optimizer and scheduler steps."""
    seq = []
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append(record(opt))
    return seq


@pytest.mark.parametrize("key", sorted(SCHEDULERS))
def test_state_dict_keys_are_pytorchs(key):
    """Each scheduler's state_dict holds PyTorch's keys (ember's OneCycleLR held its own: _phases and
    anneal_strategy for PyTorch's _schedule_phases and _anneal_func_type)."""
    keys = []
    for m in (torch, ember):
        opt = make_opt(m, momentum=0.9)
        sched = SCHEDULERS[key](m.optim.lr_scheduler, opt)
        opt.step()
        sched.step()
        keys.append(sorted(sched.state_dict()))
    assert keys[1] == keys[0]


def test_one_cycle_loads_pytorchs_state_dict():
    """A OneCycleLR state saved by PyTorch (three phases, linear annealing) loaded into one built with other
    arguments follows the saved schedule, as PyTorch's own load does (ember kept its constructor's phases)."""
    seqs = []
    saved = None
    for m in (torch, ember):
        opt = make_opt(m, momentum=0.9)
        S = m.optim.lr_scheduler
        if saved is None:
            sched = S.OneCycleLR(opt, max_lr=0.5, total_steps=20, three_phase=True, anneal_strategy="linear")
            for _ in range(4):
                opt.step()
                sched.step()
            saved = sched.state_dict()
            opt = make_opt(m, momentum=0.9)
        sched = S.OneCycleLR(opt, max_lr=0.5, total_steps=20)
        sched.load_state_dict(saved)
        seqs.append(_steps_recorded(opt, sched, 12))
    assert_same(flat(seqs[1]), flat(seqs[0]))


def test_lambda_state_dict_keeps_callable_objects():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate**epoch

    opt = make_opt(ember)
    fn = Decay()
    sched = ember.optim.lr_scheduler.LambdaLR(opt, [fn, lambda e: 1.0])
    assert sched.state_dict()["lr_lambdas"] == [{"rate": 0.5}, None]
    fn2 = Decay()
    fn2.rate = 0.9
    other = ember.optim.lr_scheduler.LambdaLR(make_opt(ember), [fn2, lambda e: 1.0])
    other.load_state_dict(sched.state_dict())
    assert fn2.rate == 0.5


def test_constructor_errors_match_torch():
    cases = [
        (lambda s, o: s.LambdaLR(o, [lambda e: 1.0]), ValueError, "Expected 2 lr_lambdas, but got 1"),
        (lambda s, o: s.MultiplicativeLR(o, 0.9), TypeError, "lr_lambda should be a function, but got float"),
        (lambda s, o: s.ConstantLR(o, factor=1.5), ValueError, "Constant multiplicative factor expected"),
        (lambda s, o: s.LinearLR(o, start_factor=0), ValueError, "Starting multiplicative factor expected"),
        (lambda s, o: s.LinearLR(o, end_factor=2), ValueError, "Ending multiplicative factor expected"),
        (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0), ValueError, "Expected positive integer T_0"),
        (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError, "Expected integer T_mult"),
        (lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2)], milestones=[3]), ValueError,
         "expects number of schedulers provided to be one more"),
        (lambda s, o: s.SequentialLR(o, [], milestones=[]), ValueError, "expects at least one scheduler"),
        (lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.ReduceLROnPlateau(o)], milestones=[3]), ValueError,
         "does not support `ReduceLROnPlateau`"),
        (lambda s, o: s.ChainedScheduler([s.StepLR(o, 2), s.StepLR(make_opt(ember if s is
                                                                           ember.optim.lr_scheduler else torch), 2)]),
         ValueError, "expects all schedulers to belong to the same optimizer"),
        (lambda s, o: s.ChainedScheduler([]), ValueError, "expects at least one scheduler to be chained"),
    ]
    for make, exc, msg in cases:
        for m in (ember, torch):
            with pytest.raises(exc, match=msg):
                make(m.optim.lr_scheduler, make_opt(m))


def test_seed_example_pattern():
    """train_loop_full.py: Adam + StepLR(step_size=5, gamma=0.5), stepped once per epoch."""
    results = []
    for m in (ember, torch):
        p = m.tensor([1.0, -1.0], requires_grad=True)
        opt = m.optim.Adam([p], lr=0.001)
        sched = m.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
        seq = []
        for _ in range(12):
            opt.zero_grad()
            (p ** 2).sum().backward()
            opt.step()
            sched.step()
            seq.append((opt.param_groups[0]["lr"], p.detach().numpy().tolist()))
        results.append(seq)
    for (lr_e, p_e), (lr_t, p_t) in zip(*results):
        assert lr_e == pytest.approx(lr_t, rel=1e-12)
        assert p_e == pytest.approx(p_t, rel=1e-6)
