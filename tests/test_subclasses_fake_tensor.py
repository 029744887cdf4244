"""``torch._subclasses.fake_tensor.is_fake``, which kornia asks before a data-dependent path: ember makes no fake
tensors (it traces nothing), so every tensor answers as PyTorch's real and meta tensors do."""

import subprocess
import sys
import textwrap

import torch
from conftest import ROOT
from torch._subclasses.fake_tensor import is_fake as torch_is_fake

import ember
from ember._subclasses.fake_tensor import is_fake


def test_real_and_meta_tensors_are_not_fake_as_pytorchs():
    for make in (lambda lib: lib.ones(2), lambda lib: lib.empty(2, 3, device="meta"),
                 lambda lib: lib.nn.Parameter(lib.zeros(1)), lambda lib: 3.0):
        assert is_fake(make(ember)) is torch_is_fake(make(torch)) is False
    with torch._subclasses.fake_tensor.FakeTensorMode():  # (what PyTorch's answers True for: none such in ember)
        assert torch_is_fake(torch.ones(2))


def test_import_under_compat(tmp_path):
    script = tmp_path / "fake.py"
    script.write_text(textwrap.dedent("""
        import torch
        from torch._subclasses.fake_tensor import is_fake
        print(is_fake(torch.ones(2)), torch._subclasses.fake_tensor.is_fake is is_fake)
    """))
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": ROOT, "PATH": ""}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
