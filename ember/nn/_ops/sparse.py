"""Embedding lookup and one_hot."""

from __future__ import annotations

from ..._backend import xp
from ..._dtype import bool_
from ..._kernels import embedding as compiled
from ..._kernels._omp import region_threads
from ..._kernels.policy import policy
from ..._meta import is_meta, meta_array
from ..._parallel import parallel_for
from ..._sparse import SparseCOO, compiled_rows, scatter_rows
from ..._tensor import Tensor
from ...autograd.graph import Node, leaf_slot_to_fill, torch_named, version_checked
from ...autograd.recorded import HigherOrderError, is_recorded
from ...autograd.saved_attributes import saved_tensor


@torch_named("EmbeddingBackward0")
class Embedding(Node):
    linear = True
    # (PyTorch's names of what its node saves: the indices, its options, the table's rows; without a padding_idx
    # its -1, read unsigned as its other int64 arguments)
    _saved_indices, _raw_saved_indices = saved_tensor(0)
    _saved_padding_idx = property(lambda node: 2 ** 64 - 1 if node.padding_idx is None else node.padding_idx)
    _saved_scale_grad_by_freq = property(lambda node: node.scale)
    _saved_sparse = property(lambda node: node.sparse)
    _saved_weight_sym_argsize_0 = property(lambda node: node.num)

    def forward(self, w, idx, padding_idx, scale_grad_by_freq, sparse=False):
        self.saved, self.num = (idx,), w.shape[0]
        self.padding_idx, self.scale, self.sparse = padding_idx, scale_grad_by_freq, sparse
        if (w.__class__ is _ndarray and w.ndim == 2 and idx.size * w.shape[1] < policy.min_parallel_pass_elements
                and not policy.omp):
            # a lookup no thread split would take: NumPy's take, the same rows (a copy) as the compiled gather's at
            # less than its dispatch (64 of 128 floats: 0.8 against 2.5 µs with the split's tests; as fast up to
            # the split's size at one thread)
            return w.take(idx, 0)
        if compiled_rows(w) and w.flags.c_contiguous:  # split among the threads by lookups
            flat = idx.reshape(-1)
            out = xp.empty((flat.size, w.shape[1]), w.dtype)
            if region_threads(flat.size, out.size):  # one region on numba's OpenMP threads (policy.omp)
                compiled.gather_rows.parallel(w, flat, out, 0, flat.size)
            else:
                parallel_for(lambda lo, hi: compiled.gather_rows(w, flat, out, lo, hi), flat.size, out.size,
                             policy.min_parallel_pass_elements)
            return out.reshape((*idx.shape, w.shape[1]))
        return xp.take(w, idx, axis=0)  # (w[idx], faster for whole rows)

    def backward(self, g):
        (idx,) = self.saved
        flat, gflat = idx.reshape(-1), g.reshape(-1, g.shape[-1])
        if self.sparse:
            check_dense_under_create_graph(g, "embedding")
            return (self._sparse_grad(flat, gflat, g),)
        gw = leaf_slot_to_fill(self, 0)  # the weight's .grad-to-be (its gradient store's slot): no copy later
        gw = scatter_rows(gw, self.num, flat, gflat, self.scale)
        if self.padding_idx is not None:
            gw[self.padding_idx] = 0
        return (gw,)

    def _sparse_grad(self, flat, gflat, g) -> SparseCOO:
        """PyTorch's sparse gradient: one entry per lookup (uncoalesced, in lookup order), none for padding_idx."""
        if self.scale:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        if self.padding_idx is not None:
            keep = flat != self.padding_idx
            flat, values = flat[keep], gflat[keep]
        else:  # its own memory: gflat may be a view of a gradient other nodes receive (not when reshape copied)
            values = gflat.copy() if xp.may_share_memory(gflat, g) else gflat
        return SparseCOO(flat.astype(xp.int64)[None, :], values, (self.num, gflat.shape[1]))


