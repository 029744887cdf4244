"""Loading is bounded: only stored zip members, sizes checked before allocating, every failure a RuntimeError.

The fuzz tests corrupt real checkpoints (ember's format, a whole module, PyTorch's
format written by torch, safetensors) thousands of ways and check that loading
either succeeds or raises RuntimeError naming the file, and never allocates much
more than the file's own size.
"""

import io
import json
import pickle
import random
import re
import struct
import tracemalloc
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
import ember.nn as nn
from ember.serialization import safetensors as st


def npy_bytes(descr: str, shape_text: str, fortran: bool = False, payload: bytes = b"") -> bytes:
    """An .npy member with a hand-written header (any shape or dtype text), then ``payload``."""
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_text}, }}"
    header += " " * (-(len(header) + 11) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


def archive(members: dict, method=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def one_tensor(payload: bytes, method=zipfile.ZIP_STORED) -> bytes:
    manifest = {"format": "ember.save", "version": 1, "root": {"array": 0},
                "arrays": [{"kind": "tensor", "requires_grad": False}]}
    return archive({"ember.json": json.dumps(manifest), "arrays/0.npy": payload}, method)


def load_bytes(data: bytes):
    return ember.load(io.BytesIO(data))


def refused(data: bytes) -> str:
    with pytest.raises(RuntimeError) as e:
        load_bytes(data)
    assert str(e.value).startswith("ember.load(")
    return str(e.value)


@pytest.fixture
def traced():
    tracemalloc.start()
    yield
    tracemalloc.stop()


def peak_of(fn) -> int:
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    return tracemalloc.get_traced_memory()[1] - base


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_compressed_members_are_refused_before_decompressing(method, traced):
    bomb = one_tensor(npy_bytes("<f4", "(16777216,)", payload=bytes(64 * 2**20)), method)
    assert len(bomb) < 2**20  # 64 MiB of zeros in well under 1 MiB
    peak = peak_of(lambda: refused(bomb))
    assert peak < 4 * 2**20, peak
    assert "compressed" in refused(bomb)


def test_an_unknown_compression_method_is_a_runtime_error():
    data = bytearray(one_tensor(npy_bytes("<f4", "(2,)", payload=bytes(8))))
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):  # local and central headers: method field
        at = 0
        while (at := data.find(sig, at)) >= 0:
            off = 8 if sig == b"PK\x03\x04" else 10
            data[at + off:at + off + 2] = struct.pack("<H", 99)
            at += 4
    assert "compressed (zip method 99)" in refused(bytes(data))


@pytest.mark.parametrize("shape", ["(1000000000000000000000000000000,)", "(1073741824,)", "(65536, 65536)",
                                   "(-1,)", "(2, 3)", "(3.5,)", "'x'", "(" + "2, " * 70 + ")"])
def test_declared_shapes_must_match_the_bytes_present(shape, traced):
    data = one_tensor(npy_bytes("<f4", shape, payload=bytes(2**20)))
    peak = peak_of(lambda: refused(data))
    assert peak < 4 * 2**20, peak


@pytest.mark.parametrize("descr", ["|O", "<U4", "<c8", "V8", "[('a', '<f4')]", "('<f4', (1000000,))"])
def test_unsupported_dtypes_are_refused(descr):
    header = npy_bytes("<f4", "(2,)").replace(b"'<f4'", descr.encode() if descr.startswith("[") else
                                                 f"'{descr}'".encode() if not descr.startswith("(") else
                                                 descr.encode())
    refused(one_tensor(header + bytes(8)))


def test_deep_manifests_are_refused():
    deep = {"format": "ember.save", "version": 1, "arrays": [], "root": None}
    text = json.dumps(deep).replace("null", '{"list": [' * 100_000 + "]}" * 100_000)
    refused(archive({"ember.json": text}))  # too deep for the JSON parser itself
    text = json.dumps(deep).replace("null", '{"list": [' * 600 + "]}" * 600)
    assert "nests deeper" in refused(archive({"ember.json": text}))


def test_manifest_and_pickle_sizes_are_bounded(monkeypatch):
    from ember.serialization import _archive

    buf = io.BytesIO()
    ember.save({"w": ember.ones(2), "names": ["x" * 100] * 20}, buf)
    torch_buf = io.BytesIO()
    torch.save({"names": [f"{i}" + "x" * 100 for i in range(20)]}, torch_buf)
    monkeypatch.setattr(_archive, "MAX_TEXT_MEMBER", 1000)
    assert "more than the 1000 allowed" in refused(buf.getvalue())
    assert "more than the 1000 allowed" in refused(torch_buf.getvalue())


def test_a_member_larger_than_the_file_is_refused():
    data = bytearray(one_tensor(npy_bytes("<f4", "(2,)", payload=bytes(8))))
    at = data.find(b"PK\x01\x02", 0)
    at = data.find(b"PK\x01\x02", at + 4)  # the array's central entry: claim 1 GiB
    data[at + 20:at + 28] = struct.pack("<II", 2**30, 2**30)
    assert "more than the file holds" in refused(bytes(data))


# ------------------------------------------------------------------------------------------ fuzz
def real_files() -> dict[str, bytes]:
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.Linear(5, 3))
    opt = ember.optim.Adam(model.parameters())
    model(ember.randn(4, 6)).sum().backward()
    opt.step()
    files = {}
    buf = io.BytesIO()
    ember.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": 3, "t": ember.arange(4)[::2]},
               buf)
    files["ember"] = buf.getvalue()
    buf = io.BytesIO()
    ember.save(model, buf)
    files["module"] = buf.getvalue()
    tmodel = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.BatchNorm1d(5))
    topt = torch.optim.SGD(tmodel.parameters(), momentum=0.9)
    tmodel(torch.randn(4, 6)).sum().backward()
    topt.step()
    buf = io.BytesIO()
    torch.save({"model": tmodel.state_dict(), "optim": topt.state_dict(), "view": torch.arange(6)[1::2]}, buf)
    files["torch"] = buf.getvalue()
    buf = io.BytesIO()
    ember.save(model.state_dict(), buf, format="torch")
    files["ember-as-torch"] = buf.getvalue()
    files["safetensors"] = st.save({k: v for k, v in model.state_dict().items()}, {"note": "x"})
    return files


