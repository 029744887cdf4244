"""ember.save(format="torch") lays its zip out as torch.save does: the same records in the same order (data.pkl,
.format_version, .storage_alignment, byteorder, data/N, version, .data/serialization_id), each member's data at a
multiple of 64 bytes (what torch.load(mmap=True) maps), miniz's headers, data descriptors and zip64 end records,
the folder named after the file, and the serialization id PyTorch computes from the records."""

import io
import os
import zipfile

import pytest
import torch

import ember
from ember.serialization import _torch_zip


def _records(data: bytes) -> tuple[str, list[tuple[str, bytes]]]:
    zf = zipfile.ZipFile(io.BytesIO(data))
    infos = zf.infolist()
    archive = infos[0].filename.partition("/")[0]
    return archive, [(i.filename.partition("/")[2], zf.read(i)) for i in infos]


def _layout(data: bytes) -> list[tuple]:
    """Each member: its name, size, flags, where its data starts modulo 64, and the size of its headers."""
    zf = zipfile.ZipFile(io.BytesIO(data))
    out = []
    for i in zf.infolist():
        name_len, extra_len = int.from_bytes(data[i.header_offset + 26:i.header_offset + 28], "little"), \
            int.from_bytes(data[i.header_offset + 28:i.header_offset + 30], "little")
        start = i.header_offset + 30 + name_len + extra_len
        out.append((i.filename.partition("/")[2], i.file_size, i.flag_bits, i.compress_type, i.date_time,
                    i.create_version, i.extract_version, start % 64))
    return out


def _state(lib, storages: int):
    return {f"w{i}": lib.full((i % 4,), float(i)) for i in range(storages)}


@pytest.mark.parametrize("storages", [0, 1, 2, 12, 13, 14, 40, 70, 150])
def test_the_records_of_a_torch_file_are_written_back_byte_for_byte(storages):
    # 13, 14 and 70, 150 cross the growth of the record-name set PyTorch hashes for the serialization id; every
    # fourth storage is empty (no data descriptor, not in the CRC hash)
    buf = io.BytesIO()
    torch.save(_state(torch, storages), buf)
    archive, records = _records(buf.getvalue())
    assert records[-1][0] == ".data/serialization_id"
    out = io.BytesIO()
    _torch_zip.write(out, archive, records[:-1])
    assert out.getvalue() == buf.getvalue()


@pytest.mark.parametrize("payload", [b"PK\x07\x08ab", b"PK\x07\x08abcd", b"PK\x07\x08abcdefgh"])
def test_a_storage_that_starts_like_a_data_descriptor_is_hashed_as_pytorch_hashes_it(payload):
    buf = io.BytesIO()
    torch.save({"x": torch.tensor(list(payload), dtype=torch.uint8)}, buf)
    archive, records = _records(buf.getvalue())
    out = io.BytesIO()
    _torch_zip.write(out, archive, records[:-1])
    assert out.getvalue() == buf.getvalue()


@pytest.mark.parametrize("obj", [5, None, 2.5, True, -70000, 2**70])  # (pickle memoizes containers and strings)
def test_a_file_whose_pickle_is_pytorchs_is_pytorchs_file(tmp_path, obj):
    (tmp_path / "t").mkdir()
    (tmp_path / "e").mkdir()
    torch.save(obj, tmp_path / "t" / "ckpt.pt")
    ember.save(obj, tmp_path / "e" / "ckpt.pt", format="torch")
    assert (tmp_path / "e" / "ckpt.pt").read_bytes() == (tmp_path / "t" / "ckpt.pt").read_bytes()
    t, e = io.BytesIO(), io.BytesIO()
    torch.save(obj, t)
    ember.save(obj, e, format="torch")
    assert e.getvalue() == t.getvalue()


@pytest.mark.parametrize("storages", [1, 3, 20])
def test_tensors_are_laid_out_as_pytorch_lays_them_out(tmp_path, storages):
    torch.save(_state(torch, storages), tmp_path / "t.pt")
    ember.save(_state(ember, storages), tmp_path / "e.pt", format="torch")
    t, e = (tmp_path / "t.pt").read_bytes(), (tmp_path / "e.pt").read_bytes()
    lt, le = _layout(t), _layout(e)
    # the pickles differ in their bytes (ember's pickler memoizes less), hence data.pkl's size and the id
    assert [x[:1] + x[2:] for x in le] == [x[:1] + x[2:] for x in lt]
    assert [x[1] for x in le[1:-1]] == [x[1] for x in lt[1:-1]]
    assert all(x[-1] == 0 for x in le)  # every member's data 64-byte aligned
    assert zipfile.ZipFile(tmp_path / "e.pt").namelist()[0] == "e/data.pkl"
    # the id is what PyTorch's writer computes from these records
    archive, records = _records(e)
    out = io.BytesIO()
    _torch_zip.write(out, archive, records[:-1])
    assert out.getvalue() == e


def test_pytorch_maps_ember_file_and_each_loads_the_other(tmp_path):
    state = {"w": ember.randn(4, 3), "b": ember.arange(5), "h": ember.ones(3, dtype=ember.float16)}
    ember.save(state, tmp_path / "e.pt", format="torch")
    loaded = torch.load(tmp_path / "e.pt", mmap=True, weights_only=True)
    for k, v in state.items():
        assert loaded[k].numpy().tobytes() == v.numpy().tobytes()
    torch.save(loaded, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    again = ember.load(tmp_path / "e.pt")
    for k, v in state.items():
        assert back[k].numpy().tobytes() == again[k].numpy().tobytes() == v.numpy().tobytes()


@pytest.mark.parametrize("name", ["a.b.c", "noext", "x.", "model.pth.tar"])
def test_the_folder_is_named_after_the_file_as_pytorch_names_it(tmp_path, name):
    torch.save(torch.ones(1), tmp_path / name)
    expected = zipfile.ZipFile(tmp_path / name).namelist()
    os.remove(tmp_path / name)
    ember.save(ember.ones(1), tmp_path / name, format="torch")
    assert zipfile.ZipFile(tmp_path / name).namelist() == expected


@pytest.mark.parametrize("name", [".pt", ".hidden"])
def test_a_name_that_is_only_an_extension_is_refused_as_pytorch_refuses_it(tmp_path, name):
    # (PyTorch's writer has no folder name for it; ember's own format, which has no such folder, takes it)
    with pytest.raises(RuntimeError, match="invalid file name"):
        torch.save(torch.ones(1), str(tmp_path / name))
    with pytest.raises(RuntimeError, match="invalid file name"):
        ember.save(ember.ones(1), str(tmp_path / name), format="torch")
    assert not os.listdir(tmp_path)


def test_a_failed_save_keeps_the_previous_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(3)}, path, format="torch")
    before = path.read_bytes()
    with pytest.raises(TypeError):
        ember.save({"w": ember.ones(3), "bad": object()}, path, format="torch")
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]
