"""Hostile checkpoints: duplicate zip members, deep nesting, opcode floods, internal objects, odd headers.

Each is refused with a RuntimeError naming the file (or loads correctly), never a crash, a silently chosen
value, an unbounded allocation or an internal object handed to the caller. The crash cases run in a child
process under a memory limit, so a regression fails the test instead of the test run.
"""

import collections
import io
import json
import os
import pickle
import resource
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import warnings
import zipfile

import pytest
import torch

import ember
from ember.serialization import load_file, save_file
from ember.serialization import safetensors as st


def torch_file(pkl: bytes, extra: dict | None = None) -> bytes:
    """A torch.save-style zip whose data.pkl is ``pkl`` (hand-written opcodes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pkl)
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()


def refused(data: bytes, match: str | None = None) -> str:
    with pytest.raises(RuntimeError, match=match) as e:
        ember.load(io.BytesIO(data))
    assert str(e.value).startswith("ember.load(<_io.BytesIO"), e.value
    return str(e.value)


def rezip(data: bytes, edit) -> bytes:
    """The archive's members passed through ``edit(list of (name, bytes))``, zipped again (stored)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = [(i.filename, zf.read(i)) for i in zf.infolist()]
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about a duplicate name
        with zipfile.ZipFile(buf, "w") as zf:
            for name, body in edit(members):
                zf.writestr(name, body)
    return buf.getvalue()


# ------------------------------------------------------------------------------------ duplicate members
def test_a_member_stored_twice_is_refused_naming_it_and_the_file(tmp_path):
    buf = io.BytesIO()
    torch.save({"w": torch.zeros(2)}, buf)
    twice = rezip(buf.getvalue(), lambda ms: ms + [(n, b) for n, b in ms if n.endswith("data/0")])
    path = tmp_path / "twice.pt"
    path.write_bytes(twice)
    with pytest.raises(RuntimeError, match=r"twice\.pt.*member 'archive/data/0' .*twice"):
        ember.load(path)
    buf = io.BytesIO()
    ember.save({"w": ember.zeros(2)}, buf)
    refused(rezip(buf.getvalue(), lambda ms: ms + [ms[0]]), "member 'ember.json' .*twice")


