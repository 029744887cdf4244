"""Every refusal of ember's reader of PyTorch's files, each reached by a crafted ``data.pkl``, and each bound at its
edge.

A corrupt or hostile file is a RuntimeError naming the file and what was wrong with it (docs/checkpoints.md); a
class PyTorch's weights-only loader refuses is PyTorch's ``pickle.UnpicklingError``. Where PyTorch defines the
behaviour (a tensor of integers that requires grad, a defaultdict's factory, an object's ``__setstate__``, the
opcodes of older protocols) the same file goes through ``torch.load`` too. Each case changes one thing of a file
that loads, so that the refusal is of that one thing.
"""

import collections
import io
import pickle
import struct
import warnings

import numpy as np
import pytest
import torch
from test_serialization_hostile import _call, _text, refused, torch_file

import ember

P2 = b"\x80\x02"


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _int(n: int) -> bytes:
    return b"K" + bytes([n]) if 0 <= n < 256 else b"J" + struct.pack("<i", n)


def _tuple(*items: bytes) -> bytes:
    return b"(" + b"".join(items) + b"t"


def _pid(kind: bytes = _global("torch", "FloatStorage"), key: bytes = _text("0"), numel: bytes = _int(4)) -> bytes:
    """A storage's persistent id as torch.save writes it (BINPERSID of the tuple)."""
    return _tuple(_text("storage"), kind, key, _text("cpu"), numel) + b"Q"


def _tensor(pid: bytes = None, offset: int = 0, size=(4,), stride=(1,), requires_grad: bool = False) -> bytes:
    """``_rebuild_tensor_v2`` over a storage, as torch.save pickles a tensor."""
    return _global("torch._utils", "_rebuild_tensor_v2") + _tuple(
        _pid() if pid is None else pid, _int(offset), _tuple(*map(_int, size)), _tuple(*map(_int, stride)),
        b"\x88" if requires_grad else b"\x89", _global("collections", "OrderedDict") + b")R") + b"R"


FLOATS = {"archive/data/0": struct.pack("<4f", 0, 1, 2, 3)}


def refused_as_trusted(data: bytes) -> str:
    """The RuntimeError, naming the file, of a load with weights_only=False (the classes it names importable)."""
    with pytest.raises(RuntimeError) as e:
        ember.load(io.BytesIO(data), weights_only=False)
    assert str(e.value).startswith("ember.load(<_io.BytesIO"), e.value
    return str(e.value)


def _loads_as_torch(data: bytes, weights_only: bool = True):
    """ember's load of ``data`` next to PyTorch's, each value compared."""
    ours, theirs = ember.load(io.BytesIO(data), weights_only=weights_only), torch.load(io.BytesIO(data),
                                                                                        weights_only=weights_only)
    return ours, theirs


def test_the_crafted_tensor_loads_as_pytorchs():
    """The file every storage case below changes one thing of: four float32 elements."""
    ours, theirs = _loads_as_torch(torch_file(P2 + _tensor() + b".", FLOATS))
    assert ours.tolist() == theirs.tolist() == [0.0, 1.0, 2.0, 3.0] and ours.dtype == ember.float32


# ------------------------------------------------------------------------------------ the memo and the opcodes
@pytest.mark.parametrize("pkl,key", [
    (P2 + b"h\x05.", 5),  # nothing put
    (P2 + b"K\x07q\x00h\x01.", 1),  # the entry after the last one put
    (P2 + b"K\x07q\x05j\x04\x00\x00\x00.", 4),  # the entry before a sparse one (LONG_BINGET)
])
def test_a_memo_entry_never_put_is_refused_naming_it(pkl, key):
    assert f"data.pkl refers to memo entry {key}, which does not exist" in refused(torch_file(pkl))
    with pytest.raises(KeyError):  # (PyTorch's unpickler: the memo's own error)
        torch.load(io.BytesIO(torch_file(pkl)))


