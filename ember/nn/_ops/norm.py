"""Normalisation: batch_norm, layer_norm, group_norm, rms_norm — each one fused forward/backward node; instance_norm
is batch_norm over (1, N * C, *); local_response_norm is composed of recorded ops.

All three normalise x to xhat = (x - mean) / sqrt(var + eps) over some axes
(biased variance) and then apply a per-channel / per-element affine map. Their
input gradient shares one formula (``_normalized_grad``; LayerNorm evaluates it on a (rows, features) view).

The backward formulas read the normalised input and 1/std, forward intermediates that depend on the input: under
create_graph each node's forward runs again on recorded inputs (``rerun_for_higher_order``), taking the plain
expressions where the fast path writes into buffers, and so does its backward (autograd/recorded.py).
"""

from __future__ import annotations

import math
from functools import partial

from ... import _warnings
from ..._backend import xp
from ..._dtype import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES, not_implemented_for, np_kind
from ..._kernels import batch_norm as compiled_bn
from ..._kernels import norm as compiled
from ..._kernels._omp import region_threads
from ..._kernels.policy import policy
from ..._parallel import chunks_for, parallel_for, parallel_kernel, parallel_rows
from ..._size import c_type_name
from ..._tensor import Tensor
from ...autograd.graph import Node, records_nothing, shown_as, torch_named, version_checked
from ...autograd.recorded import is_recorded
from ...autograd.saved_attributes import checked_argument, saved_tensor, saved_value
from ...ops.activation import col_sums, row_sums
from ...ops.shape import index_sizes
from .padding import pad


def _sum(a, axes):
    """``a.sum(axes, keepdims=True)`` as one ufunc call (ndarray.sum adds Python-level overhead per call)."""
    return a.sum(axis=axes, keepdims=True) if is_recorded(a) else xp.add.reduce(a, axis=axes, keepdims=True)


def _mean(a, axes):
    """``a.mean(axes, keepdims=True)`` (see ``_sum``)."""
    out = _sum(a, axes)
    out /= a.size // out.size if out.size else 1  # an empty reduction gives 0/0 = NaN, like mean()
    return out


def _normalize(x, axes, eps, stats=None):
    """(xhat, 1/std) with statistics over ``axes`` (kept as size-1 dims); ``stats`` (a list) receives
    the mean and biased variance."""
    mean = _mean(x, axes)
    xc = x - mean
    var = _mean(xc * xc, axes)
    if stats is not None:
        stats.extend((mean, var))
    invstd = 1 / xp.sqrt(var + x.dtype.type(eps))
    xc *= invstd
    return xc, invstd


def _normalized_grad(gxhat, xhat, invstd, axes):
    """dL/dx from dL/dxhat when the mean and variance over ``axes`` depend on x:
    invstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))."""
    m1 = _mean(gxhat, axes)
    m2 = _mean(gxhat * xhat, axes)
    return invstd * (gxhat - m1 - xhat * m2)


