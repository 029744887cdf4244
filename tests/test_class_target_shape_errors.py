"""Class-index targets of the wrong shape fail with PyTorch's words, which depend on the input's rank: (N, C) with
an (N, 1) target (labels read as a column) is "multi-target not supported", (N, C, H, W) names spatial targets, the
other ranks the target size expected; cross_entropy (with or without label smoothing) and nll_loss alike."""

import numpy as np
import pytest
import torch

import ember

# (input shape, target shape)
CASES = [((4, 5), (4, 1)), ((4, 5), (4, 2)), ((4, 5), (4, 1, 1)), ((2, 5, 3), (2,)), ((2, 5, 3), (2, 4)),
         ((2, 5, 3), (2, 3, 1)), ((2, 5, 3, 3), (2, 3, 4)), ((2, 5, 3, 3), (2, 1, 3, 3)), ((2, 5, 3, 3), (2, 9)),
         ((2, 5, 3, 3), (2,)), ((2, 5, 2, 2, 2), (2, 2, 2)), ((2, 5, 2, 2, 2), (2, 2, 2, 3)), ((4, 5), (3, 1)),
         ((2, 5, 3, 3), (3, 3, 3))]
LOSSES = {
    "cross_entropy": lambda m, x, t: m.nn.functional.cross_entropy(x, t),
    "cross_entropy label_smoothing": lambda m, x, t: m.nn.functional.cross_entropy(x, t, label_smoothing=0.1),
    "nll_loss": lambda m, x, t: m.nn.functional.nll_loss(x.log_softmax(1), t),
    "CrossEntropyLoss mean weight": lambda m, x, t: m.nn.CrossEntropyLoss(weight=m.ones(5))(x, t),
}


def _outcome(m, loss, shapes):
    x = m.tensor(np.random.default_rng(0).standard_normal(shapes[0]).astype(np.float32))
    t = m.zeros(shapes[1], dtype=m.long)
    try:
        return "ok", float(LOSSES[loss](m, x, t))
    except Exception as e:  # noqa: BLE001 (the error's type and message are compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("shapes", CASES, ids=[f"{a}-{b}" for a, b in CASES])
@pytest.mark.parametrize("loss", list(LOSSES))
def test_wrong_target_shape_as_torch(loss, shapes):
    want, got = _outcome(torch, loss, shapes), _outcome(ember, loss, shapes)
    assert got[0] == want[0]
    if want[0] == "ok":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    else:
        assert got[1].startswith(want[1]), (got, want)
