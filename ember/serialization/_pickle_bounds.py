"""The limits an interpreted ``data.pkl`` runs under: nesting depth, memory, and internal objects kept inside.

A pickle is a program: a few bytes of opcodes can build deep or large structures.
``Bounds`` is consulted by the interpreter (``_torch_unpickle``) for every object
it builds, so that

- **nesting** never exceeds ``MAX_DEPTH`` (shared with ember's own format): a
  tuple nested a million deep would crash CPython when hashed as a dict key or set
  item (its hash recurses in C), so it is refused while being built. Tuples and
  frozensets, the only containers hashing recurses through, are immutable, so
  their depth is exact; a list or dict filled after it was put into another
  container can end up deeper (Python's own recursion limit then guards it).
  A tuple may be one level deeper, as a call's arguments (protocol 2 pickles a
  set at the bound as ``set([items])``, its arguments' tuple one level past
  it), never as a value: a container holding it, or a result, is refused;
- **memory** stays within ``MEMORY_BASE + MEMORY_PER_BYTE * len(data.pkl)`` bytes
  of Python objects, counted with ``sys.getsizeof`` (plus a pointer for every
  reference a stack, container or memo holds). Python objects are larger than
  their opcodes (a one-byte EMPTY_SET makes a 216-byte set), so the bound is per
  pickle byte; the tensors' data, checked against the archive, comes on top;
- the interpreter's **internal objects** (an allowed global before it is called, a
  storage before a tensor is built on it) only ever appear where PyTorch's own
  files put them (arguments of a call), never in a value handed to the caller.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from ._archive import MAX_DEPTH, Fail

MEMORY_BASE = 2**20
MEMORY_PER_BYTE = 32  # a state dict of many tiny tensors, or a list of small dicts, needs about 20
POINTER = 8
_CONTAINERS = (tuple, list, dict, set, frozenset)  # (OrderedDict is a dict)
_NESTED_ENTRY = 120  # what remembering one nested container costs: a dict slot and a 3-tuple


class Internal:
    """Base of the interpreter's own objects, which must not leave it."""


class Bounds:
    """The running account of one interpretation: memory spent against the budget, and depths."""

    def __init__(self, pickle_size: int, fail: Fail) -> None:
        self.fail = fail
        self.budget = MEMORY_BASE + MEMORY_PER_BYTE * pickle_size
        self.spent = 0
        # id -> (depth, holds an internal object, the object kept alive so that its id stays its own), for
        # containers nested two or more deep or holding internal objects; others are depth 1 (or 0: a leaf)
        self._nested: dict[int, tuple[int, bool, Any]] = {}

    def charge(self, nbytes: int) -> None:
        self.spent += nbytes
        if self.spent > self.budget:
            self.fail(f"data.pkl needs more memory than the bound allows ({self.budget} bytes of Python "
                      f"objects: {MEMORY_PER_BYTE}x its {(self.budget - MEMORY_BASE) // MEMORY_PER_BYTE} "
                      f"bytes + {MEMORY_BASE}); it is not a checkpoint's pickle")

    def new(self, value: Any) -> Any:
        """``value``, just built from the opcodes (a number, string, empty container, tensor), paid for."""
        self.charge(sys.getsizeof(value) + POINTER)
        return value

    def made(self, container: Any, items: Iterable) -> Any:
        """``container``, just built from ``items``: its depth checked and recorded, its memory paid for."""
        depth, internal = self._measure(items, 0, isinstance(container, tuple))
        self.charge(sys.getsizeof(container) + POINTER)
        self._record(container, depth, internal)
        return container

    def add(self, container: Any, items: list, insert: Callable[[], None]) -> None:
        """``insert()`` puts ``items`` into the mutable ``container``: depth checked first, growth paid after."""
        depth, _ = self._measure(items, self.depth(container), False)
        self._record(container, depth, False)
        before = sys.getsizeof(container)
        insert()
        self.charge(sys.getsizeof(container) - before)

    def plain(self, value: Any, where: str) -> None:
        """Refuse an internal object (or a tuple holding one), or a tuple nested past the bound (a call's arguments),
        where a value belongs."""
        if self.depth(value) > MAX_DEPTH:
            self.fail(f"data.pkl nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, Internal) or self._nested.get(id(value), (0, False))[1]:
            named = f" ({value.path})" if isinstance(getattr(value, "path", None), str) else ""
            self.fail(f"data.pkl puts a storage or an uncalled global{named} into {where}, where a value belongs "
                      "(ember's reader of PyTorch files gives back no storage, and no global it builds things with, "
                      "as a value)")

    def depth(self, value: Any) -> int:
        entry = self._nested.get(id(value))
        if entry is not None:
            return entry[0]
        return 1 if isinstance(value, _CONTAINERS) else 0

    def _measure(self, items: Iterable, depth: int, internal_allowed: bool) -> tuple[int, bool]:
        internal = False
        for item in items:
            depth = max(depth, 1 + self.depth(item))
            if internal_allowed:
                internal = internal or isinstance(item, Internal) or self._nested.get(id(item), (0, False))[1]
            else:
                self.plain(item, "a container")
        if depth > MAX_DEPTH + internal_allowed:  # (a tuple: perhaps a call's arguments, one level more)
            self.fail(f"data.pkl nests deeper than {MAX_DEPTH} levels")
        return max(depth, 1), internal

    def _record(self, container: Any, depth: int, internal: bool) -> None:
        if depth > 1 or internal:
            if id(container) not in self._nested:
                self.charge(_NESTED_ENTRY)
            self._nested[id(container)] = (depth, internal, container)
