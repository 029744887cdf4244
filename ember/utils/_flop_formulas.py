"""The floating-point operation counts ``FlopCounterMode`` (``flop_counter.py``) records for ember's nodes, by the
ATen operator PyTorch's CPU kernels run for the same call and PyTorch's formula for it
(``torch/utils/flop_counter.py``): only the multiplications of matrix products and convolutions are counted, two
operations per multiply-add; additions of biases, pointwise ops and reductions count nothing.

A node class maps to two functions: ``forward(node, inputs, out)`` (its input tensors, its output array) and
``backward(node, grads)`` (read before the node's backward runs, its saved arrays still there), each giving
``[(operator name, flops), ...]``. The operator is PyTorch's: ``linear`` runs ``aten.addmm`` where its bias is
added inside the product, else ``aten.mm`` (or ``aten.bmm`` where PyTorch's ``matmul`` multiplies a stack it
cannot view as one matrix); ``einsum`` runs ``aten.bmm`` for each pairwise contraction that sums a dimension
(``einsum_contractions``); a product's gradients are ``aten.mm``/``aten.bmm`` products; a convolution is
``aten.convolution``, its gradients one ``aten.convolution_backward``. On the CPU PyTorch counts nothing for
``scaled_dot_product_attention`` (its CPU kernel is not among the operators it has a formula for), nor for
matrix-vector products and dot products: neither does ember.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .._backend import xp
from .._tensor import Tensor
from ..nn._ops.conv import ConvNd
from ..nn._ops.conv_transpose import ConvTransposeNd
from ..nn._ops.linear import Linear, _bias_fused
from ..ops.einsum import Einsum
from ..ops.linalg import (
    Addmm,
    Baddbmm,
    _Batched,
    _BatchTimesBatch,
    _folds_as_view,
    _MatrixTimesBatch,
    _MatrixTimesMatrix,
    _VectorTimesMatrix,
)

Counts = list[tuple[str, int]]


def product_flops(a_shape: tuple, b_shape: tuple) -> int:
    """Two operations per multiply-add of ``a @ b`` (``a``: (*, m, k), ``b``: (*, k, n) or (k,)), over the
    batch ``a`` or ``b`` has."""
    m_k = a_shape[-2:] if len(a_shape) >= 2 else (1, a_shape[0])
    n = b_shape[-1] if len(b_shape) >= 2 else 1
    batch = math.prod(xp.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])))
    return 2 * batch * m_k[0] * m_k[1] * n


def _gradient_products(node, key: str, first: int = 0) -> Counts:
    """One product of ``key`` per input of the two (from index ``first``) whose gradient is computed, each with
    the forward's count (``g @ b^T`` and ``a^T @ g`` multiply as many pairs as ``a @ b``)."""
    a, b = node.saved[0], node.saved[1]
    flops = product_flops(a.shape, b.shape)
    needs = node.needs_input_grad
    return [(key, flops) for wanted in needs[first:first + 2] if wanted]


def _requiring_grad(inputs) -> tuple:
    """Which inputs require grad, as PyTorch's matmul reads it to choose its path (under ``no_grad`` too)."""
    return tuple(isinstance(t, Tensor) and t.requires_grad for t in inputs)


def _matmul_operator(node, a, b, wants: tuple) -> str | None:
    """The operator PyTorch's ``matmul`` runs for ``a @ b`` (``wants``: which of them require grad), None for
    one it does not count. A matrix by a matrix, a vector (as a one-row matrix) by a matrix, and a stack folded
    into one matrix are ``mm``: PyTorch folds a stack times a matrix where the matrix requires grad or the stack
    views as one matrix (a matrix times a stack: where the matrix requires grad); else it expands the other
    operand and runs ``bmm``. A stack and a vector are ``mv`` products where folded (not counted)."""
    if isinstance(node, (_MatrixTimesMatrix, _VectorTimesMatrix, _MatrixTimesBatch)):
        return "aten.mm"
    if isinstance(node, _Batched):
        if b.ndim == 1:
            return None
        if a.ndim == 1:
            return None if wants[0] else "aten.bmm"
        if b.ndim <= 2:
            return "aten.mm" if wants[1] or _folds_as_view(a) else "aten.bmm"
    return "aten.bmm"


def _matmul_forward(node, inputs, out) -> Counts:
    a, b = inputs[0]._data, inputs[1]._data
    key = _matmul_operator(node, a, b, _requiring_grad(inputs))
    return [] if key is None else [(key, product_flops(a.shape, b.shape))]


def _matmul_backward(node, grads) -> Counts:
    key = _matmul_operator(node, node.saved[0], node.saved[1], node.needs_input_grad)
    return [] if key is None else _gradient_products(node, key)


def _linear_operator(x, b, wants: tuple) -> str:
    """PyTorch's ``linear``: ``addmm`` with the bias inside for an input of one or two dimensions or a contiguous
    one whose bias is fused (``_bias_fused``); else ``matmul`` by ``weight.t()`` (``_matmul_operator``'s rule for a
    stack times a matrix, the matrix the weight), then the bias added."""
    if b is not None and (x.ndim <= 2 or _bias_fused(x, b)):
        return "aten.addmm"
    return "aten.mm" if x.ndim <= 2 or wants[1] or _folds_as_view(x) else "aten.bmm"


def _linear_flops(x, w) -> int:
    return 2 * math.prod(x.shape[:-1]) * w.shape[0] * w.shape[1]


