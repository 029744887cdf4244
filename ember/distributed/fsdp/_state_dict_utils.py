"""Full and local state dicts of sharded models, by the parameters' own names (FQNs).

Shared by ``FullyShardedDataParallel`` (its ``state_dict`` and ``optim_state_dict``), ``fully_shard``
modules and ``torch.distributed.checkpoint.state_dict``. A model's units are found through the
``_fsdp_handle`` each FSDP unit keeps (``_handle.FlatParamHandle``), in ``modules()`` order, the same
on every rank: the gathers below are collectives that every rank of the unit's group must run.

Names drop the wrappers' prefixes, as PyTorch's: ``_fsdp_wrapped_module.``, ``_checkpoint_wrapped_module.``,
``_orig_mod.`` anywhere, and DistributedDataParallel's leading ``module.``.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager

from ..._backend import xp
from ..._tensor import Tensor

WRAPPER_PREFIXES = ("_fsdp_wrapped_module.", "_checkpoint_wrapped_module.", "_orig_mod.")
summoning = [0]  # > 0 while full parameters are summoned: FSDP's state_dict acts as Module's


def clean_key(key: str) -> str:
    for prefix in WRAPPER_PREFIXES:
        key = key.replace(prefix, "")
    return key


def handles_of(model) -> list:
    return [m.__dict__["_fsdp_handle"] for m in model.modules() if m.__dict__.get("_fsdp_handle") is not None]


def _base(model):
    """The module whose names are the user's: DistributedDataParallel's ``module``, else ``model``."""
    from ...nn.parallel import DistributedDataParallel

    return model.module if isinstance(model, DistributedDataParallel) else model


def _module_names(model) -> dict:
    return {id(m): clean_key(name + ".") for name, m in _base(model).named_modules(remove_duplicate=False)}


def handle_fqns(model, h) -> list[str]:
    """The FQNs of unit ``h``'s parameters."""
    names = _module_names(model)
    return [(names[id(m)] + n).lstrip(".") for m, n, _ in h.entries]


def param_owners(model) -> dict:
    """id(a parameter the optimizer steps) -> (handle, index of the original parameter or None for a flat
    one, its FQNs)."""
    owners = {}
    for h in handles_of(model):
        fqns = handle_fqns(model, h)
        if h.flat_param is not None:
            owners[id(h.flat_param)] = (h, None, fqns)
        else:
            for i, p in enumerate(h.params):
                owners[id(p)] = (h, i, [fqns[i]])
    for name, p in _base(model).named_parameters():
        owners.setdefault(id(p), (None, None, [clean_key(name)]))
    return owners


@contextmanager
def summoned(model, writeback: bool):
    """Every unit's full parameters, gathered, as Parameters of their modules (flat parameters hidden);
    with ``writeback`` their values go back into the shards at the end."""
    from ...nn.parameter import Parameter

    handles = handles_of(model)
    fulls = []
    for h in handles:
        full = h.gather_storage()
        fulls.append(full)
        params = [Parameter(Tensor._make(h.layout.full_view(full, i)), p.requires_grad)
                  for i, p in enumerate(h.params)]
        for module, name, i in h.aliases:
            module.__dict__.pop(name, None)
            module._parameters[name] = params[i]
        if h.flat_holder is not None:
            h.flat_holder._parameters.pop("_flat_param", None)
    summoning[0] += 1
    try:
        yield
    finally:
        summoning[0] -= 1
        for h, full in zip(handles, fulls):
            if writeback:
                h.write_back(full)
            h.restore_params()
            if h.flat_holder is not None:
                h.flat_holder._parameters["_flat_param"] = h.flat_param


def full_state_dict(model) -> OrderedDict:
    """Parameters (gathered) and persistent buffers by FQN, as an unsharded model's ``state_dict()``."""
    from ...nn.modules.module import Module

    with summoned(model, writeback=False):
        raw = Module.state_dict(_base(model))
    return OrderedDict((clean_key(k), v) for k, v in raw.items())