# ------------------------------------------------------------------------------------ crashes, in a child
def in_child(code: str, data: bytes, tmp_path, memory: int = 2 * 2**30) -> subprocess.CompletedProcess:
    """Run ``code`` with ``path`` (the bytes written to a file) under an address-space limit."""
    path = tmp_path / "hostile.pt"
    path.write_bytes(data)
    limit = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
    return subprocess.run([sys.executable, "-c", limit + f"path = {str(path)!r}\n" + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=300, cwd=os.getcwd())


DEEP = b"K\x00" + b"\x85" * 1_000_000  # a tuple nested a million deep, 1 MB of TUPLE1
DEEP_USES = {
    "dict key": b"\x80\x02}" + DEEP + b"K\x01s.",
    "set item": b"\x80\x02\x8f(" + DEEP + b"\x90.",
    "frozenset item": b"\x80\x02c__builtin__\nfrozenset\n(" + DEEP + b"\x85\x85R.",
    "returned": b"\x80\x02" + DEEP + b".",
}


@pytest.mark.parametrize("use", DEEP_USES)
def test_deep_nesting_is_refused_not_a_crash(use, tmp_path):
    result = in_child("""
        import ember
        try:
            ember.load(path, weights_only=False)  # (a frozenset is built only then, or allowlisted, as in PyTorch)
        except RuntimeError as e:
            print("refused:", e)
    """, torch_file(DEEP_USES[use]), tmp_path)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert "refused: ember.load(" in result.stdout and "nests deeper than" in result.stdout, result.stdout


def test_nesting_up_to_the_limit_loads():
    from ember.serialization._archive import MAX_DEPTH

    nested = ()
    for _ in range(MAX_DEPTH - 3):  # MAX_DEPTH - 2 levels; a dict of it holding a list of it: MAX_DEPTH
        nested = (nested,)
    buf = io.BytesIO()
    torch.save({nested: [nested]}, buf)
    out = ember.load(io.BytesIO(buf.getvalue()))
    assert list(out) == [nested] and out[nested] == [nested]
    buf = io.BytesIO()
    torch.save([{nested: [nested]}], buf)
    refused(buf.getvalue(), f"nests deeper than {MAX_DEPTH}")


# ------------------------------------------------------------------------------------ memory
FLOODS = {"EMPTY_SET": b"\x8f", "EMPTY_DICT": b"}", "MARK": b"(", "EMPTY_LIST + MEMOIZE": b"]\x94",
          "BININT + sparse PUT": b"J\x01\x02\x03\x04r\x01\x02\x03\x04", "SHORT_BINUNICODE": b"\x8c\x01a",
          "BININT + GET": b"K\x00q\x00" + b"h\x00" * 8}


@pytest.mark.parametrize("flood", FLOODS)
def test_an_opcode_flood_stays_within_the_documented_bound(flood):
    from ember.serialization._pickle_bounds import MEMORY_BASE, MEMORY_PER_BYTE

    op = FLOODS[flood]
    pkl = b"\x80\x02" + op * (2**19 // len(op))
    data = torch_file(pkl)
    tracemalloc.start()
    try:
        message = refused(data)  # either the bound stops it, or the opcodes are spent within the bound
        assert "more memory than" in message or "truncated" in message, message
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 2 * len(data) + MEMORY_PER_BYTE * len(pkl) + MEMORY_BASE, (peak, len(data))


def vocab_file(n: int) -> tuple[bytes, int]:
    """A torch.save file of a state dict with n tiny tensors and an n-word vocabulary; and its pickle's size."""
    obj = {"model": {f"layer{i}.weight": torch.full((1,), float(i)) for i in range(n)},
           "vocab": {f"word{i}": i for i in range(n)}, "counts": [[i, {}] for i in range(n)]}
    buf = io.BytesIO()
    torch.save(obj, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        return buf.getvalue(), zf.getinfo("archive/data.pkl").file_size


def test_object_heavy_real_files_load_within_the_bound():
    from ember.serialization._pickle_bounds import MEMORY_BASE, MEMORY_PER_BYTE

    data, pkl_size = vocab_file(5_000)
    tracemalloc.start()
    try:
        out = ember.load(io.BytesIO(data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out["vocab"]["word4999"] == 4999 and float(out["model"]["layer7.weight"][0]) == 7.0
    assert out["counts"][5] == [5, {}]
    assert peak <= 2 * len(data) + MEMORY_PER_BYTE * pkl_size + MEMORY_BASE, (peak, len(data))


def test_the_bound_is_exact_at_its_edge(monkeypatch):
    from ember.serialization import _pickle_bounds

    pkl = b"\x80\x02](" + b"}" * 10_000 + b"e."  # a list of 10,000 empty dicts
    data = torch_file(pkl)
    spent = []
    charge = _pickle_bounds.Bounds.charge
    monkeypatch.setattr(_pickle_bounds.Bounds, "charge", lambda self, n: (charge(self, n), spent.append(self.spent)))
    assert len(ember.load(io.BytesIO(data))) == 10_000
    needed = max(spent)
    assert needed > 10_000 * 64  # each dict paid for
    edge = needed - _pickle_bounds.MEMORY_PER_BYTE * len(pkl)  # the base that leaves no byte to spare
    monkeypatch.setattr(_pickle_bounds, "MEMORY_BASE", edge)
    assert len(ember.load(io.BytesIO(data))) == 10_000
    monkeypatch.setattr(_pickle_bounds, "MEMORY_BASE", edge - 1)
    refused(data, "more memory than")


def test_a_memo_numbered_as_picklers_number_it_is_charged_a_pointer_per_entry(monkeypatch):
    """Memo entries 0, 1, 2, ... (how every pickler numbers them) are held in a list, a pointer each; any other
    numbering (legal) in a dict, each entry charged as one. The same list of empty lists memoized both ways loads
    alike, the dense numbering charged exactly that much less."""
    from ember.serialization import _pickle_bounds, _torch_unpickle

    n = 1000
    spent, totals = {}, []
    charge = _pickle_bounds.Bounds.charge
    monkeypatch.setattr(_pickle_bounds.Bounds, "charge", lambda self, k: (charge(self, k), totals.append(self.spent)))
    for name, first in (("dense", 0), ("sparse", 10**6)):
        pkl = b"\x80\x02](" + b"".join(b"]r" + struct.pack("<I", first + i) for i in range(n)) + b"e."
        assert ember.load(io.BytesIO(torch_file(pkl))) == [[] for _ in range(n)]
        spent[name] = totals[-1]
    assert spent["sparse"] - spent["dense"] == n * (_torch_unpickle._SPARSE_MEMO_ENTRY - _pickle_bounds.POINTER)


# ------------------------------------------------------------------------------------ internal objects
@pytest.mark.parametrize("pkl", [
    b"\x80\x02ctorch\nFloatStorage\n.",  # a bare allowed global
    b"\x80\x02]ctorch\nFloatStorage\na.",  # ... inside a list
    b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ.",
    b"\x80\x02}K\x01(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ"
    b"\x85s.",  # a storage in a tuple in a dict
])
def test_internal_objects_never_reach_the_caller(pkl):
    refused(torch_file(pkl, {"archive/data/0": b"\x00" * 4}), "storage|global")


# ------------------------------------------------------------------------------------ smaller ones
def test_a_manifest_without_root_is_refused():
    data = rezip(_ember_bytes([1]), lambda ms: [(n, json.dumps({"format": "ember.save", "version": 1,
                                                                 "arrays": []}).encode() if n == "ember.json"
                                                 else b) for n, b in ms])
    refused(data, "root")


def _ember_bytes(obj) -> bytes:
    buf = io.BytesIO()
    ember.save(obj, buf)
    return buf.getvalue()


def test_a_central_directory_offset_past_the_end_is_a_runtime_error(tmp_path):
    data = bytearray(_ember_bytes({"w": ember.ones(2)}))
    end = data.rfind(b"PK\x05\x06")
    data[end + 16:end + 20] = struct.pack("<I", end + 1000)  # the directory's offset: past the file's end
    path = tmp_path / "bad_offset.pt"
    path.write_bytes(data)
    with pytest.raises(OSError), zipfile.ZipFile(path) as zf:
        zf.read("ember.json")  # zipfile then seeks before the file's start to read a member
    with pytest.raises(RuntimeError, match=r"bad_offset\.pt.*corrupt"):
        ember.load(path)


@pytest.mark.parametrize("shape", [[True, 4], [4.0, 1], ["4"], [-1, 4], 4])
def test_safetensors_shapes_must_be_lists_of_ints(shape, tmp_path):
    header = json.dumps({"w": {"dtype": "F32", "shape": shape, "data_offsets": [0, 16]}}).encode()
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(16))
    with pytest.raises(RuntimeError, match=r"bad\.safetensors.*shape"):
        load_file(path)


LONE = "w\ud800"


def test_a_lone_surrogate_key_round_trips_or_is_refused_at_save(tmp_path):
    for fmt in ("ember", "torch"):
        ember.save({LONE: ember.ones(1), "k": LONE}, tmp_path / f"{fmt}.pt", format=fmt)
        out = ember.load(tmp_path / f"{fmt}.pt")
        assert list(out) == [LONE, "k"] and out["k"] == LONE
    out = torch.load(tmp_path / "torch.pt", weights_only=True)  # PyTorch reads the same key back
    assert list(out) == [LONE, "k"]
    buf = io.BytesIO()
    torch.save({LONE: 1}, buf)
    assert list(ember.load(io.BytesIO(buf.getvalue()))) == [LONE]
    for tensors, metadata in (({LONE: ember.ones(1)}, None), ({"w": ember.ones(1)}, {"k": LONE})):
        with pytest.raises(ValueError, match="surrogate"):  # not valid UTF-8: safetensors' JSON cannot hold it
            save_file(tensors, tmp_path / "st.safetensors", metadata=metadata)
        with pytest.raises(ValueError, match="surrogate"):
            st.save(tensors, metadata)
    assert not (tmp_path / "st.safetensors").exists()


def test_the_memory_limit_helper_is_enforced(tmp_path):
    """The child's limit really applies (else the crash tests above would prove nothing)."""
    result = in_child("bytearray(3 * 2**30)", b"", tmp_path)
    assert result.returncode != 0 and "MemoryError" in result.stderr
    assert resource.RLIMIT_AS  # the platform has the limit


# ------------------------------------------------------------------------------------ crafted pickles
CRAFTED = {
    "a string longer than the file": (b"\x80\x02X\x10\x00\x00\x00ab.", "truncated"),
    "an integer longer than the file": (b"\x80\x02\x8a\x10ab.", "truncated"),
    "a negative length": (b"\x80\x02\x8b\xf0\xff\xff\xffab.", "truncated"),
    "no STOP": (b"\x80\x02K\x05", "truncated"),
    "BINPUT on an empty stack": (b"\x80\x02q\x00K\x05.", "stack underflow"),
    "MEMOIZE on an empty stack": (b"\x80\x04\x94K\x05.", "stack underflow"),
    "REDUCE on an empty stack": (b"\x80\x02K\x01R.", "stack underflow"),
    "APPENDS without a mark": (b"\x80\x02K\x01e.", "no mark"),
    "REDUCE on a number": (b"\x80\x02K\x01)R.", "REDUCE on something that is not an allowed global"),
    "REDUCE with arguments not a tuple": (b"\x80\x02ccollections\nOrderedDict\nK\x01R.",
                                          "REDUCE on something that is not an allowed global"),
    # what STOP finds must be exactly one object: PyTorch's weights-only unpickler returns the top of the stack
    # (2 and 1 below) and pops an empty stack (an IndexError); ember picks no value out of a malformed stack
    "two objects at STOP": (b"\x80\x02K\x01K\x02.", "stack not empty at STOP"),
    "a MARK left open at STOP": (b"\x80\x02(K\x01.", "stack not empty at STOP"),
    "nothing at STOP": (b"\x80\x02.", "stack not empty at STOP"),
    # an opcode that adds to the container on top of the stack, with no container there or one of another kind
    "APPEND onto a number": (b"\x80\x02K\x01K\x02a.", r"malformed \(expected a <class 'list'>\)"),
    "APPEND onto an empty stack": (b"\x80\x02K\x01a.", r"malformed \(expected a <class 'list'>\)"),
    "APPENDS onto a dict": (b"\x80\x02}(K\x01e.", r"malformed \(expected a <class 'list'>\)"),
    "SETITEM into a list": (b"\x80\x02]K\x01K\x02s.", r"malformed \(expected a <class 'dict'>\)"),
    "SETITEMS into nothing": (b"\x80\x02(K\x01K\x02u.", r"malformed \(expected a <class 'dict'>\)"),
    "ADDITEMS into a list": (b"\x80\x04](K\x01\x90.", r"malformed \(expected a <class 'set'>\)"),
}


@pytest.mark.parametrize("name", CRAFTED)
def test_crafted_and_truncated_pickles_are_refused_with_the_reason(name):
    pkl, reason = CRAFTED[name]
    refused(torch_file(pkl), reason)


@pytest.mark.parametrize("pkl", [b"\x80\x02K\x05q\x00.", b"\x80\x04K\x05\x94.", b"\x80\x04K\x05\x94h\x00\x86.",
                                 b"\x80\x02K\x05q\x05h\x05\x86.", b"\x80\x02K\x05q\x00K\x06q\x07\x86h\x07\x86."])
def test_memo_opcodes_on_a_value_load(pkl):
    """BINPUT (protocol 2, torch.save's) and MEMOIZE (protocol 4) memoize the top of the stack; GET reads it.
    Keys need not count 0, 1, 2, ... (the last two: 5 first; 0, then 7)."""
    assert ember.load(io.BytesIO(torch_file(pkl))) == pickle.loads(pkl)


@pytest.mark.parametrize("cut", [0.25, 0.5, 0.9])
def test_a_truncated_torch_file_is_refused(cut):
    """A torch.save file whose data.pkl lost its end (a partial download) is refused as truncated."""
    whole = torch_bytes_of({"weight": torch.ones(3), "step": 7, "name": "layer" * 20})

    def cut_pickle(members):
        return [(n, b[:int(len(b) * cut)] if n.endswith("data.pkl") else b) for n, b in members]
    refused(rezip(whole, cut_pickle), "truncated")


def torch_bytes_of(obj, **kwargs) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, **kwargs)
    return buf.getvalue()


# ------------------------------------------------------------------------------------ views of a storage
class _View:
    """Pickles as torch.save pickles a tensor: ``_rebuild_tensor_v2`` over storage "0" (4 float32 elements)."""

    def __init__(self, offset: int, size: tuple, stride: tuple):
        self.args = (offset, size, stride)

    def __reduce__(self):
        return torch._utils._rebuild_tensor_v2, (_View, *self.args, False, collections.OrderedDict())


class _StoragePickler(pickle.Pickler):
    def persistent_id(self, obj):
        return ("storage", torch.FloatStorage, "0", "cpu", 4) if obj is _View else None


@pytest.mark.parametrize("offset,size,stride", [
    (0, (4,), (1,)), (3, (1,), (1,)), (0, (2, 2), (2, 1)), (0, (2, 3), (0, 1)),  # within the storage
    (0, (5,), (1,)), (1, (4,), (1,)), (0, (2, 2), (3, 1)), (4, (1,), (1,)),  # one element past its end
])
def test_a_view_reaching_past_its_storage_is_refused_as_pytorch_does(offset, size, stride):
    """The last element a view reads, ``offset + sum((n - 1) * stride)``, must lie inside its storage (else the
    strided view would read memory past it); PyTorch refuses the same files and loads the others alike."""
    buf = io.BytesIO()
    _StoragePickler(buf, protocol=2).dump(_View(offset, size, stride))
    data = torch_file(buf.getvalue(), {"archive/data/0": struct.pack("<4f", 0, 1, 2, 3)})
    try:
        expected = torch.load(io.BytesIO(data))
    except RuntimeError:
        refused(data, "reaches outside its storage of 4 elements")
    else:
        assert ember.load(io.BytesIO(data)).tolist() == expected.tolist()


@pytest.mark.parametrize("offset,size,stride", [(3, (4,), (-1,)), (3, (2,), (-2,)), (3, (2, 2), (1, -1))])
def test_a_view_with_a_negative_stride_is_refused_as_pytorch_does(offset, size, stride):
    """Every element of these lies inside the storage (a reversed view), but a stride must not be negative:
    PyTorch refuses the file ("Storage size calculation overflowed"), and so does ember."""
    buf = io.BytesIO()
    _StoragePickler(buf, protocol=2).dump(_View(offset, size, stride))
    data = torch_file(buf.getvalue(), {"archive/data/0": struct.pack("<4f", 0, 1, 2, 3)})
    with pytest.raises(RuntimeError, match="overflowed"):
        torch.load(io.BytesIO(data))
    refused(data, "malformed arguments")


# ------------------------------------------------------------------------------------ calls of the allowed globals
def _text(s: str) -> bytes:
    return b"X" + len(s.encode()).to_bytes(4, "little") + s.encode()


def _call(module: str, name: str, args: bytes) -> bytes:
    """A pickle calling ``module.name`` on the tuple whose opcodes are ``args`` (REDUCE)."""
    return b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n(" + args + b"tR."


WRONG_CALLS = {  # each a call PyTorch's weights_only loader refuses too (TypeError: the arguments do not fit)
    "torch.device()": _call("torch", "device", b""),
    "torch.device(str, int, str)": _call("torch", "device", _text("cpu") + b"K\x00" + _text("x")),
    "torch.device(int, int, int)": _call("torch", "device", b"K\x00K\x00K\x00"),
    "OrderedDict(list, list)": _call("collections", "OrderedDict", b"]]"),
    "set(list, list)": _call("builtins", "set", b"]]"),
    "torch.Size(tuple, tuple)": _call("torch", "Size", b"))"),
    # (a complex number is pickled as its two parts: a third is the call's TypeError in PyTorch)
    "complex(int, int, int)": _call("builtins", "complex", b"K\x01K\x02K\x03"),
    "_rebuild_tensor_v2 of 5": _call("torch._utils", "_rebuild_tensor_v2", b"K\x00" * 5),
    "_rebuild_tensor_v2 of 8": _call("torch._utils", "_rebuild_tensor_v2", b"K\x00" * 8),
    "_rebuild_parameter of 2": _call("torch._utils", "_rebuild_parameter", b"K\x00" * 2),
    "_rebuild_parameter of 4": _call("torch._utils", "_rebuild_parameter", b"K\x00" * 4),
    # (protocol 2's bytes: a str and its codec; a first argument that is no str has no latin-1 encoding)
    "_codecs.encode(int, str)": _call("_codecs", "encode", b"K\x00" + _text("latin1")),
    "_codecs.encode(bytes, str)": _call("_codecs", "encode", b"C\x02ab" + _text("latin1")),
}


@pytest.mark.parametrize("name", WRONG_CALLS)
def test_an_allowed_global_called_with_arguments_it_does_not_take_is_refused_as_pytorch_does(name):
    """Each allowed global's accepted argument counts are its own (no more, no fewer): outside them the call is
    refused naming the global, where PyTorch's weights_only loader refuses it too (within them, the next test)."""
    data = torch_file(WRONG_CALLS[name])
    with pytest.raises((TypeError, pickle.UnpicklingError)):  # (the call's own TypeError)
        torch.load(io.BytesIO(data), weights_only=True)
    path = name.split("(")[0].split(" ")[0]
    refused(data, rf"calls \S*{path.removeprefix('torch.')} with unexpected arguments")


@pytest.mark.parametrize("args", [b"", b"K\x00", b"K\x03"])
def test_a_device_of_one_or_two_arguments_loads_as_pytorchs(args):
    data = torch_file(_call("torch", "device", _text("cpu") + args))
    assert str(ember.load(io.BytesIO(data))) == str(torch.load(io.BytesIO(data), weights_only=True))
