"""``fully_shard`` (FSDP2): shard a module's parameters in place, row-wise, and make it an ``FSDPModule``.

    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)                       # the root: the parameters no block holds
    opt = torch.optim.AdamW(model.parameters())

Each call makes one unit of the module's parameters not already in a ``fully_shard``-ed submodule.
Every parameter is cut along dim 0 as ``torch.chunk(p, world)`` does and this rank keeps its chunk: the
Parameter objects stay (the optimizer may be built before or after), their data the local chunk.
Forward gathers the unit's parameters, frees them after (``reshard_after_forward``, except for the root)
and backward reduce-scatters the gradients (averaged) into each chunk's ``.grad``.

Difference from PyTorch: PyTorch's parameters become DTensors (global shape, ``Shard(0)`` placement);
ember's DTensor runs a subset of ops, not the optimizers' updates, so a parameter *is* its local shard
(``p.shape`` is the chunk's shape, as PyTorch's ``p.to_local()``).
``get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))`` gives the full tensors.
"""

from __future__ import annotations

from ..._tensor import Tensor
from ...nn.modules.module import Module
from .. import process_group as _pg
from ._handle import FlatParamHandle
from ._layout import RowLayout
from ._runtime import BackwardEnd, cast_inputs, clip_grad_norm, run_unit
from .api import MixedPrecisionPolicy, OffloadPolicy

_active = [0]  # fully_shard forwards running now (the outermost is the root's)
_classes: dict[type, type] = {}


class FSDPModule:
    """The class ``fully_shard`` mixes into a module's: gathering control and gradient sync."""

    def forward(self, *args, **kwargs):
        return _run(self, super().forward, args, kwargs)

    def _fsdp_units(self) -> list:
        return [m for m in self.modules() if isinstance(m, FSDPModule)]

    def unshard(self, async_op: bool = False):
        """Gather this unit's parameters now (forward will not gather them again); returns None."""
        handle = self.__dict__["_fsdp_handle"]
        if handle is not None:
            handle.unshard()

    def reshard(self) -> None:
        """Free this unit's gathered parameters (they are gathered again when needed)."""
        handle = self.__dict__["_fsdp_handle"]
        if handle is not None and not handle.in_forward:
            handle.full = None
            handle.free()

    def set_requires_gradient_sync(self, requires_gradient_sync: bool, *, recurse: bool = True) -> None:
        """Whether backward reduces gradients (False: each unit keeps its full gradient, added up, and the
        next backward with sync reduces the sum; PyTorch's gradient accumulation without communication)."""
        for m in self._fsdp_units() if recurse else [self]:
            if m.__dict__["_fsdp_handle"] is not None:
                m.__dict__["_fsdp_handle"].require_sync = bool(requires_gradient_sync)

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Tensor:
        """Clip the gradients of every unit's shards by their global norm; returns it (ember extension:
        PyTorch's ``torch.nn.utils.clip_grad_norm_`` gets the global norm from DTensor gradients, and on ember's
        local shards it would see only this rank's). A collective: call it on every rank."""
        handles = [m.__dict__["_fsdp_handle"] for m in self._fsdp_units() if m.__dict__["_fsdp_handle"] is not None]
        return clip_grad_norm(handles, list(self.parameters()), max_norm, norm_type)

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse: bool = True) -> None:
        for m in self._fsdp_units() if recurse else [self]:
            m.__dict__["_fsdp_reshard"] = bool(reshard_after_forward)
            if m.__dict__["_fsdp_handle"] is not None:
                m.__dict__["_fsdp_handle"].reshard_after_forward = bool(reshard_after_forward)


def _run(module, forward, args, kwargs):
    d = module.__dict__
    root = _active[0] == 0
    policy = d["_fsdp_mp"]
    if root and policy.cast_forward_inputs:
        args, kwargs = cast_inputs(policy.param_dtype, args, kwargs)
    _active[0] += 1
    try:
        output = run_unit(d["_fsdp_handle"], lambda: forward(*args, **kwargs), d["_fsdp_reshard"] and not root)
    finally:
        _active[0] -= 1
    if policy.output_dtype is not None:
        output = cast_inputs(policy.output_dtype, (output,), {})[0][0]
    if root:
        d["_fsdp_backward_end"].arm(output)
    return output


def fully_shard(module: Module, *, mesh=None, reshard_after_forward: bool = True, shard_placement_fn=None,
                mp_policy: MixedPrecisionPolicy | None = None, offload_policy: OffloadPolicy | None = None,
                ignored_params: set | None = None) -> Module:
    """Shard ``module``'s parameters over ``mesh`` (anything with ``get_group(dim)``; 1-D, or 2-D for
    replicate x shard; default: all ranks) and return it, now an ``FSDPModule``.

    ``reshard_after_forward``: free the gathered parameters after forward (default True; the root keeps
    them for backward). ``mp_policy``: ``MixedPrecisionPolicy(param_dtype, reduce_dtype, output_dtype)``.
    ``ignored_params``: parameters left unsharded. ``offload_policy`` is accepted (tensors live on the CPU).
    """
    if isinstance(module, (list, tuple)):
        raise NotImplementedError("fully_shard of a list of modules (one group for several) is not supported "
                                  "by ember; call fully_shard on each module or on their common parent")
    if not isinstance(module, Module):
        raise TypeError(f"fully_shard expects an ember.nn.Module, got {type(module).__name__}")
    if shard_placement_fn is not None:
        raise NotImplementedError("fully_shard(shard_placement_fn=...) is not supported by ember: parameters "
                                  "are sharded on dim 0")
    if isinstance(module, FSDPModule):
        raise ValueError("fully_shard was already applied to this module")
    policy = mp_policy or MixedPrecisionPolicy()
    if mesh is None:
        shard_group, replicate_group = _pg.resolve(None, "fully_shard"), None
    elif getattr(mesh, "ndim", 1) == 2:
        shard_group, replicate_group = mesh.get_group(1), mesh.get_group(0)
    else:
        shard_group, replicate_group = mesh.get_group(0), None
    ignored = {id(p) for p in ignored_params or ()}
    entries, stack = [], [module]
    while stack:
        m = stack.pop(0)
        entries += [(m, name, p) for name, p in m._parameters.items() if p is not None and id(p) not in ignored]
        stack[:0] = [c for c in m._modules.values() if c is not None and not isinstance(c, FSDPModule)]
    handle = None
    if entries:
        handle = FlatParamHandle(entries, shard_group, replicate_group, RowLayout, orig_params=True,
                                 reshard_after_forward=bool(reshard_after_forward), param_dtype=policy.param_dtype,
                                 reduce_dtype=policy.reduce_dtype)
    d = module.__dict__
    d["_fsdp_handle"], d["_fsdp_mp"], d["_fsdp_reshard"] = handle, policy, bool(reshard_after_forward)

    def finish() -> None:
        for m in module.modules():
            if isinstance(m, FSDPModule) and m.__dict__["_fsdp_handle"] is not None:
                m.__dict__["_fsdp_handle"].finish_backward()

    d["_fsdp_backward_end"] = BackwardEnd(finish)
    cls = type(module)
    if cls not in _classes:
        _classes[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    module.__class__ = _classes[cls]
    return module


def register_fsdp_forward_method(module: Module, method_name: str) -> None:
    """Gather ``module``'s parameters around calls of ``module.<method_name>`` too (e.g. ``generate``)."""
    if not isinstance(module, FSDPModule):
        return
    method = getattr(module, method_name)

    def wrapped(*args, **kwargs):
        return _run(module, method, args, kwargs)

    module.__dict__[method_name] = wrapped
