"""Weights from the ecosystem: PyTorch's torch.save zip format and safetensors, both ways, without unpickling."""

import argparse
import dataclasses
import io
import os
import pickle
import subprocess
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

import ember
import ember.nn as nn
from ember.serialization import load_file, save_file

TORCH_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
                torch.float32, torch.float64]


def torch_bytes(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def assert_same(e, t):
    """An ember tensor and a torch tensor hold the same dtype, shape, values and requires_grad."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape) and e.requires_grad == t.requires_grad
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())


def varied_tensors() -> dict:
    g = torch.Generator().manual_seed(0)
    out = {}
    for dt in TORCH_DTYPES:
        base = (torch.randn(3, 4, generator=g) * 50).to(dt)
        out[str(dt)] = base
        out[f"{dt}-T"] = base.t()
    out["0d"] = torch.tensor(3.5)
    out["empty"] = torch.zeros(0, 3)
    out["view"] = out["torch.float32"][1:, ::2]
    out["expanded"] = torch.arange(3.0).expand(2, 3)
    out["grad"] = torch.ones(2, requires_grad=True)
    out["param"] = torch.nn.Parameter(torch.randn(2, 2, generator=g))
    out["frozen"] = torch.nn.Parameter(torch.randn(2, generator=g), requires_grad=False)
    return out


class _OrderedDictOfItems:
    """Pickles as ``OrderedDict([(key, value), ...])``: one REDUCE argument, the items (torch.save writes
    ``OrderedDict()`` then SETITEMS, but weights_only=True accepts either)."""

    def __init__(self, items):
        self.items = items

    def __reduce__(self):
        return OrderedDict, (self.items,)


def test_ordered_dict_built_from_one_argument_loads_as_torch_does():
    obj = {"od": _OrderedDictOfItems([("w", torch.arange(3.0)), ("n", 2)])}
    want = torch.load(torch_bytes(obj), weights_only=True)["od"]
    out = ember.load(torch_bytes(obj))["od"]
    assert type(out) is OrderedDict and list(out) == list(want) == ["w", "n"]
    assert_same(out["w"], want["w"])
    assert out["n"] == want["n"] == 2


def test_torch_save_files_load_with_their_values_and_types():
    src = varied_tensors()
    nested = {"tensors": src, "meta": [1, 2.5, "s", None, True, (1, (2, "x")), {3: "int key"}, -(2**70)],
              "ordered": OrderedDict(b=torch.ones(1), a=2), "dtype": torch.float16, "device": torch.device("cpu"),
              "devices": [torch.device("cuda", 1), torch.device("cpu", 0), torch.device("meta")],
              "shapes": [torch.Size([2, 3]), torch.Size([])]}
    out = ember.load(torch_bytes(nested))
    for k, t in src.items():
        assert_same(out["tensors"][k], t)
    assert isinstance(out["tensors"]["param"], nn.Parameter) and out["tensors"]["param"].requires_grad
    assert isinstance(out["tensors"]["frozen"], nn.Parameter) and not out["tensors"]["frozen"].requires_grad
    assert out["meta"] == nested["meta"] and type(out["ordered"]) is OrderedDict and list(out["ordered"]) == ["b", "a"]
    assert out["dtype"] is ember.float16 and out["device"] == ember.device("cpu")
    # a device with an index pickles as (type, index)
    assert out["devices"] == [ember.device("cuda", 1), ember.device("cpu", 0), ember.device("meta")]
    # a torch.Size loads as ember.Size, as torch.load gives torch.Size
    assert out["shapes"] == [(2, 3), ()] and all(type(s) is ember.Size for s in out["shapes"])
    # views of one storage share memory, as in PyTorch
    out["tensors"]["torch.float32"].add_(1.0)
    np.testing.assert_array_equal(out["tensors"]["view"].numpy(), (src["view"] + 1).numpy())



def test_loaded_views_take_in_place_writes_where_pytorch_does():
    """A loaded tensor is written in place as in PyTorch, unless two of its elements share memory (an expanded
    dim of size 2 or more): PyTorch refuses that write, ember too (the view is read-only), whatever the dim."""
    base = torch.arange(12.0)
    src = {"plain": base.reshape(3, 4), "t": base.reshape(3, 4).t(), "step": base[::3], "size1_dim": base[:3][None],
           "expanded2": base[:3].expand(2, 3), "expanded_last": base[:2, None].expand(2, 2),
           "expanded3": base[:2].expand(3, 2)}
    theirs, ours = torch.load(torch_bytes(src)), ember.load(torch_bytes(src))
    for k in src:
        try:
            theirs[k].add_(1)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                ours[k].add_(1)
        else:
            ours[k].add_(1)
        assert_same(ours[k], theirs[k])
    assert_same(ours["plain"], theirs["plain"])  # (all share one storage: every write shows through)


def test_loaded_views_numpy_arrays_are_writable_as_pytorchs():
    """``.numpy()`` of a loaded tensor is writable and writes through to its storage, as PyTorch's, whatever its
    strides: a size-1 dim's (any stride: a column (3, 1) has strides (1, 1)) and strides that do not nest (every
    other column of a 2x3 matrix: strides (3, 2), no two elements at one place). Only an expanded tensor (a dim of
    stride 0) is read-only, as ember's own ``expand()`` makes it (docs/api.md: no in-place writes to one)."""
    base = torch.arange(12.0)
    src = {"plain": base.reshape(3, 4), "t": base.reshape(3, 4).t(), "column": base[:3, None],
           "size1_dim": base[:3][None], "size1_middle": base.reshape(2, 1, 6)[:, :, ::2],
           "every_other_column": base[:6].reshape(2, 3)[:, ::2], "expanded": base[:3].expand(2, 3)}
    theirs, ours = torch.load(torch_bytes(src)), ember.load(torch_bytes(src))
    for k in src:
        assert ours[k].stride() == theirs[k].stride(), k
        if k == "expanded":
            assert not ours[k].numpy().flags.writeable
            continue
        theirs[k].numpy()[(0,) * theirs[k].ndim] = -1.0 - len(k)
        ours[k].numpy()[(0,) * ours[k].ndim] = -1.0 - len(k)
        assert_same(ours["plain"], theirs["plain"])  # (all share one storage: the write shows through)


