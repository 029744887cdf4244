"""``torch.func.vmap``: a function of one example, run on a whole batch.

``vmap(func)(x)`` calls ``func`` once, with a BatchedTensor standing for one example of ``x`` (``_batched.py``);
each op inside runs once on the whole batch through its batching rule (``_rules*.py``). Levels: each vmap call
pushes one, so ``vmap(vmap(f))`` batches over two dims, each with its own batch size and ``randomness``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import _warnings
from .. import random as _random
from .._tensor import Tensor
from ..utils._pytree import TreeSpec, tree_flatten, tree_unflatten
from . import _patching, _rules, _rules_fft, _rules_nn, _rules_random, _rules_shape  # noqa: F401  (rules register)
from ._batched import BatchedTensor, NoBatchingRule, _Level, _State, wrap
from ._scope import transform_running

__all__ = ["vmap"]


def internal_vmap(func: Callable, in_dims: int | tuple = 0, out_dims: Any = 0, randomness: str = "error", *,
                  chunk_size: int | None = None) -> Callable:
    """``func`` mapped over a dim of its inputs, as PyTorch's ``torch.func.vmap`` (``vmap``, the public name), for
    ember's own vectorized paths that PyTorch runs without a ``torch.func`` transform (``autograd.functional``'s
    ``vectorize``, ``autograd.grad(is_grads_batched=True)``).

    ``in_dims``: the dim of each input to map over; an int (every tensor input), or a tuple with one entry per
    positional argument, each an int, None (not mapped: passed as it is) or a pytree of those matching the
    argument (tuples, lists, dicts). Keyword arguments are never mapped. ``out_dims``: where the mapped dim goes
    in each output (an int, None for an output that does not depend on the batch, or a pytree matching the
    outputs); every output must be a tensor unless its out_dim is None. ``randomness``: ``'error'`` (default: a
    random op inside raises), ``'different'`` (independent draws per example) or ``'same'`` (one draw shared by
    the examples). ``chunk_size``: map at most that many examples at a time (less memory, same result).

    Each op runs once on the whole batch for the ops with a batching rule: elementwise ops and activations,
    reductions, ops along a dim (softmax, cumsum, sort, ...), shape ops and indexing, matmul and einsum,
    linear and convolution (also with per-example weights), normalization, pooling, the common losses, dropout.
    Differences from PyTorch: an op without a rule runs once per example, its results stacked (with PyTorch's
    performance warning), and an ember function that reads a batched tensor's array directly (one imported into
    your module before vmap was first called, or an internal path without a rule) makes vmap run the whole
    ``func`` once per example, with the same warning. Views of batched tensors may be copies.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    out_dims_ok = _out_dims_valid(out_dims)  # (checked once; PyTorch raises when the function is called)

    @functools.wraps(func)
    def vmapped(*args, **kwargs):
        if not out_dims_ok:
            _check_out_dims(out_dims, func)
        size, flat_dims, flat_args, spec = _batched_inputs(in_dims, args, func)
        if chunk_size is None or chunk_size >= size:
            return _flat_vmap(func, size, flat_dims, flat_args, spec, out_dims, randomness, kwargs)
        return _chunked(func, size, flat_dims, flat_args, spec, out_dims, randomness, kwargs, chunk_size)

    return vmapped


