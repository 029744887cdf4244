"""The launcher's command line: ember's flags and torchrun's, each with its meaning under MPI.

torchrun runs one agent per node and meets the others at a rendezvous endpoint;
ember's launcher starts every node itself, through mpiexec (``--hosts``/``--hostfile``),
and MPI does the rendezvous. So the rendezvous flags are accepted and change nothing
but what they name (``--rdzv-id`` is ``TORCHELASTIC_RUN_ID``, ``--rdzv-endpoint`` the
informational ``MASTER_ADDR:MASTER_PORT``), and flags that only make sense with one
launcher per node (``--node-rank`` other than 0, elastic ``--nnodes MIN:MAX``) stop
with a message saying what to use instead. Both spellings are accepted, as torchrun
does: ``--nproc-per-node`` and ``--nproc_per_node``.
"""

from __future__ import annotations

import argparse
import os
import tempfile

_PROG = "python -m ember.distributed.run"


def _fail(message: str) -> SystemExit:
    return SystemExit(f"ember.distributed.run: {message}")


def _flag(p: argparse.ArgumentParser, name: str, *more: str, **kwargs) -> None:
    """Add ``--a-b`` with its ``--a_b`` spelling (torchrun accepts both)."""
    spellings = [name, *more]
    if "-" in name[2:]:
        spellings.append("--" + name[2:].replace("-", "_"))
    p.add_argument(*spellings, **kwargs)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=_PROG, description="Start the ranks of a script, torchrun-style, with mpiexec "
                                "underneath.", allow_abbrev=False)
    _flag(p, "--nproc-per-node", default="1", help="ranks per node: a number, 'cpu' or 'auto' (one per CPU core)")
    _flag(p, "--nnodes", default=None, help="number of nodes: N, or MIN:MAX with MIN == MAX (default: hosts, or 1)")
    _flag(p, "--node-rank", type=int, default=0, help="0 only: this one launcher starts every node")
    p.add_argument("--standalone", action="store_true", help="single node (the default without --hosts)")
    _flag(p, "--rdzv-backend", default="static", help="accepted, any value: MPI does the rendezvous")
    _flag(p, "--rdzv-endpoint", default="", help="HOST:PORT: sets MASTER_ADDR/MASTER_PORT (informational)")
    _flag(p, "--rdzv-id", default="none", help="the job id: TORCHELASTIC_RUN_ID (default 'none')")
    _flag(p, "--rdzv-conf", default="", help="accepted, ignored")
    _flag(p, "--max-restarts", type=int, default=0, help="restart every rank up to N times when one fails")
    _flag(p, "--monitor-interval", type=float, default=0.1, help="seconds between checks of the ranks (0.1)")
    p.add_argument("--role", default="default", help="ROLE_NAME of every rank (default 'default')")
    _flag(p, "--run-path", action="store_true", help="run the script by path (the default without -m)")
    _flag(p, "--no-python", action="store_true", help="the target is an executable, not a Python script")
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    _flag(p, "--log-dir", default=None, help="where --redirects/--tee write LOG_DIR/attempt_K/RANK/{stdout,stderr}.log")
    _flag(p, "--redirects", "-r", default="0", help="streams to send only to the log files: 0 none, 1 stdout, "
          "2 stderr, 3 both, or per local rank, e.g. 0:3,1:2")
    _flag(p, "--tee", "-t", default="0", help="streams to copy to the log files as well as the console (as -r)")
    _flag(p, "--master-addr", default=None, help="MASTER_ADDR (default: first host, or 127.0.0.1)")
    _flag(p, "--master-port", type=int, default=29500, help="MASTER_PORT (informational, default 29500)")
    p.add_argument("--hosts", default=None, help="comma-separated host names, one per node")
    p.add_argument("--hostfile", default=None, help="file with one host name per line")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: next to python, then PATH)")
    p.add_argument("--mpiexec-args", default="", help="extra mpiexec flags, as one string")
    p.add_argument("--timeout", type=float, default=None, help="stop the job after this many seconds (exit 124)")
    p.add_argument("--grace-period", type=float, default=30.0, help="seconds ranks get to stop after SIGTERM or "
                   "SIGINT reaches the launcher, before they are killed (default 30)")
    p.add_argument("--prefix-output", action="store_true", help="prefix each output line with its rank")
    p.add_argument("script", help="the script (or module, with -m; or executable, with --no-python) each rank runs")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def _nproc(value: str) -> int:
    if value in ("auto", "cpu"):  # no GPU: torchrun's "auto" is one per CPU then too
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if value == "gpu":
        raise _fail("--nproc-per-node gpu: ember runs on the CPU only; use a number, 'cpu' or 'auto'")
    try:
        n = int(value)
    except ValueError:
        raise _fail(f"--nproc-per-node must be a number, 'cpu' or 'auto', got {value!r}") from None
    if n < 1:
        raise _fail(f"--nproc-per-node must be >= 1, got {n}")
    return n


