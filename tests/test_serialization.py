"""ember.save / ember.load: round trips, and refusal of anything that is not an ember.save archive."""

import argparse
import dataclasses
import io
import json
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from ember._dtype import ALL_DTYPES


def round_trip(obj, via="bytes", tmp_path=None):
    if via == "path":
        path = tmp_path / "ckpt.pt"
        ember.save(obj, path)
        return ember.load(str(path))
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return ember.load(buf)


def assert_same_tensor(a, b):
    assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3, 4)])
def test_tensors_of_every_dtype_and_shape(dt, shape):
    rng = np.random.default_rng(0)
    t = ember.tensor((rng.standard_normal(shape) * 10).astype(dt.np))
    assert_same_tensor(round_trip(t), t)


def test_non_contiguous_tensors_keep_their_values(tmp_path):
    base = ember.arange(24, dtype=ember.float32).reshape(2, 3, 4)
    views = [base.permute(2, 0, 1), base[:, ::2, 1:], base.reshape(6, 4).t()]  # the last is Fortran-ordered
    for v in views:
        assert not v.is_contiguous()
        out = round_trip(v, "path", tmp_path)
        assert_same_tensor(out, v)


def test_nested_structures_and_python_values(tmp_path):
    obj = OrderedDict(
        weights={"w": ember.randn(3, 2), "b": ember.zeros(2)},
        meta=[1, 2.5, "s", None, True, False, (1, ("x", 2)), [], {}, float("inf"), -(2**70)],
        ints={0: "zero", 1: [0, 1], -3: (None,), 2.5: "float key", ("t", 1): "tuple key"},
    )
    for via in ("bytes", "path"):
        out = round_trip(obj, via, tmp_path)
        assert type(out) is OrderedDict and list(out) == list(obj)
        assert out["meta"] == obj["meta"] and [type(x) for x in out["meta"]] == [type(x) for x in obj["meta"]]
        assert out["ints"] == obj["ints"] and type(out["weights"]) is dict
        for k in ("w", "b"):
            assert_same_tensor(out["weights"][k], obj["weights"][k])
    nan = round_trip([float("nan")])[0]
    assert nan != nan


def test_sizes_load_as_sizes(tmp_path):
    """A tensor's shape is saved as an ``ember.Size`` and loads as one, as ``torch.load`` gives a ``torch.Size``;
    a size entry holding anything but non-negative integers is refused."""
    t = ember.zeros(2, 0, 3)
    out = round_trip({"shape": t.shape, "sizes": [ember.Size([]), ember.Size([4, 1])]}, "path", tmp_path)
    assert type(out["shape"]) is ember.Size and out["shape"] == (2, 0, 3)
    assert [type(s) for s in out["sizes"]] == [ember.Size] * 2 and out["sizes"] == [(), (4, 1)]
    for bad in ([2, -1], [1.5], [True], "12"):
        manifest = {"format": "ember.save", "version": 1, "root": {"size": bad}, "arrays": []}
        assert "unexpected entry" in load_error(forge(manifest), tmp_path)


def test_requires_grad_and_identity_are_kept():
    w = ember.randn(3, requires_grad=True)
    y = w * 2  # not a leaf: loads as a leaf that requires grad, as torch.load does
    out = round_trip({"a": w, "b": w, "y": y, "d": ember.ones(1)})
    assert out["a"] is out["b"] and out["a"].requires_grad and out["a"].is_leaf
    assert out["y"].requires_grad and out["y"].grad_fn is None and not out["d"].requires_grad
    np.testing.assert_array_equal(out["y"].detach().numpy(), (w * 2).detach().numpy())
    # views of one storage are saved separately and load as independent tensors
    base = ember.zeros(4)
    out = round_trip([base, base[1:]])
    out[0].add_(1)
    assert out[1].tolist() == [0.0, 0.0, 0.0]


