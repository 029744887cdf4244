"""A Python-number exponent that a half-precision or integer base's dtype cannot hold: PyTorch converts it to that
dtype first and refuses ("value cannot be converted to type ... without overflow"); float32/float64 bases take it as a
double, a float exponent promotes an integer base, and a tensor exponent is no number to convert. Each call's error
or values (and dtype) against PyTorch's, in the function, operator, method and in-place forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

EXPONENTS = [2, -1, 300, -300, 70000, 2**31, 2**63 - 1, 0.5, 2.0, 1e5, -1e5, 65504.0, 65520.0, 3e38, 1e39, True]
BASES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64"]
FORMS = {
    "pow": lambda m, x, e: m.pow(x, e),
    "**": lambda m, x, e: x ** e,
    "method": lambda m, x, e: x.pow(e),
    "in place": lambda m, x, e: x.clone().pow_(e),
    "0-d tensor exponent": lambda m, x, e: m.pow(x, m.tensor(e)),
}


def _outcome(m, base: str, exponent, form: str):
    x = m.tensor([1, 2, 3], dtype=getattr(m, base))
    try:
        with np.errstate(all="ignore"):
            out = FORMS[form](m, x, exponent)
    except Exception as err:  # noqa: BLE001 - the error is the outcome compared
        return type(err), str(err)
    return str(out.dtype).split(".")[-1], out.double().numpy().tolist()


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("exponent", EXPONENTS, ids=repr)
@pytest.mark.parametrize("base", BASES)
def test_a_number_exponent_past_the_bases_dtype_as_pytorch(base, exponent, form):
    want, got = _outcome(torch, base, exponent, form), _outcome(ember, base, exponent, form)
    if isinstance(want[0], type):
        assert got[0] is want[0], (want, got)
        assert "without overflow" not in want[1] or "without overflow" in got[1], (want, got)
        return
    assert got[0] == want[0], (want, got)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-3 if base in ("float16", "bfloat16") else 1e-6)
