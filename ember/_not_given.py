"""``NOT_GIVEN``: the default of an argument that PyTorch's overloads tell apart by whether it was given at all
(``arange(end=n)`` against ``arange(start=n)``; ``round(x)`` keeps an integer tensor, ``round(x, decimals=0)``
refuses it), where no value of the argument stands for "not given"."""

from __future__ import annotations

from typing import Any


class _NotGiven:
    """The one "not given" object; shown as such in signatures."""

    def __repr__(self) -> str:
        return "<not given>"


NOT_GIVEN: Any = _NotGiven()
