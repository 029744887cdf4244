"""Jacobian-vector products: forward-mode AD where it applies, else the double-backward trick.

``torch.func.jvp`` and ``torch.autograd.functional.jvp`` run the function once on dual inputs (``dual_inputs``,
``forward_ad.py``): each op computes its output's tangent as it runs, no backward pass. ``autograd.functional.jvp``'s
level follows the recorded graph (``graph_duals``): PyTorch's is the double-backward trick, which differentiates
only what is recorded (nothing under no_grad), where ``torch.func.jvp`` is forward mode proper. That applies when no
forward-mode level is entered already (PyTorch's one level at a time; nested transforms) and the tangents are
real; the results are constants, so where they must be differentiable again (``create_graph``, or a ``jvp``
inside a reverse-mode transform) the trick below is used instead.

The double-backward trick (``forward_products``), for those cases, for ``linearize``, and for ``jacfwd``,
``hessian`` and the forward-mode strategy of ``torch.autograd.functional.jacobian`` where their one forward-mode
run over the whole basis (``ember/func/_basis.py``) cannot apply; they push many tangents through one recorded
graph:
the vector-Jacobian product ``g(u) = u^T J`` is linear in ``u``, so differentiating ``g(u) . v`` with respect to
``u`` gives ``J v``: one backward with ``create_graph=True`` from dummy cotangents ``u`` (zeros: the value of
``u`` never enters the result, it only has to be finite), then one backward of that graph per tangent ``v``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from .._tensor import Tensor
from . import forward_ad, graph


class ForwardProducts(NamedTuple):
    push: Callable[..., tuple]  # push(tangents, create_graph=False): J v per output (None: independent of inputs)
    dummies: tuple[Tensor, ...]  # the leaves the trick differentiates with respect to
    vjps: tuple  # the recorded u^T J, one per input (None where an input is unused)


def forward_products(outputs: Sequence[Tensor], inputs: Sequence[Tensor]) -> ForwardProducts:
    """``push(tangents, create_graph=False)`` returns ``J v`` for each of ``outputs`` (``None`` for an output that
    does not depend on ``inputs`` through the recorded graph), ``tangents`` one per input. ``push`` may be called
    any number of times: the graph is retained. Callers that track which leaves are their own count ``dummies``
    among them; ``vjps`` tells which inputs the outputs depend on (PyTorch's ``strict`` checks).
    """
    from .. import zeros_like
    from . import grad

    diff = [i for i, out in enumerate(outputs) if out.requires_grad]
    dummies = tuple(zeros_like(outputs[i], requires_grad=True) for i in diff)
    if diff:
        vjps = grad([outputs[i] for i in diff], list(inputs), list(dummies), create_graph=True, allow_unused=True)
    else:
        vjps = (None,) * len(inputs)
    # An input whose vector-Jacobian product is missing or constant in the dummies contributes nothing.
    used = [k for k, g in enumerate(vjps) if g is not None and g.requires_grad]

    def push(tangents: Sequence[Tensor], create_graph: bool = False) -> tuple:
        result: list = [None] * len(outputs)
        if not used or not diff:
            return tuple(result)
        products = grad([vjps[k] for k in used], list(dummies), [tangents[k] for k in used], retain_graph=True,
                        create_graph=create_graph, allow_unused=True)
        for i, p in zip(diff, products):
            result[i] = p
        return tuple(result)

    return ForwardProducts(push, dummies, tuple(vjps))


def forward_mode_applies(tensors: Sequence[Tensor]) -> bool:
    """Whether ``dual_inputs`` can make duals of ``tensors`` (primals and tangents): no level is entered already
    and all are real floating point."""
    return graph._dual_level is None and all(t.is_floating_point() for t in tensors)


@contextlib.contextmanager
def dual_inputs(inputs: Sequence[Tensor], tangents: Sequence[Tensor]) -> Iterator[list[Tensor]]:
    """Inside a forward-mode level: ``inputs`` as dual tensors with ``tangents``; read the outputs' tangents
    with ``tangent_of`` before the block ends (the level drops them)."""
    with forward_ad.dual_level():
        yield [forward_ad.make_dual(x, t) for x, t in zip(inputs, tangents)]


@contextlib.contextmanager
def graph_duals(inputs: Sequence[Tensor], tangents: Sequence[Tensor]) -> Iterator[None]:
    """Inside a forward-mode level whose tangents follow the recorded graph (``autograd.functional.jvp``: the
    products of PyTorch's double-backward trick, which differentiates only what is recorded, so nothing done under
    no_grad): ``inputs`` themselves carry ``tangents``. Read the outputs' tangents with ``tangent_of`` before the
    block ends."""
    forward_ad.enter_dual_level(follows_graph=True)
    try:
        for x, t in zip(inputs, tangents):
            forward_ad.give_tangent(x, t)
        yield
    finally:
        forward_ad.exit_dual_level()


def tangent_of(t: Tensor) -> Tensor | None:
    """The tangent of an output computed from ``dual_inputs`` (None: it does not depend on them)."""
    return forward_ad.unpack_dual(t).tangent
