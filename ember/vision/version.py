"""The torchvision release whose API ember.vision follows (the one paired with ember's PyTorch API level)."""

from ..version import EMBER_VERSION

__version__ = f"0.28.0+ember{EMBER_VERSION}"