def test_bytes_in_a_torch_file_load_as_torch_loads_them():
    # pickle protocol 2 writes bytes as _codecs.encode(text, "latin1"); PyTorch's weights_only loader reads them
    obj = {"blob": bytes(range(256)), "nested": [b"\x00ab"]}
    assert ember.load(torch_bytes(obj)) == torch.load(torch_bytes(obj), weights_only=True) == obj


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_torch_files_of_every_pickle_protocol_load(protocol):
    # protocol 4 and later frame the pickle (FRAME opcode with an 8-byte length)
    obj = {"w": torch.arange(6.0).reshape(2, 3), "meta": [1, "s", (2.5, None)]}
    buf = io.BytesIO()
    torch.save(obj, buf, pickle_protocol=protocol)
    buf.seek(0)
    out = ember.load(buf)
    assert_same(out["w"], obj["w"])
    assert out["meta"] == obj["meta"]


def test_optimizer_state_dicts_load_and_resume_like_pytorch():
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    topt = torch.optim.Adam(tmodel.parameters(), lr=0.01)
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    for _ in range(3):
        topt.zero_grad()
        torch.nn.functional.mse_loss(tmodel(x), y).backward()
        topt.step()
    ckpt = ember.load(torch_bytes({"model": tmodel.state_dict(), "optim": topt.state_dict()}))
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    model.load_state_dict(ckpt["model"])
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    opt.load_state_dict(ckpt["optim"])
    ex, ey = ember.tensor(x.numpy()), ember.tensor(y.numpy())
    for _ in range(3):  # both continue from the same state
        topt.zero_grad()
        torch.nn.functional.mse_loss(tmodel(x), y).backward()
        topt.step()
        opt.zero_grad()
        ember.nn.functional.mse_loss(model(ex), ey).backward()
        opt.step()
    for (name, p), tp in zip(model.named_parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_model_trained_in_pytorch_gives_the_same_outputs_in_ember_and_back(tmp_path):
    torch.manual_seed(1)
    tmodel = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.ReLU(),
                                 torch.nn.Flatten(), torch.nn.Linear(8, 3))
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        topt.zero_grad()
        tmodel(torch.randn(4, 1, 4, 4)).pow(2).mean().backward()
        topt.step()
    tmodel.eval()
    torch.save(tmodel.state_dict(), tmp_path / "torch.pt")
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3)).eval()
    model.load_state_dict(ember.load(tmp_path / "torch.pt"))
    x = torch.randn(5, 1, 4, 4)
    np.testing.assert_allclose(model(ember.tensor(x.numpy())).detach().numpy(), tmodel(x).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    # and back: ember trains further, saves in PyTorch's format, PyTorch loads it weights-only
    model.train()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    model(ember.randn(4, 1, 4, 4)).pow(2).mean().backward()
    opt.step()
    model.eval()
    ember.save(model.state_dict(), tmp_path / "ember.pt", format="torch")
    tmodel.load_state_dict(torch.load(tmp_path / "ember.pt", weights_only=True))
    np.testing.assert_allclose(tmodel(x).detach().numpy(), model(ember.tensor(x.numpy())).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_ember_saves_in_pytorch_format_load_in_pytorch_weights_only():
    g = np.random.default_rng(0)
    src = {f"t{i}": ember.tensor((g.standard_normal((2, 3)) * 50).astype(dt.np))
           for i, dt in enumerate(ember._dtype.ALL_DTYPES)}
    src.update(zero_d=ember.tensor(2.0), empty=ember.zeros(0, 2), strided=ember.arange(12.0).reshape(3, 4).t(),
               param=nn.Parameter(ember.ones(2)), frozen=nn.Parameter(ember.ones(1), requires_grad=False),
               grad=ember.ones(3, requires_grad=True))
    obj = {"tensors": src, "meta": [1, -5, 2**40, -(2**70), 0.25, "é", None, False, (1, 2)],
           "ordered": OrderedDict(z=1, a=[]), "dtype": ember.int16}
    buf = io.BytesIO()
    ember.save(obj, buf, format="torch")
    buf.seek(0)
    out = torch.load(buf, weights_only=True)
    for k, t in src.items():
        assert_same(t, out["tensors"][k])
    assert isinstance(out["tensors"]["param"], torch.nn.Parameter) and out["tensors"]["param"].requires_grad
    assert not out["tensors"]["frozen"].requires_grad
    assert out["meta"] == obj["meta"] and type(out["ordered"]) is OrderedDict and out["dtype"] is torch.int16
    buf.seek(0)
    back = ember.load(buf)  # and ember reads its own PyTorch-format file
    for k in src:
        assert_same(back["tensors"][k], out["tensors"][k])
    with pytest.raises(TypeError, match="format='torch'"):
        ember.save({"m": nn.Linear(1, 1)}, io.BytesIO(), format="torch")
    with pytest.raises(ValueError, match="format"):
        ember.save({}, io.BytesIO(), format="pickle")


class Evil:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_a_malicious_torch_file_is_refused_naming_the_global_and_nothing_runs(tmp_path):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(1), "x": Evil()}, buf)
    path = tmp_path / "evil.pt"
    path.write_bytes(buf.getvalue())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        # weights_only=True: PyTorch's type (an UnpicklingError, no RuntimeError); False: ember's refusal
        for weights_only, error in ((True, pickle.UnpicklingError), (False, RuntimeError)):
            with pytest.raises(error, match=r"(posix|os)\.system") as e:
                ember.load(path, weights_only=weights_only)
            assert "evil.pt" in str(e.value)
            assert ("Weights only load failed" if weights_only else "never calls a function") in str(e.value)
            assert isinstance(e.value, RuntimeError) == (not weights_only)
    finally:
        os.chdir(cwd)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("obj", [{"dtype": torch.uint16}, {"dtype": torch.complex32}], ids=["uint16", "complex32"])
