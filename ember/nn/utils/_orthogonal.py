"""The ``orthogonal`` parametrization of ``nn.utils.parametrizations`` (PyTorch's ``_Orthogonal``).

A matrix (or batch) ``X`` maps to an orthogonal one: ``matrix_exp`` or ``cayley`` of the skew-symmetric matrix
built from ``X``'s lower triangle, or the product of the Householder reflections stored below ``X``'s diagonal.
With ``use_trivialization`` (default) the result is multiplied by a ``base`` buffer set when a value is assigned,
so the parameter starts at a fixed point and the module starts from its original weight made orthogonal.
"""

from __future__ import annotations

from ..._creation import eye, randn
from ..._tensor import Tensor
from ...autograd import no_grad
from ...linalg import householder_product
from ...ops.decompositions import qr
from ...ops.shape import cat
from ...ops.solve import matrix_exp, solve
from ..modules.module import Module

MAPS = ("matrix_exp", "cayley", "householder")


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR decomposition with R's diagonal made positive (unique for a full-rank A)."""
    Q, R = qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(Q: Tensor) -> bool:
    from ..._type_info import finfo

    n, k = Q.shape[-2], Q.shape[-1]
    return bool(((Q.mT @ Q - eye(k, dtype=Q.dtype)).abs() <= 10.0 * n * finfo(Q.dtype).eps).all())


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == "matrix_exp":
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype)
                Q = solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        if "base" not in self._buffers:
            if self.orthogonal_map in ("matrix_exp", "cayley"):  # registration then keeps the weight as it is
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            # PyTorch stores geqrf's reflectors here; ember has no geqrf, so this is refused, not approximated
            raise RuntimeError("ember: the householder orthogonal map needs use_trivialization=True (the "
                               "default); assigning without it needs geqrf, which ember lacks")
        with no_grad():
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            if n < k:
                Q = Q.mT
                n, k = k, n
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                Q = _make_orthogonal(cat([Q, randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)], dim=-1))
            self.base = Q
            return -eye(*Q_init.shape[-2:], dtype=Q_init.dtype).expand(Q_init.shape).clone()
