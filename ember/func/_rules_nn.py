"""Batching rules of torch.nn.functional: linear, convolution, normalization, pooling, losses.

Per-example weights (a batched weight, as per-sample gradients make) stay one op: linear becomes a batched
matrix product, convolution a grouped convolution with one group per example (PyTorch's rule too), batch norm
per-example statistics computed as extra channels.
"""

from __future__ import annotations

import inspect

import ember as E

from .._tensor import Tensor
from ..nn._ops.conv import conv_pads, ntuple
from ._batched import batch_size, loop, peel, rule, wrap, wrap_out
from ._per_example import PerExampleConv, PerExampleLinear, shares_one_weight
from ._rules import _arg, batched_value, logical_ndim, neg_dim, pad, pointwise


def _any_batched(level: int, *xs) -> bool:
    return any(peel(x, level)[1] for x in xs)


# ----------------------------------------------------------------------------- linear
@rule("F.linear")
def linear(name, op, level, args, kwargs):
    x, w, b = args[0], _arg(args, kwargs, 1, "weight"), _arg(args, kwargs, 2, "bias")
    xv, x_batched = peel(x, level)
    wv, w_batched = peel(w, level)
    if w_batched and shares_one_weight(wv):  # per-sample gradients: one GEMM forward, per-example weight grad
        xs = batched_value(x, level)
        bias = None if b is None else batched_value(b, level)
        if type(xs) is Tensor and (bias is None or type(bias) is Tensor):
            out = PerExampleLinear.apply(xs.reshape(xs.shape[0], -1, xs.shape[-1]), wv, bias)
            return wrap(out.reshape(*xs.shape[:-1], wv.shape[1]), level)
    if peel(b, level)[1]:
        return linear(name, op, level, (x, w), {}) + b
    if not w_batched:
        return wrap(op(xv, w, b), level)
    if x_batched:
        lead = tuple(xv.shape[1:-1])
        out = xv.reshape(xv.shape[0], -1, xv.shape[-1]).matmul(wv.transpose(-1, -2))
    else:
        lead = tuple(x.shape[:-1])
        out = x.reshape(-1, x.shape[-1]).matmul(wv.transpose(-1, -2))
    out = out.reshape(wv.shape[0], *lead, wv.shape[1])
    return wrap(out if b is None else out + b, level)


# ----------------------------------------------------------------------------- convolution
_CONV_ND = {"F.conv1d": 1, "F.conv2d": 2, "F.conv3d": 3,
            "F.conv_transpose1d": 1, "F.conv_transpose2d": 2, "F.conv_transpose3d": 3}
# the layers' ops (nd an argument) and the convolutions of the formulas under create_graph (conv_higher_order.py:
# per-dim (lo, hi) padding, no bias, always (N, C, *spatial))
_CONV_INTERNAL = ("conv_nd", "conv_transpose_nd", "conv_padded", "conv_transpose_padded")