def load_full_state_dict(model, state_dict, strict: bool = True):
    """Load a full state dict (FQN keys) into every rank's shards; returns (missing, unexpected) keys."""
    from ...nn.modules.module import Module, _IncompatibleKeys

    with summoned(model, writeback=True):
        raw = list(Module.state_dict(_base(model), keep_vars=True))
        mapping = {clean_key(k): k for k in raw}
        result = Module.load_state_dict(_base(model), OrderedDict((mapping.get(k, k), v)
                                                                  for k, v in state_dict.items()), strict)
    return _IncompatibleKeys([clean_key(k) for k in result.missing_keys], list(result.unexpected_keys))


def local_state_dict(model) -> OrderedDict:
    """This rank's part of every parameter by FQN (views of the shard; plain parameters whole) and the
    persistent buffers, without communicating."""
    return OrderedDict(_local_items(model))


def load_local_state_dict(model, state_dict, strict: bool = True):
    """Copy ``local_state_dict``'s form (this rank's shards by FQN) back; returns (missing, unexpected) keys."""
    from ...autograd.grad_mode import no_grad
    from ...nn.modules.module import _IncompatibleKeys

    mine = dict(_local_items(model))
    missing = [k for k in mine if k not in state_dict]
    unexpected = [k for k in state_dict if k not in mine]
    if strict and (missing or unexpected):
        raise RuntimeError(f"Error(s) in loading state_dict for {type(model).__name__}: missing keys {missing}, "
                           f"unexpected keys {unexpected}")
    with no_grad():
        for key, target in mine.items():
            if key in state_dict:
                value = state_dict[key]
                if tuple(value.shape) != tuple(target.shape):
                    raise RuntimeError(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)}, "
                                       f"this rank's shard has shape {tuple(target.shape)}")
                target._data[...] = value._data
    for h in handles_of(model):
        for p in h.sharded_params():
            p._bump_version()
    return _IncompatibleKeys(missing, unexpected)


def _local_items(model):
    """(FQN, this rank's tensor) for every parameter and persistent buffer, without communicating."""
    flat = {}  # (module id, name) -> this rank's part, for parameters held by a flat unit
    for h in handles_of(model):
        if not h.orig_params:
            for m, n, i in h.aliases:
                flat[(id(m), n)] = Tensor._make(h.layout.local_view(h.shard, i))
    for prefix, m in _base(model).named_modules(remove_duplicate=False):
        pre = clean_key(prefix + ".").lstrip(".")
        for n, p in m._parameters.items():
            if p is not None and n != "_flat_param":
                yield pre + n, p.detach()
        for (mid, n), piece in flat.items():
            if mid == id(m):
                yield pre + n, piece
        for n, b in m._buffers.items():
            if b is not None and n not in m._non_persistent_buffers_set:
                yield pre + n, b.detach()


def _by_param(optim) -> list:
    """(parameter, its index in ``optim.state_dict()``, group number) in the optimizer's order."""
    sd_groups = optim.state_dict()["param_groups"]
    return [(p, idx, g) for g, (group, sd_group) in enumerate(zip(optim.param_groups, sd_groups))
            for p, idx in zip(group["params"], sd_group["params"])]


def _is_sharded(value, like) -> bool:
    return isinstance(value, Tensor) and tuple(value.shape) == tuple(like.shape) and value.dim() > 0


def full_optim_state_dict(model, optim, gather: bool = True) -> dict:
    """The optimizer's state by FQN, every sharded tensor gathered to its parameter's full shape (a collective
    over each unit's group); ``gather=False``: each FQN's part of this rank's shard instead (no communication).

    Group options are kept; each group's ``params`` lists FQNs.
    """
    sd = optim.state_dict()
    owners = param_owners(model)
    state, fqns_of = {}, {}
    per_handle: dict = {}
    for p, idx, _ in _by_param(optim):
        h, i, fqns = owners[id(p)]
        fqns_of[idx] = fqns
        if h is None:
            if idx in sd["state"]:
                state[fqns[0]] = dict(sd["state"][idx])
        else:
            per_handle.setdefault(id(h), {})[i] = sd["state"].get(idx)
    for h in handles_of(model):  # every rank, in the same order
        if id(h) in per_handle:
            state.update(_handle_state(h, handle_fqns(model, h), per_handle[id(h)], gather))
    groups = []
    for group in sd["param_groups"]:
        groups.append({**{k: v for k, v in group.items() if k != "params"},
                       "params": [f for idx in group["params"] for f in fqns_of[idx]]})
    return {"state": state, "param_groups": groups}


