"""An allowed global in a torch checkpoint called with each number of arguments around its forms, against PyTorch's
weights-only loader: a call PyTorch's unpickler makes (``set()``, ``set(items)``, ``OrderedDict(pairs)``,
``torch.Size(dims)``, ``torch.device(type, index)``, ``complex(real, imag)`` ...) loads as PyTorch's does; a call with more arguments than
its function takes (which Python itself refuses) is refused by both, ember's RuntimeError naming the file. A bound
on the argument count off by one in ember's unpickler (``<= 1`` written ``<= 2``) builds a value from part of the
call instead."""

from __future__ import annotations

import collections
import io
import pickle
import zipfile

import pytest
import torch

import ember


class _Call:
    """Pickled as a call of ``fn`` with ``args`` (REDUCE of the global)."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _torch_file(obj) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pickle.dumps(obj, protocol=2))
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()


CALLS = {
    "set()": (set,),
    "set(list)": (set, [1, 2, 2]),
    "set(list, list)": (set, [1], [2]),
    "set(tuple, tuple)": (set, (1,), (2,)),
    "OrderedDict()": (collections.OrderedDict,),
    "OrderedDict(pairs)": (collections.OrderedDict, [("a", 1), ("b", 2)]),
    "OrderedDict(pairs, pairs)": (collections.OrderedDict, [("a", 1)], [("b", 2)]),
    "Size(dims)": (torch.Size, (2, 3)),
    "Size(dims, dims)": (torch.Size, (2, 3), (4,)),
    "device(type)": (torch.device, "cpu"),
    "device(type, index)": (torch.device, "cpu", 0),
    "device(type, index, more)": (torch.device, "cpu", 0, 1),
    "complex(real)": (complex, 1.5),
    "complex(real, imag)": (complex, 1, -2.5),  # (what pickle writes for 1-2.5j)
    "complex(real, imag, more)": (complex, 1.0, 2.0, 3.0),
}


def _load(m, data: bytes, weights_only: bool = True):
    try:
        out = m.load(io.BytesIO(data), weights_only=weights_only)
    except Exception as err:  # noqa: BLE001 - refused: compared with PyTorch's refusal
        return "refused", err
    return "loaded", out


@pytest.mark.parametrize("call", list(CALLS))
def test_an_allowed_global_called_with_each_count_of_arguments_as_pytorch(call):
    data = _torch_file([_Call(*CALLS[call])])
    (mine, got), (theirs, want) = (_load(m, data) for m in (ember, torch))
    assert mine == theirs, (got, want)
    if theirs == "refused":
        assert isinstance(got, RuntimeError) and str(got).startswith("ember.load(<_io.BytesIO"), got
    else:
        assert type(got[0]).__name__ == type(want[0]).__name__
        assert str(got[0]).replace("ember.", "torch.") == str(want[0])


# (defaultdict is not among PyTorch's weights-only globals: its calls are compared under a trusted load. pickle
# writes a defaultdict as a call with its factory alone and sets its items after; a file may pass them in the call)
DEFAULTDICT_CALLS = {
    "defaultdict()": (collections.defaultdict,),
    "defaultdict(factory)": (collections.defaultdict, list),
    "defaultdict(factory, dict)": (collections.defaultdict, list, {"a": [1], "b": []}),
    "defaultdict(factory, pairs)": (collections.defaultdict, list, [("a", [1]), ("b", [])]),
    "defaultdict(None, dict)": (collections.defaultdict, None, {"a": 1}),
    "defaultdict(factory, number)": (collections.defaultdict, list, 3),
    "defaultdict(factory, dict, dict)": (collections.defaultdict, list, {"a": [1]}, {"b": []}),
}


@pytest.mark.parametrize("call", list(DEFAULTDICT_CALLS))
def test_a_defaultdict_called_with_each_count_of_arguments_as_pytorch(call):
    data = _torch_file([_Call(*DEFAULTDICT_CALLS[call])])
    (mine, got), (theirs, want) = (_load(m, data, weights_only=False) for m in (ember, torch))
    assert mine == theirs, (got, want)
    if theirs == "refused":
        assert isinstance(got, RuntimeError) and str(got).startswith("ember.load(<_io.BytesIO"), got
    else:
        assert type(got[0]) is type(want[0]) is collections.defaultdict
        assert got[0].default_factory is want[0].default_factory and got[0] == want[0]
