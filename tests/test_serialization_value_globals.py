"""Classes and functions a PyTorch file keeps as values, read and written as PyTorch does.

PyTorch's weights-only loader gives back, by default, the classes it allowlists (``OrderedDict``, ``Counter``,
``set``, ``bytearray``, ``complex``, ``torch.Size``, ``torch.device``, ``torch.Tensor``, ``nn.Parameter``) where a
file keeps them as values, and refuses any other (``dict``, ``frozenset``) unless allowlisted. A function PyTorch
implements in C is pickled by its C path (``F.gelu`` as ``torch._C._nn gelu``, ``torch.special.erf`` as
``torch._C._special special_erf``): ember writes those bytes for its counterparts and reads both spellings."""

import collections
import io
import pickle
import pickletools
import zipfile

import pytest
import torch

import ember


def _saved(save, obj, **kwargs) -> io.BytesIO:
    buffer = io.BytesIO()
    save(obj, buffer, **kwargs)
    buffer.seek(0)
    return buffer


def _globals(buffer: io.BytesIO) -> list:
    archive = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    data = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
    return [arg for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"]


VALUE_CLASSES = {  # PyTorch's class: ember's
    "OrderedDict": (collections.OrderedDict, collections.OrderedDict),
    "Counter": (collections.Counter, collections.Counter),
    "set": (set, set), "bytearray": (bytearray, bytearray), "complex": (complex, complex),
    "Size": (torch.Size, ember.Size), "device": (torch.device, ember.device), "Tensor": (torch.Tensor, ember.Tensor),
    "Parameter": (torch.nn.Parameter, ember.nn.Parameter),
}


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("name", VALUE_CLASSES)
def test_allowed_classes_as_values_load_as_in_pytorch(name, weights_only):
    theirs, ours = VALUE_CLASSES[name]
    buffer = _saved(torch.save, {"cls": theirs, "in_list": [theirs]})
    assert torch.load(buffer, weights_only=weights_only) == {"cls": theirs, "in_list": [theirs]}
    buffer.seek(0)
    assert ember.load(buffer, weights_only=weights_only) == {"cls": ours, "in_list": [ours]}


@pytest.mark.parametrize("cls", [dict, frozenset, collections.defaultdict])
def test_other_classes_as_values_refused_weights_only_as_in_pytorch(cls):
    buffer = _saved(torch.save, {"cls": cls})
    with pytest.raises(pickle.UnpicklingError):
        torch.load(buffer, weights_only=True)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ember.load(buffer, weights_only=True)
    buffer.seek(0)
    assert ember.load(buffer, weights_only=False) == {"cls": cls}


def test_a_counter_loads_as_in_pytorch():
    buffer = _saved(torch.save, {"c": collections.Counter("aab")})
    assert ember.load(buffer, weights_only=True) == torch.load(_saved(torch.save, {"c": collections.Counter("aab")}))
    buffer.seek(0)
    assert type(ember.load(buffer, weights_only=True)["c"]) is collections.Counter


FUNCTIONS = {  # PyTorch's function: ember's (C functions, renamed ones, and Python ones as they were)
    "gelu": (torch.nn.functional.gelu, ember.nn.functional.gelu),
    "softplus": (torch.nn.functional.softplus, ember.nn.functional.softplus),
    "logsigmoid": (torch.nn.functional.logsigmoid, ember.nn.functional.logsigmoid),  # (C: log_sigmoid)
    "relu": (torch.nn.functional.relu, ember.nn.functional.relu),  # (Python: its public path)
    "special.erf": (torch.special.erf, ember.special.erf),
    "fft.rfft": (torch.fft.rfft, ember.fft.rfft),
    "linalg.det": (torch.linalg.det, ember.linalg.det),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_as_values_written_and_read_as_pytorch(name):
    theirs, ours = FUNCTIONS[name]
    written = _saved(ember.save, {"f": ours}, format="torch")
    expected = _saved(torch.save, {"f": theirs})
    assert _globals(written) == _globals(expected)  # PyTorch's bytes for the reference
    assert torch.load(written, weights_only=False)["f"] is theirs
    assert ember.load(expected, weights_only=False)["f"] is ours  # the C path read back
    written.seek(0)
    assert ember.load(written, weights_only=False)["f"] is ours
    expected.seek(0)
    with ember.serialization.safe_globals([ours]):
        assert ember.load(expected, weights_only=True)["f"] is ours
