"""The legacy ``functorch`` package (``import functorch`` under ``python -m ember.compat``) against PyTorch's, which
PyTorch 2.13 still ships: ``make_functional``, ``make_functional_with_buffers``, ``combine_state_for_ensemble``
with its transforms (``vmap``, ``grad``, ``jacrev``, ...), values and gradients on the same weights, PyTorch's
deprecation FutureWarnings word for word and its errors."""

import subprocess
import sys
import warnings

import functorch
import numpy as np
import pytest
import torch

import ember
from ember._functorch import legacy_package as efunctorch


def _mlp(lib, seed=0, norm=False):
    gen = np.random.default_rng(seed)
    layers = [lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 3)]
    if norm:
        layers.insert(1, lib.nn.BatchNorm1d(5))
    model = lib.nn.Sequential(*layers).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(gen.standard_normal(tuple(p.shape))))
    return model


def _both(fn):
    """``fn(lib, functorch module)`` for PyTorch and ember, with the warnings each raised."""
    out = {}
    for lib, ft in ((torch, functorch), (ember, efunctorch)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = fn(lib, ft)
        out[lib.__name__] = (result, [(w.category, str(w.message)) for w in caught])
    return out["torch"], out["ember"]


def _np(t):
    return t.detach().numpy()


def test_make_functional_values_gradients_and_warnings():
    def run(lib, ft):
        model = _mlp(lib)
        fmodel, params = ft.make_functional(model)
        x = lib.tensor(np.linspace(-1, 1, 8).reshape(2, 4))
        loss = lambda ps, x: fmodel(ps, x).pow(2).sum()  # noqa: E731
        grads = ft.grad(loss)(params, x)
        per_example = ft.vmap(ft.grad(loss), (None, 0))(params, x)
        jac = ft.jacrev(fmodel, argnums=1)(params, x[0])
        fmodel(params, x).sum().backward()  # params are leaves of autograd too
        return ([_np(fmodel(params, x))], [p.requires_grad for p in params], [_np(g) for g in grads],
                [_np(g) for g in per_example], _np(jac), [_np(p.grad) for p in params],
                [p.requires_grad for p in model.parameters()], [p.grad is None for p in model.parameters()])

    (want, want_warnings), (got, got_warnings) = _both(run)
    assert got_warnings == want_warnings and len(want_warnings) == 5
    for g, w in zip(got, want):
        if isinstance(w, list) and w and isinstance(w[0], np.ndarray):
            for a, b in zip(g, w):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        elif isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        else:
            assert g == w


def test_disable_autograd_tracking_and_the_buffers_error():
    def run(lib, ft):
        _, params = ft.make_functional(_mlp(lib), disable_autograd_tracking=True)
        with pytest.raises(RuntimeError) as err:
            ft.make_functional(_mlp(lib, norm=True))
        return [p.requires_grad for p in params], str(err.value)

    (want, _), (got, _) = _both(run)
    assert got == want


def test_make_functional_with_buffers_runs_batch_norm_on_the_buffers_given():
    def run(lib, ft):
        model = _mlp(lib, norm=True).eval()
        fmodel, params, buffers = ft.make_functional_with_buffers(model)
        buffers = tuple(b + 0.5 if b.is_floating_point() else b for b in buffers)
        x = lib.tensor(np.linspace(-2, 2, 12).reshape(3, 4))
        return _np(fmodel(params, buffers, x)), len(params), len(buffers), list(fmodel.param_names)

    (want, _), (got, _) = _both(run)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    assert got[1:] == want[1:]


def test_combine_state_for_ensemble_with_vmap_and_its_errors():
    def run(lib, ft):
        models = [_mlp(lib, seed) for seed in range(3)]
        fmodel, params, buffers = ft.combine_state_for_ensemble(models)
        x = lib.tensor(np.linspace(-1, 1, 8).reshape(2, 4))
        out = ft.vmap(fmodel, (0, 0, None))(params, buffers, x)
        errors = []
        for bad in ([], [models[0], lib.nn.Linear(4, 3)], [models[0], _mlp(lib).eval()]):
            with pytest.raises(RuntimeError) as err:
                ft.combine_state_for_ensemble(bad)
            errors.append(str(err.value))
        return _np(out), [tuple(p.shape) for p in params], [p.requires_grad for p in params], errors

    (want, want_warnings), (got, got_warnings) = _both(run)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    assert got[1:] == want[1:]
    assert got_warnings == want_warnings


def test_import_functorch_under_the_compat_runner():
    code = ("import warnings, functorch, torch; warnings.simplefilter('error'); "
            "from functorch import make_functional, vmap, grad, jacrev, combine_state_for_ensemble; "
            "print(functorch.__version__ == torch.__version__, functorch.vmap is vmap)")
    done = subprocess.run([sys.executable, "-m", "ember.compat", "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
