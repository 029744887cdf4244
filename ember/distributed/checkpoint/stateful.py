"""``Stateful``: PyTorch's protocol for what ``dcp.save`` and ``dcp.load`` handle through its state dict
(``torch.distributed.checkpoint.stateful``). Modules, optimizers and schedulers satisfy it; a program's own class
(PyTorch's tutorial wraps a model and its optimizer in an ``AppState(Stateful)``) may subclass it."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, runtime_checkable


@runtime_checkable
class Stateful(Protocol):
    """An object saved as its ``state_dict()`` and restored in place by ``load_state_dict(state_dict)``."""

    def state_dict(self) -> dict[str, Any]:
        """The object's state, as a dictionary; ``dcp.load`` calls it too, to fill it in place."""
        ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the object's state from ``state_dict``."""
        ...


StatefulT = TypeVar("StatefulT", bound=Stateful)

__all__ = ["Stateful", "StatefulT"]