@rule(*_CONV_ND, *_CONV_INTERNAL)
def conv(name, op, level, args, kwargs):
    """Convolutions and transposed convolutions: a batched input alone is merged into N; batched weights run as
    one grouped convolution, the examples' channels side by side (the same reshapes for both: a transposed
    convolution's weight (C_in, C_out/G, *k) groups along C_in as a convolution's (C_out, C_in/G, *k) along
    C_out)."""
    bound = _bind(op, args, kwargs)
    p = bound.arguments
    x, w, b = p["input"], p["weight"], p.get("bias")
    wv, w_batched = peel(w, level)
    nd = _CONV_ND[name] if name in _CONV_ND else p["nd"] if "nd" in p else logical_ndim(w, level) - 2
    if _any_batched(level, b) and not (w_batched and shares_one_weight(wv) and "transpose" not in name):
        p["bias"] = None
        out = conv(name, op, level, bound.args, bound.kwargs)
        return out + b.reshape(-1, *(1,) * nd)
    xv, x_batched = peel(x, level)
    example = logical_ndim(x, level) == nd + 1  # one example without the N dim
    if not w_batched:
        if example:
            return wrap(_call(op, bound, input=xv), level)
        n = xv.shape[1]
        out = _call(op, bound, input=xv.reshape(-1, *xv.shape[2:]))
        return wrap(out.reshape(xv.shape[0], n, *out.shape[1:]), level)
    bsz, groups = batch_size(level), p.get("groups", 1)
    xv = batched_value(x, level)
    if example:
        xv = xv.unsqueeze(1)
    if shares_one_weight(wv) and type(xv) is Tensor and "padding" in p and "transpose" not in name:
        # per-sample gradients: the shared weight's convolution
        stride, dilation = ntuple(p["stride"], nd, "stride"), ntuple(p["dilation"], nd, "dilation")
        pads = conv_pads(p["padding"], wv.shape[3:], stride, dilation)
        bias = None if b is None else batched_value(b, level)
        out = PerExampleConv.apply(xv, wv, bias, stride=stride, pads=pads, dilation=dilation, groups=groups)
        return wrap(out.squeeze(1) if example else out, level)
    # Per-example weights: one grouped convolution, the examples' channels side by side.
    n, c = xv.shape[1], xv.shape[2]
    xg = xv.movedim(0, 1).reshape(n, bsz * c, *xv.shape[3:])
    wg = wv.reshape(bsz * wv.shape[1], *wv.shape[2:])
    changes = {} if "bias" not in p else {"bias": None if b is None else batched_value(b, level).reshape(-1)}
    out = _call(op, bound, input=xg, weight=wg, groups=bsz * groups, **changes)
    out = out.reshape(n, bsz, -1, *out.shape[2:]).movedim(1, 0)
    return wrap(out.squeeze(1) if example else out, level)


class _Bound:
    """``inspect.BoundArguments`` after ``apply_defaults()``, for a signature of plain parameters: ``arguments``
    (every parameter, by name; the rules change entries), ``args`` and ``kwargs`` read from it as inspect's do."""

    __slots__ = ("arguments", "_params")

    def __init__(self, params: _Params, arguments: dict) -> None:
        self.arguments, self._params = arguments, params

    @property
    def args(self) -> tuple:
        return tuple(self.arguments[name] for name in self._params.positional)

    @property
    def kwargs(self) -> dict:
        return {name: self.arguments[name] for name in self._params.keyword}


class _Params:
    """An op's signature, read once: where every parameter is positional-or-keyword or keyword-only, ``bind`` binds
    a call as ``Signature.bind`` then ``apply_defaults`` do, without their per-call walk over the parameters (15-22
    µs a call for conv2d and cross_entropy, three calls a step of the per-sample-gradient CNN); any other
    signature, and any call those would refuse (a missing, unknown or repeated argument), goes to inspect, which
    raises its own TypeError."""

    def __init__(self, op) -> None:
        self.signature = inspect.signature(op)
        params = self.signature.parameters.values()
        kind = inspect.Parameter
        self.plain = all(p.kind in (kind.POSITIONAL_OR_KEYWORD, kind.KEYWORD_ONLY) for p in params)
        self.positional = tuple(p.name for p in params if p.kind is kind.POSITIONAL_OR_KEYWORD)
        self.keyword = tuple(p.name for p in params if p.kind is kind.KEYWORD_ONLY)
        self.defaults = {p.name: p.default for p in params if p.default is not p.empty}
        self.names = self.signature.parameters.keys()

    def bind(self, args, kwargs) -> _Bound | inspect.BoundArguments:
        if self.plain and len(args) <= len(self.positional):
            given = dict(zip(self.positional, args))
            if kwargs.keys() <= self.names and not given.keys() & kwargs.keys():
                arguments = {**self.defaults, **given, **kwargs}
                if len(arguments) == len(self.names):  # none missing: in the signature's order, as inspect's
                    return _Bound(self, {name: arguments[name] for name in self.names})
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound


