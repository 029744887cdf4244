"""PyTorch's memory formats (``torch.channels_last`` ...): names ember accepts and keeps no layout for.

``x.to(memory_format=torch.channels_last)``, ``x.contiguous(memory_format=...)`` and
``model.to(memory_format=...)`` run and return the same values; ember keeps every
tensor in NumPy's row-major layout, so the format changes speed in PyTorch, not
results, and changes nothing in ember.
"""

from __future__ import annotations

from ._shown_name import package_name


class memory_format:
    """A tensor memory layout name, like ``torch.memory_format``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{package_name()}.{self.name}"

    def __reduce__(self):
        return self.name


def strides_in_channels_last_order(a, fmt: memory_format) -> bool:
    """Whether array ``a``'s strides are ``fmt``'s (channels_last: 4 dims, channels_last_3d: 5) without gaps:
    channels fastest, then the spatial dims from last to first, then the batch (size-1 dims are free)."""
    if a.ndim != (4 if fmt.name == "channels_last" else 5):
        return False
    expected = 1
    for d in (1, *range(a.ndim - 1, 1, -1), 0):
        if a.shape[d] != 1:
            if a.strides[d] != expected * a.itemsize:
                return False
            expected *= a.shape[d]
    return True


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
