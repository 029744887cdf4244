"""ember.save never loses the previous checkpoint: a process killed mid-save, a full disk, an unsavable object."""

import io
import os
import pathlib
import resource
import signal
import time
import warnings

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def state(value: float, mib: int = 24) -> dict:
    """A state dict of about ``mib`` MiB, every element ``value``."""
    n = mib * 2**20 // 4 // 8
    return {f"layer{i}.weight": ember.full((n,), value) for i in range(8)}


def check_loads_as_old_or_new(path) -> float:
    out = ember.load(path)
    values = {float(v[0]) for v in out.values()} | {float(v[-1]) for v in out.values()}
    assert len(out) == 8 and len(values) == 1, values
    return values.pop()


def in_child(fn) -> int:
    """Run fn() in a forked child; its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            code = fn()
        except BaseException:
            code = 99
        os._exit(code or 0)
    return pid


def test_a_save_killed_at_any_point_leaves_the_old_or_the_new_checkpoint(tmp_path):
    path = tmp_path / "ckpt.pt"
    old, new = state(0.0), state(1.0)
    ember.save(old, path)
    start = time.perf_counter()
    os.waitpid(in_child(lambda: ember.save(new, tmp_path / "timing.pt")), 0)  # how long a child's save takes
    duration = time.perf_counter() - start
    os.unlink(tmp_path / "timing.pt")
    seen, last, kills = set(), 0.0, 0

    def leftovers():
        return [p.name for p in tmp_path.iterdir() if p.name != "ckpt.pt"]

    # 20 kills spread over 0 .. 2.4x the save (before, during and after the rename); more, spread wider, until
    # kills have landed before the rename, after it, and in the middle of writing (a temporary left behind)
    while kills < 20 or (kills < 40 and not (seen == {0.0, 1.0} and leftovers())):
        if last == 1.0:  # start from the old checkpoint again
            ember.save(old, path)
        pid = in_child(lambda: ember.save(new, path))
        time.sleep(duration * (kills % 20) / 8 * (1 + kills // 20))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        kills += 1
        last = check_loads_as_old_or_new(path)  # never neither
        seen.add(last)
    assert seen == {0.0, 1.0}, f"kills landed only {'after' if seen == {1.0} else 'before'} the save completed"
    # a kill leaves at most its temporary file behind, never a torn destination
    assert leftovers(), "no kill landed while the new checkpoint was being written"
    assert all(n.startswith(".ckpt.pt.") and n.endswith(".tmp") for n in leftovers()), leftovers()

def test_a_full_disk_is_a_runtime_error_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save(state(0.0, mib=1), path)
    before = path.read_bytes()
    read_end, write_end = os.pipe()

    def save_over_the_limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (2**20 // 2, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            ember.save(state(1.0, mib=4), path)
            os.write(write_end, b"no error")
        except Exception as e:
            os.write(write_end, f"{type(e).__name__}: {e}".encode()[:4000])

    pid = in_child(save_over_the_limit)
    os.waitpid(pid, 0)
    os.close(write_end)
    message = os.read(read_end, 8192).decode()
    os.close(read_end)
    assert message.startswith("RuntimeError: ember.save(") and "File too large" in message, message
    assert "is unchanged" in message
    assert path.read_bytes() == before and check_loads_as_old_or_new(path) == 0.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]  # the temporary was removed


def test_unsavable_objects_touch_nothing(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(2)}, path)
    with pytest.raises(TypeError):
        ember.save({"w": object()}, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]
    assert ember.load(path)["w"].tolist() == [1.0, 1.0]


def test_a_new_file_gets_normal_permissions_and_a_symlink_keeps_pointing(tmp_path):
    path = tmp_path / "new.pt"
    ember.save([1], path)
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask
    os.chmod(path, 0o640)
    ember.save([2], path)
    assert path.stat().st_mode & 0o777 == 0o640 and ember.load(path) == [2]
    link = tmp_path / "latest.pt"
    link.symlink_to(path)
    ember.save([3], link)
    assert link.is_symlink() and ember.load(path) == [3]


@pytest.mark.parametrize("name", ["no/such/dir.pt", "a_file/x.pt", "ends_in_a_slash/", "{tmp}/no/f.pt", ""])
def test_a_path_pytorch_cannot_open_is_its_runtime_error(tmp_path, monkeypatch, name):
    # torch.save checks the path before writing: the parent (the text before the last '/', as given) must be a
    # directory, and a name ending in '/' (or empty) is no file name; both RuntimeErrors, nothing written
    import torch

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("")
    name = name.format(tmp=tmp_path)
    for path in (name, pathlib.Path(name)) if name and not name.endswith("/") else (name,):  # (a Path drops it)
        with pytest.raises(RuntimeError) as want:
            torch.save([1], path)
        with pytest.raises(RuntimeError) as got:
            ember.save([1], path)
        assert str(want.value).split("] . ")[-1] == str(got.value)  # PyTorch's C++ location left out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


@pytest.mark.parametrize("obj", [[1], {"s": {1}}, [ember.nn.Linear(2, 2)], [object()]])
def test_a_missing_directory_is_pytorchs_runtime_error_before_anything_else(tmp_path, obj):
    # PyTorch opens the file before it pickles: the directory's error comes first, whatever the object holds
    # (GraphSAGE's torch.save of its whole model into a models/ folder it never made)
    torch = pytest.importorskip("torch")
    path = tmp_path / "no" / "such" / "dir.pt"
    with pytest.raises(RuntimeError) as expected:
        torch.save([1], path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "wrote ember's format": nothing is written
        with pytest.raises(RuntimeError) as got:
            ember.save(obj, path)
    assert str(got.value) == str(expected.value) == f"Parent directory {path.parent} does not exist."


def test_file_objects_still_work():
    buf = io.BytesIO()
    ember.save({"w": ember.arange(3)}, buf)
    buf.seek(0)
    np.testing.assert_array_equal(ember.load(buf)["w"].numpy(), [0, 1, 2])
