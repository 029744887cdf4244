"""sub, rsub and sub_ into a complex result compute PyTorch's ``a + (-alpha) * b``: ``alpha`` negated as a number
(a real one then made complex, ``-2`` is ``-2 + 0j``; a complex one negated part by part, ``-1j`` is ``-0 - 1j``)
and multiplied into ``b`` as complex numbers, whose ``0 * x`` terms turn some ``-0.0`` parts into ``+0.0`` and whose
``inf * 0`` terms are NaN. ``a - alpha * b`` differs in the sign of zero parts: ``(-0 - 0j) - 0`` is ``-0 + 0j``.
Compared bit for bit with ``torch.signbit`` on both parts, for numbers and tensors, out of place, in place and
reversed (rsub), with and without ``alpha``."""

import itertools
import math

import pytest
import torch

import ember

INF, NAN = math.inf, math.nan
ZEROS = [complex(r, i) for r in (0.0, -0.0) for i in (0.0, -0.0)]
VALUES = ZEROS + [complex(-0.0, 1.0), complex(1.0, -0.0), complex(INF, 0.0), complex(-0.0, -INF), complex(NAN, -0.0),
                  complex(2.0, 3.0)]
NUMBERS = VALUES + [0.0, -0.0, 0, 1.5, -INF]
ALPHAS = [1, 2, -1, 0.5, 1j, -1j, 1 + 1j]


def _tensor(m, values, precision):
    return m.tensor(values, dtype=m.complex64 if precision == "complex64" else m.complex128)


def _left_right(m, precision):
    """Every pair of VALUES: the left operands, then the right ones (two tensors of 100 elements)."""
    pairs = list(itertools.product(VALUES, VALUES))
    return _tensor(m, [p[0] for p in pairs], precision), _tensor(m, [p[1] for p in pairs], precision)


def _sub_in_place(m, t, s, **alpha):
    return t.clone().sub_(s, **alpha)


def _sub_in_place_recorded(m, t, s, **alpha):
    x = t.clone().requires_grad_(True) * 1
    return x.sub_(s, **alpha)


# (t: a complex tensor; s: a number or a tensor)
CALLS = {
    "sub(t, s)": lambda m, t, s, **a: m.sub(t, s, **a),
    "sub(s, t)": lambda m, t, s, **a: m.sub(s, t, **a),
    "t.sub(s)": lambda m, t, s, **a: t.sub(s, **a),
    "rsub(t, s)": lambda m, t, s, **a: m.rsub(t, s, **a),
    "rsub(s, t)": lambda m, t, s, **a: m.rsub(s, t, **a) if isinstance(s, m.Tensor) else m.rsub(t, s, **a),
    "t.sub_(s)": _sub_in_place,
    "t.sub_(s) recorded": _sub_in_place_recorded,
}
OPERATORS = {"t - s": lambda m, t, s: t - s, "s - t": lambda m, t, s: s - t, "t -= s": lambda m, t, s: _isub(t, s)}


def _isub(t, s):
    t = t.clone()
    t -= s
    return t


def _bits(r) -> list:
    """Each element's real and imaginary parts: NaN, or the value and its sign bit (torch.signbit's)."""
    r = r.detach()
    parts = []
    for part in (r.real, r.imag):
        values = part.reshape(-1).tolist()
        signs = (torch.signbit(part) if isinstance(part, torch.Tensor) else ember.signbit(part)).reshape(-1).tolist()
        parts.append(["nan" if math.isnan(v) else (v, s) for v, s in zip(values, signs, strict=True)])
    return parts


def _results(call, precision, operand):
    results = []
    for m in (torch, ember):
        left, right = _left_right(m, precision)
        results.append(_bits(call(m, left, right if operand == "tensor" else operand)))
    return results


def _mismatches(call, precision, alpha) -> list:
    """The operands (a tensor, then each number) whose result is not PyTorch's, bit for bit."""
    keywords = {} if alpha == 1 else {"alpha": alpha}
    calls = {**CALLS, **OPERATORS}
    call = calls[call] if call in OPERATORS else lambda m, t, s, c=CALLS[call]: c(m, t, s, **keywords)
    wrong = []
    for operand in ["tensor", *NUMBERS]:
        want, got = _results(call, precision, operand)
        if got != want:
            wrong.append((operand, [(i, g, w) for i, (g, w) in enumerate(zip(got[0] + got[1], want[0] + want[1]))
                                    if g != w][:4]))
    return wrong


@pytest.mark.parametrize("alpha", ALPHAS, ids=str)
@pytest.mark.parametrize("precision", ["complex64", "complex128"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_signed_zeros_as_pytorch(call, precision, alpha):
    assert _mismatches(call, precision, alpha) == []


@pytest.mark.parametrize("precision", ["complex64", "complex128"])
@pytest.mark.parametrize("call", sorted(OPERATORS))
def test_operators_signed_zeros_as_pytorch(call, precision):
    assert _mismatches(call, precision, 1) == []


@pytest.mark.parametrize("alpha", [1, 2, 1j])
@pytest.mark.parametrize("real", ["float32", "float64"])
def test_real_tensor_minus_complex_tensor(real, alpha):
    """A real operand is made complex (imaginary part +0) before the kernel's product."""
    keywords = {} if alpha == 1 else {"alpha": alpha}
    results = []
    for m in (torch, ember):
        reals = m.tensor([0.0, -0.0, INF, 1.0] * 10, dtype=getattr(m, real))
        left, right = _left_right(m, "complex64" if real == "float32" else "complex128")
        results.append(_bits(m.sub(reals, right[:40], **keywords)) + _bits(m.sub(left[:40], reals, **keywords))
                       + _bits(m.rsub(reals, right[:40], **keywords)))
    assert results[1] == results[0]


@pytest.mark.parametrize("alpha", [1, 2, 1j])
def test_gradients_unchanged(alpha):
    """The gradient of ``a - alpha * b``: ``g`` and ``-conj(alpha) * g``, as PyTorch's."""
    keywords = {} if alpha == 1 else {"alpha": alpha}
    grads = []
    for m in (torch, ember):
        a, b = (t[:8].detach().requires_grad_(True) for t in _left_right(m, "complex128"))
        (m.sub(a, b, **keywords) * m.tensor([1 + 2j] * 8, dtype=m.complex128)).real.sum().backward()
        grads.append((a.grad.tolist(), b.grad.tolist()))
    assert grads[1] == grads[0]


@pytest.mark.parametrize("alpha", [1, 2, 1j])
def test_in_place_with_a_wider_operand(alpha):
    """sub_ of a complex64 tensor with a complex128 or float64 operand computes in the common dtype (complex128),
    then rounds into complex64, as PyTorch's kernel."""
    keywords = {} if alpha == 1 else {"alpha": alpha}
    results = []
    for m in (torch, ember):
        x = m.tensor([1 + 1j, -0.0 - 0j, 0.1 + 0.2j, complex(-0.0, 1)], dtype=m.complex64)
        wide = m.tensor([1 / 3 + 1j / 7, 0j, 1e-9 + 0j, -0.0], dtype=m.complex128)
        real = m.tensor([0.1, -0.0, 1 / 3, 0.0], dtype=m.float64)
        results.append(_bits(x.clone().sub_(wide, **keywords)) + _bits(x.clone().sub_(real, **keywords)))
    assert results[1] == results[0]
