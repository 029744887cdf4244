"""The process group: ``init_process_group`` and the state every collective reads.

ember has one engine, MPI (see ``comm.py``). Backend names are PyTorch's: ``"mpi"``
(the default) and ``"gloo"`` both select it, so PyTorch CPU scripts run unchanged;
``"nccl"`` fails at once since ember has no GPU. MPI does the rendezvous, so
``init_method`` and ``store`` are accepted and not needed: the ranks are the
processes mpiexec (or ``python -m ember.distributed.run``) started.
"""

from __future__ import annotations

import os
import warnings
from datetime import timedelta

from .._device import device as _device
from . import _env, _errors, comm
from .constants import default_pg_timeout

_CPU_BACKENDS = ("mpi", "gloo")

_world: ProcessGroup | None = None


class ProcessGroup:
    """Ranks that run collectives together (``torch.distributed.ProcessGroup``).

    ``comm`` is the array-level ``Communicator`` (None on a rank outside the group),
    ``ranks`` the members' global ranks in group-rank order.
    """

    def __init__(self, communicator: comm.Communicator | None, backend: str, ranks: list[int]) -> None:
        self.comm = communicator
        self.backend = backend
        self.ranks = ranks

    def rank(self) -> int:
        """This process's rank in the group; -1 outside it."""
        return self.comm.rank if self.comm is not None else -1

    def size(self) -> int:
        return len(self.ranks)

    def group_rank(self, global_rank: int, what: str, op: str) -> int:
        """Translate a global rank given as ``what`` (e.g. "src") into this group's numbering."""
        if global_rank not in self.ranks:
            raise ValueError(f"Global rank {global_rank} is not part of group {self} ({op}: {what}={global_rank} is "
                             f"not a rank of the group; its ranks: {self.ranks})")
        return self.ranks.index(global_rank)

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, rank={self.rank()}, ranks={self.ranks})"


class group:
    """``dist.group.WORLD``: the default group once initialised."""

    WORLD: ProcessGroup | None = None


GroupMember = group


def is_available() -> bool:
    """Whether ember.distributed can run here (mpi4py importable)."""
    return comm.is_available()


def is_mpi_available() -> bool:
    return comm.is_available()


def is_gloo_available() -> bool:
    return comm.is_available()  # "gloo" runs on the MPI engine


def is_nccl_available() -> bool:
    return False


def is_initialized() -> bool:
    return _world is not None


def is_torchelastic_launched() -> bool:
    """Whether a torchrun-style launcher started this process: ember's launcher sets ``TORCHELASTIC_RUN_ID`` as
    torchrun does (PyTorch's test)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its node (which device it would bind to): ``LOCAL_RANK``, which ember's launcher
    sets as torchrun does; else ``fallback_rank``; else a RuntimeError, as in PyTorch. Needs no process group."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context and "
                       "want the code to run locally instead.")


def default_group(op: str = "this function") -> ProcessGroup:
    """The world group; a clear error before ``init_process_group``."""
    if _world is None:
        rank, world = os.getenv("RANK"), os.getenv("WORLD_SIZE")
        if rank is not None and world is not None:
            # Started by a launcher already: pointing at the launcher would send the user in a circle.
            how = (f"this process was started as rank {rank} of {world} by a launcher, but the ranks form a "
                   "group only once each of them calls it")
        else:
            how = "and start the ranks with `python -m ember.distributed.run --nproc-per-node N script.py` or mpiexec"
        raise ValueError(f"{op}: the default process group has not been initialized; call "
                         f"ember.distributed.init_process_group() first ({how})")
    return _world


def resolve(group: ProcessGroup | None, op: str) -> ProcessGroup:
    world = default_group(op)
    return world if group is None else group


def _cpu_backend(backend: str | None) -> str:
    if backend is None:
        return "mpi"
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string such as 'gloo' or 'mpi', got {type(backend).__name__}")
    name = backend.lower()
    if ":" in name:  # PyTorch's "cpu:gloo,cuda:nccl" form: ember only runs the CPU part
        pairs = dict(p.split(":", 1) for p in name.split(","))
        name = pairs.get("cpu") or next(iter(pairs.values()))
    if name == "nccl":
        raise RuntimeError(
            "init_process_group: backend 'nccl' needs NVIDIA GPUs, and ember runs on the CPU only (no GPU "
            "is available); use the CPU backend: init_process_group(backend='gloo') or backend='mpi'"
        )
    if name not in _CPU_BACKENDS:
        raise ValueError(f"init_process_group: invalid backend {backend!r}; ember supports 'mpi' and 'gloo' (CPU)")
    return name


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta = default_pg_timeout, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Join the job's default process group (``torch.distributed.init_process_group``).

    Args:
        backend: ``"mpi"`` (default) or ``"gloo"``, the same CPU engine; ``"nccl"`` raises.
        init_method, store: accepted for compatibility; MPI finds the other ranks itself.
        timeout: how long any wait for other ranks may take before it raises (default 5 minutes;
            PyTorch's default is 30 for gloo).
        world_size, rank: optional; when given they must match what MPI reports.

    Also installs an excepthook: an uncaught exception on any rank prints
    ``[ember rank R] <traceback>`` and aborts the whole job, so no rank hangs waiting for it.
    """
    global _world
    name = _cpu_backend(backend)
    if _world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")
    _errors.record_init(timeout.total_seconds())  # under the launcher: it watches for ranks that never come
    mpi_rank, mpi_size = comm.world_rank_size()
    _check_matches(mpi_rank, mpi_size, rank, world_size)
    level = comm.thread_level()
    if level != "multiple":
        warnings.warn(f"the MPI library provides thread level '{level}', not 'multiple': the watchdog "
                      "thread that names missing ranks when a collective times out may be unsafe",
                      RuntimeWarning, stacklevel=2)
    _env.export_torch_env(mpi_rank, mpi_size)
    _errors.install_excepthook(mpi_rank)
    _world = ProcessGroup(comm.world(timeout.total_seconds()), name, list(range(mpi_size)))
    comm.start_watchdog()
    group.WORLD = _world


