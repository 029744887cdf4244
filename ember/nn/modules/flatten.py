"""``torch.nn.modules.flatten``'s path: ``Flatten`` and ``Unflatten``, defined with the shape layers in ``linear.py``,
importable (and unpickled) from here as in PyTorch."""

from .linear import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
