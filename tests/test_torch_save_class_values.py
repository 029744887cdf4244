"""A class or function kept as a value (``{"act": nn.ReLU, "fn": F.relu}``) is written in PyTorch's format as
torch.save writes it, a GLOBAL (ember's own under PyTorch's name, which its namespaces mirror), and read as
torch.load reads it: weights_only=True refuses it with PyTorch's error unless allowlisted, weights_only=False
imports the name (the module's import-time code runs: trusted files only) and gives the class back, never calling
it. Under ``python -m ember.compat``, torch.save of such a checkpoint writes PyTorch's format, no longer ember's
with a warning."""

import io
import pickle
import zipfile

import pytest
import torch

import ember


def _checkpoint(lib):
    return {"act": lib.nn.ReLU, "fn": lib.nn.functional.relu, "again": lib.nn.ReLU, "init": lib.nn.init.zeros_,
            "builtin": len, "type": int, "t": lib.ones(2), "n": 3}


def _torch_file() -> bytes:
    buf = io.BytesIO()
    torch.save(_checkpoint(torch), buf)
    return buf.getvalue()


def _ember_file() -> bytes:
    buf = io.BytesIO()
    ember.save(_checkpoint(ember), buf, format="torch")
    return buf.getvalue()


def test_the_file_is_pytorchs_byte_for_byte():
    assert _ember_file() == _torch_file()


def _unsupported(message: str) -> str:
    return next(line for line in message.splitlines() if "Unsupported global" in line).replace("ember.", "torch.")


@pytest.mark.parametrize("make", [_torch_file, _ember_file])
def test_weights_only_refuses_it_with_pytorchs_error(make):
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(io.BytesIO(make()), weights_only=True)
    with pytest.raises(pickle.UnpicklingError) as ours:
        ember.load(io.BytesIO(make()), weights_only=True)
    assert str(ours.value).startswith("Weights only load failed")
    assert _unsupported(str(ours.value)) == _unsupported(str(theirs.value))
    assert "GLOBAL torch.nn.modules.activation.ReLU was not an allowed global" in str(ours.value)


@pytest.mark.parametrize("make", [_torch_file, _ember_file])
def test_without_weights_only_the_names_are_imported(make):
    back = ember.load(io.BytesIO(make()), weights_only=False)
    assert back["act"] is ember.nn.ReLU and back["again"] is ember.nn.ReLU
    assert back["fn"] is ember.nn.functional.relu and back["init"] is ember.nn.init.zeros_
    assert back["builtin"] is len and back["type"] is int and back["n"] == 3
    assert ember.equal(back["t"], ember.ones(2))
    theirs = torch.load(io.BytesIO(make()), weights_only=False)
    assert theirs["act"] is torch.nn.ReLU and theirs["fn"] is torch.nn.functional.relu


def test_allowlisted_names_load_with_weights_only():
    allow = [ember.nn.ReLU, ember.nn.functional.relu, ember.nn.init.zeros_, len, int]
    with ember.serialization.safe_globals(allow):
        back = ember.load(io.BytesIO(_torch_file()))
    assert back["act"] is ember.nn.ReLU and back["builtin"] is len


# PyTorch classes and functions ember may not have (the first that it lacks is used: ember never imports PyTorch's)
_PYTORCH_ONLY = ["torch.nn.modules.normalization.CrossMapLRN2d", "torch.nn.modules.pooling.FractionalMaxPool3d",
                 "torch.nn.modules.rnn.RNNBase", "torch.nn.modules.batchnorm.LazyBatchNorm3d",
                 "torch.nn.functional.fractional_max_pool3d"]


def test_a_pytorch_name_ember_lacks_kept_as_a_value_is_refused_with_or_without_weights_only():
    """A class or function kept as a value under a torch name ember has no counterpart for is never imported (the
    name would import PyTorch's own module): refused with weights_only=False too, naming the path; weights_only=True
    refuses it as PyTorch does, an unsupported global."""
    import importlib

    from ember.serialization import _globals

    path = next(p for p in _PYTORCH_ONLY if _globals.ember_counterpart(p) is None)
    module, _, name = path.rpartition(".")
    buf = io.BytesIO()
    torch.save({"value": getattr(importlib.import_module(module), name), "n": 3}, buf)
    with pytest.raises(RuntimeError, match=f"the file's pickle names {path}, which ember's reader of PyTorch files "
                                           "does not build, even with weights_only=False"):
        ember.load(io.BytesIO(buf.getvalue()), weights_only=False)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ember.load(io.BytesIO(buf.getvalue()), weights_only=True)


def test_a_whole_model_is_still_refused_even_without_weights_only(tmp_path):
    torch.save(torch.nn.Sequential(torch.nn.ReLU()), tmp_path / "whole.pt")
    with pytest.raises(RuntimeError, match="even with weights_only=False"):
        ember.load(tmp_path / "whole.pt", weights_only=False)


def test_what_pytorch_cannot_find_is_refused_before_writing():
    for private in (ember.Tensor, ember.serialization.safe_globals.__wrapped__):
        with pytest.raises(TypeError, match="cannot store a reference"):
            ember.save({"x": private}, io.BytesIO(), format="torch")


_COMPAT = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.save({"act": nn.ReLU, "fn": F.relu, "w": torch.ones(2)}, sys.argv[1] + "/ckpt.pt")
back = torch.load(sys.argv[1] + "/ckpt.pt", weights_only=False)
print(back["act"] is nn.ReLU, back["fn"] is F.relu)
"""


def test_torch_save_under_the_compat_runner_writes_pytorchs_format(tmp_path):
    from conftest import run_under_compat

    out = run_under_compat(_COMPAT, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    assert out.stdout.split() == ["True", "True"]
    with zipfile.ZipFile(tmp_path / "ckpt.pt") as zf:
        assert any(n.endswith("data.pkl") for n in zf.namelist())
    theirs = torch.load(tmp_path / "ckpt.pt", weights_only=False)
    assert theirs["act"] is torch.nn.ReLU and theirs["fn"] is torch.nn.functional.relu
