"""``torch.nn.modules.channelshuffle``'s path: ``ChannelShuffle``, defined with the pixel shuffles in
``pixelshuffle.py``, importable (and unpickled) from here as in PyTorch."""

from .pixelshuffle import ChannelShuffle

__all__ = ["ChannelShuffle"]
