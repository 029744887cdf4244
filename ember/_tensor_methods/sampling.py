"""Tensor methods for the sampling ops (``ember/ops/sampling.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class SamplingMethods:
    __slots__ = ()

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
        return ops.sampling.multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p: float | None = None, *, generator=None) -> Tensor:
        return ops.sampling.bernoulli(self, p, generator=generator)
