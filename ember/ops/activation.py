"""Activation ops with fused backward formulas: softmax, log_softmax (and friends)."""

from __future__ import annotations

import math
import threading
import weakref
from functools import partial

from .. import _dtype
from .._backend import xp
from .._kernels import softmax as compiled
from .._kernels._omp import region_threads
from .._kernels.policy import policy
from .._parallel import chunks_for, parallel_for, parallel_rows
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import Node, records_nothing, torch_named
from ..autograd.recorded import RecordedArray, is_recorded
from ..autograd.saved_attributes import keep_dim_as_given, saved_dim, saved_tensor
from .elementwise import cast, not_implemented_for


def row_sums(a, dim):
    """a.sum(dim, keepdims=True); over the last axis of a C-contiguous array as one matrix-vector product
    (BLAS), several times faster than NumPy's reduction over short rows."""
    if is_recorded(a):
        return a.sum(axis=dim, keepdims=True)
    n = a.shape[dim] if a.ndim else 1
    if a.ndim and dim == a.ndim - 1 and a.size and a.flags.c_contiguous:
        return (a.reshape(-1, n) @ ones_vector(n, a.dtype)).reshape(a.shape[:-1] + (1,))
    return xp.sum(a, axis=dim, keepdims=True)


_LOG2E = 1 / math.log(2)


def exp_into(a, out):
    """out = exp(a) (out may be a), returned: exp2(a log2 e). NumPy's float32 exp2 takes half the time of its exp
    (56 against 119 us per 256 Ki elements) and is within 1 ulp (exp: 2.4), so with the multiply it is still
    ~40 % cheaper; rounding a log2 e adds |a| ulps of relative error, as rounding a itself does."""
    xp.multiply(a, a.dtype.type(_LOG2E), out=out)
    return xp.exp2(out, out=out)


def col_sums(a):
    """a.sum(0) of a 2-D array as one matrix-vector product (BLAS): 2-3x faster than NumPy's reduction."""
    if is_recorded(a):  # create_graph: NumPy's reduction, recorded
        return a.sum(axis=0)
    return ones_vector(a.shape[0], a.dtype) @ a


_ONES: dict = {}  # (n, dtype) -> n ones, read-only: the sums' BLAS operand, made once per size


def ones_vector(n: int, dtype):
    """A read-only vector of ``n`` ones (the same operand ``numpy.ones`` makes, so the same products), kept for
    sizes up to 4096: a model's bias and LayerNorm gradients sum over the same few row counts every step, and
    ``numpy.ones`` (a Python function: an empty array, then a fill) cost about 1 µs of a small Linear's backward."""
    key = (n, dtype)
    v = _ONES.get(key)
    if v is None:
        v = xp.ones(n, dtype=dtype)
        if n <= 4096:
            v.flags.writeable = False
            if len(_ONES) >= 64:
                _ONES.clear()
            _ONES[key] = v
    return v


# The smallest row sum of exp(x - global max) for which the global shift is exact to float rounding: then
# every exp(x - max) that matters is a normal number, and those that underflow are below 2**16 * tiny.
_MIN_ROW_SUM = 2.0 ** -16


def compiled_softmax(x) -> bool:
    """Whether the compiled softmax kernels take the rows x (float32 NumPy arrays)."""
    return type(x) is xp.ndarray and x.dtype == xp.float32 and policy.use_compiled()


