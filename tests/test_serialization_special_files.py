"""Saving to a path that is not a regular file writes through it, as PyTorch does, and never replaces it.

A regular file (directly or through a symlink) is replaced atomically; a character device or a FIFO is written
to in place (a temporary renamed over it would destroy the device node or the pipe). Device nodes are made in a
temporary directory (``os.mknod``, which needs root), so a wrong implementation cannot destroy the real /dev ones.
"""

import os
import stat
import threading

import pytest

import ember
from ember.serialization import load_file, save_file

SAVERS = {
    "save": lambda path: ember.save({"w": ember.arange(4.0)}, path),
    "save_torch_format": lambda path: ember.save({"w": ember.arange(4.0)}, path, format="torch"),
    "save_file": lambda path: save_file({"w": ember.arange(4.0)}, path),
}
LOADERS = {"save": ember.load, "save_torch_format": ember.load, "save_file": load_file}


def char_device(tmp_path, name: str, minor: int):
    """A character device node like /dev/null (minor 3) or /dev/full (minor 7), made in ``tmp_path``."""
    path = tmp_path / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except (PermissionError, AttributeError):
        pytest.skip("making a device node needs root")
    return path


@pytest.mark.parametrize("saver", SAVERS)
def test_a_character_device_is_written_to_not_replaced(tmp_path, saver):
    null = char_device(tmp_path, "null", 3)
    SAVERS[saver](null)
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert os.listdir(tmp_path) == ["null"]  # no temporary left beside it
    link = tmp_path / "to_null"
    link.symlink_to(null)
    SAVERS[saver](link)
    assert link.is_symlink() and stat.S_ISCHR(os.stat(null).st_mode)


@pytest.mark.parametrize("saver", SAVERS)
def test_a_full_device_is_a_runtime_error_and_stays_a_device(tmp_path, saver):
    full = char_device(tmp_path, "full", 7)
    with pytest.raises(RuntimeError, match="No space left on device"):
        SAVERS[saver](full)
    assert stat.S_ISCHR(os.stat(full).st_mode)
    assert os.listdir(tmp_path) == ["full"]


@pytest.mark.parametrize("saver", SAVERS)
def test_a_fifo_is_written_through_to_its_reader(tmp_path, saver):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []

    def reader():
        with open(fifo, "rb") as fh:
            received.append(fh.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    done = threading.Event()
    errors = []

    def write():
        try:
            SAVERS[saver](fifo)
        except BaseException as e:  # reported below, in the test's thread
            errors.append(e)
        done.set()

    threading.Thread(target=write, daemon=True).start()
    if not done.wait(20):
        with open(fifo, "wb"):  # unblock a reader still waiting, so that no thread hangs the run
            pass
        pytest.fail("saving to a FIFO did not finish")
    thread.join(20)
    assert not errors, errors
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and os.listdir(tmp_path) == ["pipe"]
    out = tmp_path / "copy"
    out.write_bytes(received[0])
    assert LOADERS[saver](out)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("saver", SAVERS)
def test_regular_files_and_symlinks_to_them_are_replaced_atomically(tmp_path, saver):
    target = tmp_path / "real.pt"
    target.write_bytes(b"old")
    link = tmp_path / "latest.pt"
    link.symlink_to("real.pt")  # relative, as `ln -s` makes it
    chain = tmp_path / "chain.pt"
    chain.symlink_to(link)
    SAVERS[saver](chain)
    assert chain.is_symlink() and link.is_symlink() and not target.is_symlink()
    assert LOADERS[saver](target)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    dangling = tmp_path / "dangling.pt"
    dangling.symlink_to("new_target.pt")
    SAVERS[saver](dangling)
    assert dangling.is_symlink() and LOADERS[saver](tmp_path / "new_target.pt")["w"].tolist()[-1] == 3.0
    assert sorted(os.listdir(tmp_path)) == ["chain.pt", "dangling.pt", "latest.pt", "new_target.pt", "real.pt"]


@pytest.mark.parametrize("saver", list(SAVERS))
def test_a_name_as_long_as_the_file_system_allows(tmp_path, saver):
    """A 250-byte file name (PyTorch writes one, the limit being 255): the temporary beside it is named within the
    limit too, and none is left."""
    import torch

    path = tmp_path / ("w" * 247 + ".pt")
    torch.save({"w": torch.arange(4.0)}, path)
    SAVERS[saver](path)
    assert LOADERS[saver](path)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert os.listdir(tmp_path) == [path.name]
