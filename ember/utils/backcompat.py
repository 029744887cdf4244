"""``ember.utils.backcompat``: PyTorch 0.2's switches for its broadcasting and ``keepdim`` migration warnings.

PyTorch 0.2 made elementwise operations broadcast and reductions drop the reduced dimension; these two switches
turned on warnings where a program's results changed with that. PyTorch keeps the switches for old programs
(``torch.utils.backcompat.broadcast_warning.enabled = True`` opens TRPO and other 2017 code) but no operation
reads them any more: setting one changes nothing but what reading it gives, as here. Like PyTorch, a switch takes
a Python ``bool`` only (RuntimeError otherwise).
"""

from __future__ import annotations

from collections.abc import Callable

from .._size import c_type_name

__all__ = ["Warning", "broadcast_warning", "keepdim_warning"]

_switches = {"broadcast": False, "keepdim": False}


def _setter(name: str) -> Callable[[bool], None]:
    def set_switch(value: bool) -> None:
        if type(value) is not bool:  # PyTorch's binding takes a Python bool only (not 1, numpy.bool_, a tensor)
            raise RuntimeError(f"set_backcompat_{name}_warn expects a bool, but got {c_type_name(value)}")
        _switches[name] = value

    return set_switch


def _getter(name: str) -> Callable[[], bool]:
    return lambda: _switches[name]


class Warning:  # noqa: A001 (PyTorch's name for the class, shadowing the builtin inside this module only)
    """One switch: ``enabled`` (a property over ``get_enabled``/``set_enabled``) reads and sets it."""

    def __init__(self, setter: Callable[[bool], None], getter: Callable[[], bool]) -> None:
        self.setter = setter
        self.getter = getter

    def set_enabled(self, value: bool) -> None:
        self.setter(value)

    def get_enabled(self) -> bool:
        return self.getter()

    enabled = property(get_enabled, set_enabled)


broadcast_warning = Warning(_setter("broadcast"), _getter("broadcast"))
keepdim_warning = Warning(_setter("keepdim"), _getter("keepdim"))
