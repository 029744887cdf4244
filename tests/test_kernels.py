"""The kernel layer (ember/_kernels): one policy decides which kernel runs, numba loads on the first compiled
kernel (never at import), and the compiled kernels agree with the NumPy reference kernels."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT

from ember._kernels import KernelPolicy, policy
from ember.nn._ops import conv, resample, winograd


def _run(code: str, **env) -> str:
    base = {k: v for k, v in os.environ.items() if k != "EMBER_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code], env={**base, "PYTHONPATH": ROOT, **env}, capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.strip()


def test_import_ember_does_not_import_numba():
    assert _run("import sys, ember, ember.nn, ember.optim; print('numba' in sys.modules)") == "False"


@pytest.mark.parametrize("value, expected", [("", "True"), ("numpy", "False"), ("NumPy", "False"), ("numba", "True")])
def test_ember_kernels_env_sets_the_policy(value, expected):
    assert _run("from ember._kernels import policy; print(policy.compiled)", EMBER_KERNELS=value) == expected


def test_override_sets_and_restores_fields():
    before = (policy.winograd, policy.min_parallel_elements)
    with policy.override(winograd=False, min_parallel_elements=7) as p:
        assert p is policy and (policy.winograd, policy.min_parallel_elements) == (False, 7)
    assert (policy.winograd, policy.min_parallel_elements) == before
    with pytest.raises(RuntimeError), policy.override(winograd=False):
        raise RuntimeError  # restored on an exception too
    assert policy.winograd == before[0]
    with pytest.raises(TypeError, match="no field"), policy.override(winograd_threshold=3):
        pass


def test_defaults_are_the_shipped_settings():
    fresh = KernelPolicy(compiled=policy.compiled)
    assert fresh == policy  # no test (or conftest) left a lowered threshold behind
    assert (fresh.min_parallel_elements, fresh.min_elementwise_elements) == (1 << 16, 1 << 19)


@pytest.mark.parametrize("module", [conv, winograd, resample])
def test_no_module_level_switches_in_the_ops(module):
    """Paths are chosen by the policy, not by module globals a test flips."""
    switches = [n for n, v in vars(module).items() if n.isupper() or (n.startswith("_") and n[1:].isupper())
                if isinstance(v, (bool, int)) and not isinstance(v, type)]
    assert not switches
