"""Auto-wrap policies (``torch.distributed.fsdp.wrap``): which submodules become FSDP units of their own.

A policy is called as ``policy(module=m, recurse=..., nonwrapped_numel=n)``: with ``recurse=True`` it
says whether to look inside ``m``; with ``recurse=False``, whether to wrap ``m`` (``n``: the number of
its parameters not already in a wrapped submodule). ``FullyShardedDataParallel(auto_wrap_policy=...)``
walks the tree bottom-up as PyTorch's ``_recursive_wrap`` does; the root itself is always wrapped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ...nn.modules.attention import MultiheadAttention
from ...nn.modules.container import ModuleDict, ModuleList
from ...nn.modules.module import Module

FORCE_LEAF_MODULES = {MultiheadAttention}
EXCLUDE_WRAP_MODULES = {ModuleList, ModuleDict}


def always_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int, **kwargs) -> bool:
    """Wrap every submodule."""
    return True


def lambda_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                            lambda_fn: Callable[[Module], bool]) -> bool:
    """Wrap the modules for which ``lambda_fn(module)`` is true."""
    return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                 transformer_layer_cls: Iterable[type]) -> bool:
    """Wrap the instances of ``transformer_layer_cls`` (use ``functools.partial`` to set it)."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                min_num_params: int = int(1e8), force_leaf_modules: set | None = None,
                                exclude_wrap_modules: set | None = None) -> bool:
    """Wrap a module once its parameters not yet wrapped number at least ``min_num_params`` (default 1e8),
    and look inside only such modules; never look inside ``force_leaf_modules`` (default:
    MultiheadAttention), never wrap ``exclude_wrap_modules`` (default: ModuleList, ModuleDict)."""
    force = size_based_auto_wrap_policy.FORCE_LEAF_MODULES if force_leaf_modules is None else force_leaf_modules
    exclude = (size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES if exclude_wrap_modules is None
               else exclude_wrap_modules)
    is_large = nonwrapped_numel >= min_num_params  # a small subtree is neither wrapped nor looked into
    return is_large and not isinstance(module, tuple(force if recurse else exclude))


size_based_auto_wrap_policy.FORCE_LEAF_MODULES = FORCE_LEAF_MODULES  # PyTorch's names for the defaults
size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = EXCLUDE_WRAP_MODULES


class ModuleWrapPolicy:
    """Wrap every instance of the given module classes."""

    def __init__(self, module_classes: Iterable[type]) -> None:
        self._module_classes = tuple(set(module_classes))

    def __call__(self, module: Module, recurse: bool, nonwrapped_numel: int, **kwargs) -> bool:
        return True if recurse else isinstance(module, self._module_classes)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({set(self._module_classes)})"


def unwrapped_numel(module: Module, is_unit: Callable[[Module], bool]) -> int:
    """Parameters of ``module`` not inside a submodule that is already a unit (shared ones counted once)."""
    seen, total = set(), 0
    stack = [module]
    while stack:
        m = stack.pop()
        for p in m._parameters.values():
            if p is not None and id(p) not in seen:
                seen.add(id(p))
                total += p.numel()
        stack.extend(c for c in m._modules.values() if c is not None and not is_unit(c))
    return total


def recursive_wrap(module: Module, policy: Callable, wrap: Callable[[Module], Module],
                   is_unit: Callable[[Module], bool], ignored: set, only_children: bool = False) -> tuple[Module, int]:
    """PyTorch's ``_recursive_wrap``: wrap ``module``'s subtree bottom-up; (the module or its wrapper, the
    number of parameters wrapped)."""
    if is_unit(module) or id(module) in ignored:
        return module, 0
    numel = unwrapped_numel(module, is_unit)
    if not policy(module=module, recurse=True, nonwrapped_numel=numel):
        return module, 0
    wrapped = 0
    for name, child in list(module._modules.items()):
        if child is None:
            continue
        new, n = recursive_wrap(child, policy, wrap, is_unit, ignored)
        if new is not child:
            module._modules[name] = new
        wrapped += n
    if not only_children and policy(module=module, recurse=False, nonwrapped_numel=numel - wrapped):
        return wrap(module), numel
    return module, wrapped
