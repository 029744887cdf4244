"""Losses over a row of class scores: multi_margin (one target class), multilabel_margin (a list of target
classes) and multilabel_soft_margin (a 0/1 target per class).

Composed of differentiable ember ops, so first and higher-order gradients follow from those ops' (PyTorch's
multi_margin and multilabel_margin have no second derivative; ember's have). The class masks are plain arrays.
"""

from __future__ import annotations

from ..._autocast import full_precision
from ..._backend import xp
from ..._dtype import SCALAR_TYPE_NAMES, int64
from ..._tensor import Tensor
from ...autograd.graph import shown_as, version_checked
from ...ops.indexing import where
from .activation import logsigmoid
from .loss import checked_reduction, reduce_loss, refuse_grad


def _score_rows(kernel: str, input: Tensor) -> tuple[int, int]:
    """(rows, classes) of an (N, C), (C,) or 0-d score tensor, checked as PyTorch's margin kernels check it."""
    shape = tuple(input.shape)
    if not (len(shape) == 0 or (len(shape) <= 2 and shape[-1] != 0)):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(shape)}")
    if not input.is_floating_point():
        raise NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_TYPE_NAMES[input.dtype.name]}\'')
    return (shape[0] if len(shape) == 2 else 1), (shape[-1] if shape else 1)


def _expect_type(t: Tensor, dtype) -> None:
    if t.dtype != dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[t.dtype.name]}")


@full_precision
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: sum over classes d != y of w[y] max(0, margin - x[y] + x[d])^p, over C.

    ``input`` (N, C) or (C,) scores, ``target`` (N,) (or 0-d) int64 classes, ``weight`` (C,) per target class
    (it receives no gradient, as in PyTorch). p is 1 or 2. The mean of an empty batch is NaN (PyTorch leaves
    it unset)."""
    reduction = checked_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    n, c = _score_rows("multi_margin_loss_cpu_kernel", input)
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _expect_type(target, int64)
    if weight is not None:
        _expect_type(weight, input.dtype)
    refuse_grad("multi_margin_loss", "weight", weight)
    t = target._data.reshape(n)
    if ((t < 0) | (t >= c)).any():
        raise RuntimeError("target out of range")
    x = input.reshape(n, c)
    chosen = Tensor._make(t.reshape(n, 1))
    z = (margin - x.gather(1, chosen) + x).relu()  # margin - x[y] + x[d], counted where positive
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[chosen]
    loss = where(Tensor._make(xp.arange(c) != t[:, None]), z, 0).sum(1) / c
    # (N,) for a 1-D target, () for a 0-d one; the input, target and weight checked at backward, as PyTorch saves
    # them (the composition itself reads only the relu's result)
    out = version_checked(reduce_loss(loss.reshape(target.shape), reduction), input, target, weight)
    return shown_as(out, "MultiMarginLossBackward0")


@full_precision
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """sum over target classes j and non-target classes d of max(0, 1 - (x[j] - x[d])), over C.

    ``target`` (the input's shape, int64) lists each row's target classes, ended by the first -1 (a class
    listed twice counts twice, as in PyTorch). 'none' gives (N,) for (N, C) input, a 0-d loss for (C,). The
    mean of an empty batch is NaN (PyTorch leaves it unset)."""
    reduction = checked_reduction(size_average, reduce, reduction)
    n, c = _score_rows("multilabel_margin_loss_forward_out_frame", input)
    consistent = target.shape == input.shape if input.dim() == 2 else target.dim() <= 1 and target.numel() == c
    if not consistent:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    _expect_type(target, int64)
    t = target._data.reshape(n, c)
    if ((t < -1) | (t >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    listed = xp.cumprod(t != -1, axis=1).astype(bool)  # the entries before each row's first -1
    k = int(listed.sum(1).max()) if n else 0
    is_target = xp.zeros((n, c), dtype=bool)
    is_target[xp.nonzero(listed)[0], t[listed]] = True
    x = input.reshape(n, c)
    chosen = Tensor._make(xp.where(listed[:, :k], t[:, :k], 0))
    z = 1 - x.gather(1, chosen).unsqueeze(2) + x.unsqueeze(1)  # (N, K, C): 1 - x[j] + x[d]
    pairs = Tensor._make(listed[:, :k, None] & ~is_target[:, None, :])
    loss = where(pairs, z.relu(), 0).sum((1, 2)) / c
    # the input and target checked at backward, as PyTorch saves them
    out = version_checked(reduce_loss(loss.reshape(()) if input.dim() <= 1 else loss, reduction), input, target)
    return shown_as(out, "MultilabelMarginLossBackward0")


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """Per-class logistic loss -(y log sigmoid(x) + (1 - y) log sigmoid(-x)) times ``weight``, averaged over the
    last (class) dimension of ``input``: one loss per sample. Target and weight broadcast."""
    reduction = checked_reduction(size_average, reduce, reduction)
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss.sum(input.dim() - 1) / input.shape[-1], reduction)
