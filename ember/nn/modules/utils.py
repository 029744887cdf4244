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


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Remove ``prefix`` from the keys of ``state_dict`` that start with it, in place (keys without it are kept).

    PyTorch's way to load a DistributedDataParallel checkpoint (keys ``module.*``) into the plain model:
    ``consume_prefix_in_state_dict_if_present(state, "module.")`` before ``load_state_dict``. The renamed keys move
    to the end, in their order, as in PyTorch; a ``_metadata`` attribute, when the dict has one, is renamed alike.
    """
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in [k for k in metadata if k and (k == prefix.replace(".", "") or k.startswith(prefix))]:
            metadata[key[len(prefix):]] = metadata.pop(key)
