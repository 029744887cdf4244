"""A complex number where PyTorch's op takes a real one: ``clamp``'s bounds (read as a double for a floating
tensor, promoting to a complex result that clamp refuses otherwise, and always for ``clamp_min``/``clamp_max``) and
``index_fill``'s value (refused for a non-complex tensor even without an imaginary part), against PyTorch."""

import pytest
import torch

import ember

DTYPES = ["float32", "float16", "float64", "int64", "int8", "bool", "complex64"]
CALLS = {
    "clamp_min_keyword": lambda m, t: m.clamp(t, min=1j),
    "clamp_method_real_valued": lambda m, t: t.clamp(max=2 + 0j),
    "clamp_both": lambda m, t: t.clamp(0.5, 1j),
    "clamp_min": lambda m, t: m.clamp_min(t, 1j),
    "clamp_max_method": lambda m, t: t.clamp_max(3 + 0j),
    "index_fill": lambda m, t: t.index_fill(0, m.tensor([0]), 1j),
    "index_fill_": lambda m, t: t.index_fill_(0, m.tensor([0]), 2 + 0j),
}


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_numbers_as_pytorch(dtype, call):
    outcomes = []
    for m in (torch, ember):
        t = m.tensor([0.0, 2.5]).to(getattr(m, dtype))
        try:
            out = CALLS[call](m, t)
            outcomes.append(("ok", str(out.dtype).split(".")[-1], out.tolist()))
        except Exception as e:  # noqa: BLE001  (the error's type and words are compared)
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[1] == outcomes[0]