def _handle_state(h, names: list, states: dict, gather: bool) -> dict:
    """{FQN: state} of one unit's parameters (FQNs ``names``) from this rank's shard state (``states``: index
    of the original parameter, or None for the flat one -> its state): tensors gathered to full shapes, or
    (``gather=False``) each parameter's part of this rank's shard."""
    sample = next((s for s in states.values() if s), None)
    if sample is None:
        return {}
    out = {f: {} for f in names}
    flat = h.flat_param is not None
    for key, value in sample.items():
        if not (isinstance(value, Tensor) and value.dim() > 0 and (not flat or value.shape == h.flat_param.shape)):
            for f in names:
                out[f][key] = value.clone() if isinstance(value, Tensor) else value
            continue
        if flat:
            shard = value._data
        else:
            shard = xp.zeros(h.layout.k, dtype=value._data.dtype)
            for i in range(len(names)):
                if states.get(i) and key in states[i]:
                    piece = h.layout.local_view(shard, i)
                    piece[...] = states[i][key]._data.reshape(piece.shape)
        full = h.gather_storage(shard) if gather else None
        for i, f in enumerate(names):
            part = h.layout.full_view(full, i) if gather else h.layout.local_view(shard, i)
            out[f][key] = Tensor._make(part.copy())
    return out


def optim_state_dict_to_load(model, optim, osd: dict, local: bool = False) -> dict:
    """``full_optim_state_dict``'s form (FQN keys; full tensors, or with ``local`` this rank's parts) turned
    into what ``optim.load_state_dict`` takes on this rank. Needs the dict on every rank; no communication."""
    owners = param_owners(model)
    state, groups, shards = {}, [], {}
    by_param = _by_param(optim)
    for p, idx, _ in by_param:
        h, i, fqns = owners[id(p)]
        if h is None:
            if fqns[0] in osd["state"]:
                state[idx] = dict(osd["state"][fqns[0]])
            continue
        names = handle_fqns(model, h)
        saved = [osd["state"].get(f) or {} for f in names]
        keys = {k for s in saved for k in s}
        if not keys:
            continue
        local_state = {}
        for key in keys:
            j, value = next((j, s[key]) for j, s in enumerate(saved) if key in s)
            like = h.layout.local_view(h.shard, j).shape if local else tuple(h.layout.shapes[j])
            if not (isinstance(value, Tensor) and value.dim() > 0 and tuple(value.shape) == like):
                local_state[key] = value.clone() if isinstance(value, Tensor) else value
                continue
            if (id(h), key) not in shards:
                shards[(id(h), key)] = _shard_of(h, [s.get(key) for s in saved], value._data.dtype, local)
            shard = shards[(id(h), key)]
            local_state[key] = Tensor._make((shard if i is None else h.layout.local_view(shard, i)).copy())
        state[idx] = local_state
    for g in range(len(optim.param_groups)):
        source = osd["param_groups"][g] if g < len(osd["param_groups"]) else {}
        groups.append({**{k: v for k, v in source.items() if k != "params"},
                       "params": [idx for _, idx, gg in by_param if gg == g]})
    return {"state": state, "param_groups": groups}


def _shard_of(h, values: list, dtype, local: bool):
    """This rank's shard of a unit built from one state tensor per parameter (full, or this rank's parts)."""
    if local:
        shard = xp.zeros(h.layout.k, dtype=dtype)
        for i, v in enumerate(values):
            if v is not None:
                piece = h.layout.local_view(shard, i)
                piece[...] = v._data.reshape(piece.shape)
        return shard
    arrays = [v._data if v is not None else xp.zeros(shape, dtype=dtype) for v, shape in zip(values, h.layout.shapes)]
    return h.layout.to_shards(arrays, dtype)[h.layout.rank].copy()
