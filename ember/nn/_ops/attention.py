"""Scaled dot-product attention as one fused node: softmax(q k^T * scale + mask) v, with a hand-written backward.

The scores, the softmax and the dropout never become separate graph nodes: forward keeps the
attention probabilities (and the dropout mask) and backward applies the softmax
Jacobian-vector product directly, so a GPT-style block pays two batched GEMMs forward and
four backward around one softmax. Under create_graph the forward runs again on recorded inputs (the probabilities
are an intermediate) with the same dropout mask (drawn before the node, an input of it), and both directions take
the recorded softmax and its plain Jacobian-vector product where the fast path writes into buffers.
"""

from __future__ import annotations

import math
from functools import partial

from ..._autocast import lower_precision
from ..._backend import quiet_call, xp
from ..._creation import laid_out_empty
from ..._dtype import np_kind
from ..._kernels._omp import region_threads
from ..._kernels.policy import policy
from ..._meta import is_meta
from ..._parallel import chunks_for, gemm_block, parallel_for, parallel_rows, stack_matmul
from ..._size import broadcast_mismatch, c_type_name
from ..._tensor import Tensor
from ...autograd.graph import Node, records_nothing, shown_as, version_checked
from ...autograd.recorded import RecordedArray, is_recorded
from ...ops.activation import compiled_softmax, softmax, softmax_rows, softmax_vjp
from .dropout import dropout_mask

_CAUSAL: dict = {}  # (L, S, dtype) -> additive mask: 0 where key j <= query i, -inf above the diagonal


def causal_additive_mask(L: int, S: int, dtype):
    """The top-left aligned causal mask PyTorch uses (``ones(L, S).tril()``) as 0 / -inf, cached per shape."""
    key = (L, S, xp.dtype(dtype).str)
    mask = _CAUSAL.get(key)
    if mask is None:
        if len(_CAUSAL) > 64:
            _CAUSAL.clear()
        mask = xp.triu(xp.full((L, S), -xp.inf, dtype=dtype), 1)
        mask.flags.writeable = False
        _CAUSAL[key] = mask
    return mask


def _contiguous(a):
    """A C-contiguous copy of a NumPy array (a recorded one, under create_graph, as it is)."""
    return xp.ascontiguousarray(a) if type(a) is xp.ndarray else a


def _repeat_heads(a, groups: int):
    """Grouped-query attention: each key/value head serves ``groups`` consecutive query heads."""
    return a if groups == 1 else xp.repeat(a, groups, axis=-3)


