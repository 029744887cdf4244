"""ember's own format: every refusal of a malformed ``ember.json`` at the edge of what it checks, objects restored as
PyTorch's pickle restores them, and ``get_unsafe_globals_in_checkpoint`` reading the globals out of nested entries.

A refusal is a RuntimeError naming the file and what was wrong (docs/checkpoints.md), the offending text cut to a
fixed length: each cut is checked at its edge (the last character shown, the next one not).
"""

import argparse
import dataclasses
import fractions
import io
import json
import math
import zipfile

import numpy as np
import pytest
import torch
from test_serialization import forge, load_error, npy

import ember

HEAD = {"format": "ember.save", "version": 1}


@dataclasses.dataclass
class Holder:
    """A dataclass pickle keeps by its class and attributes, with a method of its own."""

    value: object = None

    def method(self):
        return self.value


class Doubling:
    """Kept by its class and state, restored through its own ``__setstate__``."""

    def __setstate__(self, state):
        self.__dict__.update({k: 2 * v for k, v in state.items()})


def _saved(lib, obj) -> bytes:
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


# ------------------------------------------------------------------------------------ objects
def test_an_object_with_its_own_setstate_is_restored_through_it_as_pytorch_restores_it():
    obj = Doubling.__new__(Doubling)
    obj.__dict__.update(a=1, b=2.5)
    ours = ember.load(io.BytesIO(_saved(ember, obj)), weights_only=False)
    theirs = torch.load(io.BytesIO(_saved(torch, obj)), weights_only=False)
    assert type(ours) is Doubling and vars(ours) == vars(theirs) == {"a": 2, "b": 5.0}


def test_an_object_entry_without_a_class_path_is_refused(tmp_path):
    for entry in ({"attrs": []}, {"class": 3, "attrs": []}, {"class": None}):
        manifest = {**HEAD, "root": {"object": entry}, "arrays": []}
        assert "an object entry in ember.json has no class path" in load_error(forge(manifest), tmp_path,
                                                                                 weights_only=False)


# ------------------------------------------------------------------------------------ the globals a file names
def _nested(lib):
    """Objects inside objects (a dataclass in a Namespace, a NumPy array and scalar in a dataclass), a bound method,
    classes and functions kept as values, and a dtype and device (no global of ember's format, safe ones of
    PyTorch's pickle)."""
    inner = Holder(value=[np.zeros(2), np.float32(1.0)])
    return {"args": argparse.Namespace(inner=inner, dtype=lib.float16, device=lib.device("cpu")),
            "fn": math.floor, "cls": fractions.Fraction, "call": Holder(value=3).method, "w": lib.ones(2)}


def test_get_unsafe_globals_of_an_ember_file_are_those_pytorchs_pickle_names_for_the_same_objects():
    want = sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_saved(torch, _nested(torch)))))
    got = sorted(ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_saved(ember, _nested(ember)))))
    assert got == want
    assert {"argparse.Namespace", f"{__name__}.Holder", "math.floor", "fractions.Fraction", "builtins.getattr",
            "numpy.dtype", "numpy._core.multiarray.scalar", "numpy._core.multiarray._reconstruct"} <= set(got)


def test_get_unsafe_globals_of_an_ember_file_reads_every_module_and_member():
    class_of = {"Sequential": "ember.nn.modules.container.Sequential", "Linear": "ember.nn.modules.linear.Linear",
                "ReLU": "ember.nn.modules.activation.ReLU"}
    model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Sequential(ember.nn.ReLU()))
    model.config = argparse.Namespace(kind=Holder)
    got = ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_saved(ember, model)))
    assert sorted(got) == sorted([*class_of.values(), "argparse.Namespace", f"{__name__}.Holder"])


# ------------------------------------------------------------------------------------ each message's cut
LONG = "x" * 39 + "yz" + "w" * 40  # the 40th character is y, the 41st z


@pytest.mark.parametrize("case", ["device", "parameter name", "attribute name", "object attribute name"])
def test_a_name_in_a_refusal_is_cut_to_its_first_40_characters(case, tmp_path):
    """The name's repr, quotes and all, in the message: the 40th character shown and the 41st not."""
    arrays = []
    if case == "device":
        manifest = {**HEAD, "root": {"device": LONG}, "arrays": []}
    elif case == "object attribute name":
        manifest = {**HEAD, "root": {"object": {"class": "argparse.Namespace", "attrs": [[LONG, 1], [LONG, 2]]}},
                    "arrays": []}
    else:
        with zipfile.ZipFile(io.BytesIO(_saved(ember, ember.nn.Linear(2, 1)))) as zf:
            manifest, arrays = json.loads(zf.read("ember.json")), [zf.read(f"arrays/{i}.npy") for i in range(2)]
        key = "parameters" if case == "parameter name" else "attrs"
        manifest["root"]["module"][key] = [[LONG, 3], [LONG, 4]]
    message = load_error(forge(manifest, arrays), tmp_path, weights_only=False)
    assert repr(LONG[:40]) in message, message


@pytest.mark.parametrize("case", ["entry", "entry of two keys", "pairs", "description", "bfloat16 description"])
def test_an_entry_in_a_refusal_is_cut_to_its_first_80_characters(case, tmp_path):
    arrays = []
    if case.startswith("entry"):
        node = {"nothing": LONG + LONG} if case == "entry" else {"list": [], "tuple": [LONG + LONG]}
        manifest = {**HEAD, "root": node, "arrays": []}
        shown = str(node)[:80]
    elif case == "pairs":
        value = [[LONG, 1, 2]]
        manifest = {**HEAD, "root": {"dict": value}, "arrays": []}
        shown = str(value)[:80]
    elif case == "description":
        entry = {"kind": "tensor", "requires_grad": "no " + LONG}
        manifest = {**HEAD, "root": {"array": 0}, "arrays": [entry]}
        arrays = [npy(np.zeros(2, np.float32))]
        shown = str(entry)[:80]
    else:  # (a well-formed entry naming a dtype other than bfloat16, the only one stored as its bits)
        entry = {"kind": "tensor", "requires_grad": False, "dtype": "float16 " + LONG}
        manifest = {**HEAD, "root": {"array": 0}, "arrays": [entry]}
        arrays = [npy(np.zeros(2, np.uint16))]
        shown = str(entry)[:80]
    message = load_error(forge(manifest, arrays), tmp_path, weights_only=False)
    assert repr(shown) in message, (shown, message)  # (its repr's closing quote right after the 80th character)