def mutations(data: bytes, rnd: random.Random):
    """Random and structured corruptions of ``data``."""
    n = len(data)
    for _ in range(rnd.randint(1, 8)):  # bit flips
        pos = rnd.randrange(n)
        data = data[:pos] + bytes([data[pos] ^ (1 << rnd.randrange(8))]) + data[pos + 1:]
    yield data
    yield data[:rnd.randrange(n)]  # truncation
    pos = rnd.randrange(n)
    yield data[:pos] + bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 16))) + data[pos + 16:]
    for sig, fields in ((b"PK\x03\x04", (6, 8, 14, 18, 22, 26, 28)), (b"PK\x01\x02", (10, 16, 20, 24, 28, 30, 42)),
                        (b"PK\x05\x06", (8, 10, 12, 16))):  # zip header fields: flags, method, sizes, offsets
        starts = [m.start() for m in re.finditer(re.escape(sig), data)]
        if starts:
            at = rnd.choice(starts) + rnd.choice(fields)
            value = rnd.choice([0, 1, 8, 12, 99, 0xFFFF, 0xFFFFFFFF, rnd.randrange(2**32)])
            yield data[:at] + struct.pack("<I", value)[:4] + data[at + 4:]


def flip_bytes(b: bytes, rnd: random.Random) -> bytes:
    out = bytearray(b)
    for _ in range(rnd.randint(1, 4) if out else 0):
        out[rnd.randrange(len(out))] ^= 0xFF
    return bytes(out)


def rezipped(data: bytes, rnd: random.Random):
    """Edits inside the members, re-zipped with valid CRCs, so the parsers behind the zip layer see them."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    name = rnd.choice(sorted(members))
    body = members[name]
    edits = [
        lambda b: b.replace(b"(", b"(1000000000000, ", 1),  # an .npy shape
        lambda b: b.replace(b"<f4", rnd.choice([b"<f8", b"|O", b">f4", b"<i8", b"|b1", b"<U9"]), 1),
        lambda b: b.replace(b"True", b"False", 1).replace(b"fortran_order': False", b"fortran_order': True", 1),
        lambda b: b[:rnd.randrange(len(b) + 1)],
        lambda b: b + bytes(rnd.randint(1, 9)),
        lambda b: flip_bytes(b, rnd),  # pickle / JSON bytes
        lambda b: b.replace(b'"array": 0', b'"array": 7', 1).replace(b'"kind": "tensor"', b'"kind": "x"', 1),
        lambda b: b.replace(b"torch._utils", b"os\nsystem\n#", 1),
        lambda b: b.replace(b"FloatStorage", b"BFloat16Storage", 1),
        lambda b: b.replace(b'"shape":[', b'"shape":[99999999,', 1),
        lambda b: b.replace(b"K\x05", b"J\xff\xff\xff\x7f", 1),  # a pickled int made huge (a size or offset)
    ]
    members[name] = rnd.choice(edits)(body)
    return archive(members)


def check(data: bytes, bound: int) -> None:
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        load_bytes(data)
    except RuntimeError as e:
        assert str(e).startswith("ember.load(") or "load(" in str(e), e
    except pickle.UnpicklingError as e:  # a global the mutation made up, refused as PyTorch's loader refuses it
        assert str(e).startswith("Weights only load failed") and "ember.load(" in str(e), e
    peak = tracemalloc.get_traced_memory()[1] - base
    assert peak <= bound, (peak, bound)


def test_fuzzed_checkpoints_fail_only_with_runtime_errors_and_bounded_memory(traced):
    rnd = random.Random(0)
    cases = 0
    assert ember.bfloat16.np.itemsize == 2  # ml_dtypes loads on first use: its import is not the loader's memory
    with ember.serialization.safe_globals([nn.Sequential, nn.Linear, nn.BatchNorm1d]):
        for kind, data in real_files().items():
            cases += fuzz(kind, data, rnd)
    assert cases > 1500


def fuzz(kind: str, data: bytes, rnd: random.Random) -> int:
    load_bytes(data)  # the original loads
    bound = 8 * len(data) + 2**20
    cases = 0
    for _ in range(45):
        for bad in mutations(data, rnd):
            check(bad, bound)
            cases += 1
        if kind != "safetensors":
            for _ in range(3):
                check(rezipped(data, rnd), bound)
                cases += 1
    return cases


def test_torch_format_refusals_name_the_global():
    buf = io.BytesIO()
    torch.save({"d": OrderedDict(a=1), "f": np.float32}, buf)
    with pytest.raises(pickle.UnpicklingError) as e:  # PyTorch's type: its weights-only loader refuses it too
        load_bytes(buf.getvalue())
    assert "numpy.float32" in str(e.value) and str(e.value).startswith("Weights only load failed")
    # a class kept as a value: imported without weights_only, as PyTorch's loader does (never called)
    assert ember.load(io.BytesIO(buf.getvalue()), weights_only=False)["f"] is np.float32
    assert torch.load(io.BytesIO(buf.getvalue()), weights_only=False)["f"] is np.float32
