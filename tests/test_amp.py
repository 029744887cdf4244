"""ember.amp: GradScaler against torch's CPU GradScaler, step by step; autocast regions as torch reports them."""

import warnings

import numpy as np
import pytest
import torch

import ember


def make_pair(seed=0, lr=0.1):
    """The same two-layer model and SGD optimizer in torch and ember."""
    rng = np.random.default_rng(seed)
    w1, b1, w2 = rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((1, 4))
    models = []
    for lib in (torch, ember):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1, bias=False))
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(w1, dtype=lib.float32))
            m[0].bias.copy_(lib.tensor(b1, dtype=lib.float32))
            m[2].weight.copy_(lib.tensor(w2, dtype=lib.float32))
        models.append((m, lib.optim.SGD(m.parameters(), lr=lr)))
    return models


def params(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("kwargs", [
    dict(init_scale=2.0**16, growth_interval=2),
    dict(init_scale=3.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=1),
    dict(init_scale=1e38, growth_interval=1),  # growing past float32 range: PyTorch keeps the scale
    dict(init_scale=3e38, growth_interval=3),  # the scaled loss overflows: steps skipped until it backs off
])
def test_grad_scaler_matches_torch_over_steps(kwargs):
    (tm, topt), (em, eopt) = make_pair()
    tscaler, escaler = torch.amp.GradScaler("cpu", **kwargs), ember.amp.GradScaler("cpu", **kwargs)
    rng = np.random.default_rng(1)
    for step in range(6):
        x, y = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((5, 1)).astype(np.float32)
        if step == 3:
            x[0, 0] = np.inf  # a non-finite gradient: the step is skipped and the scale backs off
        for lib, m, opt, scaler in ((torch, tm, topt, tscaler), (ember, em, eopt, escaler)):
            opt.zero_grad()
            loss = ((m(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
            scaled = scaler.scale(loss)
            assert scaled.dtype == lib.float32
            scaled.backward()
            scaler.step(opt)
            scaler.update()
        for a, b in zip(params(tm), params(em)):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=f"step {step}")
        assert escaler.get_scale() == tscaler.get_scale(), step
        assert escaler.state_dict() == tscaler.state_dict(), step


def test_unscale_then_clip_then_step_matches_torch():
    (tm, topt), (em, eopt) = make_pair()
    grads = []
    for lib, m, opt in ((torch, tm, topt), (ember, em, eopt)):
        scaler = lib.amp.GradScaler("cpu", init_scale=1024.0)
        x = lib.ones(2, 3)
        scaler.scale(m(x).sum()).backward()
        scaler.unscale_(opt)
        grads.append([p.grad.numpy().copy() for p in m.parameters()])
        lib.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        scaler.step(opt)  # does not unscale again
        scaler.update()
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    for a, b in zip(params(tm), params(em)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("misuse,error", [
    ("unscale_twice", "unscale_() has already been called on this optimizer since the last update()."),
    ("step_twice", "step() has already been called since the last update()."),
    ("unscale_after_step", "unscale_() is being called after step()."),
    ("closure", "Closure use is not currently supported if GradScaler is enabled."),
])
def test_grad_scaler_misuse_raises_like_torch(misuse, error):
    for lib, (m, opt) in zip((torch, ember), make_pair()):
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(m(lib.ones(1, 3)).sum()).backward()
        with pytest.raises(RuntimeError) as info:
            if misuse == "unscale_twice":
                scaler.unscale_(opt)
                scaler.unscale_(opt)
            elif misuse == "step_twice":
                scaler.step(opt)
                scaler.step(opt)
            elif misuse == "unscale_after_step":
                scaler.step(opt)
                scaler.unscale_(opt)
            else:
                scaler.step(opt, closure=lambda: None)
        assert str(info.value) == error, lib.__name__


def test_grad_scaler_without_scale_or_gradients_asserts_like_torch():
    for lib, (_, opt) in zip((torch, ember), make_pair()):
        scaler = lib.amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
            scaler.step(opt)
        scaler.scale(lib.ones(1))  # scaled, but no parameter got a gradient
        with pytest.raises(AssertionError, match="No inf checks were recorded for this optimizer."):
            scaler.step(opt)
        with pytest.raises(AssertionError):
            lib.amp.GradScaler("cpu", growth_factor=1.0)
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
            scaler.scale(3.0)


def test_scale_keeps_containers_and_update_takes_a_new_scale():
    for lib in (torch, ember):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        out = scaler.scale([lib.ones(2), (lib.ones(1), lib.ones(1) * 2)])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[0].tolist() == [4.0, 4.0] and out[1][1].tolist() == [8.0]
        scaler.update(8.0)
        assert scaler.get_scale() == 8.0
        scaler.update(lib.tensor(0.5))
        assert scaler.get_scale() == 0.5


def test_grad_scaler_state_dict_round_trip_and_disabled_state():
    for lib in (torch, ember):
        a = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=7)
        b = lib.amp.GradScaler("cpu")
        b.load_state_dict(a.state_dict())
        assert b.state_dict() == a.state_dict() == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                                     "growth_interval": 7, "_growth_tracker": 0}
        with pytest.raises(RuntimeError, match="The source state dict is empty"):
            b.load_state_dict({})
        off = lib.amp.GradScaler("cpu", enabled=False)
        assert off.state_dict() == {} and off.get_scale() == 1.0 and not off.is_enabled()


@pytest.mark.parametrize("make", [
    lambda lib: lib.amp.GradScaler("cpu", enabled=False),
    lambda lib: lib.amp.GradScaler(),  # device "cuda" without a GPU: disabled
    lambda lib: lib.cuda.amp.GradScaler(),
    lambda lib: lib.GradScaler(),  # (torch.GradScaler, PyTorch's top-level name for torch.amp.GradScaler)
])
def test_disabled_grad_scaler_is_the_identity(make):
    (tm, topt), (em, eopt) = make_pair()
    for lib, m, opt in ((torch, tm, topt), (ember, em, eopt)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns that CUDA is missing and that cuda.amp is deprecated
            scaler = make(lib)
        loss = m(lib.ones(2, 3)).sum()
        assert scaler.scale(loss) is loss
        loss.backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    for a, b in zip(params(tm), params(em)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_the_top_level_grad_scaler_is_the_amp_one():
    for lib in (torch, ember):
        assert lib.GradScaler is lib.amp.GradScaler and "GradScaler" in lib.__all__
        scaler = lib.GradScaler("cpu", init_scale=4.0)
        assert scaler.is_enabled() and scaler.scale(lib.ones(1)).item() == 4.0


def test_cpu_amp_grad_scaler_scales():
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            scaler = lib.cpu.amp.GradScaler(init_scale=2.0)
        assert scaler.is_enabled() and scaler.scale(lib.ones(1)).item() == 2.0


# ------------------------------------------------------------------------------------------ autocast
def autocast_report(lib, make_region):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation and "CUDA is not available" warnings from torch
        region = make_region(lib)
        with region:
            inside = (lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"),
                      lib.is_autocast_enabled("cuda"))
    after = (lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"), lib.is_autocast_enabled("cuda"))
    return [str(v).replace("torch.", "").replace("ember.", "") for v in inside + after]


@pytest.mark.parametrize("make_region", [
    lambda lib: lib.autocast(device_type="cpu", dtype=lib.bfloat16),
    lambda lib: lib.autocast("cpu"),
    lambda lib: lib.amp.autocast("cpu", dtype=lib.float16),
    lambda lib: lib.autocast("cpu", enabled=False),
    lambda lib: lib.cpu.amp.autocast(),
    lambda lib: lib.autocast("cuda"),
    lambda lib: lib.cuda.amp.autocast(),
])
def test_autocast_regions_report_what_torch_reports(make_region):
    assert autocast_report(ember, make_region) == autocast_report(torch, make_region)


def test_autocast_unsupported_cpu_dtype_warns_and_disables_like_torch():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
            region = lib.autocast("cpu", dtype=lib.float64)
        with region:
            assert not lib.is_autocast_enabled("cpu")


def test_autocast_bad_device_type_raises_like_torch():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            lib.autocast("xyz")
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.autocast(lib.device("cpu"))


def test_autocast_as_decorator_and_nested_regions_restore_state():
    @ember.autocast("cpu")
    def f(x):
        assert ember.is_autocast_enabled("cpu")
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
        assert ember.is_autocast_enabled("cpu")
        return x @ x

    x = ember.ones(2, 2)
    y = f(x)
    assert not ember.is_autocast_enabled("cpu")
    assert y.dtype == ember.bfloat16  # matmul runs in the region's dtype, as PyTorch's CPU autocast
    assert y.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_custom_fwd_bwd_decorators_run_the_function_unchanged():
    for lib in (torch, ember):
        class Double(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu")
            def forward(ctx, x):
                return x * 2

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                return g * 2

        x = lib.ones(3, requires_grad=True)
        Double.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
