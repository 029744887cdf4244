"""``ReduceOp``: how a reducing collective combines the ranks' values (``torch.distributed.ReduceOp``)."""

from __future__ import annotations

import enum


class ReduceOp(enum.Enum):
    """Element-wise combination of the ranks' tensors.

    ``SUM``, ``PRODUCT``, ``MIN``, ``MAX`` and the bitwise ``BAND``/``BOR``/``BXOR`` (integer
    and bool tensors) are MPI's operations. ``AVG`` is ``SUM`` divided by the group size
    after the reduction (PyTorch offers it on NCCL only; ember on every backend); on
    integer tensors the division truncates toward zero. On bool tensors ``SUM``/``MAX``
    act as logical or and ``PRODUCT``/``MIN`` as logical and.
    """

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}>"
