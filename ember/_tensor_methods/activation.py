"""Tensor methods for the softmax ops (``ember/ops/activation.py``) and the activations PyTorch also has as
methods (``hardshrink``, ``prelu``: ``ember/nn/_ops/activation_more.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._dtype import number_parameters

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class ActivationMethods:
    __slots__ = ()

    @number_parameters(dim="int")
    def softmax(self, dim: int, dtype=None) -> Tensor:
        return ops.activation.softmax(self, dim, dtype)

    def log_softmax(self, dim: int, dtype=None) -> Tensor:
        return ops.activation.log_softmax(self, dim, dtype)

    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        from ..nn._ops.activation_more import hardshrink

        return hardshrink(self, lambd)

    def prelu(self, weight: Tensor) -> Tensor:
        from ..nn._ops.activation_more import prelu

        return prelu(self, weight)
