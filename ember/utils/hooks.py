"""``RemovableHandle``: what every ``register_*hook`` returns."""

from __future__ import annotations

from typing import Any


class RemovableHandle:
    """Removes its hook from the list it was added to when ``remove()`` is called."""

    def __init__(self, hooks: list, hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook
        hooks.append(hook)

    def remove(self) -> None:
        try:
            self._hooks.remove(self._hook)
        except ValueError:
            pass

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()
