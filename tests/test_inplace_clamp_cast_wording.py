"""The refusal of an in-place clamp whose result type the tensor cannot hold, worded as PyTorch's: with number
bounds (``clamp_``, ``clamp_min_``, ``clamp_max_``, methods and functions) its Scalar kernels name the tensor's
C++ type ("... to the desired output type long int"); with a tensor bound, and for the other in-place ops
(``add_``, ``mul_``, ``fmod_``, ...), its scalar type's name ("... type Long")."""

from __future__ import annotations

import pytest
import torch

import ember

DTYPES = ["int64", "int32", "int16", "uint8", "bool"]
CALLS = {
    "clamp_min_(0.5)": lambda lib, t: t.clamp_min_(0.5),
    "clamp_max_(0.5)": lambda lib, t: t.clamp_max_(0.5),
    "clamp_min_(2)": lambda lib, t: t.clamp_min_(2),
    "clamp_max_(2)": lambda lib, t: t.clamp_max_(2),
    "clamp_min_(max=...)": lambda lib, t: t.clamp_min_(min=0.5),
    "torch.clamp_min_": lambda lib, t: lib.clamp_min_(t, 0.5),
    "torch.clamp_max_": lambda lib, t: lib.clamp_max_(t, 0.5),
    "clamp_(max=0.5)": lambda lib, t: t.clamp_(max=0.5),
    "clip_(0.5)": lambda lib, t: t.clip_(0.5),
    "clamp_min_(tensor)": lambda lib, t: t.clamp_min_(lib.tensor(0.5)),
    "clamp_max_(tensor)": lambda lib, t: t.clamp_max_(lib.tensor([0.5, 1.5, 2.5])),
    "add_(0.5)": lambda lib, t: t.add_(0.5),
    "mul_(0.5)": lambda lib, t: t.mul_(0.5),
    "fmod_(0.5)": lambda lib, t: t.fmod_(0.5),
}


def _outcome(lib, dtype: str, call):
    t = lib.tensor([1, 2, 3]).to(getattr(lib, dtype))
    try:
        call(lib, t)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e)
    return "ok", t.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CALLS))
def test_refused_cast_wording_matches_pytorch(name, dtype):
    expected = _outcome(torch, dtype, CALLS[name])
    assert _outcome(ember, dtype, CALLS[name]) == expected