def _nnodes(value: str | None) -> int | None:
    if value is None:
        return None
    low, _, high = value.partition(":")
    try:
        low_n, high_n = int(low), int(high or low)
    except ValueError:
        raise _fail(f"--nnodes must be N or MIN:MAX, got {value!r}") from None
    if low_n != high_n:
        raise _fail(f"--nnodes {value}: elastic membership (nodes joining or leaving a running job) is not "
                    "supported under MPI, whose job size is fixed; give one number of nodes and list them with "
                    "--hosts or --hostfile (failed ranks are restarted with --max-restarts)")
    if low_n < 1:
        raise _fail(f"--nnodes must be >= 1, got {value!r}")
    return low_n


def _stream_spec(name: str, value: str) -> str:
    """Check torchrun's 0-3 or "local_rank:0-3,..." syntax; return it unchanged."""
    items = value.split(",") if ":" in value else [value]
    for item in items:
        level = item.split(":")[-1]
        if ":" in value and (item.count(":") != 1 or not item.split(":")[0].isdigit()):
            level = "x"
        if level not in ("0", "1", "2", "3"):
            raise _fail(f"{name} {value!r}: expected 0 (none), 1 (stdout), 2 (stderr), 3 (both), or per local rank "
                        "LOCAL_RANK:VALUE pairs such as 0:3,1:2")
    return value


def _hosts(args) -> list[str]:
    if args.hosts:
        return [h.strip() for h in args.hosts.split(",") if h.strip()]
    if args.hostfile:
        with open(args.hostfile) as f:
            return [line.split()[0] for line in f if line.strip() and not line.startswith("#")]
    return []


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse and check the command line; adds ``hosts``, ``world`` and resolves ``nproc_per_node``/``nnodes``."""
    args = _parser().parse_args(argv)
    args.nproc_per_node = _nproc(args.nproc_per_node)
    args.hosts = _hosts(args)
    nnodes = _nnodes(args.nnodes)
    if args.node_rank != 0:
        raise _fail(f"--node-rank {args.node_rank}: ember starts every node from one launcher (through mpiexec), "
                    "so run it once, on one node, with --hosts a,b,... or --hostfile F (node ranks follow that "
                    "order), instead of once per node")
    if args.standalone and (args.hosts and len(args.hosts) > 1 or (nnodes or 1) > 1):
        raise _fail("--standalone means a single node; drop it to run on several nodes with --hosts/--hostfile")
    args.nnodes = nnodes or max(len(args.hosts), 1)
    if args.hosts and args.nnodes != len(args.hosts):
        raise _fail(f"--nnodes {args.nnodes} but {len(args.hosts)} host(s) given: {args.hosts}")
    if args.nnodes > 1 and not args.hosts:
        raise _fail(f"--nnodes {args.nnodes} needs --hosts or --hostfile: ember starts every node itself, over "
                    "mpiexec (ssh), instead of meeting launchers started on each node at a rendezvous endpoint")
    if args.rdzv_endpoint:
        host, _, port = args.rdzv_endpoint.rpartition(":") if ":" in args.rdzv_endpoint else (args.rdzv_endpoint,
                                                                                             "", "")
        args.master_addr = args.master_addr or host
        if port:
            args.master_port = int(port)
    if args.no_python and args.module:
        raise _fail("--no-python and -m/--module cannot be used together: -m runs a Python module")
    if args.run_path and args.module:
        raise _fail("--run-path and -m/--module cannot be used together: the target is a path or a module")
    if args.max_restarts < 0:
        raise _fail(f"--max-restarts must be >= 0, got {args.max_restarts}")
    if args.monitor_interval <= 0:
        raise _fail(f"--monitor-interval must be > 0, got {args.monitor_interval}")
    args.redirects = _stream_spec("--redirects", args.redirects)
    args.tee = _stream_spec("--tee", args.tee)
    if (args.redirects != "0" or args.tee != "0") and not args.log_dir:
        args.log_dir = tempfile.mkdtemp(prefix="ember-logs-")
        print(f"ember.distributed.run: logs of --redirects/--tee in {args.log_dir}", flush=True)
    args.world = args.nnodes * args.nproc_per_node
    return args
