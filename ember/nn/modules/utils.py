"""``torch.nn.modules.utils``: the helpers layer code imports to spell a size as a tuple (``_pair(3)`` is
``(3, 3)``; an iterable is kept as a tuple)."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from itertools import repeat
from typing import Any


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A function making ``x`` an ``n``-tuple: an iterable as a tuple, anything else repeated ``n`` times."""

    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: tuple, n: int) -> tuple:
    """``t`` reversed, each element repeated ``n`` times (``(1, 2), 2 -> (2, 2, 1, 1)``: F.pad's order)."""
    return tuple(x for x in reversed(t) for _ in range(n))