def softmax_rows(x, out, *, log: bool = False, empty_rows_zero: bool = False, causal: int = 0,
                 scale: float = 1.0) -> None:
    """Softmax (with ``log``, log-softmax) of each row of the 2-D C-contiguous array ``x``, written into ``out``.

    The compiled kernels shift each row by its own max, as PyTorch does (so a dominant entry comes out 1.0, not
    0.99999994); log-softmax's, for rows of 16 entries or more, also sums and subtracts in PyTorch's order (its
    bits, mostly). In the NumPy reference the shift that keeps exp from overflowing is x's global max: one fast
    reduction instead of a per-row one (NumPy's reduction over short rows is the slowest pass). A row whose sum
    of exp(x - max) comes out below 2**-16 (rows of very different scale, all -inf, inf or nan) is recomputed
    with its own max; for the
    others the shift adds at most ~11 + log(n) to |x - max|, whose rounding (|x - max| ulps of exp, as with a
    per-row shift) bounds the relative error: ~1e-6 in float32. Rows are computed independently (row sums by
    einsum, per row), so they are split among the intra-op threads with the same bits for any thread count.
    ``empty_rows_zero``: a row of -inf gives zeros (scaled_dot_product_attention) instead of nan (softmax).
    ``causal`` > 0 (only where ``compiled_softmax(x)``): the rows are blocks of ``causal`` queries, row i of
    each keeping keys j <= i (zeros beyond), as if an additive causal mask had been added to x. ``scale`` > 0
    (only there too): the softmax of x * scale.
    Half precision is computed in float32.
    """
    if not x.size:
        return
    least = policy.min_parallel_pass_elements  # (the compiled kernels': a few passes over each row)
    if log and x.shape[1] >= 16 and compiled_softmax(x) and not causal and scale == 1 and not empty_rows_zero:
        # each row shifted by its own max, summed and subtracted as PyTorch's kernel (ember/_kernels/softmax.py)
        threads = region_threads(x.shape[0], x.size)
        if threads:  # one region on numba's OpenMP threads (policy.omp)
            compiled.log_softmax_blocks.parallel(x, out, threads)
            return
        if chunks_for(x.shape[0], x.size, least) == 1:
            compiled.log_softmax(x, out)
            return
        parallel_for(lambda lo, hi: compiled.log_softmax(x[lo:hi], out[lo:hi]), x.shape[0], x.size, least)
        return
    if not log and compiled_softmax(x):  # one pass per row, each shifted by its own max (ember/_kernels/softmax.py)
        threads = region_threads(x.shape[0], x.size)
        if threads:  # one region on numba's OpenMP threads (policy.omp)
            compiled.softmax_blocks.parallel(x, out, x.dtype.type(scale), causal, empty_rows_zero, threads)
            return
        if chunks_for(x.shape[0], x.size, least) == 1:  # one chunk (small, or one thread): all rows, no closure
            compiled.softmax(x, out, x.dtype.type(scale), causal, 0, empty_rows_zero)
            return

        def run(lo: int, hi: int) -> None:
            compiled.softmax(x[lo:hi], out[lo:hi], x.dtype.type(scale), causal, lo, empty_rows_zero)

        parallel_for(run, x.shape[0], x.size, least)
        return
    if causal or scale != 1:
        raise ValueError("softmax_rows: causal rows and a scale need the compiled kernel (mask and scale x instead)")
    if x.dtype.itemsize < 4:
        wide = xp.empty(x.shape, xp.float32)
        softmax_rows(x.astype(xp.float32), wide, log=log, empty_rows_zero=empty_rows_zero)
        out[...] = wide
        return
    # the global max on this thread: one fast pass (16 us per MiB), cheaper than a hand-off to the pool
    kernel = partial(_softmax_chunk, shift=xp.max(x), log=log, empty_rows_zero=empty_rows_zero)
    parallel_rows(kernel, x, out)


def _log_softmax_half(x, out, rounded) -> None:
    """log_softmax of the float32 rows ``x`` (half-precision values) into ``out`` (float32, rounded to the half type
    once after), as PyTorch's CPU kernels compute a half-precision input: (x - m) - log(s), m each row's own max, s
    the float32 sum of exp(x - m). ``rounded``: the half type that kernel rounds s and log(s) to (its kernel along
    the last dimension keeps both in the input's type), None along another dimension (its kernel keeps them in
    float32). Either way the bits of PyTorch's results (the reference's shift by the whole array's max loses bits of
    a row below it, which a result near 0 keeps once rounded to half)."""
    with xp.errstate(invalid="ignore", divide="ignore"):  # (a row of -inf: NaN; inf - inf: NaN, as PyTorch's)
        d = x - x.max(axis=1, keepdims=True)
        s = _half_row_sums(xp.exp(d), rounded is not None)
        if rounded is not None:
            s = xp.log(s.astype(rounded).astype(xp.float32)).astype(rounded).astype(xp.float32)
        else:
            s = xp.log(s)
        xp.subtract(d, s, out=out)


def _half_row_sums(a, last: bool):
    """The float32 sums of the rows ``a`` (keeping their dim) as PyTorch's half-precision softmax kernels add them:
    along the last dimension (``last``) in vectors, rounded to the half type or divided into, where NumPy's order
    shows once at most in a thousand results; along another, one element after another, which a cumulative sum
    follows (near 0, log_softmax's result keeps the last bits of its sum)."""
    return xp.einsum("ij->i", a)[:, None] if last else xp.cumsum(a, axis=1)[:, -1:]


