"""PyTorch's earlier module names for DTensor, the device mesh and FSDP2, which programs written for PyTorch 2.1–2.3
import: each gives the same objects as the current name (those ember has of PyTorch's)."""

import importlib

import pytest
import torch  # noqa: F401  (the oracle: its modules' names)

OLD_NAMES = {
    "distributed._tensor": "distributed.tensor",
    "distributed._tensor.device_mesh": "distributed.device_mesh",
    "distributed._composable.fsdp": "distributed.fsdp",
}


@pytest.mark.parametrize("old", list(OLD_NAMES))
def test_the_old_name_gives_the_current_objects(old):
    ember_old = importlib.import_module(f"ember.{old}")
    torch_old = importlib.import_module(f"torch.{old}")
    current = importlib.import_module(f"ember.{OLD_NAMES[old]}")
    device_mesh = importlib.import_module("ember.distributed.device_mesh")
    assert ember_old.__all__
    for name in ember_old.__all__:
        assert hasattr(torch_old, name), f"torch.{old} has no {name}"
        assert getattr(ember_old, name) is getattr(current, name, None) or \
            getattr(ember_old, name) is getattr(device_mesh, name), f"ember.{old}.{name}"


def test_under_compat_a_program_imports_the_old_names(tmp_path):
    import subprocess
    import sys

    from conftest import ROOT

    program = tmp_path / "old.py"
    program.write_text("from torch.distributed._tensor import Shard, Replicate, DTensor\n"
                       "from torch.distributed._tensor.device_mesh import init_device_mesh\n"
                       "from torch.distributed._composable.fsdp import fully_shard, MixedPrecisionPolicy\n"
                       "import torch.distributed.tensor as t\n"
                       "assert Shard is t.Shard and DTensor is t.DTensor\n"
                       "print('ok', Shard(0), Replicate(), repr(Shard(1)))\n")
    proc = subprocess.run([sys.executable, "-m", "ember.compat", str(program)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**__import__("os").environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stderr
    from torch.distributed.tensor import Replicate, Shard  # PyTorch's str and repr of the placements

    assert proc.stdout.strip() == f"ok {Shard(0)} {Replicate()} {Shard(1)!r}"
