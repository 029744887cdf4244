"""``torch.distributed.checkpoint.state_dict``: model and optimizer state dicts by parameter name (FQN), the same
form for a plain module, DistributedDataParallel, FullyShardedDataParallel and ``fully_shard`` models.

    model_sd, optim_sd = get_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True))
    set_state_dict(model, optimizer, model_state_dict=model_sd, optim_state_dict=optim_sd)

Keys are the unwrapped model's names (no ``module.`` or ``_fsdp_wrapped_module.``); optimizer states are
keyed by FQN too, and each group's ``params`` lists FQNs. With ``full_state_dict=True`` sharded tensors are
gathered to their full shapes (a collective: call on every rank); otherwise a sharded model gives each
rank's part of each parameter (ember has no DTensor: a plain tensor of this rank's elements, which
``set_*`` with the same options and world size loads back). The work is in
``ember/distributed/fsdp/_state_dict_utils.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..consistency import named_call
from ..fsdp import _state_dict_utils as sdu


@dataclass
class StateDictOptions:
    """Options of the ``get_*``/``set_*`` functions (``torch.distributed.checkpoint.state_dict.StateDictOptions``).

    ``full_state_dict``: gather sharded tensors (default False: each rank's shards). ``cpu_offload``: with
    ``full_state_dict``, only rank 0 gets the dict (others ``{}``), as PyTorch; tensors are on the CPU anyway.
    ``ignore_frozen_params``: leave out parameters that do not require grad. ``strict``: loading raises on
    missing or unexpected keys. ``broadcast_from_rank0``: ``set_*`` take rank 0's dicts (other ranks may
    pass ``{}``). ``keep_submodule_prefixes``, ``flatten_optimizer_state_dict``: accepted, no effect.
    """

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _options(options: StateDictOptions | None, submodules) -> StateDictOptions:
    if submodules is not None:
        raise NotImplementedError("submodules= is deprecated in PyTorch and not supported by ember; "
                                  "take the submodule's own state dict")
    return options or StateDictOptions()


def _optimizers(optimizers) -> list:
    return list(optimizers) if isinstance(optimizers, Iterable) else [optimizers]


def _rank0_only(opts: StateDictOptions) -> bool:
    from .. import process_group

    return opts.full_state_dict and opts.cpu_offload and process_group.is_initialized() \
        and process_group.get_rank() != 0


def _frozen(model) -> set:
    out = set()
    for h, i, fqns in sdu.param_owners(model).values():
        params = [None] if h is None else (h.params if i is None else [h.params[i]])
        for f, p in zip(fqns, params):
            if p is not None and not p.requires_grad:
                out.add(f)
    for name, p in sdu._base(model).named_parameters():
        if not p.requires_grad:
            out.add(sdu.clean_key(name))
    return out


@named_call  # (each of these: a rank stuck in a collective it runs is reported as stuck in it)
def get_model_state_dict(model, *, submodules=None, options: StateDictOptions | None = None) -> dict:
    """The model's state dict by FQN (see the module docstring)."""
    opts = _options(options, submodules)
    if opts.full_state_dict or not sdu.handles_of(model):
        sd = sdu.full_state_dict(model)
    else:
        sd = sdu.local_state_dict(model)
    if opts.ignore_frozen_params:
        frozen = _frozen(model)
        sd = type(sd)((k, v) for k, v in sd.items() if k not in frozen)
    return {} if _rank0_only(opts) else sd


@named_call
def get_optimizer_state_dict(model, optimizers, *, submodules=None, options: StateDictOptions | None = None) -> dict:
    """The optimizers' state by FQN (several optimizers: their states merged, their groups in order)."""
    opts = _options(options, submodules)
    state, groups = {}, []
    for optim in _optimizers(optimizers):
        one = sdu.full_optim_state_dict(model, optim, gather=opts.full_state_dict)
        state.update(one["state"])
        groups += one["param_groups"]
    return {} if _rank0_only(opts) else {"state": state, "param_groups": groups}


@named_call
def get_state_dict(model, optimizers, *, submodules=None, options: StateDictOptions | None = None) -> tuple:
    """``(get_model_state_dict(...), get_optimizer_state_dict(...))``."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options))


def _from_rank0(value, opts: StateDictOptions):
    if not opts.broadcast_from_rank0:
        return value
    from ..object_collectives import broadcast_object_list

    box = [value]
    broadcast_object_list(box, src=0)
    return box[0]


@named_call
def set_model_state_dict(model, model_state_dict: dict, *, options: StateDictOptions | None = None):
    """Load a ``get_model_state_dict`` result; returns ``(missing_keys, unexpected_keys)``."""
    opts = _options(options, None)
    sd = _from_rank0(model_state_dict, opts)
    strict = opts.strict and not opts.ignore_frozen_params
    if opts.full_state_dict or not sdu.handles_of(model):
        return sdu.load_full_state_dict(model, sd, strict)
    return sdu.load_local_state_dict(model, sd, strict)


@named_call
def set_optimizer_state_dict(model, optimizers, optim_state_dict: dict, *,
                             options: StateDictOptions | None = None) -> None:
    """Load a ``get_optimizer_state_dict`` result into the optimizers (the groups in order)."""
    opts = _options(options, None)
    osd = _from_rank0(optim_state_dict, opts)
    used = 0
    for optim in _optimizers(optimizers):
        n = len(optim.param_groups)
        part = {"state": osd["state"], "param_groups": osd["param_groups"][used:used + n]}
        used += n
        local = not opts.full_state_dict and bool(sdu.handles_of(model))
        optim.load_state_dict(sdu.optim_state_dict_to_load(model, optim, part, local=local))


@named_call
def set_state_dict(model, optimizers, *, model_state_dict: dict, optim_state_dict: dict,
                   options: StateDictOptions | None = None):
    """``set_model_state_dict`` and ``set_optimizer_state_dict``; returns the model's (missing, unexpected)."""
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
