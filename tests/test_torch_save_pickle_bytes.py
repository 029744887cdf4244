"""ember.save(format="torch") writes the very file torch.save writes for the same object: its data.pkl is the pickle
CPython's C pickler makes of what PyTorch's __reduce_ex__ gives (the same opcodes, the same memo: strings, globals,
tuples, lists, dicts and tensors written once and referred to after, the storage keys and "storage"/"cpu" constants
of the persistent ids shared as PyTorch shares them), so the serialization id, a hash of the records, matches too."""

import io
import pickletools
import zipfile
from collections import OrderedDict, defaultdict

import numpy as np
import pytest
import torch

import ember


def _model_state(lib):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.BatchNorm1d(4))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.arange(p.numel(), dtype=lib.float32).reshape(p.shape) * (i + 1))
    return model.state_dict()  # (an OrderedDict with its _metadata: an attribute PyTorch's pickle keeps, BUILD)


def _shared(lib):
    x = lib.arange(24, dtype=lib.float32).reshape(2, 3, 4)
    return {"x": x, "row": x[:, 1], "t": x.transpose(0, 2), "item": x[1, 2, 3], "again": x,
            "every_other": x.reshape(4, 6)[::2], "empty": lib.zeros(0, 3), "scalar": lib.tensor(1.5)}


CASES = {
    "flat": lambda lib: {"a": lib.zeros(3), "b": 1, "c": 2.5, "d": "x", "e": None, "f": True},
    "model_state_dict": _model_state,
    "views_and_shared_storages": _shared,
    "nested": lambda lib: OrderedDict(layer={"w": lib.ones(2, 3), "b": lib.zeros(2)}, lst=[1, 2, [3, "s"]],
                                      size=lib.Size([2, 3]), no_size=lib.Size([]), tup=(1, (2, 3, 4, 5), ()),
                                      one=OrderedDict(a=1)),
    "repeated_strings": lambda lib: {"k": ["a", "a", "b"], "cpu": "cpu", "storage": "storage",
                                     "t": lib.ones(1), "n": [1.5, 1.5]},
    "parameters": lambda lib: {"p": lib.nn.Parameter(lib.ones(2)), "g": lib.ones(2).requires_grad_(),
                               "frozen": lib.nn.Parameter(lib.zeros(1), requires_grad=False)},
    "ints_of_every_width": lambda lib: [0, 255, 256, 65535, 65536, -1, -128, -129, 2**31 - 1, 2**31, -2**31,
                                        -2**31 - 1, 2**40, -2**40, 2**63, -2**63, 2**64 - 1],
    "batches_of_a_thousand": lambda lib: {"list": list(range(1001)), "dict": {f"k{i}": i for i in range(1001)},
                                          "ordered": OrderedDict((f"k{i}", [i]) for i in range(2001)),
                                          "one": [lib.ones(1)], "single": {"a": 1}},
    "dtypes_devices_sets": lambda lib: {
        "tensors": [lib.zeros(2, dtype=d) for d in (lib.int64, lib.bool, lib.uint8, lib.float64, lib.float16,
                                                    lib.complex64, lib.float32, lib.int64)],
        "dtype": lib.float32, "devices": [lib.device("cpu"), lib.device("cpu")], "set": {1, 2},
        "factory": defaultdict(list, a=[1]), "no_factory": defaultdict(None)},
    "numpy": lambda lib: {"a": np.arange(3.0), "b": np.arange(3.0), "s": np.float32(2), "i": np.int64(3)},
}


def _save(save, obj) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _pickle_of(data: bytes) -> bytes:
    zf = zipfile.ZipFile(io.BytesIO(data))
    return zf.read(next(n for n in zf.namelist() if n.endswith("/data.pkl")))


def _opcodes(pkl: bytes) -> str:
    out = io.StringIO()
    pickletools.dis(pkl, out)
    return out.getvalue()


@pytest.mark.parametrize("case", list(CASES))
def test_the_pickle_and_the_file_are_pytorchs_byte_for_byte(case):
    theirs = _save(torch.save, CASES[case](torch))
    ours = _save(lambda obj, f: ember.save(obj, f, format="torch"), CASES[case](ember))
    assert _opcodes(_pickle_of(ours)) == _opcodes(_pickle_of(theirs))  # (the difference, readably, if any)
    assert ours == theirs  # so also the storages, the records and the serialization id


@pytest.mark.parametrize("case", ["model_state_dict", "views_and_shared_storages", "parameters"])
def test_each_loads_what_the_other_wrote(case):
    ours = _save(lambda obj, f: ember.save(obj, f, format="torch"), CASES[case](ember))
    theirs = torch.load(io.BytesIO(ours), weights_only=True)
    back = ember.load(io.BytesIO(ours))
    assert list(back) == list(theirs)
    for k in theirs:
        assert np.array_equal(back[k].detach().numpy(), theirs[k].detach().numpy())
        assert back[k].requires_grad == theirs[k].requires_grad
    if case == "views_and_shared_storages":  # views still share their storage, in both
        assert back["row"].untyped_storage().data_ptr() == back["x"].untyped_storage().data_ptr()
        assert theirs["row"].untyped_storage().data_ptr() == theirs["x"].untyped_storage().data_ptr()
    if case == "model_state_dict":
        assert back._metadata == theirs._metadata
