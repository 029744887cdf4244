"""``torch.distributed``'s debug level (``DebugLevel``, ``get_debug_level``, ``set_debug_level``,
``set_debug_level_from_env``): OFF, INFO or DETAIL, first read from ``TORCH_DISTRIBUTED_DEBUG`` (as PyTorch, which
reads it at import; ember when first asked).

PyTorch's DETAIL checks at every collective that the ranks called the same one with matching tensors, and INFO and
DETAIL log more. ember checks the collectives' arguments across ranks at every level (``consistency.py``; turned
off only by ``set_collective_checks(False)``), and its errors name the ranks and calls at every level: the level is
kept and reported, and changes nothing else.
"""

from __future__ import annotations

import os

__all__ = ["DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env"]


class DebugLevel:
    """``torch.distributed.DebugLevel``: ``OFF`` (0), ``INFO`` (1), ``DETAIL`` (2)."""

    __slots__ = ("name", "value")
    __members__: dict[str, DebugLevel] = {}
    OFF: DebugLevel
    INFO: DebugLevel
    DETAIL: DebugLevel

    def __init__(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2:
            raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                            f"supported: DebugLevel(value: int) (0, 1 or 2); invoked with: {value!r}")
        self.value = value
        self.name = ("OFF", "INFO", "DETAIL")[value]

    def __int__(self) -> int:
        return self.value

    __index__ = __int__

    def __eq__(self, other) -> bool:
        return isinstance(other, DebugLevel) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"<DebugLevel.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"DebugLevel.{self.name}"


for _value, _name in enumerate(("OFF", "INFO", "DETAIL")):
    setattr(DebugLevel, _name, DebugLevel(_value))
    DebugLevel.__members__[_name] = getattr(DebugLevel, _name)

_level: list[DebugLevel | None] = [None]  # None: not read from the environment yet


def set_debug_level(level: DebugLevel) -> None:
    """Set the debug level (a ``DebugLevel``; an int or a name is PyTorch's TypeError)."""
    if not isinstance(level, DebugLevel):
        raise TypeError("set_debug_level(): incompatible function arguments. The following argument types are "
                        f"supported: (arg0: DebugLevel) -> None; invoked with: {level!r}")
    _level[0] = level


def set_debug_level_from_env() -> None:
    """Set the level from ``TORCH_DISTRIBUTED_DEBUG`` (OFF when unset; any case); another value is PyTorch's
    ValueError."""
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG")
    if value is None:
        _level[0] = DebugLevel.OFF
        return
    if value.upper() not in DebugLevel.__members__:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    _level[0] = DebugLevel.__members__[value.upper()]


def get_debug_level() -> DebugLevel:
    """The debug level: the last one set, else ``TORCH_DISTRIBUTED_DEBUG``'s."""
    if _level[0] is None:
        set_debug_level_from_env()
    return _level[0]
