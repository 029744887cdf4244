"""Embedding: a lookup table of ``num_embeddings`` vectors of size ``embedding_dim``; EmbeddingBag: its bags' sums,
means or maxima."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import init
from .._ops.embedding_bag import embedding_bag
from .._ops.sparse import embedding
from ..parameter import Parameter
from .linear import _empty_param
from .module import Module


def _checked_padding_idx(padding_idx: int | None, num: int, label: str) -> int | None:
    """padding_idx in [0, num) (a negative one counts from the end); PyTorch's AssertionError outside [-num, num)."""
    if padding_idx is None:
        return None
    if not -num <= padding_idx < num:
        raise AssertionError(f"{label} must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _table(module: Module, _weight: Tensor | None, requires_grad: bool, dtype, device) -> None:
    """The lookup table: a fresh (num_embeddings, embedding_dim) weight, reset, or the given ``_weight``."""
    shape = (module.num_embeddings, module.embedding_dim)
    if _weight is None:
        module.weight = _empty_param(*shape, dtype=dtype, device=device)
        module.reset_parameters()
    else:
        if tuple(_weight.shape) != shape:
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        module.weight = Parameter(_weight, requires_grad=requires_grad)


class Embedding(Module):
    """Rows of ``weight`` (init N(0, 1), the ``padding_idx`` row zero) looked up by integer indices."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _checked_padding_idx(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        _table(self, _weight, not _freeze, dtype, device)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (2-D); frozen (requires_grad=False) by default."""
        if embeddings.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (mode='mean' by default), without the per-lookup tensor:
    ``forward(input, offsets=None, per_sample_weights=None)``, input (B, L) or 1-D with bag ``offsets``.
    Weight init N(0, 1), the ``padding_idx`` row zero; padding lookups are left out of their bag."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _checked_padding_idx(padding_idx, num_embeddings, "padding_idx")
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        _table(self, _weight, True, dtype, device)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    reset_parameters = Embedding.reset_parameters

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                             self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (2-D); frozen (requires_grad=False) by default."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings, include_last_offset,
                  padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
