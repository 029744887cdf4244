"""The launcher's side of one attempt: mpiexec, its output, its processes, and the guard that outlives the launcher.

- ``Job`` starts mpiexec in a session of its own (so a Ctrl-C in the terminal reaches
  only the launcher, which decides what the ranks get), copies its output through,
  holding back MPICH's "BAD TERMINATION" banner (the launcher says what happened,
  naming the rank), and stops every process of the attempt: mpiexec first (so it
  prints nothing about ranks the launcher stops), then each local rank's proxy,
  supervisor and process, by the pids they recorded.
- MPICH's proxies each hold a topology file (``/tmp/hydra_hwloc_xmlfile_*``) that
  they remove only when they exit normally. The launcher's ``HWLOC_XMLFILE``
  (``_env.no_topology_file``) keeps them from writing one; for an MPICH that writes
  it anyway, ``Job`` notes them while the job runs and removes them once it is stopped.
- ``Guard`` is a small process forked at start that waits for the launcher to end:
  if the launcher dies without saying so (SIGKILL, a crash), the guard stops every
  process of the job and removes the launcher's temporary directory.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading

from . import _records
from ._agent import die_with_parent

_BANNER_EDGE = b"=" * 20
_BANNER_TAIL = (b"YOUR APPLICATION TERMINATED", b"This typically refers", b"Please see the FAQ")
_TAIL_BYTES = 1 << 18
_HYDRA_TOPOLOGY = "hydra_hwloc_xmlfile_"  # MPICH's proxy: the machine's hwloc topology, for its ranks


def _alive_as(pid: int, token: bytes) -> bool:
    """Alive, and still the process we mean (its command line holds ``token``; pids are reused)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return token in f.read()
    except OSError:
        return False


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _kill(pid: int, signum: int) -> None:
    """``os.kill`` (a negative pid: the process group), quiet if it is gone."""
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def local_processes(run_dir: str, world: int) -> list[tuple[int, int, int]]:
    """(proxy, supervisor, rank) pids of the ranks that run on this host and recorded them."""
    found = []
    for rank in range(world):
        record = _records.read(run_dir, rank, "pid")
        if record is None:
            continue
        host, agent, proxy, child = record.split()
        if host == socket.gethostname():
            found.append((int(proxy), int(agent), int(child)))
    return found


def _proxy_files(proxies: set[int]) -> list[str]:
    """The topology files MPICH's proxies hold open (``/tmp/hydra_hwloc_xmlfile_*``). A proxy removes its file
    when it exits normally; a proxy that is killed (or loses mpiexec) leaves it behind."""
    found = []
    for proxy in proxies:
        if not _alive_as(proxy, b"hydra_pmi_proxy"):
            continue
        try:
            fds = os.listdir(f"/proc/{proxy}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{proxy}/fd/{fd}")
            except OSError:
                continue
            if os.path.basename(target).startswith(_HYDRA_TOPOLOGY):
                found.append(target)
    return found


def _remove(paths: list[str]) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except OSError:  # removed by its proxy after all
            pass


def kill_all(run_dir: str, world: int, mpiexec_pid: int | None) -> None:
    """SIGKILL mpiexec, then every local proxy, supervisor and rank of the attempt that is still running; then
    remove the files the proxies would have removed had they exited normally."""
    processes = local_processes(run_dir, world)
    leftovers = _proxy_files({proxy for proxy, _, _ in processes})  # before anything dies: the fds say which
    if mpiexec_pid is not None:
        _kill(mpiexec_pid, signal.SIGKILL)
    for proxy, agent, child in processes:
        if _alive_as(agent, b"_agent.py"):
            if _parent(child) == agent:  # (else it is gone: it dies with its supervisor)
                _kill(child, signal.SIGKILL)
            _kill(agent, signal.SIGKILL)
        # The supervisor leads a process group: the rank's own children (which survive it) are in it. A
        # group outlives its leader, and its id is not reused while it has members.
        _kill(-agent, signal.SIGKILL)
        if any(_alive_as(proxy, name) for name in (b"hydra_pmi_proxy", b"orted", b"prted")):
            _kill(proxy, signal.SIGKILL)
    _remove(leftovers)


