"""PyTorch's deprecated linear-algebra spellings warn once per process, with PyTorch's text (nflows calls
torch.qr and torch.lu_solve): torch.cholesky, torch.qr, torch.lu_solve, torch.triangular_solve."""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
from ember import _warnings

CALLS = {
    "cholesky": "m.cholesky(a @ a.mT + m.eye(3))",
    "qr": "a.qr()",
    "lu_solve": "m.lu_solve(b, *m.linalg.lu_factor(a))",
    "triangular_solve": "m.triangular_solve(b, a)",
}


def torch_messages() -> dict:
    code = ("import json, warnings, torch as m\na = m.randn(3, 3) + 3 * m.eye(3)\nb = m.randn(3, 1)\nout = {}\n"
            "for name, call in json.loads(__import__('sys').argv[1]).items():\n"
            "    with warnings.catch_warnings(record=True) as w:\n        warnings.simplefilter('always')\n"
            "        eval(call); eval(call)\n"
            "    out[name] = [str(x.message).split(' (Triggered internally')[0] for x in w]\nprint(json.dumps(out))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(CALLS)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def expected():
    return torch_messages()


@pytest.mark.parametrize("name", list(CALLS))
def test_deprecated_spelling_warns_once_with_pytorchs_text(name, expected, monkeypatch):
    monkeypatch.setattr(_warnings, "_warned_once", set())  # as in a fresh process
    m = ember
    a = m.tensor(np.random.default_rng(0).standard_normal((3, 3)) + 3 * np.eye(3), dtype=m.float32)
    b = m.tensor(np.random.default_rng(1).standard_normal((3, 1)), dtype=m.float32)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        eval(CALLS[name], {"m": m, "a": a, "b": b})
        eval(CALLS[name], {"m": m, "a": a, "b": b})
    got = [str(x.message) for x in w if issubclass(x.category, UserWarning)]
    assert got == expected[name] and len(got) == 1
