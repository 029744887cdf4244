"""``import ember`` stays light (docs/benchmarks.md: at most 0.2 s), held structurally rather than by timing: what it
does not load, each deferred piece loading and working on first use, and no wrapper signature built at import.

Each check runs in a fresh interpreter, since this one has long loaded everything."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT
from oracle import assert_close

import ember
import ember.fft
import ember.linalg
import ember.nn.functional as F
import ember.special
from ember._signatures import parameter_kinds

# Subpackages a program reaches as ember.X (torch.X) that load on first use, as PyTorch's and NumPy's lazy ones do.
LAZY_SUBPACKAGES = ("nn", "optim", "utils", "distributed", "distributions", "fft", "linalg", "special", "sparse",
                    "func", "profiler", "hub", "onnx", "jit", "testing", "serialization", "amp", "backends", "cuda",
                    "fx", "library", "multiprocessing", "futures", "compiler", "accelerator", "cpu", "diagnostics",
                    "vision", "_dynamo", "_inductor", "_functorch")
# What ember's own modules would otherwise load at import, and load only where they are used.
LAZY_MODULES = (
    "ember.compat",            # the torch-alias runner (python -m ember.compat)
    "ember.nn.utils",          # clip_grad_norm_, parametrizations, rnn packing
    "ember.utils.tensorboard",
    "ember._torch_names",      # the table of PyTorch's names, read when a name is missing
    "numpy.random",            # the generators' mt19937: made on their first draw or state read (~12 ms)
    "numba",                   # the compiled kernels' compiler: on the first compiled kernel (0.1-0.2 s)
    "tempfile",                # shared memory's fallback where memfd_create is missing
    "logging",                 # numba's compiler logs, quieted once numba loads
)


def _fresh(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "", out.stderr  # no warning either
    return out.stdout


def test_import_loads_none_of_the_lazy_pieces():
    loaded = set(json.loads(_fresh("import json, sys, ember; print(json.dumps(sorted(sys.modules)))")))
    early = sorted({f"ember.{name}" for name in LAZY_SUBPACKAGES} & loaded) + sorted(set(LAZY_MODULES) & loaded)
    assert early == [], f"loaded by `import ember`: {early}"


def test_each_lazy_subpackage_loads_on_first_touch_as_itself():
    # ember.X, `from ember import X` and `import ember.X` give the one module, loaded by that touch and not before
    out = _fresh(
        "import importlib, json, sys, ember\n"
        f"names = {LAZY_SUBPACKAGES!r}\n"
        "result = {}\n"
        "for i, name in enumerate(names):\n"
        "    before = f'ember.{name}' in sys.modules\n"
        "    if i % 3 == 0:\n"
        "        module = getattr(ember, name)\n"
        "    elif i % 3 == 1:\n"
        "        module = importlib.import_module(f'ember.{name}')\n"
        "    else:\n"
        "        exec(f'from ember import {name} as module', globals())\n"
        "    result[name] = [before, module is sys.modules[f'ember.{name}'], getattr(ember, name) is module]\n"
        "print(json.dumps(result))")
    result = json.loads(out)
    # (a subpackage may load one touched before it: utils loads with nn; none loads with `import ember`)
    assert {name: r[1:] for name, r in result.items()} == {name: [True, True] for name in LAZY_SUBPACKAGES}
    assert result["nn"][0] is False and result["distributions"][0] is False and result["fft"][0] is False


def test_the_lazy_subpackages_work_after_a_fresh_import():
    out = _fresh(
        "import json, ember\n"
        "ember.manual_seed(0)\n"
        "x = ember.arange(8, dtype=ember.float32).reshape(2, 4)\n"
        "model = ember.nn.Linear(4, 3)\n"
        "opt = ember.optim.SGD(model.parameters(), lr=0.1)\n"
        "model(x).sum().backward()\n"
        "opt.step()\n"
        "print(json.dumps({'fft': ember.fft.rfft(x).abs().tolist(), 'norm': ember.linalg.norm(x).item(),\n"
        "                  'erf': ember.special.erf(x / 8).tolist(),\n"
        "                  'logp': ember.distributions.Normal(0.0, 2.0).log_prob(x).tolist(),\n"
        "                  'stepped': model.weight.grad.shape == (3, 4)}))")
    got = json.loads(out)
    t = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    assert_close(np.array(got["fft"], np.float32), torch.fft.rfft(t).abs())
    assert abs(got["norm"] - torch.linalg.norm(t).item()) < 1e-5
    assert_close(np.array(got["erf"], np.float32), torch.special.erf(t / 8))
    assert_close(np.array(got["logp"], np.float32), torch.distributions.Normal(0.0, 2.0).log_prob(t))
    assert got["stepped"] is True


def test_the_global_generator_made_on_first_use_is_pytorchs_fresh_one():
    # ember's global generator starts from PyTorch's default seed; its mt19937 is made on the first draw or state
    # read, as a new torch.Generator stands before it is used.
    out = _fresh(
        "import json, pickle, sys, ember\n"
        "g = ember.Generator()\n"
        "random_before = 'numpy.random' in sys.modules\n"
        "copy = pickle.loads(pickle.dumps(g))\n"  # a generator pickled before its first draw
        "state = ember.random.default_generator.get_state()\n"
        "print(json.dumps({'random_before': random_before, 'randn': ember.randn(5).tolist(),\n"
        "                  'state': state.tolist(), 'g': ember.rand(3, generator=g).tolist(),\n"
        "                  'copy': ember.rand(3, generator=copy).tolist(), 'seed': ember.initial_seed()}))")
    got = json.loads(out)
    fresh = torch.Generator()
    assert got["random_before"] is False
    assert got["seed"] == fresh.initial_seed()
    assert got["state"] == fresh.get_state().tolist()
    assert_close(np.array(got["randn"], np.float32), torch.randn(5, generator=torch.Generator()), atol=0, rtol=0)
    expected = torch.rand(3, generator=torch.Generator())
    assert_close(np.array(got["g"], np.float32), expected, atol=0, rtol=0)
    assert_close(np.array(got["copy"], np.float32), expected, atol=0, rtol=0)


def test_seeding_before_the_first_draw_is_seeding_after_it():
    g, h = ember.Generator(), ember.Generator()
    h.get_state()  # h's mt19937 made, g's not yet
    g.manual_seed(1234)
    h.manual_seed(1234)
    assert g.get_state().tolist() == h.get_state().tolist()
    assert ember.randn(4, generator=g).tolist() == ember.randn(4, generator=h).tolist()


def test_no_wrapper_signature_is_made_at_import():
    # The wrappers' signatures (keyword names, out=, layout=, in-place spellings) are made when first read.
    out = _fresh("import gc, ember, ember._signatures as s\n"
                 "lazy = [o for o in gc.get_objects() if isinstance(o, s._OnFirstRead)]\n"
                 "print(len(lazy), sum(o._made is not None for o in lazy))")
    count, made = map(int, out.split())
    assert count > 300 and made == 0


def _public_callables():
    for prefix, module in (("", ember), ("linalg.", ember.linalg), ("special.", ember.special), ("fft.", ember.fft),
                           ("nn.functional.", F)):
        for name, fn in sorted(vars(module).items()):
            if not name.startswith("_") and callable(fn) and not isinstance(fn, type):
                yield prefix + name, fn
    for name in dir(ember.Tensor):
        method = inspect.getattr_static(ember.Tensor, name)
        if inspect.isfunction(method):
            yield f"Tensor.{name}", method


def test_parameter_kinds_are_the_signatures():
    # Read from code objects at import: the names and kinds inspect.signature gives, for every public function
    # and method (kinds first, so that no signature was made before).
    checked = 0
    for name, fn in _public_callables():
        try:
            kinds = parameter_kinds(fn)
        except (TypeError, ValueError):
            with pytest.raises((TypeError, ValueError)):
                inspect.signature(fn)
            continue
        assert kinds == {p.name: p.kind for p in inspect.signature(fn).parameters.values()}, name
        checked += 1
    assert checked > 1000


def test_a_lazy_signature_is_a_signature():
    sig = inspect.signature(ember.add)  # keyword names and out=: a signature made on first read
    plain = inspect.Signature(list(sig.parameters.values()))
    assert isinstance(sig, inspect.Signature)
    assert sig == plain and hash(sig) == hash(plain) and str(sig) == str(plain) and repr(sig) == repr(plain)
    assert str(sig) == "(a, b, *number_first, alpha=1, input=None, other=None, out=None)"
    assert sig.bind(1, 2, alpha=3).arguments == {"a": 1, "b": 2, "alpha": 3}
    assert sig.replace(return_annotation=int) == plain.replace(return_annotation=int)
    import copy
    import pickle

    assert pickle.loads(pickle.dumps(sig)) == plain and copy.deepcopy(sig) == plain
