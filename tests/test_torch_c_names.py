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
                                                  r".*C\+\+ core.*_LinAlgError, _TensorMeta, _are_functorch_transforms_active, "
                                                  r"_log_api_usage_once, _nn._parse_to"):
        ember._C._jit_get_operation("aten::add")
    with pytest.raises(AttributeError) as probe:  # a protocol probe: the usual error
        getattr(ember._C, "__wrapped__")  # noqa: B009 (the attribute access is the test)
    assert type(probe.value) is AttributeError


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


def _ember_value(value):
    """``value`` (a torch dtype, device, memory format or tensor) as ember's."""
    if isinstance(value, torch.Tensor):
        return ember.tensor(value.numpy())
    if isinstance(value, (torch.dtype, torch.memory_format)):
        return getattr(ember, str(value).rpartition(".")[2])
    return ember.device(str(value)) if isinstance(value, torch.device) else value


PARSE_TO_CASES = [
    ((), {}), (("cpu",), {}), (("meta",), {}), ((torch.device("cpu"), torch.float16, True), {}),
    ((torch.float32, True), {}), ((), {"dtype": torch.float64}), ((None,), {}), ((), {"tensor": torch.ones(1)}),
    ((torch.ones(2, dtype=torch.int8),), {"non_blocking": True}),
    (("cpu",), {"memory_format": torch.channels_last}), ((), {"device": "cpu", "dtype": torch.int32}),
    # PyTorch's errors: copy is refused, and arguments that fit none of the three overloads
    ((torch.float32,), {"copy": True}), (("cpu", "cpu"), {}), ((torch.float32, torch.float32), {}),
    ((), {"foo": 1}), ((torch.float32,), {"device": "cpu"}), (("cpu",), {"non_blocking": 1}),
    ((torch.device("cpu"), torch.channels_last), {}),
]


@pytest.mark.parametrize("args,kwargs", PARSE_TO_CASES)
def test_parse_to_reads_the_arguments_as_pytorchs(args, kwargs):
    """What Lightning's and accelerate's ``to`` overrides call: (device, dtype, non_blocking, memory_format)."""
    results = []
    for parse, convert in ((torch._C._nn._parse_to, lambda v: v), (ember._C._nn._parse_to, _ember_value)):
        try:
            results.append(repr(parse(*map(convert, args), **{k: convert(v) for k, v in kwargs.items()})))
        except (TypeError, RuntimeError) as e:
            results.append(f"{type(e).__name__}: {e}")
    assert results[1].replace("ember.", "torch.") == results[0]


@pytest.mark.parametrize("args,kwargs", [a for a in PARSE_TO_CASES if "tensor" not in a[1] and not any(
    isinstance(v, torch.Tensor) or v == "meta" or v in (torch.int32,) for v in (*a[0], *a[1].values()))])
def test_module_to_takes_pytorchs_overloads(args, kwargs):
    """``Module.to`` reads its arguments as ``_parse_to`` does: PyTorch's errors for what fits no overload."""
    results = []
    for lib, convert in ((torch, lambda v: v), (ember, _ember_value)):
        model = lib.nn.Linear(2, 2)
        try:
            model.to(*map(convert, args), **{k: convert(v) for k, v in kwargs.items()})
            results.append(str(model.weight.dtype))
        except (TypeError, RuntimeError) as e:
            results.append(f"{type(e).__name__}: {e}")
    assert results[1].replace("ember.", "torch.") == results[0]


def test_nn_other_names_keep_the_reason():
    assert hasattr(torch._C._nn, "gelu") and not hasattr(ember._C._nn, "gelu")
    with pytest.raises(MissingFeatureError, match=r"torch\._C\._nn\.gelu is not implemented in ember"):
        ember._C._nn.gelu(ember.ones(1))


def test_functorch_transforms_active_inside_each_transform_as_pytorchs():
    """kornia asks it before writing in place: True while a torch.func transform runs the function, else False."""
    seen = {}
    for lib in (torch, ember):
        seen[lib] = flags = [lib._C._are_functorch_transforms_active()]

        def f(x, lib=lib, flags=flags):
            flags.append(lib._C._are_functorch_transforms_active())
            return (x * x).sum()

        x = lib.ones(3)
        lib.func.grad(f)(x)
        lib.func.vmap(lambda v, f=f: f(v[None]))(lib.ones(2, 3))
        lib.func.jvp(f, (x,), (x,))
        lib.func.jacrev(f)(x)
        lib.func.hessian(f)(x)
        _, vjp_fn = lib.func.vjp(lambda v: v * 2, x)
        vjp_fn(x)  # (the pullback runs after the transform: not inside it)
        flags.append(lib._C._are_functorch_transforms_active())
    assert seen[ember] == seen[torch]
    assert seen[ember][0] is False and seen[ember][-1] is False and all(seen[ember][1:-1])
