"""``load_state_dict`` given something other than a mapping (the model itself, a tensor, a list) raises PyTorch's
TypeError, which shows the class as ``repr`` does: ``<class 'torch.nn.modules.linear.Linear'>`` under
``python -m ember.compat``, ember's path when imported as ember."""

import subprocess
import sys

import pytest
import torch
from conftest import run_under_compat

import ember

SOURCE = """
import torch
for value in ([1], 3, torch.nn.Linear(2, 2), torch.ones(2), torch.nn.Linear(2, 2).weight, {1, 2}):
    try:
        torch.nn.Linear(2, 2).load_state_dict(value)
    except TypeError as e:
        print(e)
"""


def test_messages_as_torch_under_compat(tmp_path):
    want = subprocess.run([sys.executable, "-c", SOURCE], capture_output=True, text=True, timeout=120)
    got = run_under_compat(SOURCE, tmp_path)
    assert got.returncode == 0, got.stderr
    assert want.stdout.count("Expected state_dict to be dict-like") == 6
    assert got.stdout == want.stdout


def test_ember_classes_named_by_their_ember_path_when_imported_as_ember():
    for m in (ember, torch):
        with pytest.raises(TypeError) as info:
            m.nn.Linear(2, 2).load_state_dict(m.nn.Linear(2, 2))
        assert str(info.value) == f"Expected state_dict to be dict-like, got <class '{m.__name__}.nn.modules.linear.Linear'>."
