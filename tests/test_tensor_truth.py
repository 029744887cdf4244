"""A tensor's truth (``bool(t)``, ``t.is_nonzero()``, ``torch.is_nonzero``) and the activations PyTorch also has as
Tensor methods (``hardshrink``, ``prelu``), against PyTorch: values, and the error type and wording for a tensor
that is empty or has more than one element."""

import pytest
import torch

import ember


def _outcome(lib, fn):
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 (the type and message are what is compared)
        return type(e).__name__, str(e)


CASES = {
    "empty": lambda lib: lib.tensor([]),
    "two": lambda lib: lib.tensor([1, 2]),
    "empty 2-d": lambda lib: lib.zeros(0, 3),
    "zero": lambda lib: lib.tensor([0.0]),
    "nonzero 0-d": lambda lib: lib.tensor(3),
    "nan": lambda lib: lib.tensor([[float("nan")]]),
    "false": lambda lib: lib.tensor(False),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("how", ["bool", "method", "function"])
def test_truth_of_a_tensor_is_pytorchs(case, how):
    make = CASES[case]
    read = {"bool": lambda lib, t: bool(t), "method": lambda lib, t: t.is_nonzero(),
            "function": lambda lib, t: lib.is_nonzero(t)}[how]
    assert _outcome(ember, lambda lib: read(lib, make(lib))) == _outcome(torch, lambda lib: read(lib, make(lib)))


def test_hardshrink_and_prelu_methods_match_the_functions():
    data = [[-1.0, -0.3, 0.0, 0.4, 2.0], [0.5, -0.5, 0.6, -0.6, 1e-3]]
    for lib in (ember, torch):
        x = lib.tensor(data, requires_grad=True)
        weight = lib.tensor([0.25, 0.1])
        out = (x.hardshrink(), x.hardshrink(lambd=0.45), x.prelu(weight[:1]), x.t().prelu(weight))
        out[1].sum().backward()
        if lib is ember:
            got = [o.detach().numpy().tolist() for o in out] + [x.grad.numpy().tolist(), out[0].grad_fn.name()]
        else:
            want = [o.detach().numpy().tolist() for o in out] + [x.grad.numpy().tolist(), out[0].grad_fn.name()]
    assert got == want