_signatures: dict[int, _Params] = {}


def _bind(op, args, kwargs) -> _Bound | inspect.BoundArguments:
    params = _signatures.get(id(op))
    if params is None:
        params = _signatures[id(op)] = _Params(op)
    return params.bind(args, kwargs)


def _call(op, bound: _Bound | inspect.BoundArguments, **changes):
    for k, v in changes.items():
        bound.arguments[k] = v
    return op(*bound.args, **bound.kwargs)


# ----------------------------------------------------------------------------- (N, C, *spatial) ops
_SPATIAL = {
    **{f"F.{kind}_pool{d}d": d for kind in ("max", "avg", "lp") for d in (1, 2, 3)},
    **{f"F.adaptive_{kind}_pool{d}d": d for kind in ("max", "avg") for d in (1, 2, 3)},
    "F.pixel_shuffle": 2, "F.pixel_unshuffle": 2, "F.local_response_norm": None, "F.interpolate": None,
    "F.upsample": None, "F.pad": None, "F.instance_norm": None,
    "max_pool_nd": None, "avg_pool_nd": None, "adaptive_avg_pool_nd": None,
}
_ND_ARG = {"max_pool_nd": 1, "avg_pool_nd": 1, "adaptive_avg_pool_nd": 2}  # the layers' ops take nd


@rule(*_SPATIAL)
def channels_first(name, op, level, args, kwargs):
    """Ops on (N, C, *spatial) input (N optional for some): the batch merged into N, one call."""
    x = args[0]
    xv, x_batched = peel(x, level)
    if not x_batched or _any_batched(level, *args[1:], *kwargs.values()):
        return loop(name, op, level, args, kwargs)
    nd = _SPATIAL[name] if name not in _ND_ARG else _arg(args, kwargs, _ND_ARG[name], "nd")
    if name == "F.pad" and (_arg(args, kwargs, 2, "mode", "constant") == "constant"):
        return wrap(op(xv, *args[1:], **kwargs), level)
    n = logical_ndim(x, level)
    if nd is not None and n == nd + 1:  # one example without N: the batch is N
        return wrap_out(op(xv, *args[1:], **kwargs), level)
    out = op(xv.reshape(-1, *xv.shape[2:]), *args[1:], **kwargs)
    return wrap_out(_unmerge(out, xv.shape[0]), level)


def _unmerge(out, bsz: int):
    if isinstance(out, tuple):
        return type(out)(_unmerge(o, bsz) for o in out)
    return out.reshape(bsz, -1, *out.shape[1:])


# ----------------------------------------------------------------------------- normalization
@rule("F.layer_norm", "F.rms_norm")
def layer_norm(name, op, level, args, kwargs):
    bound = _bind(op, args, kwargs)
    p = bound.arguments
    w, b = p.get("weight"), p.get("bias")
    if not _any_batched(level, w, b):
        return wrap(_call(op, bound, input=batched_value(p["input"], level)), level)
    out = wrap(_call(op, bound, input=batched_value(p["input"], level), weight=None,
                     **({"bias": None} if "bias" in p else {})), level)
    out = out if w is None else out * w
    return out if b is None else out + b


@rule("F.group_norm")
def group_norm(name, op, level, args, kwargs):
    bound = _bind(op, args, kwargs)
    p = bound.arguments
    x, w, b = p["input"], p.get("weight"), p.get("bias")
    xv = batched_value(x, level)
    flat = xv.reshape(-1, *xv.shape[2:])
    if not _any_batched(level, w, b):
        return wrap(_call(op, bound, input=flat).reshape(xv.shape), level)
    out = wrap(_call(op, bound, input=flat, weight=None, bias=None).reshape(xv.shape), level)
    trail = (1,) * (logical_ndim(x, level) - 2)
    out = out if w is None else out * w.reshape(-1, *trail)
    return out if b is None else out + b.reshape(-1, *trail)


