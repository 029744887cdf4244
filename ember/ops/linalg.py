"""Matrix products: matmul (``@``), mm, bmm, mv, dot, outer."""

from __future__ import annotations

from .._autocast import lower_precision
from .._backend import xp
from .._tensor import Tensor
from ..autograd.graph import Node
from .elementwise import promote


class MatMul(Node):
    float32_compute = True
    multilinear = True

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
        if a.ndim == 1 and b.ndim == 1:  # a dot product: g is 0-d
            g2 = xp.reshape(g, (1, 1))
        elif a.ndim == 1:
            g2 = xp.expand_dims(g2, -2)
        elif b.ndim == 1:
            g2 = xp.expand_dims(g2, -1)
        ga = gb = None
        if a.dtype.kind == "c":  # complex: dL/dA = G B^H, dL/dB = A^H G
            a2, b2 = a2.conj(), b2.conj()
        if na:  # dL/dA = G B^T
            ga = xp.matmul(g2, xp.swapaxes(b2, -1, -2))
            if a.ndim == 1:
                ga = ga.reshape(ga.shape[:-2] + ga.shape[-1:])
        if nb:  # dL/dB = A^T G
            gb = xp.matmul(xp.swapaxes(a2, -1, -2), g2)
            if b.ndim == 1:
                gb = gb.reshape(gb.shape[:-1])
        return ga, gb


@lower_precision
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


@lower_precision
def mm(a: Tensor, b: Tensor) -> Tensor:
    _check_dims("mm", a, 2)
    _check_dims("mm", b, 2)
    return matmul(a, b)


@lower_precision
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


def _scaled_sum(input: Tensor, product: Tensor, beta, alpha, name: str) -> Tensor:
    """beta * input + alpha * product; with beta == 0, input is ignored (its nan/inf do not propagate)."""
    from .elementwise import add, mul
    from .shape import expand

    try:
        xp.broadcast_shapes(input._data.shape, product._data.shape)
    except ValueError:
        raise RuntimeError(f"{name}: the input of shape {list(input.shape)} cannot be broadcast to the product's "
                           f"shape {list(product.shape)}") from None
    scaled = product if alpha == 1 else mul(product, alpha)
    if beta == 0:  # input's values are ignored (nan/inf do not propagate); its gradient is zero
        if not input._requires_grad:
            return scaled
        from .indexing import where

        none = Tensor._make(xp.zeros(product._data.shape, dtype=bool))
        return add(scaled, where(none, expand(input, product._data.shape), 0))
    return add(input if beta == 1 else mul(input, beta), scaled)


@lower_precision
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), mat1 and mat2 2-D; input broadcasts to the result."""
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha, "addmm")


@lower_precision
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * bmm(batch1, batch2)."""
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha, "baddbmm")


@lower_precision
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * sum over the batch of batch1[i] @ batch2[i]."""
    from .reduction import sum

    return _scaled_sum(input, sum(bmm(batch1, batch2), 0), beta, alpha, "addbmm")


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    return _scaled_sum(input, mv(mat, vec), beta, alpha, "addmv")


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2)."""
    _check_dims("addr", vec1, 1)
    _check_dims("addr", vec2, 1)
    return _scaled_sum(input, outer(vec1, vec2), beta, alpha, "addr")


def inner(a: Tensor, b: Tensor) -> Tensor:
    """The sum of products over the last dimension of each (a scalar times a tensor when one is 0-d)."""
    from .elementwise import mul
    from .shape import reshape

    if a._data.ndim == 0 or b._data.ndim == 0:
        return mul(a, b)
    lead_a, lead_b = a._data.shape[:-1], b._data.shape[:-1]
    out = matmul(reshape(a, -1, a._data.shape[-1]), reshape(b, -1, b._data.shape[-1]).mT)
    return reshape(out, lead_a + lead_b)
