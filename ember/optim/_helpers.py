"""Small pieces shared by the Adam-family optimizers (Adam, Adamax, NAdam, RAdam, SparseAdam): argument checks, lerp."""

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
