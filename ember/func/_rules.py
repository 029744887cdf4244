"""Batching rules of the tensor ops: elementwise, reductions and other ops along a dim (shapes, indexing and
matrix products: ``_rules_shape.py``).

A rule gets ``(name, op, level, args, kwargs)``: the op's name, the unbatched op, the vmap level being
dispatched and the arguments, some of them BatchedTensors of that level. It calls the op once on the batch
values (batch at dim 0) and wraps the result. Two facts keep the rules short: a negative dim counts from the
end, so it names the same dim of an example and of its batch; and tensors broadcast from the right, so an
example's value padded with size-1 dims after the batch dim broadcasts against unbatched tensors exactly as the
example would.
"""

from __future__ import annotations

import ember as E

from .._not_given import NOT_GIVEN
from .._tensor import Tensor
from ..return_types import rebuilt
from ._batched import batch_size, loop, overload_of, peel, rule, unbatched_inplace_error, wrap, wrap_out


# ----------------------------------------------------------------------------- helpers
def logical_ndim(x, level: int) -> int:
    value, batched = peel(x, level)
    if batched:
        return value.ndim - 1
    return x.ndim if isinstance(x, Tensor) else 0


def pad(value: Tensor, rank: int) -> Tensor:
    """A batch value (B, *shape) with size-1 dims after the batch dim up to ``rank`` example dims."""
    missing = rank - (value.ndim - 1)
    if missing <= 0:
        return value
    return value.reshape((value.shape[0],) + (1,) * missing + tuple(value.shape[1:]))


def batched_value(x, level: int) -> Tensor:
    """``x``'s batch value; an unbatched tensor expanded to the batch (a view)."""
    value, batched = peel(x, level)
    if batched:
        return value
    return x.unsqueeze(0).expand(batch_size(level), *x.shape)


