"""A ``weights_only=True`` load of a NumPy array or scalar saved in ember's own format refuses it as PyTorch's does
its pickle of the same object: each global it names (``_reconstruct``/``scalar``, ``numpy.ndarray``,
``numpy.dtype``) until allowlisted, then the dtype's class (``numpy.dtypes.Float64DType``), PyTorch's idiom
``safe_globals([...])`` allowing it; ``get_unsafe_globals_in_checkpoint`` lists the same globals."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

import ember

R, S = np._core.multiarray._reconstruct, np._core.multiarray.scalar
OBJECTS = {"array": lambda: np.arange(3.0), "dict of array": lambda: {"a": np.arange(3)},
           "scalar": lambda: np.float32(2)}
ALLOWED = [[], [R], [S], [R, np.ndarray], [S, np.dtype], [R, np.ndarray, np.dtype],
           [R, np.ndarray, np.dtype, np.dtypes.Float64DType, np.dtypes.Int64DType],
           [S, np.dtype, np.dtypes.Float32DType]]


def _outcome(m, obj, allow):
    buf = io.BytesIO()
    m.save(obj, buf)
    buf.seek(0)
    unsafe = sorted(m.serialization.get_unsafe_globals_in_checkpoint(buf))  # (PyTorch's order is a set's)
    buf.seek(0)
    with m.serialization.safe_globals(allow):
        try:
            loaded = m.load(buf, weights_only=True)
        except Exception as err:  # noqa: BLE001 - compared with torch's
            # (the reason; ember names the file where PyTorch points to its documentation)
            why = str(err).split("WeightsUnpickler error: ")[1].split("\n\n")
            return unsafe, type(err).__name__, [part.replace(m.__name__, "torch") for part in why[:2] if part]
    return unsafe, repr(loaded)


@pytest.mark.parametrize("allow", range(len(ALLOWED)))
@pytest.mark.parametrize("obj", list(OBJECTS))
def test_weights_only_numpy_as_pytorch(obj, allow):
    got = _outcome(ember, OBJECTS[obj](), ALLOWED[allow])
    want = _outcome(torch, OBJECTS[obj](), ALLOWED[allow])
    if len(want) == 3 and want[2][-1].startswith("Check the documentation"):
        want = (*want[:2], want[2][:-1])
    if len(got) == 3 and got[2][-1].startswith("(loading:"):
        got = (*got[:2], got[2][:-1])
    assert got == want
