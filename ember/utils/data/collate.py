"""Turning samples into batches: ``default_collate`` (a list of samples -> one batch)
and ``default_convert`` (one sample, when batching is off), with PyTorch's rules:

========================  ===========================================================
sample element            batch
========================  ===========================================================
Tensor                    ``stack`` along a new dim 0
NumPy array / scalar      converted to tensors, then stacked (string/object arrays rejected)
float / int / bool        float64 / int64 / bool tensor
str, bytes                the batch as given: a list at the top, a tuple inside a sequence
Mapping                   same mapping type, each key collated
namedtuple                same namedtuple type, each field collated
tuple                     a *list* of collated fields (as PyTorch, for backward compatibility)
other Sequence            same sequence type (a list when that fails), collated position-wise
========================  ===========================================================
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..._backend import xp
from ..._creation import as_tensor, tensor
from ..._dtype import float64
from ..._tensor import Tensor
from ...ops.shape import stack
from ...return_types import rebuilt

_COLLATE_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy(x) -> bool:
    """A NumPy array or scalar (NumPy strings count as strings)."""
    return isinstance(x, (xp.ndarray, xp.generic)) and not isinstance(x, (xp.str_, xp.bytes_))


def _is_text_array(a) -> bool:
    return a.dtype.kind in "SaUO"


def _rebuild_mapping(elem: Mapping, values: dict) -> Mapping:
    """``values`` in a mapping of ``elem``'s type (a plain dict when that type cannot be copied and updated)."""
    try:
        clone = copy.copy(elem)
        clone.update(values)
        return clone
    except (TypeError, AttributeError):  # immutable mappings
        return values


def _rebuild_sequence(elem: Sequence, items: list) -> Any:
    """``items`` in a sequence of ``elem``'s type; plain tuples become lists, as in PyTorch."""
    if isinstance(elem, tuple):
        return rebuilt(type(elem), items) if hasattr(elem, "_fields") else items
    try:
        return type(elem)(items)
    except TypeError:  # sequences that cannot be built from a list
        return items


def default_collate(batch: Sequence) -> Any:
    """Merge a list of samples into a batch (rules in the module docstring)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if _is_numpy(elem):
        if _is_text_array(elem):
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        if elem.ndim == 0:  # NumPy scalars keep their dtype
            return as_tensor(xp.asarray(batch))
        return stack([as_tensor(b) for b in batch], 0)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):  # bools too: a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        return _rebuild_mapping(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError(
                f"each element in list of batch should be of equal size (got sizes {[len(e) for e in batch]})"
            )
        # each column stays the tuple zip makes, as in PyTorch: a column of strings is batched as that tuple
        return _rebuild_sequence(elem, [default_collate(column) for column in zip(*batch)])
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Convert NumPy arrays and scalars in one sample (recursively) to tensors; leave the rest."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        return data if _is_text_array(data) else as_tensor(xp.asarray(data))  # asarray: NumPy scalars keep their dtype
    if isinstance(data, Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data
