"""ember._random_math's fused multiply-adds against exact rational arithmetic: ``fma32``/``fma64`` round
``a * b + c`` once, for arrays and for numbers alike, also where rounding the float64 sum again would not (the
float32 midpoints) and where the float64 error terms are needed."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ember._random_math import fma32, fma64


def exact32(a, b, c) -> np.float32:
    """The float32 nearest to the exact a * b + c, ties to even (by comparing exact distances to the neighbours)."""
    x = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    near = np.float32(float(x))
    best = near
    for cand in (np.nextafter(near, np.float32(-np.inf)), np.nextafter(near, np.float32(np.inf))):
        d_best, d_cand = abs(Fraction(float(best)) - x), abs(Fraction(float(cand)) - x)
        if d_cand < d_best or (d_cand == d_best and int(cand.view(np.uint32)) % 2 == 0):
            best = cand
    return best


def midpoint_cases():
    """(a, b, c) whose product lies exactly on a float32 midpoint, nudged off it by a tiny c of either sign:
    rounding the float64 sum (which keeps the midpoint) to float32 goes to the even side, the fused result to the
    side of c."""
    one = np.float32(1 + 2**-12)  # one * one = 1 + 2**-11 + 2**-24: a float32 midpoint, exact in float64
    three = np.float32(1 + 3 * 2**-12)  # 1 + 3 * 2**-11 + 9 * 2**-24: a midpoint above an odd float32
    tiny = np.float32(2**-80)
    return [(one, one, tiny), (one, one, -tiny), (three, three, tiny), (three, three, -tiny),
            (-one, one, -tiny), (-one, one, tiny), (one, one, np.float32(0))]


@pytest.mark.parametrize("case", range(7))
def test_fma32_rounds_once_for_numbers_and_arrays(case):
    a, b, c = midpoint_cases()[case]
    want = exact32(a, b, c)
    got_number = fma32(a, b, c)
    got_array = fma32(np.array([a, a]), np.array([b, b]), np.array([c, c]))
    assert isinstance(got_number, np.float32)
    assert got_number.view(np.uint32) == want.view(np.uint32)
    assert (got_array.view(np.uint32) == want.view(np.uint32)).all()


def test_fma32_random_midpoints_and_broadcasting():
    rng = np.random.default_rng(0)
    a = (1 + rng.integers(0, 2**12, 200) * 2.0**-12).astype(np.float32)  # 13-bit significands: exact products
    b = (1 + rng.integers(0, 2**11, 200) * 2.0**-11).astype(np.float32)
    c = (rng.choice([-1.0, 1.0], 200) * 2.0 ** rng.integers(-90, -60, 200)).astype(np.float32)
    got = fma32(a, b, c)
    want = np.array([exact32(*t) for t in zip(a, b, c)])
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
    row = fma32(a, np.float32(1.5), np.float32(2**-70))  # numbers broadcast against an array
    assert (row.view(np.uint32) == np.array([exact32(x, 1.5, 2**-70) for x in a]).view(np.uint32)).all()


def test_fma64_numbers_and_arrays():
    # a * b = 1 + 2**-26 + 2**-52 + 2**-78: rounding the product first loses the last term, the fused result does
    # not; with c = -1 the result is exact
    a = b = 1 + 2.0**-26 + 2.0**-52
    want = float(Fraction(a) * Fraction(b) - 1)
    assert float(fma64(a, b, -1.0)) == want
    assert (fma64(np.array([a, a]), np.array([b, b]), np.array([-1.0, -1.0])) == want).all()
    assert a * b - 1.0 != want  # the unfused expression does differ


def test_importing_ember_leaves_fractions_unimported():
    # fractions (and the decimal module it imports) serve only fma64's rare exact cases
    code = "import sys, ember; print(sorted({'fractions', 'decimal'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]"
