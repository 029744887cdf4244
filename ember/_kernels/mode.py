"""libstdc++'s ``std::sort`` compiled (numba), for PyTorch's CPU orders of equal values: ``mode``'s index among
equal values and ``sort``'s order of ties without ``stable=True``. PyTorch's CPU mode sorts each row's (value, index)
pairs by value with ``std::sort`` and takes the last pair of the mode's run; its sort sorts them the same way; beyond
16 elements introsort's partitions reorder equal values, so the order is that sort's, not the values' own. The
reference is ``ember/_std_sort.py`` run in Python (``ember.ops.statistics._mode_index``, ``ember.ops.sorting``'s
Python path); this is the same sort step for step on two arrays (values, indices) swapped together, so the order is
the reference's.

The one difference in the order of work: the reference recurses into the right part of each partition and loops on
the left; here the right parts wait on a stack. The parts are disjoint ranges sorted independently of one another,
and the final insertion sort runs after all of them in both, so every element ends where the reference puts it.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

_THRESHOLD = 16  # libstdc++'s _S_threshold (as ``ember._std_sort``)


@kernel.inline
def _swap(v, k, i, j):
    t = v[i]
    v[i] = v[j]
    v[j] = t
    u = k[i]
    k[i] = k[j]
    k[j] = u


@kernel.inline
def _linear_insert(v, k, last, first):
    """The unguarded linear insert, bounded by ``first`` (a NaN may break the smaller element the C++ relies on)."""
    value, key = v[last], k[last]
    prev = last - 1
    while prev >= first and value < v[prev]:
        v[last] = v[prev]
        k[last] = k[prev]
        last = prev
        prev -= 1
    v[last] = value
    k[last] = key


@kernel.inline
def _insertion_sort(v, k, first, last):
    for i in range(first + 1, last):
        if v[i] < v[first]:
            value, key = v[i], k[i]
            for j in range(i, first, -1):
                v[j] = v[j - 1]
                k[j] = k[j - 1]
            v[first] = value
            k[first] = key
        else:
            _linear_insert(v, k, i, first)


@kernel.inline
def _adjust_heap(v, k, first, hole, n, value, key):
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if v[first + child] < v[first + child - 1]:
            child -= 1
        v[first + hole] = v[first + child]
        k[first + hole] = k[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        k[first + hole] = k[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and v[first + parent] < value:
        v[first + hole] = v[first + parent]
        k[first + hole] = k[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value
    k[first + hole] = key


@kernel.inline
def _heap_sort(v, k, first, last):
    """std::partial_sort(first, last, last): make_heap, then sort_heap."""
    n = last - first
    if n < 2:
        return
    parent = (n - 2) // 2
    while True:
        _adjust_heap(v, k, first, parent, n, v[first + parent], k[first + parent])
        if parent == 0:
            break
        parent -= 1
    while last - first > 1:
        last -= 1
        value, key = v[last], k[last]
        v[last] = v[first]
        k[last] = k[first]
        _adjust_heap(v, k, first, 0, last - first, value, key)


@kernel.inline
def _partition_pivot(v, k, first, last):
    """The median of (first + 1, middle, last - 1) moved to ``first``, then the unguarded partition around it."""
    i, j, m = first + 1, first + (last - first) // 2, last - 1
    if v[i] < v[j]:
        if v[j] < v[m]:
            pick = j
        elif v[i] < v[m]:
            pick = m
        else:
            pick = i
    elif v[i] < v[m]:
        pick = i
    elif v[j] < v[m]:
        pick = m
    else:
        pick = j
    _swap(v, k, first, pick)
    lo, hi = first + 1, last
    while True:
        while v[lo] < v[first]:
            lo += 1
        hi -= 1
        while v[first] < v[hi]:
            hi -= 1
        if not lo < hi:
            return lo
        _swap(v, k, lo, hi)
        lo += 1


@kernel.inline
def _std_sort(v, k, stack):
    """``std::sort`` of the pairs (v[i], k[i]) by v; ``stack``: int64 (len(v) + 1, 3) of scratch."""
    n = v.shape[0]
    if n < 2:
        return
    depth_limit = 0
    m = n
    while m > 1:  # 2 * floor(log2(n)), as std::__lg
        m >>= 1
        depth_limit += 1
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 2 * depth_limit
    top = 1
    while top > 0:
        top -= 1
        first, last, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        while last - first > _THRESHOLD:
            if depth == 0:
                _heap_sort(v, k, first, last)
                break
            depth -= 1
            cut = _partition_pivot(v, k, first, last)
            stack[top, 0], stack[top, 1], stack[top, 2] = cut, last, depth
            top += 1
            last = cut
    if n > _THRESHOLD:
        _insertion_sort(v, k, 0, _THRESHOLD)
        for i in range(_THRESHOLD, n):
            _linear_insert(v, k, i, 0)
    else:
        _insertion_sort(v, k, 0, n)


@kernel
def mode_indices(rows, which, out):
    """out[r] = PyTorch's mode index of rows[r] (2-D, one row per reduction) for each r in ``which``: the pairs
    sorted as ``std::sort`` does, then the last pair of the first longest run of values that compare equal (each
    NaN a run of its own)."""
    n = rows.shape[1]
    v = np.empty(n, rows.dtype)
    k = np.empty(n, np.int64)
    stack = np.empty((n + 1, 3), np.int64)
    for w in range(which.shape[0]):
        r = which[w]
        for j in range(n):
            v[j] = rows[r, j]
            k[j] = j
        _std_sort(v, k, stack)
        best, best_count, count = 0, 0, 0
        for i in range(n):
            count += 1
            if i == n - 1 or v[i] != v[i + 1]:
                if count > best_count:
                    best, best_count = k[i], count
                count = 0
        out[r] = best


_SIGN = -0x8000000000000000  # int64's sign bit alone: -0.0's bits
_MAGNITUDE = 0x7FFFFFFFFFFFFFFF  # the other 63 bits; also NaN's key, above +inf's (its own bits)
_INF_BITS = 0x7FF0000000000000  # +inf's bits: a larger magnitude is a NaN


@kernel
def std_sort_keyed(bits, floating, descending, out):
    """out[i] = the indices 0..n-1 in the order ``std::sort`` leaves row i of ``bits`` (int64, 2-D: one row per
    sort) comparing the values they hold as PyTorch's sort does: int64 values, or (``floating``) float64 values'
    bits, NaN the largest (any NaN equal to any other) and -0.0 equal to 0.0; ``descending``: the reversed
    comparator (NaN first). Each value becomes an int64 key that ``<`` orders as that
    comparator, so the sort's every comparison, and the order it leaves, is the comparator's."""
    n = bits.shape[1]
    v = np.empty(n, np.int64)
    k = np.empty(n, np.int64)
    stack = np.empty((n + 1, 3), np.int64)
    for i in range(bits.shape[0]):
        for j in range(n):
            b = bits[i, j]
            if floating:
                if (b & _MAGNITUDE) > _INF_BITS:
                    b = _MAGNITUDE
                elif b == _SIGN:
                    b = 0
                elif b < 0:  # (a negative float: a larger magnitude is a smaller value)
                    b ^= _MAGNITUDE
            v[j] = ~b if descending else b
            k[j] = j
        _std_sort(v, k, stack)
        for j in range(n):
            out[i, j] = k[j]
