"""Jacobian-vector products by the double-backward trick, the one place forward-mode products are made.

``torch.autograd.functional.jvp`` (PyTorch's too), ``torch.func.jvp``, ``jacfwd`` and the forward-mode strategy of
``torch.autograd.functional.jacobian`` get ``J v`` here. The vector-Jacobian product ``g(u) = u^T J`` is linear in
``u``, so differentiating ``g(u) . v`` with respect to ``u`` gives ``J v``: one backward with ``create_graph=True``
from dummy cotangents ``u`` (zeros: the value of ``u`` never enters the result, it only has to be finite), then one
backward of that graph per tangent ``v``. PyTorch's ``torch.func`` computes these products with forward-mode
dual numbers instead; the results are equal, the cost is a backward pass more. When ember has forward-mode AD, this
module is what changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from .._tensor import Tensor


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