@pytest.mark.parametrize("op", [b"F1.0\n", b"S'a'\n", b"\x82\x01", b"P0\n", b"V\x00\n", b"\x96\x00" * 4])
def test_an_opcode_pytorchs_files_never_hold_is_refused_naming_it(op):
    message = refused(torch_file(P2 + op + b"."))
    assert f"data.pkl uses pickle opcode {op[:1]!r}, which a weights-only file does not need" in message


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_tuple_of_n_on_fewer_items_is_refused_and_on_n_loads(n):
    """TUPLE1/2/3 take the top n items: one fewer is a malformed pickle, exactly n load as pickle loads them."""
    op = {1: b"\x85", 2: b"\x86", 3: b"\x87"}[n]
    items = b"".join(_int(i) for i in range(n))
    assert ember.load(io.BytesIO(torch_file(P2 + items + op + b"."))) == pickle.loads(P2 + items + op + b".")
    assert "stack underflow" in refused(torch_file(P2 + items[2:] + op + b"."))


@pytest.mark.parametrize("pkl", [b"(K\x01K\x02l.", b"(X\x01\x00\x00\x00aK\x01d.", b"(d.", b"(l.",
                                 b"](K\x01(K\x02K\x03ld\x85a."])
def test_the_list_and_dict_opcodes_of_protocol_0_and_1_load_as_pickle_loads_them(pkl):
    """LIST and DICT (a MARK's items into a new list or dict), which protocols 0 and 1 write."""
    assert ember.load(io.BytesIO(torch_file(P2 + pkl)), weights_only=False) == pickle.loads(P2 + pkl)


@pytest.mark.parametrize("pkl,says", [
    (b"(K\x01d.", "is malformed (odd number of dict items)"),
    (b"}(K\x01K\x02K\x03u.", "is malformed (odd number of dict items)"),
    (b"}]K\x01s.", "uses an unhashable list as a dict key"),
    (b"}(K\x01K\x02}K\x03u.", "uses an unhashable dict as a dict key"),
    (b"\x8f(K\x01]\x90.", "adds an unhashable item to a set"),
    (b"K\x01K\x02\x93.", "is malformed (STACK_GLOBAL needs two strings)"),
    (b"X\x01\x00\x00\x00aK\x02\x93.", "is malformed (STACK_GLOBAL needs two strings)"),  # (a module, but no name)
    (b"K\x01X\x01\x00\x00\x00a\x93.", "is malformed (STACK_GLOBAL needs two strings)"),  # (a name, but no module)
])
def test_a_container_opcode_on_what_it_cannot_hold_is_refused_naming_it(pkl, says):
    assert "data.pkl " + says in refused(torch_file(P2 + pkl))
    with pytest.raises((TypeError, pickle.UnpicklingError)):  # PyTorch's unpickler refuses each too
        torch.load(io.BytesIO(torch_file(P2 + pkl)), weights_only=False)


# ------------------------------------------------------------------------------------ storages
@pytest.mark.parametrize("name,pid", [
    ("a string", _text("storage") + b"Q"),
    ("four entries", b"(" + _text("storage") + _global("torch", "FloatStorage") + _text("0") + _text("cpu") + b"tQ"),
    ("six entries", b"(" + _text("storage") + _global("torch", "FloatStorage") + _text("0") + _text("cpu")
     + b"K\x04K\x00tQ"),
    ("another type name", _tuple(_text("module"), _global("torch", "FloatStorage"), _text("0"), _text("cpu"),
                                 b"K\x04") + b"Q"),
    ("a dtype for the storage type", _pid(kind=_global("torch", "float32"))),
    ("another allowed global for the storage type", _pid(kind=_global("torch", "device"))),
    ("a number for the storage type", _pid(kind=b"K\x01")),
    ("a number for the key", _pid(key=b"K\x00")),
    ("a negative element count", _pid(numel=_int(-1))),
    ("a float element count", _pid(numel=b"G" + struct.pack(">d", 4.0))),
    ("a bool element count", _pid(numel=b"\x88")),
])
def test_a_persistent_id_that_is_not_a_storages_is_refused(name, pid):
    message = refused(torch_file(P2 + _tensor(pid=pid) + b".", FLOATS))
    assert "data.pkl has an unsupported persistent id " in message, message


@pytest.mark.parametrize("numel,member,loads", [
    (4, 16, True), (4, 12, False), (4, 20, False), (3, 16, False), (5, 16, False), (0, 0, True),
])
def test_a_storage_must_be_its_member_exactly(numel, member, loads):
    """A storage's member holds exactly its element count's bytes: one element more or fewer on either side is
    refused naming the member, as PyTorch refuses it (a storage of 0 elements and an empty member load)."""
    pkl = P2 + _tensor(pid=_pid(numel=_int(numel)), size=(min(numel, 3),)) + b"."
    data = torch_file(pkl, {"archive/data/0": bytes(member)})
    if loads:
        ours, theirs = _loads_as_torch(data)
        assert ours.tolist() == theirs.tolist()
        return
    with pytest.raises(RuntimeError):
        torch.load(io.BytesIO(data))
    assert f"storage 'archive/data/0' is missing or not {numel} elements of float32" in refused(data)


