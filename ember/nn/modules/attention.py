"""``nn.MultiheadAttention`` (PyTorch keeps it in ``torch.nn.modules.activation``, re-exported from there)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._tensor import Tensor
from .. import init
from .._ops.multihead import multi_head_attention_forward
from .linear import NonDynamicallyQuantizableLinear, _empty_param
from .module import Module


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al., 2017): ``out_proj(concat_h softmax(Q_h K_h^T / sqrt(d)) V_h)``.

    Parameters as PyTorch's: ``in_proj_weight`` (3E, E) packs the query, key and value projections,
    or, when ``kdim``/``vdim`` differ from ``embed_dim``, ``q_proj_weight`` (E, E), ``k_proj_weight``
    (E, kdim) and ``v_proj_weight`` (E, vdim); ``in_proj_bias`` (3E) and ``out_proj``
    (E -> E) when ``bias``; ``bias_k``/``bias_v`` (1, 1, E) with ``add_bias_kv``. Initialisation is
    PyTorch's: xavier_uniform_ projections, zero biases, xavier_normal_ ``bias_k``/``bias_v``.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights or None)``; inputs are
    (L, N, E), (N, L, E) with ``batch_first`` or unbatched (L, E). Masks: bool True = not allowed,
    float added to the scores. PyTorch's inference fast path is numerically the same computation;
    ember always takes the general one. Dropout applies to the attention probabilities in training.
    """

    if TYPE_CHECKING:
        def __call__(self, *args: Any, **kwargs: Any) -> tuple[Tensor, Tensor | None]: ...  # type: ignore[override]

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"dtype": dtype, "device": device}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _empty_param(3 * embed_dim, embed_dim, **kw)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = _empty_param(embed_dim, embed_dim, **kw)
            self.k_proj_weight = _empty_param(embed_dim, self.kdim, **kw)
            self.v_proj_weight = _empty_param(embed_dim, self.vdim, **kw)
            self.register_parameter("in_proj_weight", None)
        self.register_parameter("in_proj_bias", _empty_param(3 * embed_dim, **kw) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = _empty_param(1, 1, embed_dim, **kw)
            self.bias_v = _empty_param(1, 1, embed_dim, **kw)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = query.dim() == 3
        if self.batch_first and batched:  # to sequence-first, keeping self-attention's shared input shared
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights
