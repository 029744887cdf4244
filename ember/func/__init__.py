"""``torch.func``: functions of a module's parameters.

``functional_call(module, params_and_buffers, args)`` runs ``module`` with the given tensors standing in for
its parameters and buffers (by their ``named_parameters`` / ``named_buffers`` names) and puts the module's own
back afterwards, so a loss can be differentiated with respect to tensors that are not the module's
parameters (MAML's fast weights, ensembles). ``stack_module_state(models)`` stacks the parameters and buffers
of several models of one kind along a new first dimension.

The autodiff transforms (``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``,
``linearize``) are in ``_transforms.py``. ``vmap(func, in_dims, out_dims, randomness, chunk_size=...)`` maps a
function of one example over a batch, each op running once on the whole batch (``_vmap.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._missing import module_getattr
from .._tensor import Tensor
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._vmap import vmap

__all__ = ["functional_call", "stack_module_state", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "linearize", "vmap"]


def _owner(module, name: str):
    """The submodule holding the dotted ``name`` and the last part of the name."""
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def _tied_names(module) -> dict[str, list[str]]:
    """Each parameter or buffer name -> every name the same tensor has in ``module`` (tied weights)."""
    by_tensor: dict[int, list[str]] = {}
    for name, t in [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]:
        by_tensor.setdefault(id(t), []).append(name)
    return {name: names for names in by_tensor.values() for name in names}


def _merged(module, dicts, tie_weights: bool, strict: bool) -> dict[str, Tensor]:
    merged: dict[str, Tensor] = {}
    for d in dicts:
        for key, value in d.items():
            if key in merged:
                raise ValueError(f"{key} appeared in multiple dictionaries; behavior of functional call is ambiguous")
            merged[key] = value
    names = _tied_names(module)
    if tie_weights:
        for key in list(merged):
            for other in names.get(key, ()):
                if other in merged and merged[other] is not merged[key]:
                    raise ValueError(f"functional_call got multiple values for keys ['{key}', '{other}'], which "
                                     "are tied. Consider using tie_weights=False")
                merged[other] = merged[key]
    if strict:
        missing = sorted(set(names) - set(merged))
        unexpected = sorted(set(merged) - set(names))
        if missing or unexpected:
            lines = ([f"\tUnexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected else []) + \
                    ([f"\tMissing key(s): {', '.join(map(repr, missing))}."] if missing else [])
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n" + "\n".join(lines))
    return merged


def _swap(module, name: str, value) -> tuple:
    """Put ``value`` in place of ``name``; what to call ``_restore`` with."""
    owner, attr = _owner(module, name)
    for store in ("_parameters", "_buffers"):
        table = owner.__dict__[store]
        if attr in table:
            previous = table[attr]
            table[attr] = value
            return owner, store, attr, previous
    had = attr in owner.__dict__
    previous = owner.__dict__.get(attr)
    object.__setattr__(owner, attr, value)
    return owner, None, attr, (had, previous)


def _restore(owner, store, attr, previous) -> None:
    if store is not None:
        owner.__dict__[store][attr] = previous
        return
    had, value = previous
    if had:
        object.__setattr__(owner, attr, value)
    else:
        object.__delattr__(owner, attr)


def functional_call(module, parameter_and_buffer_dicts: Mapping | Sequence[Mapping], args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (one dict or several, keys
    disjoint) in place of the module's parameters and buffers of those names, as PyTorch's.

    ``tie_weights`` (default True): a tensor given for one name of tied weights is used for all of them.
    ``strict``: every parameter and buffer must be given, and nothing else (RuntimeError otherwise). The
    module's own tensors are back in place when the call returns or raises.
    """
    dicts = list(parameter_and_buffer_dicts) if isinstance(parameter_and_buffer_dicts, (list, tuple)) \
        else [parameter_and_buffer_dicts]
    merged = _merged(module, dicts, tie_weights, strict)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    swapped = []
    try:
        for name, value in merged.items():
            swapped.append(_swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for entry in reversed(swapped):
            _restore(*entry)


def stack_module_state(models) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of ``models`` (of one class, all in training or all in eval mode) stacked along a
    new first dimension: ``(params, buffers)``. Stacked parameters are new leaves that require grad where the
    originals do, as PyTorch's."""
    from .. import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        tables = [dict(named(m)) for m in models]
        out = {}
        for key in tables[0]:
            tensors = [t[key] for t in tables]
            result = stack([t.detach() for t in tensors])
            if all(t.requires_grad for t in tensors):
                result.requires_grad_()
            out[key] = result
        return out

    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())


__getattr__ = module_getattr(__name__)