def test_a_storage_without_its_member_is_refused_naming_it():
    data = torch_file(P2 + _tensor(pid=_pid(key=_text("7"))) + b".", FLOATS)
    with pytest.raises(RuntimeError):
        torch.load(io.BytesIO(data))
    assert "storage 'archive/data/7' is missing or not 4 elements of float32" in refused(data)


def test_a_storage_used_with_two_dtypes_is_refused():
    """PyTorch's loader reads the second tensor's storage as the first one's dtype (it keys storages by name);
    ember refuses the file rather than pick one, naming the storage. (torch.save itself refuses to write it: "Cannot
    save multiple tensors or storages that view the same data as different types".)"""
    pkl = P2 + _tensor() + _tensor(pid=_pid(kind=_global("torch", "IntStorage"))) + b"\x86."
    assert "storage '0' is used with two dtypes" in refused(torch_file(pkl, FLOATS))
    same = P2 + _tensor() + _tensor(offset=1, size=(3,)) + b"\x86."  # the same storage twice, one dtype: a view
    a, b = ember.load(io.BytesIO(torch_file(same, FLOATS)))
    assert b.tolist() == [1.0, 2.0, 3.0]
    a[1] = 7.0
    assert b.tolist() == [7.0, 2.0, 3.0]


@pytest.mark.parametrize("kind,dtype,loads", [("IntStorage", torch.int32, False), ("LongStorage", torch.int64, False),
                                              ("BoolStorage", torch.bool, False), ("ByteStorage", torch.uint8, False),
                                              ("FloatStorage", torch.float32, True), ("HalfStorage", torch.float16, True),
                                              ("ComplexFloatStorage", torch.complex64, True)])
def test_a_tensor_that_requires_grad_must_be_of_a_float_or_complex_dtype_as_in_pytorch(kind, dtype, loads):
    numel = 2
    member = torch.zeros(numel, dtype=dtype).numpy().tobytes()
    pkl = P2 + _tensor(pid=_pid(kind=_global("torch", kind), numel=_int(numel)), size=(2,), requires_grad=True) + b"."
    data = torch_file(pkl, {"archive/data/0": member})
    if loads:
        ours, theirs = _loads_as_torch(data)
        assert ours.requires_grad and theirs.requires_grad and ours.tolist() == theirs.tolist()
        return
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        torch.load(io.BytesIO(data))
    assert f"a tensor of dtype {str(dtype).removeprefix('torch.')} cannot require grad" in refused(data)


# ------------------------------------------------------------------------------------ calls and objects
CALLS = {  # each refused by PyTorch's weights_only loader too (the call's own TypeError, or its refusal)
    "OrderedDict(int)": _call("collections", "OrderedDict", b"K\x01"),
    "OrderedDict(str)": _call("collections", "OrderedDict", _text("ab")),
    "Counter(int)": _call("collections", "Counter", b"K\x01"),
}


@pytest.mark.parametrize("name", CALLS)
def test_a_container_built_from_what_is_not_its_items_is_refused(name):
    data = torch_file(CALLS[name])
    with pytest.raises((TypeError, ValueError, pickle.UnpicklingError)):
        torch.load(io.BytesIO(data), weights_only=False)
    path = {"O": "collections.OrderedDict", "C": "collections.Counter"}[name[0]]
    assert f"data.pkl calls {path} with unexpected arguments" in refused(data)


def test_a_numpy_dtype_of_a_name_numpy_does_not_know_is_refused():
    data = torch_file(_call("numpy", "dtype", _text("nonsense") + b"\x89\x88"))
    with pytest.raises(TypeError):
        torch.load(io.BytesIO(data), weights_only=False)
    assert "data.pkl calls numpy.dtype with unexpected arguments" in refused_as_trusted(data)