def test_dtypes_ember_lacks_are_named(obj):
    with pytest.raises(RuntimeError, match=r"(uint16|complex32).*a dtype ember does not have"):
        ember.load(torch_bytes(obj))


def test_torch_files_load_without_pytorch_installed(tmp_path):
    torch.save({"w": torch.arange(6.0).reshape(2, 3), "opt": {"state": {0: {"step": torch.tensor(2.0)}}}},
               tmp_path / "w.pt")
    script = ("import sys; sys.modules['torch'] = None\n"  # any `import torch` now fails
              "import ember\n"
              f"out = ember.load({str(tmp_path / 'w.pt')!r})\n"
              "assert out['w'].tolist() == [[0, 1, 2], [3, 4, 5]], out\n"
              "assert float(out['opt']['state'][0]['step']) == 2.0\n"
              "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
              "print('ok')\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__))))
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert res.stdout.strip() == "ok", res.stderr


# ------------------------------------------------------------------------------------ safetensors
def test_safetensors_written_by_ember_read_by_the_package(tmp_path):
    src = {k: ember.tensor(v.detach().numpy()) for k, v in varied_tensors().items() if k != "expanded"}
    save_file(src, tmp_path / "m.safetensors", metadata={"format": "pt", "step": "3"})
    by_numpy = safetensors.numpy.load_file(str(tmp_path / "m.safetensors"))
    by_torch = safetensors.torch.load_file(str(tmp_path / "m.safetensors"))
    assert set(by_numpy) == set(src)
    for k, t in src.items():
        np.testing.assert_array_equal(by_numpy[k], t.numpy())
        assert_same(t, by_torch[k])
    with safetensors.safe_open(str(tmp_path / "m.safetensors"), "np") as f:
        assert f.metadata() == {"format": "pt", "step": "3"}


def test_safetensors_written_by_the_package_read_by_ember(tmp_path):
    src = {k: v.detach().contiguous() for k, v in varied_tensors().items() if k not in ("view", "expanded")}
    safetensors.torch.save_file(src, str(tmp_path / "t.safetensors"), metadata={"a": "b"})
    for out in (load_file(tmp_path / "t.safetensors"), ember.load(tmp_path / "t.safetensors")):
        assert set(out) == set(src)
        for k, t in src.items():
            assert_same(out[k], t.detach())
    assert ember.serialization.safetensors.metadata_of(tmp_path / "t.safetensors") == {"a": "b"}
    data = (tmp_path / "t.safetensors").read_bytes()
    assert set(ember.serialization.safetensors.load(data)) == set(src)


def test_safetensors_model_round_trip_gives_the_same_outputs(tmp_path):
    torch.manual_seed(2)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.GELU(), torch.nn.Linear(4, 2))
    safetensors.torch.save_file(tmodel.state_dict(), str(tmp_path / "m.safetensors"))
    model = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Linear(4, 2))
    model.load_state_dict(load_file(tmp_path / "m.safetensors"))
    x = torch.randn(2, 3)
    np.testing.assert_allclose(model(ember.tensor(x.numpy())).detach().numpy(), tmodel(x).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("corrupt", [
    lambda d: d[:7], lambda d: d[:-1], lambda d: d + b"x", lambda d: (2**40).to_bytes(8, "little") + d[8:],
    lambda d: d.replace(b'"F32"', b'"BF16"', 1), lambda d: d.replace(b"data_offsets\":[0", b"data_offsets\":[4", 1),
    lambda d: d.replace(b'"shape":[2', b'"shape":[9', 1),
])
def test_corrupt_safetensors_are_runtime_errors(tmp_path, corrupt):
    save_file({"w": ember.ones(2, 3), "b": ember.zeros(3)}, tmp_path / "ok.safetensors")
    bad = corrupt((tmp_path / "ok.safetensors").read_bytes())
    (tmp_path / "bad.safetensors").write_bytes(bad)
    with pytest.raises(RuntimeError, match="bad.safetensors"):
        load_file(tmp_path / "bad.safetensors")


def test_legacy_and_foreign_zip_members_are_checked():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02]q\x00.")  # an empty list, no storages
    buf.seek(0)
    assert ember.load(buf) == []