@torch_named("NativeBatchNormBackward0")
class BatchNorm(Node):
    """Training mode: batch statistics (gradient flows through them); eval: fixed running statistics."""
    float32_compute = True
    narrows_mixed_result = True  # (graph.Node: one node in the half input's dtype, as PyTorch's)
    rerun_for_higher_order = True

    # (the running statistics are parameters, not inputs: PyTorch's node has three edges, input, weight and bias)
    def forward(self, x, w, b, mean=None, var=None, eps=1e-5, stats=None):
        if is_recorded(x):  # create_graph's rerun: the running statistics were updated by the first run
            stats, self.perm = None, None
        else:
            self.perm = _channel_major(x) if mean is None else None
        if self.perm is not None:
            return self._forward_rows(x, w, b, eps, stats)
        axes = (0, *range(2, x.ndim))
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        if mean is None:
            xhat, invstd = _normalize(x, axes, eps, stats)
        else:
            invstd = (1 / xp.sqrt(var + x.dtype.type(eps))).reshape(shape)
            xhat = (x - mean.reshape(shape)) * invstd
        self.batch_stats, self.axes, self.shape = mean is None, axes, shape
        out = xhat * w.reshape(shape) if w is not None else xhat.copy()
        if b is not None:
            out += b.reshape(shape)
        self.saved = (xhat, invstd, w)
        return out

    def backward(self, g):
        if self.perm is not None:
            return self._backward_rows(g)
        xhat, invstd, w = self.saved
        nx, nw, nb = self.needs_input_grad[:3]
        axes, shape = self.axes, self.shape
        gx = gw = gb = None
        if not (nx or nw or nb):
            return gx, gw, gb
        # per-channel sums first; the input gradient is then one fused expression of them (4 passes, no
        # full-size temporaries beyond two buffers):
        #   dx = a g - (a sum(g xhat) / M) xhat - a sum(g) / M,  a = w / std  (the mean and variance depend on x)
        gb_ = _sum(g, axes) if nb or (nx and self.batch_stats) else None
        prod = g * xhat if nw or (nx and self.batch_stats) else None
        gw_ = _sum(prod, axes) if prod is not None else None
        if nx:
            a = invstd * w.reshape(shape) if w is not None else invstd
            gx = g * a
            if self.batch_stats:
                m = g.size // a.size
                prod = xp.multiply(xhat, a * gw_ / m, out=None if is_recorded(g) else prod)
                gx -= prod
                gx -= a * gb_ / m
        if nw:
            gw = gw_.reshape(-1)
        if nb:
            gb = gb_.reshape(-1)
        return gx, gw, gb

    # Training mode on an input whose memory is (B, C, M) planes: channels each one contiguous block (B = 1: the
    # batch-last layout convolutions compute in, or N == 1) or a contiguous (N, C, *) array (B = N, M = prod(*)).
    # The reference: every statistic is a sum of BLAS dots over a channel's B rows and elementwise passes work on
    # rows; the compiled kernels (``_kernels/batch_norm.py``) make fewer passes. Both keep x and the mean for the
    # backward (as PyTorch, which also reports an in-place change of x before it), not x - mean. Channels are
    # split over threads either way (each channel's arithmetic is the same whatever the split).
    def _forward_rows(self, x, w, b, eps, stats):
        rows = _as_planes(x, self.perm)
        _, c, m = rows.shape
        m *= rows.shape[0]
        out = xp.empty_like(rows)
        mean, var = xp.empty(c, x.dtype), xp.empty(c, x.dtype)
        if _compiled(rows, w, b):
            w_, b_ = (xp.empty(0, x.dtype) if a is None else a for a in (w, b))
            parallel_kernel(compiled_bn.forward, lambda k, lo, hi: k(rows, w_, b_, eps, lo, hi, mean, var, out), c,
                            rows.size, policy.min_parallel_pass_elements)
        else:
            xc, ones = xp.empty_like(rows), xp.ones(rows.shape[2], x.dtype)

            def run(lo: int, hi: int) -> None:
                r, d = rows[:, lo:hi], xc[:, lo:hi]
                xp.divide(xp.vecdot(r, ones).sum(0), m, out=mean[lo:hi])
                xp.subtract(r, mean[lo:hi, None], out=d)
                xp.divide(xp.vecdot(d, d).sum(0), m, out=var[lo:hi])
                scale = 1 / xp.sqrt(var[lo:hi] + x.dtype.type(eps))
                if w is not None:
                    scale *= w[lo:hi]
                xp.multiply(d, scale[:, None], out=out[:, lo:hi])
                if b is not None:
                    out[:, lo:hi] += b[lo:hi, None]

            parallel_for(run, c, rows.size)
        if stats is not None:
            stats.extend((mean, var))
        invstd = 1 / xp.sqrt(var + x.dtype.type(eps))
        self.saved = (x, invstd, w, mean)
        return _from_planes(out, x.shape, self.perm)

    def _backward_rows(self, g):
        # with xhat = xc * invstd and a = w * invstd:
        #   dx = a g - (a invstd^2 sum(g xc) / M) xc - a sum(g) / M,  dw = invstd sum(g xc),  db = sum(g)
        x, invstd, w, mean = self.saved
        nx, nw, nb = self.needs_input_grad[:3]
        gr, xc = _as_planes(g, self.perm, copy=True), _as_planes(x, self.perm)  # xc: x until centred below
        c, m = xc.shape[1], xc.shape[0] * xc.shape[2]
        a = invstd * w if w is not None else invstd
        gsum, gdot = xp.empty(c, xc.dtype), xp.empty(c, xc.dtype)
        gx = xp.empty_like(xc) if nx else None
        if _compiled(gr, xc, a):
            out = xp.empty((0, 0, 0), xc.dtype) if gx is None else gx
            parallel_kernel(compiled_bn.backward, lambda k, lo, hi: k(gr, xc, mean, a, invstd, lo, hi, gsum, gdot, out),
                            c, xc.size, policy.min_parallel_pass_elements)
        else:
            xc = xc - mean[:, None]
            ones = xp.ones(xc.shape[2], xc.dtype)

            def run(lo: int, hi: int) -> None:  # channels lo..hi: their sums, then their rows of dx
                r = gr[:, lo:hi]
                xp.sum(xp.vecdot(r, ones), 0, out=gsum[lo:hi])
                xp.sum(xp.vecdot(r, xc[:, lo:hi]), 0, out=gdot[lo:hi])
                if gx is not None:
                    ac = a[lo:hi]
                    k1, k2 = ac * invstd[lo:hi] ** 2 * gdot[lo:hi] / m, ac * gsum[lo:hi] / m
                    d = gx[:, lo:hi]
                    xp.multiply(r, ac[:, None], out=d)
                    t = xc[:, lo:hi] * k1[:, None]
                    t += k2[:, None]
                    d -= t

            parallel_for(run, c, xc.size)
        gx = _from_planes(gx, g.shape, self.perm) if nx else None
        return gx, invstd * gdot if nw else None, gsum if nb else None


def _compiled(*arrays) -> bool:
    """Whether BatchNorm's compiled channel kernels take these planes and per-channel arrays (None: absent): plain
    C-contiguous float32/float64 NumPy arrays of one dtype."""
    dtype = arrays[0].dtype
    return (dtype in (xp.float32, xp.float64) and all(a is None or (type(a) is xp.ndarray and a.dtype == dtype
                                                                    and a.flags.c_contiguous) for a in arrays)
            and policy.use_compiled())


def _channel_major(x):
    """How x's memory shows as (B, C, M) planes, C-contiguous: the axis order that makes it (C, rest) (B = 1, each
    channel one row), "planes" for a contiguous (N, C, *) array with spatial dims (B = N); None when x's memory
    keeps channels apart in neither way (then BatchNorm reduces over the (N, C, *) axes)."""
    if x.ndim < 2 or not x.size:
        return None
    rest = sorted((i for i in range(x.ndim) if i != 1), key=lambda i: -x.strides[i])
    perm = (1, *rest)
    if x.transpose(perm).flags.c_contiguous:
        return perm
    return "planes" if x.ndim > 2 and x.flags.c_contiguous else None


