"""``LKJCholesky(dim, concentration)``: the LKJ distribution of Cholesky factors of correlation matrices."""

from __future__ import annotations

import math

from .._size import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution (Lewandowski, Kurowicka and Joe, 2009) over lower Cholesky factors L of dim x dim
    correlation matrices: density proportional to det(L L^T)^(concentration - 1) times the Jacobian of L -> L L^T
    (a prior on correlations; concentration 1 is uniform over correlation matrices). Draws by PyTorch's
    vectorised onion method from beta and normal draws (the beta ones from ember's gamma stream, so the numbers
    differ from PyTorch's; their distribution is the same); no ``rsample``."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        from .. import arange, cat

        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # the beta draws of the onion method's rows, vectorised over the rows (Sec. 3.2 of the paper)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        from .. import diag_embed, finfo, randn
        from ..autograd.grad_mode import no_grad

        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            u_hypersphere[..., 0, :] = 0.0  # (the first row is 0 / 0)
            w = y.sqrt() * u_hypersphere
            diag = (1 - (w ** 2).sum(dim=-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + diag_embed(diag)

    def log_prob(self, value):
        from .. import arange, mvlgamma

        if self._validate_args:
            self._validate_sample(value)
        # density of L: prod_i L_ii^(2 (concentration - 1) + dim - i), i = 2 .. dim (the Jacobian's powers included)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - arange(2, self.dim + 1)
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        # the paper's normaliser; mvlgamma's pi term is (D - 1)(D - 2)/4 log(pi), the paper's D (D - 1)/4 log(pi)
        normalize_term = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        return unnormalized_log_pdf - normalize_term