def _linear_forward(node, inputs, out) -> Counts:
    x, w, b = (None if t is None else t._data for t in inputs)
    return [(_linear_operator(x, b, _requiring_grad(inputs)), _linear_flops(x, w))]


def _linear_backward(node, grads) -> Counts:
    """Each needed gradient of the input and weight one product of the forward's size (the bias's a sum):
    ``mm`` where the forward was an addmm or mm, else ``bmm``."""
    x, w = node.saved[0], node.saved[1]
    needs = node.needs_input_grad
    key = "aten.bmm" if _linear_operator(x, None, needs) == "aten.bmm" else "aten.mm"
    return [(key, _linear_flops(x, w)) for wanted in needs[:2] if wanted]


def _added_product_forward(key: str) -> Callable:
    def forward(node, inputs, out) -> Counts:
        return [(key, product_flops(inputs[1].shape, inputs[2].shape))]

    return forward


def conv_flops(x_shape: tuple, w_shape: tuple, out_shape: tuple, transposed: bool) -> int:
    """PyTorch's count of a convolution: for each position of the output (of the input, transposed), the
    filter's multiply-adds, times the batch and both channel counts of the weight."""
    positions = math.prod((x_shape if transposed else out_shape)[2:])
    return 2 * positions * math.prod(w_shape[2:]) * x_shape[0] * w_shape[0] * w_shape[1]


def _swap(shape: tuple) -> tuple:
    return (shape[1], shape[0], *shape[2:])


def _conv_forward(node, inputs, out) -> Counts:
    return [("aten.convolution", conv_flops(inputs[0].shape, inputs[1].shape, out.shape,
                                            isinstance(node, ConvTransposeNd)))]


def _conv_backward(node, grads) -> Counts:
    """``aten.convolution_backward``: the input's gradient a convolution of the other kind of the output's
    gradient by the weight, the weight's a convolution of the input by the output's gradient (PyTorch's
    ``conv_backward_flop``); nothing for the bias's."""
    transposed = isinstance(node, ConvTransposeNd)
    g = grads[0]
    if transposed:
        x, w = node.saved[0], node.saved[2]
    else:
        w, x = node.saved[1], node.saved[2]
    needs = node.needs_input_grad
    flops = 0
    if needs[0]:
        flops += conv_flops(g.shape, w.shape, x.shape, not transposed)
    if needs[1]:
        flops += conv_flops(_swap(g.shape), _swap(x.shape), _swap(w.shape), False) if transposed else \
            conv_flops(_swap(x.shape), _swap(g.shape), _swap(w.shape), False)
    return [("aten.convolution_backward", flops)]


def einsum_contractions(subscripts: list[str], shapes: list[tuple], output: str) -> list[int]:
    """The flops of each ``bmm`` PyTorch's ``einsum`` runs (without opt_einsum, which ember's tests' PyTorch lacks):
    it contracts the operands left to right, the result so far with the next operand; a letter neither the output
    nor a later operand has is summed away, by the ``bmm`` where both hold it, alone before it where one does; the
    letters kept are the ``bmm``'s batch (both hold them) and its rows or columns (one does). A pair that sums no
    letter is a ``mul`` (not counted): its flops are 0. One entry per pair (none for a single operand)."""
    sizes = [dict(zip(subs, shape)) for subs, shape in zip(subscripts, shapes)]
    flops = []
    left = sizes[0]
    for k in range(1, len(sizes)):
        right = sizes[k]
        later = set(output).union(*sizes[k + 1:])
        summed = [c for c in left if c in right and c not in later]
        kept = {c: max(n, right.get(c, 1)) for c, n in left.items() if c in later}
        kept.update({c: n for c, n in right.items() if c in later and c not in kept})
        flops.append(2 * math.prod(left[c] for c in summed) * math.prod(kept.values()) if summed else 0)
        left = kept
    return flops


def _einsum_forward(node, inputs, out) -> Counts:
    flops = einsum_contractions(node.inputs, [t.shape for t in inputs], node.output)
    return [("aten.bmm", n) for n in flops if n]


def _einsum_backward(node, grads) -> Counts:
    """Each ``bmm``'s gradients: one product of its size per side that requires grad (the result so far does
    where an operand in it does)."""
    flops = einsum_contractions(node.inputs, [a.shape for a in node.saved], node.output)
    needs = node.needs_input_grad
    counts = []
    for k, n in enumerate(flops, start=1):
        counts += [("aten.bmm", n)] * ((any(needs[:k]) + needs[k]) if n else 0)
    return counts


FORMULAS: dict[type, tuple[Callable, Callable]] = {
    **{cls: (_matmul_forward, _matmul_backward)
       for cls in (_MatrixTimesMatrix, _VectorTimesMatrix, _BatchTimesBatch, _MatrixTimesBatch, _Batched)},
    Linear: (_linear_forward, _linear_backward),
    Addmm: (_added_product_forward("aten.addmm"), lambda node, grads: _gradient_products(node, "aten.mm", 1)),
    Baddbmm: (_added_product_forward("aten.baddbmm"), lambda node, grads: _gradient_products(node, "aten.bmm", 1)),
    ConvNd: (_conv_forward, _conv_backward),
    ConvTransposeNd: (_conv_forward, _conv_backward),
    Einsum: (_einsum_forward, _einsum_backward),
}
