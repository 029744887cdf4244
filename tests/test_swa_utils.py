"""ember.optim.swa_utils against torch.optim.swa_utils: averaged weights and buffers, update_bn's statistics and
SWALR's lr sequence, from the same starting numbers."""

import numpy as np
import pytest
import torch

import ember


def make_model(m, weights=None):
    model = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.Tanh(), m.nn.Linear(4, 2))
    if weights is not None:
        model.load_state_dict({k: m.from_numpy(v.copy()) for k, v in weights.items()})
    return model


def trajectory(m, averaged_kwargs, steps=4, use_buffers=False):
    """Perturb a model ``steps`` times, folding it into an AveragedModel each time; return the average's state."""
    gen = np.random.default_rng(0)
    torch.manual_seed(0)
    weights = {k: v.detach().numpy() for k, v in make_model(torch).state_dict().items()}
    model = make_model(m, weights)
    kwargs = {k: v(m) for k, v in averaged_kwargs.items()}
    averaged = m.optim.swa_utils.AveragedModel(model, use_buffers=use_buffers, **kwargs)
    for _ in range(steps):
        with m.no_grad():
            for p in model.parameters():
                p.add_(m.from_numpy(gen.standard_normal(tuple(p.shape)).astype(np.float32)))
        model.train()
        model(m.from_numpy(gen.standard_normal((8, 3)).astype(np.float32)))  # moves the running stats
        averaged.update_parameters(model)
    return {k: v.detach().numpy() for k, v in averaged.state_dict().items()}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema", "swa_fn"])
def test_averaged_model_matches_torch(kind, use_buffers):
    kwargs = {"swa": {},
              "ema_multi": {"multi_avg_fn": lambda m: m.optim.swa_utils.get_ema_multi_avg_fn(0.8)},
              "ema": {"avg_fn": lambda m: m.optim.swa_utils.get_ema_avg_fn(0.8)},
              "swa_fn": {"avg_fn": lambda m: m.optim.swa_utils.get_swa_avg_fn()}}[kind]
    expected = trajectory(torch, kwargs, use_buffers=use_buffers)
    got = trajectory(ember, kwargs, use_buffers=use_buffers)
    assert sorted(got) == sorted(expected)
    for k in expected:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-6, atol=1e-6, err_msg=k)
    assert got["n_averaged"] == 4 and got["n_averaged"].dtype == np.int64


def test_ema_average_is_not_a_plain_mean():
    """A wrong update (a running mean where an EMA was asked for) would match the "swa" case instead."""
    swa = trajectory(ember, {})
    ema = trajectory(ember, {"multi_avg_fn": lambda m: m.optim.swa_utils.get_ema_multi_avg_fn(0.8)})
    assert not np.allclose(swa["module.0.weight"], ema["module.0.weight"])


def test_averaged_model_forward_and_argument_errors():
    model = ember.nn.Linear(2, 2)
    averaged = ember.optim.swa_utils.AveragedModel(model)
    x = ember.ones(1, 2)
    np.testing.assert_array_equal(averaged(x).detach().numpy(), model(x).detach().numpy())
    assert averaged.module is not model
    swa = ember.optim.swa_utils
    with pytest.raises(AssertionError):
        swa.AveragedModel(model, avg_fn=swa.get_swa_avg_fn(), multi_avg_fn=swa.get_swa_multi_avg_fn())
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError):
            swa.get_ema_avg_fn(bad)
        with pytest.raises(ValueError):
            swa.get_ema_multi_avg_fn(bad)


def bn_statistics(m, weights, batches):
    model = make_model(m, weights)
    model.eval()
    loader = [(m.from_numpy(b), m.zeros(len(b))) for b in batches]
    m.optim.swa_utils.update_bn(loader, model)
    bn = model[1]
    return bn.running_mean.numpy(), bn.running_var.numpy(), int(bn.num_batches_tracked), bn.momentum, model.training


def test_update_bn_matches_torch():
    gen = np.random.default_rng(1)
    weights = {k: v.detach().numpy() for k, v in make_model(torch).state_dict().items()}
    batches = [gen.standard_normal((n, 3)).astype(np.float32) for n in (5, 7, 6)]
    expected, got = bn_statistics(torch, weights, batches), bn_statistics(ember, weights, batches)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-6)
    assert got[2:] == expected[2:] == (3, 0.1, False)


def test_update_bn_leaves_instance_norm_alone():
    for m in (torch, ember):
        norm = m.nn.InstanceNorm1d(2, track_running_stats=True)
        norm.running_mean.fill_(3.0)
        m.optim.swa_utils.update_bn([m.ones(1, 2, 4)], norm)
        assert float(norm.running_mean[0]) == 3.0


@pytest.mark.parametrize("anneal_epochs,strategy", [(5, "cos"), (3, "linear"), (0, "cos")])
def test_swalr_matches_torch(anneal_epochs, strategy):
    def lrs(m):
        groups = [{"params": [m.zeros(2, requires_grad=True)], "lr": 0.1},
                  {"params": [m.zeros(3, requires_grad=True)], "lr": 0.02}]
        opt = m.optim.SGD(groups)
        sched = m.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                                        anneal_strategy=strategy)
        seq = [sched.get_last_lr()]
        for _ in range(8):
            for group in groups:
                group["params"][0].grad = m.zeros_like(group["params"][0])  # a step that changes nothing
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
        return seq

    np.testing.assert_allclose(lrs(ember), lrs(torch), rtol=1e-12)


def test_swalr_argument_errors():
    for m in (torch, ember):
        opt = m.optim.SGD([m.zeros(2, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError):
            m.optim.swa_utils.SWALR(opt, 0.01, anneal_strategy="exp")
        with pytest.raises(ValueError):
            m.optim.swa_utils.SWALR(opt, 0.01, anneal_epochs=-1)
        with pytest.raises(ValueError):
            m.optim.swa_utils.SWALR(opt, [0.01, 0.02])
