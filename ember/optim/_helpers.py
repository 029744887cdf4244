"""Small pieces shared by the Adam-family optimizers (Adam, Adamax, NAdam, RAdam, SparseAdam): argument checks,
the moment updates, the references' weight decay."""

from __future__ import annotations

from .._backend import xp


def check_betas(betas: tuple[float, float]) -> None:
    """PyTorch's ``ValueError("Invalid beta parameter at index i: b")`` unless each beta is in [0, 1)."""
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def lerp_(m, g, weight: float, tmp) -> None:
    """``m <- m + weight * (g - m)`` in place (PyTorch's ``lerp_`` for weight < 0.5); ``tmp`` is scratch."""
    xp.subtract(g, m, out=tmp)
    tmp *= weight
    m += tmp


def second_moment_(v, g, beta2: float, tmp) -> None:
    """``v <- beta2 * v + (1 - beta2) * g^2`` in place; ``tmp`` is scratch."""
    v *= beta2
    xp.multiply(g, g, out=tmp)
    tmp *= 1 - beta2
    v += tmp


def adam_family_grad(param, grad, *, lr: float, weight_decay: float, decoupled_weight_decay: bool):
    """The references' weight decay (PyTorch's order): AdamW's ``param *= 1 - lr * weight_decay`` in place when
    ``decoupled_weight_decay``, else the L2 term ``grad + weight_decay * param``; returns the gradient to follow."""
    if weight_decay != 0:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            grad = grad + weight_decay * param
    return grad
