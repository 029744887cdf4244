"""PyTorch's legacy ``torch.save`` format (before 1.6; ``_use_new_zipfile_serialization=False``), which
``torch.load`` still reads, weights only by default: pretrained checkpoints of that era are in it. ember reads it
with its own pickle interpreter, as it reads the zip format: nothing is unpickled."""

import argparse
import io
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember


def legacy_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=False)
    return buf.getvalue()


def assert_same(e, t):
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape) and e.requires_grad == t.requires_grad
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())


def test_state_dict_checkpoint_as_torch_loads_it():
    """A checkpoint of a trained model's state_dict and a number, as pretrained CIFAR ResNets were shipped."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                                torch.nn.Linear(4, 2))
    data = legacy_bytes({"state_dict": model.state_dict(), "best_prec1": 91.5, "epoch": 7})
    expected = torch.load(io.BytesIO(data))
    got = ember.load(io.BytesIO(data))
    assert got["best_prec1"] == expected["best_prec1"] and got["epoch"] == expected["epoch"]
    assert isinstance(got["state_dict"], OrderedDict)
    assert list(got["state_dict"]) == list(expected["state_dict"])
    for k, v in expected["state_dict"].items():
        assert_same(got["state_dict"][k], v)
    assert got["state_dict"]._metadata == expected["state_dict"]._metadata
    ember_model = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4), ember.nn.Flatten(),
                                      ember.nn.Linear(4, 2))
    ember_model.load_state_dict(got["state_dict"])
    x = np.random.default_rng(0).normal(size=(2, 3, 3, 3)).astype(np.float32)
    model.eval(), ember_model.eval()
    np.testing.assert_allclose(ember_model(ember.from_numpy(x)).detach().numpy(),
                               model(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32,
                                   torch.uint8, torch.bool])
def test_dtypes(dtype):
    t = (torch.arange(12) % 5).to(dtype).reshape(3, 4)
    assert_same(ember.load(io.BytesIO(legacy_bytes(t))), torch.load(io.BytesIO(legacy_bytes(t))))


def test_views_share_one_storage_and_parameters_keep_requires_grad():
    base = torch.arange(20, dtype=torch.float32)
    p = torch.nn.Parameter(torch.ones(2, 3))
    obj = {"row": base.view(4, 5)[1], "col": base.view(4, 5)[:, 2], "t": base.view(4, 5).t(), "p": p,
           "empty": torch.zeros(0, 3), "list": [base[:3], (base[5:7], 3)]}
    expected, got = torch.load(io.BytesIO(legacy_bytes(obj))), ember.load(io.BytesIO(legacy_bytes(obj)))
    for key in ("row", "col", "t", "p", "empty"):
        assert_same(got[key], expected[key])
    assert isinstance(got["p"], ember.nn.Parameter)
    assert_same(got["list"][0], expected["list"][0])
    assert_same(got["list"][1][0], expected["list"][1][0]) and got["list"][1][1] == 3
    got["row"][2] = 100.0  # one storage, as PyTorch rebuilds it: the write shows through every view of it
    assert got["col"][1].item() == 100.0 and got["t"][2, 1].item() == 100.0


def test_weights_only_refuses_what_torch_refuses():
    data = legacy_bytes({"args": argparse.Namespace(lr=0.1), "w": torch.ones(2)})
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(io.BytesIO(data))
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ember.load(io.BytesIO(data))
    got = ember.load(io.BytesIO(data), weights_only=False)
    assert got["args"].lr == 0.1 and got["w"].tolist() == [1.0, 1.0]


def test_truncated_file_is_an_error_naming_it(tmp_path):
    data = legacy_bytes({"w": torch.arange(100, dtype=torch.float32)})
    path = tmp_path / "cut.pt"
    path.write_bytes(data[:-40])
    with pytest.raises(RuntimeError, match="cut.pt"):
        ember.load(path)


def test_other_pickles_are_still_refused(tmp_path):
    path = tmp_path / "plain.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(RuntimeError, match="plain.pkl"):
        ember.load(path)


class _StorageRef:
    """Pickled as a persistent id, as PyTorch 0.3's torch.save wrote a FloatStorage."""


class _OldTensor:
    """Pickled as PyTorch 0.3 pickled a tensor: ``_rebuild_tensor(storage, offset, size, stride)``."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride)

    def __reduce__(self):
        return torch._utils._rebuild_tensor, self.args


def _pytorch_03_file(values: np.ndarray) -> bytes:
    """A legacy file as PyTorch 0.3 wrote it (``_rebuild_tensor``, no requires_grad), made by hand."""
    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return ("storage", torch.FloatStorage, "0", "cpu", values.size, None) if obj is storage else None

    storage = _StorageRef()
    buf = io.BytesIO()
    for header in (0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True}):
        pickle.dump(header, buf, protocol=2)
    state = OrderedDict(weight=_OldTensor(storage, 0, (2, 3), (3, 1)), bias=_OldTensor(storage, 3, (3,), (1,)))
    Pickler(buf, protocol=2).dump({"state_dict": state, "best_prec1": 90.0})
    pickle.dump(["0"], buf, protocol=2)
    buf.write(np.int64(values.size).tobytes() + values.astype("<f4").tobytes())
    return buf.getvalue()


def test_pytorch_03_rebuild_tensor():
    data = _pytorch_03_file(np.arange(6, dtype=np.float32) / 4)
    expected, got = torch.load(io.BytesIO(data)), ember.load(io.BytesIO(data))
    assert got["best_prec1"] == expected["best_prec1"]
    for k in ("weight", "bias"):
        assert_same(got["state_dict"][k], expected["state_dict"][k])
