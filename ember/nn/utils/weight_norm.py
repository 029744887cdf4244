"""``nn.utils.weight_norm`` / ``remove_weight_norm``: PyTorch's hook-based weight normalization.

``weight_norm(module, "weight", dim)`` replaces the parameter ``weight`` by ``weight_g`` (the magnitude, the
norm of ``weight`` over every dimension except ``dim``) and ``weight_v`` (the direction, initially ``weight``);
a forward pre-hook recomputes ``module.weight = weight_v * (weight_g / ||weight_v||)`` before every forward, so
state_dict keys, gradients and optimiser state are PyTorch's.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any, TypeVar

from ..._size import c_type_name
from ..._tensor import Tensor
from ...autograd.graph import shown_as
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]

T_module = TypeVar("T_module", bound=Module)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension except ``dim``, kept as size-1 dimensions (PyTorch's
    ``torch.norm_except_dim``). ``dim=-1`` means the norm of the whole tensor (a 0-dim tensor), as in PyTorch,
    where -1 is the sentinel for ``dim=None`` rather than the last dimension. Composed as PyTorch's (its graph's
    nodes too): the rows of ``v`` viewed as a matrix, ``dim`` brought first by a transpose where it is neither the
    first nor the last dimension (another negative ``dim`` counts from the end, a dimension out of range is its
    IndexError). ``pow`` is an int, as PyTorch's signature has it."""
    if pow.__class__ is not int:
        raise TypeError(f"norm_except_dim(): argument 'pow' (position 2) must be int, not {c_type_name(pow)}")
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(v.size(0), *[1] * (v.ndim - 1))
    if dim == v.ndim - 1:
        return v.contiguous().view(-1, v.size(-1)).norm(pow, 0).view(*[1] * (v.ndim - 1), v.size(-1))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / norm_except_dim(v, 2, dim))``, PyTorch's ``torch._weight_norm``: over the first or last dimension
    PyTorch runs its fused kernel, whose node the result's grad_fn reads as."""
    out = v * (g / norm_except_dim(v, 2, dim))
    return shown_as(out, "WeightNormInterfaceBackward0") if dim == 0 or dim == v.ndim - 1 else out


def _find_hook(module: Module, kind: type, name: str):
    """The (id, hook) of ``module``'s forward pre-hook of class ``kind`` for parameter ``name``, or None."""
    for hook_id, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return hook_id, hook
    return None


def _remove_hook(module: Module, kind: type, name: str, what: str) -> Module:
    """Undo the ``kind`` hook of parameter ``name`` (its ``remove``) and unregister it; PyTorch's ValueError
    naming ``what`` when there is none."""
    found = _find_hook(module, kind, name)
    if found is None:
        raise ValueError(f"{what} of '{name}' not found in {module}")
    hook_id, hook = found
    hook.remove(module)
    del module._forward_pre_hooks[hook_id]
    return module


class WeightNorm:
    """The forward pre-hook ``weight_norm`` registers: recomputes ``name`` from ``name_g`` and ``name_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        _warn_deprecated()
        if _find_hook(module, WeightNorm, name) is not None:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))  # a plain attribute, recomputed by the hook
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _warn_deprecated() -> None:
    """PyTorch's FutureWarning, from the frame PyTorch's names: its ``WeightNorm.apply`` is wrapped by
    ``@deprecated``, which warns naming apply's caller, its own ``weight_norm`` (so the default filter shows it once
    per process, the registry being that module's, and module filters see ``torch.nn.utils.weight_norm``), or the
    program's line that calls ``WeightNorm.apply`` itself."""
    caller = sys._getframe(2)
    module = caller.f_globals.get("__name__", "<string>")
    warnings.warn_explicit("`torch.nn.utils.weight_norm` is deprecated in favor of "
                           "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                           caller.f_code.co_filename, caller.f_lineno,
                           "torch.nn.utils.weight_norm" if module == __name__ else module,
                           caller.f_globals.setdefault("__warningregistry__", {}))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (``<name>_g``, ``<name>_v``), as PyTorch's deprecated
    ``torch.nn.utils.weight_norm`` (it warns with PyTorch's FutureWarning).

    ``dim=0`` (default): one magnitude per output channel; ``dim=None``: one for the whole tensor (as ``dim=-1``,
    PyTorch's sentinel). Returns the module.
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``weight_norm``: ``<name>`` becomes a Parameter again holding the current normalized weight."""
    return _remove_hook(module, WeightNorm, name, "weight_norm")
