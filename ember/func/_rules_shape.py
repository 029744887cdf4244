"""Batching rules of shape ops, indexing and matrix products (the conventions: ``_rules.py``)."""

from __future__ import annotations

import ember as E

from .._backend import xp
from .._tensor import Tensor
from ..ops.shape import tensor_list
from ._batched import loop, peel, rule, wrap, wrap_out
from ._rules import _arg, _sizes, batched_value, logical_ndim, neg_dim, neg_dims, pad, pointwise


# ----------------------------------------------------------------------------- shapes
@rule("view", "reshape")
def reshape(name, op, level, args, kwargs):
    value, batched = peel(args[0], level)
    if not batched or (len(args) == 2 and isinstance(args[1], E.dtype)):
        return loop(name, op, level, args, kwargs)
    shape = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs.get("shape", kwargs.get("size", ())))
    return wrap(value.reshape((value.shape[0], *shape)), level)


@rule("view_as", "reshape_as", "expand_as")
def like_other(name, op, level, args, kwargs):
    """The other tensor's example shape is the target (whether it is batched or not)."""
    return getattr(args[0], name[:-3])(*args[1].shape)


@rule("permute")
def permute(name, op, level, args, kwargs):
    value, batched = peel(args[0], level)
    n = value.ndim - 1
    dims = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs["dims"])
    if not batched or len(dims) != n:
        return loop(name, op, level, args, kwargs)
    return wrap(value.permute(0, *(neg_dim(d, n) % n + 1 for d in dims)), level)


@rule("transpose", "swapaxes", "swapdims", "movedim", "moveaxis")
def two_dims(name, op, level, args, kwargs):
    value, batched = peel(args[0], level)
    n = value.ndim - 1
    if not batched or n == 0:
        return loop(name, op, level, args, kwargs)
    a, b = _arg(args, kwargs, 1, "dim0" if "trans" in name else "source"), \
        _arg(args, kwargs, 2, "dim1" if "trans" in name else "destination")
    return wrap(getattr(value, name)(neg_dims(a, n), neg_dims(b, n)), level)


@rule("t")
def transpose_2d(name, op, level, args, kwargs):
    value, _ = peel(args[0], level)
    return wrap(value if value.ndim < 3 else value.transpose(-1, -2), level)


@rule("unsqueeze")
def unsqueeze(name, op, level, args, kwargs):
    value, _ = peel(args[0], level)
    return wrap(value.unsqueeze(neg_dim(_arg(args, kwargs, 1, "dim"), value.ndim)), level)


@rule("squeeze")
def squeeze(name, op, level, args, kwargs):
    value, batched = peel(args[0], level)
    shape = tuple(value.shape[1:])
    dim = _arg(args, kwargs, 1, "dim")
    if dim is None:
        return wrap(value.reshape((value.shape[0],) + tuple(s for s in shape if s != 1)), level)
    dims = {neg_dim(d, len(shape)) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    if not shape:
        return wrap(value.reshape(value.shape), level)
    kept = tuple(s for i, s in enumerate(shape) if not (s == 1 and i - len(shape) in dims))
    return wrap(value.reshape((value.shape[0],) + kept), level)


@rule("flatten")
def flatten(name, op, level, args, kwargs):
    value, _ = peel(args[0], level)
    n = value.ndim - 1
    if n == 0:
        return wrap(value.reshape(value.shape[0], 1), level)
    start, end = _arg(args, kwargs, 1, "start_dim", 0), _arg(args, kwargs, 2, "end_dim", -1)
    return wrap(value.flatten(neg_dim(start, n), neg_dim(end, n)), level)


@rule("expand", "broadcast_to")
def expand(name, op, level, args, kwargs):
    value, batched = peel(args[0], level)
    sizes = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs.get("size", kwargs.get("shape", ())))
    if not batched:
        return loop(name, op, level, args, kwargs)
    return wrap(pad(value, len(sizes)).expand(value.shape[0], *sizes), level)


@rule("repeat", "tile")
def repeat(name, op, level, args, kwargs):
    value, batched = peel(args[0], level)
    sizes = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs.get("repeats", kwargs.get("dims", ())))
    n = value.ndim - 1
    if not batched:
        return loop(name, op, level, args, kwargs)
    if name == "tile" and len(sizes) < n:
        sizes = (1,) * (n - len(sizes)) + sizes
    return wrap(pad(value, len(sizes)).repeat(1, *sizes), level)


@rule("tril", "triu", "matrix_exp", "det", "logdet", "inverse", "linalg.inv", "linalg.det", "linalg.matrix_exp")
def last_two(name, op, level, args, kwargs):
    """Ops on the last two dims (with any leading dims)."""
    value, batched = peel(args[0], level)
    if not batched or any(peel(a, level)[1] for a in args[1:]) or value.ndim < 3:
        return loop(name, op, level, args, kwargs)
    return wrap_out(op(value, *args[1:], **kwargs), level)


@rule("cat", "concat", "concatenate", "stack")
def cat(name, op, level, args, kwargs):
    tensors = tensor_list(_arg(args, kwargs, 0, "tensors"), name)
    dim = _arg(args, kwargs, 1, "dim", 0)
    n = max(logical_ndim(t, level) for t in tensors)
    if name != "stack" and n == 1 and any(logical_ndim(t, level) != 1 for t in tensors):
        return loop(name, op, level, args, kwargs)
    values = [batched_value(t, level) for t in tensors]
    dim = neg_dim(dim, n + 1) if name == "stack" else neg_dim(dim, n)
    return wrap(op(values, dim), level)


