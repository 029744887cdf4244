"""``torch.func``'s autodiff transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``,
``hessian``, ``linearize``.

Inputs and outputs may be pytrees (tuples, lists, dicts of tensors) as in PyTorch; results have the structure
PyTorch's have, and compose (``jacrev(jacrev(f))``, ``grad(grad(f))``, a loss of ``grad(f)(x)`` backpropagated):
see ``_scope.py`` for how a transform keeps to its own inputs. Differences from PyTorch, on purpose:

- ``jacrev`` computes the Jacobian one row (one backward pass) per output element; PyTorch batches the rows
  with vmap. ``chunk_size`` is accepted and checked.
- ``jvp`` runs ``f`` once on forward-mode dual tensors, as PyTorch's. ``jacfwd`` (so ``hessian``) runs ``f``
  once under vmap over the whole tangent basis, as PyTorch's, its primal batched too (``_basis.py``); where
  that cannot apply (see ``jacfwd``), and for ``linearize`` (and ``jvp`` where its results must be
  differentiable again, inside a reverse-mode transform), Jacobian-vector products come from the
  double-backward trick (``ember/autograd/_jvp.py``): same results, needs ``f`` twice differentiable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import SCALAR_OF_GRAD_TENSOR, Tensor
from .._warnings import muted
from ..autograd._jvp import dual_inputs, forward_mode_applies, forward_products, tangent_of
from ..autograd._rows import basis, basis_row, stack_rows
from ..autograd.forward_ad import check_dual
from ..autograd.grad_mode import is_grad_enabled
from ..utils._pytree import tree_flatten, tree_unflatten, treespec_pprint
from ._basis import applies, forward_columns
from ._scope import (
    ArgNums,
    Scope,
    error_if_complex,
    replace_argnums,
    slice_argnums,
    split_aux,
    tensor_outputs,
    transform_running,
)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]


def grad_and_value(func: Callable, argnums: ArgNums = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of ``func``, which must return a scalar tensor (or
    ``(scalar, aux)`` with ``has_aux``, then ``(gradient, (value, aux))``). The gradient is with respect to the
    argument ``argnums`` names (a pytree of tensors: the gradient has its structure), or a tuple of gradients for a
    tuple of argnums; zeros where the value does not depend on an input."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        api = "grad_and_value(f)(*args)"
        with Scope() as scope:
            diff = slice_argnums(args, argnums)
            flat, spec = tree_flatten(diff)
            flat = [scope.differentiable(t) for t in flat]
            output = func(*replace_argnums(args, argnums, tree_unflatten(flat, spec)), **kwargs)
            aux = None
            if has_aux:
                output, aux = split_aux(output, api)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = scope.unwrap(tree_unflatten(list(scope.grad([output], flat)), spec))
            value = scope.unwrap(output)
            if has_aux:
                return grads, (value, scope.unwrap(aux))
            return grads, value

    return wrapper


def grad(func: Callable, argnums: ArgNums = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of ``func`` (``(gradient, aux)`` with ``has_aux``); see
    ``grad_and_value``."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def _call(scope: Scope, func: Callable, args: tuple, argnums: ArgNums | None, flat_diff: list, diff_spec,
          has_aux: bool, api: str, flatten: Callable = tensor_outputs) -> tuple[list, Any, Any]:
    """``func`` run on ``args`` with the scope's differentiable tensors in place of the arguments ``argnums`` names
    (all for None): ``(flat outputs, their structure, aux)``, the output flattened by ``flatten`` (by default with
    PyTorch's checks that it is a non-empty tree of tensors)."""
    diff = tree_unflatten(flat_diff, diff_spec)
    output = func(*(diff if argnums is None else replace_argnums(args, argnums, diff)))
    aux = None
    if has_aux:
        output, aux = split_aux(output, api)
        aux = scope.unwrap(aux)
    flat_out, out_spec = flatten(output, api)
    return flat_out, out_spec, aux


def _vjp(func: Callable, primals: tuple, argnums: ArgNums | None, has_aux: bool, batched: bool = False):
    """``vjp`` differentiating only the arguments ``argnums`` names (all for None); ``jacrev`` is built on it. With
    ``batched``, ``vjp_fn`` takes a batch of cotangents along their first dim and runs one backward pass over
    them all (``autograd.grad``'s ``is_grads_batched``)."""
    api = "vjp(f, *primals)"
    with Scope() as scope:
        flat_diff, diff_spec = tree_flatten(primals if argnums is None else slice_argnums(primals, argnums))
        flat_diff = [scope.differentiable(t) for t in flat_diff]
        flat_out, out_spec, aux = _call(scope, func, primals, argnums, flat_diff, diff_spec, has_aux, api)
        for out in flat_out:
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {out.dtype}")
        results = scope.unwrap(tree_unflatten(flat_out, out_spec))
        outputs_outer = scope.reaches_outer(flat_out)  # walked once, not once per call of vjp_fn

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {treespec_pprint(cot_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        record = is_grad_enabled() if create_graph is None else create_graph
        record = record and (outputs_outer or scope.reaches_outer(flat_cot))
        return scope.unwrap(tree_unflatten(list(scope.grad(flat_out, flat_diff, flat_cot, retain_graph=retain_graph,
                                                           create_graph=record, is_grads_batched=batched)),
                                           diff_spec))

    return (results, vjp_fn, aux) if has_aux else (results, vjp_fn)


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``): ``vjp_fn(cotangents)`` returns the
    vector-Jacobian products, a tuple with one entry per primal, as PyTorch's. ``cotangents`` has the structure of
    the output. ``vjp_fn`` may be called many times (``retain_graph=True`` by default)."""
    return _vjp(func, primals, None, has_aux)


def _jvp(func: Callable, primals: Any, tangents: Any, argnums: ArgNums | None, strict: bool, has_aux: bool,
         push_basis: bool = False, flatten: Callable = tensor_outputs):
    """``jvp`` for the arguments ``argnums`` names; with ``push_basis``, returns ``(flat outputs, spec, push, aux,
    scope)`` so that ``jacfwd`` pushes many tangents through one recorded graph. ``flatten``: as ``_call``'s."""
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    diff = primals if argnums is None else slice_argnums(primals, argnums)
    flat_primals, primals_spec = tree_flatten(diff)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{primals_spec} and tangents with structure {tangents_spec}")
    for name, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        if not flat:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for t in flat:
            if not isinstance(t, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got {type(t)}")
    for p, t in zip(flat_primals, flat_tangents):
        check_dual(p, t)
    with Scope() as scope:
        flat_diff = [scope.differentiable(t) for t in flat_primals]
        forward_mode = (not push_basis and forward_mode_applies(flat_diff + flat_tangents)
                        and not scope.reaches_outer(flat_tangents))
        if forward_mode:  # the function runs on dual inputs: each op computes its tangent (_jvp.py)
            with dual_inputs(flat_diff, flat_tangents) as duals:
                flat_out, out_spec, aux = _call(scope, func, primals, argnums, duals, primals_spec, has_aux, api,
                                                flatten)
                out_tangents = [tangent_of(o) for o in flat_out]
        else:  # inputs made to require grad, where PyTorch's forward mode gives dual tensors: float() of them is silent
            with muted(SCALAR_OF_GRAD_TENSOR):
                flat_out, out_spec, aux = _call(scope, func, primals, argnums, flat_diff, primals_spec, has_aux, api,
                                                flatten)
        outputs_outer = scope.reaches_outer(flat_out)
        if not forward_mode or outputs_outer:  # tangents that must be differentiable: the double-backward trick
            products = forward_products(flat_out, flat_diff)
            scope.own(products.dummies)

        def push(flat_tangents) -> list:
            record = outputs_outer or scope.reaches_outer(flat_tangents)
            pushed = out_tangents if forward_mode and not record else products.push(flat_tangents, create_graph=record)
            out = []
            for o, t in zip(flat_out, pushed):
                if t is None:
                    if strict:
                        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent "
                                           "of the inputs. This is not allowed with strict=True.")
                    t = o.new_zeros(o.shape)
                out.append(scope.unwrap(t))
            return out

        if push_basis:
            return flat_out, out_spec, push, aux, scope
        primals_out = scope.unwrap(tree_unflatten(flat_out, out_spec))
        tangents_out = tree_unflatten(push(flat_tangents), out_spec)
    return (primals_out, tangents_out, aux) if has_aux else (primals_out, tangents_out)


def jvp(func: Callable, primals: tuple, tangents: Any, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J tangents)`` (and ``aux`` with ``has_aux``): the Jacobian-vector product, with the
    structure of the output. ``tangents`` has the structure of ``primals`` (a tuple). ``strict=True`` raises
    where an output does not depend on the primals (PyTorch's error); otherwise its tangent is zeros."""
    return _jvp(func, primals, tangents, None, strict, has_aux)


def jacrev(func: Callable, argnums: ArgNums = 0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """A function returning the Jacobian of ``func`` with respect to the argument(s) ``argnums`` names, by
    reverse mode: for an output ``o`` and input ``i`` the block has shape ``o.shape + i.shape``; the result nests
    the output's structure around the inputs' (``result[out][in]``), as PyTorch's.

    As PyTorch's, the backward pass runs once over the whole standard basis of the outputs (``chunk_size``: at most
    that many basis vectors per pass), each op of the backward formulas running once on the batch through its
    batching rule (``_batched_vjp.py``); where a formula cannot run batched, one backward pass per output element.
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        error_if_complex("jacrev", args, is_input=True)
        output, vjp_fn, *aux = _vjp(func, args, argnums, has_aux, batched=True)
        flat_out, out_spec = tree_flatten(output)
        error_if_complex("jacrev", flat_out, is_input=False)
        flat_primals, primals_spec = tree_flatten(slice_argnums(args, argnums))
        cotangents = basis(flat_out)
        total = cotangents[0].shape[0]
        step = total if chunk_size is None else max(1, min(chunk_size, total))
        chunks = [tree_flatten(vjp_fn(tree_unflatten([c[start:start + step] for c in cotangents], out_spec)))[0]
                  for start in range(0, total, step)] if total else []
        per_input = [_joined([c[j] for c in chunks], p, total) for j, p in enumerate(flat_primals)]
        numels = [o.nelement() for o in flat_out]
        blocks = [[part.view(o.shape + p.shape) for part, o in zip(stacked.split(numels, dim=0), flat_out)]
                  for stacked, p in zip(per_input, flat_primals)]
        result = _nest(blocks, flat_out, primals_spec, out_spec)
        return (result, aux[0]) if has_aux else result

    return wrapper


def _joined(chunks: list, ref: Tensor, total: int) -> Tensor:
    """The rows of one input's Jacobian from ``chunks`` (each ``(rows, *ref.shape)``): one chunk as it is, several
    concatenated; ``(0, *ref.shape)`` for an output without elements."""
    from .. import cat, zeros

    if not chunks:
        return zeros(total, *ref.shape, dtype=ref.dtype)
    return chunks[0] if len(chunks) == 1 else cat(chunks)


def _nest(blocks: list, flat_out: list, primals_spec, out_spec) -> Any:
    """``blocks[input][output]`` rearranged as PyTorch's: the output's structure around the inputs' (one
    argument's own structure for an int ``argnums``, a tuple of the arguments' for a tuple)."""
    per_output = [tree_unflatten([blocks[j][i] for j in range(len(blocks))], primals_spec)
                  for i in range(len(flat_out))]
    return tree_unflatten(per_output, out_spec)


def jacfwd(func: Callable, argnums: ArgNums | None = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """A function returning the Jacobian of ``func`` with respect to the argument(s) ``argnums`` names (None:
    every positional argument, a tuple of Jacobians, as PyTorch's), built from Jacobian-vector products (one per
    input element); shapes and structure as ``jacrev``'s; ``aux`` (with ``has_aux``) is the first basis vector's,
    as PyTorch's. A negative ``argnums`` counts from the last argument, as ``grad``'s and ``jacrev``'s (PyTorch's
    ``jacfwd`` gives zeros there).

    ``func`` runs once, under ``vmap`` over the basis with ``randomness`` (``'error'``: a random op raises, as
    PyTorch's), on dual tensors: every column in one forward-mode pass, no backward pass (``_basis.py``); where
    the Jacobian must stay differentiable with respect to tensors ``func`` captures, from that run's recorded
    graph by the double-backward trick. The columns come one at a time instead, each a backward pass of the
    double-backward trick, where the inputs require grad (grad enabled), inside
    another ``jacfwd`` (one forward-mode level at a time), and where an op inside has no batching rule or no
    forward-mode rule of its batched form; ``func`` has then already run once, and runs again, drawing random
    numbers once whatever ``randomness`` (PyTorch's ``'same'``)."""

    @functools.wraps(func)
    def wrapper(*args):
        if randomness not in ("error", "different", "same"):  # (PyTorch checks it when called, not when built)
            raise RuntimeError("Only allowed values for randomness are 'error', 'different', or 'same'. "
                               f"Got {randomness}")
        error_if_complex("jacfwd", args, is_input=True)
        primals = args if argnums is None else slice_argnums(args, argnums)
        flat_primals, primals_spec = tree_flatten(primals)
        api = "jvp(f, primals, tangents)"

        def call(flat: list) -> tuple[list, Any, Any]:
            diff = tree_unflatten(flat, primals_spec)
            output = func(*(diff if argnums is None else replace_argnums(args, argnums, diff)))
            aux = None
            if has_aux:
                output, aux = split_aux(output, api)
            flat_out, out_spec = tensor_outputs(output, api)
            error_if_complex("jacfwd", flat_out, is_input=False)
            return flat_out, out_spec, aux

        with transform_running():
            batched = forward_columns(call, flat_primals, randomness) if applies(flat_primals) else None
            if batched is not None:
                columns, out_spec, aux = batched.tangents, batched.out_spec, batched.aux
            else:
                columns, out_spec, aux = _columns_one_by_one(func, args, argnums, primals, flat_primals, has_aux)
        numels = [p.nelement() for p in flat_primals]
        blocks = [[part.movedim(0, -1).reshape(col.shape[1:] + p.shape) for col, part in
                   zip(columns, [col.split(numels, dim=0)[j] for col in columns])]
                  for j, p in enumerate(flat_primals)]
        result = _nest(blocks, columns, primals_spec, out_spec)
        return (result, aux) if has_aux else result

    return wrapper


def _columns_one_by_one(func: Callable, args: tuple, argnums: ArgNums | None, primals: Any, flat_primals: list,
                        has_aux: bool):
    """``jacfwd``'s columns where the batched forward mode does not apply (``_basis.py``): one Jacobian-vector
    product per input element through one recorded graph, by the double-backward trick, so that the Jacobian is
    differentiable again. ``primals``: the arguments ``argnums`` names (all for None), ``flat_primals`` their
    leaves. ``(columns, output structure, aux)``, column tensors shaped ``(n, *output.shape)``."""
    # primals stand in for tangents: only their structure is checked when the basis is pushed later
    flat_out, out_spec, push, aux, scope = _jvp(func, args, primals, argnums, False, has_aux, push_basis=True)
    error_if_complex("jacfwd", flat_out, is_input=False)
    total = sum(p.nelement() for p in flat_primals)
    with scope:
        columns = [push(basis_row(flat_primals, k)) for k in range(total)]
        return [stack_rows([c[i] for c in columns], o) for i, o in enumerate(flat_out)], out_spec, aux


def hessian(func: Callable, argnums: ArgNums = 0) -> Callable:
    """The Hessian of ``func`` with respect to the argument(s) ``argnums`` names: ``jacfwd(jacrev(func))``, as
    PyTorch's."""
    return jacfwd(jacrev(func, argnums), argnums)


def _split_constants(output: Any, api: str) -> tuple[list, tuple[list, Any]]:
    """``linearize``'s flattening of ``func``'s output: its tensors, and ``(all leaves, structure)``. PyTorch's
    ``linearize`` traces ``func``, so a leaf that is not a tensor (a number, a string) is a constant of the trace,
    returned as it is by both the output and ``jvp_fn`` (no refusal, unlike ``jvp``)."""
    leaves, spec = tree_flatten(output)
    return [t for t in leaves if isinstance(t, Tensor)], (leaves, spec)


def _with_constants(tensors: list, structure: tuple[list, Any]) -> Any:
    """The output ``_split_constants`` flattened, with ``tensors`` in place of its tensors."""
    leaves, spec = structure
    it = iter(tensors)
    return tree_unflatten([next(it) if isinstance(leaf, Tensor) else leaf for leaf in leaves], spec)


def linearize(func: Callable, *primals) -> tuple[Any, Callable]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` returns the Jacobian-vector product at ``primals``
    without running ``func`` again (the recorded graph is reused). Leaves of the output that are not tensors are
    returned as they are by both, as PyTorch's (which traces ``func``, making them constants)."""
    flat_primals, primals_spec = tree_flatten(primals)
    flat_out, out_spec, push, _, scope = _jvp(func, primals, primals, None, False, False, push_basis=True,
                                              flatten=_split_constants)
    output = scope.unwrap(_with_constants(flat_out, out_spec))

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec} to have the same argspec as the primals "
                               f"{primals_spec}")
        for idx, (p, t) in enumerate(zip(flat_primals, flat_tangents)):
            for what in ("shape", "device", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(f"tangent:{idx} with {what} {getattr(t, what)} in flattened pytree doesn't "
                                       f"match the {what} {getattr(p, what)} of the corresponding primal.")
        with scope:
            return _with_constants(push(flat_tangents), out_spec)

    return output, jvp_fn
