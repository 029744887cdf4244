"""The bookkeeping of each op's node, against PyTorch's: what it is called, which inputs its graph reaches, and
which tensors it saves, i.e. where a tensor changed in place between forward and backward is PyTorch's "modified
by an inplace operation" error and where it is not.

A slip in this bookkeeping leaves every value right: a node that saves one tensor too many (or checks the version
of one it does not read) refuses a program PyTorch runs; one that saves too few differentiates at values changed
since forward where PyTorch refuses; a wrong name shows in every printed tensor and error message. For a table of
activations, normalisations, losses (the class losses too) and matrix products of every rank pair, each case is
run under ember and PyTorch with every floating input needing a gradient, with the first alone and with the last
alone: the node's
name, the leaves its graph reaches, the gradients, and, for each input and the output in turn changed in place
under no_grad after forward, the outcome of backward (PyTorch's message but for the shape, or PyTorch's
gradients).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ember


def _f(m):
    return m.nn.functional


def _act(name, **kw):
    return lambda m, x: getattr(_f(m), name)(x, **kw)


# input kinds: "f" normal, "p" in (0.1, 0.9), "01" zeros and ones, "pos" in (0.5, 2), "s" signs, "spd" symmetric
# positive-definite, ("i", high) class indices, "ml" multilabel targets
X43 = ("f", (4, 3))

# name -> (fn(m, *inputs) -> output, input specs)
OPS = {
    # activations
    **{n: (_act(n), [X43]) for n in ("relu", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus",
                                     "hardtanh", "relu6", "hardswish", "hardsigmoid", "logsigmoid", "softsign",
                                     "tanhshrink", "softshrink", "hardshrink", "sigmoid", "tanh", "rrelu")},
    "celu_alpha": (_act("celu", alpha=2.0), [X43]), "elu_alpha": (_act("elu", alpha=0.5), [X43]),
    "leaky_relu_slope": (_act("leaky_relu", negative_slope=0.2), [X43]),
    "gelu_tanh": (_act("gelu", approximate="tanh"), [X43]),
    "softplus_beta": (_act("softplus", beta=2.0, threshold=1.0), [X43]),
    "threshold": (lambda m, x: _f(m).threshold(x, 0.1, 2.0), [X43]),
    "hardtanh_limits": (_act("hardtanh", min_val=-0.5, max_val=0.5), [X43]),
    "softmax": (_act("softmax", dim=1), [X43]), "log_softmax": (_act("log_softmax", dim=0), [X43]),
    "softmin": (_act("softmin", dim=1), [X43]), "glu": (_act("glu", dim=0), [X43]),
    "prelu": (lambda m, x, w: _f(m).prelu(x, w), [X43, ("f", (3,))]),
    "prelu_one": (lambda m, x, w: _f(m).prelu(x, w), [X43, ("f", (1,))]),
    # normalisations
    "layer_norm": (lambda m, x, w, b: _f(m).layer_norm(x, (3,), w, b), [X43, ("f", (3,)), ("f", (3,))]),
    "layer_norm_weight": (lambda m, x, w: _f(m).layer_norm(x, (3,), w), [X43, ("f", (3,))]),
    "layer_norm_bias": (lambda m, x, b: _f(m).layer_norm(x, (3,), None, b), [X43, ("f", (3,))]),
    "layer_norm_2d": (lambda m, x, w, b: _f(m).layer_norm(x, (2, 3), w, b),
                      [("f", (2, 2, 3)), ("f", (2, 3)), ("f", (2, 3))]),
    "layer_norm_plain": (lambda m, x: _f(m).layer_norm(x, (3,)), [X43]),
    "rms_norm": (lambda m, x, w: _f(m).rms_norm(x, (3,), w), [X43, ("f", (3,))]),
    "rms_norm_plain": (lambda m, x: _f(m).rms_norm(x, (3,)), [X43]),
    "batch_norm": (lambda m, x, w, b: _f(m).batch_norm(x, None, None, w, b, training=True),
                   [X43, ("f", (3,)), ("f", (3,))]),
    "batch_norm_4d": (lambda m, x, w, b: _f(m).batch_norm(x, None, None, w, b, training=True),
                      [("f", (2, 3, 2, 2)), ("f", (3,)), ("f", (3,))]),
    # (the running statistics, never differentiable, come last)
    "batch_norm_eval": (lambda m, x, w, b, rm, rv: _f(m).batch_norm(x, rm, rv, w, b),
                        [X43, ("f", (3,)), ("f", (3,)), ("nd", (3,)), ("ndpos", (3,))]),
    "batch_norm_running": (lambda m, x, w, b, rm, rv: _f(m).batch_norm(x, rm, rv, w, b, training=True),
                           [X43, ("f", (3,)), ("f", (3,)), ("nd", (3,)), ("ndpos", (3,))]),
    "batch_norm_eval_plain": (lambda m, x, rm, rv: _f(m).batch_norm(x, rm, rv), [X43, ("nd", (3,)), ("ndpos", (3,))]),
    "group_norm": (lambda m, x, w, b: _f(m).group_norm(x, 2, w, b), [("f", (2, 4, 3)), ("f", (4,)), ("f", (4,))]),
    "group_norm_plain": (lambda m, x: _f(m).group_norm(x, 2), [("f", (2, 4, 3))]),
    "instance_norm": (lambda m, x, w, b: _f(m).instance_norm(x, weight=w, bias=b),
                      [("f", (2, 3, 4)), ("f", (3,)), ("f", (3,))]),
    "instance_norm_running": (lambda m, x, rm, rv: _f(m).instance_norm(x, rm, rv, use_input_stats=False),
                              [("f", (2, 3, 4)), ("nd", (3,)), ("ndpos", (3,))]),
    "instance_norm_tracked": (lambda m, x, rm, rv: _f(m).instance_norm(x, rm, rv),
                              [("f", (2, 3, 4)), ("nd", (3,)), ("ndpos", (3,))]),
    "normalize": (lambda m, x: _f(m).normalize(x, dim=1), [X43]),
    "local_response_norm": (lambda m, x: _f(m).local_response_norm(x, 2), [("f", (2, 3, 4))]),
    # losses of values
    **{f"{n}_{r}": ((lambda m, x, t, n=n, r=r: getattr(_f(m), n)(x, t, reduction=r)), [X43, X43])
       for n in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss") for r in ("mean", "sum", "none")},
    "kl_div": (lambda m, x, t: _f(m).kl_div(x, t, reduction="batchmean"), [X43, ("p", (4, 3))]),
    "kl_div_log_target": (lambda m, x, t: _f(m).kl_div(x, t, reduction="sum", log_target=True), [X43, X43]),
    "smooth_l1_beta": (lambda m, x, t: _f(m).smooth_l1_loss(x, t, beta=0.5), [X43, X43]),
    "huber_delta": (lambda m, x, t: _f(m).huber_loss(x, t, delta=0.5), [X43, X43]),
    "bce": (lambda m, x, t, w: _f(m).binary_cross_entropy(x, t, w), [("p", (4, 3)), ("p", (4, 3)), ("nd", (3,))]),
    "bce_plain": (lambda m, x, t: _f(m).binary_cross_entropy(x, t, reduction="none"), [("p", (4, 3)), ("p", (4, 3))]),
    "bce_logits": (lambda m, x, t, w, pw: _f(m).binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
                   [X43, ("p", (4, 3)), ("nd", (3,)), ("nd", (3,))]),
    "bce_logits_plain": (lambda m, x, t: _f(m).binary_cross_entropy_with_logits(x, t, reduction="sum"),
                         [X43, ("p", (4, 3))]),
    "soft_margin": (lambda m, x, t: _f(m).soft_margin_loss(x, t), [X43, ("nds", (4, 3))]),
    "poisson_nll": (lambda m, x, t: _f(m).poisson_nll_loss(x, t), [X43, ("pos", (4, 3))]),
    "poisson_nll_full": (lambda m, x, t: _f(m).poisson_nll_loss(x, t, log_input=False, full=True),
                         [("pos", (4, 3)), ("pos", (4, 3))]),
    "gaussian_nll": (lambda m, x, t, v: _f(m).gaussian_nll_loss(x, t, v), [X43, X43, ("pos", (4, 3))]),
    "margin_ranking": (lambda m, a, b, t: _f(m).margin_ranking_loss(a, b, t, margin=0.1),
                       [("f", (5,)), ("f", (5,)), ("s", (5,))]),
    "hinge_embedding": (lambda m, x, t: _f(m).hinge_embedding_loss(x, t), [X43, ("nds", (4, 3))]),
    "cosine_embedding": (lambda m, a, b, t: _f(m).cosine_embedding_loss(a, b, t), [X43, X43, ("nds", (4,))]),
    "triplet_margin": (lambda m, a, p, n: _f(m).triplet_margin_loss(a, p, n), [X43, X43, X43]),
    "multilabel_soft_margin": (lambda m, x, t: _f(m).multilabel_soft_margin_loss(x, t), [X43, ("01", (4, 3))]),
    # the class losses
    "cross_entropy": (lambda m, x, t: _f(m).cross_entropy(x, t), [X43, ("i", (4,), 3)]),
    "cross_entropy_weight": (lambda m, x, t, w: _f(m).cross_entropy(x, t, w), [X43, ("i", (4,), 3), ("ndpos", (3,))]),
    "cross_entropy_smoothing": (lambda m, x, t, w: _f(m).cross_entropy(x, t, w, label_smoothing=0.1),
                                [X43, ("i", (4,), 3), ("ndpos", (3,))]),
    "cross_entropy_ignore": (lambda m, x, t: _f(m).cross_entropy(x, t, reduction="sum", ignore_index=1),
                             [X43, ("i", (4,), 3)]),
    "cross_entropy_3d_none": (lambda m, x, t: _f(m).cross_entropy(x, t, reduction="none"),
                              [("f", (2, 3, 4)), ("i", (2, 4), 3)]),
    "cross_entropy_4d": (lambda m, x, t: _f(m).cross_entropy(x, t), [("f", (2, 3, 2, 2)), ("i", (2, 2, 2), 3)]),
    "cross_entropy_1d": (lambda m, x, t: _f(m).cross_entropy(x, t), [("f", (3,)), ("i", (), 3)]),
    "cross_entropy_probs": (lambda m, x, t: _f(m).cross_entropy(x, t), [X43, ("p", (4, 3))]),
    "cross_entropy_probs_weight": (lambda m, x, t, w: _f(m).cross_entropy(x, t, w, label_smoothing=0.2),
                                   [X43, ("p", (4, 3)), ("ndpos", (3,))]),
    "nll_loss": (lambda m, x, t: _f(m).nll_loss(x, t), [X43, ("i", (4,), 3)]),
    "nll_loss_weight": (lambda m, x, t, w: _f(m).nll_loss(x, t, w, reduction="sum"),
                        [X43, ("i", (4,), 3), ("ndpos", (3,))]),
    "nll_loss_none": (lambda m, x, t, w: _f(m).nll_loss(x, t, w, reduction="none"),
                      [X43, ("i", (4,), 3), ("ndpos", (3,))]),
    "nll_loss_4d": (lambda m, x, t: _f(m).nll_loss(x, t), [("f", (2, 3, 2, 2)), ("i", (2, 2, 2), 3)]),
    "nll_loss_1d": (lambda m, x, t: _f(m).nll_loss(x, t), [("f", (3,)), ("i", (), 3)]),
    "nll_loss_3d_none": (lambda m, x, t: _f(m).nll_loss(x, t, reduction="none"), [("f", (2, 3, 4)), ("i", (2, 4), 3)]),
    "nll_loss_5d": (lambda m, x, t: _f(m).nll_loss(x, t, reduction="sum"),
                    [("f", (2, 3, 2, 1, 2)), ("i", (2, 2, 1, 2), 3)]),
    "cross_entropy_probs_none": (lambda m, x, t: _f(m).cross_entropy(x, t, reduction="none"), [X43, ("p", (4, 3))]),
    "cross_entropy_probs_smoothing": (lambda m, x, t: _f(m).cross_entropy(x, t, label_smoothing=0.3, reduction="sum"),
                                      [X43, ("p", (4, 3))]),
    "multi_margin": (lambda m, x, t, w: _f(m).multi_margin_loss(x, t, weight=w), [X43, ("i", (4,), 3), ("ndpos", (3,))]),
    "multi_margin_p2": (lambda m, x, t: _f(m).multi_margin_loss(x, t, p=2, margin=0.5), [X43, ("i", (4,), 3)]),
    "multilabel_margin": (lambda m, x, t: _f(m).multilabel_margin_loss(x, t), [X43, ("ml", (4, 3))]),
    # matrix products: matmul of every rank pair, and the products PyTorch records as one node
    **{f"matmul_{a}{b}": ((lambda m, x, y: x @ y), [("f", sa), ("f", sb)]) for a, b, sa, sb in (
        (1, 1, (3,), (3,)), (2, 1, (4, 3), (3,)), (1, 2, (3,), (3, 2)), (2, 2, (4, 3), (3, 2)),
        (3, 2, (2, 4, 3), (3, 2)), (2, 3, (4, 3), (2, 3, 2)), (3, 3, (2, 4, 3), (2, 3, 2)),
        (4, 3, (2, 2, 4, 3), (2, 3, 2)), (3, 1, (2, 4, 3), (3,)), (1, 3, (4,), (2, 4, 3)),
        # batches that broadcast: a batch of 1 expanded (a view), batch dims merged across a broadcast (a copy)
        ("3b", 3, (1, 4, 3), (2, 3, 2)), (3, "3b", (2, 4, 3), (1, 3, 2)), ("4b", 3, (2, 1, 4, 3), (3, 3, 2)),
        (3, "4b", (3, 4, 3), (2, 1, 3, 2)), (4, "4b", (2, 3, 4, 3), (2, 1, 3, 2)), (2, 4, (4, 3), (2, 2, 3, 2)),
        # batches of two ranks whose shorter one matches the longer's trailing batch dims: the shorter operand is
        # expanded across the new leading dim, which merges into one stack only as a copy (saved; the other viewed)
        (3, "4x", (2, 4, 3), (2, 2, 3, 2)), ("4x", 3, (2, 2, 4, 3), (2, 3, 2)),
        # a stack of one matrix against a vector or matrix: folded as a view of it (saved, not copied)
        (2, "3one", (4, 3), (1, 3, 2)), (1, "3one", (3,), (1, 3, 2)), (2, "4one", (4, 3), (1, 1, 3, 2)),
        ("3b", "4b", (1, 4, 3), (2, 1, 3, 2)))},
    "mm": (lambda m, a, b: a.mm(b), [X43, ("f", (3, 2))]),
    "bmm": (lambda m, a, b: m.bmm(a, b), [("f", (2, 4, 3)), ("f", (2, 3, 2))]),
    "mv": (lambda m, a, b: m.mv(a, b), [X43, ("f", (3,))]),
    "dot": (lambda m, a, b: m.dot(a, b), [("f", (3,)), ("f", (3,))]),
    "vdot": (lambda m, a, b: m.vdot(a, b), [("f", (3,)), ("f", (3,))]),
    "inner": (lambda m, a, b: m.inner(a, b), [X43, ("f", (2, 3))]),
    "outer": (lambda m, a, b: m.outer(a, b), [("f", (4,)), ("f", (3,))]),
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0), [("f", (4, 2)), X43, ("f", (3, 2))]),
    "addmv": (lambda m, c, a, b: m.addmv(c, a, b), [("f", (4,)), X43, ("f", (3,))]),
    "addr": (lambda m, c, a, b: m.addr(c, a, b), [X43, ("f", (4,)), ("f", (3,))]),
    "baddbmm": (lambda m, c, a, b: m.baddbmm(c, a, b), [("f", (2, 4, 2)), ("f", (2, 4, 3)), ("f", (2, 3, 2))]),
    "addbmm": (lambda m, c, a, b: m.addbmm(c, a, b), [("f", (4, 2)), ("f", (2, 4, 3)), ("f", (2, 3, 2))]),
    "addmm_beta0": (lambda m, c, a, b: m.addmm(c, a, b, beta=0), [("f", (2,)), X43, ("f", (3, 2))]),
    "addr_scaled": (lambda m, c, a, b: m.addr(c, a, b, beta=2.0, alpha=0.5), [("f", (3,)), ("f", (4,)), ("f", (3,))]),
    "baddbmm_scaled": (lambda m, c, a, b: m.baddbmm(c, a, b, beta=0.5, alpha=-1.0),
                       [("f", (4, 2)), ("f", (2, 4, 3)), ("f", (2, 3, 2))]),
    "addbmm_scaled": (lambda m, c, a, b: m.addbmm(c, a, b, beta=0, alpha=3.0),
                      [("f", (4, 2)), ("f", (2, 4, 3)), ("f", (2, 3, 2))]),
    "nansum": (lambda m, x: m.nansum(x), [("nan", (4, 3))]),
    "nansum_dim": (lambda m, x: m.nansum(x, 1, keepdim=True), [("nan", (4, 3))]),
    "nansum_dtype": (lambda m, x: m.nansum(x, 0, dtype=m.float32), [("nan", (4, 3))]),
    "kron": (lambda m, a, b: m.kron(a, b), [("f", (2, 2)), ("f", (2, 3))]),
    "tensordot": (lambda m, a, b: m.tensordot(a, b, dims=1), [X43, ("f", (3, 2))]),
    "einsum": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), [X43, ("f", (3, 2))]),
    "linear": (lambda m, x, w, b: _f(m).linear(x, w, b), [X43, ("f", (2, 3)), ("f", (2,))]),
    "linear_3d": (lambda m, x, w, b: _f(m).linear(x, w, b), [("f", (2, 4, 3)), ("f", (2, 3)), ("f", (2,))]),
    "linear_no_bias": (lambda m, x, w: _f(m).linear(x, w), [X43, ("f", (2, 3))]),
    "bilinear": (lambda m, a, b, w, bias: _f(m).bilinear(a, b, w, bias),
                 [X43, ("f", (4, 2)), ("f", (5, 3, 2)), ("f", (5,))]),
    # linear algebra
    "cross": (lambda m, a, b: m.linalg.cross(a, b), [X43, X43]),
    "trace": (lambda m, a: m.trace(a), [("f", (3, 3))]),
    "tril": (lambda m, a: m.tril(a), [("f", (3, 3))]), "triu": (lambda m, a: m.triu(a, 1), [("f", (3, 3))]),
    "inv": (lambda m, a: m.linalg.inv(a), [("spd", (3, 3))]),
    "det": (lambda m, a: m.linalg.det(a), [("spd", (3, 3))]),
    "slogdet": (lambda m, a: m.linalg.slogdet(a)[1], [("spd", (3, 3))]),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), [("spd", (3, 3)), ("f", (3, 2))]),
    "cholesky": (lambda m, a: m.linalg.cholesky(a), [("spd", (3, 3))]),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(a, upper=True), [("spd", (3, 3))]),
    "qr": (lambda m, a: m.linalg.qr(a)[1], [X43]),
    "eigh": (lambda m, a: m.linalg.eigh(a)[0], [("spd", (3, 3))]),
    "svd": (lambda m, a: m.linalg.svd(a, full_matrices=False)[1], [X43]),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), [X43]),
    "pinv": (lambda m, a: m.linalg.pinv(a), [X43]),
    "pinv_hermitian": (lambda m, a: m.linalg.pinv(a, hermitian=True), [("spd", (3, 3))]),
    "matrix_norm": (lambda m, a: m.linalg.matrix_norm(a), [X43]),
    "matrix_norm_nuc": (lambda m, a: m.linalg.matrix_norm(a, "nuc"), [X43]),
    "matrix_norm_2": (lambda m, a: m.linalg.matrix_norm(a, 2), [X43]),
    "vector_norm": (lambda m, a: m.linalg.vector_norm(a), [X43]),
    "vector_norm_3": (lambda m, a: m.linalg.vector_norm(a, 3, dim=1), [X43]),
    "matrix_power": (lambda m, a: m.linalg.matrix_power(a, 3), [("f", (3, 3))]),
    "matrix_exp": (lambda m, a: m.linalg.matrix_exp(a), [("f", (3, 3))]),
    "cdist": (lambda m, a, b: m.cdist(a, b), [X43, ("f", (2, 3))]),
    "multi_dot": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [X43, ("f", (3, 2)), ("f", (2, 5))]),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [X43, ("f", (4, 2))]),
    "lstsq_vector": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [X43, ("f", (4,))]),
    "lstsq_vectors": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [("f", (2, 4, 3)), ("f", (2, 4))]),
    "lstsq_wide": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [("f", (2, 3)), ("f", (2, 2))]),
}

# Ops ember computes as one fused node (or composes) where PyTorch's last node differs: their names are not
# compared (the rest is). PyTorch's names, for the record: rms_norm MulBackward0, instance_norm ViewBackward0,
# einsum and multi_dot a view, bilinear AddBackward0, cdist CdistBackward0.
NAMED_OTHERWISE = {"rms_norm", "rms_norm_plain", "instance_norm", "instance_norm_running", "instance_norm_tracked",
                   "einsum", "multi_dot", "bilinear", "cdist"}


def _make(m, spec, rng):
    kind, shape = spec[0], spec[1]
    if kind == "i":
        return m.tensor(rng.integers(0, spec[2], shape))
    if kind == "ml":
        return m.tensor(np.array([[0, 2, -1], [1, -1, 0], [2, 1, 0], [0, 1, 2]]))
    if kind == "spd":
        b = rng.standard_normal(shape)
        a = b @ b.T + shape[0] * np.eye(shape[0])
    else:
        a = {"f": lambda: rng.standard_normal(shape), "nd": lambda: rng.uniform(0.1, 0.9, shape),
             "p": lambda: rng.uniform(0.1, 0.9, shape), "pos": lambda: rng.uniform(0.5, 2.0, shape),
             "ndpos": lambda: rng.uniform(0.5, 2.0, shape),
             "nan": lambda: np.where(rng.uniform(size=shape) > 0.7, np.nan, rng.standard_normal(shape)),
             "01": lambda: (rng.uniform(size=shape) > 0.5).astype(np.float64),
             "s": lambda: np.where(rng.uniform(size=shape) > 0.5, 1.0, -1.0),
             "nds": lambda: np.where(rng.uniform(size=shape) > 0.5, 1.0, -1.0)}[kind]()
    return m.tensor(a, dtype=m.float64)


def _differentiable(spec) -> bool:
    """Whether PyTorch lets the input need a gradient ("nd...": class weights, running statistics, targets of
    losses PyTorch has no target gradient for)."""
    return spec[0] not in ("i", "ml") and not spec[0].startswith("nd")


def _leaves(node, inputs) -> list[int]:
    """The positions of the inputs whose AccumulateGrad the graph from ``node`` reaches."""
    seen, found, stack = set(), set(), [node]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if type(n).__name__ == "AccumulateGrad":
            found.update(k for k, t in enumerate(inputs) if t is n.variable)
        else:
            stack.extend(f for f, _ in n.next_functions)
    return sorted(found)


def _shapeless(message: str) -> str:
    """The message without the creator (PyTorch names it after the in-place op, ember when saved) and shape
    (PyTorch's node may save a reshaped view)."""
    message = re.sub(r", which is output \d+ of \w+,", "", message)
    return re.sub(r"\[(torch\.\w+|CPU\w+Type) \[[\d, ]*\]\]", r"[\1]", message)


def _run(m, name: str, needing: str, changed):
    """(node name, leaves reached, error message or None, gradients) of op ``name`` under ``m``; ``changed``: the
    position of the input to change in place after forward, "output", or None."""
    fn, specs = OPS[name]
    rng = np.random.default_rng(1)
    inputs = [_make(m, s, rng) for s in specs]
    last = max(k for k, s in enumerate(specs) if _differentiable(s))
    for k, (t, s) in enumerate(zip(inputs, specs)):
        if _differentiable(s) and (needing == "all" or k == {"first": 0, "last": last}[needing]):
            t.requires_grad_()
    out = fn(m, *inputs)
    node = out.grad_fn
    shown = (node.name(), repr(node).split(" object at")[0], _leaves(node, inputs))
    if changed is not None:
        with m.no_grad():
            (out if changed == "output" else inputs[changed]).add_(0)  # the version moves, the values stay
    try:
        (out * m.linspace(0.5, 2.0, out.numel(), dtype=m.float64).reshape(out.shape)).sum().backward()
    except RuntimeError as err:
        return shown, _shapeless(str(err)), None
    return shown, None, [None if t.grad is None else t.grad.detach().numpy() for t in inputs]


# (name, needing, position changed) -> why ember's outcome differs from PyTorch's
_DIFFERS: dict[tuple[str, str, object], str] = {}
_NAME_DIFFERS: dict[tuple[str, str], str] = {}


def _modes(specs):
    """Every floating input needing a gradient; the first alone; the last alone (where they differ)."""
    n = sum(map(_differentiable, specs))
    return ("all", "first", "last") if n > 1 else ("all",)


def _cases():
    for name, (_, specs) in OPS.items():
        for needing in _modes(specs):
            reason = _NAME_DIFFERS.get((name, needing))
            marks = pytest.mark.xfail(strict=True, reason=reason) if reason else ()
            yield pytest.param(name, needing, id=f"{name}-{needing}", marks=marks)


def _changes():
    for name, (_, specs) in OPS.items():
        for needing in _modes(specs):
            for changed in [*range(len(specs)), "output"]:
                reason = _DIFFERS.get((name, needing, changed))
                marks = pytest.mark.xfail(strict=True, reason=reason) if reason else ()
                yield pytest.param(name, needing, changed, id=f"{name}-{needing}-{changed}", marks=marks)


@pytest.mark.parametrize("name, needing", list(_cases()))
def test_node_name_leaves_and_gradients_are_pytorchs(name, needing):
    (t_name, t_repr, t_leaves), _, t_grads = _run(torch, name, needing, None)
    (e_name, e_repr, e_leaves), _, e_grads = _run(ember, name, needing, None)
    if name not in NAMED_OTHERWISE:
        assert (e_name, e_repr) == (t_name, t_repr)
    assert e_leaves == t_leaves
    for e, t in zip(e_grads, t_grads):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-10, equal_nan=True)