def _sum_head_groups(g, groups: int):
    return g if groups == 1 else g.reshape(*g.shape[:-3], g.shape[-3] // groups, groups, *g.shape[-2:]).sum(-3)


class ScaledDotProductAttention(Node):
    float32_compute = True
    rerun_for_higher_order = True

    def forward(self, q, k, v, mask, dmask, scale, causal, groups):
        kr, vr = _repeat_heads(k, groups), _repeat_heads(v, groups)
        # The compiled softmax scales the scores as it reads them (without a mask, whose addition comes after the
        # scale); otherwise the (L, E) queries are scaled rather than the (L, S) scores: one pass over the smaller
        # array. K^T as a C-contiguous (E, S) copy: OpenBLAS's GEMM on it took 1.2 ms where the transposed view
        # of a (B, S, H, E) projection took 1.9 (GPT-style heads of 64 x 32, batch 64; the copy: 0.1 ms)
        plain = compiled_softmax(q) and type(kr) is xp.ndarray  # (under create_graph some inputs are recorded)
        fold = plain and mask is None and scale > 0
        if fold and dmask is None and groups == 1 and type(v) is xp.ndarray:  # (the common case, its calls alone)
            out, p = _forward_plain(q, k, v, scale, causal, self._output_for(q, q.dtype))
            self.saved = (q, k, v, p, dmask)
            self.scale, self.groups = scale, groups
            return out
        if plain and mask is None and dmask is None and _heads_at_once(q, kr, vr):
            out, p = _forward_at_once(q, kr, vr, scale, fold, causal, self._output_for(q, q.dtype))
            self.saved = (q, k, v, p, dmask)
            self.scale, self.groups = scale, groups
            return out
        s = stack_matmul(q if fold else q * q.dtype.type(scale), _contiguous(xp.swapaxes(kr, -1, -2)))
        by_length = causal and plain  # the compiled kernel keeps keys j <= i: no -inf mask to add
        if causal and not by_length:
            s += causal_additive_mask(s.shape[-2], s.shape[-1], s.dtype)
        if mask is not None:
            s += mask
        p = _probabilities(s, s.shape[-2] if by_length else 0, scale if fold else 1.0)
        pd = p if dmask is None else p * dmask
        self.saved = (q, k, v, p, dmask)
        self.scale, self.groups = scale, groups
        return self._attended(pd, vr, q)

    def _output_for(self, q, dtype):
        """The array of ``dtype`` the output is written into, laid out for ``q``; None: a row-major one, as PyTorch's
        math composite's matmul gives."""
        return None

    def _attended(self, pd, vr, q):
        """The probabilities times the values, into ``_output_for``'s array where both are plain arrays."""
        plain = pd.__class__ is xp.ndarray and vr.__class__ is xp.ndarray  # (not recorded, under create_graph)
        return stack_matmul(pd, vr, out=self._output_for(q, pd.dtype) if plain else None)

    def backward(self, g):
        q, k, v, p, dmask = self.saved
        needs = self.needs_input_grad
        nq, nk, nv = needs[:3]
        nmask = len(needs) > 3 and needs[3]  # (the flash path's node has no mask input)
        groups = self.groups
        if nq and nk and nv and not nmask and dmask is None and groups == 1 and compiled_softmax(g):
            if _heads_at_once(q, k, v, g):
                gq, gk, gv = _backward_at_once(g, q, k, v, p, self.scale)
                return (gq, gk, gv) if len(needs) == 3 else (gq, gk, gv, None, None)
            if q.__class__ is k.__class__ is v.__class__ is xp.ndarray:  # (not recorded: the common case's calls)
                gq, gk, gv = _backward_plain(g, q, k, v, p, self.scale)
                return (gq, gk, gv) if len(needs) == 3 else (gq, gk, gv, None, None)
        kr, vr = _repeat_heads(k, groups), _repeat_heads(v, groups)
        gq = gk = gv = gmask = None
        if nv:  # dV = P_dropped^T G
            pd = p if dmask is None else p * dmask
            gv = _sum_head_groups(stack_matmul(xp.swapaxes(pd, -1, -2), g), groups)
        if nq or nk or nmask:
            gp = stack_matmul(g, xp.swapaxes(vr, -1, -2))  # dP = G V^T (through the dropout mask)
            if nmask:
                gmask = xp.empty_like(gp) if (nq or nk) else gp
            scale = gp.dtype.type(self.scale) if (nq or nk) else None
            if is_recorded(g):  # (the kernel below works in place)
                gpd = gp if dmask is None else gp * dmask
                gp = p * (gpd - (gpd * p).sum(axis=-1, keepdims=True))
                gmask = gp if nmask else None
                gp = gp * scale if scale is not None else gp
            elif gp.size:  # softmax JVP, row by row
                n = gp.shape[-1]
                rows = (gp.reshape(-1, n), p.reshape(-1, n), None if dmask is None else dmask.reshape(-1, n),
                        gmask.reshape(-1, n) if nmask and gmask is not gp else None)
                if compiled_softmax(gp) and region_threads(gp.size // n, gp.size):
                    _softmax_jvp_rows(*rows, scale=scale)  # whole: one region on numba's OpenMP threads (policy.omp)
                else:
                    parallel_rows(partial(_softmax_jvp_rows, scale=scale), *rows,
                                  min_elements=policy.min_parallel_pass_elements if compiled_softmax(gp) else None)
            if nq:  # dQ = dS K * scale
                gq = stack_matmul(gp, kr)
            if nk:  # dK = dS^T Q * scale
                gk = _sum_head_groups(stack_matmul(xp.swapaxes(gp, -1, -2), q), groups)
        return (gq, gk, gv) if len(needs) == 3 else (gq, gk, gv, gmask, None)


class ScaledDotProductFlashAttentionForCpuBackward0(ScaledDotProductAttention):
    """The same computation where PyTorch's CPU takes its flash kernel (``_flash_path``), under that node's name and
    with its three edges, query, key and value: the mask, which needs no gradient there, is a parameter. Its output
    is laid out as ``empty_like(query)``, as the flash kernel's: the heads of a (B, T, H, E) projection viewed as
    (B, H, T, E) give a (B, H, T, E) output over (B, T, H, E) memory, whose ``transpose(1, 2)`` is contiguous (a
    GPT block's head merge then copies nothing)."""

    def _output_for(self, q, dtype):
        return _flash_output(q, dtype)


def _flash_path(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, dropout_p: float,
                groups: int) -> bool:
    """Whether PyTorch's CPU dispatch picks its flash kernel (else its math composite): 4-d query, key and value of
    one batch size, as many query heads as key/value heads (times the query groups), one head size, no empty
    sequence, no dropout (a ``dropout_p`` not above 0: a negative or NaN one too, which the flash kernel then
    refuses), a mask that needs no gradient, and a last dimension of stride 1 in each of query, key and value
    (PyTorch's ``stride(-1) == 1``, a size-1 one's too)."""
    q, k, v = query._data, key._data, value._data
    return (q.ndim == k.ndim == v.ndim == 4 and q.shape[0] == k.shape[0] == v.shape[0] and k.shape[1] == v.shape[1]
            and q.shape[1] == k.shape[1] * groups and q.shape[3] == k.shape[3] == v.shape[3] and q.size > 0
            and k.size > 0 and not dropout_p > 0 and (attn_mask is None or not attn_mask.requires_grad)
            and _unit_last_stride(query) and _unit_last_stride(key) and _unit_last_stride(value))


_FLASH_LAYOUTS: dict = {}  # _flash_output's answers, by (shape, strides, item size)


def _flash_output(q, dtype):
    """``laid_out_empty(q, dtype)``: the flash kernel's output laid out as ``empty_like(query)``. Where that is a
    transpose of a new row-major array (a GPT block's heads, a (B, H, T, E) view of (B, T, H, E) memory), the
    permutation is kept by q's shape and strides (up to 256 of them), and the array made without
    ``laid_out_empty``'s sort and tests (about 1.5 µs a call at batch 1); a row-major q gives None, as there."""
    key = (q.shape, q.strides, q.itemsize)
    found = _FLASH_LAYOUTS.get(key, _FLASH_LAYOUTS)
    if found is _FLASH_LAYOUTS:
        out = laid_out_empty(q, dtype)
        found = out
        if out is None:
            found = None
        elif out.size and min(out.strides) > 0:  # (its strides in decreasing order: the row-major array's dims)
            order = sorted(range(out.ndim), key=out.strides.__getitem__, reverse=True)
            back = [0] * out.ndim
            for place, d in enumerate(order):
                back[d] = place
            shape = tuple(out.shape[d] for d in order)
            if xp.empty(shape, out.dtype).transpose(back).strides == out.strides:
                found = (shape, tuple(back))
        if found is out:  # (another layout: laid_out_empty each call)
            return out
        if len(_FLASH_LAYOUTS) >= 256:
            _FLASH_LAYOUTS.clear()
        _FLASH_LAYOUTS[key] = found
        return out
    return None if found is None else xp.empty(found[0], dtype).transpose(found[1])


def _unit_last_stride(t: Tensor) -> bool:
    """Whether ``t.stride(-1) == 1``: read from the array where its last dimension has more than one element and a
    stride (a size-1 or broadcast one, or a meta tensor's, takes ``stride``'s own rule)."""
    a = t._data
    if a.__class__ is xp.ndarray and a.shape[-1] > 1 and a.strides[-1]:
        return a.strides[-1] == a.itemsize
    return t.stride(-1) == 1


def _heads_at_once(*arrays) -> bool:
    """Whether attention's products and softmax run as one split over its first dim (``_forward_at_once``,
    ``_backward_at_once``; ``policy.attention_at_once``): plain float32 arrays of one leading shape (no
    broadcasting) of 3 or more dims, more than one of them along the first, each head's products small enough that
    OpenBLAS keeps them on one thread (``gemm_block`` None), and a split ``parallel_for`` would make (two or more of
    ember's threads, not inside a worker, ``policy.omp`` off)."""
    a = arrays[0]
    if not policy.attention_at_once or a.ndim < 3 or a.shape[0] < 2:
        return False
    lead = a.shape[:-2]
    if not all(type(x) is xp.ndarray and x.dtype == a.dtype and x.shape[:-2] == lead for x in arrays):
        return False
    q, k = arrays[0], arrays[1]
    L, E, S = q.shape[-2], q.shape[-1], k.shape[-2]
    total = sum(x.size for x in arrays) + 2 * math.prod(q.shape[:-1]) * S  # (the scores: E may be 0)
    # (the split first: at one thread it is the answer, without the blocks' tests)
    return (chunks_for(a.shape[0], total) > 1 and gemm_block(L, E, S) is None
            and gemm_block(L, S, max(x.shape[-1] for x in arrays)) is None
            and not policy.omp)  # (under omp: OpenMP regions instead)


def _forward_at_once(q, k, v, scale: float, fold: bool, causal: bool, out=None) -> tuple:
    """softmax(q k^T * scale) v and the probabilities, split along the first dim over ember's threads, each thread's
    share whole: its score GEMMs, their softmax rows and the products with v. One hand-off where the two stacked
    products take one each and the softmax between them runs on the calling thread alone (under its split
    threshold). Each head's GEMMs and each row's softmax as ``forward``'s, so the same bits."""
    L, S = q.shape[-2], k.shape[-2]
    p = xp.empty((*q.shape[:-1], S), q.dtype)
    if out is None:  # (else an array laid out as the node's output is, written head by head)
        out = xp.empty((*q.shape[:-1], v.shape[-1]), q.dtype)
    kt = xp.swapaxes(k, -1, -2)

    def run(lo: int, hi: int) -> None:
        qs = q[lo:hi] if fold else q[lo:hi] * q.dtype.type(scale)
        s = xp.matmul(qs, xp.ascontiguousarray(kt[lo:hi]))
        softmax_rows(s.reshape(-1, S), p[lo:hi].reshape(-1, S), empty_rows_zero=True, causal=L if causal else 0,
                     scale=scale if fold else 1.0)
        xp.matmul(p[lo:hi], v[lo:hi], out=out[lo:hi])

    parallel_for(run, q.shape[0], q.size + k.size + v.size + 2 * p.size)
    return out, p


def _backward_at_once(g, q, k, v, p, scale: float) -> tuple:
    """The gradients of q, k and v (``backward``'s formulas: dV = P^T G, dP = G V^T, dS = P * (dP - rowsum(dP * P))
    * scale, dQ = dS K, dK = dS^T Q), split along the first dim over ember's threads, each thread's share whole:
    one hand-off where the four stacked products take one each and the softmax's product runs on the calling thread
    alone. Each head's GEMMs and each row as ``backward``'s, so the same bits."""
    gq, gk, gv = xp.empty(q.shape, q.dtype), xp.empty(k.shape, k.dtype), xp.empty(v.shape, v.dtype)
    n = p.shape[-1]
    sc = g.dtype.type(scale)

    def run(lo: int, hi: int) -> None:
        xp.matmul(xp.swapaxes(p[lo:hi], -1, -2), g[lo:hi], out=gv[lo:hi])
        gp = xp.matmul(g[lo:hi], xp.swapaxes(v[lo:hi], -1, -2))
        softmax_vjp(gp.reshape(-1, n), p[lo:hi].reshape(-1, n), gp.reshape(-1, n), sc)
        xp.matmul(gp, k[lo:hi], out=gq[lo:hi])
        xp.matmul(xp.swapaxes(gp, -1, -2), q[lo:hi], out=gk[lo:hi])

    parallel_for(run, q.shape[0], q.size + k.size + v.size + g.size + 2 * p.size)
    return gq, gk, gv


def _forward_plain(q, k, v, scale: float, causal: bool, out=None) -> tuple:
    """``ScaledDotProductAttention.forward`` of plain float32 arrays the compiled softmax takes, with no mask, no
    dropout, one query head per key head and a scale > 0 (folded into the softmax), as (output, probabilities):
    the same calls as there (heads at once, or the two stacked products around the softmax), so the same bits,
    without its tests. ``out``: ``_output_for``'s array."""
    if _heads_at_once(q, k, v):
        return _forward_at_once(q, k, v, scale, True, causal, out)
    s = stack_matmul(q, xp.ascontiguousarray(xp.swapaxes(k, -1, -2)))
    p = _probabilities(s, s.shape[-2] if causal else 0, scale)
    return stack_matmul(p, v, out=out), p


def _backward_plain(g, q, k, v, p, scale: float) -> tuple:
    """``backward``'s gradients of q, k and v for plain float32 arrays with no mask, no dropout and one query head
    per key head, as the general branch computes them (the four stacked products, the softmax's product whole or in
    ``parallel_rows``' chunks), so the same bits, without its tests."""
    gv = stack_matmul(p.swapaxes(-1, -2), g)
    gp = stack_matmul(g, v.swapaxes(-1, -2))
    sc = gp.dtype.type(scale)
    if gp.size:
        n = gp.shape[-1]
        rows = gp.reshape(-1, n), p.reshape(-1, n)
        if region_threads(rows[0].shape[0], gp.size) or gp.size < policy.min_parallel_pass_elements:
            softmax_vjp(rows[0], rows[1], rows[0], sc)  # (``_softmax_jvp_rows`` of the whole, as ``backward``)
        else:
            parallel_rows(partial(_softmax_jvp_rows, scale=sc), *rows, None, None,
                          min_elements=policy.min_parallel_pass_elements)
    return stack_matmul(gp, k), stack_matmul(gp.swapaxes(-1, -2), q), gv


def _common_case(query: Tensor, key: Tensor, value: Tensor) -> bool:
    """Whether query, key and value are plain tensors of 4-d non-empty float32 arrays of one batch and head count,
    query's and key's and value's head size one (above 1, each of stride 1) and key's and value's lengths one: the
    inputs ``_check_inputs`` passes without a word and ``_flash_path`` takes (with no mask, no dropout and no
    grouped heads), told by a few comparisons (a GPT block's call)."""
    if not (query.__class__ is key.__class__ is value.__class__ is Tensor):
        return False
    q, k, v = query._data, key._data, value._data
    if not (q.__class__ is k.__class__ is v.__class__ is xp.ndarray and q.ndim == k.ndim == v.ndim == 4):
        return False
    qs, ks, vs = q.shape, k.shape, v.shape
    return (q.dtype == k.dtype == v.dtype == _F32 and qs[0] == ks[0] == vs[0] and qs[1] == ks[1] == vs[1]
            and qs[3] == ks[3] == vs[3] > 1 and ks[2] == vs[2] > 0 and qs[2] > 0
            and q.strides[3] == k.strides[3] == v.strides[3] == 4)


_F32 = xp.dtype(xp.float32)


def _probabilities(s, causal: int = 0, scale: float = 1.0):
    """softmax over the last dim; rows with no allowed key (all -inf) give zeros, as PyTorch. Recorded (under
    create_graph): ember's softmax, those rows' scores replaced by zeros first so that no NaN reaches a gradient.
    ``causal``, ``scale``: ``softmax_rows``'s (for the compiled kernel)."""
    if is_recorded(s):
        empty = (s == -xp.inf).all(axis=-1, keepdims=True)
        if empty.any():
            return xp.where(empty, 0, RecordedArray(softmax(xp.where(empty, 0, s).t, -1)))
        return RecordedArray(softmax(s.t, -1))
    p = xp.empty_like(s)
    if s.size:
        softmax_rows(s.reshape(-1, s.shape[-1]), p.reshape(-1, s.shape[-1]), empty_rows_zero=True, causal=causal,
                     scale=scale)
    return p


def _softmax_jvp_rows(gp, p, dmask, gmask, scale) -> None:
    """In place in gp (rows of dP): dS = P * (dP * dropout mask - rowsum(dP * dropout mask * P)); gmask (if
    given) receives dS, then gp is multiplied by ``scale`` (if given)."""
    if dmask is not None:
        gp *= dmask
    softmax_vjp(gp, p, gp, scale if gmask is None else None)
    if gmask is not None:
        gmask[...] = gp
        if scale is not None:
            gp *= scale


def _no_attention(query: Tensor, key: Tensor, value: Tensor) -> bool:
    """Whether PyTorch takes its path for an empty result or no keys (L, S or Ev zero, or an empty batch): zeros
    of the result's shape, the mask neither checked against the scores' shape nor used (nor is_causal with it)."""
    q, k, v = query._data.shape, key._data.shape, value._data.shape
    return 0 in (q[-2], k[-2], v[-1]) or 0 in q[:-2] + k[:-2] + v[:-2]


def _check_inputs(query: Tensor, key: Tensor, value: Tensor, attn_mask, is_causal: bool, enable_gqa: bool) -> int:
    """PyTorch's argument checks; returns how many query heads share each key/value head."""
    q, k, v = query._data, key._data, value._data
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{q.ndim} key.dim: {k.ndim} and value.dim: {v.ndim} instead."
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    if np_kind(q.dtype) != "f":
        raise RuntimeError(f"scaled_dot_product_attention: expected floating point inputs, got {query.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise RuntimeError(
            f"scaled_dot_product_attention: query {tuple(q.shape)} and key {tuple(k.shape)} must have the same "
            "embedding size (last dim)"
        )
    if k.shape[-2] != v.shape[-2]:
        raise RuntimeError(
            f"scaled_dot_product_attention: key {tuple(k.shape)} and value {tuple(v.shape)} must have the same "
            "sequence length (dim -2)"
        )
    if attn_mask is not None:
        m = attn_mask._data
        if m.dtype != xp.bool_ and m.dtype != q.dtype:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
                f"{attn_mask.dtype} and  query.dtype: {query.dtype} instead."
            )
    groups = 1
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3:
        hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
        if hk != hv or hk == 0 or hq % hk:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in query: got query heads "
                f"{hq}, key heads {hk}, value heads {hv} (dim -3)"
            )
        groups = hq // hk
    lead_k = k.shape[:-3] + (k.shape[-3] * groups,) if k.ndim >= 3 else ()
    lead_v = v.shape[:-3] + (v.shape[-3] * groups,) if v.ndim >= 3 else ()
    msg = broadcast_mismatch([q.shape[:-2], lead_k, lead_v])
    if msg is not None:
        raise RuntimeError(f"scaled_dot_product_attention: {msg} (query {tuple(q.shape)}, key {tuple(k.shape)}, "
                           f"value {tuple(v.shape)})")
    return groups


