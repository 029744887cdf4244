"""Transformer layers (Vaswani et al., 2017) as PyTorch's: encoder/decoder layers, their stacks, and Transformer.

Same submodules, parameter names, defaults and initialisation as ``torch.nn``, so state_dicts load
across. The layers always take the general path. PyTorch's inference fast path is a faster route to the
same values, but for one visible effect that ember reproduces: ``TransformerEncoder(enable_nested_tensor=True)``
in inference runs its layers on nested tensors made from ``src_key_padding_mask`` and pads the result with
zeros, so padded positions come out as 0 (before the final ``norm``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from ... import _creation, _warnings, backends
from ..._backend import xp
from ..._tensor import Tensor
from ...amp.autocast_mode import is_autocast_enabled
from ...autograd.grad_mode import is_grad_enabled
from .. import functional as F
from .. import init
from .._ops.multihead import canonical_mask
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """(sz, sz) float mask: 0 on and below the diagonal, -inf above (position i may attend to j <= i)."""
    t = _creation.full((sz, sz), float("-inf"), dtype=dtype, device=device)
    t._data[...] = xp.triu(t._data, 1)
    return t


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    """``n`` deep copies: each layer has its own parameters (all starting equal, as in PyTorch)."""
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _seq_len(src: Tensor, batch_first: bool) -> int:
    return src.shape[0] if src.dim() == 2 else src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None, size: int | None) -> bool:
    """``is_causal`` when given; when None, whether ``mask`` equals the square subsequent mask (as PyTorch)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    m = mask._data
    sz = size if size is not None else m.shape[-2]
    causal = xp.triu(xp.ones((sz, sz), dtype=bool), 1)  # bool: True = masked out
    if m.dtype != xp.bool_:
        causal = xp.where(causal, m.dtype.type(-xp.inf), m.dtype.type(0))
    return m.shape == causal.shape and bool((m == causal).all())


def _residual(x: Tensor, norm: Module, norm_first: bool, block: Callable[[Tensor], Tensor]) -> Tensor:
    """One residual sub-block of a Transformer layer: ``x + block(norm(x))`` when ``norm_first``
    (pre-LN), else ``norm(x + block(x))`` (post-LN, PyTorch's default)."""
    return x + block(norm(x)) if norm_first else norm(x + block(x))


