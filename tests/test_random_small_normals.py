"""Normal draws below the compiled kernels' size: PyTorch's values and generator state, bit for bit, on both of
ember's paths (the NumPy transform with its fused multiply-adds' midpoint check made once, ``checked_once``; the
compiled one), around PyTorch's blocks of 16 and the compiled kernels' size; and when the compiled path is taken
(numba already loaded by ember's kernels, or the NumPy path's time budget spent), never importing numba for a few
small draws."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import ember
from ember._kernels.policy import policy
from ember._random_math import MidpointsLater, checked_once, fma32

SIZES = [1, 15, 16, 17, 100, 1000, 4096, 16383, 16384, 16385]
SEEDS = range(0, 400, 37)
ROOT = Path(__file__).resolve().parents[1]


def numpy_path():
    return policy.override(compiled=False)


def compiled_path():
    return policy.override(normal_numpy_budget_s=0.0)  # compiled from the first draw, at any size


PATHS = {"numpy": numpy_path, "compiled": compiled_path}


def _each_path(path):
    if path == "compiled" and not policy.use_compiled():
        pytest.skip("numba's compiled kernels are not available")
    return PATHS[path]()


def draws(n):
    def make(m):
        x = m.empty(n)
        w = m.empty(max(n // 4, 1), 4)
        t = m.empty(n, dtype=m.float64)
        return [m.randn(n), m.randn(n, dtype=m.float64), m.empty(n).normal_(0.5, 2.0),
                t.normal_(-1.25, 0.3), m.empty(n).normal_(0.0, 0.02),
                m.normal(m.linspace(-1, 1, n), m.linspace(0.1, 3, n)),
                m.normal(m.zeros(n, dtype=m.float64), 2.5),
                m.nn.init.normal_(x, 0.1, 0.7), m.nn.init.trunc_normal_(m.empty(n), 0.0, 1.0, -1.5, 2.0),
                m.nn.init.kaiming_normal_(w, mode="fan_in", nonlinearity="relu")]
    return make


def run(make, lib, seed):
    lib.manual_seed(seed)
    values = [v.detach().numpy().copy() for v in make(lib)]
    return values, bytes(lib.get_rng_state().numpy().tobytes())


@pytest.mark.parametrize("path", ["numpy", "compiled"])
@pytest.mark.parametrize("n", SIZES)
def test_values_and_state_are_pytorchs(n, path):
    with _each_path(path):
        for seed in SEEDS:
            got_values, got_state = run(draws(n), ember, seed)
            want_values, want_state = run(draws(n), torch, seed)
            for k, (g, w) in enumerate(zip(got_values, want_values, strict=True)):
                assert g.dtype == w.dtype and g.shape == w.shape, (seed, k)
                assert (g.view(np.uint8) == w.view(np.uint8)).all(), f"seed {seed}, draw {k}: values differ"
            assert got_state == want_state, f"seed {seed}: the generators' states differ after the draws"


@pytest.mark.parametrize("path", ["numpy", "compiled"])
def test_into_a_tensor_and_after_a_scalar_draw(path):
    # a draw of fewer than 16 values caches the second of its last pair in the generator, which a later small draw
    # takes first; the blocks of 16 neither read nor change that cache
    def make(m):
        a = m.randn(3)
        b = m.randn(100)
        c = m.randn(5)
        x = m.empty(37)
        m.randn(37, out=x)
        return [a, b, c, x, m.empty(2, 3, 7).normal_(1.0, 3.0)]

    with _each_path(path):
        for seed in (0, 1, 12345):
            got, want = run(make, ember, seed), run(make, torch, seed)
            for g, w in zip(got[0], want[0], strict=True):
                np.testing.assert_array_equal(g, w)
            assert got[1] == want[1]


def midpoint_operands():
    """(a, b, c) float32 arrays whose float64 sums a * b + c include inexact ones on a float32 midpoint (13- and
    12-bit significands make the product exact with 25 bits, the tiny c moves it off the midpoint), exact ones on a
    midpoint (c = 0) and ordinary ones."""
    rng = np.random.default_rng(1)
    a = (1 + rng.integers(0, 2**12, 300) * 2.0**-12).astype(np.float32)
    b = (1 + rng.integers(0, 2**11, 300) * 2.0**-11).astype(np.float32)
    c = (rng.choice([-1.0, 1.0], 300) * 2.0 ** rng.integers(-90, -60, 300)).astype(np.float32)
    c[::3] = 0
    c[1::7] = rng.standard_normal(c[1::7].size)
    return a, b, c


def test_checked_once_rounds_as_fma32_at_every_step():
    a, b, c = midpoint_operands()

    def steps(a, b, c, fma):  # three dependent fused steps, each with its own midpoints
        x = fma(a, b, c)
        y = fma(b, a, -c)
        return fma(x, np.float32(1), y * np.float32(2.0**-30)), y

    got = checked_once(steps, a, b, c, fmas=3)
    want = steps(a, b, c, fma32)
    for g, w in zip(got, want, strict=True):
        assert (g.view(np.uint32) == w.view(np.uint32)).all()
    unchecked = MidpointsLater(a.shape, 3)
    plain = steps(a, b, c, unchecked)  # the once-rounded float64 sums alone do differ: the check is needed
    assert (plain[0].view(np.uint32) != want[0].view(np.uint32)).any()


def test_only_inexact_midpoints_are_doubtful():
    a, b, c = midpoint_operands()
    fma = MidpointsLater(a.shape, 1)
    fma(a, b, c)
    products = a.astype(np.float64) * b
    on_midpoint = ((products + c).view(np.uint64) & np.uint64((1 << 29) - 1)) == np.uint64(1 << 28)
    exact = np.array([float(np.float64(p) + np.float64(z)) - p == z for p, z in zip(products, c)])
    assert (on_midpoint & exact).any() and (on_midpoint & ~exact).any()  # both kinds among the operands
    np.testing.assert_array_equal(fma.doubtful(), on_midpoint & ~exact)


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_few_small_draws_import_no_numba():
    code = ("import sys, ember\n"
            "ember.manual_seed(0)\n"
            "for n in (1, 15, 16, 100, 1000, 4096): ember.randn(n); ember.empty(n).normal_(0.5, 2.0)\n"
            "print('numba' in sys.modules, 'ember._kernels.random' in sys.modules)")
    assert _fresh(code) == "False False"


def test_compiled_once_embers_kernels_have_loaded_numba():
    # loaded by a compiled kernel (use_compiled() is what each one asks first): the small draw's transform is
    # compiled, the NumPy path's clock never started; a bare `import numba` of the program's leaves its compiler
    # target uninitialised (0.5 s more), so small draws stay on the NumPy path
    code = ("import sys, ember\n"
            "from ember._kernels.policy import policy\n"
            "from ember import _random_normals\n"
            "assert policy.use_compiled()\n"
            "ember.randn(100); ember.empty(37).normal_(0.5, 2.0)\n"
            "print(_random_normals._numpy_seconds == 0.0, 'ember._kernels.random' in sys.modules)")
    assert _fresh(code) == "True True"
    code = ("import sys, numba, ember\n"
            "from ember import _random_normals\n"
            "ember.randn(100)\n"
            "print(_random_normals._numpy_seconds > 0.0, 'ember._kernels.random' in sys.modules)")
    assert _fresh(code) == "True False"


def test_compiled_once_the_numpy_paths_budget_is_spent():
    # a budget of 2 ms: the first draws take the NumPy path (numba not imported), later ones the compiled one
    code = ("import sys, ember\n"
            "from ember._kernels.policy import policy\n"
            "from ember import _random_normals\n"
            "policy.normal_numpy_budget_s = 0.002\n"
            "ember.randn(100)\n"
            "first = 'numba' in sys.modules\n"
            "draws = 1\n"
            "while 'ember._kernels.random' not in sys.modules and draws < 10000:\n"
            "    ember.randn(100)\n"
            "    draws += 1\n"
            "print(first, 'ember._kernels.random' in sys.modules, _random_normals._numpy_seconds >= 0.002)")
    assert _fresh(code) == "False True True"
