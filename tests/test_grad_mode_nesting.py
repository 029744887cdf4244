"""Grad mode's context managers and decorators nested, against PyTorch: ``set_grad_enabled`` used as a decorator
applies inside the function only (its immediate effect undone when it decorates), and grad mode turned on inside
``inference_mode`` is reported on (``is_grad_enabled``) while ops record nothing, as PyTorch's inference mode
excludes autograd."""

from __future__ import annotations

import pytest
import torch

import ember


def _decorated(m):
    seen = [m.is_grad_enabled()]

    @m.set_grad_enabled(False)
    def off(x):
        seen.append(m.is_grad_enabled())
        return x * 2

    seen.append(m.is_grad_enabled())  # (after decorating: the mode it was, not False)
    x = m.ones(2, requires_grad=True)
    y = off(x)
    seen += [y.requires_grad, m.is_grad_enabled(), (x * 2).requires_grad]
    with m.no_grad():

        @m.set_grad_enabled(True)
        def on(x):
            return x * 2

        seen += [m.is_grad_enabled(), on(x).requires_grad, m.is_grad_enabled()]
    return seen


def test_set_grad_enabled_as_decorator_as_pytorch():
    assert _decorated(ember) == _decorated(torch)


def _enable_grad_inside_inference(m, how):
    x = m.ones(2, requires_grad=True)
    seen = []
    with m.inference_mode():
        seen.append(m.is_grad_enabled())
        ctx = {"enable_grad": m.enable_grad, "set_grad_enabled(True)": lambda: m.set_grad_enabled(True)}[how]()
        with ctx:
            y = x * 2
            fresh = m.ones(2).requires_grad_()
            seen += [m.is_grad_enabled(), y.requires_grad, y.grad_fn is None, y.is_inference(),
                     fresh.requires_grad, (fresh * 2).requires_grad]
            with m.inference_mode():
                seen.append(m.is_grad_enabled())
            with m.inference_mode(False):
                z = x * 2
                seen += [m.is_grad_enabled(), z.requires_grad]
            seen.append(m.is_grad_enabled())
        seen.append(m.is_grad_enabled())
    seen += [m.is_grad_enabled(), (x * 2).requires_grad]
    return seen


@pytest.mark.parametrize("how", ["enable_grad", "set_grad_enabled(True)"])
def test_grad_mode_inside_inference_mode_as_pytorch(how):
    assert _enable_grad_inside_inference(ember, how) == _enable_grad_inside_inference(torch, how)


def test_enable_grad_decorator_inside_inference_mode_records_nothing():
    def run(m):
        @m.enable_grad()
        def double(x):
            return m.is_grad_enabled(), x * 2

        x = m.ones(2, requires_grad=True)
        with m.inference_mode():
            enabled, y = double(x)
        return enabled, y.requires_grad, m.is_grad_enabled()

    assert run(ember) == run(torch)


def _generator_steps(m, decorator):
    x = m.ones(2, requires_grad=True)
    seen = []

    @decorator(m)
    def steps(n):
        got = None
        for i in range(n):
            try:
                got = yield (x * i).requires_grad, m.is_grad_enabled(), got
            except KeyError:
                seen.append(("caught", m.is_grad_enabled()))
        return "done"

    gen = steps(3)
    seen.append(next(gen))
    seen.append(("between", m.is_grad_enabled(), (x * 2).requires_grad))
    seen.append(gen.send("sent"))
    seen.append(gen.throw(KeyError("k")))
    try:
        next(gen)
    except StopIteration as stop:
        seen.append(("returned", stop.value))
    closing = steps(2)
    next(closing)
    closing.close()
    seen.append(m.is_grad_enabled())
    return seen


DECORATORS = {
    "no_grad()": lambda m: m.no_grad(),
    "no_grad bare": lambda m: m.no_grad,
    "enable_grad() in no_grad": lambda m: m.enable_grad(),
    "inference_mode()": lambda m: m.inference_mode(),
    "set_grad_enabled(False)": lambda m: m.set_grad_enabled(False),
}


@pytest.mark.parametrize("name", list(DECORATORS))
def test_decorated_generator_runs_each_step_in_the_mode_as_pytorch(name):
    def run(m):
        if name.endswith("in no_grad"):
            with m.no_grad():
                return _generator_steps(m, DECORATORS[name])
        return _generator_steps(m, DECORATORS[name])

    assert run(ember) == run(torch)
