"""``pow(number, tensor)`` where the number promotes the exponent (``pow(1j, real_tensor)``: a complex result):
PyTorch's PowBackward2 saves the exponent as given (``_saved_exponent``: the real tensor itself, in its dtype), and
the exponent's gradient is real (the real part of the complex formula), as PyTorch's."""
import numpy as np
import pytest
import torch

import ember


def run(m, base, dtype, create_graph=False):
    e = m.tensor([0.5, 1.0, 2.0, -1.5], dtype=getattr(m, dtype), requires_grad=True)
    y = m.pow(base, e)
    node = y.grad_fn
    saved = node._saved_exponent
    (g,) = m.autograd.grad(y.abs().sum() if y.is_complex() else y.sum(), e, create_graph=create_graph)
    return e, y, node, saved, g


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("base", [1j, 2 + 0.5j, -3j, 2.5])
def test_saved_exponent_is_the_given_tensor(base, dtype):
    e, y, node, saved, g = run(ember, base, dtype)
    te, ty, tnode, tsaved, tg = run(torch, base, dtype)
    assert tsaved is te
    assert saved is e
    assert str(saved.dtype) == str(tsaved.dtype).replace("torch", "ember")
    assert str(y.dtype) == str(ty.dtype).replace("torch", "ember")
    assert type(node).__name__ == type(tnode).__name__
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6)
    assert str(g.dtype) == str(tg.dtype).replace("torch", "ember")
    # (|1j ** e| is 1: its gradient is rounding noise about 0, of float32's size)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=2e-6, atol=1e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("base", [1j, 2 + 0.5j])
def test_exponent_gradient_under_create_graph(base):
    *_, g = run(ember, base, "float64", create_graph=True)
    *_, tg = run(torch, base, "float64", create_graph=True)
    assert g.requires_grad == tg.requires_grad
    assert g.dtype == ember.float64
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("make", [
    pytest.param(lambda m: m.ones(1, 4).expand(3, 4), id="expanded"),
    pytest.param(lambda m: m.ones(3, 4)[:, ::2], id="sliced"),
    pytest.param(lambda m: m.ones(3, 4).t(), id="transposed"),
    pytest.param(lambda m: m.ones(2, 3, 4).permute(2, 0, 1), id="permuted"),
    pytest.param(lambda m: m.ones(2, 3, 4, 5).to(memory_format=m.channels_last), id="channels_last"),
    pytest.param(lambda m: m.ones(3, 4, requires_grad=True).t(), id="requiring_grad"),
    pytest.param(lambda m: m.empty(3, 4, device="meta").t(), id="meta")])
@pytest.mark.parametrize("base", [2.5, 1j])
def test_result_strides_of_a_number_base_as_pytorchs(make, base):
    """PyTorch's CPU kernel writes ``number ** t`` row-major whatever the exponent's layout (a transposed,
    channels-last or broadcast one; the meta device keeps it): ember's strides, and the exponent's gradient's."""
    outs = []
    for m in (ember, torch):
        e = make(m)
        y = m.pow(base, e)
        g = m.autograd.grad(y, e, m.ones_like(y))[0].stride() if e.requires_grad and not y.is_complex() else None
        outs.append((tuple(y.shape), y.stride(), y.is_contiguous(), g))
    assert outs[0] == outs[1]
