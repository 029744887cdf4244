"""``out=`` of ``torch.chain_matmul``, ``torch.linalg.multi_dot``, ``torch.softmax`` and ``torch.linalg.det``
against PyTorch's: out returned, resized (with PyTorch's warning when it had elements), its dtype exactly the
result's (PyTorch's message otherwise); ``torch.nn.functional.softmax`` takes no out=."""

import warnings

import pytest
import torch

import ember

OUTS = {"right": lambda lib, shape: lib.empty(shape), "empty": lambda lib, shape: lib.empty(0),
        "wrong shape": lambda lib, shape: lib.empty(5), "float64": lambda lib, shape: lib.empty(shape, dtype=lib.float64),
        "int64": lambda lib, shape: lib.empty(shape, dtype=lib.int64)}
CALLS = {
    "chain_matmul": ((2, 2), lambda lib, o: lib.chain_matmul(lib.ones(2, 3), lib.ones(3, 4) * 2, lib.ones(4, 2), out=o)),
    "multi_dot": ((2, 2), lambda lib, o: lib.linalg.multi_dot([lib.ones(2, 3), lib.ones(3, 4) * 2, lib.ones(4, 2)],
                                                             out=o)),
    "softmax": ((2, 3), lambda lib, o: lib.softmax(lib.arange(6.0).reshape(2, 3), 1, out=o)),
    "det": ((), lambda lib, o: lib.linalg.det(lib.tensor([[2.0, 1.0], [0.5, 3.0]]), out=o)),
}


def _outcome(lib, call, out_kind):
    shape, run = CALLS[call]
    out = OUTS[out_kind](lib, shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = run(lib, out)
        except (RuntimeError, TypeError) as e:
            return type(e).__name__, str(e)
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught if "deprecated" not in
                str(w.message) or "resized" in str(w.message)]
    return result is out, list(out.shape), out.tolist(), messages


@pytest.mark.parametrize("out_kind", sorted(OUTS))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_out_as_pytorch(call, out_kind):
    assert _outcome(ember, call, out_kind) == _outcome(torch, call, out_kind)


def test_functional_softmax_takes_no_out():
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
            lib.nn.functional.softmax(lib.ones(2, 3), 1, out=lib.empty(2, 3))
