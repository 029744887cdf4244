"""The launcher's torchrun flags and environment, per-rank log files, and --max-restarts resuming from a checkpoint."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import ember  # noqa: E402
from ember.distributed._launch_args import parse  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "dist_scripts")
LAUNCHER = [sys.executable, "-m", "ember.distributed.run"]
ENV = {**os.environ, "PYTHONPATH": ROOT}


def run(*args, timeout=90):
    return subprocess.run([*LAUNCHER, "--timeout", "60", *map(str, args)], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def rank_env(folder, world):
    return [json.loads((folder / f"{r}.json").read_text()) for r in range(world)]


def test_torchrun_variables_and_rendezvous_flags(tmp_path):
    p = run("--standalone", "--nnodes", "1:1", "--node_rank", "0", "--nproc_per_node", "2", "--rdzv-backend", "c10d",
            "--rdzv_endpoint", "localhost:29411", "--rdzv-id", "job7", "--rdzv-conf", "timeout=900", "--role", "trainer",
            "--max-restarts", "2", "--monitor-interval", "0.2", "--run-path", os.path.join(SCRIPTS, "env.py"), tmp_path)
    assert p.returncode == 0, p.stderr
    for rank, env in enumerate(rank_env(tmp_path, 2)):
        assert env == {"RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank), "LOCAL_WORLD_SIZE": "2",
                       "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1", "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": "2",
                       "ROLE_NAME": "trainer", "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "2",
                       "TORCHELASTIC_RUN_ID": "job7", "MASTER_ADDR": "localhost", "MASTER_PORT": "29411",
                       "OMP_NUM_THREADS": env["OMP_NUM_THREADS"] or "unset", "argv": [str(tmp_path)],
                       "main": "__main__", "before": env["before"]}, env
        assert env["before"]["RANK"] == str(rank)  # set before the script runs
        assert env["OMP_NUM_THREADS"] == os.environ.get("OMP_NUM_THREADS", "1")


def test_launcher_replaces_rank_variables_left_in_its_environment(tmp_path):
    # A shell (or an outer job) that exported RANK & co.: torchrun gives each worker its own values; so must ember's
    # launcher, else every rank kept the stale RANK and init_process_group refused it on the ranks it contradicts.
    stale = {"RANK": "1", "WORLD_SIZE": "5", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "7", "GROUP_RANK": "4",
             "ROLE_RANK": "6", "ROLE_WORLD_SIZE": "9"}
    p = subprocess.run([*LAUNCHER, "--timeout", "60", "--nproc-per-node", "2", os.path.join(SCRIPTS, "env.py"),
                        str(tmp_path), "init"], cwd=ROOT, env={**ENV, **stale}, capture_output=True, text=True,
                       timeout=90)
    assert p.returncode == 0, p.stderr
    for rank, env in enumerate(rank_env(tmp_path, 2)):
        assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"], env["GROUP_RANK"],
                env["ROLE_RANK"], env["ROLE_WORLD_SIZE"]) == (str(rank), "2", str(rank), "2", "0", str(rank), "2")
        assert env["before"]["RANK"] == str(rank)


def test_plain_mpiexec_sets_what_docs_say(tmp_path):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    env = {k: v for k, v in ENV.items() if k not in ("OMP_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT")}
    p = subprocess.run([mpiexec, "-n", "2", sys.executable, os.path.join(SCRIPTS, "env.py"), str(tmp_path), "init"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for rank, got in enumerate(rank_env(tmp_path, 2)):
        assert got["before"]["RANK"] is None  # MPI's own names only, until init_process_group
        assert (got["RANK"], got["WORLD_SIZE"], got["LOCAL_RANK"], got["LOCAL_WORLD_SIZE"]) == (str(rank), "2",
                                                                                              str(rank), "2")
        assert (got["GROUP_RANK"], got["GROUP_WORLD_SIZE"], got["ROLE_RANK"], got["ROLE_NAME"]) == ("0", "1",
                                                                                                  str(rank), "default")
        assert got["MASTER_ADDR"] is got["MASTER_PORT"] is got["OMP_NUM_THREADS"] is got["TORCHELASTIC_RUN_ID"] is None


def test_defaults_match_torchrun(tmp_path):
    assert run("--nproc-per-node", "1", os.path.join(SCRIPTS, "env.py"), tmp_path).returncode == 0
    [env] = rank_env(tmp_path, 1)
    assert (env["ROLE_NAME"], env["TORCHELASTIC_RUN_ID"], env["TORCHELASTIC_MAX_RESTARTS"], env["MASTER_PORT"]) == (
        "default", "none", "0", "29500")


def test_module_and_no_python(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "n").mkdir()
    p = run("--nproc-per-node", "2", "--module", "tests.dist_scripts.env", tmp_path / "m")
    assert p.returncode == 0, p.stderr
    assert [e["RANK"] for e in rank_env(tmp_path / "m", 2)] == ["0", "1"]
    # --no-python: the target is an executable (here the interpreter itself), started with the same variables
    p = run("--nproc-per-node", "2", "--no-python", sys.executable, os.path.join(SCRIPTS, "env.py"), tmp_path / "n")
    assert p.returncode == 0, p.stderr
    assert [(e["RANK"], e["ROLE_RANK"]) for e in rank_env(tmp_path / "n", 2)] == [("0", "0"), ("1", "1")]
    p = run("--nproc-per-node", "2", "--no-python", "false")
    assert p.returncode == 1 and re.search(r"rank [01] failed: exited with code 1 \(the first", p.stderr), p.stderr
    p = run("--nproc-per-node", "1", "--no-python", "/nonexistent/program")
    assert p.returncode == 127 and "rank 0 failed: could not start '/nonexistent/program'" in p.stderr, p.stderr


def test_nproc_per_node_auto_and_cpu_are_the_cpu_count():
    cores = len(os.sched_getaffinity(0))
    for value in ("auto", "cpu"):
        args = parse(["--nproc-per-node", value, "x.py"])
        assert args.nproc_per_node == cores and args.world == cores


@pytest.mark.parametrize("flags,message", [
    (["--node-rank", "1"], "ember starts every node from one launcher"),
    (["--nnodes", "1:2"], "elastic membership"),
    (["--nnodes", "2", "--rdzv-endpoint", "head:29400"], "needs --hosts or --hostfile"),
    (["--nproc-per-node", "gpu"], "ember runs on the CPU only"),
    (["--nproc-per-node", "four"], "must be a number, 'cpu' or 'auto'"),
    (["--no-python", "-m"], "cannot be used together"),
    (["--run-path", "-m"], "cannot be used together"),
    (["--redirects", "4"], "expected 0 (none), 1 (stdout), 2 (stderr), 3 (both)"),
    (["--tee", "0:1,x"], "LOCAL_RANK:VALUE pairs"),
    (["--standalone", "--hosts", "a,b"], "--standalone means a single node"),
    (["--max-restarts", "-1"], "--max-restarts must be >= 0"),
])
def test_flags_without_an_mpi_meaning_say_what_to_use(flags, message):
    with pytest.raises(SystemExit, match="ember.distributed.run: ") as caught:
        parse([*flags, "x.py"])
    assert message in str(caught.value)


def test_redirects_and_tee_write_per_rank_logs(tmp_path):
    logs = tmp_path / "logs"
    # rank 0: stdout and stderr only to its files; rank 1: stderr teed (file and console), stdout to the console
    p = run("--nproc-per-node", "2", "--log-dir", logs, "--redirects", "0:3", "--tee", "1:2",
            os.path.join(SCRIPTS, "env.py"), tmp_path)
    assert p.returncode == 0, p.stderr
    read = lambda rank, name: (logs / "attempt_0" / str(rank) / f"{name}.log").read_text()
    assert read(0, "stdout") == "out from rank 0\n" and read(0, "stderr") == "err from rank 0\n"
    assert read(1, "stderr") == "err from rank 1\n" and not (logs / "attempt_0" / "1" / "stdout.log").exists()
    assert "out from rank 0" not in p.stdout and "err from rank 0" not in p.stderr
    assert "out from rank 1" in p.stdout and "err from rank 1" in p.stderr


def _final(folder):
    return {k: v.numpy() for k, v in ember.load(os.path.join(folder, "final.pt")).items()}


def test_max_restarts_resumes_from_the_checkpoint_and_matches_an_uninterrupted_run(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "killed").mkdir()
    script = os.path.join(SCRIPTS, "checkpointed.py")
    plain = run("--nproc-per-node", "2", script, tmp_path / "plain", 6)
    assert plain.returncode == 0, plain.stderr
    killed = run("--nproc-per-node", "2", "--max-restarts", "2", script, tmp_path / "killed", 6, 3)
    assert killed.returncode == 0, killed.stderr
    assert "rank 1 failed: killed by signal SIGKILL" in killed.stderr, killed.stderr
    assert "restarting every rank (restart 1 of --max-restarts 2)" in killed.stderr, killed.stderr
    assert "rank 0 attempt 1 starts at step 3" in killed.stdout, killed.stdout  # resumed, not from scratch
    want, got = _final(tmp_path / "plain"), _final(tmp_path / "killed")
    assert want.keys() == got.keys()
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def test_failures_beyond_max_restarts_fail_the_job(tmp_path):
    p = run("--nproc-per-node", "2", "--max-restarts", "1", os.path.join(SCRIPTS, "fail.py"), "raise", 1, "tok")
    assert p.returncode == 1, p.stderr
    assert p.stderr.count("rank 1 failed: ValueError: rank 1 gave up") == 2, p.stderr
    assert p.stderr.count("restarting every rank") == 1, p.stderr


def test_group_and_role_variables_follow_node_by_node_numbering():
    from ember.distributed._env import elastic_env

    assert elastic_env({"RANK": "5", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"}) == {
        "GROUP_RANK": "1", "GROUP_WORLD_SIZE": "2", "ROLE_RANK": "5", "ROLE_WORLD_SIZE": "8", "ROLE_NAME": "default"}
    assert elastic_env({"RANK": "0"}) == {}


def test_per_rank_stream_values_use_torchruns_syntax():
    from ember.distributed._agent import stream_modes

    assert [stream_modes("0:3,1:2", r) for r in (0, 1, 2)] == [3, 2, 0]
    assert stream_modes("3", 7) == 3 and stream_modes("0", 0) == 0


def test_several_hosts_become_mpiexec_flags():
    from ember.distributed.run import _flavor, build_command, find_mpiexec

    if _flavor(find_mpiexec()) != "hydra":
        pytest.skip("the flags checked here are MPICH Hydra's")
    args = parse(["--hostfile", os.devnull, "--hosts", "node1,node2", "--nproc-per-node", "4", "--rdzv-id", "j",
                  "train.py", "--lr", "0.1"])
    assert (args.nnodes, args.world, args.master_addr) == (2, 8, None)
    command = build_command(args, find_mpiexec(), args.world, args.hosts)
    assert command[1:5] == ["-hosts", "node1,node2", "-ppn", "4"] and command[5:7] == ["-n", "8"]
    assert command[-4:] == ["--", "train.py", "--lr", "0.1"]
    with pytest.raises(SystemExit, match="--nnodes 3 but 2 host"):
        parse(["--hosts", "a,b", "--nnodes", "3", "x.py"])
