"""add/sub/rsub into a complex result compute ``a + alpha * b`` with alpha a complex number, as PyTorch's kernel:
the product's inf * 0 terms are NaN, so a real inf (or NaN) added to a complex number gives ``inf + nanj``, an
imaginary inf ``nan + infj``, whatever the alpha, out of place, in place, recorded or not."""

import math

import pytest
import torch

import ember

INF, NAN = math.inf, math.nan
REALS = [1.0, INF, -INF, NAN, 0.0]
COMPLEXES = [1 + 0j, complex(INF, 0), complex(0, INF), complex(NAN, 0), complex(INF, INF)]
NUMBERS = [1 + 2j, 0j, complex(INF, 0), complex(1, INF)]


def _operand(m, kind, precision):
    if kind == "real":
        return m.tensor(REALS, dtype=getattr(m, precision))
    return m.tensor(COMPLEXES, dtype=m.complex64 if precision == "float32" else m.complex128)


def _add_in_place(m, s, t, **alpha):
    x = m.tensor([s] * 5)
    return x.add_(t, **alpha)


def _sub_in_place_recorded(m, s, t, **alpha):
    x = m.tensor([s] * 5, requires_grad=True) * 1
    return x.sub_(t, **alpha)


CALLS = {
    "add(number, tensor)": lambda m, s, t, **a: m.add(s, t, **a),
    "add(tensor, number)": lambda m, s, t, **a: m.add(t, s, **a),
    "sub(number, tensor)": lambda m, s, t, **a: m.sub(s, t, **a),
    "sub(tensor, number)": lambda m, s, t, **a: m.sub(t, s, **a),
    "rsub(tensor, number)": lambda m, s, t, **a: m.rsub(t, s, **a),
    "add(tensor, tensor)": lambda m, s, t, **a: m.add(m.tensor([s] * 5), t, **a),
    "sub(tensor, tensor)": lambda m, s, t, **a: m.sub(t, m.tensor([s] * 5), **a),
    "add_": _add_in_place,
    "sub_ recorded": _sub_in_place_recorded,
}


def _pairs(r) -> list:
    return [(z.real, z.imag) for z in map(complex, r.detach().reshape(-1).tolist())]


def _same(x: float, y: float) -> bool:
    return x == y or math.isnan(x) and math.isnan(y)


@pytest.mark.parametrize("alpha", [1, 2, 1j])
@pytest.mark.parametrize("number", NUMBERS, ids=str)
@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_complex_sums_with_infinities_as_pytorch(call, precision, kind, number, alpha):
    if alpha == 1j and kind == "real" and call.startswith(("add_", "sub_")):
        pytest.skip("PyTorch refuses a complex alpha into a real tensor (tested elsewhere)")
    keywords = {} if alpha == 1 else {"alpha": alpha}
    want = _pairs(CALLS[call](torch, number, _operand(torch, kind, precision), **keywords))
    got = _pairs(CALLS[call](ember, number, _operand(ember, kind, precision), **keywords))
    assert all(_same(g, w) for gz, wz in zip(got, want, strict=True) for g, w in zip(gz, wz)), (got, want)


OPERATORS = {"s + t": lambda s, t: s + t, "t + s": lambda s, t: t + s, "s - t": lambda s, t: s - t,
             "t - s": lambda s, t: t - s}


@pytest.mark.parametrize("expression", sorted(OPERATORS))
def test_the_operators_too(expression):
    results = [_pairs(OPERATORS[expression](1 + 2j, _operand(m, "real", "float32"))) for m in (ember, torch)]
    assert all(_same(g, w) for gz, wz in zip(*results, strict=True) for g, w in zip(gz, wz)), results
