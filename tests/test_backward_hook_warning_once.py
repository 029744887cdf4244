"""A deprecated (non-full) backward hook's FutureWarning shows as often as PyTorch's under Python's default
filter: PyTorch issues it from one line of its own ``Module`` code, so a program that calls the hooked module from
several lines, or several hooked modules (KFAC-style optimizers hook every layer), sees it once, not once per
calling line."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = """
import {lib} as torch

net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
net.register_backward_hook(lambda *a: None)
other = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
other.register_backward_hook(lambda *a: None)
x = torch.ones(1, 2, requires_grad=True)
a = net(x)
b = net(x)
c = other(x)
(a + b + c).sum().backward()
print("done")
"""


def _warnings_shown(lib, tmp_path):
    script = tmp_path / f"{lib}_program.py"
    script.write_text(PROGRAM.format(lib=lib))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env=dict(env, PYTHONPATH=ROOT), cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == "done\n", out.stderr
    return [line.partition("FutureWarning: ")[2] for line in out.stderr.splitlines() if "FutureWarning: " in line]


def test_non_full_backward_hook_warns_once_as_torch(tmp_path):
    expected = _warnings_shown("torch", tmp_path)
    assert len(expected) == 1 and "forward contains multiple autograd Nodes" in expected[0], expected
    assert _warnings_shown("ember", tmp_path) == expected
