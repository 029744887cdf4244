"""``torch.utils.backcompat`` against torch: PyTorch 0.2's broadcast and keepdim warning switches, which 2017
programs still set at their top (pytorch-trpo's ``broadcast_warning.enabled = True``): their values, PyTorch's
RuntimeError for a value that is not a bool, and that no result depends on them."""

import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.utils.backcompat as torch_backcompat

import ember
import ember.utils.backcompat as ember_backcompat

SWITCHES = ["broadcast_warning", "keepdim_warning"]


@pytest.fixture(autouse=True)
def restore_switches():
    """The switches are process-wide in both libraries: leave them as found."""
    saved = [(m, s, getattr(m, s).enabled) for m in (torch_backcompat, ember_backcompat) for s in SWITCHES]
    yield
    for module, switch, value in saved:
        getattr(module, switch).enabled = value


@pytest.mark.parametrize("switch", SWITCHES)
def test_switch_reads_back_as_torch(switch):
    ours, theirs = getattr(ember_backcompat, switch), getattr(torch_backcompat, switch)
    assert ours.enabled is theirs.enabled is False
    for value in (True, False, True):
        ours.enabled = theirs.enabled = value
        assert ours.enabled is theirs.enabled is value
        assert ours.get_enabled() is theirs.get_enabled() is value
    ours.set_enabled(False)
    theirs.set_enabled(False)
    assert ours.enabled is theirs.enabled is False
    assert type(ours).__name__ == type(theirs).__name__ == "Warning"


@pytest.mark.parametrize("switch", SWITCHES)
@pytest.mark.parametrize("value", [1, 0, None, 2.0, "yes", np.bool_(True)])
def test_non_bool_is_refused_as_torch(switch, value):
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch_backcompat, switch).enabled = value
    with pytest.raises(RuntimeError) as ours:
        getattr(ember_backcompat, switch).enabled = value
    assert str(ours.value) == str(theirs.value)
    assert getattr(ember_backcompat, switch).enabled is False


def test_tensor_value_is_refused_as_torch():
    with pytest.raises(RuntimeError, match="expects a bool, but got Tensor"):
        torch_backcompat.broadcast_warning.enabled = torch.tensor(True)
    with pytest.raises(RuntimeError, match="expects a bool, but got Tensor"):
        ember_backcompat.broadcast_warning.enabled = ember.tensor(True)


def test_switches_change_no_result():
    """PyTorch no longer reads the switches: broadcasting and reductions give what they give without them."""
    for module in (torch_backcompat, ember_backcompat):
        module.broadcast_warning.enabled = module.keepdim_warning.enabled = True
    a, b = np.arange(3.0).reshape(3, 1), np.arange(4.0)
    e, t = ember.tensor(a) + ember.tensor(b), torch.tensor(a) + torch.tensor(b)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert tuple(ember.ones(3, 4).sum(1).shape) == tuple(torch.ones(3, 4).sum(1).shape) == (3,)


def test_program_setting_the_switch_runs_under_compat(tmp_path):
    """The way TRPO's main.py opens: ``torch.utils.backcompat`` reached as an attribute after ``import torch``."""
    script = tmp_path / "script.py"
    script.write_text("import torch\n"
                      "torch.utils.backcompat.broadcast_warning.enabled = True\n"
                      "from torch.utils.backcompat import keepdim_warning\n"
                      "print(torch.utils.backcompat.broadcast_warning.enabled, keepdim_warning.enabled)\n")
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "True False\n"
