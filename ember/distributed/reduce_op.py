"""``ReduceOp``: how a reducing collective combines the ranks' values (``torch.distributed.ReduceOp``)."""

from __future__ import annotations

import enum


class _ReduceOpMeta(enum.EnumMeta):
    """``ReduceOp.RedOpType``: PyTorch's operations (``ReduceOp.SUM``...) are members of the enum nested in
    ``ReduceOp`` under that name, which code annotates with and tests ``isinstance`` against. ember's members are
    ``ReduceOp``'s own, so the nested name is the enum itself."""

    @property
    def RedOpType(cls) -> type[ReduceOp]:  # noqa: N802 (PyTorch's name)
        return cls


class ReduceOp(enum.Enum, metaclass=_ReduceOpMeta):
    """Element-wise combination of the ranks' tensors.

    ``SUM``, ``PRODUCT``, ``MIN``, ``MAX`` and the bitwise ``BAND``/``BOR``/``BXOR`` (integer
    and bool tensors) are MPI's operations. ``AVG`` is ``SUM`` divided by the group size
    after the reduction; on integer and bool tensors it is PyTorch's gloo RuntimeError
    ("result type Float can't be cast to the desired output type Long"): the mean is not
    written back truncated (the collectives' calls refuse it). On bool tensors ``SUM``/``MAX``
    act as logical or and ``PRODUCT``/``MIN`` as logical and. ``ReduceOp.RedOpType`` is the
    members' type, as PyTorch's (here ``ReduceOp`` itself).
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


class _DeprecatedReduceOp:
    """``torch.distributed.reduce_op``, PyTorch's deprecated spelling of ``ReduceOp``: ``reduce_op.SUM`` is
    ``ReduceOp.SUM``, with PyTorch's FutureWarning at each look-up."""

    def __getattr__(self, name: str):
        if name.startswith("__"):  # (protocol probes: copy, pickle, repr)
            raise AttributeError(name)
        from .. import _warnings

        _warnings.warn("`torch.distributed.reduce_op` is deprecated, please use `torch.distributed.ReduceOp` "
                       "instead", FutureWarning)
        if name not in ReduceOp.__members__:
            raise AttributeError(f"'_reduce_op' object has no attribute '{name}'")
        return ReduceOp[name]


reduce_op = _DeprecatedReduceOp()