def _as_planes(a, layout, copy: bool = False):
    """a as its (B, C, M) planes (``_channel_major``'s layout); ``copy``: copy a laid out otherwise into it."""
    if layout == "planes":
        a = a if a.flags.c_contiguous else xp.ascontiguousarray(a)
        return a.reshape(a.shape[0], a.shape[1], -1)
    r = a.transpose(layout)
    return (r if r.flags.c_contiguous or not copy else xp.ascontiguousarray(r)).reshape(1, a.shape[1], -1)


def _from_planes(p, shape, layout):
    """(B, C, M) planes back as an array of x's shape (a view, x's memory order)."""
    return p.reshape(shape) if layout == "planes" else _from_rows(p[0], shape, layout)


def _from_rows(rows, shape, perm):
    """(C, M) rows laid out as x.transpose(perm) back as an array of x's shape (a view, x's memory order)."""
    return rows.reshape([shape[i] for i in perm]).transpose(xp.argsort(perm))


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of (N, C, *) input.

    ``training=True`` uses the batch mean and biased variance and, if running stats are given (both or
    neither), updates them in place: ``running = (1 - momentum) * running + momentum * batch`` with the
    *unbiased* batch variance, as PyTorch does; ``training=False`` normalises with the running stats, which
    must then be given (PyTorch's errors otherwise).

    As PyTorch's ``F.batch_norm``, it first refuses (ValueError) what its Python wrapper refuses, whatever the
    input holds: in training, one value per channel (N * prod(spatial) == 1, an input without channels too) and an
    eps <= 0; a negative eps always. ``torch.batch_norm`` (``batch_norm_native``) makes neither check.
    """
    shape = input.shape
    if training and not shape:  # (PyTorch's wrapper reads the batch size of a 0-d input's empty size)
        raise IndexError("tuple index out of range (batch_norm expects an input of shape (N, C, ...), got [])")
    if training and math.prod(shape[2:], start=shape[0]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {shape}")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return batch_norm_native(input, running_mean, running_var, weight, bias, training, momentum, eps)


def batch_norm_native(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                      weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
                      momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """PyTorch's native batch_norm (``torch.batch_norm``, ``F.batch_norm`` after its checks): any eps, one value
    per channel in training computed (a zero result; the running variance's unbiased update then NaN). An empty
    input returns first, before any parameter is checked: ``input * weight[0] + bias[0]``, as PyTorch's kernel."""
    x = input._data
    if x.size == 0 and x.ndim:
        out = input.clone()
        out = out * weight.select(0, 0) if weight is not None else out
        return out + bias.select(0, 0) if bias is not None else out
    if x.ndim < 2:
        _refuse_without_channels(input, running_mean, running_var, weight, bias, training)
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    for t in (running_mean, running_var):  # (PyTorch's kernel reads them through a 1-D accessor)
        if t is not None and t._data.ndim != 1:
            raise RuntimeError(f"TensorAccessor expected 1 dims but tensor has {t._data.ndim}")
    # a weight or bias of C elements in another shape ((1, C), as a layer may keep it) is taken as its C values,
    # as PyTorch's kernel does; the view is recorded, so its gradient has the shape it was given
    weight = weight.reshape(c) if weight is not None and weight._data.ndim != 1 else weight
    bias = bias.reshape(c) if bias is not None and bias._data.ndim != 1 else bias
    if training and (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    _refuse_non_floating("batch_norm", input)
    check_parameter_dtypes(input, weight, bias, running_mean, running_var)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if not training and t is None:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    count = x.size // c
    update = training and running_mean is not None
    stats: list | None = [] if update else None  # the batch mean and variance, from the forward pass itself
    mean = None if training else running_mean._data
    var = None if training else running_var._data
    # PyTorch's node saves the input and the running statistics it was given (read in eval mode, updated in
    # training mode): changed in place before backward, they are its error
    out = BatchNorm.apply(input, weight, bias, mean=mean, var=var, eps=eps, stats=stats)
    out = version_checked(out, input, running_mean, running_var)
    if update:
        _update_running(stats, running_mean, running_var, momentum, count)
    return out


def _refuse_without_channels(input: Tensor, running_mean, running_var, weight, bias, training: bool) -> None:
    """PyTorch's errors for the native batch_norm of an input without a channel dimension (0-d or 1-D): its kernel
    finds no channels (so any given parameter has too many elements) and reads dimension 1."""
    hint = f" (batch_norm expects an input of shape (N, C, ...), got {list(input.shape)})"
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if not training and t is None:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t._data.size:
            raise RuntimeError(f"batch_norm: {name} should contain 0 elements not {t._data.size}" + hint)
    raise IndexError(("Dimension out of range (expected to be in range of [-1, 0], but got 1)" if input._data.ndim
                      else "Dimension specified as 1 but tensor has no dimensions") + hint)


def _refuse_non_floating(kernel: str, input: Tensor) -> None:
    """PyTorch's NotImplementedError for a normalisation of an integer, bool or complex input (its kernels are
    dispatched on the floating dtypes only), ``kernel`` named as its message names it."""
    if np_kind(input._data.dtype) != "f":
        raise not_implemented_for(kernel, input.dtype)


def check_parameter_dtypes(input: Tensor, *params: Tensor | None) -> bool:
    """PyTorch's CPU normalisation kernels' dtype rule: the parameters (weight, bias, running statistics) have the
    input's dtype, or (mixed) the input is bfloat16 / float16 and every parameter float32. A float64 batch through a
    float32 layer is PyTorch's RuntimeError, not a float64 result. True when mixed: the result then has the
    input's dtype (computed in float32, rounded once by the node: ``Node.narrows_mixed_result``)."""
    given = [p for p in params if p is not None]
    if not given:
        return False
    x = input._data.dtype
    if given[0]._data.dtype == x:  # not mixed: a later parameter of another dtype is the kernel's error
        for p in given[1:]:
            if p._data.dtype != x:
                raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[input.dtype.name]} but found "
                                   f"{SCALAR_TYPE_NAMES[p.dtype.name]}")
        return False
    if any(p._data.dtype != xp.float32 for p in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if not (x.itemsize == 2 and np_kind(x) == "f"):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return True


def _update_running(stats: list, running_mean: Tensor, running_var: Tensor, momentum: float, count: int) -> None:
    """running <- (1 - momentum) running + momentum batch_stat, in place (not part of the graph). As PyTorch's
    kernel, which writes them in place within the op, their versions stay: a second forward of the same layer
    before backward leaves the first one's saved statistics valid."""
    mean, var = (a.reshape(-1) for a in stats)
    with xp.errstate(divide="ignore", invalid="ignore"):  # (one value per channel: 0 / 0, NaN, as PyTorch's)
        var = var * count / xp.float64(count - 1)  # unbiased, as PyTorch stores it
    for buf, stat in ((running_mean, mean), (running_var, var)):
        d = buf._data
        d *= 1 - momentum
        d += (momentum * stat).astype(d.dtype, copy=False)


@torch_named("NativeLayerNormBackward0")
class LayerNorm(Node):
    """Works on x as (rows, features): the per-row sums that involve the weight, and the per-feature sums for
    the weight and bias gradients, are matrix-vector products (BLAS, threaded) on the whole arrays instead of
    multiply-then-reduce passes; every other step writes into an array it already owns, on row chunks split
    among the intra-op threads (each row's arithmetic does not depend on the split). Under create_graph (recorded
    arrays) both run the plain expressions of ``_normalize`` and ``_normalized_grad``.

    PyTorch's node saves the input, weight, bias, mean and 1/std; this one keeps the normalised rows, 1/std and
    the weight: ``_saved_input`` and ``_saved_bias`` are the arrays held to check their versions (``layer_norm``),
    ``_saved_result1`` (the mean) is computed from the input when read."""
    float32_compute = True
    narrows_mixed_result = True  # (graph.Node: one node in the half input's dtype, as PyTorch's)
    rerun_for_higher_order = True

    _saved_weight, _raw_saved_weight = saved_tensor(2)
    _saved_input = property(lambda node: checked_argument(node, 0, 0))
    # (held second, after the input; None, as PyTorch's, without one, after backward too)
    _saved_bias = property(lambda node: checked_argument(node, 1, 2) if node.biased else None)
    _saved_normalized_shape = property(lambda node: tuple(node.norm))

    def _statistic_shape(self) -> tuple:
        """PyTorch's shape of the saved mean and 1/std: the input's, 1 along the normalised dims."""
        return self.shape[:len(self.shape) - len(self.norm)] + (1,) * len(self.norm)

    @property
    def _saved_result1(self) -> Tensor | None:
        """The mean of each row, as PyTorch's node saves it, from the input held to check its version."""
        x = self._saved_input
        if x is None:
            return None
        rows = x._data.reshape(-1, math.prod(self.norm)).astype(xp.float32 if x._data.itemsize < 4 else x._data.dtype)
        return Tensor._make(rows.mean(axis=1).reshape(self._statistic_shape()).astype(x._data.dtype))

    @property
    def _saved_result2(self) -> Tensor:
        """1/std of each row (kept for backward), in PyTorch's shape and the input's dtype."""
        rstd = saved_value(self, 1)._data.reshape(self._statistic_shape())
        return Tensor._make(rstd if self.half_dtype is None else rstd.astype(self.half_dtype))

    def forward(self, x, w, b, k, eps, accumulate=None):
        lead, norm = x.shape[:x.ndim - k], x.shape[x.ndim - k:]
        feat = math.prod(norm)
        x2 = x.reshape(math.prod(lead), feat)
        self.shape, self.norm, self.accumulate, self.biased = x.shape, norm, accumulate, b is not None
        if is_recorded(x):
            xhat, invstd = _normalize(x2, 1, eps)
            self.saved = (xhat, invstd, w)
            out = xhat * w.reshape(-1) if w is not None else xhat
            return (out + b.reshape(-1) if b is not None else out).reshape(x.shape)
        if _compiled_rows(x2, w, b):
            return self._forward_compiled(x2, w, b, eps, x.shape, norm)
        scale = x.dtype.type(1 / feat if feat else float("nan"))  # an empty mean is NaN, as PyTorch's
        mean = row_sums(x2, 1)
        mean *= scale
        xhat, sq = xp.empty_like(x2), xp.empty_like(x2)
        parallel_rows(_center_square, x2, mean, xhat, sq)
        invstd = row_sums(sq, 1)
        invstd *= scale
        invstd += x.dtype.type(eps)
        xp.sqrt(invstd, out=invstd)
        xp.divide(1, invstd, out=invstd)
        parallel_rows(partial(_scale_affine, w=None if w is None else w.reshape(-1),
                              b=None if b is None else b.reshape(-1)), xhat, invstd, sq)
        self.saved = (xhat, invstd, w)
        return sq.reshape(x.shape)

    def _forward_compiled(self, x2, w, b, eps, shape, norm):
        """The forward by the compiled row kernel (rows split over threads)."""
        out, xhat, invstd = _compiled_norm_rows(x2, w, b, eps, True, self.needs_input_grad is not None)
        self.saved, self.shape, self.norm = (xhat, invstd, w), shape, norm
        return out.reshape(shape)

    def backward(self, g):
        xhat, invstd, w = self.saved
        nx, nw, nb = self.needs_input_grad
        g2 = g.reshape(xhat.shape)
        if is_recorded(g):
            gw = (g2 * xhat).sum(axis=0).reshape(self.norm) if nw else None
            gb = g2.sum(axis=0).reshape(self.norm) if nb else None
            gxhat = g2 * w.reshape(-1) if w is not None else g2
            return (_normalized_grad(gxhat, xhat, invstd, 1).reshape(self.shape) if nx else None), gw, gb
        gxh = xp.empty_like(xhat)  # g * xhat: summed over rows for the weight, over features for x
        if nx and _compiled_rows(xhat, w, None) and g2.dtype == xhat.dtype and g2.flags.c_contiguous:
            gx = xp.empty_like(xhat)
            wf = _flat_or_empty(w, xhat.dtype)

            def run(lo: int, hi: int) -> None:
                compiled.layer_norm_grad(g2[lo:hi], xhat[lo:hi], invstd[lo:hi], wf, True, gxh[lo:hi], gx[lo:hi])

            if region_threads(xhat.shape[0], xhat.size):  # one region on numba's OpenMP threads (policy.omp)
                compiled.layer_norm_grad.parallel(g2, xhat, invstd, wf, True, gxh, gx)
            else:
                parallel_for(run, xhat.shape[0], xhat.size, policy.min_parallel_pass_elements)
            return (gx.reshape(self.shape), self._param_grad(gxh) if nw else None, self._param_grad(g2) if nb else None)
        parallel_rows(xp.multiply, g2, xhat, gxh)
        gw = self._param_grad(gxh) if nw else None
        gb = self._param_grad(g2) if nb else None
        gx = None
        if nx:
            # dx = invstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)), gxhat = g * w
            scale = g2.dtype.type(1 / xhat.shape[1] if xhat.shape[1] else float("nan"))
            if w is None:
                m1, m2 = row_sums(g2, 1), row_sums(gxh, 1)
            else:
                m1, m2 = (g2 @ w.reshape(-1))[:, None], (gxh @ w.reshape(-1))[:, None]
            m1 *= scale
            m2 *= scale
            gx = xp.empty_like(xhat)
            parallel_rows(partial(_layer_norm_dx, w=None if w is None else w.reshape(-1)), g2, m1, xhat, m2, invstd,
                          gxh, gx)
            gx = gx.reshape(self.shape)
        return gx, gw, gb

    def _param_grad(self, terms):
        """The weight's (``terms`` = g * xhat) or the bias's (``terms`` = g) gradient: the column sums of the
        (rows, features) ``terms``. For a half-precision input through float32 parameters, PyTorch's CPU kernel
        accumulates them row by row in a buffer of the input's dtype, rounding each partial sum (one thread's
        order); the sums here do the same, so that mixed-precision training follows PyTorch step for step."""
        if self.accumulate is None:
            return col_sums(terms).reshape(self.norm)
        if self.accumulate.name == "bfloat16" and terms.dtype == xp.float32 and terms.flags.c_contiguous \
                and policy.use_compiled():
            acc32 = xp.zeros(terms.shape[1], xp.float32)
            compiled.accumulate_rows_bf16(terms, acc32)
            return acc32.reshape(self.norm)
        acc = xp.zeros(terms.shape[1], dtype=self.accumulate)
        for row in terms:
            acc = (acc.astype(xp.float32) + row).astype(self.accumulate)
        return acc.astype(xp.float32).reshape(self.norm)


def _compiled_rows(x2, w, b) -> bool:
    """Whether LayerNorm's compiled row kernels take x2 (rows, features) with weight w and bias b."""
    dt = x2.dtype  # (plain tests, no generator: every LayerNorm/RMSNorm call asks)
    return (dt in (xp.float32, xp.float64) and x2.shape[1] > 0 and x2.flags.c_contiguous
            and (w is None or w.dtype == dt) and (b is None or b.dtype == dt) and policy.use_compiled())


def _compiled_norm_rows(x2, w, b, eps, center: bool, keep: bool):
    """(out, xhat, invstd) of LayerNorm (``center``) or RMSNorm on the rows x2 by the compiled kernel, rows split
    over threads. Without ``keep`` (no gradient: no_grad, or no input that requires one) xhat and invstd are one
    row of scratch per chunk, not kept (None)."""
    out = xp.empty_like(x2)
    xhat, invstd = (xp.empty_like(x2), xp.empty((x2.shape[0], 1), x2.dtype)) if keep else (None, None)
    wf, bf = _flat_or_empty(w, x2.dtype), _flat_or_empty(b, x2.dtype)
    threads = region_threads(x2.shape[0], x2.size)
    if threads:  # one region on numba's OpenMP threads (policy.omp), each range of rows its own scratch
        scratch = (xhat, invstd) if keep else (xp.empty((1, x2.shape[1]), x2.dtype), xp.empty((1, 1), x2.dtype))
        compiled.layer_norm_blocks.parallel(x2, wf, bf, eps, center, *scratch, out, threads)
        return out, xhat, invstd
    if chunks_for(x2.shape[0], x2.size, policy.min_parallel_pass_elements) == 1:  # one chunk: all rows, no closure
        if keep:
            compiled.layer_norm(x2, wf, bf, eps, center, xhat, invstd, out)
        else:
            compiled.layer_norm(x2, wf, bf, eps, center, xp.empty((1, x2.shape[1]), x2.dtype),
                                xp.empty((1, 1), x2.dtype), out)
        return out, xhat, invstd

    def run(lo: int, hi: int) -> None:
        if keep:
            compiled.layer_norm(x2[lo:hi], wf, bf, eps, center, xhat[lo:hi], invstd[lo:hi], out[lo:hi])
        else:
            compiled.layer_norm(x2[lo:hi], wf, bf, eps, center, xp.empty((1, x2.shape[1]), x2.dtype),
                                xp.empty((1, 1), x2.dtype), out[lo:hi])

    parallel_for(run, x2.shape[0], x2.size, policy.min_parallel_pass_elements)
    return out, xhat, invstd


def _flat_or_empty(a, dtype):
    """A per-feature parameter as a contiguous 1-D array; an empty one for None (the kernels' "no parameter")."""
    if a is None:
        return xp.empty(0, dtype)
    return a if a.ndim == 1 and a.flags.c_contiguous else xp.ascontiguousarray(a.reshape(-1))


def _center_square(x, mean, xc, sq) -> None:
    xp.subtract(x, mean, out=xc)
    xp.square(xc, out=sq)


def _scale_affine(xhat, invstd, out, w, b) -> None:
    """xhat *= invstd; out = xhat * w + b (w, b: per feature, optional)."""
    xhat *= invstd
    if w is not None:
        xp.multiply(xhat, w, out=out)
    else:
        out[...] = xhat
    if b is not None:
        out += b


def _layer_norm_dx(g, m1, xhat, m2, invstd, tmp, dx, w) -> None:
    """dx = invstd * (g w - m1 - xhat m2) (m1, m2: the row means, already divided by the feature count)."""
    if w is not None:
        xp.multiply(g, w, out=dx)
        dx -= m1
    else:
        xp.subtract(g, m1, out=dx)
    xp.multiply(xhat, m2, out=tmp)
    dx -= tmp
    dx *= invstd


def _normalized_shape(op: str, input: Tensor, normalized_shape, **params) -> tuple:
    """``normalized_shape`` as a tuple, checked against the input's trailing dims and the affine parameters."""
    # (PyTorch's argument parser: a list, a tuple or a Size of ints; the functional form takes no single int)
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"{op}(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{c_type_name(normalized_shape)}")
    shape = index_sizes(normalized_shape, "normalized_shape", op, 2)
    k = len(shape)
    if op == "rms_norm" and input._data.ndim < k:  # (PyTorch's rms_norm checks the rank first, a ValueError)
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input._data.ndim}")
    if input._data.shape[input._data.ndim - k:] != shape or input._data.ndim < k:
        star = "*" if op == "rms_norm" else "*, "  # (PyTorch's rms_norm writes "[*2]", its layer_norm "[*, 2]")
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [{star}"
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    for name, t in params.items():
        if t is not None and t._data.shape != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(shape)}")
    return shape


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then scale by weight and shift by bias."""
    x = input._data
    # A module's call in one test (its tuple, a weight and a bias of that shape and the input's dtype); else the
    # checks below, with their messages, and mixed precision (half-precision input, float32 parameters)
    if (normalized_shape.__class__ is tuple and weight is not None and bias is not None
            and x.shape[x.ndim - len(normalized_shape):] == normalized_shape
            and weight._data.shape == normalized_shape and bias._data.shape == normalized_shape
            and weight._data.dtype == x.dtype and bias._data.dtype == x.dtype and x.dtype.kind == "f"):
        if (input.__class__ is Tensor and x.__class__ is xp.ndarray and x.size and x.flags.c_contiguous
                and (x.dtype is _F32 or x.dtype is _F64) and records_nothing(input, weight, bias)
                and policy.use_compiled()):
            return _unrecorded_layer_norm(x, weight._data, bias._data, len(normalized_shape), eps)
        out = LayerNorm.apply(input, weight, bias, k=len(normalized_shape), eps=eps, accumulate=None)
        node = out._grad_fn
        if node is not None:  # (version_checked's work: PyTorch saves the input and bias; the node keeps the
            node.check_versions_of(input, bias)  # normalised rows)
        return out
    first = weight if weight is not None else bias
    if first is not None and first._data.dtype != x.dtype and not isinstance(normalized_shape, int):
        check_parameter_dtypes(input, weight, bias)  # PyTorch's mixed-dtype check comes before its shape checks
    shape = _normalized_shape("layer_norm", input, normalized_shape, weight=weight, bias=bias)
    mixed = check_parameter_dtypes(input, weight, bias)
    _refuse_non_floating("LayerNormKernelImpl", input)
    # (PyTorch saves the input, weight and bias, whichever needs a gradient; the node keeps the normalised rows)
    accumulate = x.dtype if mixed else None
    out = version_checked(LayerNorm.apply(input, weight, bias, k=len(shape), eps=eps, accumulate=accumulate), input,
                          bias)
    return out


def _unrecorded_layer_norm(x, w, b, k: int, eps: float) -> Tensor:
    """``LayerNorm.apply`` where it records nothing (``records_nothing``) of a non-empty row-major float32/float64
    input ``x`` with a weight and bias of its dtype: its forward's compiled kernel (``_forward_compiled``: the same
    call, so the same bits) without the node."""
    x2 = x.reshape(math.prod(x.shape[:x.ndim - k]), math.prod(x.shape[x.ndim - k:]))
    return Tensor._make(_compiled_norm_rows(x2, w, b, eps, True, False)[0].reshape(x.shape))


_F32 = xp.dtype(xp.float32)
_F64 = xp.dtype(xp.float64)


class RMSNorm(Node):
    """x / rms(x) * w over the trailing dims, on x as (rows, features); rms(x) = sqrt(mean(x^2) + eps)."""
    float32_compute = True
    rerun_for_higher_order = True
    upcasts_input = True  # (PyTorch's rms_norm computes a half input as input.to(float32))

    def forward(self, x, w, k, eps):
        feat = math.prod(x.shape[x.ndim - k:])
        x2 = x.reshape(-1, feat) if x.size else x.reshape(math.prod(x.shape[:x.ndim - k]), feat)
        self.shape, self.norm = x.shape, x.shape[x.ndim - k:]
        if not is_recorded(x2) and x2.size and _compiled_rows(x2, w, None):
            return self._forward_compiled(x2, w, eps)
        ms = row_sums(x2 * x2, 1)
        ms *= x.dtype.type(1 / feat if feat else float("nan"))
        ms += x.dtype.type(eps)
        invrms = 1 / xp.sqrt(ms)
        xhat = x2 * invrms
        self.saved = (xhat, invrms, self._weight_kept(w))
        return (xhat * w.reshape(-1) if w is not None else xhat).reshape(x.shape)

    def _forward_compiled(self, x2, w, eps):
        """The forward by LayerNorm's compiled row kernel without centering (rows split over threads)."""
        out, xhat, invrms = _compiled_norm_rows(x2, w, None, eps, False, self.needs_input_grad is not None)
        self.saved = (xhat, invrms, self._weight_kept(w))
        return out.reshape(self.shape)

    def _weight_kept(self, w):
        """The weight, read by the input's gradient alone (so saved, and its version checked, only for it)."""
        needs = self.needs_input_grad
        return w if needs is None or needs[0] else None

    def backward(self, g):
        # dx = invrms * (gxhat - xhat * mean(gxhat * xhat)), gxhat = g * w; dw = sum over rows of g * xhat
        xhat, invrms, w = self.saved
        nx, nw = self.needs_input_grad
        g2 = g.reshape(xhat.shape)
        if nx and not is_recorded(g2) and _compiled_rows(xhat, w, None) and g2.dtype == xhat.dtype \
                and g2.flags.c_contiguous:
            gx, gxh = xp.empty_like(xhat), xp.empty_like(xhat)
            wf = _flat_or_empty(w, xhat.dtype)

            def run(lo: int, hi: int) -> None:
                compiled.layer_norm_grad(g2[lo:hi], xhat[lo:hi], invrms[lo:hi], wf, False, gxh[lo:hi], gx[lo:hi])

            if region_threads(xhat.shape[0], xhat.size):  # one region on numba's OpenMP threads (policy.omp)
                compiled.layer_norm_grad.parallel(g2, xhat, invrms, wf, False, gxh, gx)
            else:
                parallel_for(run, xhat.shape[0], xhat.size, policy.min_parallel_pass_elements)
            return gx.reshape(self.shape), (col_sums(gxh).reshape(self.norm) if nw else None)
        gw = col_sums(g2 * xhat).reshape(self.norm) if nw else None
        gx = None
        if nx:
            gxh = g2 * w.reshape(-1) if w is not None else g2
            m = row_sums(gxh * xhat, 1)
            m *= g2.dtype.type(1 / xhat.shape[1] if xhat.shape[1] else float("nan"))
            gx = (invrms * (gxh - xhat * m)).reshape(self.shape)
        return gx, gw


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """Divide by the root mean square over the trailing ``normalized_shape`` dims, then scale by weight.
    ``eps=None`` is the machine epsilon of the dtype PyTorch computes in: the input's, float32's for a
    half-precision input (its ``opmath`` type)."""
    shape = _normalized_shape("rms_norm", input, normalized_shape, weight=weight)
    if np_kind(input._data.dtype) != "f":
        raise not_implemented_for("rms_norm", input.dtype)
    if eps is None:
        dt = input._data.dtype
        eps = float(xp.finfo(xp.float32 if dt.itemsize < 4 else dt).eps)
    if weight is not None and weight.dtype != input.dtype:
        _warn_mismatch(input, weight)
    # (PyTorch's composition saves the input, and the weight, only for the input's gradient)
    out = version_checked(RMSNorm.apply(input, weight, k=len(shape), eps=eps), input, reader=0)
    # PyTorch's composite ends with its multiply (by the weight, or by the reciprocal root mean square), then
    # ``type_as(input)``: the result has the input's dtype whatever the weight's (a float64 weight's product cast
    # back to a float32 input's), and a half-precision input's is always cast back
    if out.dtype != input.dtype:
        return out.to(input.dtype)
    return shown_as(out, "ToCopyBackward0" if input._data.dtype.itemsize < 4 and input.is_floating_point()
                    else "MulBackward0")