def _add_blocks(layer, n: int, d_model: int, dim_feedforward: int, dropout: float, activation,
                layer_norm_eps: float, norm_first: bool, bias: bool, kw) -> None:
    """An encoder or decoder layer's feed-forward block (linear1, dropout, linear2), its ``n`` residual blocks'
    LayerNorms and Dropouts (norm1..n, dropout1..n) and its activation, registered in PyTorch's order (the
    order of the state_dict's keys)."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
    layer.norm_first = norm_first
    for i in range(1, n + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
    for i in range(1, n + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))
    layer.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual and LayerNorm.

    ``norm_first=False`` (default): ``x = norm1(x + sa(x)); x = norm2(x + ff(x))``; ``True``:
    ``x = x + sa(norm1(x)); x = x + ff(norm2(x))``. ``activation``: "relu", "gelu" or a callable.
    Input (S, N, E), (N, S, E) with ``batch_first`` or unbatched (S, E).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        _add_blocks(self, 2, d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, kw)
        # PyTorch's flag for its fused inference path (kept for code that reads it): 1 relu, 2 gelu, 0 other
        act = self.activation
        self.activation_relu_or_gelu = 1 if act is F.relu or isinstance(act, ReLU) else (
            2 if act is F.gelu or isinstance(act, GELU) else 0)

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask", src.dtype, src_mask,
                                              "src_mask")
        x = _residual(src, self.norm1, self.norm_first,
                      lambda h: self._sa_block(h, src_mask, src_key_padding_mask, is_causal))
        return _residual(x, self.norm2, self.norm_first, self._ff_block)

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention on the target, attention to the encoder's ``memory``, then a feed-forward block.

    Each sub-block has dropout, a residual and LayerNorm (norm1..norm3; before the block with
    ``norm_first``). Arguments as TransformerEncoderLayer.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                                 **kw)
        _add_blocks(self, 3, d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, bias, kw)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x = _residual(tgt, self.norm1, self.norm_first,
                      lambda h: self._sa_block(h, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = _residual(x, self.norm2, self.norm_first,
                      lambda h: self._mha_block(h, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return _residual(x, self.norm3, self.norm_first, self._ff_block)

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _why_not_nested(layer: Module) -> str:
    """Why PyTorch's TransformerEncoder would not take its nested-tensor route with ``layer`` ("" if it would)."""
    if not isinstance(layer, TransformerEncoderLayer):
        return "encoder_layer was not TransformerEncoderLayer"
    attn = layer.self_attn
    reasons = [(layer.norm_first, "norm_first was True"),
               (not attn.batch_first, "self_attn.batch_first was not True(use batch_first for better inference "
                                      "performance)"),
               (not attn._qkv_same_embed_dim, "self_attn._qkv_same_embed_dim was not True"),
               (attn.in_proj_bias is None, "self_attn was passed bias=False"),
               (not layer.activation_relu_or_gelu, "activation_relu_or_gelu was not True"),
               (layer.norm1.eps != layer.norm2.eps, "norm1.eps was not equal to encoder_layer.norm2.eps"),
               (attn.num_heads % 2 == 1, "self_attn.num_heads is odd")]
    return next((f"encoder_layer.{why}" for failed, why in reasons if failed), "")


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` (``layers.0`` ...), then ``norm`` if given.

    ``is_causal=None`` detects whether ``mask`` is the square subsequent mask. Where PyTorch takes its
    nested-tensor route (``use_nested_tensor``; in eval() without gradients, batched, with a left-aligned
    ``src_key_padding_mask`` (checked unless ``mask_check=False``) and no ``mask``; see ``_padded_by_nested_route``),
    the positions it pads come out as 0 before ``norm``, as PyTorch's nested tensors padded back give them; ember
    computes on dense tensors throughout. PyTorch's warning that the layer does not allow the route is given.
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        why_not = _why_not_nested(encoder_layer)
        self.use_nested_tensor = enable_nested_tensor and not why_not
        self.mask_check = mask_check
        if enable_nested_tensor and why_not:
            _warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}")

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask", src.dtype, mask, "mask")
        mask = canonical_mask(mask, "mask", src.dtype)
        first = self.layers[0] if len(self.layers) else None
        batch_first = getattr(getattr(first, "self_attn", None), "batch_first", False)
        is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(src, batch_first))
        padded = self._padded_by_nested_route(src, mask, src_key_padding_mask)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if padded is not None:
            output = output.masked_fill(Tensor._make(padded[..., None]), 0.0)
        return self.norm(output) if self.norm is not None else output

    def _padded_by_nested_route(self, src: Tensor, mask: Tensor | None,
                                src_key_padding_mask: Tensor | None) -> xp.ndarray | None:
        """The (batch, seq) positions PyTorch's nested-tensor route leaves out (and pads back with zeros) when it
        takes the route for this call, else None. Its conditions, in PyTorch's order: the fast path enabled,
        ``use_nested_tensor``, the first layer in eval(), a batched ``src``, a (canonical, float) padding mask
        whose kept positions (== 0) lead each row when ``mask_check``, no ``mask``, no CUDA autocast, and no
        gradient wanted for ``src`` or the first layer's parameters."""
        first = self.layers[0] if len(self.layers) else None
        if (not backends.mha.get_fastpath_enabled() or not getattr(self, "use_nested_tensor", False)
                or first is None or first.training or src.dim() != 3 or src_key_padding_mask is None):
            return None
        padded = src_key_padding_mask._data != 0
        if getattr(self, "mask_check", True) and bool((padded[:, :-1] & ~padded[:, 1:]).any()):
            return None  # a padded position before a kept one: not left-aligned
        if mask is not None or is_autocast_enabled():
            return None
        attn = first.self_attn
        args = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias, first.linear1.weight,
                first.linear1.bias, first.linear2.weight, first.linear2.bias)
        if is_grad_enabled() and any(a.requires_grad for a in args):
            return None
        return padded


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer``, then ``norm`` if given; ``tgt_is_causal=None`` detects
    whether ``tgt_mask`` is the square subsequent mask."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        first = self.layers[0] if len(self.layers) else None
        batch_first = getattr(getattr(first, "self_attn", None), "batch_first", False)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, _seq_len(tgt, batch_first))
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return self.norm(output) if self.norm is not None else output


class Transformer(Module):
    """Encoder-decoder transformer: ``decoder(tgt, encoder(src))``, each stack ending in a LayerNorm.

    Defaults as PyTorch's (d_model 512, 8 heads, 6 + 6 layers, feed-forward 2048, dropout 0.1, relu);
    every parameter with more than one dimension is re-initialised with xavier_uniform_.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **kw), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **kw), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """(sz, sz) float mask, -inf above the diagonal and 0 elsewhere (the causal mask)."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