class _Forward(threading.Thread):
    """Copy one of mpiexec's output streams to ours, holding back MPICH's termination banner."""

    def __init__(self, source, target) -> None:
        super().__init__(daemon=True)
        self.source, self.target = source, target
        self.banner: list[bytes] = []
        self.tail = b""
        self._in_banner = False
        self._held: list[bytes] = []  # lines that may begin the banner, until the next line says
        self._pending = b""  # the start of a line not yet written
        self._mid_line = False  # part of a line was written; its end has not come yet

    def _write(self, data: bytes) -> None:
        self.tail = (self.tail + data)[-_TAIL_BYTES:]
        try:
            self.target.write(data)
            self.target.flush()
        except OSError:  # our output was closed (`| head`): keep draining mpiexec's, or the ranks would block
            pass

    def run(self) -> None:
        fd = self.source.fileno()
        while chunk := os.read(fd, 65536):
            if out := self._chunk(chunk):
                self._write(out)
        if rest := self._end():
            self._write(rest)
        self.source.close()

    def _chunk(self, chunk: bytes) -> bytes:
        """What to write now of ``chunk``: complete lines (less the banner), and a partial line (a progress
        bar) as it comes. The bytes up to the next newline then finish that line, whatever they hold."""
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        out = []
        if self._mid_line and lines:
            out.append(lines.pop(0) + b"\n")
            self._mid_line = False
        out += self._lines(lines)
        if self._pending and not self._in_banner and not self._pending.startswith(b"="):
            out += [h + b"\n" for h in self._held] + [self._pending]  # held lines came before it
            self._held, self._pending, self._mid_line = [], b"", True
        return b"".join(out)

    def _end(self) -> bytes:
        held = self._held if any(self._held) else []  # a lone empty line may be a banner's start, cut off
        return b"".join(line + b"\n" for line in held) + self._pending

    def _lines(self, lines: list[bytes]) -> list[bytes]:
        """The complete lines to write now; MPICH's banner (an empty line, a line of '=', '=   BAD TERMINATION',
        ... 'Please see the FAQ ...') goes to ``self.banner``. Lines that could begin it wait for the next line."""
        out = []
        for line in lines:
            if self._in_banner:
                if line == b"" or line.startswith(b"=") or line.startswith(_BANNER_TAIL):
                    self.banner.append(line + b"\n")
                    self._in_banner = not line.startswith(_BANNER_TAIL[-1])
                    continue
                self._in_banner = False
            if line == b"" or (line.startswith(_BANNER_EDGE) and not line.strip(b"=")):
                self._held = [*self._held, line]
                continue
            if line.startswith(b"=   BAD TERMINATION") and self._held and self._held[-1].startswith(_BANNER_EDGE):
                edge = self._held[-2:] if len(self._held) > 1 and self._held[-2] == b"" else self._held[-1:]
                out += [h + b"\n" for h in self._held[:len(self._held) - len(edge)]]
                self.banner += [h + b"\n" for h in (*edge, line)]
                self._held, self._in_banner = [], True
                continue
            out += [h + b"\n" for h in self._held] + [line + b"\n"]
            self._held = []
        return out


class Job:
    """One attempt: mpiexec and the ranks under it."""

    def __init__(self, command: list[str], env: dict[str, str], run_dir: str, world: int) -> None:
        self.run_dir, self.world = run_dir, world
        self.proxy_files: set[str] = set()
        # A session of its own: the terminal's Ctrl-C reaches the launcher only. No stdin: the ranks
        # are in the background (mpiexec would otherwise forward the terminal to rank 0). mpiexec dies
        # with the launcher (and its proxies then stop the ranks), should even the guard be gone.
        self.proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True, preexec_fn=die_with_parent)
        self.out = _Forward(self.proc.stdout, sys.stdout.buffer)
        self.err = _Forward(self.proc.stderr, sys.stderr.buffer)
        self.out.start()
        self.err.start()

    def ended(self) -> bool:
        return self.proc.poll() is not None

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for mpiexec to end by itself; True if it did."""
        try:
            self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def signal_ranks(self, signum: int, already: set[int]) -> None:
        """Send ``signum`` to every local rank not in ``already`` (through its supervisor, which forwards it)."""
        for _proxy, agent, _child in local_processes(self.run_dir, self.world):
            if agent not in already and _alive_as(agent, b"_agent.py"):
                _kill(agent, signum)
                already.add(agent)

    def running_ranks(self) -> list[int]:
        return [r for r in range(self.world) if (rec := _records.read(self.run_dir, r, "pid")) is not None
                and _records.read(self.run_dir, r, "exit") is None and _alive_as(int(rec.split()[1]), b"_agent.py")]

    def exit_record(self, rank: int) -> str | None:
        return _records.read(self.run_dir, rank, "exit")

    def note_proxy_files(self) -> None:
        """Remember the topology files this attempt's proxies hold open: when mpiexec ends them after a rank's
        MPI_Abort they cannot remove them, and ``kill`` does."""
        self.proxy_files.update(_proxy_files({proxy for proxy, _, _ in local_processes(self.run_dir, self.world)}))

    def kill(self) -> None:
        """Stop everything still running, and wait for mpiexec's output to be copied."""
        kill_all(self.run_dir, self.world, None if self.ended() else self.proc.pid)
        self.proc.wait()
        _remove(sorted(self.proxy_files))
        self.out.join(2.0)
        self.err.join(2.0)

    def shown(self, text: str) -> bool:
        """Whether ``text`` went through to our stderr already."""
        return text.encode() in self.err.tail

    def unshown(self, text: str) -> str:
        """What of ``text`` has not gone through to our stderr (``unshown_rest``)."""
        return unshown_rest(self.err.tail, text)

    def banner(self) -> str:
        return b"".join(self.out.banner + self.err.banner).decode(errors="replace")


