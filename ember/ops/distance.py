"""Distances and similarities between vectors: cosine_similarity, pairwise_distance, cdist, dist.

Composed from existing differentiable ops, so their gradients follow from those ops'.
"""

from __future__ import annotations

from .. import _dtype
from .._arg_aliases import is_number
from .._autocast import full_precision
from .._backend import xp
from .._dtype import SCALAR_TYPE_NAMES, np_kind
from .._size import c_type_name
from .._tensor import Tensor
from ..autograd.graph import Node, shown_as, torch_named, version_checked
from .elementwise import add, div, mul, promote, require_tensor, sub
from .reduction import norm, sum, vector_norm_array, vector_norm_backward
from .shape import expand, unsqueeze
from .unary import clamp


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / (max(||x1||, eps) * max(||x2||, eps)) along ``dim``, the inputs broadcast together first (a
    size-1 ``dim`` is repeated before the norms are taken, as in PyTorch)."""
    try:
        shape = xp.broadcast_shapes(x1._data.shape, x2._data.shape)
    except ValueError:
        raise RuntimeError(f"cosine_similarity: the shapes {list(x1.shape)} and {list(x2.shape)} do not broadcast") \
            from None
    x1, x2 = expand(x1, shape), expand(x2, shape)
    n1 = clamp(norm(x1, 2, dim, keepdim=True), min=eps)
    n2 = clamp(norm(x2, 2, dim, keepdim=True), min=eps)
    return sum(mul(div(x1, n1), div(x2, n2)), dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The p-norm of ``x1 - x2 + eps`` over the last dimension (rows paired after broadcasting)."""
    nd = max(x1._data.ndim, x2._data.ndim)
    # (the last dim by its number, as PyTorch's call names it: an empty one is norm's error naming dim 1, not -1)
    out = norm(add(sub(x1, x2), eps), p, nd - 1 if nd else None, keepdim=keepdim and nd > 0)
    return shown_as(out, "NormBackward1")  # (PyTorch's norm over a dim)


@full_precision
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2`` (..., R, M):
    a (..., P, R) tensor. Both operands are version-checked at backward, whichever needs a gradient, as PyTorch
    saves both: one changed in place before backward is its "modified by an inplace operation" error."""
    if x1._data.ndim < 2 or x2._data.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1._data.ndim}D, "
                           f"X2 got: {x2._data.ndim}D")
    if x1._data.shape[-1] != x2._data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._data.shape[-1]} "
                           f"X2: {x2._data.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    out = _distance_norm(sub(unsqueeze(x1, -2), unsqueeze(x2, -3)), p)
    return version_checked(shown_as(out, "CdistBackward0"), x1, x2)  # (PyTorch's one node)


def _distance_norm(diffs: Tensor, p: float) -> Tensor:
    """The ``p``-norm over the last dimension of ``diffs``, a distance function's (``cdist``, ``pdist``): for p = 0
    its gradient is zeros, as PyTorch's cdist and pdist formulas give, where the 0-norm's gives none. Rows of no
    features are 0 apart for every p, as PyTorch's kernels give it (the inf-norm, a max, would refuse them)."""
    if p == float("inf") and diffs._data.shape[-1] == 0:
        p = 2.0
    out = norm(diffs, p, -1)
    if p == 0 and out.grad_fn is not None:
        out.grad_fn.zero_count_gradient = True
    return out


@_dtype.keyword_scalars
def dist(x1: Tensor, x2: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``x1 - x2`` over all elements. Both operands are version-checked at backward, as in
    ``cdist``. As PyTorch's signature, ``x2`` must be a tensor and ``p`` a number (TypeError)."""
    require_tensor("dist", x2)
    if isinstance(p, Tensor):  # (PyTorch's Scalar: a 0-d tensor that does not require grad is its number)
        p = _dtype.scalar_tensor_number(p, "dist", "p", position=3)
    elif not is_number(p):  # (a Fraction or a Decimal too: PyTorch's parser takes Python and NumPy numbers)
        raise _dtype.scalar_argument_error("dist", "p", "Number", c_type_name(p), 3)
    if isinstance(p, complex):
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of norm.")
    a, b = promote(x1, x2)
    if np_kind(a._data.dtype) not in "fc":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{SCALAR_TYPE_NAMES[a.dtype.name]} instead.")
    return version_checked(Dist.apply(a, b, order=float(p)), x1, x2)


@torch_named("DistBackward0")
class Dist(Node):
    """``dist``: one node, as PyTorch's (not a norm of a subtraction), and its formula: the norm's gradient of
    ``x1 - x2`` (broadcast), negated for ``x2``."""

    float32_compute = True
    rerun_for_higher_order = True  # backward reads x1 - x2 (recomputed on recorded inputs under create_graph)
    formula_reads = (0, 1)  # (as the norm's: a 1- or inf-norm's gradient requires grad, its derivative zeros)

    def forward(self, a, b, order):
        diff = a - b
        out = vector_norm_array(diff, order, None, False)
        self.saved = (diff, out)
        self.order = order
        return out

    def backward(self, g):
        diff, out = self.saved
        na, nb = self.needs_input_grad
        if self.order == 0:  # PyTorch's norm gradient is none at all, which its formula then negates for x2: an error
            if nb:
                raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) for "
                                   "argument #0 'self'")
            return None, None
        grad = vector_norm_backward(g, diff, out, self.order, None, False)
        return (grad if na else None), (-grad if nb else None)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distance between each pair of rows ``i < j`` of an N x M tensor, in row-major order of the pairs
    (N (N - 1) / 2 values). Composed of an index and a vector norm, so it differentiates twice (PyTorch's pdist
    backward has no derivative). The input is version-checked at backward, as PyTorch saves it: changed in place
    before backward, it is PyTorch's "modified by an inplace operation" error."""
    from .indexing import index_select

    if input._data.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input._data.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = xp.triu_indices(input._data.shape[0], 1)
    pairs = sub(index_select(input, 0, Tensor._make(i)), index_select(input, 0, Tensor._make(j)))
    return version_checked(shown_as(_distance_norm(pairs, p), "PdistBackward0"), input)  # (PyTorch's one node)
