"""``multi_head_attention_forward``: nn.MultiheadAttention's computation, composed from linear and attention ops.

Inputs are sequence-first, as PyTorch's functional form: query (L, N, E) or unbatched (L, E).
Masks follow nn.MultiheadAttention's convention (bool True = *not* allowed; float added to the
scores), the opposite of ``scaled_dot_product_attention``'s bool mask. Without ``need_weights``
the heads go through the fused attention op; with it, the probabilities are materialised (as
PyTorch does), so a row whose keys are all masked gives NaN there, as in PyTorch.
"""

from __future__ import annotations

import math

from ... import _dtype, _warnings
from ..._backend import xp
from ..._dtype import np_kind
from ..._tensor import Tensor
from ...ops.activation import softmax
from ...ops.linalg import baddbmm, bmm
from ...ops.shape import cat
from .attention import scaled_dot_product_attention
from .dropout import dropout
from .linear import linear
from .padding import pad


def canonical_mask(mask: Tensor | None, name: str, dtype, other: Tensor | None = None,
                   other_name: str = "") -> Tensor | None:
    """A bool mask (True = masked out) as a float mask of ``dtype`` (-inf where True); float masks unchanged.
    With ``other``, the mask used beside it: a different dtype gets PyTorch's deprecation warning."""
    if mask is None:
        return None
    if other is not None and other.dtype != mask.dtype:
        _warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                       "instead.", through={"ember.nn.modules.transformer": "torch.nn.modules.transformer",
                                            "ember.nn.modules": "torch.nn.modules.activation"})
    m = mask._data
    if m.dtype == xp.bool_:
        dt = _dtype.to_np(dtype)
        return Tensor._make(xp.where(m, dt.type(-xp.inf), dt.type(0)))
    if np_kind(m.dtype) != "f":
        raise AssertionError(f"only bool and floating types of {name} are supported, got {mask.dtype}")
    return mask


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """PyTorch's shape rules for batched (L, N, E) and unbatched (L, E) input; True when batched."""
    qd = query.dim()
    if qd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {qd}-D query tensor")
    if key.dim() != qd or value.dim() != qd:
        raise AssertionError(f"For {'batched' if qd == 3 else 'unbatched'} ({qd}-D) `query`, expected `key` and "
                             f"`value` to be {qd}-D but found {key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != qd - 1:
        raise AssertionError(f"For {'batched' if qd == 3 else 'unbatched'} ({qd}-D) `query`, expected "
                             f"`key_padding_mask` to be `None` or {qd - 1}-D but found {key_padding_mask.dim()}-D "
                             "tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {'batched' if qd == 3 else 'unbatched'} ({qd}-D) `query`, expected "
                                 f"`attn_mask` to be `None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        if qd == 2 and attn_mask.dim() == 3 and attn_mask.shape != (num_heads, query.shape[0], key.shape[0]):
            raise AssertionError(f"Expected `attn_mask` shape to be {(num_heads, query.shape[0], key.shape[0])} "
                                 f"but got {tuple(attn_mask.shape)}")
    return qd == 3


def _in_projection(query, key, value, w, b, separate):
    """q, k, v = the three input projections; self-attention (query is key is value) is one GEMM."""
    if separate is None:
        if query is key and key is value:
            return linear(query, w, b).chunk(3, -1)
        wq, wkv = w.split([w.shape[0] // 3, 2 * w.shape[0] // 3])
        bq, bkv = b.split([b.shape[0] // 3, 2 * b.shape[0] // 3]) if b is not None else (None, None)
        if key is value:
            return (linear(query, wq, bq), *linear(key, wkv, bkv).chunk(2, -1))
        wk, wv = wkv.chunk(2)
        bk, bv = bkv.chunk(2) if b is not None else (None, None)
        return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
    bq, bk, bv = b.chunk(3) if b is not None else (None, None, None)
    return linear(query, separate[0], bq), linear(key, separate[1], bk), linear(value, separate[2], bv)


def _heads(x: Tensor, static: Tensor | None, bsz: int, num_heads: int, head_dim: int, name: str) -> Tensor:
    """(S, N, H*D) -> (N*H, S, D), or the given precomputed ``static_k``/``static_v`` of that shape."""
    if static is None:
        return x.reshape(x.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.dim() != 3 or static.shape[0] != bsz * num_heads or static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name} of shape ({bsz * num_heads}, S, {head_dim}), got {tuple(static.shape)}")
    return static


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first input, as PyTorch's: returns (output, weights or None).

    query (L, N, E) or (L, E); key/value (S, N, E_k/E_v). ``attn_mask`` (L, S) or (N*num_heads, L, S),
    ``key_padding_mask`` (N, S): bool True = ignore, float added. ``is_causal`` is a hint that
    ``attn_mask`` is the causal mask (which must still be given). Weights are (N, L, S) averaged over
    heads, or (N, num_heads, L, S) with ``average_attn_weights=False``.
    """
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", query.dtype, attn_mask, "attn_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the fused op builds the causal mask itself
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", query.dtype)
        is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        separate = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        separate = None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate)
    src_len = key.shape[0]
    if attn_mask is not None:
        expected = (tgt_len, src_len) if attn_mask.dim() == 2 else (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(f"The shape of the {attn_mask.dim()}D attn_mask is {tuple(attn_mask.shape)}, but "
                               f"should be {expected}.")
        if attn_mask.dim() == 2:
            attn_mask = attn_mask.unsqueeze(0)
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be set or both be None")
    if bias_k is not None:  # one extra learned key/value position
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k = cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask, key_padding_mask = _pad_masks(attn_mask, key_padding_mask)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz, num_heads, head_dim, "static_k")
    v = _heads(v, static_v, bsz, num_heads, head_dim, "static_v")
    if add_zero_attn:  # one extra all-zero key/value position
        k = cat([k, Tensor._make(xp.zeros((bsz * num_heads, 1, head_dim), dtype=k._data.dtype))], 1)
        v = cat([v, Tensor._make(xp.zeros((bsz * num_heads, 1, head_dim), dtype=v._data.dtype))], 1)
        attn_mask, key_padding_mask = _pad_masks(attn_mask, key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:  # the probabilities are returned, so they are computed as ordinary ops
        # (PyTorch's baddbmm with the mask: under autocast the mask is cast to the product's dtype with it)
        q_scaled = q * math.sqrt(1.0 / head_dim)
        if attn_mask is not None:
            scores = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            scores = bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(scores, -1)
        out = bmm(dropout(weights, dropout_p) if dropout_p > 0 else weights, v)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
    else:
        out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
        weights = None
    out = linear(out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim), out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[1])
    if not batched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights


def _pad_masks(attn_mask, key_padding_mask):
    """One more key position: a zero (allowed) column on each mask."""
    return (pad(attn_mask, (0, 1)) if attn_mask is not None else None,
            pad(key_padding_mask, (0, 1)) if key_padding_mask is not None else None)