def test_numpy_arrays_round_trip():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    buf = io.BytesIO()
    ember.save({"a": a}, buf)
    buf.seek(0)
    out = ember.load(buf, weights_only=False)["a"]  # (refused by default, as PyTorch's: NumPy's globals)
    assert isinstance(out, np.ndarray) and out.dtype == a.dtype
    np.testing.assert_array_equal(out, a)


def nn_and_optim():
    """ember.nn and ember.optim are written alongside this module; skip until they exist."""
    nn, optim = pytest.importorskip("ember.nn"), pytest.importorskip("ember.optim")
    if not (hasattr(nn, "Sequential") and hasattr(optim, "Adam")):
        pytest.skip("ember.nn / ember.optim are not complete yet")
    return nn, optim


def test_state_dicts_round_trip():
    nn, optim = nn_and_optim()
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    opt = optim.Adam(model.parameters(), lr=0.01)
    model(ember.randn(5, 4)).sum().backward()
    opt.step()
    state = {"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}
    out = round_trip(state)
    assert out["epoch"] == 3 and list(out["model"]) == list(state["model"])
    for k, v in state["model"].items():
        assert_same_tensor(out["model"][k], v)
    assert out["optim"]["param_groups"] == state["optim"]["param_groups"]
    assert set(out["optim"]["state"]) == set(state["optim"]["state"])
    fresh = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    fresh.load_state_dict(out["model"])
    x = ember.randn(2, 4)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())
    opt2 = optim.Adam(fresh.parameters(), lr=0.01)
    opt2.load_state_dict(out["optim"])


def test_parameters_load_as_parameters():
    nn, _ = nn_and_optim()
    p = nn.Parameter(ember.randn(2, 2))
    out = round_trip([p])[0]
    assert isinstance(out, nn.Parameter) and out.requires_grad
    np.testing.assert_array_equal(out.detach().numpy(), p.detach().numpy())


@pytest.mark.parametrize("obj", [object(), b"bytes", [lambda: 0], {"k": ember.Generator()}])
def test_unsupported_objects_are_a_type_error(obj):
    with pytest.raises(TypeError, match="ember.save cannot store"):
        round_trip(obj)


@dataclasses.dataclass
class _Settings:
    lr: float = 0.1


class _Custom:
    """Pickled through its own __reduce__ (a call to rebuild it): not rebuilt from its state alone, so refused."""

    def __init__(self):
        self.lr = 0.1

    def __reduce__(self):
        return (_Custom, ())


@pytest.mark.parametrize("obj", [argparse.Namespace(lr=0.1, epochs=3), _Settings()])
def test_a_settings_object_round_trips_as_pytorch_pickles_it(obj):
    # PyTorch pickles a checkpoint's argparse.Namespace or dataclass whole: stored as its class and attributes
    # (rebuilt by weights_only=False, or when its class is allowlisted)
    loaded = ember.load(_saved({"args": obj}), weights_only=False)["args"]
    assert type(loaded) is type(obj) and vars(loaded) == vars(obj)


def _saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return buf


class _ListState:
    def __getstate__(self):
        return [1]


def _hooked_linear():
    m = ember.nn.Linear(2, 1)
    m.register_forward_hook(lambda *args: None)
    return m


def _linear_holding(value):
    m = ember.nn.Linear(2, 1)
    m.blob = value
    return m


def _namespace_with_a_number_key():
    ns = argparse.Namespace(a=1)
    vars(ns)[3] = 1
    return ns


def _cycle():
    a = []
    a.append({"again": a})
    return a


