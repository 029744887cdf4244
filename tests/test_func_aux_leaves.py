"""torch.func's transforms with ``has_aux`` take only tensors as the aux output's leaves (a number, None or a string
is PyTorch's RuntimeError), and a cotangent of the wrong shape is PyTorch's error naming both sizes."""

import pytest
import torch

import ember

AUX = {"int": 3, "None": None, "str": "s", "tuple with an int": "TENSOR_AND_2", "list of a tensor": "LIST",
       "dict of an int": {"a": 1}, "empty tuple": (), "dict of a tensor": "DICT"}
TRANSFORMS = {
    "grad": lambda m, f, x: m.func.grad(lambda x: (x.sum(), f(x)), has_aux=True)(x),
    "grad_and_value": lambda m, f, x: m.func.grad_and_value(lambda x: (x.sum(), f(x)), has_aux=True)(x),
    "jacrev": lambda m, f, x: m.func.jacrev(lambda x: (x.sin(), f(x)), has_aux=True)(x),
    "jacfwd": lambda m, f, x: m.func.jacfwd(lambda x: (x.sin(), f(x)), has_aux=True)(x),
    "vjp": lambda m, f, x: m.func.vjp(lambda x: (x.sin(), f(x)), x, has_aux=True)[2],
    "jvp": lambda m, f, x: m.func.jvp(lambda x: (x.sin(), f(x)), (x,), (x,), has_aux=True)[2],
}


def _aux(spec):
    if spec == "TENSOR_AND_2":
        return lambda x: (x * 2, 2)
    if spec == "LIST":
        return lambda x: [x * 2]
    if spec == "DICT":
        return lambda x: {"a": x.cos()}
    return lambda x: spec


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("aux", list(AUX))
def test_aux_leaves_must_be_tensors_as_in_pytorch(transform, aux):
    got = []
    for m in (torch, ember):
        try:
            TRANSFORMS[transform](m, _aux(AUX[aux]), m.tensor([1.0, 2.0]))
            got.append("ok")
        except RuntimeError as err:
            got.append(str(err).replace("torch", "ember") if m is torch else str(err))
    assert got[1] == got[0]


def test_a_cotangent_of_another_shape_is_pytorchs_error():
    messages = []
    for m in (torch, ember):
        x = m.ones(2, 2, requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            m.autograd.grad(x.sin(), x, m.ones(3))
        messages.append(str(err.value).replace("torch.Size", "Size").replace("ember.Size", "Size"))
    assert messages[1] == messages[0]