def check_dense_under_create_graph(g, name: str) -> None:
    """A sparse weight gradient is a SparseCOO of plain arrays: under create_graph (g recorded) it cannot be
    recorded, so say so (PyTorch differentiates it)."""
    if is_recorded(g):
        raise HigherOrderError(f"{name}(sparse=True) cannot be differentiated twice in ember: its sparse weight "
                               "gradient cannot be recorded under create_graph=True; use sparse=False")


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``: output shape input.shape + (embedding_dim,).

    ``padding_idx`` rows get no gradient; ``max_norm`` renormalises the looked-up rows of
    ``weight`` in place (as PyTorch does). ``sparse=True``: the weight's gradient is a sparse COO tensor
    with one entry per looked-up index (``ember._sparse``), as in PyTorch.
    """
    idx = check_index_dtype(input)
    num = weight._data.shape[0]
    if idx.size and _outside(idx, num):
        raise IndexError(f"index out of range in self: embedding indices must be in [0, {num}), got min "
                         f"{idx.min()} max {idx.max()}")
    if padding_idx is not None:
        if not -num <= padding_idx < num:  # a row past the table would silently go without a gradient
            raise AssertionError(f"Padding_idx must be within num_embeddings ({num}), got {padding_idx}")
        padding_idx += num if padding_idx < 0 else 0
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    # (the indices a parameter, not an input: PyTorch's node has one next function, the weight's)
    out = Embedding.apply(weight, idx=idx, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq,
                          sparse=bool(sparse))
    return version_checked(out, input)


def check_index_dtype(input: Tensor, op: str = "embedding"):
    """The array of ``embedding``'s or ``embedding_bag``'s (``op``) indices, which must be int32 or int64 as
    PyTorch's (it refuses int8, int16 and uint8 too); its error names the legacy tensor type, as PyTorch's."""
    idx = input._data
    if idx.dtype not in _UNSIGNED:
        kind = "CPUBoolType" if input.dtype == bool_ else input.type()  # (PyTorch's own name for bool)
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {kind} instead (while checking arguments for {op})")
    return idx


# int32/int64 indices viewed as unsigned: a negative index reads as 2**bits plus itself, at least 2**(bits-1)
_max_of = xp.maximum.reduce
_ndarray = xp.ndarray
_UNSIGNED = {xp.dtype(xp.int32): (xp.dtype(xp.uint32), 1 << 31), xp.dtype(xp.int64): (xp.dtype(xp.uint64), 1 << 63)}


def _outside(idx, num: int) -> bool:
    """Whether an index of ``idx`` (not empty) lies outside [0, num). For int32/int64 indices and tables of at most
    2**(bits-1) rows in one pass, the largest of them viewed unsigned (a negative one then reads past every row),
    instead of a minimum and a maximum (0.9 of 2.2 µs at 64 indices, every GPT step's two lookups)."""
    unsigned = _UNSIGNED.get(idx.dtype)
    if unsigned is not None and num <= unsigned[1]:
        return bool(_max_of(idx.view(unsigned[0]), None) >= num)  # (the ufunc's reduce: ``max``'s Python wrapper)
    return bool(idx.min() < 0 or idx.max() >= num)


def _renorm_rows(weight: Tensor, idx, max_norm: float, norm_type: float) -> None:
    """Scale rows used by ``idx`` whose norm exceeds max_norm down to max_norm (in place, untracked)."""
    rows = xp.unique(idx)
    w = weight._data
    norms = xp.linalg.norm(w[rows], ord=norm_type, axis=1)
    big = norms > max_norm
    if big.any():
        w[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype)
        weight._bump_version()


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor of shape tensor.shape + (num_classes,); num_classes=-1 means max + 1 (on the meta device,
    which has no values, PyTorch's RuntimeError)."""
    idx = tensor._data
    if idx.dtype != xp.int64:  # (PyTorch's refuses every other integer dtype too)
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if is_meta(idx):  # only a shape: the class count must be given (PyTorch reads it from the values)
        if num_classes == -1:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return Tensor._make(meta_array((*idx.shape, num_classes), xp.int64))
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError(f"Class values must be smaller than num_classes ({num_classes}) and non-negative")
    out = xp.zeros((*idx.shape, num_classes), dtype=xp.int64)
    xp.put_along_axis(out, idx[..., None].astype(xp.intp), 1, -1)
    return Tensor._make(out)