def _check_matches(mpi_rank: int, mpi_size: int, rank: int, world_size: int) -> None:
    env_size = os.environ.get("WORLD_SIZE")
    if env_size is not None and int(env_size) != mpi_size:
        raise RuntimeError(
            f"init_process_group: WORLD_SIZE={env_size} in the environment but MPI started {mpi_size} "
            "process(es): ember's ranks are MPI processes; start them with `python -m ember.distributed.run "
            f"--nproc-per-node {env_size} script.py` or `mpiexec -n {env_size} python script.py`"
        )
    env_rank = os.environ.get("RANK")
    if env_rank is not None and int(env_rank) != mpi_rank:  # a script reading RANK would disagree with get_rank()
        raise RuntimeError(
            f"init_process_group: RANK={env_rank} in the environment but MPI says this process is rank {mpi_rank} "
            f"of {mpi_size}: a RANK left from another job? Unset it; ember's launcher sets RANK for each rank "
            "(`python -m ember.distributed.run --nproc-per-node N script.py`), and init_process_group sets it "
            "from MPI under `mpiexec -n N python script.py`"
        )
    if world_size not in (-1, mpi_size):
        # The usual cause is PyTorch's mp.spawn pattern: processes that multiprocessing starts are not MPI ranks.
        raise ValueError(
            f"init_process_group: world_size={world_size} but MPI started {mpi_size} process(es): ember's ranks "
            "are MPI processes, so processes started by torch.multiprocessing (mp.spawn, Process) cannot form a "
            f"group. Start the ranks with `python -m ember.distributed.run --nproc-per-node {world_size} "
            f"script.py` (or `mpiexec -n {world_size} python script.py`): each runs the script once, so call the "
            "per-rank function there with dist.get_rank() instead of mp.spawn"
        )
    if rank not in (-1, mpi_rank):
        raise ValueError(f"init_process_group: rank={rank} but MPI says this process is rank {mpi_rank}")


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave a group (default: the world, after which ``init_process_group`` may be called again). Without a
    default group (a second call, or before ``init_process_group``), PyTorch's AssertionError."""
    global _world
    if group is None and _world is None:
        raise AssertionError("Process group cannot be None: destroy_process_group() found no default process group "
                             "(it was destroyed already, or init_process_group was never called)")
    pg = resolve(group, "destroy_process_group")
    if pg.comm is not None:
        pg.comm.free()
        pg.comm = None
    if pg is _world:
        comm.stop_watchdog()
        _world = None
        GroupMember.WORLD = None


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None, backend: str | None = None,
              pg_options=None, use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id=None) -> ProcessGroup:
    """A group of some ranks (default: all). Every rank of the world must call it, members or not."""
    world = default_group("new_group")
    members = list(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    bad = [r for r in members if not 0 <= r < world.size()]
    if bad or len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks must be distinct ranks in [0, {world.size()}), got {ranks}")
    sub = world.comm.split(members)
    if sub is not None and timeout is not None:
        sub.timeout = timeout.total_seconds()
    return ProcessGroup(sub, _cpu_backend(backend) if backend is not None else world.backend, members)


def new_subgroups_by_enumeration(ranks_per_subgroup_list: list[list[int]], timeout: timedelta | None = None,
                                 backend: str | None = None, pg_options=None, group_desc: str | None = None
                                 ) -> tuple[ProcessGroup | None, list[ProcessGroup]]:
    """A group for each list of ranks (disjoint lists), made by every rank: (this rank's group, all of them)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen: dict[int, list[int]] = {}
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {seen[r]} and {list(ranks)}")
            seen[r] = list(ranks)
    me = default_group("new_subgroups").rank()
    subgroups = [new_group(ranks, timeout=timeout, backend=backend) for ranks in ranks_per_subgroup_list]
    current = next((g for g, ranks in zip(subgroups, ranks_per_subgroup_list) if me in ranks), None)
    return current, subgroups


def new_subgroups(group_size: int | None = None, group: ProcessGroup | None = None, timeout: timedelta | None = None,
                  backend: str | None = None, pg_options=None, group_desc: str | None = None
                  ) -> tuple[ProcessGroup | None, list[ProcessGroup]]:
    """``group`` (default: the world) cut into consecutive groups of ``group_size`` ranks, made by every rank:
    (this rank's group, all of them). ``group_size`` is required: PyTorch's default, the GPUs per node, does not
    exist on the CPU (the same ValueError as a PyTorch without CUDA)."""
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using a "
                         "backend that does not depend on CUDA,please pass in 'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    ranks = list(resolve(group, "new_subgroups").ranks)
    if len(ranks) < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({len(ranks)})")
    if len(ranks) % group_size:
        raise ValueError(f"The world size ({len(ranks)}) must be divisible by '{group_size=}'")
    return new_subgroups_by_enumeration([ranks[i:i + group_size] for i in range(0, len(ranks), group_size)],
                                        timeout=timeout, backend=backend)


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (default: the world); -1 if it is not a member."""
    return resolve(group, "get_rank").rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of ranks in ``group`` (default: the world); -1 if this process is not a member."""
    pg = resolve(group, "get_world_size")
    return pg.size() if pg.comm is not None else -1


def get_backend(group: ProcessGroup | None = None) -> str:
    return resolve(group, "get_backend").backend


def get_process_group_ranks(group: ProcessGroup) -> list[int]:
    return list(resolve(group, "get_process_group_ranks").ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of rank ``group_rank`` of ``group`` (the world group: ``group_rank`` itself). A group that
    is not a ProcessGroup (None included) and a rank the group lacks raise ValueError, as in PyTorch."""
    if group is not None and group is GroupMember.WORLD:
        return group_rank
    if not isinstance(group, ProcessGroup):
        raise ValueError(f"Group {group} is not registered, please create group with torch.distributed.new_group API")
    if not 0 <= group_rank < group.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return group.ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in ``group`` of global rank ``global_rank`` (the world group: ``global_rank`` itself). A group
    that is not a ProcessGroup (None included) and a rank the group lacks raise ValueError, as in PyTorch."""
    if group is not None and group is GroupMember.WORLD:
        return global_rank
    if not isinstance(group, ProcessGroup):
        raise ValueError(f"Group {group} is not registered, please create group with torch.distributed.new_group API")
    if global_rank not in group.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return group.ranks.index(global_rank)


class Backend(str):
    """``torch.distributed.Backend``: the backend names as constants (``Backend.GLOO == "gloo"``);
    ``Backend("GLOO")`` is the name in lower case. ember runs ``"mpi"`` and ``"gloo"`` (one CPU engine)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}

    def __new__(cls, name: str) -> str:  # type: ignore[misc]  (PyTorch's returns the plain name too)
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return name.lower() if value == Backend.UNDEFINED else value


def get_default_backend_for_device(device) -> str:
    """The backend PyTorch pairs with a device type: "gloo" for "cpu" (ember's CPU engine runs it), "nccl" for
    "cuda" (which ember then refuses in init_process_group, having no GPU)."""

    kind = (device if hasattr(device, "type") else _device(device) if isinstance(device, str) else device).type
    if kind not in Backend.default_device_backend_map:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return Backend.default_device_backend_map[kind]
