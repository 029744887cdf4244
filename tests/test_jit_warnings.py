"""torch.jit's TorchScript entry points warn as PyTorch 2.13's do: a DeprecationWarning with PyTorch's message,
naming PyTorch's jit module as the one that issues it, so it is hidden by default and the filters programs write
for PyTorch's warnings (module="torch") silence it; as PyTorch's names its own file, ember's names ember's."""

import io
import warnings

import pytest
import torch

import ember


def add_one(x):
    return x + 1


class EmberDouble(ember.nn.Module):
    def forward(self, x):
        return x * 2


class TorchDouble(torch.nn.Module):
    def forward(self, x):
        return x * 2


def _model(lib):
    return EmberDouble() if lib is ember else TorchDouble()  # (top-level classes: jit.load imports them again)


CALLS = {
    "script_function": lambda lib: lib.jit.script(add_one),
    "script_module": lambda lib: lib.jit.script(_model(lib)),
    "trace_function": lambda lib: lib.jit.trace(add_one, lib.ones(2)),
    "trace_module": lambda lib: lib.jit.trace(_model(lib), lib.ones(2)),
    "freeze": lambda lib: lib.jit.freeze(lib.jit.script(_model(lib).eval())),
    "optimize_for_inference": lambda lib: lib.jit.optimize_for_inference(lib.jit.script(_model(lib).eval())),
    "save_load": lambda lib: _save_load(lib),
}


def _save_load(lib):
    buffer = io.BytesIO()
    lib.jit.save(lib.jit.script(_model(lib)), buffer)
    buffer.seek(0)
    return lib.jit.load(buffer)


def _warned(lib, call, setup):
    with warnings.catch_warnings(record=True) as seen:
        setup()
        call(lib)
    return seen


@pytest.mark.parametrize("name", list(CALLS))
def test_jit_deprecation_warnings_as_pytorch(name):
    got = {}
    for lib in (ember, torch):
        seen = _warned(lib, CALLS[name], lambda: warnings.simplefilter("always"))
        got[lib] = {(w.category, str(w.message)) for w in seen}
        assert {w.category for w in seen} == {DeprecationWarning}
        if lib is ember:  # (PyTorch's names its own file, jit/_script.py: ember's, its own jit.py)
            assert all(w.filename == ember.jit.__file__ for w in seen)
    assert got[ember] == got[torch]


@pytest.mark.parametrize("name", list(CALLS))
def test_jit_deprecation_warnings_are_hidden_by_default_and_by_filters_for_torch(name):
    def python_defaults():
        warnings.resetwarnings()
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        warnings.filterwarnings("ignore", category=DeprecationWarning)

    def module_filter():
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module="torch")

    def message_filter():
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="`torch.jit.", category=DeprecationWarning)

    for lib in (ember, torch):
        for setup in (python_defaults, module_filter, message_filter):
            assert not _warned(lib, CALLS[name], setup), (lib.__name__, setup.__name__)


def test_meshgrid_warning_is_silenced_by_a_filter_for_torch():
    code = ("import warnings, sys\n"
            "warnings.simplefilter('error')\n"
            "warnings.filterwarnings('ignore', module='torch')\n"
            "import {lib}\n"
            "{lib}.meshgrid({lib}.ones(2), {lib}.ones(3))\n")
    import subprocess
    import sys

    for lib in ("torch", "ember"):
        out = subprocess.run([sys.executable, "-c", code.replace("{lib}", lib)], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
