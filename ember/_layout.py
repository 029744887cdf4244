"""``torch.strided`` / ``torch.sparse_coo`` / ``torch.sparse_csr`` / ``torch.sparse_csc``: how a tensor's
elements are stored (``Tensor.layout``)."""

from __future__ import annotations


class Layout:
    """A tensor layout; compares by identity, as PyTorch's do."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name  # the module-level object of that name: unpickles to the same layout


strided = Layout("strided")
sparse_coo = Layout("sparse_coo")
sparse_csr = Layout("sparse_csr")
sparse_csc = Layout("sparse_csc")
