"""ember.distributed.checkpoint in one process: PyTorch's save/load shape and in-place loading (against
torch.distributed.checkpoint), completeness (.metadata written last, incomplete directories refused) and the
step-directory helpers. tests/test_distributed_checkpoint_ranks.py covers real ranks and failures."""

import errno
import inspect
import os

import numpy as np
import pytest
import torch
import torch.distributed.checkpoint as tdcp

import ember
import ember.distributed.checkpoint as dcp


def test_signatures_follow_pytorch():
    for name in ("save", "load"):
        ours, theirs = inspect.signature(getattr(dcp, name)), inspect.signature(getattr(tdcp, name))
        assert list(ours.parameters) == [p for p in theirs.parameters if p in ours.parameters]
        assert {"state_dict", "checkpoint_id", "process_group", "no_dist", "planner"} <= set(ours.parameters)
    assert {"storage_writer"} <= set(inspect.signature(dcp.save).parameters)
    assert {"storage_reader"} <= set(inspect.signature(dcp.load).parameters)


@pytest.mark.parametrize("via", ["checkpoint_id", "storage"])
def test_load_fills_the_given_tensors_in_place_like_pytorch(via, tmp_path):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    results = []
    for lib, mod in ((torch, tdcp), (ember, dcp)):
        path = str(tmp_path / lib.__name__)
        saved = {"w": lib.tensor(values), "step": 7, "nested": {"b": lib.tensor(values[0])}}
        target = {"w": lib.zeros(2, 3), "step": 0, "nested": {"b": lib.zeros(3)}}
        w, b = target["w"], target["nested"]["b"]
        if via == "checkpoint_id":
            mod.save(saved, checkpoint_id=path, no_dist=True)
            mod.load(target, checkpoint_id=path, no_dist=True)
        else:
            mod.save(saved, storage_writer=mod.FileSystemWriter(path), no_dist=True)
            mod.load(target, storage_reader=mod.FileSystemReader(path), no_dist=True)
        assert target["w"] is w and target["nested"]["b"] is b  # the same tensors, filled
        assert sorted(os.listdir(path)) == [".metadata", "__0_0.distcp"]
        results.append((w.numpy().copy(), b.numpy().copy(), target["step"]))
    (tw, tb, ts), (ew, eb, es) = results
    assert np.array_equal(tw, ew) and np.array_equal(tb, eb) and ts == es == 7


def test_missing_key_and_shape_mismatch_are_errors_like_pytorchs(tmp_path):
    """PyTorch wraps the RuntimeError in its CheckpointException (a BaseException); ember raises it plainly."""
    for lib, mod, error in ((torch, tdcp, tdcp.api.CheckpointException), (ember, dcp, RuntimeError)):
        path = str(tmp_path / lib.__name__)
        mod.save({"w": lib.ones(3)}, checkpoint_id=path, no_dist=True)
        with pytest.raises(error, match="Missing key in checkpoint state_dict"):
            mod.load({"w": lib.zeros(3), "other": lib.zeros(1)}, checkpoint_id=path, no_dist=True)
        with pytest.raises(error, match="[Ss]ize mismatch"):
            mod.load({"w": lib.zeros(4)}, checkpoint_id=path, no_dist=True)


def test_modules_and_optimizers_are_saved_and_restored_through_their_state_dicts(tmp_path):
    model = ember.nn.Linear(3, 2)
    optimizer = ember.optim.Adam(model.parameters(), lr=0.1)
    model(ember.randn(4, 3)).sum().backward()
    optimizer.step()
    dcp.save({"model": model, "optimizer": optimizer}, checkpoint_id=tmp_path, no_dist=True)
    fresh = ember.nn.Linear(3, 2)
    fresh_optimizer = ember.optim.Adam(fresh.parameters(), lr=0.1)
    dcp.load({"model": fresh, "optimizer": fresh_optimizer}, checkpoint_id=tmp_path, no_dist=True)
    assert all(ember.equal(a, b) for a, b in zip(model.parameters(), fresh.parameters()))
    saved, loaded = optimizer.state_dict()["state"], fresh_optimizer.state_dict()["state"]
    assert loaded.keys() == saved.keys() and ember.equal(loaded[0]["exp_avg"], saved[0]["exp_avg"])


def test_pytorchs_stateful_protocol_and_its_tutorial_appstate(tmp_path):
    """PyTorch's dcp tutorial imports ``Stateful`` from ``torch.distributed.checkpoint.stateful`` and wraps the
    model and optimizer in an ``AppState(Stateful)`` built on ``get_state_dict``/``set_state_dict``."""
    from torch.distributed.checkpoint.stateful import Stateful as TorchStateful

    from ember.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    from ember.distributed.checkpoint.stateful import Stateful

    for ours, theirs in ((ember.nn.Linear(2, 2), torch.nn.Linear(2, 2)), ({}, {}), (object(), object())):
        assert isinstance(ours, Stateful) == isinstance(theirs, TorchStateful)

    class AppState(Stateful):
        def __init__(self, model, optimizer):
            self.model, self.optimizer = model, optimizer

        def state_dict(self):
            model_state, optimizer_state = get_state_dict(self.model, self.optimizer)
            return {"model": model_state, "optim": optimizer_state}

        def load_state_dict(self, state_dict):
            set_state_dict(self.model, self.optimizer, model_state_dict=state_dict["model"],
                           optim_state_dict=state_dict["optim"])

    model = ember.nn.Linear(3, 2)
    optimizer = ember.optim.Adam(model.parameters(), lr=0.1)
    model(ember.randn(4, 3)).sum().backward()
    optimizer.step()
    dcp.save({"app": AppState(model, optimizer)}, checkpoint_id=tmp_path, no_dist=True)
    fresh = ember.nn.Linear(3, 2)
    fresh_optimizer = ember.optim.Adam(fresh.parameters(), lr=0.1)
    dcp.load({"app": AppState(fresh, fresh_optimizer)}, checkpoint_id=tmp_path, no_dist=True)
    assert all(ember.equal(a, b) for a, b in zip(model.parameters(), fresh.parameters()))
    assert ember.equal(fresh_optimizer.state_dict()["state"][0]["exp_avg"], optimizer.state_dict()["state"][0]["exp_avg"])