_COMPAT_SAVE = """
import sys
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
model(torch.randn(5, 3)).sum().backward()
torch.save({"model": model.state_dict(), "epoch": 3}, sys.argv[1] + "/ckpt.pt")
torch.save(model, sys.argv[1] + "/whole.pt")  # PyTorch's format cannot hold an ember module: ember's, with a warning
x = torch.ones(2, 3)
print(model.eval()(x).sum().item())
"""


def test_torch_save_under_the_compat_runner_writes_a_file_pytorch_loads(tmp_path):
    from conftest import run_under_compat

    out = run_under_compat(_COMPAT_SAVE, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "torch.save('" in out.stderr and "whole.pt') wrote ember's format" in out.stderr, out.stderr
    ckpt = torch.load(tmp_path / "ckpt.pt", weights_only=True)  # PyTorch reads it, weights-only
    assert ckpt["epoch"] == 3
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    model.load_state_dict(ckpt["model"])
    assert model.eval()(torch.ones(2, 3)).sum().item() == pytest.approx(float(out.stdout), rel=1e-6)
    whole = ember.load(tmp_path / "whole.pt", weights_only=False)
    assert isinstance(whole, nn.Sequential)


_EMBER_SCRIPT_SAVE = """
import sys
import numpy as np
import ember as torch

torch.save([np.ones(3, dtype=np.float32)], sys.argv[1] + "/arrays.pt")
torch.save({"w": torch.ones(2)}, sys.argv[1] + "/tensors.pt")
"""


def test_a_program_written_for_ember_saves_embers_format_under_the_compat_runner(tmp_path):
    # The launcher runs every rank's script through the compat runner where PyTorch is not installed: a program
    # that never imports torch must save as it does when run alone, without a warning about PyTorch's format.
    from conftest import run_under_compat

    out = run_under_compat(_EMBER_SCRIPT_SAVE, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    for name in ("arrays.pt", "tensors.pt"):
        with zipfile.ZipFile(tmp_path / name) as zf:
            assert "ember.json" in zf.namelist() and not any(n.endswith("data.pkl") for n in zf.namelist())
    np.testing.assert_array_equal(ember.load(tmp_path / "arrays.pt", weights_only=False)[0], np.ones(3, dtype=np.float32))


def test_ember_save_outside_the_compat_runner_writes_embers_format():
    buf = io.BytesIO()
    ember.save({"w": ember.ones(2)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        assert not any(n.endswith("data.pkl") for n in zf.namelist())


@pytest.mark.parametrize("fmt", ["ember", "torch"])
def test_a_size_saved_loads_as_a_size(tmp_path, fmt):
    """``ember.save`` keeps an ``ember.Size`` a Size (it was stored as a plain tuple), in ember's format and in
    PyTorch's, where ``torch.load`` gives a ``torch.Size``; a plain tuple stays a tuple."""
    obj = {"shape": ember.ones(2, 3).shape, "empty": ember.Size([]), "nested": [ember.Size([4])], "plain": (1, 2)}
    path = tmp_path / "sizes.pt"
    ember.save(obj, path, format=fmt)
    back = ember.load(path)
    assert back == obj
    assert [type(back[k]) for k in ("shape", "empty", "plain")] == [ember.Size, ember.Size, tuple]
    assert type(back["nested"][0]) is ember.Size
    if fmt == "torch":
        theirs = torch.load(path)
        assert type(theirs["shape"]) is torch.Size and theirs["shape"] == torch.Size([2, 3])
        assert type(theirs["plain"]) is tuple


@pytest.mark.parametrize("weights_only", [True, False])
def test_a_whole_pytorch_model_is_refused_naming_its_class_and_what_to_save_instead(tmp_path, weights_only):
    """torch.save(model, f) pickles the module's class, which ember never imports from a PyTorch file, even with
    weights_only=False: the error says so (not that weights-only loading was asked for) and names state_dict().
    With weights_only=True it is PyTorch's type, an UnpicklingError."""
    torch.save(torch.nn.Sequential(torch.nn.Linear(2, 2)), tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError if weights_only else RuntimeError) as e:
        ember.load(tmp_path / "whole.pt", weights_only=weights_only)
    msg = str(e.value)
    assert "torch.nn.modules.container.Sequential" in msg and "even with weights_only=False" in msg
    assert msg.startswith("Weights only load failed") == weights_only  # (PyTorch's first words, which programs test)
    assert "state_dict()" in msg


@pytest.mark.parametrize("protocol", [2, 4])
def test_sets_and_frozensets_in_a_torch_checkpoint_load_as_pytorchs_unpickler_reads_them(protocol):
    """Sets in a torch.save file (protocol 2: REDUCE of builtins.set/frozenset; 4: EMPTY_SET and ADDITEMS; its
    FROZENSET opcode ember refuses, as PyTorch's weights-only reader refuses every protocol 4 file) load as
    PyTorch's full unpickler (the oracle for this trusted file) loads them, next to a tensor."""
    obj = {"s": {1, 2, 3}, "e": set(), "t": torch.arange(3.0), "n": [(1, 2), [3]]}
    if protocol == 2:
        obj["f"] = frozenset({"a", "b"})
    buf = io.BytesIO()
    torch.save(obj, buf, pickle_protocol=protocol)
    want = torch.load(io.BytesIO(buf.getvalue()), weights_only=False)
    got = ember.load(io.BytesIO(buf.getvalue()), weights_only=False)
    if protocol == 2:  # a frozenset, which PyTorch's weights-only loader refuses unless allowlisted (ember read it)
        for load in (torch.load, ember.load):
            with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL frozenset was not an allowed global by default"
                                                             r"\. Please use `(torch|ember)\.serialization\.add_safe"
                                                             r"_globals\(\[frozenset\]\)`"):
                load(io.BytesIO(buf.getvalue()))
        with ember.serialization.safe_globals([frozenset]):
            assert ember.load(io.BytesIO(buf.getvalue()))["f"] == frozenset({"a", "b"})
    else:
        assert ember.load(io.BytesIO(buf.getvalue()))["s"] == want["s"]
    assert type(got["s"]) is set and (protocol != 2 or type(got["f"]) is frozenset)
    assert {k: v for k, v in got.items() if k != "t"} == {k: v for k, v in want.items() if k != "t"}
    np.testing.assert_array_equal(got["t"].numpy(), want["t"].numpy())


_COMPAT_SAVE_BYTES = """
import sys
import torch

torch.save({"ids": b"\\x01\\x02", "w": torch.ones(2)}, sys.argv[1] + "/ckpt.pt")
"""


def test_torch_save_of_what_no_format_holds_is_one_error_in_the_programs_spelling(tmp_path):
    # a checkpoint with bytes, which PyTorch pickles: under the compat runner both of ember's formats refuse them;
    # the error was two chained tracebacks (PyTorch format's, then ember's, "During handling of the above
    # exception ...") naming ember.save. Now: one, naming torch.save
    from conftest import run_under_compat

    out = run_under_compat(_COMPAT_SAVE_BYTES, tmp_path)
    assert out.returncode == 1
    assert out.stderr.count("Traceback") == 1 and "During handling" not in out.stderr, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("TypeError: torch.save cannot store an object of type builtins.bytes"), last
    assert not (tmp_path / "ckpt.pt").exists()  # refused before anything is written


_COMPAT_SAVE_NAMESPACE = """
import argparse
import dataclasses
import sys
import torch
from torch import nn


@dataclasses.dataclass
class Config:
    width: int = 4
    device: torch.device = torch.device("cpu")


args = argparse.Namespace(lr=0.1, epochs=3)
model = nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
model(torch.ones(1, 2)).sum().backward()
opt.step()
torch.save({"args": args, "config": Config(), "model": model.state_dict(), "optimizer": opt.state_dict(),
            "epoch": 3}, sys.argv[1] + "/ckpt.pt")
back = torch.load(sys.argv[1] + "/ckpt.pt", weights_only=False)
print(vars(back["args"]), back["config"].width, back["epoch"])
try:
    torch.load(sys.argv[1] + "/ckpt.pt")
except __import__("pickle").UnpicklingError as e:
    print("refused:", str(e).splitlines()[0])
with torch.serialization.safe_globals([argparse.Namespace, Config, torch.device]):
    print(vars(torch.load(sys.argv[1] + "/ckpt.pt")["args"]))
"""


def test_torch_save_of_a_namespace_and_a_dataclass_under_the_compat_runner_writes_a_file_pytorch_loads(tmp_path):
    # RepDistiller's final checkpoint holds its argparse options: the common idiom {'args': Namespace, 'model':
    # state_dict, 'optimizer': ..., 'epoch': int} is written in PyTorch's format, the Namespace and the dataclass
    # by reference to their classes as PyTorch's pickle writes them, without a warning (it was ember's format,
    # with one); PyTorch's torch.load reads it with weights_only=False and refuses it by default, as it does
    # PyTorch's own file of the same checkpoint
    from conftest import run_under_compat

    out = run_under_compat(_COMPAT_SAVE_NAMESPACE, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "{'lr': 0.1, 'epochs': 3} 4 3", lines
    assert lines[1] == "refused: Weights only load failed. This file can still be loaded, to do so you have two " \
                       "options, do those steps only if you trust the source of the checkpoint. ", lines
    assert lines[2] == "{'lr': 0.1, 'epochs': 3}"
    with zipfile.ZipFile(tmp_path / "ckpt.pt") as zf:
        assert any(n.endswith("data.pkl") for n in zf.namelist())


@dataclasses.dataclass
class _Config:
    width: int = 4
    device: object = None


def _checkpoint(m, model, opt) -> dict:
    """The common checkpoint idiom, built with ``m`` (ember or torch)."""
    model(m.ones(1, 2)).sum().backward()
    opt.step()
    args = argparse.Namespace(lr=0.1, epochs=3, device=m.device("cpu"))
    return {"args": args, "config": _Config(device=m.device("cpu")), "model": model.state_dict(),
            "optimizer": opt.state_dict(), "epoch": 3, "same_args": args}


def _assert_same_checkpoint(got, want):
    assert type(got["args"]) is argparse.Namespace and type(got["config"]) is _Config
    assert got["same_args"] is got["args"] and want["same_args"] is want["args"]  # one object, as pickle's memo
    assert {k: str(v) for k, v in vars(got["args"]).items()} == {k: str(v) for k, v in vars(want["args"]).items()}
    assert got["config"].width == want["config"].width and str(got["config"].device) == "cpu"
    assert got["epoch"] == want["epoch"] == 3
    for k in want["model"]:
        np.testing.assert_allclose(np.asarray(got["model"][k].detach().numpy()), want["model"][k].detach().numpy())
    assert got["optimizer"]["param_groups"] == want["optimizer"]["param_groups"]
    for i, s in want["optimizer"]["state"].items():
        np.testing.assert_allclose(got["optimizer"]["state"][i]["momentum_buffer"].numpy(),
                                   s["momentum_buffer"].numpy())


def _both_checkpoints():
    torch.manual_seed(0)
    tmodel = torch.nn.Linear(2, 2)
    model = nn.Linear(2, 2)
    model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tmodel.state_dict().items()})
    return (_checkpoint(ember, model, ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)),
            _checkpoint(torch, tmodel, torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)))


