"""``python -m ember.distributed.run``: start the ranks of a script, torchrun-style, with mpiexec underneath.

Usage::

    python -m ember.distributed.run --nproc-per-node 4 train.py --epochs 3
    python -m ember.distributed.run --nproc-per-node 2 -m mypackage.train
    python -m ember.distributed.run --hosts node1,node2 --nproc-per-node 8 train.py      # 16 ranks

Every rank runs the script as ``__main__`` with the environment a PyTorch script
expects: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``,
``MASTER_ADDR``/``MASTER_PORT`` (informational: MPI does the rendezvous) and
``OMP_NUM_THREADS=1`` unless already set (as torchrun does: N ranks on N cores).
``mpiexec`` is looked for next to ``sys.executable`` first (the ``mpich`` wheel puts
it there), then on PATH; ``--mpiexec PATH`` overrides.

Failures: when a rank raises (or exits non-zero, or dies) the job stops within a
fraction of a second: the rank prints its traceback prefixed ``[ember rank R]`` and
aborts MPI; the launcher also watches each rank's pid and exit record, stops
mpiexec, kills any rank left behind, and exits non-zero naming the failed rank and
its exception. ``--timeout S`` bounds the whole job (exit code 124).

Several nodes: list them with ``--hosts a,b`` (or ``--hostfile F``, one host per
line); ``--nproc-per-node`` ranks start on each, ranks numbered node by node. The
nodes need the same Python environment at the same path and password-less ssh
(MPICH's Hydra and Open MPI both start remote ranks over ssh); under Slurm use
``srun python script.py`` instead. Extra mpiexec flags pass through
``--mpiexec-args``, e.g. ``--mpiexec-args "-iface eth0"`` (MPICH: which network
interface) or ``"--mca btl_tcp_if_include eth0"`` (Open MPI). Failure records are
read from this node only: a rank on another node that fails before
``init_process_group`` is noticed when mpiexec ends (after it, MPI_Abort stops all).
See docs/distributed.md.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from ._errors import RUN_DIR_VAR, record_path

_POLL_S = 0.05
_GRACE_S = 3.0  # how long mpiexec gets to stop its ranks before it is killed
_FLUSH_S = 1.0  # how long a failed job may take to stop by itself (MPI_Abort), flushing its output


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run", description=__doc__.split("\n")[0],
                                allow_abbrev=False)
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, help="ranks per node (default 1)")
    p.add_argument("--nnodes", type=int, default=None, help="number of nodes (default: number of hosts, or 1)")
    p.add_argument("--hosts", default=None, help="comma-separated host names, one per node")
    p.add_argument("--hostfile", default=None, help="file with one host name per line")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: next to python, then PATH)")
    p.add_argument("--mpiexec-args", default="", help="extra mpiexec flags, as one string")
    p.add_argument("--timeout", type=float, default=None, help="stop the job after this many seconds")
    p.add_argument("--master-addr", "--master_addr", default=None, help="MASTER_ADDR (default: first host)")
    p.add_argument("--master-port", "--master_port", type=int, default=29500, help="MASTER_PORT (informational)")
    p.add_argument("--prefix-output", action="store_true", help="prefix each output line with its rank")
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    p.add_argument("script", help="the script (or module, with -m) each rank runs")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def find_mpiexec(given: str | None = None) -> str:
    """``given``, else mpiexec next to the running Python, else mpiexec/mpirun on PATH."""
    if given:
        if shutil.which(given) is None:
            raise SystemExit(f"ember.distributed.run: --mpiexec {given!r} is not an executable")
        return given
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = beside if os.access(beside, os.X_OK) else shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        raise SystemExit("ember.distributed.run: no mpiexec found next to python or on PATH; "
                         "pip install mpi4py mpich (or load your cluster's MPI), or pass --mpiexec PATH")
    return found


def _flavor(mpiexec: str) -> str:
    out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30).stdout
    if "HYDRA" in out:
        return "hydra"
    if "Open MPI" in out or "OpenRTE" in out:
        return "openmpi"
    raise SystemExit(f"ember.distributed.run: {mpiexec} is neither MPICH's Hydra nor Open MPI; pass the host and "
                     "output flags of your MPI with --mpiexec-args")


def _hosts(args) -> list[str]:
    if args.hosts:
        return [h.strip() for h in args.hosts.split(",") if h.strip()]
    if args.hostfile:
        with open(args.hostfile) as f:
            return [line.split()[0] for line in f if line.strip() and not line.startswith("#")]
    return []


def build_command(args, mpiexec: str, world: int, hosts: list[str]) -> list[str]:
    """The mpiexec command line that starts every rank under ``_bootstrap``."""
    flags: list[str] = []
    if hosts or args.prefix_output:
        flavor = _flavor(mpiexec)
        n = args.nproc_per_node
        if hosts and flavor == "hydra":
            flags += ["-hosts", ",".join(hosts), "-ppn", str(n)]
        elif hosts:
            flags += ["--host", ",".join(f"{h}:{n}" for h in hosts), "--map-by", f"ppr:{n}:node"]
            # Open MPI exports only the variables it is told to, to remote nodes.
            for var in ("OMP_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT", "PYTHONPATH", RUN_DIR_VAR):
                flags += ["-x", var]
        if args.prefix_output:
            flags.append("-prepend-rank" if flavor == "hydra" else "--tag-output")
    target = ["-m", args.script] if args.module else [args.script]
    return [mpiexec, *flags, "-n", str(world), *shlex.split(args.mpiexec_args),
            sys.executable, "-m", "ember.distributed._bootstrap", *target, *args.script_args]


def _environment(args, hosts: list[str], run_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env["MASTER_ADDR"] = args.master_addr or (hosts[0] if hosts else "127.0.0.1")
    env["MASTER_PORT"] = str(args.master_port)
    env[RUN_DIR_VAR] = run_dir
    # Ranks import the same ember as this launcher, wherever they start.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = env.get("PYTHONPATH", "").split(os.pathsep)
    if root not in paths:
        env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, paths)])
    return env


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def _local_pid(run_dir: str, rank: int) -> int | None:
    """The rank's pid, if it runs on this host."""
    record = _read(record_path(run_dir, rank, "pid"))
    if record is None:
        return None
    host, pid = record.split()
    return int(pid) if host == socket.gethostname() else None


