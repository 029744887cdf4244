"""``ember.optim.adamw``: where PyTorch defines ``AdamW`` (ember's lives beside ``Adam``)."""

from .adam import AdamW

__all__ = ["AdamW"]
