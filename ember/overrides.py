"""``torch.overrides``: the class libraries subclass to intercept torch functions (``TorchFunctionMode``).

ember's functions do not dispatch through ``__torch_function__``, so a mode's ``__torch_function__`` would never
be called. ``TorchFunctionMode`` is here so that code defining a mode imports; entering one (``with Mode():``)
raises NotImplementedError naming the feature, rather than running the block with the mode silently ignored.
"""

from __future__ import annotations

from typing import Any

from ._missing import module_getattr

__all__ = ["TorchFunctionMode"]


class TorchFunctionMode:
    """A context manager whose ``__torch_function__`` PyTorch calls for every torch function run inside it
    (``torch.overrides.TorchFunctionMode``). Difference from PyTorch: subclasses can be defined and built, but
    entering one raises NotImplementedError, since ember has no ``__torch_function__`` dispatch."""

    def __init__(self) -> None:
        self.inner = None

    def __torch_function__(self, func, types, args=(), kwargs=None) -> Any:
        raise NotImplementedError  # PyTorch's base class does the same: subclasses override it

    def __enter__(self) -> TorchFunctionMode:
        raise NotImplementedError(
            f"{type(self).__name__} is a torch.overrides.TorchFunctionMode: ember does not dispatch torch functions "
            "through __torch_function__, so torch function modes are not supported")

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        return None

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        return cls(*args, **kwargs).__enter__()


__getattr__ = module_getattr(__name__)
