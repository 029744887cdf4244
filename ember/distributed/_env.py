"""A rank's place in the job, read from the environment its MPI launcher set.

PyTorch scripts read ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE``
(torchrun sets them). Under mpiexec/srun each MPI flavour names them differently;
``export_torch_env`` copies whichever is present into PyTorch's names, keeping any
value already set.
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
