"""One per rank: the process mpiexec starts, which starts the rank and watches it (torchrun's worker agent).

    mpiexec -n N python .../ember/distributed/_agent.py [--log-dir D --redirects S --tee S --no-python] -- target...

Run by file path with the standard library only (no ember, no NumPy), so it starts in
milliseconds. It
- dies with its parent (PR_SET_PDEATHSIG), and its rank dies with it, so killing the
  launcher's process tree never leaves a rank running; it leads a process group,
  which the launcher kills to stop the rank's own children too;
- sets PyTorch's and torchrun's variables for the rank (``_env.py``), starts it
  (``python -m ember.distributed._bootstrap target...`` in effect, or the executable itself with
  ``--no-python``), with stdout/stderr redirected to or teed into per-rank log files;
- forwards SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 to it;
- records its pids and, when it ends, its exact exit status and the time
  (``_records.py``): the launcher names the rank that failed first, and how;
- then ends the way the rank ended (same code, or killed by the same signal), so
  mpiexec sees what it would have seen without it.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import threading

try:  # imported by the launcher (for die_with_parent)
    from . import _env, _records
except ImportError:  # run as a script: its directory is sys.path[0]
    import _env
    import _records

_PR_SET_PDEATHSIG = 1
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)
_libc = ctypes.CDLL(None, use_errno=True)
# The rank's start, as ``python -m ember.distributed._bootstrap target...`` (sys.path[0] the working directory, as
# -m makes it: -c puts '' there, and nothing under -P or PYTHONSAFEPATH, where sys.path[0] is then the first
# PYTHONPATH entry and must stay), except that a Ctrl-C (SIGINT, forwarded by the launcher) arriving while ember
# still imports ends the rank quietly with 130, as one arriving later does, instead of with a traceback of the import.
_START = ("import os, sys\n"
          "if not sys.flags.safe_path:\n"
          "    sys.path[0] = os.getcwd()\n"
          "try:\n"
          "    from ember.distributed._bootstrap import main\n"
          "except KeyboardInterrupt:\n"
          "    os._exit(130)\n"
          "sys.exit(main(sys.argv[1:]))\n")


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent dies (Linux; elsewhere the launcher's guard does it)."""
    try:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except AttributeError:  # no prctl (not Linux)
        pass


def stream_modes(spec: str, local_rank: int) -> int:
    """torchrun's --redirects/--tee value for this rank: "0".."3", or "local_rank:value,..." (0 when unlisted).

    1 = stdout, 2 = stderr, 3 = both.
    """
    if ":" not in spec:
        return int(spec)
    pairs = dict(item.split(":") for item in spec.split(","))
    return int(pairs.get(str(local_rank), 0))


_PARTIAL_LINE_S = 0.05  # how long a partial line (a progress bar's) waits for its end before it is passed on


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _copy(source: int, console: int, log=None) -> None:
    """Copy everything from the rank's pipe to the console (and to its log file, for --tee) until it closes, one
    write per line: mpiexec passes each write on as it comes, so a line written in pieces (print's text and then
    its newline under PYTHONUNBUFFERED=1, a full buffer flushed mid-line) could run into another rank's line. A
    partial line is passed on when nothing more comes for a moment."""
    pending = b""
    while True:
        if pending and not select.select([source], [], [], _PARTIAL_LINE_S)[0]:
            data = b""  # (a partial line, and nothing more for a moment: pass it on)
        else:
            data = os.read(source, 65536)
            if not data:
                break
        pending += data
        end = max(pending.rfind(b"\n"), pending.rfind(b"\r")) + 1 if data else len(pending)
        for line in pending[:end].splitlines(keepends=True):
            _write_all(console, line)
        if log is not None and end:
            log.write(pending[:end])
            log.flush()
        pending = pending[end:]
    if pending:
        _write_all(console, pending)
        if log is not None:
            log.write(pending)
            log.flush()
    os.close(source)


def _streams(args, rank: int, local_rank: int) -> tuple[dict, list[threading.Thread], list[int]]:
    """Popen's stdout/stderr for the rank, the copying threads to start once it runs, the fds to close in this
    process. What goes to the console passes through this process (``_copy``), a line at a time."""
    redirect = stream_modes(args.redirects, local_rank)
    tee = stream_modes(args.tee, local_rank)
    folder = os.path.join(args.log_dir, str(rank))
    if redirect or tee:
        os.makedirs(folder, exist_ok=True)
    kwargs, threads, to_close = {}, [], []
    for bit, name, console in ((1, "stdout", sys.stdout), (2, "stderr", sys.stderr)):
        log = open(os.path.join(folder, f"{name}.log"), "ab") if (redirect | tee) & bit else None
        if redirect & bit and not tee & bit:
            kwargs[name] = log
            continue
        read_end, write_end = os.pipe()
        kwargs[name] = write_end
        to_close.append(write_end)
        threads.append(threading.Thread(target=_copy, args=(read_end, console.fileno(), log), daemon=True))
    return kwargs, threads, to_close


class _Forwarder:
    """Forward signals to the rank; ones that arrive before it started are sent once it has."""

    def __init__(self) -> None:
        self.child: subprocess.Popen | None = None
        self.pending: list[int] = []
        for signum in _FORWARDED:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum, _frame) -> None:
        if self.child is None:
            self.pending.append(signum)
        else:
            self.child.send_signal(signum)

    def started(self, child: subprocess.Popen) -> None:
        self.child = child
        for signum in self.pending:
            child.send_signal(signum)


def main(argv: list[str]) -> None:
    die_with_parent()
    if os.getpgid(0) != os.getpid():  # lead a process group (Hydra already does it), so that the launcher can
        os.setpgid(0, 0)              # stop the rank's own children (data loader workers...) with it
    forward = _Forwarder()
    parser = argparse.ArgumentParser(prog="_agent")
    parser.add_argument("--log-dir", default="")
    parser.add_argument("--redirects", default="0")
    parser.add_argument("--tee", default="0")
    parser.add_argument("--no-python", action="store_true")
    parser.add_argument("target", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    target = args.target[1:] if args.target[:1] == ["--"] else args.target
    _env.export_torch_env()
    _env.drop_no_topology_file(os.environ.get(_records.RUN_DIR_VAR))
    rank, local_rank = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    command = target if args.no_python else [sys.executable, "-c", _START, *target]
    kwargs, threads, to_close = _streams(args, rank, local_rank)
    try:  # close_fds=False: the rank inherits what mpiexec gave us (PMI_FD, the MPI library's connection)
        child = subprocess.Popen(command, close_fds=False, preexec_fn=die_with_parent, **kwargs)
    except OSError as err:  # --no-python with a missing or non-executable target: as a shell would, 127
        reason = f"could not start {command[0]!r}: {err.strerror}"
        print(f"[ember rank {rank}] {reason}", file=sys.stderr, flush=True)
        _records.write(rank, "error", f"127 {_records.now()}\n{reason}\n")
        os._exit(127)
    for fd in to_close:
        os.close(fd)
    for thread in threads:
        thread.start()
    forward.started(child)
    _records.write(rank, "pid", f"{socket.gethostname()} {os.getpid()} {os.getppid()} {child.pid}")
    code = child.wait()
    for thread in threads:
        thread.join(2.0)  # a process the rank left behind may hold the pipe open: do not wait for it
    _records.write(rank, "exit", f"{code} {_records.now()}")
    sys.stdout.flush()
    sys.stderr.flush()
    if code < 0:  # end as the rank did: killed by the same signal
        if -code not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main(sys.argv[1:])
