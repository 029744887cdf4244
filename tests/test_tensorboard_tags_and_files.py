"""``SummaryWriter``'s tags and event file names against PyTorch's writer: every ``add_*`` keeps its tag as given
(tensorboardX's summaries would write ``w [0]`` as ``w__0_``), and event files are named
``events.out.tfevents.<time>.<host>.<pid>.<n>``, so that processes writing to one folder in the same second
do not share a file."""

import os
import re
import socket

import numpy as np
import pytest

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
pytest.importorskip("tensorboardX")


def _write(writer_class, lib, logdir):
    with writer_class(str(logdir), filename_suffix=".s") as w:
        w.add_histogram("w [0]", lib.arange(10, dtype=lib.float32), 0)
        w.add_histogram("w [1]", np.arange(5.0), 1, bins="auto")
        w.add_image("img (a)", lib.zeros(3, 4, 5), 0)
        w.add_images("imgs #1", lib.zeros(2, 3, 4, 4), 0)
        w.add_image_with_boxes("boxes: 1", lib.zeros(3, 8, 8), lib.tensor([[1.0, 1.0, 4.0, 4.0]]), 0,
                               labels=["a"])
        w.add_scalars("pair (x)", {"a": 1.0, "b": 2.0}, 0)
    acc = event_accumulator.EventAccumulator(str(logdir))
    acc.Reload()
    tags = {kind: sorted(acc.Tags()[kind]) for kind in ("histograms", "images", "scalars")}
    runs = sorted(os.path.relpath(d, logdir) for d, _, files in os.walk(logdir) if files)
    pair = event_accumulator.EventAccumulator(str(logdir / "pair (x)_a"))
    pair.Reload()
    return tags, runs, pair.Tags()["scalars"]


def test_tags_are_kept_as_pytorchs(tmp_path):
    import torch
    import torch.utils.tensorboard as torch_tb

    import ember
    from ember.utils.tensorboard import SummaryWriter

    theirs = _write(torch_tb.SummaryWriter, torch, tmp_path / "torch")
    mine = _write(SummaryWriter, ember, tmp_path / "ember")
    assert mine == theirs
    assert theirs[0]["histograms"] == ["w [0]", "w [1]"] and theirs[2] == ["pair (x)"]


def test_event_files_are_named_as_pytorchs(tmp_path):
    from ember.utils.tensorboard import SummaryWriter

    names = []
    for run in ("a", "a", "b"):  # (two writers in one folder, in the same second: two files)
        with SummaryWriter(str(tmp_path / run), filename_suffix=".x") as w:
            w.add_scalar("s", 1.0, 0)
            assert w.filename_suffix == ".x"
    for run in ("a", "b"):
        names += sorted(os.listdir(tmp_path / run))
    pattern = re.compile(rf"events\.out\.tfevents\.\d{{10}}\.{re.escape(socket.gethostname())}\.{os.getpid()}"
                         rf"\.(\d+)\.x")
    numbers = [int(pattern.fullmatch(n).group(1)) for n in names]
    assert len(names) == 3 and len(set(numbers)) == 3
