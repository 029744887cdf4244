"""``acosh_``, ``asinh_`` and ``atanh_`` recorded as PyTorch's: a node of their own (AcoshBackward1 ...) whose
backward raises NotImplementedError; the values and the unrecorded forms as the out-of-place ops'."""

import pytest
import torch

import ember

OPS = {"acosh_": [1.2, 1.5, 3.0], "asinh_": [-0.5, 0.2, 2.0], "atanh_": [-0.5, 0.2, 0.9]}
FORMS = {
    "method": lambda lib, z, name: getattr(z, name)(),
    "function": lambda lib, z, name: getattr(lib, name)(z),
    "alias": lambda lib, z, name: getattr(z, "arc" + name[1:])(),
}


def structure(t):
    fn = t.grad_fn
    return type(fn).__name__, [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", OPS)
def test_recorded_inplace_has_no_derivative(name, form):
    out = []
    for lib in (torch, ember):
        x = lib.tensor(OPS[name], requires_grad=True)
        z = FORMS[form](lib, x * 1, name)
        with pytest.raises(NotImplementedError) as info:
            z.sum().backward()
        out.append((structure(z), z.tolist(), str(info.value)))
    assert out[1][0] == out[0][0] == (f"{name[:-1].capitalize()}Backward1", ["MulBackward0"])
    assert out[1][1] == pytest.approx(out[0][1])
    assert out[1][2] == out[0][2]


@pytest.mark.parametrize("name", OPS)
def test_inplace_on_a_view_and_unrecorded(name):
    out = []
    for lib in (torch, ember):
        base = lib.tensor(OPS[name] * 2, requires_grad=True) * 1
        getattr(base[1:4], name)()
        plain = lib.tensor(OPS[name], dtype=lib.float64)
        getattr(plain, name)()
        out.append((type(base.grad_fn).__name__, base.tolist(), plain.tolist(), plain.grad_fn))
    assert out[1][0] == out[0][0] and out[1][3] is out[0][3] is None
    assert out[1][1] == pytest.approx(out[0][1]) and out[1][2] == pytest.approx(out[0][2])


@pytest.mark.parametrize("name", OPS)
def test_forward_ad_refused(name):
    messages = []
    for lib in (torch, ember):
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            z = fwd.make_dual(lib.tensor(OPS[name]), lib.ones(3)) * 1
            with pytest.raises(NotImplementedError) as info:
                getattr(z, name)()
        messages.append(str(info.value).splitlines()[0])
    assert messages[1] == messages[0]
