"""``SummaryWriter.add_audio`` against PyTorch's writer: the clip is encoded as 16-bit WAV with Python's ``wave``
module (tensorboardX's own ``add_audio`` imports the soundfile package, which PyTorch's writer does not need), its
samples squeezed, clipped to [-1, 1] with PyTorch's printed warning, and a clip of more than one dimension is
PyTorch's AssertionError."""

import math
import sys

import numpy as np
import pytest

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
pytest.importorskip("tensorboardX")


def _clips(lib):
    t = lib.arange(0, 400, dtype=lib.float32) / 8000
    tone = 0.8 * lib.sin(2 * math.pi * 440 * t)
    return {"tone (a)": (tone.reshape(1, 1, -1), 8000), "loud": (3 * tone, 22050),
            "short/clip": (lib.tensor([0.5, -0.25, 1.0, -1.0, 0.123456]), 16000)}


def _write(writer_class, lib, logdir):
    with writer_class(str(logdir)) as writer:
        for step, (tag, (clip, rate)) in enumerate(_clips(lib).items()):
            writer.add_audio(tag, clip, step, sample_rate=rate)
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={"audio": 0})
    acc.Reload()
    return {tag: [(e.step, e.encoded_audio_string, e.content_type, e.sample_rate, e.length_frames)
                  for e in acc.Audio(tag)] for tag in sorted(acc.Tags()["audio"])}


def test_add_audio_writes_pytorchs_wav_without_soundfile(tmp_path, monkeypatch, capsys):
    import torch
    import torch.utils.tensorboard as torch_tb

    import ember
    from ember.utils.tensorboard import SummaryWriter

    theirs = _write(torch_tb.SummaryWriter, torch, tmp_path / "torch")
    torch_printed = capsys.readouterr().out
    monkeypatch.setitem(sys.modules, "soundfile", None)  # (PyTorch's writer does not need it)
    mine = _write(SummaryWriter, ember, tmp_path / "ember")
    assert capsys.readouterr().out == torch_printed == "warning: audio amplitude out of range, auto clipped.\n"
    assert list(mine) == list(theirs) == ["loud", "short/clip", "tone (a)"]
    assert mine == theirs
    assert theirs["tone (a)"][0][4] == 400 and theirs["short/clip"][0][3] == 16000


@pytest.mark.parametrize("shape", [(2, 100), (3, 1, 4)])
def test_add_audio_of_more_than_one_dimension_is_pytorchs_error(tmp_path, shape):
    import torch
    import torch.utils.tensorboard as torch_tb

    from ember.utils.tensorboard import SummaryWriter

    clip = np.zeros(shape, dtype=np.float32)
    for writer_class, run in ((torch_tb.SummaryWriter, "torch"), (SummaryWriter, "ember")):
        with writer_class(str(tmp_path / run)) as writer:
            with pytest.raises(AssertionError, match="^input tensor should be 1 dimensional.$"):
                writer.add_audio("a", torch.from_numpy(clip) if run == "torch" else clip)
