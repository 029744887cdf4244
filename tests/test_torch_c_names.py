"""``torch._C``: the few names pure-Python libraries call (torchmetrics' ``_log_api_usage_once``, torchdiffeq's
``_LinAlgError``, Lightning's ``_TensorMeta``), each as PyTorch's; every other name keeps ember's reason."""

import subprocess
import sys
import textwrap

import pytest
import torch
from conftest import ROOT

import ember
from ember._missing import MissingFeatureError


def test_log_api_usage_once_is_a_no_op_as_pytorchs():
    for event in ("torchmetrics.metric.Accuracy", "", "torchvision.models.resnet"):
        assert ember._C._log_api_usage_once(event) is torch._C._log_api_usage_once(event) is None
    for bad in (1, None, b"x"):  # PyTorch's binding takes a str only
        with pytest.raises(TypeError) as theirs:
            torch._C._log_api_usage_once(bad)
        with pytest.raises(TypeError, match=str(theirs.value)):
            ember._C._log_api_usage_once(bad)


def test_linalg_error_is_the_public_class_and_catches_a_singular_solve():
    assert torch._C._LinAlgError is torch.linalg.LinAlgError
    assert ember._C._LinAlgError is ember.linalg.LinAlgError
    with pytest.raises(ember._C._LinAlgError):  # what torchdiffeq's solver falls back on
        ember.linalg.solve(ember.zeros(2, 2), ember.ones(2))


def test_tensor_meta_is_the_metaclass_of_tensor():
    assert type(torch.Tensor) is torch._C._TensorMeta
    assert type(ember.Tensor) is ember._C._TensorMeta
    assert isinstance(ember.Tensor, ember._C._TensorMeta)


def test_other_names_keep_the_reason_and_name_what_exists():
    # PyTorch has it; ember says why it does not, which names it has, and hasattr stays False (an AttributeError)
    assert hasattr(torch._C, "_jit_get_operation") and not hasattr(ember._C, "_jit_get_operation")
    with pytest.raises(MissingFeatureError, match=r"torch\._C\._jit_get_operation is not implemented in ember: "
                                                  r".*C\+\+ core.*_LinAlgError, _TensorMeta, _log_api_usage_once"):
        ember._C._jit_get_operation("aten::add")
    assert not hasattr(ember._C, "__path__")  # a plain module, as import machinery probes it


def test_compat_import_forms(tmp_path):
    """Under ``python -m ember.compat``: ``torch._C`` and ``from torch._C import ...`` as libraries write them."""
    script = tmp_path / "c_names.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch._C
        from torch._C import _TensorMeta, _log_api_usage_once
        assert torch._C is __import__("ember")._C and _TensorMeta is type(torch.Tensor)
        _log_api_usage_once("lightning.trainer")
        try:
            from torch._C import _jit_set_profiling_mode
        except ImportError as e:
            print("refused:", e)
    """))
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": ROOT, "PATH": ""}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "_jit_set_profiling_mode" in out.stdout, out.stdout