def vmap(func: Callable, in_dims: int | tuple = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``torch.func.vmap``: ``internal_vmap``'s mapping, run as a ``torch.func`` transform (see
    ``internal_vmap`` for the arguments and how it computes)."""
    mapped = internal_vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)

    @functools.wraps(func)
    def vmapped(*args, **kwargs):
        with transform_running():  # (a torch.func transform: ctx-style autograd.Functions refused inside)
            return mapped(*args, **kwargs)

    return vmapped


def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _out_dims_valid(out_dims) -> bool:
    return all(d is None or isinstance(d, int) for d in tree_flatten(out_dims)[0])


def _check_out_dims(out_dims, func) -> None:
    if not _out_dims_valid(out_dims):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                         "python collection of ints representing where in the outputs the vmapped dimension "
                         "should appear.")


def _broadcast(tree, spec: TreeSpec) -> list | None:
    """``tree`` (in_dims/out_dims) flattened to one entry per leaf of ``spec``; an int or None stands for all the
    leaves below it. None if the structures do not match."""
    leaves, tree_spec = tree_flatten(tree)
    if tree_spec.is_leaf():
        return [tree] * spec.num_leaves
    if tree_spec.type != spec.type or tree_spec.context != spec.context or \
            tree_spec.num_children != spec.num_children:
        return None
    children = tree_spec.unflatten(leaves)
    parts = list(children.values()) if isinstance(children, dict) else list(children)
    out: list = []
    for part, child_spec in zip(parts, spec.children_specs):
        flat = _broadcast(part, child_spec)
        if flat is None:
            return None
        out.extend(flat)
    return out


def _batched_inputs(in_dims, args, func) -> tuple[int, list, list, TreeSpec]:
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, dim) in enumerate(zip(flat_args, flat_dims)):
        if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if dim is not None and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input but "
                             f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if dim is not None and not -arg.dim() <= dim < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some input, "
                             f"but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to "
                             f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if dim is not None and dim < 0:
            flat_dims[i] = dim % arg.dim()
    sizes = [arg.size(dim) for arg, dim in zip(flat_args, flat_dims) if dim is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _flat_vmap(func, size, flat_dims, flat_args, spec, out_dims, randomness, kwargs):
    _State.levels.append(_Level(size, randomness))
    level, saved_top = len(_State.levels), _State.top
    _State.top = level
    _patching.enter()
    func = _patching.stand_in_for(func)
    try:
        # (an input batched along dim 0 is wrapped as it is, no view: as PyTorch's, whose in-place ops then see
        # the input itself, and a function returning it returns the input)
        inputs = [a if d is None else wrap(a if d == 0 else a.movedim(d, 0), level)
                  for a, d in zip(flat_args, flat_dims)]
        for t, d in zip(inputs, flat_dims):
            if d:  # (where the caller had the batch dim: a custom Function's vmap staticmethod is told so)
                t._in_dim = d
        try:
            try:
                outputs = func(*tree_unflatten(inputs, spec), **kwargs)
            except NoBatchingRule as missing:
                if missing.level != level or not _patching.refresh():
                    raise
                outputs = func(*tree_unflatten(inputs, spec), **kwargs)  # a module first imported inside func
        except NoBatchingRule as missing:
            if missing.level != level:
                raise
            return _per_example(func, size, flat_dims, flat_args, spec, out_dims, kwargs, level, missing.where)
        return _unwrap(outputs, out_dims, level, size, func)
    finally:
        _patching.exit()
        _State.top = saved_top
        _State.levels.pop()


def _per_example(func, size, flat_dims, flat_args, spec, out_dims, kwargs, level, where):
    """PyTorch's slow fallback for a whole function: once per example, results stacked."""
    from .. import stack

    # the user's line that called the vmapped function, however many of ember's frames (a chunk loop, jacrev, a
    # nested vmap) stand between: a fixed stacklevel named one of those
    _warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for {where}. "
                   f"ember runs vmap's function {_name(func)} once per example of the batch.", UserWarning)
    _State.top = level - 1
    _State.levels[level - 1].per_example = True
    state = _random.get_rng_state() if _State.levels[level - 1].randomness == "same" else None
    results = []
    for i in range(size):
        if state is not None:  # 'same': every example draws what the first one drew
            _random.set_rng_state(state)
        example = [a if d is None else a.select(d, i) for a, d in zip(flat_args, flat_dims)]
        results.append(func(*tree_unflatten(example, spec), **kwargs))
    flat_results = [tree_flatten(r)[0] for r in results]
    out_spec = tree_flatten(results[0])[1]
    flat_out_dims = _out_dims_for(results[0], out_spec, out_dims, func)
    leaves = []
    for j, dim in enumerate(flat_out_dims):
        column = [r[j] for r in flat_results]
        if dim is None:
            leaves.append(column[0])
        elif not isinstance(column[0], Tensor):
            raise _not_tensor(func, column[0])
        else:
            leaves.append(stack(column).movedim(0, dim))
    return tree_unflatten(leaves, out_spec)


def _out_dims_for(outputs, out_spec, out_dims, func) -> list:
    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        flat = None
    else:
        flat = _broadcast(out_dims, out_spec)
    if flat is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                         f"with the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                         f"outputs has structure {out_spec}.")
    return flat


def _not_tensor(func, output) -> ValueError:
    return ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                      f"{type(output)}. Did you mean to set out_dims= to None for output?")


def _unwrap(outputs, out_dims, level: int, size: int, func):
    flat, out_spec = tree_flatten(outputs)
    flat_out_dims = _out_dims_for(outputs, out_spec, out_dims, func)
    result = []
    for out, dim in zip(flat, flat_out_dims):
        batched = type(out) is BatchedTensor and out._level == level
        if dim is None:
            if batched:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when "
                                 "out_dim is None")
            result.append(out)
        elif not isinstance(out, Tensor):
            raise _not_tensor(func, out)
        elif batched:
            result.append(out._value if dim == 0 else out._value.movedim(0, dim))
        else:
            out = out.unsqueeze(0).expand(size, *out.shape)
            result.append(out if dim == 0 else out.movedim(0, dim))
    return tree_unflatten(result, out_spec)


def _chunked(func, size, flat_dims, flat_args, spec, out_dims, randomness, kwargs, chunk_size):
    """``chunk_size`` examples at a time, the outputs concatenated along their out_dims (PyTorch's chunking:
    under randomness='same' every chunk starts from the same random state)."""
    from .. import cat

    starts = range(0, size, chunk_size)
    state = _random.get_rng_state() if randomness == "same" else None
    chunks = []
    for start in starts:
        if state is not None:
            _random.set_rng_state(state)
        length = min(chunk_size, size - start)
        part = [a if d is None else a.narrow(d, start, length) for a, d in zip(flat_args, flat_dims)]
        chunks.append(_flat_vmap(func, length, flat_dims, part, spec, out_dims, randomness, kwargs))
    flat_chunks = [tree_flatten(c)[0] for c in chunks]
    out_spec = tree_flatten(chunks[0])[1]
    flat_out_dims = _out_dims_for(chunks[0], out_spec, out_dims, func)
    leaves = [flat_chunks[0][j] if dim is None else cat([c[j] for c in flat_chunks], dim)
              for j, dim in enumerate(flat_out_dims)]
    return tree_unflatten(leaves, out_spec)
