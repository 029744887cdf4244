"""A PyTorch file written on a big-endian machine: ``<prefix>/byteorder`` says "big" and every storage holds
big-endian bytes. PyTorch byteswaps such storages on a little-endian machine; ember must too."""

import io
import zipfile

import numpy as np
import pytest
import torch

import ember

DTYPES = [torch.float32, torch.int64, torch.float16, torch.float64, torch.int16, torch.int32, torch.uint8]


def tensors() -> list:
    torch.manual_seed(0)
    out = [(torch.randn(5) * 100).to(d) for d in DTYPES]  # one storage each, keys "0".."6" in this order
    out.append(out[0][1::2])  # a view of the first storage
    return out


def big_endian(data: bytes) -> bytes:
    """The same file as written on a big-endian machine: storages byteswapped, byteorder "big"."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = [(i.filename, zf.read(i)) for i in zf.infolist()]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in members:
            folder, _, key = name.rpartition("/")
            if name.endswith("/byteorder"):
                body = b"big"
            elif folder.endswith("/data") and key.isdigit():
                dtype = torch.empty(0, dtype=DTYPES[int(key)]).numpy().dtype
                body = np.frombuffer(body, dtype=dtype).byteswap().tobytes()
            zf.writestr(name, body)
    return buf.getvalue()


@pytest.fixture(scope="module")
def files() -> tuple[bytes, bytes]:
    buf = io.BytesIO()
    torch.save(tensors(), buf)
    little = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(little)) as zf:
        assert any(n.endswith("/byteorder") and zf.read(n) == b"little" for n in zf.namelist())
    return little, big_endian(little)


def test_pytorch_reads_the_crafted_big_endian_file(files):
    for got, want in zip(torch.load(io.BytesIO(files[1]), weights_only=True), tensors()):
        assert torch.equal(got, want)


def test_a_big_endian_pytorch_file_loads_with_the_right_values(files):
    little, big = files
    assert big != little
    for got, want in zip(ember.load(io.BytesIO(big)), tensors()):
        assert got.dtype == getattr(ember, str(want.dtype).removeprefix("torch."))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert got.numpy().dtype.isnative


def test_a_big_endian_bfloat16_storage_loads_as_pytorch_reads_it():
    """PyTorch byteswaps a big-endian bfloat16 storage too; ember (whose ml_dtypes bfloat16 has no byte order) swaps
    its 16-bit words and reads them as bfloat16, for a tensor and a view of its storage alike."""
    values = torch.randn(4, generator=torch.Generator().manual_seed(0)) * 100
    want = torch.cat([values, torch.tensor([3e30, -1e-30, float("inf")])]).to(torch.bfloat16)
    buf = io.BytesIO()
    torch.save([want, want[1::2]], buf)
    little = buf.getvalue()
    loaded = ember.load(io.BytesIO(little))
    assert loaded[0].dtype == ember.bfloat16
    np.testing.assert_array_equal(loaded[0].float().numpy(), want.float().numpy())
    with zipfile.ZipFile(io.BytesIO(little)) as zf:
        members = [(i.filename, zf.read(i)) for i in zf.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, body in members:
            if name.endswith("/byteorder"):
                body = b"big"
            elif name.rpartition("/")[0].endswith("/data"):
                body = np.frombuffer(body, dtype=np.uint16).byteswap().tobytes()
            zf.writestr(name, body)
    theirs = torch.load(io.BytesIO(out.getvalue()), weights_only=True)
    assert torch.equal(theirs[0], want) and torch.equal(theirs[1], want[1::2])
    mine = ember.load(io.BytesIO(out.getvalue()))
    assert [t.dtype for t in mine] == [ember.bfloat16, ember.bfloat16]
    for got, expected in zip(mine, theirs):
        np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())