def neg_dim(dim: int, n: int) -> int:
    """``dim`` of an ``n``-dim example as a negative dim (the same dim of the batch value); PyTorch's error if out
    of range."""
    lo, hi = -max(n, 1), max(n, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim - n if dim >= 0 else dim


def neg_dims(dim, n: int):
    if isinstance(dim, (tuple, list)):
        return type(dim)(neg_dim(d, n) for d in dim)
    return neg_dim(dim, n)


def _arg(args, kwargs, pos: int, name: str, default=None):
    if len(args) > pos:
        return args[pos]
    return kwargs.get(name, default)


def _set_arg(args, kwargs, pos: int, name: str, value) -> tuple[list, dict]:
    args, kwargs = list(args), dict(kwargs)
    if len(args) > pos:
        args[pos] = value
    else:
        kwargs[name] = value
    return args, kwargs


def _sizes(args) -> tuple:
    """``view(2, 3)`` / ``view((2, 3))`` / ``view(size=...)`` sizes as one tuple."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, E.Size)):
        return tuple(args[0])
    return tuple(args)


# ----------------------------------------------------------------------------- elementwise
_BINARY = (
    "add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow float_power atan2 arctan2 "
    "hypot maximum minimum fmax fmin logaddexp logaddexp2 copysign nextafter xlogy lerp addcmul addcdiv where "
    "clamp clip clamp_min clamp_max eq ne lt le gt ge greater less greater_equal less_equal not_equal "
    "logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor isclose heaviside type_as "
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ __rfloordiv__ __mod__ "
    "__rmod__ __pow__ __rpow__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __and__ __or__ __xor__ __rand__ __ror__ "
    "__rxor__ __lshift__ __rshift__ rsub special.xlogy special.xlog1py"
).split()
_UNARY = (
    "abs absolute neg negative positive exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square sin cos tan asin acos "
    "atan arcsin arccos arctan sinh cosh tanh asinh acosh atanh arcsinh arccosh arctanh sigmoid relu erf erfc erfinv "
    "floor ceil round trunc fix frac sign sgn reciprocal logit nan_to_num isnan isinf isfinite isposinf isneginf "
    "lgamma digamma i0 sinc deg2rad rad2deg signbit conj angle logical_not bitwise_not polygamma mvlgamma "
    "real imag resolve_conj resolve_neg conj_physical view_as_real view_as_complex "
    "float double half bfloat16 int long short bool byte char to type clone detach contiguous cpu "
    "zeros_like ones_like full_like empty_like __neg__ __pos__ __abs__ __invert__ "
    "F.relu F.relu6 F.elu F.selu F.celu F.gelu F.silu F.mish F.leaky_relu F.hardtanh F.hardsigmoid F.hardswish "
    "F.softplus F.softsign F.tanhshrink F.hardshrink F.softshrink F.threshold F.logsigmoid F.sigmoid F.tanh "
    "special.expit special.erf special.erfc special.erfinv special.logit special.i0 special.sinc special.digamma "
    "special.gammaln special.expm1 special.exp2 special.log1p special.ndtr special.ndtri special.entr "
    "special.i0e special.i1 special.i1e special.psi special.round special.log_ndtr"
).split()
_INPLACE = (
    "add_ sub_ mul_ div_ pow_ clamp_ clamp_min_ clamp_max_ clip_ masked_fill_ fill_ zero_ copy_ lerp_ addcmul_ "
    "addcdiv_ relu_ sigmoid_ tanh_ exp_ log_ neg_ abs_ sqrt_ floor_ ceil_ round_ trunc_ sign_ reciprocal_ "
    "remainder_ fmod_ __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __iand__ __ior__ "
    "__ixor__ nan_to_num_ logical_not_ requires_grad_ squeeze_ unsqueeze_ t_ transpose_"
).split()


@rule(*_BINARY, *_UNARY)
def pointwise(name, op, level, args, kwargs):
    """Elementwise ops: batch values padded to the examples' common rank, the op once."""
    rank = 0
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            rank = max(rank, logical_ndim(a, level))
    new_args = [_aligned(a, level, rank) for a in args]
    new_kwargs = {k: _aligned(v, level, rank) for k, v in kwargs.items()}
    return wrap_out(op(*new_args, **new_kwargs), level)


def _aligned(a, level: int, rank: int):
    value, batched = peel(a, level)
    return pad(value, rank) if batched else a


def _masked_fill_args(args: tuple, kwargs: dict, level: int):
    """masked_fill's (self, mask, value) when its value is batched (a 0-d tensor per example, which the op itself
    refuses once padded to the examples' rank), else None."""
    given = (*args, *(kwargs[k] for k in ("mask", "value") if k in kwargs))
    if len(given) == 3 and peel(given[2], level)[1] and logical_ndim(given[2], level) == 0:
        return given
    return None


def _fill_each_example(x: Tensor, mask, value: Tensor) -> Tensor:
    """Each example of ``x`` (batch values aligned) filled where ``mask`` holds with its own ``value``, in x's
    dtype: PyTorch's rule for masked_fill with a batched value."""
    return E.where(mask, value.to(x.dtype), x)


@rule("masked_fill")
def masked_fill(name, op, level, args, kwargs):
    """masked_fill: elementwise, except a batched value, which fills each example with its own."""
    given = _masked_fill_args(args, kwargs, level)
    if given is None:
        return pointwise(name, op, level, args, kwargs)
    rank = max(logical_ndim(a, level) for a in given[:2] if isinstance(a, Tensor))
    return wrap_out(_fill_each_example(*(_aligned(a, level, rank) for a in given)), level)


@rule(*_INPLACE[:-5])
def inplace(name, op, level, args, kwargs):
    """In-place elementwise ops: the example's value changes in place (its batch value does)."""
    self_value, batched = peel(args[0], level)
    if not batched:
        others = [v for v, b in (peel(a, level) for a in (*args[1:], *kwargs.values())) if b]
        if others:
            raise unbatched_inplace_error(overload_of(name, args, kwargs), self_value.shape,
                                          [o.shape for o in others], level)
    if name == "masked_fill_" and (given := _masked_fill_args(args, kwargs, level)) is not None:
        rank = logical_ndim(args[0], level)
        self_value.copy_(_fill_each_example(*(_aligned(a, level, rank) for a in given)))
        return args[0]
    rank = logical_ndim(args[0], level)
    new_args = [self_value] + [_aligned(a, level, rank) for a in args[1:]]
    op(*new_args, **{k: _aligned(v, level, rank) for k, v in kwargs.items()})
    return args[0]


@rule("squeeze_", "unsqueeze_", "t_", "transpose_")
def shape_inplace(name, op, level, args, kwargs):
    """In-place shape changes: the wrapper takes the new batch value."""
    result = getattr(args[0], name[:-1])(*args[1:], **kwargs)
    args[0]._value = result._value
    args[0]._in_dim = 0  # (the batch dim is at 0 of the new value, no longer where the caller had it)
    return args[0]


# ----------------------------------------------------------------------------- reductions and ops along a dim
# name -> (position of dim among the arguments, self included; its keyword; how dim=None is batched:
# "tuple" every example dim as a tuple, "flat" the example flattened, "keep" passed on as it is)
_DIM_OPS = {
    **{n: (1, "dim", "tuple") for n in "sum mean amax amin nansum nanmean count_nonzero all any logsumexp".split()},
    **{n: (1, "dim", "flat") for n in "prod argmax argmin max min median nanmedian".split()},
    "var": (1, "dim", "tuple"), "std": (1, "dim", "tuple"), "var_mean": (1, "dim", "tuple"),
    "std_mean": (1, "dim", "tuple"), "norm": (2, "dim", "flat"),
    **{n: (1, "dim", "keep") for n in "softmax log_softmax cumsum cumprod logcumsumexp cummax cummin sort argsort "
       "unbind select narrow mode".split()},
    **{n: (2, "dim", "keep") for n in "topk kthvalue split chunk tensor_split split_with_sizes".split()},
    "diff": (2, "dim", "keep"), "unflatten": (1, "dim", "keep"), "unfold": (1, "dimension", "keep"),
    "roll": (2, "dims", "flat"),
    "flip": (1, "dims", "keep"), "F.softmax": (1, "dim", "legacy"), "F.log_softmax": (1, "dim", "legacy"),
    "F.softmin": (1, "dim", "legacy"), "F.normalize": (2, "dim", "keep"), "diagonal": (2, "dim1", "keep"),
    "special.logsumexp": (1, "dim", "tuple"), "linalg.vector_norm": (2, "dim", "tuple"),
    "special.softmax": (1, "dim", "keep"), "special.log_softmax": (1, "dim", "keep"),
}
_VALUES_ONLY = {"max": "amax", "min": "amin"}  # what dim=None computes
# reductions that read an empty dim list (``x.sum(())``, ``amax``'s default) as every dim under PyTorch's vmap:
# every dim of the example, not the batch's (logsumexp too, which refuses it outside vmap)
_EMPTY_DIMS_MEAN_ALL = frozenset("sum mean amax amin nansum nanmean count_nonzero all any var std var_mean "
                                 "std_mean logsumexp special.logsumexp norm linalg.vector_norm".split())


@rule(*_DIM_OPS)
def along_dim(name, op, level, args, kwargs):
    """Ops along one or more dims: the dims made negative (the same dims of the batch value)."""
    x = args[0]
    value, batched = peel(x, level)
    n = logical_ndim(x, level)
    if name in ("max", "min") and isinstance(_arg(args, kwargs, 1, "other"), Tensor):
        return pointwise(name, op, level, args, kwargs)
    if not batched or any(peel(a, level)[1] for a in (*args[1:], *kwargs.values())):
        return loop(name, op, level, args, kwargs)
    if n == 0 and name == "unfold":  # PyTorch's rule: a 0-d example as a 1-element 1-d one, a last dim of 1 dropped
        op(value.new_zeros(()), *args[1:], **kwargs)  # (a 0-d example's checks, on a stand-in)
        windows = value.unsqueeze(-1).unfold(-1, _arg(args, kwargs, 2, "size"), _arg(args, kwargs, 3, "step"))
        return wrap(windows.squeeze(-1), level)
    if n == 0:  # a 0-d example: as a 1-element 1-d one, the results 0-d again
        out = along_dim(name, op, level, (wrap(value.unsqueeze(-1), level), *args[1:]), kwargs)
        return _as_scalars(out, value.shape, level)
    pos, key, none_means = _DIM_OPS[name]
    dim = _arg(args, kwargs, pos, key)
    if dim is NOT_GIVEN:  # (a method's own default, ``Tensor.sum(t)`` called unbound: no dim, as None)
        dim = None
    if isinstance(dim, (tuple, list)) and not dim and name in _EMPTY_DIMS_MEAN_ALL:
        dim = tuple(range(-n, 0))
    if name == "diagonal":
        return _diagonal(value, n, level, args, kwargs)
    if dim is None and none_means == "legacy":
        dim = 0 if n in (0, 1, 3) else 1  # PyTorch's implicit softmax dim
    if dim is None and none_means == "tuple":
        dim = tuple(range(-n, 0))
    elif dim is None and none_means == "flat":
        return _flat(name, op, value, n, level, args, kwargs, pos, key)
    elif dim is None:
        return wrap_out(op(value, *args[1:], **kwargs), level)
    new_args, new_kwargs = _set_arg(args, kwargs, pos, key, neg_dims(dim, n))
    new_args[0] = value
    return wrap_out(op(*new_args, **new_kwargs), level)


def _as_scalars(out, shape, level: int):
    if isinstance(out, Tensor):
        return wrap(peel(out, level)[0].reshape(shape), level)
    if isinstance(out, tuple):
        return rebuilt(type(out), (_as_scalars(o, shape, level) for o in out))
    return type(out)(_as_scalars(o, shape, level) for o in out)


def _flat(name, op, value, n, level, args, kwargs, pos, key):
    """dim=None over the flattened example: the op along the last dim of (B, numel)."""
    keepdim = _arg(args, kwargs, pos + 1, "keepdim", False)
    flat = value.reshape(value.shape[0], -1)
    if name == "roll":
        return wrap(flat.roll(_arg(args, kwargs, 1, "shifts"), -1).reshape(value.shape), level)
    method = _VALUES_ONLY.get(name, name)
    if name == "norm":
        out = flat.norm(_arg(args, kwargs, 1, "p", "fro"), -1)
    elif name in ("median", "nanmedian"):
        out = getattr(flat, name)(-1).values
    else:
        out = getattr(flat, method)(-1)
    if keepdim:
        out = out.reshape((value.shape[0],) + (1,) * n)
    return wrap(out, level)


def _diagonal(value, n, level, args, kwargs):
    offset = _arg(args, kwargs, 1, "offset", 0)
    dim1, dim2 = _arg(args, kwargs, 2, "dim1", 0), _arg(args, kwargs, 3, "dim2", 1)
    return wrap(value.diagonal(offset, neg_dim(dim1, n), neg_dim(dim2, n)), level)


@rule("is_tensor", "is_floating_point", "is_complex", "numel")
def introspect(name, op, level, args, kwargs):
    """Questions about the example: its metadata answers them."""
    x = args[0]
    return True if name == "is_tensor" else getattr(x, name)()


@rule("gather", "take_along_dim", "index_select")
def gather(name, op, level, args, kwargs):
    """Lookups along a dim: input and index batched alike (gather's index has the input's rank)."""
    x, dim, index = args[0], _arg(args, kwargs, 1, "dim"), _arg(args, kwargs, 2, "index", kwargs.get("indices"))
    n = logical_ndim(x, level)
    if dim is None or n == 0 or not isinstance(index, Tensor) or \
            (name == "index_select" and peel(index, level)[1]):
        return loop(name, op, level, args, kwargs)
    if name == "index_select":
        return wrap(op(peel(x, level)[0], neg_dim(dim, n), index), level)
    return wrap(op(batched_value(x, level), neg_dim(dim, n), batched_value(index, level)), level)


@rule("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor")
def new_like(name, op, level, args, kwargs):
    """A new tensor of the given size and the example's dtype: not batched."""
    if any(peel(a, level)[1] for a in (*args[1:], *kwargs.values())):
        return loop(name, op, level, args, kwargs)
    return op(peel(args[0], level)[0], *args[1:], **kwargs)
