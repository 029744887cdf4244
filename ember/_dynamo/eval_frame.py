"""``torch._dynamo.eval_frame.OptimizedModule``: what ``torch.compile(module)`` returns."""

from __future__ import annotations

from typing import Any

from .._missing import module_getattr
from ..nn.modules.module import Module


class OptimizedModule(Module):
    """``torch.compile(module)``'s result, laid out as PyTorch's: the original module is its one child
    ``_orig_mod`` (so ``state_dict`` keys start with ``_orig_mod.``, as checkpoints of compiled PyTorch models do),
    calling it calls the original (its hooks included), and every other attribute is read from, written to and
    deleted on the original (``compiled.fc``, ``compiled.some_flag = 1``).

    Difference from PyTorch: nothing is compiled; the original's forward runs as written (the same results).
    """

    _opt_mod_attributes = frozenset({"_orig_mod", "dynamo_ctx", "forward", "__dict__"})

    def __init__(self, mod: Module, dynamo_ctx: Any = None) -> None:
        super().__init__()
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx

    @property  # type: ignore[override]
    def training(self) -> bool:
        """The original module's flag, read and set through (``compiled.eval()`` reaches it as ``train`` does)."""
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        self._orig_mod.training = value

    def __len__(self) -> int:
        if not hasattr(self._orig_mod, "__len__"):
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()")
        return len(self._orig_mod)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # (guarded: while unpickling or deep-copying, lookups arrive before __dict__ is filled)
        modules = self.__dict__.get("_modules")
        if modules is None or "_orig_mod" not in modules:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'", name=name, obj=self)
        if name == "_orig_mod":
            return modules["_orig_mod"]
        return getattr(modules["_orig_mod"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)


__getattr__ = module_getattr(__name__)