@pytest.mark.parametrize("make,error,says", [
    (_ListState, TypeError, r"cannot store a .*_ListState: its __getstate__\(\) is not a dict of attribute names"),
    (_namespace_with_a_number_key, TypeError, "cannot store a argparse.Namespace: its __getstate__"),
    (_cycle, ValueError, "the object contains a reference cycle through a list"),
    (_hooked_linear, TypeError, r"cannot store a .*Linear with _forward_hooks registered: hooks are code"),
    (lambda: _linear_holding(b"x"), TypeError, r"builtins.bytes.*\(attribute 'blob' of a .*Linear\)$"),
    (lambda: argparse.Namespace(blob=b"x"), TypeError, r"\(attribute 'blob' of a argparse.Namespace\)$"),
    (lambda: np.array(["a"]), TypeError, "cannot store a NumPy array of dtype <U1: it stores bool, integer"),
    (lambda: ember.ones(2).to_sparse(), NotImplementedError, "cannot store a sparse COO tensor"),
], ids=["getstate not a dict", "a number key", "cycle", "hooks", "module attribute", "object attribute", "string array",
        "sparse"])
def test_each_object_save_refuses_names_what_and_where(make, error, says):
    """ember.save's refusals, each with its own error and message (the attribute that holds what it cannot store
    named)."""
    with pytest.raises(error, match=says):
        round_trip(make())


def test_an_object_with_its_own_pickling_is_refused_with_how_to_store_its_fields():
    with pytest.raises(TypeError, match=r"ember.save cannot store an object of type .*_Custom: .*"
                                        r"store its fields as a dict \(vars\(obj\)\)"):
        round_trip({"args": _Custom()})
    with pytest.raises(TypeError) as plain:  # nothing to suggest for an object without fields
        round_trip(object())
    assert "fields" not in str(plain.value)


def test_cycles_are_refused():
    cyc = []
    cyc.append(cyc)
    with pytest.raises(ValueError, match="cycle"):
        round_trip(cyc)
    shared = [1]
    assert round_trip([shared, shared]) == [[1], [1]]  # shared but not cyclic is fine


def test_map_location():
    t = ember.randn(2)
    buf = io.BytesIO()
    ember.save(t, buf)
    for loc in (None, "cpu", ember.device("cpu"), {"cuda:0": "cpu"}, lambda storage, loc: storage):
        buf.seek(0)
        assert_same_tensor(ember.load(buf, map_location=loc), t)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="CPU"):
        ember.load(buf, map_location="cuda")
    buf.seek(0)
    assert_same_tensor(ember.load(buf, weights_only=False), t)


