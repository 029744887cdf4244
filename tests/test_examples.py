"""The example programs under examples/ run as their docstrings say, on ember (and the single-process
PyTorch programs on PyTorch too, so that what they claim is PyTorch's behaviour)."""

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

EXAMPLES = os.path.join(ROOT, "examples")


def run(args, timeout=120, env=None):
    """Run `python ARGS` from the repository root with this checkout's ember importable; return stdout."""
    out = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                         env=dict(os.environ, PYTHONPATH=ROOT, **(env or {})))
    assert out.returncode == 0, f"{args} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    return out.stdout


def on_ember(name, *args, timeout=120):
    return run(["-m", "ember.compat", os.path.join("examples", name), *args], timeout=timeout)


def on_torch(name):
    return run([os.path.join("examples", name)])


@pytest.mark.parametrize("runner", [on_ember, on_torch], ids=["ember", "torch"])
def test_single_device_loss_falls(runner):
    first, last, steps = re.fullmatch(r"loss (\S+) -> (\S+) after (\d+) SGD steps\n", runner("single_device.py")).groups()
    assert int(steps) == 20 and float(last) < float(first)


@pytest.mark.parametrize("runner", [on_ember, on_torch], ids=["ember", "torch"])
def test_training_pitfalls_every_claim_holds(runner):
    with open(os.path.join(EXAMPLES, "training_pitfalls.py")) as f:
        written = len(re.findall(r"^claim\(", f.read(), flags=re.M))
    out = runner("training_pitfalls.py")
    assert written >= 18
    assert re.search(r"^training_pitfalls: (\d+) of (\d+) claims hold$", out, flags=re.M).groups() == (str(written),) * 2
    assert out.count("  ok  ") == written


def test_training_loop_learns_schedules_and_reloads():
    out = on_ember("training_loop.py", timeout=180)
    names = re.findall(r"^  (\S+): shape=", out, flags=re.M)
    assert names == [f"{layer}.{p}" for layer in ("fc1", "bn1", "fc2", "bn2", "fc3") for p in ("weight", "bias")]
    assert "no gradient" not in out
    epochs = re.findall(r"^epoch (\d)/6  loss (\S+)  lr (\S+)$", out, flags=re.M)
    assert [int(e) for e, _, _ in epochs] == [1, 2, 3, 4, 5, 6]
    losses, lrs = [float(x) for _, x, _ in epochs], [float(x) for _, _, x in epochs]
    assert losses[-1] < losses[0] / 5
    assert lrs == [0.001] * 4 + [0.0005] * 2          # StepLR(step_size=5, gamma=0.5) halves after epoch 5
    assert float(re.search(r"^test accuracy (\S+)%$", out, flags=re.M).group(1)) >= 90
    assert "checkpoint reloaded: predictions identical" in out


@pytest.mark.parametrize("backend", [None, "mpi"])
def test_ddp_train_on_two_ranks(backend):
    pytest.importorskip("mpi4py")
    env = {"DIST_BACKEND": backend} if backend else {}
    out = run(["-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "50", "-m", "ember.compat",
               os.path.join("examples", "ddp_train.py")], timeout=60, env=env)
    assert ("ddp_train: 2 processes, 5 steps: every .grad was the mean over processes, and the replicas are "
            "identical") in out


def test_grad_report_example_prints_the_table_and_where_the_chart_is(tmp_path):
    out = run([os.path.join("examples", "diagnostics_grad_report.py"), "--out", str(tmp_path)])
    png = tmp_path / "grad_report.png"
    assert out.splitlines()[0].split() == ["parameter", "shape", "mean", "std", "norm", "non-finite"]
    assert len(re.findall(r"^\d\.(weight|bias) ", out, flags=re.M)) == 10
    assert out.rstrip().endswith(f"chart of the gradient norms written to {png}")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_main_job_on_two_ranks_says_what_it_does(tmp_path):
    """scripts/main.sh runs examples/train_mlp.py on 2 ranks; here with small arguments and a deadline."""
    pytest.importorskip("mpi4py")
    pytest.importorskip("matplotlib")
    png = tmp_path / "loss.png"
    out = run(["-m", "ember.distributed.run", "--nproc-per-node", "2", "--timeout", "100",
               os.path.join("examples", "train_mlp.py"), "--epochs", "3", "--samples", "512", "--plot", str(png)],
              timeout=120)
    lines = out.splitlines()
    assert lines[0].startswith("ember main job: an MLP classifier") and "data-parallel on 2 processes" in lines[1]
    assert lines[2].startswith("data: synthetic, 10 Gaussian clusters") and "512 training samples split 2 ways" in out
    epochs = re.findall(r"^epoch (\d)/3  loss (\S+)  train acc (\S+)%  test acc (\S+)%  lr \S+  \(\S+ s, \S+ ms/step\)$",
                        out, flags=re.M)
    assert [int(e[0]) for e in epochs] == [1, 2, 3]
    assert float(epochs[-1][1]) < float(epochs[0][1]) and float(epochs[-1][3]) >= 70
    # output is not a terminal: plain progress lines (8 steps per epoch and rank: one line at 2, 4, 6)
    assert len(re.findall(r"^  epoch 1/3: \d/8 steps \(\d+%\), loss \S+$", out, flags=re.M)) == 3
    assert re.search(r"^done: 3 epochs in \S+ s; loss \S+ -> \S+, test accuracy \S+%$", out, flags=re.M)
    assert f"loss curve: {png}" in lines and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert lines[-2].startswith("next: ")
    assert out.count("ember main job") == 1  # rank 0 alone prints


def test_main_job_progress_bar_in_one_process():
    pytest.importorskip("tqdm")
    out = run([os.path.join("examples", "train_mlp.py"), "--epochs", "1", "--samples", "64", "--test-samples", "16",
               "--progress", "bar", "--plot", ""])
    assert "trained in one process" in out and re.search(r"\d/2 \[", out)  # tqdm: "n/total [elapsed<remaining"
    assert "loss curve" not in out and re.search(r"^epoch 1/1  loss ", out, flags=re.M)
