"""NumPy arrays and scalars in PyTorch's checkpoint format: written as PyTorch's pickle writes them, read back by
both, refused by a weights_only load under the same allowlist rule (PyTorch is the oracle)."""

import io
import pickle
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember import serialization

_G = np.random.default_rng(0)
_BASE = _G.standard_normal((3, 4)).astype(np.float32)
ARRAYS = {
    "float32": _BASE, "transposed": _BASE.T, "strided": _BASE[::2, 1:], "0d": np.array(2.5),
    "empty": np.zeros((0, 3), dtype=np.float64), "int64": np.arange(6).reshape(2, 3), "bool": _BASE > 0,
    "float16": _BASE.astype(np.float16), "complex": (_BASE + 1j * _BASE).astype(np.complex64),
    "big_endian": np.arange(4, dtype=">i2"), "uint8": np.arange(5, dtype=np.uint8),
}
SCALARS = [np.float32(1.5), np.float64(-2.25), np.int64(7), np.bool_(True), np.uint8(3)]
# what a program allowlists to load them weights-only (PyTorch's message names each in turn)
SAFE = [np._core.multiarray._reconstruct, np._core.multiarray.scalar, np.ndarray, np.dtype, bytes,
        *{type(np.dtype(a.dtype)) for a in [*ARRAYS.values(), *SCALARS]}]


def _checkpoint() -> dict:
    return {"arrays": ARRAYS, "scalars": SCALARS, "w": 3}


def _saved(save, obj) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _ember_torch_format(obj, f):
    ember.save(obj, f, format="torch")


def _assert_same_numpy(got, want):
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            _assert_same_numpy(got[k], want[k])
    elif isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same_numpy(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape, (got, want)
        np.testing.assert_array_equal(got, want)
        if isinstance(want, np.ndarray):
            assert got.flags.writeable
    else:
        assert type(got) is type(want) and got == want


def _refusal(load, data: bytes, safe=()):
    serializations = (torch.serialization, serialization)
    with serializations[0].safe_globals(list(safe)), serializations[1].safe_globals(list(safe)):
        with pytest.raises(pickle.UnpicklingError) as info:
            load(io.BytesIO(data))
    return str(info.value)


def _what_is_refused(message: str) -> str:
    """The global (or the class BUILD would fill) a weights-only refusal names."""
    if "Unsupported global: GLOBAL " in message:
        return message.split("Unsupported global: GLOBAL ")[1].split()[0]
    return message.split("but got ")[1].split(">")[0] + ">"


@pytest.mark.parametrize("writer", ["torch", "ember"])
def test_numpy_arrays_and_scalars_round_trip_between_pytorch_and_ember(writer):
    # the oracle: what torch.load gives for torch.save's file (a big-endian array comes back in native order, as
    # from NumPy's own pickle)
    want = torch.load(io.BytesIO(_saved(torch.save, _checkpoint())), weights_only=False)
    np.testing.assert_array_equal(want["arrays"]["big_endian"], ARRAYS["big_endian"])
    save = torch.save if writer == "torch" else _ember_torch_format
    data = _saved(save, _checkpoint())
    for load in (torch.load, ember.load):
        _assert_same_numpy(load(io.BytesIO(data), weights_only=False), want)
        with torch.serialization.safe_globals(SAFE), serialization.safe_globals(SAFE):
            _assert_same_numpy(load(io.BytesIO(data)), want)


@pytest.mark.parametrize("writer", ["torch", "ember"])
@pytest.mark.parametrize("allowed", [0, 1, 2, 3, 4])
def test_a_weights_only_load_refuses_numpy_objects_as_pytorch_does(writer, allowed):
    # allowlisting the globals one at a time, PyTorch names the next: the same one, in ember's loader too; with every
    # global allowed but the dtype's class, both refuse to give the dtype its state (BUILD)
    save = torch.save if writer == "torch" else _ember_torch_format
    data = _saved(save, {"a": ARRAYS["float32"]})
    safe = [np._core.multiarray._reconstruct, np.ndarray, np.dtype, np.dtypes.Float32DType][:allowed]
    if allowed == 4:
        with torch.serialization.safe_globals(safe), serialization.safe_globals(safe):
            _assert_same_numpy(ember.load(io.BytesIO(data)), torch.load(io.BytesIO(data)))
        return
    want = _refusal(torch.load, data, safe)
    got = _refusal(ember.load, data, safe)
    assert _what_is_refused(got) == _what_is_refused(want)
    assert got.startswith("Weights only load failed.")


@pytest.mark.parametrize("obj", [{"a": ARRAYS["float32"]}, {"s": np.float64(1.0)}, np.zeros(0), ARRAYS["transposed"]],
                         ids=["array", "scalar", "empty", "fortran"])
def test_get_unsafe_globals_names_what_pytorch_names_for_numpy_objects(obj):
    for save in (torch.save, _ember_torch_format):
        data = _saved(save, obj)
        assert sorted(serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))) == \
            sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)))


def test_numpy_arrays_of_other_dtypes_are_refused_by_name():
    # strings and objects: ember's PyTorch-format writer refuses them before writing, and its reader of PyTorch's
    # files names the dtype (it builds only bool, integer, float and complex arrays from their bytes)
    for bad in (np.array(["a", "bc"]), np.array([{}, 1], dtype=object)):
        with pytest.raises(TypeError, match="NumPy arrays and scalars"):
            ember.save({"a": bad}, io.BytesIO(), format="torch")
    data = _saved(torch.save, {"a": np.array(["a", "bc"])})
    with pytest.raises(RuntimeError, match="NumPy dtype 'U2'"):
        ember.load(io.BytesIO(data), weights_only=False)


def test_numpy_state_that_numpy_would_not_write_is_refused():
    good = _saved(torch.save, np.arange(3, dtype=np.int16))
    with zipfile.ZipFile(io.BytesIO(good)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    pkl = next(n for n in members if n.endswith("data.pkl"))
    # six bytes for three int16 elements: claim four elements instead
    members[pkl] = members[pkl].replace(b"K\x03\x85", b"K\x04\x85", 1)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n, raw in members.items():
            zf.writestr(n, raw)
    with pytest.raises(RuntimeError, match="has 6 bytes"):
        ember.load(io.BytesIO(buf.getvalue()), weights_only=False)


_COMPAT_SAVE_ARRAYS = """
import sys
import numpy as np
import torch

torch.save({"x": np.arange(3, dtype=np.float32), "step": np.int64(4), "w": torch.ones(2)}, sys.argv[1] + "/ckpt.pt")
"""


def test_torch_save_of_numpy_arrays_under_the_compat_runner_writes_pytorchs_format(tmp_path):
    # it wrote ember's format, which PyTorch cannot read, with a warning saying so
    from conftest import run_under_compat

    out = run_under_compat(_COMPAT_SAVE_ARRAYS, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    got = torch.load(tmp_path / "ckpt.pt", weights_only=False)
    np.testing.assert_array_equal(got["x"], np.arange(3, dtype=np.float32))
    assert type(got["step"]) is np.int64 and got["step"] == 4
    assert torch.equal(got["w"], torch.ones(2))
