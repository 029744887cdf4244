"""Human names for parameters ("fc1.weight"), built only when a message needs one.

``nn.Module`` reports every registration (``adopt``): parameter -> (module, attribute) and
module -> (parent, attribute). A name is the path from the outermost living module down,
the same string ``model.named_parameters()`` yields for it. Parameters registered on no
module (or copied with ``copy.deepcopy``) fall back to their place in an optimizer, or their shape.
"""

from __future__ import annotations

import weakref

from .._tensor import Tensor
from . import registry


def adopt(owner, attr: str, value) -> None:
    """Remember that ``value`` (a parameter or a module) is ``owner.<attr>``."""
    if isinstance(value, Tensor):
        rec = registry.record(value)
        rec.owner, rec.attr = weakref.ref(owner), attr
    elif value is not None:
        registry.set_parent(value, owner, attr)


_installed = False


def install() -> None:
    """Record every parameter's and module's place as modules register them (once per process): the names in
    training-loop warnings, gradient reports and trace spans."""
    global _installed
    if _installed:
        return
    from ..utils import hooks

    hooks.module_parameter_registration_hooks.append(adopt)
    hooks.module_module_registration_hooks.append(adopt)
    _installed = True


def module_path(module) -> str:
    """Dotted path of ``module`` below its outermost registered ancestor ("" for a root)."""
    parts: list[str] = []
    seen = set()
    while module is not None and id(module) not in seen:
        seen.add(id(module))
        up = registry.parent_of(module)
        if up is None:
            break
        module, attr = up
        parts.append(attr)
    return ".".join(reversed(parts))


def module_label(module) -> str:
    """``"fc1 (Linear)"``, or the class name alone for a root module."""
    path = module_path(module)
    return f"{path} ({type(module).__name__})" if path else type(module).__name__


def param_name(param) -> str | None:
    """``"fc1.weight"`` for a parameter registered on a module, else None."""
    rec = registry._records.get(id(param))
    owner = rec.owner() if rec is not None and rec.owner is not None else None
    if owner is None or owner._parameters.get(rec.attr) is not param:
        return None
    path = module_path(owner)
    return f"{path}.{rec.attr}" if path else rec.attr


def names(params, optimizer=None) -> list[str]:
    """A name for each parameter: its module path, else its optimizer name or place, else its shape."""
    where: dict[int, str] = {}
    if optimizer is not None:
        for g, group in enumerate(optimizer.param_groups):
            given = group.get("param_names")
            for i, p in enumerate(group["params"]):
                where[id(p)] = given[i] if given else f"parameter #{i} of param_groups[{g}] with shape {list(p.shape)}"
    return [param_name(p) or where.get(id(p)) or f"a parameter with shape {list(p.shape)}" for p in params]


def listing(params, optimizer=None, limit: int = 8) -> str:
    """``"fc1.weight, fc1.bias"``, shortened to ``limit`` names plus a count."""
    shown = names(params[:limit], optimizer)
    more = len(params) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
