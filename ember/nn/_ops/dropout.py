"""Dropout and its variants (random masks from ember's global generator, PyTorch's for the same seed).

The mask is PyTorch's CPU one: a Bernoulli(1 - p) draw per element (a 53-bit uniform below 1 - p, in memory
order) scaled by the reciprocal 1 / (1 - p) rounded in the input's float type (float32 for narrower ones), as
PyTorch's ``noise.bernoulli_(1 - p).div_(1 - p)`` multiplies by it.

Element-wise: dropout, alpha_dropout. Channel-wise ("feature" dropout, one draw per (N, C) pair of an
(N, C, *) input, as PyTorch's feature_dropout): dropout1d/2d/3d, feature_alpha_dropout. Each follows
PyTorch's order of checks: p in [0, 1] (ValueError), the rank warnings (also in eval mode), then the
input unchanged when not training, p == 0 or the input is empty; p == 1 multiplies by zero (for the
alpha variants too); only then is the mask drawn, feature masks needing at least 2 dimensions. A meta
tensor's mask is drawn from nothing (as PyTorch's meta kernels): the generator's state is left as it was.
"""

from __future__ import annotations

import math

from ... import _random_draws as draws
from ..._backend import xp
from ..._dtype import SCALAR_TYPE_NAMES
from ..._meta import is_meta, meta_array
from ..._tensor import Tensor
from ..._warnings import warn
from ...autograd.graph import Node, torch_named
from ...random import default_generator

# SELU's scale * alpha: alpha dropout sets dropped units to -_ALPHA (SELU's negative saturation) before its affine map
_ALPHA = 1.7580993408473766


@torch_named("MulBackward0")  # (PyTorch's CPU dropout multiplies by the scaled mask)
class Dropout(Node):
    def forward(self, x, mask):
        self.saved = (mask,)
        return x * mask

    def backward(self, g):  # the mask broadcasts (a channel mask holds one value per (N, C))
        return (g * self.saved[0],)


def dropout_mask(shape, p: float, dtype, meta: bool = False):
    """Keep each element with probability 1 - p, scaled by 1 / (1 - p) so the expectation is unchanged
    (``meta``: a meta array of that shape, nothing drawn)."""
    if meta:
        return meta_array(shape, dtype)
    if p == 1:
        return xp.zeros(shape, dtype=dtype)
    return xp.multiply(_keep(shape, p), _reciprocal(p, dtype), dtype=dtype)


def _reciprocal(p: float, dtype):
    """1 / (1 - p) as PyTorch's division by a number computes it: in float32 for float32 (and narrower) masks,
    in float64 for float64."""
    op = xp.float64 if xp.dtype(dtype) == xp.float64 else xp.float32
    return op(1) / op(1 - p)


def _keep(shape, p: float, like=None):
    """The kept elements (a bool array of ``shape``), drawn in ``like``'s memory order (C order without it)."""
    kept = draws.bernoulli_scalar(default_generator, math.prod(shape), 1 - p)
    return draws.in_memory_order(kept, like) if like is not None and like.shape == tuple(shape) else \
        kept.reshape(shape)


def _check_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_shape(shape: tuple) -> tuple:
    """One draw per (N, C): (N, C, 1, ..., 1), as PyTorch's feature dropout."""
    if len(shape) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return shape[:2] + (1,) * (len(shape) - 2)