def test_a_defaultdict_of_a_builtin_factory_the_reader_knows_loads_as_pytorchs():
    """``bytes`` is a global ember's reader builds with (protocol 2's empty bytes): as a defaultdict's factory it is
    the type itself, as PyTorch's full unpickler gives it."""
    obj = collections.defaultdict(bytes, {"a": b"x"})
    buf = io.BytesIO()
    torch.save(obj, buf)
    ours, theirs = _loads_as_torch(buf.getvalue(), weights_only=False)
    assert type(ours) is type(theirs) is collections.defaultdict
    assert ours.default_factory is theirs.default_factory is bytes and ours == theirs == {"a": b"x"}


@pytest.mark.parametrize("factory", [b"K\x01", _global("torch", "FloatStorage"), _global("_codecs", "encode"),
                                     _text("list")])
def test_a_defaultdict_whose_factory_is_not_a_class_or_function_is_refused(factory):
    data = torch_file(_call("collections", "defaultdict", factory))
    assert "data.pkl calls collections.defaultdict with unexpected arguments" in refused_as_trusted(data)


class Settings:
    """Kept by pickle as its class and a dict of its state."""


class Doubling:
    """Kept by its class and state too, but restored through its own ``__setstate__``."""

    def __setstate__(self, state):
        self.__dict__.update({k: 2 * v for k, v in state.items()})


class Layer(ember.nn.Module):
    """An ember module (not PyTorch's): never built from a PyTorch file."""


class WithReduce:
    """Pickled by its own ``__reduce__`` (a call): not an object NEWOBJ and BUILD rebuild."""

    def __reduce__(self):
        return (WithReduce, ())


def _newobj(cls: type, args: bytes = b")", state: bytes = b"") -> bytes:
    return P2 + _global(cls.__module__, cls.__qualname__) + args + b"\x81" + (state + b"b" if state else b"") + b"."


def test_an_object_with_its_own_setstate_is_restored_through_it_as_pytorch_restores_it():
    obj = Doubling.__new__(Doubling)
    obj.__dict__.update(a=1, b=2.5)
    buf = io.BytesIO()
    torch.save(obj, buf)
    ours, theirs = _loads_as_torch(buf.getvalue(), weights_only=False)
    assert type(ours) is Doubling and vars(ours) == vars(theirs) == {"a": 2, "b": 5.0}


@pytest.mark.parametrize("case,says", [
    ("arguments", "NEWOBJ of something that is not a class, or with arguments"),
    ("a number", "NEWOBJ of something that is not a class, or with arguments"),
    ("a function", "math.floor is not a class whose instances are saved by their attributes"),
    ("its own __reduce__", "WithReduce is not a class whose instances are saved by their attributes"),
    ("a list of attributes", "data.pkl sets a Settings's state to something other than a dict of attributes"),
    ("attributes named by numbers", "data.pkl sets a Settings's state to something other than a dict of attributes"),
])
def test_an_object_that_is_not_kept_by_its_class_and_attributes_is_refused(case, says):
    if case == "arguments":
        pkl = _newobj(Settings, args=b"K\x01\x85")
    elif case == "a number":
        pkl = P2 + b"K\x01)\x81."
    elif case == "a function":
        pkl = P2 + _global("math", "floor") + b")\x81."
    elif case == "its own __reduce__":
        pkl = _newobj(WithReduce)
    elif case == "a list of attributes":
        pkl = _newobj(Settings, state=b"]")
    else:
        pkl = _newobj(Settings, state=b"}K\x01K\x02s")
    assert says in refused_as_trusted(torch_file(pkl))


def test_an_ember_module_is_never_built_from_a_pytorch_file():
    """Whatever weights_only says: allowlisted, PyTorch's error (UnpicklingError); imported, a RuntimeError. The
    same object kept by state (a plain class) loads."""
    data = torch_file(_newobj(Layer, state=b"}"))
    assert "Layer, which ember's reader of PyTorch files does not build" in refused_as_trusted(data)
    with ember.serialization.safe_globals([Layer]), pytest.raises(
            pickle.UnpicklingError, match=r"^Weights only load failed\. .*Layer, which ember's reader"):
        ember.load(io.BytesIO(data))
    plain = ember.load(io.BytesIO(torch_file(_newobj(Settings, state=b"}X\x01\x00\x00\x00aK\x01s"))),
                       weights_only=False)
    assert type(plain) is Settings and vars(plain) == {"a": 1}