# ----------------------------------------------------------------------------- indexing
def _is_array(i) -> bool:
    return isinstance(i, (Tensor, list)) or hasattr(i, "__array__")


@rule("__getitem__")
def getitem(name, op, level, args, kwargs):
    value, batched = peel(args[0], level)
    index = args[1] if isinstance(args[1], tuple) else (args[1],)
    arrays = [i for i in index if _is_array(i)]
    if not batched or any(peel(i, level)[1] for i in index) or any(isinstance(i, bool) for i in index) or \
            any(getattr(i, "dtype", None) == E.bool for i in arrays):
        return loop(name, op, level, args, kwargs)
    out = value[(slice(None), *index)]
    if arrays:
        # Advanced indices (integers count as such beside arrays) that are not next to each other put their
        # dims first (NumPy's and PyTorch's rule): before the batch dim too, which goes back to the front.
        advanced = [k for k, i in enumerate(index) if _is_array(i) or isinstance(i, int)]
        if advanced[-1] - advanced[0] + 1 != len(advanced):
            shapes = [tuple(i.shape) if isinstance(i, Tensor) else xp.shape(i) for i in index
                      if _is_array(i) or isinstance(i, int)]
            out = out.movedim(len(xp.broadcast_shapes(*shapes)), 0)
    return wrap(out, level)


@rule("__setitem__")
def setitem(name, op, level, args, kwargs):
    target, index, source = args
    value, batched = peel(target, level)
    src, src_batched = peel(source, level)
    index = index if isinstance(index, tuple) else (index,)
    advanced = [k for k, i in enumerate(index) if _is_array(i) or isinstance(i, int)]
    arrays = [i for i in index if _is_array(i)]
    if not batched or any(peel(i, level)[1] for i in index) or any(getattr(i, "dtype", None) == E.bool or
                                                                    isinstance(i, list) for i in arrays) or \
            (arrays and advanced[-1] - advanced[0] + 1 != len(advanced)):
        # (advanced indices next to each other keep their dims in place, after the batch dim)
        return loop(name, op, level, args, kwargs)
    region = value[(slice(None), *index)]
    value[(slice(None), *index)] = pad(src, region.ndim - 1) if src_batched else source


# ----------------------------------------------------------------------------- matrix products
def _matrix_form(x, level: int):
    """(value, batched, was_vector)."""
    value, batched = peel(x, level)
    return value, batched, logical_ndim(x, level) == 1


@rule("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "__matmul__", "__rmatmul__")
def matmul(name, op, level, args, kwargs):
    a, b = (args[1], args[0]) if name == "__rmatmul__" else (args[0], args[1])
    if name in ("outer", "ger"):
        return pointwise("mul", E.mul, level, (a.unsqueeze(-1), b.unsqueeze(0) if peel(b, level)[1] else b), {})
    if name == "inner":
        if a.ndim == 0 or b.ndim == 0:
            return pointwise("mul", E.mul, level, (a, b), {})
        if b.ndim > 2:
            return loop(name, op, level, args, kwargs)
        return matmul("matmul", E.matmul, level, (a, b if b.ndim == 1 else b.transpose(-1, -2)), {})
    return wrap(batched_matmul(a, b, level), level)


def batched_matmul(a, b, level: int) -> Tensor:
    """The batch value of ``a @ b`` (matmul's rules for vectors and broadcasting, per example)."""
    av, a_batched, a_vec = _matrix_form(a, level)
    bv, b_batched, b_vec = _matrix_form(b, level)
    if a_batched and not b_batched and not a_vec and b.ndim == 2:
        return av.matmul(b)  # (B, ..., n, k) @ (k, m): one product
    if a_vec:
        av = av.unsqueeze(-2)
    if b_vec:
        bv = bv.unsqueeze(-1)
    ra = av.ndim - (1 if a_batched else 0)
    rb = bv.ndim - (1 if b_batched else 0)
    rank = max(ra, rb)
    if a_batched:
        av = pad(av, rank)
    if b_batched:
        bv = pad(bv, rank)
    out = av.matmul(bv)
    if a_vec:
        out = out.squeeze(-2)
    if b_vec:
        out = out.squeeze(-1)
    return out


@rule("einsum")
def einsum(name, op, level, args, kwargs):
    equation, *operands = args
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    spec = equation.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in spec)
    if not arrow:
        from collections import Counter

        counts = Counter(c for c in inputs if c.isalpha())
        output = ("..." if "..." in inputs else "") + "".join(sorted(c for c, k in counts.items() if k == 1))
    values, new_terms = [], []
    for term, x in zip(terms, operands):
        value, batched = peel(x, level)
        values.append(value)
        new_terms.append(letter + term if batched else term)
    return wrap(op(",".join(new_terms) + "->" + letter + output, *values), level)


@rule("addmm", "addmv", "baddbmm", "addbmm", "addr")
def add_product(name, op, level, args, kwargs):
    base, m1, m2 = args[:3]
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    if name in ("addbmm", "addr"):
        return loop(name, op, level, args, kwargs)
    product = E.matmul(m1, m2)
    return base * beta + product * alpha if beta != 1 or alpha != 1 else base + product