def _apply(input: Tensor, p: float, training: bool, inplace: bool, feature: bool, alpha: bool,
           batched: bool = True) -> Tensor:
    """PyTorch's dropout kernel: x * mask (+ shift for alpha dropout), the mask element-wise or per channel
    (``batched=False``: the channels along dim 0, as PyTorch's feature dropout of ``input.unsqueeze(0)``)."""
    _check_p(p)
    p = float(p)  # once, as PyTorch's kernel takes a double (a NumPy complex p: one ComplexWarning, in eval too)
    if not training or p == 0 or input._data.size == 0:
        return input
    if not input.is_floating_point():  # PyTorch scales by a float mask, which it cannot write into integers
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{SCALAR_TYPE_NAMES[input.dtype.name]}")
    if p == 1:  # zero, for the alpha variants too
        zero = Tensor._make(xp.zeros((), dtype=input._data.dtype))
        return input.mul_(zero) if inplace else input * zero
    shape = input._data.shape
    if feature:
        shape = _feature_shape(shape) if batched else _feature_shape((1, *shape))[1:]
    dtype = input._data.dtype
    like = None if feature else input._data  # PyTorch's noise is empty_like(input): input's memory order
    if is_meta(input._data):  # only a shape: no mask is drawn, and the result is a meta tensor
        mask, shift = meta_array(shape, dtype), Tensor._make(meta_array(shape, dtype)) if alpha else None
    elif not alpha:
        mask, shift = xp.multiply(_keep(shape, p, like), _reciprocal(p, dtype), dtype=dtype), None
    else:  # kept: a * x + alpha * a * p; dropped: -alpha * a * (1 - p): zero mean and unit variance kept
        keep = _keep(shape, p, like).astype(dtype)
        a = 1 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        mask = keep * xp.asarray(a, dtype)
        shift = Tensor._make((keep - 1) * xp.asarray(_ALPHA * a, dtype) + xp.asarray(_ALPHA * a * p, dtype))
    if inplace:
        out = input.mul_(Tensor._make(mask))
        return out if shift is None else out.add_(shift)
    out = Dropout.apply(input, mask)
    return out if shift is None else out + shift


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p (training only) and scale the rest by 1/(1-p)."""
    return _apply(input, p, training, inplace, False, False)

# a dropout module's forward calling the functional: PyTorch's warnings from there name its dropout modules' module
_DROPOUT_MODULES = {"ember.nn.modules.dropout": "torch.nn.modules.dropout"}


def _deprecated_rank(name: str, ndim: int, spatial: int) -> None:
    warn(f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in an error in a future "
         f"release. To retain the behavior and silence this warning, please use dropout instead. Note that {name} "
         f"exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a channel dimension, "
         f"and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", through=_DROPOUT_MODULES)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) (or unbatched (C, L)) input with probability p; other ranks raise
    RuntimeError, as in PyTorch."""
    _check_p(p)
    ndim = input._data.ndim
    if ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that dropout1d "
                           "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, batched=ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) input with probability p: one draw per (N, C).

    As PyTorch: a 3-D input is taken as (N, C, L) (1-D channel dropout, with PyTorch's warning), not as an
    unbatched (C, H, W); other ranks than 3 and 4 warn that they are deprecated and are masked per
    (dim 0, dim 1) pair."""
    _check_p(p)
    ndim = input._data.ndim
    if ndim not in (3, 4):
        _deprecated_rank("dropout2d", ndim, 2)
    if ndim == 3:
        warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
             "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
             "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
             "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
             through=_DROPOUT_MODULES)
    return _apply(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) (or unbatched (C, D, H, W)) input with probability p.

    As PyTorch: other ranks than 4 and 5 warn that they are deprecated and are taken as unbatched (the
    channels along dim 0)."""
    _check_p(p)
    ndim = input._data.ndim
    if ndim not in (4, 5):
        _deprecated_rank("dropout3d", ndim, 3)
    return _feature_dropout(input, p, training, inplace, batched=ndim == 5)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    """dropout1d's/dropout3d's kernel. An unbatched input goes through ``unsqueeze(0)`` and ``squeeze(0)`` out of
    place, as in PyTorch: the result is a view of the input (even in eval mode) with their nodes in its graph."""
    if batched or inplace:  # (in place: the input itself, its channels masked along dim 0)
        return _apply(input, p, training, inplace, True, False, batched=batched)
    return _apply(input.unsqueeze(0), p, training, False, True, False).squeeze(0)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped elements become SELU's negative saturation, then an affine map keeps
    the mean and variance of a unit normal input. ``training`` defaults to False, as in PyTorch."""
    return _apply(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout with one draw per channel of (N, C, *) input (at least 2-D). ``training`` defaults to
    False, as in PyTorch."""
    return _apply(input, p, training, inplace, True, True)
