"""An op that promotes an operand which requires grad (``x32 + y64``, ``1j - x``, ``x16 * y32``, ``sum(dtype=)``,
``cat`` of mixed dtypes) records only its own node, as PyTorch's: no ToCopyBackward0 between it and the operand,
whose gradient the engine casts to the operand's dtype on the edge (the real part for a real operand of a complex
result). Values, gradient dtypes, node hooks and double backward are PyTorch's."""

import numpy as np
import pytest
import torch
from oracle import node_names

import ember

OPS = {
    "1j - x": lambda m, x, y, z: 1j - x, "x + 1j": lambda m, x, y, z: x + 1j,
    "x32 + y64": lambda m, x, y, z: x + y, "x32 * y64": lambda m, x, y, z: x * y, "x16 * y32": lambda m, x, y, z: z * x,
    "x32 + z16": lambda m, x, y, z: x + z, "x32 / y64": lambda m, x, y, z: x / y, "x32 ** y64": lambda m, x, y, z: x ** y,
    "x32 * 0-d y64": lambda m, x, y, z: x * y[0], "0-d y64 * x16": lambda m, x, y, z: y[0] * z,
    "add alpha": lambda m, x, y, z: m.add(x, y, alpha=2), "sub alpha": lambda m, x, y, z: m.sub(x, y, alpha=2),
    "atan2": lambda m, x, y, z: m.atan2(x, y), "maximum": lambda m, x, y, z: m.maximum(x, y),
    "hypot": lambda m, x, y, z: m.hypot(x, y), "copysign": lambda m, x, y, z: m.copysign(x, y),
    "xlogy": lambda m, x, y, z: m.xlogy(x, y), "fmod": lambda m, x, y, z: m.fmod(x, y),
    "fmod number": lambda m, x, y, z: m.fmod(x, 0.75), "remainder": lambda m, x, y, z: m.remainder(x, y),
    "remainder number": lambda m, x, y, z: m.remainder(x, 0.75), "logaddexp": lambda m, x, y, z: m.logaddexp(x, y),
    "logaddexp2": lambda m, x, y, z: m.logaddexp2(x, y), "where": lambda m, x, y, z: m.where(x > 0, x, y),
    "where x16": lambda m, x, y, z: m.where(x > y, x, z), "cat": lambda m, x, y, z: m.cat([x, y, z]),
    "complex mul": lambda m, x, y, z: x * (y * 1j), "masked_fill": lambda m, x, y, z: x.masked_fill(x > 0, y[0]),
    "sum dtype": lambda m, x, y, z: x.sum(dtype=m.float64), "sum dim dtype": lambda m, x, y, z: z.sum(0, dtype=m.float32),
    "mean dtype": lambda m, x, y, z: x.mean(dtype=m.float64), "prod dtype": lambda m, x, y, z: x.prod(dtype=m.float64),
    "cumsum dtype": lambda m, x, y, z: x.cumsum(0, dtype=m.float64),
    "cumprod dtype": lambda m, x, y, z: z.cumprod(0, dtype=m.float64),
    "vector_norm dtype": lambda m, x, y, z: m.linalg.vector_norm(x, dtype=m.float64),
    "mse_loss": lambda m, x, y, z: m.nn.functional.mse_loss(x, y),
    "to (records its copy)": lambda m, x, y, z: x.to(m.float64) * y,
    # a number exponent is no input of PowBackward0
    "x ** 2": lambda m, x, y, z: y ** 2, "float_power(x, 2)": lambda m, x, y, z: m.float_power(x, 2),
    "x16 ** 2.5": lambda m, x, y, z: z ** 2.5,
}


def _inputs(m):
    x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = m.tensor([1.5, 2.0, -0.25], dtype=m.float64, requires_grad=True)
    z = m.tensor([0.25, 3.0, 1.0], dtype=m.float16, requires_grad=True)
    return x, y, z


def _loss(out):
    return (out.abs() if out.is_complex() else out).sum()


