"""``ember.nn.functional`` (import as ``F``): the stateless form of every layer, loss and activation.

The ops themselves live in ``ember/nn/_ops/`` (one family per file); the
elementwise basics (relu, tanh, sigmoid, softmax) are ember's core ops.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.distance import cosine_similarity, pairwise_distance, pdist
from ..ops.reduction import norm as _norm
from ..ops.unary import relu as _relu
from ..ops.unary import sigmoid, tanh
from ._ops.activation import elu, gelu, hardtanh, leaky_relu, logsigmoid, relu6, silu, softplus
from ._ops.activation_inplace import celu_, elu_, hardtanh_, leaky_relu_, relu_, rrelu_, selu_, threshold_
from ._ops.activation_more import (
    celu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    log_softmax,
    mish,
    prelu,
    rrelu,
    selu,
    softmax,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)
from ._ops.adaptive_max_pool import (
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
)
from ._ops.attention import scaled_dot_product_attention
from ._ops.channel_shuffle import channel_shuffle
from ._ops.classification import cross_entropy, nll_loss
from ._ops.conv import conv1d, conv2d, conv3d
from ._ops.conv_transpose import conv_transpose1d, conv_transpose2d, conv_transpose3d
from ._ops.ctc import ctc_loss
from ._ops.dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ._ops.embedding_bag import embedding_bag
from ._ops.fold import fold, unfold
from ._ops.grid_sample import affine_grid, grid_sample
from ._ops.interpolate import interpolate, upsample, upsample_bilinear, upsample_nearest
from ._ops.linear import bilinear, linear
from ._ops.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from ._ops.loss_likelihood import gaussian_nll_loss, poisson_nll_loss
from ._ops.loss_margin import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._ops.loss_multiclass import multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss
from ._ops.lp_pool import lp_pool1d, lp_pool2d, lp_pool3d
from ._ops.max_unpool import max_unpool1d, max_unpool2d, max_unpool3d
from ._ops.multihead import multi_head_attention_forward
from ._ops.norm import batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, rms_norm
from ._ops.padding import pad
from ._ops.pixel_shuffle import pixel_shuffle, pixel_unshuffle
from ._ops.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
)
from ._ops.sparse import embedding, one_hot


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); ``inplace=True`` overwrites ``input``."""
    return input.relu_() if inplace else _relu(input)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``. With ``out``: written there by ``div``'s out= (as PyTorch's: its rules
    and its refusal under autograd, naming div)."""
    denominator = _norm(input, p, dim, keepdim=True).clamp(min=eps)
    if out is not None:
        from .. import div

        return div(input, denominator.expand_as(input), out=out)
    return input / denominator


__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "batch_norm", "bilinear",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv1d", "conv2d", "cross_entropy", "dropout",
    "dropout2d", "elu", "embedding", "gelu", "group_norm", "hardtanh", "huber_loss", "kl_div", "l1_loss",
    "layer_norm", "leaky_relu", "linear", "log_softmax", "logsigmoid", "max_pool1d", "max_pool2d", "mse_loss",
    "nll_loss", "normalize", "one_hot", "pad", "relu", "relu6", "sigmoid", "silu", "smooth_l1_loss", "softmax",
    "softplus", "tanh", "rms_norm",
    "cosine_similarity", "pairwise_distance", "pdist",
    "scaled_dot_product_attention", "multi_head_attention_forward",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "instance_norm",
    "celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "mish", "prelu", "rrelu", "selu", "softmin",
    "softshrink", "softsign", "tanhshrink", "threshold",
    "embedding_bag", "ctc_loss", "local_response_norm",
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
    "channel_shuffle", "fold", "unfold", "grid_sample", "affine_grid",
    "celu_", "elu_", "hardtanh_", "leaky_relu_", "relu_", "rrelu_", "selu_", "threshold_",
    "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool3d", "gumbel_softmax", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "poisson_nll_loss", "gaussian_nll_loss",
    "dropout1d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
]


from .._arg_aliases import accept_torch_names as _accept_torch_names  # noqa: E402
from .._missing import module_getattr as _module_getattr  # noqa: E402

_accept_torch_names(globals(), "nn.functional.")  # PyTorch's keyword names: one_hot(input=t)

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
