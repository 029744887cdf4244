"""The nodes of the pointwise ops, casts and ``minimum`` read as PyTorch's by their type
(``type(y.grad_fn).__name__``), not only by ``repr``/``name()``."""

import pytest
import torch

import ember

OPS = {
    "double": lambda lib, x: x.double(),
    "minimum": lambda lib, x: lib.minimum(x, x * 2),
    "nan_to_num": lambda lib, x: lib.nan_to_num(x),
    "hypot": lambda lib, x: lib.hypot(x, x),
    "copysign": lambda lib, x: lib.copysign(x, x),
    "atan2": lambda lib, x: lib.atan2(x, x),
    **{name: (lambda lib, x, name=name: getattr(x, name)())
       for name in ("tan", "atan", "asin", "acos", "sinh", "cosh", "asinh", "atanh", "log2", "log10", "expm1",
                    "exp2", "erf", "erfc", "erfinv")},
    "acosh": lambda lib, x: (x + 1).acosh(),
}


@pytest.mark.parametrize("op", OPS)
def test_node_type_name(op):
    names = []
    for lib in (torch, ember):
        x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        names.append(type(OPS[op](lib, x).grad_fn).__name__)
    assert names[1] == names[0]
