"""layer_norm, rms_norm and group_norm with each combination of weight and bias (right, None, of another shape, of
another dtype) and each form of normalized_shape, against PyTorch: the values and gradients, or PyTorch's error.

layer_norm takes a fast path when everything is as a module passes it (a tuple, a weight and a bias of that shape
and the input's dtype); every other combination goes through the checks. A condition of that test made wrong alone
(a weight of another shape let through, or another dtype's bias) is seen only by a call where just that one
parameter differs: hence the table, one parameter off at a time. (PyTorch's functional forms take no single int
for normalized_shape: its TypeError.)"""

import warnings

import numpy as np
import pytest
import torch

import ember

SHAPE = (2, 3, 4)
NS = (4,)


def _param(m, kind, shape, dtype):
    rng = np.random.default_rng(len(kind) + len(shape))
    if kind == "none":
        return None
    if kind == "wrong shape":
        shape = (shape[-1] + 1,)
    dt = {"float64": m.float64, "float16": m.float16}.get(kind, dtype)
    return m.tensor(rng.standard_normal(shape).astype(np.float32)).to(dt).requires_grad_()


def _run(m, fn, wk, bk, xdtype, ns_form):
    rng = np.random.default_rng(0)
    dt = getattr(m, xdtype)
    x = m.tensor(rng.standard_normal(SHAPE).astype(np.float32)).to(dt).requires_grad_()
    ns = {"tuple": NS, "list": list(NS), "int": NS[0], "torch.Size": m.Size(NS)}[ns_form]
    if fn == "group_norm":
        w, b = _param(m, wk, (3,), dt), _param(m, bk, (3,), dt)
        args = (x, 3, w, b)
    elif fn == "rms_norm":
        w, b = _param(m, wk, NS, dt), None
        args = (x, ns, w)
    else:
        w, b = _param(m, wk, NS, dt), _param(m, bk, NS, dt)
        args = (x, ns, w, b)
    try:
        with warnings.catch_warnings():
            # rms_norm's once-per-process dtype-mismatch warning (tested in test_norm_dtypes_and_loss_epsilon.py)
            # fires on whichever side meets it first in the process: here only the results are compared
            warnings.filterwarnings("ignore", message="Mismatch dtype between input and weight")
            out = getattr(m.nn.functional, fn)(*args)
            out.backward(m.ones_like(out))
    except Exception as err:  # noqa: BLE001 -- the error is what is compared
        return type(err).__name__, str(err).split("\n")[0]
    grads = [None if t is None else t.grad for t in (x, w, b)]
    return str(out.dtype).split(".")[-1], [out.detach()] + grads


KINDS = ["right", "none", "wrong shape", "float64", "float16"]

def _cases():
    for fn in ("layer_norm", "rms_norm", "group_norm"):
        for ns_form in (("tuple", "list", "int", "torch.Size") if fn != "group_norm" else ("tuple",)):
            for wk in KINDS:
                for bk in (KINDS if fn != "rms_norm" else ["none"]):
                    if fn == "group_norm" and wk == "none" and bk != "none":
                        continue  # (PyTorch's group_norm then fails with "tensor does not have a device")
                    for xdtype in ("float32", "float64"):
                        yield pytest.param(fn, ns_form, wk, bk, xdtype,
                                           id=f"{fn}-{ns_form}-weight {wk}-bias {bk}-{xdtype}")


@pytest.mark.parametrize("fn,ns_form,wk,bk,xdtype", list(_cases()))
def test_each_weight_and_bias_combination_as_torch(fn, ns_form, wk, bk, xdtype):
    got = _run(ember, fn, wk, bk, xdtype, ns_form)
    want = _run(torch, fn, wk, bk, xdtype, ns_form)
    assert got[0] == want[0], (got, want)
    if isinstance(want[1], str):
        assert got[1] == want[1]
        return
    for e, t in zip(got[1], want[1], strict=True):
        assert (e is None) == (t is None)
        if t is not None:
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            np.testing.assert_allclose(e.double().numpy(), t.double().numpy(), rtol=2e-3, atol=2e-3)
