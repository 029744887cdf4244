"""The neural-network functions PyTorch also exposes at the top level: ``torch.embedding``, ``torch.conv2d``,
``torch.layer_norm``, ``torch.dropout`` ... (its native operators, which ``torch.nn.functional`` wraps or re-exports).

Programs call them directly (``torch.embedding(weight, indices)`` in custom autograd tests, ``torch.conv2d`` in
functional code). Where PyTorch's ``torch.nn.functional`` function *is* the top-level one (the convolutions,
``pixel_shuffle``, ``prelu`` ...) the name is ``ember.nn.functional``'s function itself; the others keep PyTorch's
native signatures, which differ from ``torch.nn.functional``'s: ``torch.embedding`` takes the weight first and
reads any negative ``padding_idx`` as none, ``torch.dropout`` needs ``train``, ``torch.batch_norm`` takes the
weight before the running statistics, and the normalizations take a trailing ``cudnn_enabled`` that the CPU ignores.
This module loads on the first use of one of these names (ember/__init__.py's ``_LAZY``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._size import c_type_name
from ._tensor import Tensor
from .nn import functional as F
from .nn._ops.embedding_bag import embedding_bag_native
from .nn._ops.norm import batch_norm_native, instance_norm_native

# PyTorch's torch.nn.functional re-exports these top-level operators unchanged (F.conv2d is torch.conv2d).
SAME_AS_FUNCTIONAL = ("adaptive_avg_pool1d", "avg_pool1d", "bilinear", "celu_", "conv1d", "conv2d", "conv3d",
                      "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "hardshrink", "pixel_shuffle",
                      "pixel_unshuffle", "prelu", "selu_", "threshold_", "channel_shuffle")


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """``torch.embedding``: rows of ``weight``; a negative ``padding_idx`` is none (the native operator's -1)."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


embedding_bag = embedding_bag_native  # (torch.embedding_bag: the weight first, the mode a number, four results)


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-05, cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    return F.rms_norm(input, normalized_shape, weight, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool) -> Tensor:
    """``torch.batch_norm``: the weight and bias come before the running statistics (``F.batch_norm``'s order is
    the reverse), and every argument is required. The native op: without ``F.batch_norm``'s checks of the batch
    size and eps (it computes a batch of one in training, an eps <= 0)."""
    return batch_norm_native(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return instance_norm_native(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train)


def _max_pool(functional):
    def max_pool(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = (),
                 padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                 ceil_mode: bool = False) -> Tensor:
        # The native operator's empty stride is the kernel size (F's None); it gives no indices.
        return functional(input, kernel_size, stride if stride not in ((), []) else None, padding, dilation,
                          ceil_mode)
    max_pool.__name__ = max_pool.__qualname__ = functional.__name__
    max_pool.__doc__ = f"``torch.{functional.__name__}``: ``F.{functional.__name__}`` without ``return_indices``."
    return max_pool


def max_pool1d_with_indices(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = (),
                           padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                           ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``torch.max_pool1d_with_indices``: the values and their indices, always (a plain tuple, as PyTorch's)."""
    return tuple(F.max_pool1d(input, kernel_size, stride if stride not in ((), []) else None, padding, dilation,
                              ceil_mode, return_indices=True))


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int]) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: the values and their indices, always (``F``'s gives indices on request)."""
    return tuple(F.adaptive_max_pool1d(input, output_size, return_indices=True))


max_pool1d = _max_pool(F.max_pool1d)
max_pool2d = _max_pool(F.max_pool2d)
max_pool3d = _max_pool(F.max_pool3d)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu(input, alpha)


def selu(input: Tensor) -> Tensor:
    return F.selu(input)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return F.threshold(input, threshold, value)


# --------------------------------------------------------------------- losses, with an int reduction
# ``reduction`` left out: PyTorch's binding of these functions gives the unreduced loss (its stubs and schema name
# the mean, but torch.kl_div(x, t) is torch.kl_div(x, t, 0)), so an omitted reduction is 0 here too
_OMITTED = 0


def _reduction(op: str, reduction, position: int) -> str:
    """The native losses' ``reduction``, an int as PyTorch's ``at::Reduction``: 1 the mean, 2 the sum, any other
    the unreduced loss (its ``apply_loss_reduction``); anything but an int is PyTorch's TypeError."""
    if reduction.__class__ is not int:
        raise TypeError(f"{op}(): argument 'reduction' (position {position}) must be int, not "
                        f"{c_type_name(reduction)}")
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def kl_div(input: Tensor, target: Tensor, reduction: int = _OMITTED, *, log_target: bool = False) -> Tensor:
    """``torch.kl_div``: ``F.kl_div`` with an int reduction (no 'batchmean'), without its warning for the mean."""
    from .nn._ops.loss import kl_div_reduced

    return kl_div_reduced(input, target, _reduction("kl_div", reduction, 3), log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = _OMITTED) -> Tensor:
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits", reduction, 5),
        pos_weight=pos_weight)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = _OMITTED) -> Tensor:
    from .nn._ops.loss_margin import ranking_loss  # (PyTorch's native loss: no check of the dimensions)

    return ranking_loss(input1, input2, target, margin, _reduction("margin_ranking_loss", reduction, 5))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-06, swap: bool = False, reduction: int = _OMITTED) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction, 8))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``torch.poisson_nll_loss``: every argument required (``F.poisson_nll_loss`` has defaults)."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction, 6))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = _OMITTED) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction, 5))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = _OMITTED) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction, 4))


# --------------------------------------------------------------------- rrelu
def _rrelu(input: Tensor, lower: float, upper: float, training: bool, generator, inplace: bool) -> Tensor:
    """``F.rrelu``, its slopes drawn from ``generator`` (the default one when None)."""
    from .random import default_generator

    if generator is None or generator is default_generator:
        return F.rrelu(input, lower, upper, training, inplace)
    kept = default_generator.get_state()  # (F.rrelu draws from the default generator: lent the given one's state)
    default_generator.set_state(generator.get_state())
    try:
        return F.rrelu(input, lower, upper, training, inplace)
    finally:
        generator.set_state(default_generator.get_state())
        default_generator.set_state(kept)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """``torch.rrelu``: ``F.rrelu`` with a ``generator`` for the training slopes and no ``inplace``."""
    return _rrelu(input, lower, upper, training, generator, False)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    return _rrelu(input, lower, upper, training, generator, True)


globals().update({name: getattr(F, name) for name in SAME_AS_FUNCTIONAL})
