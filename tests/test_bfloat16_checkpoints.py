"""bfloat16 and float16 tensors in checkpoints: ember's format, PyTorch's zip format (both ways) and safetensors
(both ways), with the same bits as torch's tensors."""

import io

import numpy as np
import pytest
import safetensors.torch
import torch

import ember
from ember.serialization import load_file, save_file


def torch_tensors() -> dict:
    g = torch.Generator().manual_seed(0)
    w = torch.randn(3, 5, generator=g) * 100
    w[0, :3] = torch.tensor([float("inf"), float("nan"), 1e-40])
    return {"bf16": w.bfloat16(), "f16": w.half(), "bf16_0d": torch.tensor(1.5, dtype=torch.bfloat16),
            "bf16_empty": torch.zeros(0, 2, dtype=torch.bfloat16), "bf16_t": w.bfloat16().t()}


def bits(t) -> bytes:
    """The raw 16-bit patterns of a torch or ember tensor (row-major)."""
    if isinstance(t, torch.Tensor):
        return t.contiguous().view(torch.int16).numpy().tobytes()
    return np.ascontiguousarray(t._data).view(np.int16).tobytes()


def as_ember(tensors: dict) -> dict:
    """ember tensors holding the same bits as torch's (NaN payloads included)."""
    out = {}
    for k, v in tensors.items():
        dtype = getattr(ember, str(v.dtype).split(".")[-1])
        if v.is_contiguous():
            out[k] = ember.Tensor._make(v.view(torch.int16).numpy().view(dtype.np))
        else:  # the transposed one: the same non-contiguous layout
            out[k] = ember.Tensor._make(v.t().view(torch.int16).numpy().view(dtype.np)).t()
    return out


def assert_same_bits(loaded: dict, expected: dict):
    assert set(loaded) == set(expected)
    for k, t in expected.items():
        e = loaded[k]
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], k
        assert tuple(e.shape) == tuple(t.shape) and bits(e) == bits(t), k


def test_conversion_from_float32_gives_torchs_bits():
    for k, t in torch_tensors().items():
        e = ember.tensor(t.float().numpy()).to(getattr(ember, str(t.dtype).split(".")[-1]))
        keep = ~torch.isnan(t.float())  # NaN is NaN, whatever its payload
        assert bits(e[ember.tensor(keep.numpy())]) == bits(t[keep]), k


@pytest.mark.parametrize("fmt", ["ember", "torch"])
def test_ember_save_load_round_trip(tmp_path, fmt):
    tensors = as_ember(torch_tensors())
    param = ember.nn.Parameter(ember.ones(2, dtype=ember.bfloat16))
    ember.save({**tensors, "param": param, "dtype": ember.bfloat16}, tmp_path / "c.pt", format=fmt)
    back = ember.load(tmp_path / "c.pt")
    assert back.pop("dtype") is ember.bfloat16
    assert isinstance(back["param"], ember.nn.Parameter) and back.pop("param").dtype == ember.bfloat16
    assert_same_bits(back, torch_tensors())


def test_torch_loads_embers_torch_format_with_weights_only(tmp_path):
    ember.save(as_ember(torch_tensors()), tmp_path / "c.pt", format="torch")
    assert_same_bits(torch.load(tmp_path / "c.pt", weights_only=True), torch_tensors())


def test_ember_loads_torch_save():
    buf = io.BytesIO()
    torch.save({**torch_tensors(), "dtype": torch.bfloat16}, buf)
    buf.seek(0)
    back = ember.load(buf)
    assert back.pop("dtype") is ember.bfloat16
    assert_same_bits(back, torch_tensors())


def test_safetensors_both_ways(tmp_path):
    expected = {k: v.contiguous() for k, v in torch_tensors().items()}
    safetensors.torch.save_file(expected, str(tmp_path / "t.safetensors"))
    assert_same_bits(load_file(tmp_path / "t.safetensors"), expected)
    save_file(as_ember(torch_tensors()), tmp_path / "e.safetensors")
    header = (tmp_path / "e.safetensors").read_bytes()[:400]
    assert b'"BF16"' in header and b'"F16"' in header
    assert_same_bits(safetensors.torch.load_file(str(tmp_path / "e.safetensors")), expected)


def test_bfloat16_model_state_dict_round_trips_through_torch(tmp_path):
    torch.manual_seed(0)
    tmodel = torch.nn.Linear(4, 3).bfloat16()
    torch.save(tmodel.state_dict(), tmp_path / "m.pt")
    model = ember.nn.Linear(4, 3).bfloat16()
    model.load_state_dict(ember.load(tmp_path / "m.pt"))
    x = torch.randn(2, 4).bfloat16()
    assert bits(model(ember.tensor(x.float().numpy()).bfloat16())) == bits(tmodel(x))
