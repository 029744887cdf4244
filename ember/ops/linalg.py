"""Matrix products: matmul (``@``), mm, bmm, mv, dot, outer."""

from __future__ import annotations

from .._backend import xp
from .._tensor import Tensor
from ..autograd.graph import Node
from .elementwise import promote


class MatMul(Node):
    def forward(self, a, b):
        self.saved = (a, b)
        return xp.matmul(a, b)

    def backward(self, g):
        a, b = self.saved
        na, nb = self.needs_input_grad
        # 1-D operands act as a row (left) or a column (right) vector; restore them after.
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = xp.expand_dims(g2, -2)
        if b.ndim == 1:
            g2 = xp.expand_dims(g2, -1)
        ga = gb = None
        if na:  # dL/dA = G B^T
            ga = xp.matmul(g2, xp.swapaxes(b2, -1, -2))
            if a.ndim == 1:
                ga = ga.reshape(ga.shape[:-2] + ga.shape[-1:])
        if nb:  # dL/dB = A^T G
            gb = xp.matmul(xp.swapaxes(a2, -1, -2), g2)
            if b.ndim == 1:
                gb = gb.reshape(gb.shape[:-1])
        return ga, gb


def matmul(a: Tensor, b: Tensor) -> Tensor:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError("matmul expects two tensors")
    sa, sb = a._data.shape, b._data.shape
    if a._data.ndim == 0 or b._data.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, sa))} and "
            f"{'x'.join(map(str, sb))}): inner dimensions {k_a} and {k_b} differ"
        )
    if a._data.dtype != b._data.dtype:
        a, b = promote(a, b)
    return MatMul.apply(a, b)


def _check_dims(name: str, t: Tensor, nd: int) -> None:
    if t._data.ndim != nd:
        raise RuntimeError(
            f"{name}: expected a {nd}D tensor, but got a {t._data.ndim}D tensor of shape {list(t.shape)}"
        )


def mm(a: Tensor, b: Tensor) -> Tensor:
    _check_dims("mm", a, 2)
    _check_dims("mm", b, 2)
    return matmul(a, b)


def bmm(a: Tensor, b: Tensor) -> Tensor:
    _check_dims("bmm", a, 3)
    _check_dims("bmm", b, 3)
    if a._data.shape[0] != b._data.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {a._data.shape[0]} and {b._data.shape[0]}")
    return matmul(a, b)


def mv(a: Tensor, v: Tensor) -> Tensor:
    _check_dims("mv", a, 2)
    _check_dims("mv", v, 1)
    return matmul(a, v)


def dot(a: Tensor, b: Tensor) -> Tensor:
    _check_dims("dot", a, 1)
    _check_dims("dot", b, 1)
    if a._data.shape != b._data.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a._data.shape[0]}] and src [{b._data.shape[0]}] "
            "to have the same number of elements, but got different numbers"
        )
    return matmul(a, b)


def outer(a: Tensor, b: Tensor) -> Tensor:
    from .elementwise import mul
    from .shape import unsqueeze

    return mul(unsqueeze(a, 1), unsqueeze(b, 0))
