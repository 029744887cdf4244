"""PyTorch's config modules (``torch._dynamo.config``, ``torch._inductor.config``, ``torch._functorch.config``):
flags programs set for the graph compiler, kept with PyTorch's defaults.

ember compiles nothing (``ember.compile`` returns the model), so a flag changes no behaviour; it is kept so
that ``torch._inductor.config.coordinate_descent_tuning = True`` runs, reads back what was set, and
``config.patch(flag=value)`` restores it. As in PyTorch, a name that is not one of the module's flags is
refused (``AttributeError``, here ember's MissingFeatureError naming it), reading or setting: a misspelt
flag fails where it is written.
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Any

from ._missing import missing


class _Flags:
    """The flags of one module or section (``torch._inductor.config.triton``): reads and writes of known
    names only; aliases (``cache_size_limit`` for ``recompile_limit``) read and write their flag."""

    def __init__(self, torch_name: str, flags: dict[str, Any], aliases: dict[str, str]) -> None:
        object.__setattr__(self, "_torch_name", torch_name)
        object.__setattr__(self, "_values", dict(flags))
        object.__setattr__(self, "_aliases", dict(aliases))

    def _flag(self, name: str) -> str:
        name = self._aliases.get(name, name)
        if name not in self._values:
            raise missing(f"module '{self._torch_name}'", f"{self._torch_name}.{name}", lambda: self._values)
        return name

    def get(self, name: str) -> Any:
        return self._values[self._flag(name)]

    def set(self, name: str, value: Any) -> None:
        flag = self._flag(name)
        if isinstance(self._values[flag], _Section):
            raise AttributeError(f"{self._torch_name}.{name} is a section of flags; set its flags one by one")
        self._values[flag] = value

    def names(self) -> list[str]:
        return [*self._values, *self._aliases]


class _Section:
    """A section of a config module (``torch._inductor.config.triton``)."""

    def __init__(self, torch_name: str, flags: dict[str, Any], aliases: dict[str, str] | None = None) -> None:
        object.__setattr__(self, "_flags", _Flags(torch_name, flags, aliases or {}))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._flags.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._flags.set(name, value)

    def __dir__(self) -> list[str]:
        return self._flags.names()


class _ConfigModule(types.ModuleType):
    """The class a config module is given (``install``): attribute access goes through its flags."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.__dict__["_flags"].get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            super().__setattr__(name, value)
        else:
            self.__dict__["_flags"].set(name, value)

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self.__dict__["_flags"].names()]


def install(module_name: str, torch_name: str, flags: dict[str, Any], aliases: dict[str, str] | None = None) -> None:
    """Make ``module_name`` a config module of ``flags`` ({name: PyTorch's default}; a dict value is a section)."""
    module = sys.modules[module_name]
    sections = {k: _Section(f"{torch_name}.{k}", v) if isinstance(v, dict) else v for k, v in flags.items()}
    module.__dict__["_flags"] = _Flags(torch_name, sections, aliases or {})
    module.__class__ = _ConfigModule


@contextlib.contextmanager
def _patching(flags: _Flags, changes: dict[str, Any]):
    saved = {name: flags.get(name) for name in changes}
    try:
        for name, value in changes.items():
            flags.set(name, value)
        yield
    finally:
        for name, value in saved.items():
            flags.set(name, value)


def patch(module_name: str, arg: str | dict[str, Any] | None = None, value: Any = None, **changes: Any):
    """``config.patch(flag=value)`` (or ``patch("flag", value)``, ``patch({...})``): the flags set for a ``with``
    block or a decorated function, restored afterwards."""
    if isinstance(arg, str):
        changes[arg] = value
    elif isinstance(arg, dict):
        changes.update(arg)
    flags = sys.modules[module_name].__dict__["_flags"]
    for name in changes:  # refused at once, as PyTorch does
        flags.get(name)
    return _patching(flags, changes)
