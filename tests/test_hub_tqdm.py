"""``torch.hub.tqdm`` / ``torch.utils.model_zoo.tqdm``: the tqdm package's progress bar, as PyTorch's, loaded on
first use; PyTorch's plain stand-in when tqdm is not installed."""

import sys

import torch.hub
import torch.utils.model_zoo

import ember.hub
import ember.utils.model_zoo


def test_the_names_are_pytorchs_tqdm():
    assert ember.hub.tqdm is torch.hub.tqdm
    assert ember.utils.model_zoo.tqdm is torch.utils.model_zoo.tqdm


def test_without_the_package_the_stand_in_writes_pytorchs_progress_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # (import tqdm now raises ImportError)
    bar_type = ember.hub.tqdm  # (looked up on each use)
    assert bar_type is not torch.hub.tqdm
    with bar_type(total=200, unit="B") as bar:
        bar.update(50)
        bar.update(50)
    with bar_type(total=None) as bar:
        bar.update(3)
    with bar_type(total=10, disable=True) as bar:
        bar.update(5)
    assert capsys.readouterr().err == "\r25.0%\r50.0%\n\r3.0 bytes\n"
    assert bar.n == 0


def test_a_missing_name_is_still_reported():
    import pytest

    for module in (ember.hub, ember.utils.model_zoo):
        with pytest.raises(AttributeError, match="is not implemented in ember"):
            getattr(module, "no_such_name")  # noqa: B009