def test_a_checkpoint_with_a_namespace_and_a_dataclass_written_by_ember_loads_in_pytorch():
    mine, theirs = _both_checkpoints()
    buf = io.BytesIO()
    ember.save(mine, buf, format="torch")
    _assert_same_checkpoint(torch.load(io.BytesIO(buf.getvalue()), weights_only=False), theirs)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL argparse\.Namespace was not an allowed global"):
        torch.load(io.BytesIO(buf.getvalue()))  # refused by default, as PyTorch refuses its own file of it
    with torch.serialization.safe_globals([argparse.Namespace, _Config]):
        _assert_same_checkpoint(torch.load(io.BytesIO(buf.getvalue())), theirs)
    _assert_same_checkpoint(ember.load(io.BytesIO(buf.getvalue()), weights_only=False), theirs)


def test_a_checkpoint_with_a_namespace_and_a_dataclass_written_by_pytorch_loads_in_ember():
    # it was refused even with weights_only=False (ember's reader built no object of a class)
    _, theirs = _both_checkpoints()
    data = torch_bytes(theirs).getvalue()
    _assert_same_checkpoint(ember.load(io.BytesIO(data), weights_only=False), theirs)
    with pytest.raises(pickle.UnpicklingError) as e:  # PyTorch's default refusal: its type, its words
        ember.load(io.BytesIO(data))
    assert str(e.value).startswith("Weights only load failed") and "GLOBAL argparse.Namespace" in str(e.value)
    assert "add_safe_globals([argparse.Namespace])" in str(e.value) and not isinstance(e.value, RuntimeError)
    with ember.serialization.safe_globals([argparse.Namespace, _Config]):
        _assert_same_checkpoint(ember.load(io.BytesIO(data)), theirs)


