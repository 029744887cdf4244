"""ctc_loss: the connectionist temporal classification loss, by the forward-backward recursions in log space.

For a target l (length S), the extended labels l' = (blank, l_1, blank, l_2, ..., l_S, blank) (length 2S + 1)
and a path may, at each time step, stay on its label, move to the next, or skip a blank between two different
labels. alpha_t(s) (log-probability of the prefixes ending at s at time t) and beta_t(s) (of the suffixes from s
at t) are computed for the whole batch at once, one time step per NumPy pass (the loop runs over time, never over
samples or labels); the samples' own lengths are masks. The loss is -log(alpha_{T-1}(2S) + alpha_{T-1}(2S - 1)).

The gradient is PyTorch's: with q_t(c) = sum over s where l'_s = c of exp(alpha_t(s) + beta_t(s) - lp_t(c) + nll),
dL/dlp_t(c) = exp(lp_t(c)) - q_t(c) for t below the sample's input length, 0 after. (The exact gradient is -q;
the exp(lp) term, which sums to 1 like q, is what makes it the gradient of the logits once it passes back
through log_softmax, as PyTorch returns it.)

Under create_graph the gradient is recorded as an op whose own derivative is not implemented, as in PyTorch: the
first-order gradient is there, differentiating it again raises.
"""

from __future__ import annotations

import numpy as np

from ..._autocast import full_precision
from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import Node
from ...autograd.no_derivative import gradient_without_derivative
from ...autograd.recorded import is_recorded
from .loss import _check_reduction

_NEG_INF = -np.inf


def _lse(*terms):
    """log(sum(exp(terms))) elementwise, -inf where all terms are -inf."""
    m = terms[0]
    for t in terms[1:]:
        m = xp.maximum(m, t)
    safe = xp.where(xp.isfinite(m), m, 0)
    total = sum(xp.exp(t - safe) for t in terms)
    with np.errstate(divide="ignore"):
        return xp.log(total) + safe


class CTCLoss(Node):
    def forward(self, lp, labels, in_len, tgt_len, zero_infinity):
        """lp (T, N, C); labels (N, L) the extended labels (L = 2 S_max + 1): the per-sample losses (N,)."""
        t_max, n, _ = lp.shape
        length = labels.shape[1]
        rows = xp.arange(n)[:, None]
        # where a path may skip the blank before s: l'_s is not blank and differs from l'_{s-2}
        skip = xp.zeros((n, length), bool)
        skip[:, 2:] = (labels[:, 2:] != labels[:, :1]) & (labels[:, 2:] != labels[:, :-2])
        valid = xp.arange(length)[None, :] <= 2 * tgt_len[:, None]  # the sample's own extended labels
        emit = lp[:, rows, labels]  # (T, N, L): lp_t(l'_s)
        alpha = xp.full((t_max, n, length), _NEG_INF, lp.dtype)
        alpha[0, :, :2] = emit[0, :, :2]
        alpha[0, :, 1] = xp.where(tgt_len > 0, alpha[0, :, 1], _NEG_INF)
        for t in range(1, t_max):
            a = alpha[t - 1]
            prev1 = xp.concatenate([xp.full((n, 1), _NEG_INF, lp.dtype), a[:, :-1]], 1)
            prev2 = xp.where(skip, xp.concatenate([xp.full((n, 2), _NEG_INF, lp.dtype), a[:, :-2]], 1), _NEG_INF)
            alpha[t] = xp.where(valid, _lse(a, prev1, prev2) + emit[t], _NEG_INF)
        last = alpha[in_len - 1, xp.arange(n)]  # (N, L) at each sample's last time step
        end = 2 * tgt_len
        final = _lse(last[xp.arange(n), end], xp.where(tgt_len > 0, last[xp.arange(n), xp.maximum(end - 1, 0)],
                                                        _NEG_INF))
        nll = -final
        self.saved = (lp, labels, in_len, tgt_len, alpha, emit, skip, valid, nll)
        self.zero_infinity = zero_infinity
        if zero_infinity:
            nll = xp.where(xp.isinf(nll), 0, nll)
        return nll.astype(lp.dtype)

    def backward(self, g):
        recorded = is_recorded(g)  # (then computed on plain arrays: see gradient_without_derivative)
        lp, labels, in_len, tgt_len, alpha, emit, skip, valid, nll = (
            a.t._data if is_recorded(a) else a for a in self.saved)
        t_max, n, c = lp.shape
        length = labels.shape[1]
        ar = xp.arange(n)
        beta = xp.full((t_max, n, length), _NEG_INF, lp.dtype)
        end = 2 * tgt_len
        skip_next = xp.zeros((n, length), bool)  # from s a path may jump to s + 2 where s + 2 may be skipped to
        skip_next[:, :-2] = skip[:, 2:]
        for t in range(t_max - 1, -1, -1):
            start = in_len - 1 == t  # samples whose last time step is t: beta starts at the last two labels
            b = xp.full((n, length), _NEG_INF, lp.dtype)
            if t + 1 < t_max:
                nb = beta[t + 1]
                next1 = xp.concatenate([nb[:, 1:], xp.full((n, 1), _NEG_INF, lp.dtype)], 1)
                next2 = xp.where(skip_next, xp.concatenate([nb[:, 2:], xp.full((n, 2), _NEG_INF, lp.dtype)], 1),
                                 _NEG_INF)
                b = xp.where(valid, _lse(nb, next1, next2) + emit[t], _NEG_INF)
            if start.any():
                init = xp.full((n, length), _NEG_INF, lp.dtype)
                init[ar, end] = emit[t, ar, end]
                has = tgt_len > 0
                init[ar[has], end[has] - 1] = emit[t, ar[has], end[has] - 1]
                b = xp.where(start[:, None], init, b)
            beta[t] = b
        # q_t(c) = sum over s with l'_s = c of exp(alpha + beta - lp_t(c) + nll), summed per class by a one-hot GEMM
        ab = alpha + beta  # (T, N, L)
        with np.errstate(invalid="ignore"):
            shift = xp.max(xp.where(xp.isfinite(ab), ab, -xp.inf), axis=2, keepdims=True)
            shift = xp.where(xp.isfinite(shift), shift, 0)
            onehot = (labels[:, :, None] == xp.arange(c)[None, None, :]).astype(lp.dtype)  # (N, L, C)
            summed = xp.einsum("tnl,nlc->tnc", xp.exp(ab - shift), onehot)
            with np.errstate(divide="ignore"):
                log_q = xp.log(summed) + shift + nll[None, :, None] - lp
            grad = xp.exp(lp) - xp.exp(log_q)
        grad = xp.where((xp.arange(t_max)[:, None] < in_len[None, :])[:, :, None], grad, 0)
        zeroed = xp.isinf(nll) & self.zero_infinity
        if self.zero_infinity:
            grad = xp.where(zeroed[None, :, None], 0, grad)
        grad = grad * xp.where(zeroed, 0, (g.t._data if recorded else g).astype(lp.dtype))[None, :, None]
        if recorded:
            return (gradient_without_derivative(grad, "_ctc_loss_backward", g, self.saved[0]),)
        return (grad,)


