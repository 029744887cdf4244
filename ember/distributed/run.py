"""``python -m ember.distributed.run``: start the ranks of a script, torchrun-style, with mpiexec underneath.

Usage::

    python -m ember.distributed.run --nproc-per-node 4 train.py --epochs 3
    python -m ember.distributed.run --nproc-per-node 2 -m mypackage.train
    python -m ember.distributed.run --hosts node1,node2 --nproc-per-node 8 train.py      # 16 ranks
    python -m ember.distributed.run --nproc-per-node 4 --max-restarts 3 train.py         # restart on failure

Every rank runs the script as ``__main__`` with the environment a PyTorch script
expects from torchrun: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``,
``GROUP_RANK``, ``GROUP_WORLD_SIZE``, ``ROLE_RANK``, ``ROLE_WORLD_SIZE``, ``ROLE_NAME``,
``TORCHELASTIC_RESTART_COUNT``, ``TORCHELASTIC_MAX_RESTARTS``, ``TORCHELASTIC_RUN_ID``,
``MASTER_ADDR``/``MASTER_PORT`` (informational: MPI does the rendezvous) and
``OMP_NUM_THREADS=1`` unless already set. torchrun's flags are accepted with their
meaning under MPI, or stop with a message saying what to use instead
(docs/distributed.md lists them).

mpiexec starts one small supervisor per rank (``_agent.py``) which starts the rank,
records how it ended, and dies with its parent; the launcher watches those records
(``_outcome.py``): when a rank fails it names the rank that failed first and how,
stops the others, and restarts the whole job if ``--max-restarts`` allows. If the
launcher itself is killed, a guard process (``_job.py``) stops every rank and removes
its temporary directory. SIGTERM and SIGINT are forwarded to the ranks, which get
``--grace-period`` seconds to stop (to save a checkpoint) before they are killed; the
launcher then exits with 128 + the signal number (130 for Ctrl-C).
See docs/distributed.md and docs/failures.md.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import _outcome
from ._bootstrap import on_ember
from ._env import HWLOC_XMLFILE, PER_RANK_VARS, no_topology_file
from ._job import Guard, Job
from ._launch_args import parse
from ._records import RUN_DIR_VAR

_FLUSH_S = 1.0  # how long a failed job may take to stop by itself (MPI_Abort), flushing its output
# how long ranks in MPI's finalisation (their script and its threads ended) may stay there once another rank
# ended with os._exit(0), which never finalises MPI: they can wait for that one forever
_TEARDOWN_GRACE_S = 10.0
_AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_agent.py")


def _say(message: str) -> None:
    print(f"ember.distributed.run: {message}", file=sys.stderr, flush=True)


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


_EXPORTED = ("OMP_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT", "PYTHONPATH", RUN_DIR_VAR, "ROLE_NAME",
             "GROUP_WORLD_SIZE", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID")


def build_command(args, mpiexec: str, world: int, hosts: list[str], log_dir: str = "") -> list[str]:
    """The mpiexec command line that starts every rank under its supervisor (``_agent.py``)."""
    flags: list[str] = []
    if hosts or args.prefix_output:
        flavor = _flavor(mpiexec)
        n = args.nproc_per_node
        if hosts and flavor == "hydra":
            flags += ["-hosts", ",".join(hosts), "-ppn", str(n)]
        elif hosts:
            flags += ["--host", ",".join(f"{h}:{n}" for h in hosts), "--map-by", f"ppr:{n}:node"]
            for var in _EXPORTED:  # Open MPI exports only the variables it is told to, to remote nodes
                flags += ["-x", var]
        if args.prefix_output:
            flags.append("-prepend-rank" if flavor == "hydra" else "--tag-output")
    agent = [_AGENT, "--redirects", args.redirects, "--tee", args.tee, "--log-dir", log_dir]
    if args.no_python:
        agent.append("--no-python")
    return [mpiexec, *flags, "-n", str(world), *shlex.split(args.mpiexec_args),
            sys.executable, *agent, "--", *rank_target(args)]


def rank_target(args) -> list[str]:
    """What each rank's Python runs: the script (or ``-m module``) and its arguments; under the compat runner
    (``python -m ember.compat -m torch.distributed.run ...``) through it, so ``torch`` is ember in the ranks too."""
    target = ["-m", args.script, *args.script_args] if args.module else [args.script, *args.script_args]
    from .. import compat

    return on_ember(target) if compat.is_active() and not args.no_python else target


def _environment(args, hosts: list[str], run_dir: str, attempt: int) -> dict[str, str]:
    # Each rank sets RANK & co. from MPI where unset: values left in this environment (a shell's export, an outer
    # job's) would be every rank's, the same stale RANK on all of them.
    env = {name: value for name, value in os.environ.items() if name not in PER_RANK_VARS}
    env.setdefault("OMP_NUM_THREADS", "1")
    env["MASTER_ADDR"] = args.master_addr or (hosts[0] if hosts else "127.0.0.1")
    env["MASTER_PORT"] = str(args.master_port)
    env[RUN_DIR_VAR] = run_dir
    env.setdefault(HWLOC_XMLFILE, no_topology_file(run_dir))  # no topology file in /tmp to leave behind
    env["ROLE_NAME"] = args.role
    env["GROUP_WORLD_SIZE"] = str(args.nnodes)
    env["TORCHELASTIC_RESTART_COUNT"] = str(attempt)
    env["TORCHELASTIC_MAX_RESTARTS"] = str(args.max_restarts)
    env["TORCHELASTIC_RUN_ID"] = args.rdzv_id
    # Ranks import the same ember as this launcher, wherever they start.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = env.get("PYTHONPATH", "").split(os.pathsep)
    if root not in paths:
        env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, paths)])
    return env


class _Signals:
    """SIGINT/SIGTERM/SIGHUP set a flag (no traceback from here); the watch loop stops the ranks."""

    def __init__(self) -> None:
        self.received: list[int] = []
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, lambda s, _frame: self.received.append(s))


class _Result:
    def __init__(self, kind: str, failed=(), signum: int = 0, running=(), returncode: int = 0) -> None:
        self.kind, self.failed, self.signum = kind, list(failed), signum
        self.running, self.returncode = list(running), returncode
        self.banner = ""


def _stop_on_signal(job: Job, signals: _Signals, grace: float, world: int) -> _Result:
    signum = signals.received[0]
    _say(f"received {signal.Signals(signum).name}: sent it to the ranks, which have {grace:g} s to stop "
         "(--grace-period) before they are killed; a second signal kills them now")
    signalled: set[int] = set()
    deadline = time.monotonic() + grace
    while not job.ended() and time.monotonic() < deadline and len(signals.received) == 1:
        job.signal_ranks(signum, signalled)  # again for ranks that were still starting
        time.sleep(0.05)
    return _Result("signal", signum=signum, running=job.running_ranks())


def _watch(job: Job, args, world: int, deadline: float | None, signals: _Signals) -> _Result:
    python, gone, finished_at = not args.no_python, set(), None
    while True:
        if signals.received:
            return _stop_on_signal(job, signals, args.grace_period, world)
        found = _outcome.failures(job.run_dir, world, python, gone)
        # os._exit(0) on some ranks only fails the job if the others do not all end with 0 as well
        if found and not all(f.soft for f in found):
            job.wait(_FLUSH_S)  # let the failed rank's output through: after MPI_Abort mpiexec ends by itself
            return _Result("failed", _outcome.failures(job.run_dir, world, python, gone))
        if job.ended():
            found = _outcome.failures(job.run_dir, world, python, gone)
            if found:
                return _Result("failed", found)
            done = python and _outcome.all_finished(job.run_dir, world)
            return _Result("ended", returncode=0 if done else job.proc.returncode)
        if python and _outcome.all_finished(job.run_dir, world) \
                and _outcome.ended_without_finalising(job.run_dir, world) \
                and _outcome.all_finalizing(job.run_dir, job.running_ranks()):
            finished_at = finished_at or time.monotonic()
            if time.monotonic() - finished_at > _TEARDOWN_GRACE_S:
                return _Result("ended", returncode=0)  # the scripts all ended; what is left waits for nothing
        if deadline is not None and time.monotonic() > deadline:
            return _Result("timeout", running=job.running_ranks())
        running = set(job.running_ranks())
        job.note_proxy_files()
        time.sleep(args.monitor_interval)
        # a supervisor that vanished without its exit record was killed (checked after the sleep: it writes
        # the record just before it ends)
        gone |= {r for r in running - set(job.running_ranks()) if job.exit_record(r) is None}


def _attempt(args, command_for, run_dir: str, attempt: int, guard: Guard, signals: _Signals,
             deadline: float | None) -> _Result:
    attempt_dir = os.path.join(run_dir, f"attempt_{attempt}")
    os.mkdir(attempt_dir)
    command, env = command_for(attempt), _environment(args, args.hosts, attempt_dir, attempt)
    job = Job(command, env, attempt_dir, args.world)
    guard.tell(f"mpiexec {job.proc.pid}")
    try:
        result = _watch(job, args, args.world, deadline, signals)
    finally:
        job.kill()
    for failure in result.failed:  # the rank's own report, if mpiexec did not get it (all) through before the stop
        last = failure.report.rstrip("\n").rpartition("\n")[2]
        if failure.report and not job.shown(last + "\n"):
            sys.stderr.write(job.unshown(failure.report))
    sys.stderr.flush()
    if result.kind == "failed":
        for line in _outcome.describe(result.failed, attempt_dir, args.world):
            _say(line)
    result.banner = job.banner()
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    mpiexec = find_mpiexec(args.mpiexec)
    run_dir = tempfile.mkdtemp(prefix="ember-run-")
    signals = _Signals()
    guard = Guard(run_dir, args.world)
    deadline = None if args.timeout is None else time.monotonic() + args.timeout

    def command_for(attempt: int) -> list[str]:
        log_dir = os.path.join(args.log_dir, f"attempt_{attempt}") if args.log_dir else ""
        return build_command(args, mpiexec, args.world, args.hosts, log_dir)

    try:
        for attempt in range(args.max_restarts + 1):
            result = _attempt(args, command_for, run_dir, attempt, guard, signals, deadline)
            if result.kind != "failed" or attempt == args.max_restarts or signals.received:
                break
            _say(f"restarting every rank (restart {attempt + 1} of --max-restarts {args.max_restarts}); "
                 "TORCHELASTIC_RESTART_COUNT tells the script")
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
        guard.done()
    return _report(result, args)


def _report(result: _Result, args) -> int:
    if result.kind == "timeout":
        _say(f"the job exceeded --timeout {args.timeout:g} s and was stopped (ranks still running: "
             f"{result.running})")
        return 124
    if result.kind == "signal":
        name = signal.Signals(result.signum).name
        killed = f"; killed the ranks still running: {result.running}" if result.running else ""
        _say(f"stopped by {name}{killed}")
        return 128 + result.signum
    if result.kind == "failed":
        _say("stopped the job (a rank's own traceback, if any, is above, prefixed [ember rank N])")
        return result.failed[0].code
    if result.returncode != 0:
        sys.stderr.write(result.banner)
        _say(f"mpiexec exited with code {result.returncode}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
