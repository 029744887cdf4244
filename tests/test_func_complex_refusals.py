"""torch.func's transforms refuse complex inputs and outputs where PyTorch's do, with its message (which side,
which flattened index), and take the real ones around them."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import outcomes

CASES = {
    "jacfwd of a complex output": lambda m: m.func.jacfwd(lambda x: x * 1j)(m.ones(2)),
    "jacfwd of a complex input": lambda m: m.func.jacfwd(lambda x: x.real)(m.ones(2, dtype=m.complex64)),
    "jacfwd of a second output complex": lambda m: m.func.jacfwd(lambda x: (x, x * 1j))(m.ones(2)),
    "jacrev of a complex output": lambda m: m.func.jacrev(lambda x: x * 1j)(m.ones(2)),
    "jacrev of a complex input": lambda m: m.func.jacrev(lambda x: x.real)(m.ones(2, dtype=m.complex64)),
    "hessian of a complex input": lambda m: m.func.hessian(lambda x: x.real.sum())(m.ones(2, dtype=m.complex64)),
    "jacfwd of real ones": lambda m: m.func.jacfwd(lambda x: (x * 2).sin())(m.ones(2)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_complex_refusals_of_the_transforms_as_pytorch(case):
    (got, _), (want, _) = outcomes(CASES[case])
    if isinstance(want, Exception):
        assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
    else:
        np.testing.assert_allclose(np.asarray(got.tolist()), np.asarray(want.tolist()), rtol=1e-6)