def unshown_rest(tail: bytes, text: str) -> str:
    """``text`` less what of it ``tail`` (the end of what went through to our stream) already shows: nothing when all
    of it is there; the rest after its beginning when the tail ends with that beginning (mpiexec forwarded a rank's
    report up to some byte and the job stopped there: on a loaded machine, its first line alone); else all of it,
    so that a report is printed once, whole, never a second copy of its first lines."""
    data = text.encode()
    if data in tail:
        return ""
    for cut in range(min(len(data), len(tail)), 0, -1):
        if tail.endswith(data[:cut]):
            return data[cut:].decode(errors="replace")
    return text


class Guard:
    """A forked process that stops the job and removes ``run_dir`` if the launcher dies without telling it."""

    def __init__(self, run_dir: str, world: int) -> None:
        read_end, self._write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the guard
            try:
                os.close(self._write_end)
                self._serve(read_end, run_dir, world)
            finally:
                os._exit(0)
        os.close(read_end)

    @staticmethod
    def _serve(read_end: int, run_dir: str, world: int) -> None:
        os.setsid()  # not in the terminal's process group: Ctrl-C is the launcher's to handle
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # do not hold the launcher's output pipes open
            os.dup2(null, fd)
        received = b""
        held: set[str] = set()  # the proxies' topology files, noted while the job runs (see below)
        while True:
            ready, _, _ = select.select([read_end], [], [], 0.5)
            if not ready:
                # A proxy that loses mpiexec dies without removing its file, and once dead no longer says which
                # it was: note them while they are alive (a look at /proc every half second).
                if os.path.isdir(run_dir):
                    for attempt in os.listdir(run_dir):
                        processes = local_processes(os.path.join(run_dir, attempt), world)
                        held.update(_proxy_files({proxy for proxy, _, _ in processes}))
                continue
            data = os.read(read_end, 4096)
            if not data:
                break
            received += data
        lines = received.decode().split("\n")
        if "done" in lines:
            return
        mpiexecs = [int(line.split()[1]) for line in lines if line.startswith("mpiexec ")]
        attempts = [os.path.join(run_dir, d) for d in os.listdir(run_dir)] if os.path.isdir(run_dir) else []
        # The proxies' topology files, read from their fds before mpiexec dies: once it is killed, its proxies
        # exit (or are killed) without removing them, and a dead proxy no longer says which were its.
        leftovers = held | set(_proxy_files({proxy for attempt in attempts
                                             for proxy, _, _ in local_processes(attempt, world)}))
        for pid in mpiexecs:
            if _alive_as(pid, b"_agent.py"):
                _kill(pid, signal.SIGKILL)
        for attempt in attempts:
            kill_all(attempt, world, None)
        _remove(sorted(leftovers))
        shutil.rmtree(run_dir, ignore_errors=True)

    def tell(self, line: str) -> None:
        os.write(self._write_end, f"{line}\n".encode())

    def done(self) -> None:
        """The launcher cleaned up itself: the guard ends without doing anything."""
        self.tell("done")
        os.close(self._write_end)
        os.waitpid(self.pid, 0)
