"""``channel_shuffle`` (``torch.channel_shuffle``, which ``F.channel_shuffle`` is): ShuffleNet's interleaving of the
channels of ``groups`` groups, a reshape, a swap and a reshape. The result is laid out as PyTorch's CPU kernel lays it
out: channels-last for a channels-last input (its suggested memory format), else row-major."""

from __future__ import annotations

from ..._memory_format import array_memory_format, laid_out
from ..._size import c_type_name
from ..._tensor import Tensor
from ...autograd.graph import Node, torch_named


def _shuffled(a, groups: int):
    """The channels (dim 1) of ``a`` in ``groups`` groups, interleaved: channel g * (C / groups) + k goes to
    k * groups + g."""
    n, c = a.shape[:2]
    return a.reshape(n, groups, c // groups, *a.shape[2:]).swapaxes(1, 2).reshape(a.shape)


@torch_named("ChannelShuffleBackward0")
class ChannelShuffle(Node):
    def forward(self, x, groups):
        self.groups = groups
        fmt = array_memory_format(x)
        return laid_out(_shuffled(x, groups), fmt)

    def backward(self, g):  # (the inverse permutation: the shuffle of C / groups groups)
        return (_shuffled(g, g.shape[1] // self.groups),)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``torch.channel_shuffle`` (``F.channel_shuffle``): ShuffleNet's interleaving of the channels of ``groups``
    groups, with PyTorch's checks."""
    if groups.__class__ is not int:
        raise TypeError(f"channel_shuffle(): argument 'groups' (position 2) must be int, not "
                        f"{c_type_name(groups)}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")
    return ChannelShuffle.apply(input, groups=groups)