def _unsafe(get, data: bytes) -> list:
    return sorted(get(io.BytesIO(data)))


@pytest.mark.parametrize("case", ["checkpoint", "whole_model", "numpy_scalar", "uint16", "set", "plain", "range"])
def test_get_unsafe_globals_in_checkpoint_names_what_pytorch_names(case):
    """PyTorch's ``get_unsafe_globals_in_checkpoint`` on the same file is the oracle: the globals a weights_only
    load refuses, less those allowlisted (it was missing from ember)."""
    objs = {"checkpoint": {"args": argparse.Namespace(a=1), "config": _Config(), "w": torch.ones(2),
                           "dtype": torch.float16, "device": torch.device("cpu"), "od": OrderedDict(a=1)},
            "whole_model": torch.nn.Sequential(torch.nn.Linear(2, 2)), "numpy_scalar": {"x": np.float32(1.0)},
            "uint16": {"u": torch.ones(2, dtype=torch.uint16)}, "set": {"s": {1, 2}},
            "plain": {"w": torch.nn.Parameter(torch.ones(2))},
            "range": {"r": range(3)}}  # (protocol 2 writes Python 2's __builtin__ xrange: builtins.range to both)
    data = torch_bytes(objs[case]).getvalue()
    want = _unsafe(torch.serialization.get_unsafe_globals_in_checkpoint, data)
    assert _unsafe(ember.serialization.get_unsafe_globals_in_checkpoint, data) == want
    with torch.serialization.safe_globals([argparse.Namespace]), ember.serialization.safe_globals([argparse.Namespace]):
        assert _unsafe(ember.serialization.get_unsafe_globals_in_checkpoint, data) == \
            _unsafe(torch.serialization.get_unsafe_globals_in_checkpoint, data)


def test_get_unsafe_globals_in_checkpoint_of_embers_files():
    # ember's PyTorch-format file: both functions read the same bytes
    buf = io.BytesIO()
    ember.save({"args": argparse.Namespace(a=1), "config": _Config(), "w": ember.ones(2)}, buf, format="torch")
    assert _unsafe(ember.serialization.get_unsafe_globals_in_checkpoint, buf.getvalue()) == \
        _unsafe(torch.serialization.get_unsafe_globals_in_checkpoint, buf.getvalue()) == \
        ["argparse.Namespace", f"{__name__}._Config"]
    # ember's own format: the globals PyTorch's pickle names for the same objects
    buf = io.BytesIO()
    ember.save({"args": argparse.Namespace(a=1), "x": np.float32(1.0), "w": ember.ones(2)}, buf)
    want = _unsafe(torch.serialization.get_unsafe_globals_in_checkpoint,
                   torch_bytes({"args": argparse.Namespace(a=1), "x": np.float32(1.0), "w": torch.ones(2)}).getvalue())
    assert _unsafe(ember.serialization.get_unsafe_globals_in_checkpoint, buf.getvalue()) == want
    for bad in (b"", b"not a checkpoint"):
        with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
            ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(bad))