def _close(e, t, dtype) -> None:
    # (a float32 gradient computed in float64 may round apart from PyTorch's by an ulp: vector_norm's)
    tol = {"float16": 1e-3, "float32": 1e-6}.get(str(dtype).split(".")[-1], 1e-12)
    np.testing.assert_allclose(e.double().numpy(), t.double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", list(OPS))
def test_nodes_gradients_and_their_dtypes_are_pytorchs(op):
    seen = []
    for m in (torch, ember):
        x, y, z = _inputs(m)
        out = OPS[op](m, x, y, z)
        grads = m.autograd.grad(_loss(out), (x, y, z), allow_unused=True)
        seen.append((node_names(out.grad_fn), [None if g is None else str(g.dtype).split(".")[-1] for g in grads], grads,
                     out))
    (tn, td, tg, to), (en, ed, eg, eo) = seen
    assert en == tn
    assert ed == td
    assert str(eo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
    for e, t in zip(eg, tg):
        if t is not None:
            _close(e, t, t.dtype)


@pytest.mark.parametrize("op", [k for k in OPS if k not in ("fmod", "remainder", "fmod number", "remainder number",
                                                            "maximum", "where", "where x16", "masked_fill")])
def test_double_backward_through_a_promoted_operand_is_pytorchs(op):
    """Under create_graph the formula's saved promoted operand stands for the input at its edge too: the second
    derivative reaches the input in its own dtype, with PyTorch's values."""
    seen = []
    for m in (torch, ember):
        x, y, z = _inputs(m)
        out = OPS[op](m, x, y, z)
        first = m.autograd.grad(_loss(out), (x, y, z), allow_unused=True, create_graph=True)
        total = sum(g.double().sin().sum() for g in first if g is not None and g.requires_grad)
        if not isinstance(total, m.Tensor):  # (a linear op: the first gradients are constants)
            seen.append(None)
            continue
        second = m.autograd.grad(total, (x, y, z), allow_unused=True)
        seen.append([None if g is None else (str(g.dtype).split(".")[-1], g) for g in second])
    assert (seen[0] is None) == (seen[1] is None)
    if seen[0] is None:
        return
    # (second derivatives go through float32 or float16 steps, which round apart from PyTorch's in places)
    tol = 3e-3 if "16" in op or "cumprod" in op else 1e-5
    for t, e in zip(*seen):
        assert (t is None) == (e is None)
        if t is not None:
            assert e[0] == t[0]
            np.testing.assert_allclose(e[1].double().numpy(), t[1].double().numpy(), rtol=tol, atol=tol)


def test_node_hooks_see_each_input_gradient_in_its_dtype():
    seen = []
    for m in (torch, ember):
        x, y, _ = _inputs(m)
        out = x * y
        got: list = []
        out.grad_fn.register_hook(lambda gi, go, got=got: got.append([str(g.dtype).split(".")[-1] for g in gi]))
        out.sum().backward()
        seen.append((got, x.grad.dtype == m.float32, y.grad.dtype == m.float64))
    assert seen[1] == seen[0]


def test_a_promoted_operand_changed_in_place_is_pytorchs_error():
    """The op saves the operand itself (PyTorch's view): changing it in place before backward is the usual error,
    naming it in its own dtype."""
    messages = []
    for m in (torch, ember):
        x, y, _ = _inputs(m)
        a = x * 1
        out = a * y
        a.add_(1)
        with pytest.raises(RuntimeError) as err:
            out.sum().backward()
        messages.append(str(err.value))
    for msg in messages:
        assert "modified by an inplace operation: [torch.FloatTensor [3]]" in msg
        assert "is at version 1; expected version 0 instead" in msg


def test_explicit_conversions_still_record_their_copy():
    """``.to()``, ``.double()`` and ``softmax(dtype=)`` convert as ops of their own: ToCopyBackward0, as PyTorch's."""
    for m in (torch, ember):
        x, _, _ = _inputs(m)
        assert x.to(m.float64).grad_fn.name() == "ToCopyBackward0"
        assert x.double().grad_fn.name() == "ToCopyBackward0"
        assert node_names(m.softmax(x, 0, dtype=m.float64).grad_fn)[1][1] == "ToCopyBackward0"
