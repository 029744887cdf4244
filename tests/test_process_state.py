"""``import ember`` leaves the process as it found it, but for the settings docs/api.md lists under
"Process-wide settings"; ember's own ops still compute inf/nan silently, as PyTorch does."""

import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import ROOT

import ember
import ember.nn.functional as F
from ember import _parallel
from ember._kernels import policy

# What a process looks like from the outside: printed as JSON by a subprocess before and after `import ember`
# and a training step.
_SNAPSHOT = """
import json, os, signal, sys, threading, warnings
import numpy
def snapshot():
    return {"geterr": numpy.geterr(), "environ": dict(os.environ), "filters": [repr(f) for f in warnings.filters],
            "recursionlimit": sys.getrecursionlimit(), "excepthook": repr(sys.excepthook),
            "signals": {s.name: repr(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM)},
            "threads": sorted(t.name for t in threading.enumerate()), "printoptions": repr(numpy.get_printoptions())}
before = snapshot()
import ember, ember.nn as nn, ember.optim as optim
model = nn.Linear(3, 2)
opt = optim.SGD(model.parameters(), lr=0.1)
model(ember.randn(4, 3)).sum().backward()
opt.step()
print(json.dumps({"before": before, "after": snapshot()}))
"""


def _run(code: str, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("EMBER_", "OPENBLAS_THREAD_TIMEOUT"))}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _documented_switches() -> list[str]:
    with open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8") as f:
        section = f.read().split("\n# Process-wide settings\n", 1)[1].split("\n# ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|") and not line.startswith(("|---", "| setting"))]
    return [re.search(r"`(EMBER_\w+)=0`", row.split("|")[-2]).group(1) for row in rows]


def test_import_and_a_training_step_change_only_the_documented_settings():
    # The snapshot imports NumPy first, so the OpenBLAS setting is skipped (too late); glibc's malloc thresholds
    # are not visible from Python (the next test checks both): nothing else may differ.
    state = json.loads(_run(_SNAPSHOT))
    assert state["after"] == state["before"]
    assert state["after"]["geterr"] == {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}


def test_each_documented_setting_has_a_working_off_switch():
    assert _documented_switches() == ["EMBER_MALLOC_TUNING", "EMBER_BLAS_TUNING"]
    code = "import os, ember; print(ember._malloc.tuned, ember._backend.blas_tuned, os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"
    expected_on = "True True 4" if sys.platform.startswith("linux") else None
    if expected_on:
        assert _run(code).split() == expected_on.split()
    assert _run(code, EMBER_MALLOC_TUNING="0").split()[0] == "False"
    assert _run(code, EMBER_BLAS_TUNING="0").split()[1:] == ["False", "None"]


def test_users_numpy_still_warns_after_import():
    out = _run("import warnings, numpy, ember\n(ember.ones(2) / 0).sum()\n"
               "with warnings.catch_warnings(record=True) as w:\n"
               "    warnings.simplefilter('always')\n"
               "    numpy.ones(1) / 0\n"
               "print([str(x.category.__name__) for x in w])")
    assert out.strip() == "['RuntimeWarning']"


_zero, _one = ember.zeros(3), ember.ones(3)
SILENT = {  # each computes inf or nan (or an out-of-range cast) somewhere in ember: PyTorch is silent for all
    "div": lambda: ember.tensor([1.0]) / 0,
    "rdiv": lambda: 1 / _zero,
    "zero_by_zero": lambda: _zero / _zero,
    "log": lambda: ember.log(_zero),
    "log_negative": lambda: (-_one).log(),
    "sqrt_negative": lambda: (-_one).sqrt(),
    "pow_negative_exponent": lambda: _zero ** -1,
    "exp_overflow": lambda: (_one * 1000).exp(),
    "mul_overflow": lambda: ember.tensor([1e30]) * 1e30,
    "acos": lambda: (_one * 2).acos(),
    "atanh": lambda: _one.atanh(),
    "mean_of_empty": lambda: ember.zeros(0).mean(),
    "var_of_inf": lambda: ember.tensor([float("inf"), 0.0]).var(),  # (of one element PyTorch warns, as ember)
    "log_softmax_all_inf": lambda: ember.tensor([float("-inf"), float("-inf")]).log_softmax(0),
    "floor_divide_by_zero": lambda: _one // 0,
    "remainder_by_zero": lambda: _one % 0,
    "inplace_div": lambda: _one.clone().div_(0),
    "inplace_log": lambda: _zero.clone().log_(),
    "creation_overflow": lambda: ember.tensor([1e300]),
    "cast_overflow": lambda: ember.tensor([1e10]).half(),
    "cross_entropy_all_ignored": lambda: F.cross_entropy(ember.zeros(2, 3), ember.tensor([-100, -100])),
    "cosine_similarity_of_zeros": lambda: F.cosine_similarity(ember.zeros(2, 3), ember.zeros(2, 3)),
}


def _backward_through_inf():
    x = ember.tensor([0.0, -1.0, 1e30], requires_grad=True)
    (x.log() + x.sqrt() + 1 / x).sum().backward()


def _adam_step_with_zero_eps():
    p = ember.nn.Parameter(ember.ones(3))
    p.grad = ember.zeros(3)
    ember.optim.Adam([p], eps=0).step()  # 0 / (0 + 0)


SILENT.update(backward=_backward_through_inf, optimizer_step=_adam_step_with_zero_eps)


@pytest.mark.parametrize("name", list(SILENT))
def test_ember_computes_inf_and_nan_silently(name):
    with np.errstate(all="warn"), warnings.catch_warnings():
        warnings.simplefilter("error")
        SILENT[name]()
        with pytest.warns(RuntimeWarning):  # and the caller's own NumPy state is what it was
            np.ones(1) / 0


def test_kernel_threads_compute_silently(threads):
    ember.set_num_threads(2)
    x = ember.tensor(np.full((4096, 64), np.inf, dtype=np.float32))
    assert _parallel.chunks_for(4096, x.numel(), policy.min_elementwise_elements) == 2
    with np.errstate(all="warn"), warnings.catch_warnings():
        warnings.simplefilter("error")
        out = F.softmax(x, dim=1)  # inf - inf in every row, on both threads
    assert np.isnan(out.numpy()).all()
