"""``ember.Size``: a tuple of dimensions, as ``torch.Size``."""

from __future__ import annotations

import math


class Size(tuple):
    """The shape of a tensor; a tuple of ints."""

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))
