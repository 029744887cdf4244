"""rms_norm's result has the input's dtype whatever the weight's (PyTorch's composite ends in type_as(input): a
float32 input through a float64 weight is float32, cast back by a ToCopyBackward0), with PyTorch's once-per-process
warning for a weight of another dtype; layer_norm checks mixed dtypes before shapes, as PyTorch's kernel; and the
clamps PyTorch writes as the float constant 1e-12 (binary_cross_entropy's derivative, cosine_embedding_loss's
squared norms) are that float's value in float64 too, as in PyTorch."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.nn._ops import norm as norm_ops

DTYPES = ["float16", "bfloat16", "float32", "float64"]


def _rms(lib, xd, wd):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((2, 3, 4)).astype(np.float32)).to(getattr(lib, xd)).requires_grad_()
    w = None if wd is None else lib.tensor(rng.standard_normal(4).astype(np.float32)).to(getattr(lib, wd))
    if w is not None:
        w.requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (compared below)
        out = lib.nn.functional.rms_norm(x, (4,), w)
    out.backward(lib.ones_like(out))
    kinds = [str(t.dtype).rpartition(".")[2] for t in (out, x.grad, *(() if w is None else (w.grad,)))]
    return kinds, type(out.grad_fn).__name__, [t.detach().double().numpy() for t in (out, x.grad)]


@pytest.mark.parametrize("wd", [*DTYPES, None])
@pytest.mark.parametrize("xd", DTYPES)
def test_rms_norm_keeps_the_inputs_dtype_as_pytorch(xd, wd):
    (ek, en, ev), (tk, tn, tv) = _rms(ember, xd, wd), _rms(torch, xd, wd)
    assert (ek, en) == (tk, tn)
    if xd in ("float32", "float64"):
        for e, t in zip(ev, tv):
            np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


def test_rms_norm_warns_once_of_a_weight_of_another_dtype_as_pytorch(monkeypatch):
    code = ("import torch, warnings\nwarnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    for wd in (torch.float64, torch.float16):\n"
            "        torch.nn.functional.rms_norm(torch.ones(2, 4), (4,), torch.ones(4, dtype=wd))\n"
            "print(len(w)); print(str(w[0].message).split(' (Triggered')[0])")
    count, message = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout.splitlines()
    monkeypatch.setattr(norm_ops, "_mismatch_warned", False)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        for wd in (ember.float64, ember.float16):
            ember.nn.functional.rms_norm(ember.ones(2, 4), (4,), ember.ones(4, dtype=wd))
        ember.nn.functional.rms_norm(ember.ones(2, 4), (4,), ember.ones(4))  # (same dtype: no warning)
    assert [str(w.message) for w in got] == [message] and int(count) == 1
    assert got[0].category is UserWarning and got[0].filename == __file__


@pytest.mark.parametrize("case", range(5))
def test_layer_norm_checks_mixed_dtypes_before_shapes_as_pytorch(case):
    def run(lib):
        x = lib.ones(2, 3, 4)
        w, b, ns = [(lib.ones(4, dtype=lib.float16), lib.ones(5), (4,)),
                    (lib.ones(4, dtype=lib.float16), None, (5,)),
                    (lib.ones(5, dtype=lib.float64), None, (4,)),
                    (lib.ones(4), lib.ones(5, dtype=lib.float16), (4,)),
                    (None, lib.ones(5, dtype=lib.float16), (4,))][case]
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.layer_norm(x, ns, w, b)
        return str(info.value).split("\n")[0]

    assert run(ember) == run(torch)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_derivative_at_its_clamp_is_pytorchs(dtype, weighted):
    def run(lib):
        dt = getattr(lib, dtype)
        x = lib.tensor([0.0, 1.0, 1e-13, 1 - 1e-13, 0.5, 1e-7], dtype=dt).requires_grad_()
        t = lib.tensor([0.3, 0.7, 0.2, 0.9, 1.0, 0.0], dtype=dt)
        w = lib.tensor([1.0, 2.0, 3.0, 1.0, 1.0, 1.0], dtype=dt) if weighted else None
        lib.nn.functional.binary_cross_entropy(x, t, w, reduction="sum").backward()
        return x.grad.tolist()

    assert run(ember) == run(torch)


def test_cosine_embedding_loss_adds_pytorchs_epsilon_in_float64():
    def run(lib):
        a = lib.tensor([[1e-7, 2e-7], [3e-8, 1e-8]], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[3e-7, -1e-7], [1e-8, 1e-8]], dtype=lib.float64)
        loss = lib.nn.functional.cosine_embedding_loss(a, b, lib.tensor([1.0, -1.0], dtype=lib.float64))
        loss.backward()
        return loss.item(), a.grad.tolist()

    e, t = run(ember), run(torch)
    assert e[0] == pytest.approx(t[0], rel=1e-14, abs=0)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-13)


LAYER_NORM_DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _layer_norm_of_dtypes(lib, xd, wd, bd, ns):
    """layer_norm with a weight and a bias of the right shape in dtypes ``wd`` and ``bd``: PyTorch's error, or the
    result's dtype, the gradients' dtypes and all values (in float64)."""
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal((2, 3, 4)), dtype=getattr(lib, xd), requires_grad=True)
    w = lib.tensor(np.linspace(0.5, 1.5, 4), dtype=getattr(lib, wd), requires_grad=True)
    b = lib.tensor(np.linspace(-1.0, 1.0, 4), dtype=getattr(lib, bd), requires_grad=True)
    try:
        y = lib.nn.functional.layer_norm(x, ns, w, b)
    except RuntimeError as err:
        return str(err).split("\n")[0], []
    grads = lib.autograd.grad((y * y).sum(), (x, w, b))
    return ([str(t.dtype).split(".")[-1] for t in (y, *grads)],
            [np.asarray(t.detach().double().tolist()) for t in (y, *grads)])


@pytest.mark.parametrize("ns", [(4,), [4]], ids=["tuple", "list"])
@pytest.mark.parametrize("bd", LAYER_NORM_DTYPES)
@pytest.mark.parametrize("wd", LAYER_NORM_DTYPES)
@pytest.mark.parametrize("xd", LAYER_NORM_DTYPES)
def test_layer_norm_of_each_parameter_dtype_as_pytorch(xd, wd, bd, ns):
    """Every pairing of the input's dtype with the weight's and the bias's, both of the right shape (the common
    call: a module's), and normalized_shape a tuple or a list: PyTorch's mixed-dtype error, or its result
    and gradients in its dtypes (a half-precision input takes float32 parameters)."""
    (got, got_values), (want, want_values) = (_layer_norm_of_dtypes(lib, xd, wd, bd, ns) for lib in (ember, torch))
    assert got == want
    tol = 8e-2 if "bfloat16" in (xd, wd, bd) else 2e-2 if "float16" in (xd, wd, bd) else 1e-5
    for mine, theirs in zip(got_values, want_values):
        np.testing.assert_allclose(mine, theirs, rtol=tol, atol=tol)