def _is_rank_process(pid: int) -> bool:
    """Alive, and still an ember rank (not a recycled pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"ember.distributed._bootstrap" in f.read()
    except OSError:
        return False


def failures(run_dir: str, world: int) -> list[tuple[int, int, str]]:
    """(rank, exit code, reason) of the ranks that failed: with an error record, else that died abruptly."""
    raised, died = [], []
    for rank in range(world):
        record = _read(record_path(run_dir, rank, "exit"))
        if record is not None:
            code, _, message = record.partition("\n")
            if int(code) != 0:
                raised.append((rank, int(code), message.strip()))
            continue
        pid = _local_pid(run_dir, rank)
        if pid is not None and not _is_rank_process(pid):
            died.append((rank, 1, f"process {pid} ended without a Python exception: killed by a signal, or "
                                  "stopped by mpiexec after another rank died"))
    return raised or died


def _running_ranks(run_dir: str, world: int) -> list[int]:
    return [r for r in range(world)
            if (pid := _local_pid(run_dir, r)) is not None and _is_rank_process(pid)]


def _stop(proc: subprocess.Popen, run_dir: str, world: int) -> None:
    """Stop mpiexec (it stops its ranks), then kill whatever survived: no process is left behind."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for rank in _running_ranks(run_dir, world):
        try:
            os.kill(_local_pid(run_dir, rank), signal.SIGKILL)
        except ProcessLookupError:  # it ended meanwhile
            pass


def _watch(proc: subprocess.Popen, run_dir: str, world: int, timeout: float | None) -> str | None:
    """Wait for mpiexec; return why the job must be stopped early ("failed"/"timeout"), or None."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while proc.poll() is None:
        if failures(run_dir, world):
            return "failed"
        if deadline is not None and time.monotonic() > deadline:
            return "timeout"
        time.sleep(_POLL_S)
    return None


def _raise_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.nproc_per_node < 1:
        raise SystemExit(f"ember.distributed.run: --nproc-per-node must be >= 1, got {args.nproc_per_node}")
    hosts = _hosts(args)
    nnodes = args.nnodes or max(len(hosts), 1)
    if hosts and nnodes != len(hosts):
        raise SystemExit(f"ember.distributed.run: --nnodes {nnodes} but {len(hosts)} host(s) given: {hosts}")
    if nnodes > 1 and not hosts:
        raise SystemExit("ember.distributed.run: --nnodes > 1 needs --hosts or --hostfile")
    world = nnodes * args.nproc_per_node
    mpiexec = find_mpiexec(args.mpiexec)
    run_dir = tempfile.mkdtemp(prefix="ember-run-")
    command = build_command(args, mpiexec, world, hosts)
    signal.signal(signal.SIGTERM, _raise_on_sigterm)
    proc = subprocess.Popen(command, env=_environment(args, hosts, run_dir))
    try:
        why = _watch(proc, run_dir, world, args.timeout)
        # Read before stopping: the ranks we (or mpiexec) stop would look like failures too.
        failed, still_running = failures(run_dir, world), _running_ranks(run_dir, world)
        if why == "failed":  # let the failed rank's traceback reach us through mpiexec before stopping it
            try:
                proc.wait(_FLUSH_S)
            except subprocess.TimeoutExpired:
                pass
    finally:
        _stop(proc, run_dir, world)
        shutil.rmtree(run_dir, ignore_errors=True)
    return _report(why, proc.returncode, failed, still_running, args.timeout)


def _report(why: str | None, returncode: int, failed: list, still_running: list[int], timeout) -> int:
    say = lambda msg: print(f"ember.distributed.run: {msg}", file=sys.stderr, flush=True)
    if why == "timeout":
        say(f"the job exceeded --timeout {timeout:g} s and was stopped (ranks still running: {still_running})")
        return 124
    for rank, _, reason in failed:
        say(f"rank {rank} failed: {reason}")
    if failed:
        say("stopped the job (a rank's own traceback, if any, is above, prefixed [ember rank N])")
        return failed[0][1]
    if returncode != 0:
        say(f"mpiexec exited with code {returncode}")
    return returncode


if __name__ == "__main__":
    sys.exit(main())
