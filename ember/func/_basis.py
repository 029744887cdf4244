"""Jacobians by forward mode over the whole standard basis at once, as PyTorch's ``vmap`` of ``jvp``.

``jacfwd`` (so ``hessian``) and the forward-mode strategy of ``torch.autograd.functional.jacobian`` need one
Jacobian-vector product per input element. ``forward_columns`` gets them all from one run of the function: each
input becomes a dual tensor (``autograd/forward_ad.py``) whose primal is the input expanded, without a copy, to
one copy per basis vector and whose tangent is the basis (``n`` one-hot vectors for ``n`` input elements), and the
function runs once under ``vmap`` over that batch (``_vmap.py``). Every op then runs once on the whole batch
(through its batching rule) and computes its tangent once for all ``n`` basis vectors, so the outputs' tangents
are the ``n`` columns of the Jacobian; no backward pass runs (unless an op's own forward-mode rule needs one,
``forward_ad.py``).

It applies where forward mode can: no forward-mode level is entered already (``jacfwd(jacfwd(f))``'s inner one)
and the inputs are real floating point. Its tangents are constants: where the outputs depend on tensors the
function captures that require grad (grad enabled), the columns come instead from the same run's recorded graph
by the double-backward trick (``autograd/_jvp.py``), all in one backward pass, so the function still runs once.
Where the inputs themselves require grad the callers use that trick one column at a time; so they do where an op
inside the function has no batching rule or no forward-mode rule for its batched form, and where it starts a
reverse-mode transform that cannot run batched, rather than vmap's run of the whole function once per example.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd._jvp import forward_mode_applies, forward_products
from ..autograd._rows import basis
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.recorded import HigherOrderError
from ..utils._pytree import tree_flatten, tree_unflatten
from ._batched import NoBatchingRule, PerExampleValue
from ._batched_grad import _rewrap, _unwrap_all
from ._scope import Scope
from ._vmap import internal_vmap as vmap


class Columns:
    """What ``forward_columns`` returns: ``tangents[i]`` has shape ``(n, *output_i.shape)``, row ``k`` the
    Jacobian-vector product of output ``i`` with basis vector ``k``; ``aux`` is the first example's."""

    def __init__(self, tangents: list[Tensor], out_spec: Any, aux: Any) -> None:
        self.tangents, self.out_spec, self.aux = tangents, out_spec, aux


def applies(inputs: Sequence[Tensor]) -> bool:
    """Whether ``forward_columns`` can run for ``inputs``: forward mode applies, and the Jacobian need not be
    differentiable with respect to them (grad disabled, or none requires grad)."""
    return forward_mode_applies(inputs) and not (is_grad_enabled() and any(t.requires_grad for t in inputs))


def _dual(primal: Tensor, basis: Tensor) -> Tensor:
    """``primal`` expanded to one copy per basis vector along a new first (logical) dim, with ``basis`` (``(n,
    *primal.shape)``) as its tangent; under an enclosing ``vmap`` the dual is made on the batch value, whose
    leading dims are that vmap's."""
    core, levels = _unwrap_all(primal)
    shape = (*core.shape[:len(levels)], *basis.shape)
    expanded = core.detach().unsqueeze(len(levels)).expand(*shape)
    return _rewrap(forward_ad.make_dual(expanded, basis.expand(*shape)), levels)


def _leaf(primal: Tensor, basis: Tensor, scope: Scope) -> Tensor:
    """``primal`` expanded, without a copy, to one copy per basis vector: a leaf of ``scope`` that requires grad."""
    leaf = primal.detach().unsqueeze(0).expand(*basis.shape).requires_grad_()
    scope.own([leaf])
    return leaf


def _tangent(output: Tensor) -> Tensor:
    """The tangent of a batched output (zeros where it depends on no input)."""
    core, levels = _unwrap_all(output)
    tangent = forward_ad.unpack_dual(core).tangent
    if tangent is None:
        return output.new_zeros(output.shape)
    return _rewrap(tangent, levels)


def forward_columns(call: Callable[[list], tuple[list, Any, Any]], inputs: Sequence[Tensor], randomness: str,
                    differentiable: bool = True) -> Columns | None:
    """The Jacobian's columns of ``call`` at ``inputs`` from one batched forward-mode run (see the module
    docstring). ``call(flat_inputs)`` returns ``(flat tensor outputs, their structure, aux)``; ``randomness`` is
    vmap's (PyTorch's ``jacfwd`` passes its own). With ``differentiable``: None where the outputs depend on tensors
    that require grad, with grad enabled (the caller then computes a Jacobian differentiable with respect to them).
    """
    found: dict[str, Any] = {}

    def body(*duals):
        try:
            flat_out, out_spec, aux = call(list(duals))
        except (NoBatchingRule, HigherOrderError, PerExampleValue) as missing:  # no batching rule, no forward-mode
            # rule for a batched op, or the function reads an input's value (``float(x.sum())``, ``if x.sum() > 0``,
            # which PyTorch's jacfwd allows: it batches the tangents only): the caller's path, one column at a time
            raise Unbatched from missing
        aux_leaves, aux_spec = tree_flatten(aux)
        found["out_spec"], found["aux_spec"], found["aux"] = out_spec, aux_spec, aux_leaves
        return flat_out, [a for a in aux_leaves if isinstance(a, Tensor)]

    # Where the columns may have to be differentiable (grad enabled), the expanded inputs are leaves of a Scope
    # that require grad, so that the one run's recorded graph serves the double-backward trick when the outputs
    # turn out to depend on tensors ``call`` captures (the function runs once, as PyTorch's: a second run would
    # draw random numbers again and repeat side effects). Under an enclosing vmap the caller's path is taken.
    bases = basis(inputs)
    grad_on = differentiable and is_grad_enabled()
    record = grad_on and not any(_unwrap_all(t)[1] for t in inputs)
    with Scope() if record else contextlib.nullcontext() as scope, forward_ad.dual_level():
        leaves = [_leaf(t, part, scope) for t, part in zip(inputs, bases)] if record else []
        duals = ([forward_ad.make_dual(leaf, part) for leaf, part in zip(leaves, bases)] if record else
                 [_dual(t, part) for t, part in zip(inputs, bases)])
        try:
            flat_out, aux_tensors = vmap(body, randomness=randomness)(*duals)
        except Unbatched:
            return None
        if record and scope.reaches_outer(flat_out):  # the double-backward trick on the graph just recorded
            products = forward_products(flat_out, leaves)
            scope.own(products.dummies)
            pushed = products.push(bases, create_graph=True)
            tangents = [o.new_zeros(o.shape) if t is None else t for o, t in zip(flat_out, pushed)]
        elif grad_on and not record and any(_unwrap_all(o)[0].requires_grad for o in flat_out):
            return None
        else:
            tangents = [_tangent(o) for o in flat_out]
        if record:  # aux computed from the scope's leaves: detached unless it reaches a captured tensor
            aux_tensors = [scope.unwrap(a) for a in aux_tensors]
    firsts = iter([a[0] for a in aux_tensors])  # every example's aux is the same: PyTorch returns the first
    aux_leaves = [next(firsts) if isinstance(a, Tensor) else a for a in found["aux"]]
    return Columns(tangents, found["out_spec"], tree_unflatten(aux_leaves, found["aux_spec"]))


class Unbatched(BaseException):  # noqa: N818  (BaseException: no ``except Exception`` in the function swallows it)
    """The function cannot run batched over the basis (see ``forward_columns``)."""


