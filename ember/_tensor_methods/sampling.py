"""Tensor methods for the sampling ops (``ember/ops/sampling.py``).

Each method calls the op, so ``x.f(...)`` and ``ember.f(x, ...)`` are one code path; ``ops`` is looked up
when a method runs (``ember/ops`` imports ``Tensor``, so it cannot be imported before this class).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ops

if TYPE_CHECKING:
    from .._tensor import Tensor


class SamplingMethods:
    __slots__ = ()

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
        return ops.sampling.multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p: float | None = None, *, generator=None) -> Tensor:
        return ops.sampling.bernoulli(self, p, generator=generator)
