"""libstdc++'s ``std::sort`` (introsort), step for step, for the kernels of PyTorch whose result depends on the
order it leaves elements in: where the comparison is not a strict weak order (``a < b`` with NaN, which compares
false with everything), no other sort gives the same order. PyTorch's CPU ``mode`` sorts (value, index) pairs by
value with it, then takes runs of values that compare equal (each NaN a run of its own); its CPU ``sort`` and
``argsort`` without ``stable=True`` sort (value, index) pairs by value with it, which orders equal values so.
"""

from __future__ import annotations

from collections.abc import Callable

_THRESHOLD = 16  # libstdc++'s _S_threshold: ranges this short are left to the final insertion sort


def std_sort(items: list, less: Callable) -> None:
    """Sort ``items`` in place as ``std::sort(begin, end, less)`` does."""
    n = len(items)
    if n > 1:
        _introsort_loop(items, 0, n, 2 * (n.bit_length() - 1), less)
        _final_insertion_sort(items, 0, n, less)


def _introsort_loop(a: list, first: int, last: int, depth: int, less: Callable) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(a, first, last, less)  # (std::partial_sort over the whole range)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, less)
        _introsort_loop(a, cut, last, depth, less)
        last = cut


def _partition_pivot(a: list, first: int, last: int, less: Callable) -> int:
    mid = first + (last - first) // 2
    _median_to_first(a, first, first + 1, mid, last - 1, less)
    return _unguarded_partition(a, first + 1, last, first, less)


def _median_to_first(a: list, result: int, i: int, j: int, k: int, less: Callable) -> None:
    if less(a[i], a[j]):
        if less(a[j], a[k]):
            pick = j
        elif less(a[i], a[k]):
            pick = k
        else:
            pick = i
    elif less(a[i], a[k]):
        pick = i
    elif less(a[j], a[k]):
        pick = k
    else:
        pick = j
    a[result], a[pick] = a[pick], a[result]


def _unguarded_partition(a: list, first: int, last: int, pivot: int, less: Callable) -> int:
    while True:
        while less(a[first], a[pivot]):
            first += 1
        last -= 1
        while less(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _final_insertion_sort(a: list, first: int, last: int, less: Callable) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, less)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(a, i, first, less)
    else:
        _insertion_sort(a, first, last, less)


def _insertion_sort(a: list, first: int, last: int, less: Callable) -> None:
    for i in range(first + 1, last):
        if less(a[i], a[first]):
            a[first:i + 1] = [a[i]] + a[first:i]
        else:
            _linear_insert(a, i, first, less)


def _linear_insert(a: list, last: int, first: int, less: Callable) -> None:
    """libstdc++'s unguarded linear insert; ``first`` bounds it (the C++ one relies on a smaller element before,
    which a NaN may break: there it would read before the range)."""
    value = a[last]
    prev = last - 1
    while prev >= first and less(value, a[prev]):
        a[last] = a[prev]
        last = prev
        prev -= 1
    a[last] = value


def _heap_sort(a: list, first: int, last: int, less: Callable) -> None:
    """std::partial_sort(first, last, last): make_heap, then sort_heap."""
    n = last - first
    if n < 2:
        return
    parent = (n - 2) // 2
    while True:
        _adjust_heap(a, first, parent, n, a[first + parent], less)
        if parent == 0:
            break
        parent -= 1
    while last - first > 1:
        last -= 1
        value = a[last]
        a[last] = a[first]
        _adjust_heap(a, first, 0, last - first, value, less)


def _adjust_heap(a: list, first: int, hole: int, n: int, value, less: Callable) -> None:
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value
