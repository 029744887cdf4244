"""``GradBucket``: one bucket of gradients as a DDP communication hook sees it (``torch.distributed.GradBucket``)."""

from __future__ import annotations

from .._tensor import Tensor


class GradBucket:
    """A bucket's flat gradient buffer, the parameters it covers, and where each gradient lies in it.

    ``buffer()`` is this rank's gradients of the bucket end to end (a 1-D tensor); ``gradients()`` are views of it
    shaped like ``parameters()``; writing into either writes the bucket. ``is_last()`` is True for the bucket
    reduced last in each backward (PyTorch's bucket order: the last one holds the first-registered parameters).

    Difference from PyTorch: PyTorch lays a bucket out again after the first iteration (with ``static_graph``,
    the second; never with ``find_unused_parameters`` alone), in the order its gradients became ready then; ember
    keeps the layout it made at construction (registration order), so ``gradients()`` lists them in that order.
    ``_ready_order`` (positions in ``gradients()``) is PyTorch's order, for hooks whose result depends on it
    (PowerSGD's random draws); None until PyTorch would have rebuilt the bucket.
    """

    def __init__(self, index: int, buffer: Tensor, parameters: list[Tensor], offsets: list[int], is_last: bool,
                 ready_order: list[int] | None = None):
        self._index, self._buffer, self._parameters = index, buffer, parameters
        self._offsets, self._is_last = offsets, is_last
        self._ready_order = ready_order

    def index(self) -> int:
        return self._index

    def buffer(self) -> Tensor:
        return self._buffer

    def gradients(self) -> list[Tensor]:
        flat = self._buffer._data
        # (each laid out as its slot of the gradient store: a channels-last parameter's with its strides)
        return [Tensor._make(p._grad_slot[0].shaped(flat[o:o + p.numel()], p._grad_slot[1]))
                for o, p in zip(self._offsets, self._parameters)]

    def parameters(self) -> list[Tensor]:
        return list(self._parameters)

    def is_last(self) -> bool:
        return self._is_last

    def set_buffer(self, buffer: Tensor) -> None:
        """Make ``buffer`` the bucket's buffer (``buffer()`` returns it from now on, as PyTorch's does; its dtype
        may differ, as the compression wrappers' does). DDP takes the reduced values from the hook's Future."""
        if buffer.numel() != self._buffer.numel():
            raise ValueError(f"GradBucket.set_buffer: the bucket holds {self._buffer.numel()} values, the new "
                             f"buffer {buffer.numel()}")
        self._buffer = buffer
