"""torchvision.ops' losses and stochastic depth: pure tensor functions, differentiable."""

from __future__ import annotations

import ember

from ... import nn
from ..._tensor import Tensor
from ...nn import functional as F

__all__ = ["StochasticDepth", "sigmoid_focal_loss", "stochastic_depth"]


def sigmoid_focal_loss(inputs: Tensor, targets: Tensor, alpha: float = 0.25, gamma: float = 2,
                       reduction: str = "none") -> Tensor:
    """Focal loss (Lin et al. 2017) on logits: BCE-with-logits scaled by ``(1 - p_t) ** gamma``.

    ``alpha`` in ``[0, 1]`` weights positives against negatives (a negative ``alpha`` turns weighting off);
    ``reduction`` is ``'none'`` (the default, as torchvision), ``'mean'`` or ``'sum'``.
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
                         "'none', 'mean', 'sum'")
    p = ember.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    """Randomly zero whole residual branches (Huang et al. 2016) and scale the rest by ``1 / (1 - p)``.

    ``mode='row'`` draws one keep/drop per sample (first dimension), ``'batch'`` one for the whole batch. The
    identity when not ``training`` or ``p == 0``. Draws from ember's generator (not PyTorch's stream).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    size = [input.shape[0]] + [1] * (input.dim() - 1) if mode == "row" else [1] * input.dim()
    noise = ember.empty(size, dtype=input.dtype, device=input.device).bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class StochasticDepth(nn.Module):
    """``stochastic_depth`` as a module, active in training mode."""

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p, self.mode = p, mode

    def forward(self, input: Tensor) -> Tensor:
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