def _lengths(value, name: str, n: int):
    arr = xp.asarray(value._data if isinstance(value, Tensor) else value).reshape(-1).astype(xp.int64)
    if arr.size != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return arr


@full_precision
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """CTC loss of ``log_probs`` (T, N, C) (log_softmax outputs; or unbatched (T, C)) against ``targets`` (N, S)
    padded or 1-D concatenated, with each sample's ``input_lengths`` and ``target_lengths`` (tensors or sequences).
    reduction='mean' divides each loss by its target length (at least 1), then averages over the batch;
    ``zero_infinity`` turns infinite losses (impossible alignments) and their gradients into 0."""
    _check_reduction(reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.reshape(1, -1) if targets.ndim == 1 else targets
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got {list(log_probs.shape)}")
    t_max, n, c = log_probs.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    in_len, tgt_len = _lengths(input_lengths, "input_lengths", n), _lengths(target_lengths, "target_lengths", n)
    if in_len.size and in_len.max() > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {in_len.max()}")
    if in_len.size and in_len.min() < 1:
        raise RuntimeError(f"ctc_loss: input_lengths must be at least 1, got {in_len.min()}")
    tg = targets._data.astype(xp.int64)
    s_max = int(tgt_len.max()) if tgt_len.size else 0
    if tg.ndim == 1:  # concatenated: cut into rows
        if tg.size != tgt_len.sum():
            raise RuntimeError(f"Expected tensor to have size {tgt_len.sum()} at dimension 0, but got size {tg.size} "
                               "for argument #2 'targets'")
        starts = xp.cumsum(tgt_len) - tgt_len
        pos = xp.minimum(starts[:, None] + xp.arange(s_max)[None, :], max(tg.size - 1, 0))
        tg = tg[pos] if tg.size else xp.zeros((n, s_max), xp.int64)
    elif tg.shape[1] < s_max:
        raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension 1, but got size "
                           f"{tg.shape[1]} for argument #2 'targets'")
    labels = xp.full((n, 2 * s_max + 1), blank, xp.int64)
    labels[:, 1::2] = xp.where(xp.arange(s_max)[None, :] < tgt_len[:, None], tg[:, :s_max], blank)
    losses = CTCLoss.apply(log_probs, labels=labels, in_len=in_len, tgt_len=tgt_len, zero_infinity=zero_infinity)
    if reduction == "mean":
        divisor = Tensor._make(xp.maximum(tgt_len, 1).astype(losses._data.dtype))
        out = (losses / divisor).mean()
    elif reduction == "sum":
        out = losses.sum()
    else:
        out = losses.squeeze(0) if unbatched else losses
    return out
