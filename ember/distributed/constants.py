"""``torch.distributed.constants``: the process group's default timeout.

``default_pg_timeout`` is how long a collective may wait for the other ranks when ``init_process_group`` is given
no ``timeout``; libraries pass it on explicitly. ember's is 5 minutes (PyTorch's is 30): a rank that never arrives is
named sooner (docs/api.md, distributed). ``default_pg_nccl_timeout`` is None, PyTorch's value where it was built
without NCCL, as ember is (CPU only).
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_timeout: timedelta = timedelta(minutes=5)
default_pg_nccl_timeout: timedelta | None = None
