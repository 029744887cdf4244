"""Cross-rank argument check run before each tensor collective.

Ranks that call different collectives, or the same one with tensors of different
shapes or dtypes, would otherwise hang or reduce garbage. Before the payload, every
rank of the group contributes a small int64 record (valid-arguments flag,
collective, op, root, dtype, shape) to one MPI_Iallgather, and every rank raises
the same error, naming the ranks and their shapes, when the records differ. A rank
whose own arguments were invalid raises its own error; the others learn of it from
its flag and raise too, instead of waiting for it.

The check costs one ~300-byte all-gather per collective. Switch it off with
``set_collective_checks(False)`` or ``EMBER_COLLECTIVE_CHECKS=0``; the DDP reducer
calls ``comm`` directly and never runs it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from .._backend import xp
from .._dtype import ALL_DTYPES, bfloat16
from .._tensor import Tensor
from .comm import calling
from .reduce_op import ReduceOp

_MAX_DIMS = 32
_HEADER = 6  # ok, collective, op, root, dtype, ndim; then the shape, padded with -1
_KINDS = ("all_reduce", "broadcast", "all_gather", "all_gather_single", "reduce", "reduce_scatter",
          "reduce_scatter_single", "gather", "scatter", "all_to_all", "barrier",
          "all_to_all_single", "all_reduce_coalesced")
_OPS = tuple(ReduceOp)
_CODED_DTYPES = (*ALL_DTYPES, bfloat16)
_DTYPE_CODES = {d.name: i for i, d in enumerate(_CODED_DTYPES)}  # by name: bfloat16's array type loads lazily

_enabled = os.environ.get("EMBER_COLLECTIVE_CHECKS", "1") != "0"


def named_call(fn: Callable | None = None, *, name: str | None = None) -> Callable:
    """``fn``, a public call made of collectives (``all_gather_object``: two all_gathers), names the collectives
    it runs, their argument checks and payloads: a rank stuck in one is reported as stuck in what the program called
    (the outermost such call: ``ZeroRedundancyOptimizer.consolidate_state_dict``, not the ``gather_object`` it
    runs). ``name``: that name, where ``fn``'s qualified name is not what the program calls it (``@named_call(name=
    "checkpoint.save")``)."""
    if fn is None:
        return functools.partial(named_call, name=name)
    shown = name or fn.__qualname__

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if calling.name is not None:
            return fn(*args, **kwargs)
        calling.name = shown
        try:
            return fn(*args, **kwargs)
        finally:
            calling.name = None
    return call


def set_collective_checks(enabled: bool) -> None:
    """Turn the cross-rank check of collective arguments on (default) or off, on this rank.

    Every rank must use the same setting: the check is itself a collective.
    """
    global _enabled
    _enabled = bool(enabled)


def collective_checks_enabled() -> bool:
    return _enabled


class Agreement:
    """``with Agreement(pg, kind, op) as a:`` validate arguments inside, set ``a.array`` and ``a.root``.

    On leaving the block every rank exchanges its record. A TypeError/ValueError raised
    inside propagates on this rank and makes every other rank raise as well; records
    that differ raise a RuntimeError describing each rank's call, on every rank.
    """

    def __init__(self, pg, kind: str, op: ReduceOp | None = None) -> None:
        self.pg = pg
        self.kind = kind
        self.op = op
        self.array = None  # the tensor data whose shape and dtype every rank must share
        self.root = -1

    def __enter__(self) -> Agreement:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if not _enabled or (exc_type is not None and not issubclass(exc_type, (TypeError, ValueError))):
            return False
        table = xp.empty((self.pg.size(), _HEADER + _MAX_DIMS), dtype=xp.int64)
        work = self.pg.comm.iallgather(self._record(exc is None), table)
        # named as the program's call: a rank stuck here (the others never called it) reports what it waits in
        work.name = calling.name or self.kind
        work.wait()
        if exc is not None:
            return False  # this rank's own error says what was wrong
        if not table[:, 0].all():
            failed = [self.pg.ranks[r] for r in range(len(table)) if table[r, 0] == 0]
            raise RuntimeError(
                f"{self.kind}: rank(s) {failed} passed invalid arguments (see the error on those ranks); "
                "no rank ran the collective"
            )
        if not (table == table[0]).all():
            raise RuntimeError(_mismatch_message(self.kind, table, self.pg.ranks))
        return False

    def _record(self, ok: bool):
        rec = xp.full(_HEADER + _MAX_DIMS, -1, dtype=xp.int64)
        rec[:2] = (int(ok), _KINDS.index(self.kind))
        if not ok:  # the arguments may be anything: describe none of them
            return rec
        rec[2:4] = (_OPS.index(self.op) if self.op is not None else -1, self.root)
        if self.array is not None:
            rec[4:6] = (_DTYPE_CODES[self.array.dtype.name], self.array.ndim)
            rec[_HEADER:_HEADER + self.array.ndim] = self.array.shape
        return rec


def _describe(rec) -> str:
    text = _KINDS[rec[1]]
    if rec[2] >= 0:
        text += f"({_OPS[rec[2]].name})"
    if rec[3] >= 0:
        text += f" root={rec[3]}"
    if rec[4] >= 0:
        shape = [int(s) for s in rec[_HEADER:_HEADER + rec[5]]]
        text += f" of {_CODED_DTYPES[rec[4]].name} tensor with shape {shape}"
    return text


def _mismatch_message(kind: str, table, ranks: list[int]) -> str:
    by_call: dict[str, list[int]] = {}
    for r, rec in enumerate(table):
        by_call.setdefault(_describe(rec), []).append(ranks[r])
    calls = "; ".join(f"rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))}: {call}"
                      for call, rs in by_call.items())
    return (
        f"{kind}: the ranks' calls do not match ({calls}). Every rank of the group must call the same "
        "collective, with the same op and root, on tensors of the same shape and dtype."
    )


def check_tensor(op: str, name: str, tensor, any_strides: bool = False) -> None:
    """A collective's tensor argument must be a contiguous ember Tensor (of at most 32 dimensions); with
    ``any_strides``, any writable view (the collective works on a contiguous copy of it)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: {name} must be an ember Tensor, got {type(tensor).__name__}")
    if any_strides and not tensor._data.flags.writeable:
        raise ValueError(f"{op}: {name} is a view whose elements share memory (an expand()ed tensor): its "
                         "result has nowhere to go; pass a tensor of its own (.clone())")
    if not tensor._data.flags.c_contiguous and not any_strides:
        raise ValueError(f"{op}: {name} must be contiguous (call .contiguous() first)")
    if tensor._data.ndim > _MAX_DIMS:
        raise ValueError(f"{op}: {name} has {tensor._data.ndim} dimensions; collectives support at most {_MAX_DIMS}")
