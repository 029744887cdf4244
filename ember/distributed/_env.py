"""A rank's place in the job, read from the environment its MPI launcher set.

PyTorch scripts read ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE``
(torchrun sets them). Under mpiexec/srun each MPI flavour names them differently;
``export_torch_env`` copies whichever is present into PyTorch's names, keeping any
value already set, and derives torchrun's other per-rank variables from them.
Standard library only: the launcher's per-rank supervisor imports it by file.
"""

from __future__ import annotations

import os

# (rank, size, local rank, local size) as MPICH/Hydra, Open MPI, PMIx and Slurm name them.
_LAUNCHER_VARS = (
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
)
TORCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
# What each rank derives for itself (TORCH_VARS, then ``elastic_env``'s per-rank ones): ``ember.distributed.run``
# removes them from the environment it starts the ranks with, as torchrun gives each worker its own values.
PER_RANK_VARS = (*TORCH_VARS, "GROUP_RANK", "ROLE_RANK", "ROLE_WORLD_SIZE")
HWLOC_XMLFILE = "HWLOC_XMLFILE"


def no_topology_file(run_dir: str) -> str:
    """What ``ember.distributed.run`` sets ``HWLOC_XMLFILE`` to for mpiexec: a path in its own directory that is
    never created. MPICH's proxies write the machine's hwloc topology to ``/tmp/hydra_hwloc_xmlfile_*`` for their
    ranks only when ``HWLOC_XMLFILE`` is unset, and remove it only when they exit normally: a stopped job would
    leave the file behind. hwloc, finding no file at the path, discovers the topology itself (each rank does)."""
    return os.path.join(run_dir, "no-hwloc-topology-file")


def drop_no_topology_file(run_dir: str | None) -> None:
    """Give the rank the environment the user had: ``HWLOC_XMLFILE`` removed if the launcher set it."""
    if run_dir and os.environ.get(HWLOC_XMLFILE) == no_topology_file(run_dir):
        del os.environ[HWLOC_XMLFILE]


def launcher_env(environ=os.environ) -> dict[str, str]:
    """PyTorch's variables from the first MPI launcher's that are set; {} when none is."""
    for names in _LAUNCHER_VARS:
        if names[0] in environ and names[1] in environ:
            values = [environ.get(n) for n in names]
            values[2] = values[2] or "0"  # local rank/size unknown: treat each rank as its own node
            # Slurm writes e.g. "4(x2)": the leading count is this node's.
            values[3] = (values[3] or "1").split("(")[0].split(",")[0]
            return dict(zip(TORCH_VARS, values))
    return {}


def export_torch_env(rank: int | None = None, world_size: int | None = None) -> None:
    """Set RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE in os.environ where unset (from the launcher's, or given)."""
    values = launcher_env()
    if rank is not None:
        given = {"RANK": str(rank), "WORLD_SIZE": str(world_size)}
        values = {"LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", **values, **given}
    for name, value in values.items():
        os.environ.setdefault(name, value)
    for name, value in elastic_env(os.environ).items():
        os.environ.setdefault(name, value)


def elastic_env(environ) -> dict[str, str]:
    """torchrun's role and group variables, from RANK/WORLD_SIZE/LOCAL_WORLD_SIZE ({} when those are unset).

    Ranks are numbered node by node with LOCAL_WORLD_SIZE on each (as ``ember.distributed.run``
    starts them), so the node ("group") of a rank is RANK // LOCAL_WORLD_SIZE; there is one role.
    """
    if not all(n in environ for n in ("RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")):
        return {}
    rank, world, local = int(environ["RANK"]), int(environ["WORLD_SIZE"]), max(int(environ["LOCAL_WORLD_SIZE"]), 1)
    return {"GROUP_RANK": str(rank // local), "GROUP_WORLD_SIZE": str(max(world // local, 1)),
            "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(world), "ROLE_NAME": "default"}