@rule("F.batch_norm")
def batch_norm(name, op, level, args, kwargs):
    bound = _bind(op, args, kwargs)
    p = bound.arguments
    x = p["input"]
    mean, var, w, b = p["running_mean"], p["running_var"], p.get("weight"), p.get("bias")
    if not p["training"] and _any_batched(level, mean, var, w, b) and mean is not None and var is not None:
        # per-example statistics or affine (an ensemble's stacked buffers): the normalization written out
        trail = (1,) * (logical_ndim(x, level) - 2)
        out = (x - mean.reshape(-1, *trail)) * (var.reshape(-1, *trail) + p["eps"]).rsqrt()
        out = out if w is None else out * w.reshape(-1, *trail)
        return out if b is None else out + b.reshape(-1, *trail)
    if _any_batched(level, mean, var):
        return loop(name, op, level, args, kwargs)
    xv = batched_value(x, level)
    bsz = xv.shape[0]
    if not p["training"]:
        if _any_batched(level, w, b):
            return loop(name, op, level, args, kwargs)
        return wrap(_call(op, bound, input=xv.reshape(-1, *xv.shape[2:])).reshape(xv.shape), level)
    if p["running_mean"] is not None or p["running_var"] is not None:
        raise RuntimeError(
            "vmap: batch_norm in training mode updates its running_mean and running_var in place, which is not "
            "possible with a batched input: it happened due to the running statistics not being vmapped over. "
            "Use track_running_stats=False (torch.func.replace_all_batch_norm_modules_), or eval mode.")
    # Per-example statistics: the examples' channels side by side, (N, B * C, *).
    xg = xv.movedim(0, 1).reshape(xv.shape[1], bsz * xv.shape[2], *xv.shape[3:])

    def per_channel(t):
        return None if t is None else batched_value(t, level).reshape(-1)

    out = _call(op, bound, input=xg, weight=per_channel(p.get("weight")), bias=per_channel(p.get("bias")))
    return wrap(out.reshape(xv.shape[1], bsz, *xv.shape[2:]).movedim(1, 0), level)


# ----------------------------------------------------------------------------- losses
def _reduction(p) -> str | None:
    """The reduction; None when the legacy size_average / reduce are given (the loop handles them)."""
    if p.get("size_average") is not None or p.get("reduce") is not None:
        return None
    return p.get("reduction", "mean")


@rule("F.cross_entropy", "F.nll_loss")
def classification(name, op, level, args, kwargs):
    bound = _bind(op, args, kwargs)
    p = bound.arguments
    x, target, weight = p["input"], p["target"], p.get("weight")
    reduction = _reduction(p)
    if reduction is None or _any_batched(level, weight):
        return loop(name, op, level, args, kwargs)
    xv, tv = batched_value(x, level), batched_value(target, level)
    n, bsz = logical_ndim(x, level), xv.shape[0]
    if n >= 2:  # (N, C, *d): the batch merged into N
        loss = _call(op, bound, input=xv.reshape(-1, *xv.shape[2:]), target=tv.reshape(-1, *tv.shape[2:]),
                     reduction="none")
    else:
        loss = _call(op, bound, input=xv, target=tv, reduction="none")
    if reduction == "none":
        return wrap(loss.reshape(bsz, *(tuple(x.shape[:1]) + tuple(x.shape[2:]) if n >= 2 else ())), level)
    per_example = loss.reshape(bsz, -1)
    if reduction == "sum":
        return wrap(per_example.sum(-1), level)
    if tv.is_floating_point():  # class probabilities: the mean over the examples' N (and other) dims
        return wrap(per_example.mean(-1), level)
    # mean: divided by the example's total weight of the targets that are not ignored
    tv = tv.reshape(bsz, -1)
    kept = tv != p.get("ignore_index", -100)
    if weight is None:
        denominator = kept.sum(-1).to(loss.dtype)
    else:
        denominator = (weight[E.where(kept, tv, 0)] * kept).sum(-1)
    return wrap(per_example.sum(-1) / denominator, level)