def test_map_location_dict_maps_only_the_locations_it_names(tmp_path):
    """A dict entry applies to storages saved at its key: PyTorch's DDP tutorial loads a CPU checkpoint with
    {"cuda:0": "cuda:1"}, which PyTorch leaves unused; a "cpu" entry naming another device fails in both."""
    path = str(tmp_path / "ckpt.pt")
    torch.save({"w": torch.arange(3.0)}, path)
    ember.save({"w": ember.arange(3.0)}, str(tmp_path / "ember.pt"))
    tutorial = {"cuda:0": "cuda:1"}
    assert torch.load(path, map_location=tutorial, weights_only=True)["w"].tolist() == [0.0, 1.0, 2.0]
    for f in (path, str(tmp_path / "ember.pt")):
        assert ember.load(f, map_location=tutorial)["w"].tolist() == [0.0, 1.0, 2.0]
        assert ember.load(f, map_location={"cuda:0": "cpu", "cpu": "cpu"})["w"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(path, map_location={"cpu": "cuda:0"}, weights_only=True)
    with pytest.raises(RuntimeError, match="CUDA"):
        ember.load(path, map_location={"cpu": "cuda:0"})


def test_pytorch_only_arguments_are_accepted(tmp_path):
    import pickle as pickle_module

    path = tmp_path / "x.pt"
    ember.save({"a": 1}, path, pickle_module, 4, _use_new_zipfile_serialization=True)
    assert ember.load(path, None, pickle_module, weights_only=False, mmap=False, encoding="utf-8") == {"a": 1}


def test_file_object_at_an_offset():
    buf = io.BytesIO()
    buf.write(b"header")
    ember.save([1, ember.ones(2)], buf)
    buf.seek(6)
    out = ember.load(buf)
    assert out[0] == 1 and out[1].tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------ refusing foreign files
def load_error(data: bytes, tmp_path, name="bad.pt", **load_kwargs):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(RuntimeError) as e:
        ember.load(path, **load_kwargs)
    assert name in str(e.value)  # names the file
    return str(e.value)


def test_pickle_files_are_refused(tmp_path):
    """A plain pickle is never unpickled (PyTorch's legacy torch.save files are read: test_serialization_legacy)."""
    assert "pickle" in load_error(pickle.dumps({"a": 1}), tmp_path)
    assert "pickle" in load_error(pickle.dumps([1, 2], protocol=2), tmp_path)


class Boom:
    def __reduce__(self):
        return (print, ("this must never run",))


def forge(manifest, arrays=(), *, raw=None):
    """An archive laid out like ember.save's, with chosen contents."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ember.json", raw if raw is not None else json.dumps(manifest))
        for i, payload in enumerate(arrays):
            zf.writestr(f"arrays/{i}.npy", payload)
    return buf.getvalue()


def npy(a, allow_pickle=False):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, allow_pickle=allow_pickle)
    return buf.getvalue()


def test_pickle_payloads_are_refused(tmp_path, capsys):
    obj_array = np.array([Boom()], dtype=object)
    data = forge({"format": "ember.save", "version": 1, "root": {"array": 0},
                  "arrays": [{"kind": "ndarray", "requires_grad": False}]}, [npy(obj_array, allow_pickle=True)])
    assert "dtype object" in load_error(data, tmp_path)
    assert "must never run" not in capsys.readouterr().out


@pytest.mark.parametrize("manifest", [
    {"format": "something else", "version": 1, "root": 1, "arrays": []},
    {"format": "ember.save", "version": 99, "root": 1, "arrays": []},
    {"format": "ember.save", "version": 1, "root": {"array": 5}, "arrays": []},
    {"format": "ember.save", "version": 1, "root": {"pickle": "cos\nsystem"}, "arrays": []},
    {"format": "ember.save", "version": 1, "root": [1, 2], "arrays": []},
    {"format": "ember.save", "version": 1, "root": {"array": 0}, "arrays": [{"kind": "module"}]},
    {"format": "ember.save", "version": 1, "root": {"array": 0}, "arrays": [{"kind": "tensor", "requires_grad": 0}]},
    [1],
])
def test_malformed_manifests_are_refused(manifest, tmp_path):
    load_error(forge(manifest, [npy(np.zeros(2, np.float32))]), tmp_path)


@pytest.mark.parametrize("root", [{"pickle": "builtins.print"}, {"dtype": "builtins.print"},
                                  {"array": "builtins.print"}, {"module_ref": "collections.OrderedDict"}])
def test_only_a_global_entry_names_a_global(root, tmp_path):
    """A string under any other tag is no class or function to import, even with weights_only=False (where a
    "global" entry would import it): the entry is refused as unexpected."""
    manifest = {"format": "ember.save", "version": 1, "root": root, "arrays": []}
    message = load_error(forge(manifest), tmp_path, weights_only=False)
    assert "unexpected entry" in message and repr(root)[:40] in message


@pytest.mark.parametrize("key,entry,says", [("parameters", ["weight", 3], "parameter 'weight' is a int"),
                                             ("buffers", ["running", "x"], "buffer 'running' is a str"),
                                             ("modules", ["sub", {"array": 0}], "module 'sub' is a Parameter"),
                                             # a hostile name is cut to its first 40 characters in the message
                                             ("parameters", ["w" + "0123456789" * 6, 3],
                                              f"parameter {'w' + '0123456789' * 3 + '012345678'!r} is a int")])
def test_a_module_member_of_the_wrong_kind_is_named(key, entry, says, tmp_path):
    buf = io.BytesIO()
    ember.save(ember.nn.Linear(2, 1), buf)
    with zipfile.ZipFile(buf) as zf:
        manifest, arrays = json.loads(zf.read("ember.json")), [zf.read(f"arrays/{i}.npy") for i in range(2)]
    manifest["root"]["module"][key] = [entry]
    assert says in load_error(forge(manifest, arrays), tmp_path, weights_only=False)


def test_unsupported_payloads_are_refused(tmp_path):
    m = {"format": "ember.save", "version": 1, "root": {"array": 0},
         "arrays": [{"kind": "tensor", "requires_grad": False}]}
    load_error(forge(m, [npy(np.array(["text"]))]), tmp_path)
    load_error(forge(m, [npy(np.zeros(2, np.clongdouble))]), tmp_path)
    load_error(forge(m, [npy(np.zeros(2, np.float32)) + b"extra"]), tmp_path)
    load_error(forge(m, [npy(np.zeros(4, np.float32))[:-3]]), tmp_path)
    load_error(forge(m, []), tmp_path)
    load_error(forge(None, raw="{not json"), tmp_path)


def test_truncated_corrupt_empty_and_foreign_files_are_refused(tmp_path):
    buf = io.BytesIO()
    ember.save({"w": ember.randn(50, 50)}, buf)
    good = buf.getvalue()
    for cut in (10, len(good) // 2, len(good) - 10):
        assert "truncated" in load_error(good[:cut], tmp_path)
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0xFF  # inside the array payload: the CRC check catches it
    load_error(bytes(flipped), tmp_path)
    assert "empty" in load_error(b"", tmp_path)
    assert "not an ember.save, torch.save or safetensors file" in load_error(b"hello world", tmp_path)
    other_zip = io.BytesIO()
    with zipfile.ZipFile(other_zip, "w") as zf:
        zf.writestr("readme.txt", "hi")
    assert "neither an ember.save nor a torch.save file" in load_error(other_zip.getvalue(), tmp_path)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        ember.load(tmp_path / "nope.pt")


def test_tensors_pickle_as_in_pytorch_but_ember_save_writes_no_pickle():
    # pickle.dumps(tensor) works, as in PyTorch (tests/test_tensor_pickling.py); ember.save's files stay a JSON
    # manifest and .npy arrays, which ember.load reads without running code.
    assert pickle.loads(pickle.dumps(ember.arange(3.0))).tolist() == [0.0, 1.0, 2.0]
    buffer = io.BytesIO()
    ember.save({"w": ember.ones(2), "p": ember.nn.Parameter(ember.ones(1))}, buffer)
    names = zipfile.ZipFile(io.BytesIO(buffer.getvalue())).namelist()
    assert names == ["ember.json", "arrays/0.npy", "arrays/1.npy"]


class Holder(ember.nn.Module):
    """A module holding one thing (a submodule, or a tensor as a plain attribute)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner


# One level of nesting, and the way back in: a tensor (or any leaf) inside is no level of its own.
WRAPS = {"list": (lambda x: [x], lambda x: x[0]), "tuple": (lambda x: (x,), lambda x: x[0]),
         "dict": (lambda x: {"k": x}, lambda x: x["k"]), "OrderedDict": (lambda x: OrderedDict(k=x), lambda x: x["k"]),
         "module": (Holder, lambda m: m.inner)}


def nested(levels, wrap, leaf):
    for _ in range(levels):
        leaf = wrap(leaf)
    return leaf


@pytest.mark.parametrize("kind, fmt", [(k, f) for k in WRAPS for f in ("ember", "torch")
                                       if (k, f) != ("module", "torch")])  # PyTorch's format holds no modules
def test_save_writes_the_deepest_nesting_load_reads_and_refuses_deeper(kind, fmt, tmp_path):
    from ember.serialization._archive import MAX_DEPTH

    wrap, unwrap = WRAPS[kind]
    leaf = ember.arange(3.0)
    buf = io.BytesIO()
    ember.save(nested(MAX_DEPTH, wrap, leaf), buf, format=fmt)
    out = ember.load(io.BytesIO(buf.getvalue()), weights_only=False)
    for _ in range(MAX_DEPTH):
        out = unwrap(out)
    assert_same_tensor(out, leaf)
    if fmt == "torch":  # PyTorch reads it too
        out = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
        for _ in range(MAX_DEPTH):
            out = unwrap(out)
        assert torch.equal(out, torch.arange(3.0))
    path = tmp_path / "ckpt.pt"
    ember.save({"step": 1}, path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match=rf"nests {MAX_DEPTH + 1} or more levels deep.*at most {MAX_DEPTH}"):
        ember.save(nested(MAX_DEPTH + 1, wrap, leaf), path, format=fmt)
    assert path.read_bytes() == before and list(tmp_path.iterdir()) == [path]  # no temporary left either
    with pytest.raises(ValueError, match=f"{MAX_DEPTH + 1} or more"):
        ember.save(nested(MAX_DEPTH + 1, wrap, leaf), io.BytesIO(), format=fmt)


@pytest.mark.parametrize("node", ['{"list": [X]}', '{"dict": [["k", X]]}'])
def test_load_refuses_a_manifest_nested_past_the_bound(node):
    from ember.serialization._archive import MAX_DEPTH

    def manifest(levels):
        root = "null"
        for _ in range(levels):
            root = node.replace("X", root)
        return f'{{"format": "ember.save", "version": 1, "arrays": [], "root": {root}}}'

    for levels, loads in ((MAX_DEPTH, True), (MAX_DEPTH + 1, False)):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("ember.json", manifest(levels))
        if loads:
            ember.load(io.BytesIO(buf.getvalue()))
        else:
            with pytest.raises(RuntimeError, match=f"nests deeper than {MAX_DEPTH} levels"):
                ember.load(io.BytesIO(buf.getvalue()))


def test_the_manifests_json_depth_is_bounded_before_it_is_parsed():
    """The JSON parser recurses once per level, so the manifest's depth is bounded before parsing: by the deepest
    manifest a save writes (MAX_DEPTH modules of 4 JSON levels each, inside the manifest's object, around a leaf's
    node). A manifest that deep reaches the decoder (which refuses this raw array as an entry); one level deeper is
    refused unparsed, whatever its nodes would have been."""
    from ember.serialization._archive import MAX_DEPTH

    for extra, message in ((0, "unexpected entry"), (1, f"nests deeper than {MAX_DEPTH} levels")):
        arrays = 4 * MAX_DEPTH + 1 + extra  # (+ the manifest's own object)
        root = "[" * arrays + "]" * arrays
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("ember.json", f'{{"format": "ember.save", "version": 1, "arrays": [], "root": {root}}}')
        with pytest.raises(RuntimeError, match=message):
            ember.load(io.BytesIO(buf.getvalue()))


def _namespace(*attrs):
    return {"object": {"class": "argparse.Namespace", "attrs": [list(a) for a in attrs]}}


@pytest.mark.parametrize("case,says", [
    ("another format", "ember.json does not describe an ember.save file"),
    ("a later version", "format version 2 is not supported (this ember reads version 1)"),
    ("a defaultdict's factory a number", "a defaultdict's factory in ember.json is a int"),
    ("a set of lists", "a set in ember.json holds an unhashable entry"),
    ("a frozenset of dicts", "a frozenset in ember.json holds an unhashable entry"),
    ("an unknown device", "unexpected device 'nowhere'"),
    ("a module of a class that is none", "argparse.Namespace is not an nn.Module subclass"),
    ("a parameter that is a number", "parameter 'weight' is a int"),
    ("a buffer that is a list", "buffer 'running' is a list"),
    ("a submodule that is a parameter", "module 'inner' is a Parameter"),
    ("an object of a module's class", "is not a class whose instances are saved by their attributes"),
    ("a NumPy scalar of two elements", "arrays/0.npy does not hold a NumPy scalar"),
    ("a method that is an attribute", "'a' of a saved object is not a method"),
    ("an object entry that is a list", """unexpected entry "{'object': [1]}" in ember.json"""),
    ("a module entry that is a list", """unexpected entry "{'module': [1]}" in ember.json"""),
    ("an object attribute of a long name named twice", f"invalid attribute name '{'a' * 40}'"),
    ("a module attribute of a long name named twice", f"invalid attribute name '{('_parameters' * 6)[:40]}'"),
])
def test_each_malformed_entry_is_refused_naming_what_is_wrong(case, says, tmp_path):
    """The refusals of the decoder's other entries, each with its own message: the manifest's header, containers
    whose contents cannot be what they claim, a module's stores holding what they cannot, an object entry naming
    a class that is not saved by its attributes, a NumPy scalar or a bound method that is not one."""
    head = {"format": "ember.save", "version": 1, "arrays": []}
    arrays, root = [], None
    if case == "another format":
        head["format"] = "other.save"
    elif case == "a later version":
        head["version"] = 2
    elif case.startswith("a defaultdict"):
        root = {"defaultdict": [1, []]}
    elif case == "a set of lists":
        root = {"set": [{"list": [1]}]}
    elif case == "a frozenset of dicts":
        root = {"frozenset": [{"dict": []}]}
    elif case == "an unknown device":
        root = {"device": "nowhere"}
    elif case == "a module of a class that is none":
        root = {"module": {"class": "argparse.Namespace"}}
    elif case.startswith(("a parameter", "a buffer", "a submodule")):
        store, name, value = {"a parameter": ("parameters", "weight", 1), "a buffer": ("buffers", "running", {
            "list": []}), "a submodule": ("modules", "inner", {"array": 0})}[case.rsplit(" that", 1)[0]]
        manifest, arrays = _linear_manifest(**{store: [[name, value]]})
        head, root = {k: v for k, v in manifest.items() if k != "root"}, manifest["root"]
    elif case == "an object of a module's class":
        manifest, _ = _linear_manifest()
        root = {"object": {"class": manifest["root"]["module"]["class"], "attrs": []}}
    elif case.startswith("a NumPy scalar"):
        head["arrays"], arrays, root = [{"kind": "ndarray", "requires_grad": False}], [npy(np.zeros(2))], {
            "npscalar": 0}
    elif case.endswith("that is a list"):
        root = {case.split()[1]: [1]}
    elif case.startswith("an object attribute"):  # (the name cut to its first 40 characters in the message)
        root = _namespace(("a" * 60, 1), ("a" * 60, 2))
    elif case.startswith("a module attribute"):
        manifest, arrays = _linear_manifest(attrs=[["_parameters" * 6, 1], ["_parameters" * 6, 2]])
        head, root = {k: v for k, v in manifest.items() if k != "root"}, manifest["root"]
    else:
        root = {"method": [_namespace(("a", 1)), "a"]}
    manifest = {**head, "root": root} if root is not None else {**head, "root": 1}
    assert says in load_error(forge(manifest, arrays), tmp_path, weights_only=False)


def test_an_array_whose_member_passes_the_zip_limit_is_written_as_zip64(monkeypatch, tmp_path):
    """zipfile cannot switch a member to ZIP64 once writing, so a member that can pass ZIP64_LIMIT (2 GiB - 1)
    is opened with force_zip64: an array a few bytes under 2 GiB is, with its .npy header. (A broadcast array and
    a stubbed write_array keep the test small.)"""
    import zipfile

    opened = {}
    real_open = zipfile.ZipFile.open

    def spy(self, name, mode="r", pwd=None, *, force_zip64=False):
        opened[getattr(name, "filename", name)] = force_zip64
        return real_open(self, name, mode, pwd, force_zip64=force_zip64)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    monkeypatch.setattr(np.lib.format, "write_array", lambda member, a, allow_pickle: member.write(b"\0"))
    big = np.broadcast_to(np.zeros(1, np.uint8), (zipfile.ZIP64_LIMIT - 16,))
    ember.save({"big": big, "small": np.zeros(3)}, tmp_path / "f.pt")
    assert {k: v for k, v in opened.items() if k.startswith("arrays/")} == {"arrays/0.npy": True,
                                                                            "arrays/1.npy": False}
    # the edge: every member past 1 GiB of data (its header far smaller than the other GiB), none at or below it
    sizes = [2**30 - 1, 2**30, 2**30 + 1]
    ember.save([np.broadcast_to(np.zeros(1, np.uint8), (n,)) for n in sizes], tmp_path / "g.pt")
    assert [opened[f"arrays/{i}.npy"] for i in range(3)] == [False, False, True]


def _linear_manifest(**changes):
    buf = io.BytesIO()
    ember.save(ember.nn.Linear(2, 1), buf)
    with zipfile.ZipFile(buf) as zf:
        manifest, arrays = json.loads(zf.read("ember.json")), [zf.read(f"arrays/{i}.npy") for i in range(2)]
    manifest["root"]["module"].update(changes)
    return manifest, arrays


@pytest.mark.parametrize("case,says", [
    ("arrays not a list", "ember.json has no list of arrays"),
    ("no root", "ember.json has no root object"),
    ("dict of triples", "malformed key/value pairs"),
    ("module without class", "a module entry in ember.json has no class path"),
    ("non_persistent not strings", "malformed list of non-persistent buffers"),
    ("attribute naming a member", "invalid attribute name '_parameters'"),
    ("attribute named by a number", "invalid attribute name '3'"),
    ("object attribute named twice", "argparse.Namespace: invalid attribute name 'a'"),
    ("object attribute named by a number", "argparse.Namespace: invalid attribute name '3'"),
    ("a float16 said to be bfloat16", "malformed description"),
    ("a dtype other than bfloat16", "malformed description"),
])
def test_each_malformed_manifest_is_refused_naming_what_is_wrong(case, says, tmp_path):
    """Each way ember.json can be malformed is refused with its own message (never a Python error from inside
    the decoder), before anything is built from it."""
    arrays = []
    head = {"format": "ember.save", "version": 1}
    if case == "arrays not a list":
        manifest = {**head, "root": 1, "arrays": {"0": 1}}
    elif case == "no root":
        manifest = {**head, "arrays": []}
    elif case == "dict of triples":
        manifest = {**head, "root": {"dict": [["a", 1, 2]]}, "arrays": []}
    elif case == "module without class":
        manifest, arrays = _linear_manifest(**{"class": None})
    elif case == "non_persistent not strings":
        manifest, arrays = _linear_manifest(non_persistent=[1])
    elif case == "attribute naming a member":
        manifest, arrays = _linear_manifest(attrs=[["_parameters", 2]])  # (a name the module state already took)
    elif case == "attribute named by a number":
        manifest, arrays = _linear_manifest(attrs=[[3, 2]])
    elif case.startswith("object attribute"):  # (an argparse.Namespace is saved as its class and its __dict__)
        attrs = [["a", 1], ["a", 2]] if case.endswith("twice") else [["a", 1], [3, 2]]
        manifest = {**head, "root": {"object": {"class": "argparse.Namespace", "attrs": attrs}}, "arrays": []}
    else:
        dtype = "bfloat16" if case.startswith("a float16") else "float16"
        manifest = {**head, "root": {"array": 0}, "arrays": [{"kind": "tensor", "requires_grad": False,
                                                               "dtype": dtype}]}
        arrays = [npy(np.zeros(2, np.float16 if case.startswith("a float16") else np.uint16))]
    assert says in load_error(forge(manifest, arrays), tmp_path, weights_only=False)
