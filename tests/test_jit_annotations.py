"""``torch.jit.annotations``: the typing names TorchScript-era model code imports (timm's ``from
torch.jit.annotations import List``), the very objects of ``typing``, as PyTorch's."""

import subprocess
import sys
import textwrap
import typing

import pytest
import torch.jit.annotations as torch_annotations
from conftest import ROOT

import ember.jit
import ember.jit.annotations as ember_annotations


@pytest.mark.parametrize("name", ember_annotations.__all__)
def test_names_are_typings_as_pytorchs(name):
    assert getattr(torch_annotations, name) is getattr(typing, name) is getattr(ember_annotations, name)


def test_reachable_from_jit_and_missing_names_named():
    assert ember.jit.annotations is ember_annotations  # (torch.jit.annotations after import torch, as PyTorch's)
    with pytest.raises(AttributeError, match=r"torch\.jit\.annotations\.BroadcastingList2 is not implemented"):
        ember_annotations.BroadcastingList2[int]


def test_import_under_compat(tmp_path):
    script = tmp_path / "annotated.py"
    script.write_text(textwrap.dedent("""
        from torch.jit.annotations import List, Tuple
        import torch

        def sizes(x: torch.Tensor) -> List[Tuple[int, int]]:
            return [tuple(x.shape)]

        print(sizes(torch.ones(2, 3)), torch.jit.is_scripting())
    """))
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": ROOT, "PATH": ""}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[(2, 3)] False"
