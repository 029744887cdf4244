"""Loss modules: each stores its options (class weights as buffers, like PyTorch) and calls the functional."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .._ops.loss import legacy_reduction
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above (beta=1.0 by default)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, delta-scaled linear above (delta=1.0 by default)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy on probabilities."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross-entropy, numerically stable; ``pos_weight`` weighs positives."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities (class dim 1)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL in one fused op; class-index or class-probability targets, label smoothing."""

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class KLDivLoss(_Loss):
    """KL divergence of ``target`` from log-probabilities ``input``; 'batchmean' is the mathematically correct mean."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CTCLoss(_Loss):
    """Connectionist temporal classification: ``forward(log_probs, targets, input_lengths, target_lengths)`` with
    log_probs (T, N, C) from log_softmax; class ``blank`` (0) is the blank."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