# ------------------------------------------------------------------------------------ NumPy dtypes and arrays
_DTYPE_STATE = b"K\x03" + _text("<") + b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00"


def _dtype(state: bytes = _DTYPE_STATE, name: str = "f8") -> bytes:
    """``numpy.dtype(name, False, True)`` given ``state`` (BUILD), as NumPy pickles a dtype."""
    return _global("numpy", "dtype") + _tuple(_text(name), b"\x89\x88") + b"R" + b"(" + state + b"tb"


@pytest.mark.parametrize("case", ["as numpy writes it", "big-endian", "byte order x", "seven entries",
                                  "nine entries", "version 4", "version 3.0", "flags 1", "alignment -1.0",
                                  "a list"])
def test_a_numpy_dtypes_state_must_be_as_numpy_writes_it(case):
    state = {"as numpy writes it": _DTYPE_STATE, "big-endian": _DTYPE_STATE.replace(b"<", b">"),
             "byte order x": _DTYPE_STATE.replace(b"<", b"x"), "seven entries": _DTYPE_STATE[:-2],
             "nine entries": _DTYPE_STATE + b"K\x00", "version 4": b"K\x04" + _DTYPE_STATE[2:],
             "version 3.0": b"G" + struct.pack(">d", 3.0) + _DTYPE_STATE[2:],
             "flags 1": _DTYPE_STATE[:-2] + b"K\x01",
             "alignment -1.0": _DTYPE_STATE[:-7] + b"G" + struct.pack(">d", -1.0) + b"K\x00"}.get(case)
    pkl = P2 + (_dtype(state) if state is not None else _global("numpy", "dtype") + _tuple(
        _text("f8"), b"\x89\x88") + b"R]b") + b"."
    data = torch_file(pkl)
    if case in ("as numpy writes it", "big-endian"):
        assert ember.load(io.BytesIO(data), weights_only=False) == pickle.loads(pkl)
        assert ember.load(io.BytesIO(data), weights_only=False).byteorder == pickle.loads(pkl).byteorder
        return
    given = [] if state is None else pickle.loads(P2 + b"(" + state + b"t.")
    assert f"data.pkl sets a NumPy dtype's state to {given}" in refused_as_trusted(data)


def _array(state: bytes) -> bytes:
    return (P2 + _global("numpy._core.multiarray", "_reconstruct") + _tuple(_global("numpy", "ndarray"),
                                                                             b"K\x00\x85", b"C\x01b")
            + b"R" + b"(" + state + b"tb.")


_ARRAY_STATE = b"K\x01K\x02\x85" + _dtype() + b"\x89C\x10" + bytes(16)


@pytest.mark.parametrize("case", ["as numpy writes it", "version 2", "a list for the shape",
                                  "a dtype not given its state", "a string for the dtype", "0 for Fortran order",
                                  "text for the data", "four entries", "15 bytes", "17 bytes"])
def test_a_numpy_arrays_state_must_be_as_numpy_writes_it(case):
    dtype_unbuilt = _global("numpy", "dtype") + _tuple(_text("f8"), b"\x89\x88") + b"R"
    state = {"as numpy writes it": _ARRAY_STATE, "version 2": b"K\x02" + _ARRAY_STATE[2:],
             "a list for the shape": b"K\x01]K\x02a" + _ARRAY_STATE[5:],
             "a dtype not given its state": b"K\x01K\x02\x85" + dtype_unbuilt + b"\x89C\x10" + bytes(16),
             "a string for the dtype": b"K\x01K\x02\x85" + _text("f8") + b"\x89C\x10" + bytes(16),
             "0 for Fortran order": _ARRAY_STATE.replace(b"\x89C\x10", b"K\x00C\x10"),
             "text for the data": _ARRAY_STATE.replace(b"C\x10" + bytes(16), _text("\0" * 16)),
             "four entries": _ARRAY_STATE[:-18],
             "15 bytes": _ARRAY_STATE.replace(b"C\x10" + bytes(16), b"C\x0f" + bytes(15)),
             "17 bytes": _ARRAY_STATE.replace(b"C\x10" + bytes(16), b"C\x11" + bytes(17))}[case]
    data = torch_file(_array(state))
    if case == "as numpy writes it":
        out = ember.load(io.BytesIO(data), weights_only=False)
        assert type(out) is np.ndarray and out.dtype == np.float64 and out.tolist() == [0.0, 0.0]
        return
    message = refused_as_trusted(data)
    if case.endswith("bytes"):
        assert f"a NumPy array of shape (2,) and dtype float64 has {case.split()[0]} bytes" in message
    else:
        assert "data.pkl sets a NumPy array's state to (" in message