def _softmax_half(x, out, rounded) -> None:
    """softmax of the float32 rows ``x`` (half-precision values) into ``out`` (float32, rounded to the half type once
    after), as PyTorch's CPU kernels compute a half-precision input: exp(x - m) / s, m each row's own max, s the
    float32 sum of the exps. ``rounded``: the half type that kernel rounds each exp to before the division (along
    another dimension than the last, where it keeps them in the output), None along the last (float32 throughout).
    Either way the bits of PyTorch's results."""
    with xp.errstate(invalid="ignore"):  # (a row of -inf, inf - inf: NaN, as PyTorch's)
        e = xp.exp(x - x.max(axis=1, keepdims=True))
    s = _half_row_sums(e, rounded is None)
    if rounded is not None:
        e = e.astype(rounded).astype(xp.float32)
    xp.divide(e, s, out=out)


def _softmax_chunk(x, out, shift, log: bool, empty_rows_zero: bool) -> None:
    xp.subtract(x, shift, out=out)
    e = exp_into(out, xp.empty_like(out) if log else out)
    s = xp.einsum("ij->i", e)[:, None]  # several times faster than sum(-1) on short rows
    redo = xp.flatnonzero(~(s >= _MIN_ROW_SUM))  # (also nan)
    if redo.size:  # those rows shifted by their own max
        d = x[redo]
        m = d.max(axis=1, keepdims=True)
        if empty_rows_zero:
            m[xp.isneginf(m)] = 0
        d -= m
        e = xp.exp(d)
        s[redo] = xp.einsum("ij->i", e)[:, None]
        if empty_rows_zero:
            s[s == 0] = 1
        out[redo] = d if log else e
    if log:
        out -= xp.log(s)
    else:
        out *= xp.divide(1, s, out=s)  # one division per row, then multiplies


def softmax_vjp(g, y, out, scale=None) -> None:
    """out = y * (g - rowsum(g * y)) (times ``scale``, a scalar of g's dtype, if given) for 2-D C-contiguous rows
    (out may be g): softmax's vector-Jacobian product, each row on its own (callers split rows among the intra-op
    threads; with ``policy.omp``, the compiled kernel on all rows runs as one region on numba's OpenMP threads)."""
    if compiled_softmax(g) and y.dtype == g.dtype and out.dtype == g.dtype:
        kern = compiled.softmax_vjp.parallel if region_threads(g.shape[0], g.size) else compiled.softmax_vjp
        kern(g, y, out, g.dtype.type(1) if scale is None else scale)
        return
    dot = xp.einsum("ij,ij->i", g, y)[:, None]
    xp.subtract(g, dot, out=out)
    out *= y
    if scale is not None:
        out *= scale


def _log_softmax_backward_chunk(g, logp, out) -> None:
    """out = g - softmax * rowsum(g)."""
    total = xp.einsum("ij->i", g)[:, None]
    exp_into(logp, out)
    out *= total
    xp.subtract(g, out, out=out)