def _check_mask_shape(query: Tensor, key: Tensor, value: Tensor, attn_mask, groups: int) -> None:
    """The mask broadcasts to the scores (..., L, S), as PyTorch's check (after its is_causal one)."""
    q, k, v = query._data, key._data, value._data
    lead_k = k.shape[:-3] + (k.shape[-3] * groups,) if k.ndim >= 3 else ()
    lead_v = v.shape[:-3] + (v.shape[-3] * groups,) if v.ndim >= 3 else ()
    if attn_mask is not None:
        scores = xp.broadcast_shapes(q.shape[:-2], lead_k, lead_v) + (q.shape[-2], k.shape[-2])
        m = attn_mask._data.shape
        msg = broadcast_mismatch([scores, m])
        if msg is None and len(m) > len(scores):
            grown = list(xp.broadcast_shapes(scores, m))
            msg = f"output with shape {list(scores)} doesn't match the broadcast shape {grown}"
        if msg is not None:
            raise RuntimeError(f"scaled_dot_product_attention: {msg} (attn_mask {tuple(m)} must broadcast to the "
                               f"attention scores (..., L, S) = {tuple(scores)})")


@lower_precision
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value, as PyTorch's.

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev); leading dims broadcast.
    ``attn_mask``: bool (True = may attend) or a float added to the scores, broadcastable to (..., L, S).
    ``is_causal``: query i attends to keys j <= i (top-left aligned when L != S, as PyTorch); given with
    ``attn_mask``, both apply where PyTorch's CPU takes its flash kernel (4-d inputs, no dropout, a mask without
    gradient) and it is PyTorch's RuntimeError elsewhere (its math composite refuses the pair).
    ``scale`` defaults to 1/sqrt(E). ``dropout_p`` drops attention probabilities (always, as PyTorch's
    functional form: pass 0.0 in evaluation). ``enable_gqa``: key/value may have fewer heads (dim -3)
    than query, each serving a consecutive group of query heads. A query row whose keys are all
    masked out gives zeros (and zero gradients), as PyTorch.
    """
    if (attn_mask is None and dropout_p.__class__ is float and dropout_p == 0.0 and not enable_gqa
            and _common_case(query, key, value) and compiled_softmax(query._data)):
        s = 1 / math.sqrt(query._data.shape[3]) if scale is None else float(scale)
        if s > 0:
            if records_nothing(query, key, value):
                # no node: its forward's calls, with NumPy's errors ignored (inf/nan silently) as ``Node.apply`` runs
                # them, and the result as it makes it
                q = query._data
                return Tensor._make(quiet_call(_forward_plain, q, key._data, value._data, s, bool(is_causal),
                                               _flash_output(q, q.dtype))[0])
            return ScaledDotProductFlashAttentionForCpuBackward0.apply(
                query, key, value, mask=None, dmask=None, scale=s, causal=bool(is_causal), groups=1)
    if dropout_p.__class__ not in (float, int, bool) and not isinstance(dropout_p, (xp.floating, xp.integer)):
        raise TypeError(f"scaled_dot_product_attention(): argument 'dropout_p' must be float, not "
                        f"{c_type_name(dropout_p)}")
    groups = _check_inputs(query, key, value, attn_mask, is_causal, enable_gqa)
    empty = _no_attention(query, key, value)
    if empty:  # (PyTorch's empty path: the mask is unused, whatever its shape)
        attn_mask = None
    flash = _flash_path(query, key, value, attn_mask, dropout_p, groups)
    if flash and dropout_p != 0:  # (a negative one: PyTorch picks its flash kernel, which refuses any dropout)
        raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0")
    if attn_mask is not None and is_causal and not flash:
        # PyTorch's flash kernel applies both (the mask within the causal triangle); its math composite refuses them
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    _check_mask_shape(query, key, value, attn_mask, groups)  # (None on PyTorch's empty path: unchecked)
    if dropout_p > 1 and query._data.size and key._data.size:
        # (the math composite's dropout, which an empty input does not reach: PyTorch's RuntimeError, where
        # F.dropout's is a ValueError; a negative probability drops nothing there, as a zero one)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if scale is None:
        scale = 1 / math.sqrt(query._data.shape[-1]) if query._data.shape[-1] else 1.0
    given = attn_mask
    if attn_mask is not None and attn_mask._data.dtype == xp.bool_:
        dt = query._data.dtype
        attn_mask = Tensor._make(xp.where(attn_mask._data, dt.type(0), dt.type(-xp.inf)))
    dmask = None
    if dropout_p > 0:  # the probabilities' shape: query's and key's batch dims broadcast, then (L, S)
        q, k = query._data, key._data
        lead_k = k.shape[:-3] + (k.shape[-3] * groups,) if k.ndim >= 3 else ()
        shape = xp.broadcast_shapes(q.shape[:-2], lead_k) + (q.shape[-2], k.shape[-2])
        dmask = dropout_mask(shape, dropout_p, xp.float32 if q.dtype.itemsize < 4 else q.dtype,
                             meta=any(is_meta(t._data) for t in (query, key, value)))
    if flash:
        out = ScaledDotProductFlashAttentionForCpuBackward0.apply(
            query, key, value, mask=None if attn_mask is None else attn_mask._data, dmask=None, scale=float(scale),
            causal=bool(is_causal), groups=groups)
        # PyTorch's node saves a float mask: changed in place before backward, it is its error (a bool mask is
        # converted to a new float one first, as here)
        return version_checked(out, given) if given is not None and given is attn_mask else out
    out = ScaledDotProductAttention.apply(query, key, value, attn_mask, dmask, scale=float(scale),
                                          causal=bool(is_causal), groups=groups)
    # elsewhere PyTorch's CPU runs its math composite, whose last node names the result's grad_fn: the final
    # matmul's (MmBackward0 of 2-d operands, else the UnsafeViewBackward0 of its batched form); an empty result's
    # is the AddBackward0 of the composite's empty-input path
    return shown_as(out, "AddBackward0" if empty else "MmBackward0" if out._data.ndim == 2
                    else "UnsafeViewBackward0")