# ------------------------------------------------------------------------------------ protocol 1
def _protocol_1_checkpoint() -> dict:
    """A training checkpoint as a program saves it: a model's and an Adam's state dicts (its flags are bools, which
    protocols 0 and 1 write as INT text), numbers past 32 bits (LONG text), views sharing a storage."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters(), amsgrad=True)
    model(torch.ones(1, 3)).sum().backward()
    optimizer.step()
    base = torch.arange(10.0)
    return {"model": model.state_dict(), "optim": optimizer.state_dict(), "flags": [True, False],
            "sizes": [2**31, -2**31 - 1, 2**70, -2**70, 2**31 - 1, -2**31], "view": base[2:8:2], "base": base}


def test_a_torch_file_of_pickle_protocol_1_loads_as_pytorch_loads_it():
    """``torch.save(obj, f, pickle_protocol=1)`` writes bools as INT (``I01``/``I00``) and integers past 32 bits as
    LONG (``I...``/``L...L`` text): PyTorch's full unpickler reads them (weights_only=False), and so does ember's
    reader (which reads the other protocols' opcodes with weights_only=True too)."""
    buf = io.BytesIO()
    torch.save(_protocol_1_checkpoint(), buf, pickle_protocol=1)
    assert b"I01\n" in buf.getvalue() and b"L\n" in buf.getvalue()
    ours, theirs = _loads_as_torch(buf.getvalue(), weights_only=False)

    def plain(obj):
        if isinstance(obj, (torch.Tensor, ember.Tensor)):
            return (type(obj).__name__.replace("Parameter", "Tensor"), obj.tolist())
        if isinstance(obj, dict):
            return {k: plain(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return type(obj)(plain(v) for v in obj)
        return (type(obj).__name__, obj)
    assert plain(ours) == plain(theirs)
    assert plain(ember.load(io.BytesIO(buf.getvalue()))) == plain(ours)
    assert ours["optim"]["param_groups"][0]["amsgrad"] is True and ours["sizes"][2] == 2**70
    ours["base"][4] = -1.0  # the view still shares its storage
    assert ours["view"].tolist() == [2.0, -1.0, 6.0]


@pytest.mark.parametrize("op,value", [(b"I01\n", True), (b"I00\n", False), (b"I7\n", 7), (b"I-12\n", -12),
                                      (b"I0x10\n", 16), (b"L5L\n", 5), (b"L-5\n", -5), (b"L0\n", 0)])
def test_the_int_and_long_text_opcodes_load_as_pickle_loads_them(op, value):
    pkl = P2 + op + b"."
    assert pickle.loads(pkl) == value and type(pickle.loads(pkl)) is type(value)
    got = ember.load(io.BytesIO(torch_file(pkl)))
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("op", [b"I1.5\n", b"I\n", b"Ix\n", b"L1.0L\n", b"LL\n", b"I" + b"9" * 5000 + b"\n"])
def test_int_or_long_text_that_is_no_integer_is_refused(op):
    pkl = P2 + op + b"."
    with pytest.raises((ValueError, pickle.UnpicklingError)):
        pickle.loads(pkl)
    text = op[1:-1].decode().removesuffix("L" if op[:1] == b"L" else "")  # (LONG's text may end in an L)
    assert f"data.pkl is malformed ({op[:1].decode()} of {text[:40]!r}, which is no integer)" in refused(
        torch_file(pkl))


# ------------------------------------------------------------------------------------ each message's cut
TEXT = "".join(chr(ord("a") + i % 26) for i in range(120))  # no two neighbouring characters alike


@pytest.mark.parametrize("case", ["persistent id", "dtype state", "array state", "INT text"])
def test_what_a_refusal_shows_of_the_file_is_cut_at_its_length(case):
    """A refusal shows the offending value cut to 80 characters (40 for INT text): the whole message checked, so
    that one character more or fewer is wrong."""
    if case == "persistent id":
        pkl, says = P2 + _text(TEXT) + b"Q.", f"data.pkl has an unsupported persistent id {TEXT[:80]}"
    elif case == "dtype state":
        pkl = P2 + _dtype(state=_text(TEXT)) + b"."
        says = f"data.pkl sets a NumPy dtype's state to {str((TEXT,))[:80]}"
    elif case == "array state":
        pkl, says = _array(_text(TEXT)), f"data.pkl sets a NumPy array's state to {str((TEXT,))[:80]}"
    else:
        pkl = P2 + b"I" + TEXT.encode() + b"\n."
        says = f"data.pkl is malformed (I of {TEXT[:40]!r}, which is no integer)"
    assert refused_as_trusted(torch_file(pkl)).split("): ", 1)[1] == says


# ------------------------------------------------------------------------------------ the nesting bound at its edge
def _tuples(levels: int, leaf=1):
    for _ in range(levels):
        leaf = (leaf,)
    return leaf


@pytest.mark.parametrize("make", [set, frozenset])
def test_a_set_nested_to_the_bound_in_a_torch_file_loads_and_one_level_more_is_refused(make):
    """Protocol 2 pickles a set as a call, ``set([items])``: its arguments' tuple is one level deeper than the set.
    A set at the bound (200 levels) loads as PyTorch loads it, from torch.save's file and from ember.save's
    (format="torch", which writes what ember.load reads); one level more is refused by both."""
    from ember.serialization._archive import MAX_DEPTH

    at_bound, past = make([_tuples(MAX_DEPTH - 1)]), make([_tuples(MAX_DEPTH)])
    for write in (torch.save, lambda obj, f: ember.save(obj, f, format="torch")):
        buf = io.BytesIO()
        write(at_bound, buf)
        ours, theirs = _loads_as_torch(buf.getvalue(), weights_only=False)
        assert type(ours) is make and ours == theirs == at_bound
    buf = io.BytesIO()
    torch.save(past, buf)
    assert f"data.pkl nests deeper than {MAX_DEPTH} levels" in refused_as_trusted(buf.getvalue())
    with pytest.raises(ValueError, match=f"nests {MAX_DEPTH + 1} or more levels deep"):
        ember.save(past, io.BytesIO(), format="torch")


@pytest.mark.parametrize("use", ["returned", "in a list", "a dict key", "in a set", "in a tuple"])
def test_a_tuple_one_level_past_the_bound_is_no_value(use):
    """A tuple may be one level deeper than the bound only as a call's arguments; as a value (the result, or inside
    any container) the bound holds. A tuple at the bound itself is a value like any other."""
    from ember.serialization._archive import MAX_DEPTH

    for levels, ok in ((MAX_DEPTH - 1, True), (MAX_DEPTH, use == "returned"), (MAX_DEPTH + 1, False)):
        deep = b"K\x01" + b"\x85" * levels
        pkl = P2 + {"returned": deep, "in a list": b"]" + deep + b"a", "a dict key": b"}" + deep + b"K\x01s",
                    "in a set": b"\x8f(" + deep + b"\x90", "in a tuple": deep + b"\x85"}[use] + b"."
        if ok:
            assert ember.load(io.BytesIO(torch_file(pkl))) == pickle.loads(pkl)
        else:
            assert f"data.pkl nests deeper than {MAX_DEPTH} levels" in refused(torch_file(pkl)), (use, levels)


@pytest.mark.parametrize("protocol", [1, 4, 5])
def test_files_of_other_pickle_protocols_are_read_where_pytorchs_weights_only_loader_refuses(protocol):
    """docs/api.md's documented leniency: PyTorch's weights-only unpickler knows the opcodes of protocols 2 and 3
    only; ember's interpreter reads those of protocols 1, 4 and 5 too (text integers, short strings, frames, the
    memo), under the same allowlist, with PyTorch's values."""
    buf = io.BytesIO()
    obj = {"w": torch.arange(3.0), "n": 3, "big": 2**70, "flags": [True, False], "name": "x"}
    torch.save(obj, buf, pickle_protocol=protocol)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Detected pickle protocol")  # (PyTorch's, before it refuses)
        torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    out = ember.load(io.BytesIO(buf.getvalue()))
    assert out["w"].tolist() == [0.0, 1.0, 2.0] and {k: out[k] for k in ("n", "big", "flags", "name")} == \
        {"n": 3, "big": 2**70, "flags": [True, False], "name": "x"}
