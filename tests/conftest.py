"""Shared test set-up: PyTorch is the oracle; ember is imported as itself."""

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Reference programs kept beside the repository (in CI, not in a user's clone). The tests that run them skip
# when the folder is absent; examples/ holds the project's own programs covering the same ground.
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
SEED_EXAMPLES = os.path.join(SHARED, "seed_examples")

sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))


def seed_example(name):
    """The path of reference program `name` in SEED_EXAMPLES; skips the calling test when it is absent."""
    path = os.path.join(SEED_EXAMPLES, name)
    if not os.path.exists(path):
        pytest.skip(f"{path} not found (only present beside a CI checkout); examples/ covers the same program")
    return path


def run_under_compat(source: str, folder, *args: str):
    """Write ``source`` to ``folder``/script.py and run it with ``python -m ember.compat`` (this checkout's ember),
    its arguments ``folder`` and ``args``; the CompletedProcess, its output as text."""
    import subprocess

    script = os.path.join(folder, "script.py")
    with open(script, "w") as f:
        f.write(source)
    return subprocess.run([sys.executable, "-m", "ember.compat", script, str(folder), *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": ROOT})


def pytest_report_header(config):
    if not os.path.isdir(SEED_EXAMPLES):
        return [f"{SEED_EXAMPLES} not found: the tests that run those reference programs will skip "
                "(examples/ and tests/test_examples.py cover the same programs)"]
    return []


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _environment_as_it_was():
    """The process environment restored after each test: what a test sets (init_process_group exports RANK and
    WORLD_SIZE, as a launcher would) must not reach the processes later tests start."""
    before = dict(os.environ)
    yield
    if os.environ != before:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(autouse=True)
def _training_loop_warnings_as_they_were():
    """ember's training-loop warnings (``ember.diagnostics``), switched on by a test, are switched back after it:
    left on, they would fire in later tests, whose programs were not written for them."""
    config = sys.modules.get("ember.diagnostics.config")
    before = dict(config.enabled) if config is not None else {}
    yield
    config = sys.modules.get("ember.diagnostics.config")
    if config is not None and config.enabled != {kind: before.get(kind, False) for kind in config.KINDS}:
        from ember.diagnostics import set_warnings

        set_warnings(False)
        on = [kind for kind, was_on in before.items() if was_on]
        if on:
            set_warnings(True, *on)


@pytest.fixture(autouse=True)
def _distribution_validation_as_it_was():
    """The distributions' default argument validation (PyTorch's and ember's) restored after each test. PyTorch
    switches its own off the first time anything in the process compiles (torch._dynamo's patch, which
    torch.compile and the eager flex_attention run): the oracle would then accept what it refuses alone."""
    classes = [sys.modules[name].distributions.Distribution for name in ("torch", "ember")
               if name in sys.modules and hasattr(sys.modules[name], "distributions")]
    before = [c._validate_args for c in classes]
    yield
    for c, was in zip(classes, before):
        if c._validate_args != was:
            c.set_default_validate_args(was)


@pytest.fixture
def threads(monkeypatch):
    """For a test that changes ember's thread count (``ember.set_num_threads``): restores it after, and splits
    elementwise and one-pass kernels (ReLU, BatchNorm, LayerNorm/RMSNorm, softmax, the embedding's gather) over
    threads from 64 Ki elements (512 Ki shipped) for the test's duration, so that its inputs, a few hundred Ki at
    most, take the threaded paths whose results must not depend on the count. The threshold decides only whether a kernel splits, never what it computes; every other test runs at the shipped
    settings. NumPy's OpenBLAS stays at its count meanwhile: ``set_num_threads`` sets it too, as PyTorch's sets
    its BLAS threads, and a GEMM OpenBLAS threads itself may differ by rounding between counts (as PyTorch's
    may), which is not what these tests compare."""
    import ember
    from ember._kernels import openblas, policy

    monkeypatch.setattr(policy, "min_elementwise_elements", policy.min_parallel_elements)
    monkeypatch.setattr(policy, "min_parallel_pass_elements", policy.min_parallel_elements)
    monkeypatch.setattr(openblas, "set_threads", lambda n: None)
    saved = ember.get_num_threads()
    yield
    ember.set_num_threads(saved)


@pytest.fixture
def two_blas_threads():
    """NumPy's OpenBLAS at two threads for the test (restored after); yields OpenBLAS's thread-count getter. Needs
    NumPy built with OpenBLAS (``ember._kernels.openblas.functions()`` not empty)."""
    from ember._kernels import openblas

    setter, getter = openblas.functions()
    before = getter()
    setter(2)
    yield getter
    setter(before)
