"""Random ops under vmap: ``randomness`` decides.

``'error'`` (vmap's default) raises PyTorch's error on any random op in the function, batched input or not.
``'different'``: each example gets its own draws (the op draws once for the whole batch; an unbatched input is
expanded to the batch first). ``'same'``: one draw shared by the examples (the op draws for one example).
A random op is dispatched at the innermost vmap level, then at each level below, so nested vmaps each apply
their own ``randomness``.

Random *creation* ops (``torch.rand(3)``) under ``'different'``: ``rand``/``randn`` draw the batch at once,
the others once per example. Random in-place methods of tensors that are not batched (``torch.empty(3).uniform_()``)
are not intercepted: they draw as outside vmap.
"""

from __future__ import annotations

import ember as E

from .._tensor import Tensor
from ._batched import (
    BatchedTensor,
    _State,
    at_level,
    batch_size,
    dispatch,
    method_op,
    peel,
    randomness,
    top_level,
    visible_levels,
    wrap,
    wrap_out,
)
from ._patching import RANDOM_RULES
from ._rules import logical_ndim, pad
from ._rules_nn import _bind

ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
         "'different' randomness flags on vmap or perform the randomness operation out of vmap")

_DROPOUT = {"F.dropout": None, "F.dropout1d": 1, "F.dropout2d": 2, "F.dropout3d": 3, "F.alpha_dropout": None,
            "F.feature_alpha_dropout": None, "F.rrelu": None}


def _is_random(key: str, op, args, kwargs) -> bool:
    if key in _DROPOUT:
        p = _bind(op, args, kwargs).arguments
        return bool(p.get("training")) and p.get("p", 1) != 0
    return True


def random_dispatch(key: str, original, op, args, kwargs):
    """A random op inside vmap: at the innermost level, by its ``randomness``. ``op`` is what the rule calls on the
    batch values (it dispatches again at the levels below); ``original``, the op with no vmap level left."""
    if not _is_random(key, original, args, kwargs):
        level = top_level(args, kwargs)
        return original(*args, **kwargs) if level == 0 else dispatch(key, op, args, kwargs, level)
    if any(lv.per_example and lv.randomness == "error" for lv in _State.levels):
        raise RuntimeError(ERROR)  # (a vmap running its function once per example refuses them too)
    levels = visible_levels()
    if not levels:
        return original(*args, **kwargs)
    level = levels[-1]
    mode = randomness(level)
    if mode == "error":
        raise RuntimeError(ERROR)
    return at_level(level, RANDOM_RULES[key], key, op, level, args, kwargs, mode)


def _same_unsupported(key: str):
    return RuntimeError(f"vmap: randomness='same' is not supported by ember for {key}; use randomness='different' "
                        "or draw outside vmap")


def from_tensor(key, op, level, args, kwargs, mode):
    """Random ops whose draw takes a tensor's shape (dropout, rand_like, bernoulli, normal(mean, std), ...)."""
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    if mode == "same":
        x = tensors[0]
        if key in ("F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d"):
            p = _bind(op, args, kwargs).arguments
            mask = op(E.ones(x.shape, dtype=x.dtype), p["p"], True)
            return x * mask
        if key.endswith("_like"):
            return op(E.zeros(x.shape, dtype=x.dtype), *args[1:], **kwargs)
        if key == "bernoulli" and len(args) == 1 and not kwargs:
            return (E.rand(x.shape, dtype=x.dtype) < x).to(x.dtype)
        raise _same_unsupported(key)
    rank = max(logical_ndim(t, level) for t in tensors)
    first = args[0]
    new_args = [pad(_value(a, level), rank) if isinstance(a, Tensor) else a for a in args]
    new_kwargs = {k: pad(_value(v, level), rank) if isinstance(v, Tensor) else v for k, v in kwargs.items()}
    nd = _DROPOUT.get(key)
    if nd is not None and logical_ndim(first, level) == nd + 2:  # (N, C, *): the batch merged into N
        value = new_args[0]
        new_args[0] = value.reshape(-1, *value.shape[2:])
        return wrap(op(*new_args, **new_kwargs).reshape(value.shape), level)
    if key == "multinomial":
        value = new_args[0]
        out = op(value.reshape(-1, value.shape[-1]), *new_args[1:], **new_kwargs)
        return wrap(out.reshape(*value.shape[:-1], out.shape[-1]), level)
    return wrap_out(op(*new_args, **new_kwargs), level)


def _value(x, level: int):
    value, batched = peel(x, level)
    return value if batched else x.unsqueeze(0).expand(batch_size(level), *x.shape)


def creation(key, op, level, args, kwargs, mode):
    """Random ops that make a tensor from sizes (``torch.rand(2, 3)``)."""
    if mode == "same":
        return op(*args, **kwargs)
    bsz = batch_size(level)
    if key in ("rand", "randn") and "size" not in kwargs:
        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        return wrap(op((bsz, *sizes), **kwargs), level)
    return wrap(E.stack([op(*args, **kwargs) for _ in range(bsz)]), level)


def normal(key, op, level, args, kwargs, mode):
    if any(isinstance(a, Tensor) for a in (*args, *kwargs.values())):
        return from_tensor(key, op, level, args, kwargs, mode)
    return creation(key, op, level, args, kwargs, mode)


def inplace_method(key, op, level, args, kwargs, mode):
    """``x.uniform_()`` & co. on a batched ``x``."""
    self = args[0]
    value, batched = peel(self, level)
    if mode == "different" and batched:
        op(value, *args[1:], **kwargs)
        return self
    if mode == "different":
        raise RuntimeError(f"vmap: {key}: an in-place random op on a tensor that is not batched cannot draw "
                           "different values per example (randomness='different'); make the tensor batched first")
    sample = op(E.empty(self.shape, dtype=self.dtype), *args[1:], **kwargs)
    (value if batched else self).copy_(sample)
    return self


for _key in ("rand", "randn", "randint", "randperm"):
    RANDOM_RULES[_key] = creation
RANDOM_RULES["normal"] = normal
for _key in ("rand_like", "randn_like", "randint_like", "bernoulli", "poisson", "multinomial", *_DROPOUT):
    RANDOM_RULES[_key] = from_tensor

_INPLACE_METHODS = ("uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_",
                    "log_normal_")


def _random_method(name: str, rule):
    RANDOM_RULES[name] = rule
    op = method_op(name)

    def method(self, *args, **kwargs):
        return random_dispatch(name, op, op, (self, *args), kwargs)

    method.__name__ = name
    setattr(BatchedTensor, name, method)


for _name in _INPLACE_METHODS:
    _random_method(_name, inplace_method)
for _name in ("bernoulli", "multinomial"):
    _random_method(_name, from_tensor)