_ELEMENTWISE_LOSSES = ("F.mse_loss", "F.l1_loss", "F.smooth_l1_loss", "F.huber_loss", "F.binary_cross_entropy",
                       "F.binary_cross_entropy_with_logits", "F.soft_margin_loss", "F.kl_div",
                       "F.poisson_nll_loss", "F.gaussian_nll_loss")


@rule(*_ELEMENTWISE_LOSSES)
def elementwise_loss(name, op, level, args, kwargs):
    """Losses of elementwise terms: the terms batched (reduction='none'), then each example's reduction."""
    bound = _bind(op, args, kwargs)
    reduction = _reduction(bound.arguments)
    if reduction is None or name == "F.gaussian_nll_loss":
        return loop(name, op, level, args, kwargs)
    bound.arguments["reduction"] = "none"
    p = bound.arguments
    rank = max(logical_ndim(p["input"], level), logical_ndim(p["target"], level))
    for key in ("input", "target"):  # the op wants them of one shape: both batched
        p[key] = wrap(pad(batched_value(p[key], level), rank), level)
    terms = pointwise(name, op, level, bound.args, bound.kwargs)
    if reduction == "mean":
        return terms.mean()
    if reduction == "sum":
        return terms.sum()
    if reduction == "batchmean":
        return terms.sum() / (bound.arguments["input"].shape[0] if bound.arguments["input"].ndim else 1)
    return terms


# ----------------------------------------------------------------------------- others
@rule("F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout", "F.feature_alpha_dropout")
def no_dropout(name, op, level, args, kwargs):
    """Dropout that draws nothing (eval mode, p=0): the input (random dropout: ``_rules_random.py``)."""
    return wrap(op(peel(args[0], level)[0], *args[1:], **kwargs), level)


@rule("F.rrelu")
def rrelu_eval(name, op, level, args, kwargs):
    return pointwise(name, op, level, args, kwargs)


@rule("F.embedding")
def embedding(name, op, level, args, kwargs):
    idx, weight = args[0], _arg(args, kwargs, 1, "weight")
    if _any_batched(level, weight) or not isinstance(idx, Tensor):
        return loop(name, op, level, args, kwargs)
    return wrap(op(peel(idx, level)[0], *args[1:], **kwargs), level)


@rule("F.one_hot")
def one_hot(name, op, level, args, kwargs):
    if _arg(args, kwargs, 1, "num_classes", -1) == -1:
        return loop(name, op, level, args, kwargs)
    return wrap(op(peel(args[0], level)[0], *args[1:], **kwargs), level)


@rule("F.cosine_similarity", "cosine_similarity", "F.pairwise_distance", "pairwise_distance")
def two_along_dim(name, op, level, args, kwargs):
    bound = _bind(op, args, kwargs)
    p = bound.arguments
    x1, x2 = p["x1"], p["x2"]
    rank = max(logical_ndim(x1, level), logical_ndim(x2, level))
    if "dim" in p:
        p["dim"] = neg_dim(p["dim"], rank)
    elif rank <= 1:
        return loop(name, op, level, args, kwargs)
    v1, v2 = (pad(peel(t, level)[0], rank) if peel(t, level)[1] else t for t in (x1, x2))
    return wrap(_call(op, bound, x1=v1, x2=v2), level)


@rule("F.scaled_dot_product_attention")
def attention(name, op, level, args, kwargs):
    bound = _bind(op, args, kwargs)
    if bound.arguments.get("dropout_p", 0.0):
        return loop(name, op, level, args, kwargs)
    return pointwise(name, op, level, bound.args, bound.kwargs)
