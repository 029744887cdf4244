"""An in-place write into a tensor whose elements share memory through strides other than 0 (``as_strided``).

PyTorch refuses to write into a tensor with a stride-0 dimension (``expand``: "more than one element of the
written-to tensor refers to a single memory location"), but a layout whose overlap it cannot tell cheaply
(``b.as_strided((3, 3), (1, 1))``: its has_internal_overlap is TOO_HARD) is written: its TensorIterator visits
the elements one after another, each reading the memory as the earlier ones left it and writing its result there.
So ``b = torch.zeros(6); b.as_strided((3, 3), (1, 1)).add_(1)`` leaves ``[1, 2, 3, 2, 1, 0]`` in ``b``, and a
``copy_`` keeps the value of the last element visited at each location. NumPy instead reads every element before
it writes any (``[1, 1, 1, 1, 1, 0]``).

``write_in_turn`` gives PyTorch's result: the elements are taken in TensorIterator's order (its reorder_dimensions,
``ember._meta.reorder_dimensions``: the dimensions sorted by the operands' strides), and in rounds, round ``k``
holding the ``k``-th element to reach each location, so that the elements of one round write distinct locations and
are computed together from what the earlier rounds wrote. Only a layout that really overlaps goes this way
(``overlaps``: a contiguous array is told at once). Like PyTorch's, the result does not depend on how many threads
run; PyTorch's own splits a large tensor (over 32768 elements) between threads, whose order is not fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._backend import xp
from ._meta import reorder_dimensions


def overlaps(a) -> bool:
    """Whether two elements of array ``a`` share memory through nonzero strides (a stride 0, ``expand``'s, is
    left to the callers' refusal). Cheap for the common layouts: a contiguous array, or one whose dimensions,
    sorted by stride, each step past the reach of the smaller ones (a transpose, a slice with a step)."""
    flags = a.flags
    if flags.c_contiguous or flags.f_contiguous or a.ndim < 2:  # (one dimension of nonzero stride: apart)
        return False
    if a.ndim == 2:
        (n0, n1), (s0, s1) = a.shape, a.strides
        s0, s1 = abs(s0), abs(s1)
        if n0 == 1 or n1 == 1 or s0 == 0 or s1 == 0:
            return False
        if s0 > s1 * (n1 - 1) or s1 > s0 * (n0 - 1):
            return False
    else:
        dims = sorted((abs(st), n) for st, n in zip(a.strides, a.shape) if n > 1)
        if not dims or dims[0][0] == 0:
            return False
        reach = 0  # the largest offset the smaller dimensions reach
        for st, n in dims:
            if st <= reach:
                break
            reach += st * (n - 1)
        else:
            return False
    return bool(xp.unique(_offsets(a)).size < a.size)  # (strides reaching into each other: counted)


def _offsets(a):
    """The byte offset of each element of ``a`` from its first, as an array of ``a``'s shape."""
    offsets = xp.zeros(a.shape, dtype=xp.int64)
    for d, (n, st) in enumerate(zip(a.shape, a.strides)):
        offsets += (xp.arange(n, dtype=xp.int64) * st).reshape((n,) + (1,) * (a.ndim - d - 1))
    return offsets


def _rounds(a, others: Sequence):
    """Each element's round (as an array of ``a``'s shape): how many elements before it, in PyTorch's order,
    reach its memory location."""
    strides = [a.strides, a.strides]  # (the output, then the written tensor read as an input)
    for o in others:
        if isinstance(o, xp.ndarray) and o.ndim:
            strides.append(xp.broadcast_to(o, a.shape).strides)
    perm = reorder_dimensions(a.shape, strides)  # (byte strides: each operand's order is its element strides')
    positions = xp.arange(a.size).reshape(a.shape).transpose(perm[::-1]).ravel()  # (C positions, in order)
    locations = _offsets(a).ravel()[positions]
    by_location = xp.argsort(locations, kind="stable")  # (each location's elements, in order)
    sorted_locations = locations[by_location]
    starts = xp.flatnonzero(xp.r_[True, sorted_locations[1:] != sorted_locations[:-1]])
    group_start = xp.repeat(starts, xp.diff(xp.r_[starts, sorted_locations.size]))
    rounds = xp.empty(a.size, dtype=xp.int64)
    rounds[positions[by_location]] = xp.arange(a.size) - group_start
    return rounds.reshape(a.shape)


def write_in_turn(a, compute: Callable, others: Sequence = (), reads: bool = True) -> None:
    """Write ``compute``'s elementwise result into ``a`` (an array that ``overlaps``) as PyTorch's TensorIterator
    does: element after element in its order, each computed from the memory as the earlier ones left it.
    ``compute(c)``: the result over ``c``, a dense copy of ``a``'s current values (it may write into ``c`` and
    return it); ``others``: the op's other operands (arrays, numbers), whose strides take part in the order;
    ``reads=False``: the result does not depend on ``a`` (``copy_``), so only the last element to reach each
    location is written."""
    rounds = _rounds(a, others)
    last = int(rounds.max())
    if not reads:
        counts = xp.zeros(a.size, dtype=xp.int64)
        flat = rounds.ravel()
        # the last element at each location: the one whose round is its location's largest
        location_ids = xp.unique(_offsets(a).ravel(), return_inverse=True)[1]
        xp.maximum.at(counts, location_ids, flat)
        where = (flat == counts[location_ids]).reshape(a.shape)
        a[where] = xp.broadcast_to(compute(a.copy()), a.shape)[where]
        return
    for k in range(last + 1):
        where = rounds == k
        a[where] = xp.broadcast_to(compute(a.copy()), a.shape)[where]