def test_an_uninitialized_process_group_saves_alone_with_pytorchs_warning(tmp_path):
    with pytest.warns(UserWarning, match="single process"):
        dcp.save({"x": ember.ones(1)}, checkpoint_id=tmp_path)


_COMPAT_DCP_SAVE = """
import sys
import numpy as np
import torch
import torch.distributed.checkpoint as dcp

np.random.seed(0)
folder = sys.argv[1] + "/ckpt"
dcp.save({"w": torch.ones(2), "numpy_rng": np.random.get_state(legacy=False)}, checkpoint_id=folder, no_dist=True)
state = {"w": torch.zeros(2), "numpy_rng": None}
dcp.load(state, checkpoint_id=folder, no_dist=True)
np.random.set_state(state["numpy_rng"])
print(state["w"].tolist(), np.random.randint(1000))
"""


def test_parts_under_the_compat_runner_are_embers_format_without_a_warning(tmp_path):
    # A PyTorch script's torch.save writes PyTorch's format under the compat runner, but dcp's parts are read by
    # dcp only and may hold what that format cannot (NumPy's RNG state): no warning about a save the user did
    # not write.
    from conftest import run_under_compat

    out = run_under_compat(_COMPAT_DCP_SAVE, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    np.random.seed(0)
    assert out.stdout.split() == ["[1.0,", "1.0]", str(np.random.randint(1000))]


def test_a_failed_part_leaves_no_metadata_and_the_directory_is_never_loaded(tmp_path, monkeypatch):
    dcp.save({"x": ember.ones(2)}, checkpoint_id=tmp_path, no_dist=True)

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(RuntimeError, match="No space left on device.*incomplete"):
        dcp.save({"x": ember.full((2,), 5.0)}, checkpoint_id=tmp_path, no_dist=True)
    monkeypatch.undo()
    assert not (tmp_path / ".metadata").exists()  # overwriting withdrew the old checkpoint first
    with pytest.raises(RuntimeError, match="no .metadata: it is not a complete checkpoint"):
        dcp.load({"x": ember.zeros(2)}, checkpoint_id=tmp_path, no_dist=True)


def test_metadata_is_written_last(tmp_path, monkeypatch):
    order = []
    real = ember.serialization.save
    monkeypatch.setattr(ember.serialization, "save", lambda obj, f, **kw: (order.append(os.path.basename(f)),
                                                                           real(obj, f, **kw)))
    dcp.save({"x": ember.ones(2)}, checkpoint_id=tmp_path, no_dist=True)
    assert order == ["__0_0.distcp", ".metadata"]


def test_latest_checkpoint_skips_incomplete_steps_and_old_ones_can_be_removed(tmp_path):
    assert dcp.latest_checkpoint(tmp_path / "absent") is None
    for step in (2, 5, 10, 12):
        dcp.save({"step": step}, checkpoint_id=tmp_path / f"step_{step}", no_dist=True)
    for step in (3, 12, 14):  # crashed saves: parts without .metadata
        (tmp_path / f"step_{step}").mkdir(exist_ok=True)
        (tmp_path / f"step_{step}" / "__1_0.distcp").write_bytes(b"")
    os.unlink(tmp_path / "step_12" / ".metadata")
    (tmp_path / "notes").mkdir()
    assert dcp.latest_checkpoint(tmp_path) == str(tmp_path / "step_10")  # numeric order, not by name
    state = {"step": 0}
    dcp.load(state, checkpoint_id=dcp.latest_checkpoint(tmp_path), no_dist=True)
    assert state == {"step": 10}
    removed = dcp.remove_incomplete_checkpoints(tmp_path)
    assert sorted(removed) == [str(tmp_path / "step_3")]  # newer incomplete ones may still be being written
    assert sorted(os.listdir(tmp_path)) == ["notes", "step_10", "step_12", "step_14", "step_2", "step_5"]


def test_deprecated_save_state_dict_and_load_state_dict_as_pytorchs(tmp_path):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    messages, results = [], []
    for lib, mod in ((torch, tdcp), (ember, dcp)):
        path = str(tmp_path / lib.__name__)
        target = {"w": lib.zeros(2, 3), "step": 0}
        with pytest.warns(FutureWarning) as record:
            metadata = mod.save_state_dict({"w": lib.tensor(values), "step": 7}, mod.FileSystemWriter(path),
                                           no_dist=True)
            mod.load_state_dict(target, storage_reader=mod.FileSystemReader(path), no_dist=True)
        assert {w.filename for w in record} == {__file__}  # the caller's line
        messages.append([str(w.message) for w in record])
        assert sorted(metadata.state_dict_metadata if lib is torch else metadata.storage_data) == ["step", "w"]
        results.append((target["w"].numpy().copy(), target["step"]))
    assert messages[0] == messages[1]
    assert np.array_equal(results[0][0], results[1][0]) and results[0][1] == results[1][1] == 7
    for name in ("save_state_dict", "load_state_dict"):
        assert list(inspect.signature(getattr(dcp, name)).parameters) == list(
            inspect.signature(getattr(tdcp, name)).parameters)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="coordinator is rank 0"):
        dcp.save_state_dict({"w": ember.ones(1)}, dcp.FileSystemWriter(tmp_path / "x"), coordinator_rank=1,
                            no_dist=True)