@pytest.mark.parametrize("name, needing, changed", list(_changes()))
def test_a_tensor_changed_in_place_before_backward_is_refused_where_pytorch_refuses(name, needing, changed):
    _, t_err, t_grads = _run(torch, name, needing, changed)
    _, e_err, e_grads = _run(ember, name, needing, changed)
    assert (e_err is None) == (t_err is None), f"torch: {t_err}\nember: {e_err}"
    if t_err is not None:
        assert e_err == t_err
        return
    for e, t in zip(e_grads, t_grads):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-10, equal_nan=True)


def _chain(node) -> list[str]:
    """The names along the first edges from ``node`` to a leaf."""
    names = []
    while node is not None:
        names.append(str(node.name()).split("::")[-1])
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_each_node_of_an_unreduced_3d_class_loss_is_named(fn):
    chains = []
    for m in (torch, ember):
        x = m.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)), requires_grad=True)
        x_in = x.log_softmax(1) if fn == "nll_loss" else x
        out = getattr(_f(m), fn)(x_in, m.zeros(2, 4, dtype=m.long), reduction="none")
        chains.append(_chain(out.grad_fn)[:2])
    assert chains[1] == chains[0]


def test_two_training_forwards_of_one_batch_norm_before_backward():
    """The running statistics a training forward updates keep their versions (PyTorch's kernel writes them in
    place within the op): a second forward before backward leaves the first one's node valid, while a change of
    them by the program is its error."""
    results = []
    for m in (torch, ember):
        m.manual_seed(0)
        bn = m.nn.BatchNorm1d(3).double()
        x = m.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
        version = bn.running_mean._version
        y1 = bn(x)
        y2 = bn(x * 2)
        (y1.sum() + (y2 * y2).sum()).backward()
        results.append((bn.running_mean._version - version, x.grad.detach().numpy().copy()))
        y3 = bn(x)
        with m.no_grad():
            bn.running_var.mul_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y3.sum().backward()
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-9, atol=1e-12)
