"""ember.vision.datasets.utils: torchvision's checksum, download and argument helpers (messages as torchvision's)."""

import hashlib

import pytest

from ember.vision.datasets import utils


def test_md5_and_integrity(tmp_path):
    path = tmp_path / "blob.bin"
    data = bytes(range(256)) * 9000  # several read chunks
    path.write_bytes(data)
    digest = hashlib.md5(data).hexdigest()
    assert utils.calculate_md5(path) == utils.calculate_md5(str(path), chunk_size=1000) == digest
    assert utils.check_md5(path, digest) and not utils.check_md5(path, "0" * 32)
    assert utils.check_integrity(path) and utils.check_integrity(path, digest)
    assert not utils.check_integrity(path, "0" * 32)
    assert not utils.check_integrity(tmp_path / "absent.bin") and not utils.check_integrity(tmp_path)


def test_download_url_fetches_checks_and_skips_a_verified_file(tmp_path):
    src = tmp_path / "src" / "weights.bin"
    src.parent.mkdir()
    src.write_bytes(b"ember" * 100)
    digest = hashlib.md5(src.read_bytes()).hexdigest()
    url = src.as_uri()
    utils.download_url(url, str(tmp_path / "out"), md5=digest)  # filename defaults to the URL's last part
    assert (tmp_path / "out" / "weights.bin").read_bytes() == src.read_bytes()
    src.write_bytes(b"changed")  # a verified file already there is not fetched again
    utils.download_url(url, tmp_path / "out", md5=digest)
    assert (tmp_path / "out" / "weights.bin").read_bytes() == b"ember" * 100
    with pytest.raises(RuntimeError, match="File not found or corrupted."):
        utils.download_url(url, tmp_path / "out", filename="other.bin", md5=digest)
    utils.download_url(url, tmp_path / "out", filename="other.bin")  # no md5: any file will do
    assert (tmp_path / "out" / "other.bin").read_bytes() == b"changed"


def test_verify_str_arg_and_iterable_to_str():
    assert utils.iterable_to_str(["train", "test", 3]) == "'train', 'test', '3'"
    assert utils.verify_str_arg("train", "split", ("train", "test")) == "train"
    assert utils.verify_str_arg("anything") == "anything"
    with pytest.raises(ValueError) as e:
        utils.verify_str_arg("val", "split", ["train", "test"])
    assert str(e.value) == "Unknown value 'val' for argument split. Valid values are {'train', 'test'}."
    with pytest.raises(ValueError) as e:
        utils.verify_str_arg(3, "split")
    assert str(e.value) == "Expected type str for argument split, but got type <class 'int'>."
    with pytest.raises(ValueError) as e:
        utils.verify_str_arg(None)
    assert str(e.value) == "Expected type str, but got type <class 'NoneType'>."
    with pytest.raises(ValueError, match="^pick one$"):
        utils.verify_str_arg("x", valid_values=["a"], custom_msg="pick one")