_mismatch_warned = False


def _warn_mismatch(input: Tensor, weight: Tensor) -> None:
    """PyTorch's warning that rms_norm of a weight of another dtype than the input's takes its composite path
    (once per process, whichever dtypes: one ``TORCH_WARN_ONCE``)."""
    global _mismatch_warned
    if not _mismatch_warned:
        _mismatch_warned = True
        _warnings.warn_named("torch.nn.functional", "Mismatch dtype between input and weight: input dtype = "
                             f"{CPP_TYPE_NAMES[input.dtype.name]}, weight dtype = {CPP_TYPE_NAMES[weight.dtype.name]}"
                             ", Cannot dispatch to fused implementation.")


@torch_named("NativeGroupNormBackward0")
class GroupNorm(Node):
    float32_compute = True
    narrows_mixed_result = True  # (graph.Node: one node in the half input's dtype, as PyTorch's)
    rerun_for_higher_order = True

    def forward(self, x, w, b, groups, eps):
        n, c = x.shape[:2]
        shape = (1, c) + (1,) * (x.ndim - 2)
        rows = (n, groups, c // groups * math.prod(x.shape[2:]))  # (each group's values; not -1: an empty batch)
        xhat, invstd = _normalize(x.reshape(rows), -1, eps)
        xhat = xhat.reshape(x.shape)
        out = xhat * w.reshape(shape) if w is not None else xhat.copy()
        if b is not None:
            out += b.reshape(shape)
        self.saved, self.meta = (xhat, invstd, w), (rows, shape)
        return out

    def backward(self, g):
        xhat, invstd, w = self.saved
        rows, shape = self.meta
        nx, nw, nb = self.needs_input_grad
        axes = (0, *range(2, g.ndim))
        gx = gw = gb = None
        if nx:
            gxhat = (g * w.reshape(shape) if w is not None else g).reshape(rows)
            gx = _normalized_grad(gxhat, xhat.reshape(gxhat.shape), invstd, -1).reshape(g.shape)
        if nw:
            gw = (g * xhat).sum(axis=axes)
        if nb:
            gb = g.sum(axis=axes)
        return gx, gw, gb


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise (N, C, *) over each group of C/num_groups channels (and all spatial positions)."""
    if input._data.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input._data.ndim}")
    shape = input._data.shape
    c = shape[1]
    if shape[0] * c // num_groups * math.prod(shape[2:]) == 1:  # (PyTorch's check of the (N * C / G, G, *) view)
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{[shape[0] * c // num_groups, num_groups, *shape[2:]]}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    # PyTorch's checks, before the dtypes'; its bias message shows the weight's shape ([0] without a weight)
    shown = [0] if weight is None else list(weight.shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t._data.ndim != 1 or t._data.size != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, but "
                               f"got {name} of shape {shown} and input of shape {list(input.shape)}")
    check_parameter_dtypes(input, weight, bias)
    _refuse_non_floating("GroupNormKernelImpl", input)
    out = version_checked(GroupNorm.apply(input, weight, bias, groups=num_groups, eps=eps),
                          input)  # (saved)
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) of (N, C, *) input over its spatial positions, then the per-channel affine.

    As PyTorch, it is batch normalisation of the input seen as (1, N * C, *): ``use_input_stats`` (training) uses
    each instance's mean and biased variance and, if running stats are given, moves them by ``momentum`` towards
    the batch average of the instances' means and unbiased variances; otherwise it normalises with the running
    statistics (the same for every sample). As PyTorch's ``F.instance_norm``, one spatial element in training is
    its ValueError first (``torch.instance_norm``, ``instance_norm_native``, computes it).
    """
    if use_input_stats and math.prod(input._data.shape[2:]) == 1:  # (also an input of fewer than 2 dims)
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    return instance_norm_native(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def instance_norm_native(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                         weight: Tensor | None, bias: Tensor | None, use_input_stats: bool, momentum: float,
                         eps: float) -> Tensor:
    """PyTorch's native instance_norm (``torch.instance_norm``): the native batch_norm of the (1, N * C, *) view."""
    shape = input._data.shape
    if len(shape) < 2:  # PyTorch's IndexError for the channel dim it reads
        raise IndexError("Dimension specified as 0 but tensor has no dimensions" if not shape else
                         "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    n, c = shape[:2]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t._data.ndim > 1:  # (what PyTorch's repeat of each per sample says)
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                               "tensor")
        if t is not None and t._data.shape != (c,):
            # (PyTorch's batch_norm's check, of the tensors repeated per sample)
            raise RuntimeError(f"{name} should contain {n * c} elements not {n * t._data.size}")
    track = use_input_stats and running_mean is not None and running_var is not None
    # PyTorch's graph in both modes: the input viewed as (1, N * C, *), every per-channel tensor repeated per sample
    # (copies: running statistics changed in place before backward are no error), the result viewed back
    rows = [None if t is None else t.repeat(n) for t in (running_mean, running_var, weight, bias)]
    out = batch_norm_native(input.reshape(1, n * c, *shape[2:]), *rows, use_input_stats, momentum, eps)
    if track:  # each channel's running statistics: the average of its N instances' updates (none: NaN)
        for buf, rep in zip((running_mean, running_var), rows):
            with xp.errstate(invalid="ignore"):
                buf._data[...] = rep._data.reshape(n, c).sum(0) / xp.float64(n)
            buf._bump_version()
    return out.view(shape)  # (a view, as PyTorch's: ViewBackward0)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta, the window zero-padded at the
    channel ends (size // 2 before, (size - 1) // 2 after) and always divided by ``size``, as PyTorch's. Composed
    of recorded ops (the gradient is autograd's); the window sum adds ``size`` shifted slices in window order."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    flat = sq.reshape(sq.shape[0], c, -1)  # (N, C, rest): pad the channel dim
    padded = pad(flat, (0, 0, size // 2, (size - 1) // 2))
    window = padded[:, 0:c]
    for i in range(1, size):
        window = window + padded[:, i:i + c]
    div = (window / size * alpha + k) ** beta
    return input / div.reshape(input.shape)