def _as_rows(x, dim):
    """(x2, restore): x with ``dim`` moved last as a C-contiguous (rows, n) array (a copy only when x is not laid
    out that way already) and the function that maps a (rows, n) result back to x's shape and dim order."""
    if x.ndim and dim == x.ndim - 1 and x.flags.c_contiguous and x.shape[-1]:  # the common case: a view
        shape = x.shape
        return x.reshape(-1, shape[-1]), lambda a2: a2.reshape(shape)
    moved = xp.moveaxis(x, dim, -1) if x.ndim else x.reshape(1)
    n = moved.shape[-1]
    x2 = xp.ascontiguousarray(moved).reshape(moved.size // n if n else math.prod(moved.shape[:-1]), n)

    def restore(a2):
        return xp.moveaxis(a2.reshape(moved.shape), -1, dim) if x.ndim else a2.reshape(())

    return x2, restore


def _contiguous(y):
    """The result ``y`` (a view of the rows computed, dim moved back) C-contiguous, as PyTorch's softmax lays out
    its result whatever the dim and the input's layout (a view of it along dim 0 refused ``.view``)."""
    return y if y.flags.c_contiguous else xp.ascontiguousarray(y)


def _as_returned(node: Node, y):
    """The saved output ``y`` of a half-precision ``node`` computed in float32 (lowp.py) as returned, rounded to the
    half type, which PyTorch's backward kernels read (then widen to float32)."""
    return y if node.half_dtype is None else y.astype(node.half_dtype).astype(xp.float32)


def _wide(a):
    return a.astype(xp.float32) if a.dtype.itemsize < 4 else a


@torch_named("SoftmaxBackward0")
class Softmax(Node):
    float32_compute = True
    _saved_result, _raw_saved_result = saved_tensor(0)
    _saved_dim = property(lambda self: saved_dim(self, self.dim))

    def forward(self, x, dim):
        x2, self.restore = _as_rows(x, dim)
        y2 = xp.empty_like(x2)
        if self.half_dtype is not None and x2.size:  # (x widened to float32: PyTorch's half-precision kernels)
            _softmax_half(x2, y2, None if dim == x.ndim - 1 else self.half_dtype)
        else:
            softmax_rows(x2, y2)
        y = _contiguous(self.restore(y2))
        self.saved, self.dim = (y,), dim  # the output itself: create_graph differentiates through it
        return y

    def backward(self, g):  # dx = y * (g - sum(g * y))
        if is_recorded(g):  # create_graph: the formula on the recorded output (the kernel below writes into arrays)
            y = self.saved[0]  # the output itself, recorded (run_recorded refuses half-precision input first)
            return (y * (g - (g * y).sum(axis=self.dim, keepdims=True)),)
        y2 = _as_rows(_as_returned(self, self.saved[0]), self.dim)[0]  # (y2 again: a view)
        g2 = _wide(_as_rows(g, self.dim)[0])
        if self.half_dtype is not None:  # (PyTorch's half-precision kernel: the sum of g * y in float32, in its order)
            return (self.restore(y2 * (g2 - _half_row_sums(g2 * y2, self.dim == g.ndim - 1))),)
        dx = xp.empty(y2.shape, g2.dtype)
        if compiled_softmax(g2) and region_threads(g2.shape[0], g2.size):  # whole: one region (policy.omp)
            softmax_vjp(g2, _wide(y2), dx)
        else:
            parallel_rows(softmax_vjp, g2, _wide(y2), dx,
                          min_elements=policy.min_parallel_pass_elements if compiled_softmax(g2) else None)
        return (self.restore(dx.astype(y2.dtype, copy=False)),)


@torch_named("LogSoftmaxBackward0")
class LogSoftmax(Node):
    float32_compute = True
    _saved_result, _raw_saved_result = saved_tensor(0)
    _saved_dim = property(lambda self: saved_dim(self, self.dim))

    def forward(self, x, dim):
        x2, self.restore = _as_rows(x, dim)
        out = xp.empty_like(x2)
        if self.half_dtype is not None and x2.size:  # (x widened to float32: PyTorch's half-precision kernels)
            _log_softmax_half(x2, out, self.half_dtype if dim == x.ndim - 1 else None)
        else:
            softmax_rows(x2, out, log=True)
        y = _contiguous(self.restore(out))
        self.saved, self.dim = (y,), dim  # the output itself: create_graph differentiates through it
        return y

    def backward(self, g):  # dx = g - softmax * sum(g)
        if is_recorded(g):  # create_graph: the formula on the recorded output (the kernel below writes into arrays)
            y = self.saved[0]  # the output itself, recorded (run_recorded refuses half-precision input first)
            return (g - xp.exp(y) * g.sum(axis=self.dim, keepdims=True),)
        picks = _row_picks_of(g) if self._pre_hooks is None and self._node_pre_hooks is None else None
        if picks is not None and self.dim == 1 == g.ndim - 1:
            return (_picks_backward(self.saved[0], *picks),)
        out = _as_rows(_as_returned(self, self.saved[0]), self.dim)[0]  # (out again: a view)
        g2 = _wide(_as_rows(g, self.dim)[0])
        if self.half_dtype is not None:  # (PyTorch's half-precision kernel: the sum of g in float32, in its order)
            return (self.restore(g2 - xp.exp(out) * _half_row_sums(g2, self.dim == g.ndim - 1)),)
        dx = xp.empty(out.shape, g2.dtype)
        parallel_rows(_log_softmax_backward_chunk, g2, _wide(out), dx)
        return (self.restore(dx.astype(out.dtype, copy=False)),)


class _RowPicks(threading.local):
    """A gradient array known to be zero but at one element per row (nll_loss's), for log_softmax's backward."""
    grad = None  # a weak reference to the array
    cols = vals = None


_row_picks = _RowPicks()


def note_row_picks(g, cols, vals) -> None:
    """Tell log_softmax's backward that the (M, C) gradient ``g`` is zero but ``vals[i]`` at ``(i, cols[i])``
    (nll_loss's gradient, which nothing can change before it arrives): when that very array reaches it, it then
    computes softmax * -vals plus vals at the picks, without reading g (cross_entropy's backward costs what a
    fused log-softmax + NLL node's would). A gradient summed with another, cast or passed through a hook is
    another array, and takes the general formula."""
    _row_picks.grad, _row_picks.cols, _row_picks.vals = weakref.ref(g), cols, vals


def _row_picks_of(g):
    """(cols, vals) when ``g`` is the array ``note_row_picks`` described last on this thread, else None."""
    ref = _row_picks.grad
    if ref is None or ref() is not g:
        return None
    _row_picks.grad = None
    return _row_picks.cols, _row_picks.vals


def _picks_backward(logp, cols, vals):
    """log_softmax's input gradient for a gradient zero but ``vals[i]`` at ``(i, cols[i])`` of its (M, C)
    output ``logp``: g - softmax * rowsum(g) = softmax * -vals, plus vals at the picks."""
    dx = xp.empty_like(logp)
    parallel_rows(_exp_times, logp, (-vals).astype(logp.dtype, copy=False)[:, None], dx)
    dx[xp.arange(len(cols)), cols] += vals
    return dx


def _exp_times(logp, c, out) -> None:
    exp_into(logp, out)
    out *= c


def log_softmax_array(x, dim):
    """log softmax of an array along ``dim``, a new array (recorded for a recorded ``x``: LogSoftmax's node)."""
    if is_recorded(x):
        return RecordedArray(log_softmax(x.t, dim))
    x2, restore = _as_rows(x, dim)
    out = xp.empty_like(x2)
    softmax_rows(x2, out, log=True)
    return restore(out)


_F32 = xp.dtype(xp.float32)
_ONE32 = xp.float32(1)


def _softmax_input(x: Tensor, dim, dtype, name):
    if dtype is not None:
        x = cast(x, dtype if isinstance(dtype, _dtype.dtype) else _dtype.from_np(_dtype.to_np(dtype)))
    d = _wrap_dim(dim, x._data.ndim)
    if not x.is_floating_point():  # PyTorch names the kernel it has no integer version of
        raise not_implemented_for(f"{name}_{'lastdim_' if d == max(x._data.ndim - 1, 0) else ''}kernel_impl", x.dtype)
    return x, d


def softmax(x: Tensor, dim: int, dtype=None) -> Tensor:
    """softmax along ``dim`` (required, as ``torch.softmax``'s; ``nn.functional.softmax`` has the implicit one)."""
    if dtype is None and x.__class__ is Tensor and records_nothing(x):  # (a recorded call: one test, then the node)
        a = x._data
        if (a.__class__ is xp.ndarray and a.dtype == _F32 and a.ndim and dim.__class__ is int
                and (dim == -1 or dim == a.ndim - 1)
                and a.flags.c_contiguous and a.size and policy.use_compiled()):
            # the last dim of a row-major float32 tensor where nothing records (no_grad: attention's probabilities
            # in inference): ``Softmax.forward``'s kernel call without the node, so the same bits and layout
            n = a.shape[-1]
            rows = a.size // n
            y = xp.empty((rows, n), a.dtype)
            if region_threads(rows, a.size) or chunks_for(rows, a.size, policy.min_parallel_pass_elements) > 1:
                softmax_rows(a.reshape(rows, n), y)
            else:  # (``softmax_rows``' call of one chunk, without its tests)
                compiled.softmax(a.reshape(rows, n), y, _ONE32, 0, 0, False)
            return Tensor._make(y.reshape(a.shape))
    x, d = _softmax_input(x, dim, dtype, "softmax")
    return keep_dim_as_given(Softmax.apply(x, dim=d), dim)


def log_softmax(x: Tensor, dim: int, dtype=None) -> Tensor:
    """log softmax along ``dim`` (required, as ``torch.log_softmax``'s)."""
    x, d = _softmax_input(x, dim, dtype, "log_softmax")
    return keep_dim_as_given(LogSoftmax.apply(x, dim=d), dim)


def _softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int, input_dtype) -> Tensor:
    """``torch._softmax_backward_data``: softmax's input gradient from its output ``y`` and the output's
    gradient ``g``, ``y * (g - sum(g * y, dim))``, differentiable (custom softmax autograd Functions call it).
    Difference from PyTorch: the result keeps ``grad_output``'s dtype whatever ``input_dtype`` says."""
    return output * (grad_output - (grad_output * output).sum(dim, keepdim=True))
