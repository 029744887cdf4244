"""Recurrent layers as fused ops: one node runs a whole layer (one direction) over the sequence.

Forward projects every timestep's input with one GEMM, then loops over time with one small GEMM per step
(the hidden-to-hidden product), keeping the activated gates. Backward is hand-written backpropagation through
time: the loop computes each step's gate gradients; the weight and input gradients are then one GEMM each
over all timesteps.

Sequences are "packed" (as ``PackedSequence.data``): row block t holds the ``batch_sizes[t]`` sequences still
running at time t, longest first. A padded (T, B, *) input is the special case where every batch size is B.
Only the first ``batch_sizes[t]`` rows of the hidden state advance at time t, so each sequence's final state
stays in its row; run in reverse, rows that have not started yet still hold their initial state.

Under create_graph the forward runs again on recorded inputs and both directions take rnn_recorded.py's plain
expressions (these kernels write into buffers through views), so the gradient can be differentiated again.
"""

from __future__ import annotations

from ..._backend import xp
from ..._tensor import Tensor
from ...autograd.graph import MultiOutputNode
from ...autograd.recorded import is_recorded
from . import rnn_recorded

# Gate blocks per mode, in PyTorch's weight layout: LSTM (i, f, g, o), GRU (r, z, n), RNN (one).
GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _sigmoid_(a):
    """In-place logistic: sigmoid(a) = (tanh(a/2) + 1) / 2 (no overflow for large |a|)."""
    a *= 0.5
    xp.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


def _hidden_gemm(w_hh, h):
    """h @ w_hh.T, computed as (w_hh @ h.T).T: with few rows in h, OpenBLAS runs this form about 20 % faster."""
    return xp.matmul(w_hh, h.T).T


def _steps(batch_sizes, reverse: bool):
    """(start, stop, rows) of each timestep's row block, in the order the recurrence visits them."""
    steps, start = [], 0
    for b in batch_sizes:
        steps.append((start, start + b, b))
        start += b
    return steps[::-1] if reverse else steps


class RNNLayer(MultiOutputNode):
    """One layer, one direction. Inputs: x (N, I) packed rows, h0 (B, Hout), c0 (B, H) or None, w_ih (G*H, I),
    w_hh (G*H, Hout), b_ih, b_hh (G*H,) or None, w_hr (P, H) or None. Outputs: out (N, Hout), h_n, c_n (c_n None
    except for LSTM)."""
    rerun_for_higher_order = True
    recorded_inputs = None  # (x, h0, c0, w_ih, w_hh, w_hr) when the forward ran on recorded arrays

    def forward(self, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, *, mode, batch_sizes, reverse):
        self.mode, self.steps = mode, _steps(batch_sizes, reverse)
        if is_recorded(x):
            self.recorded_inputs = (x, h0, c0, w_ih, w_hh, w_hr)
            return rnn_recorded.forward(self, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
        hidden = w_hh.shape[0] // GATES[mode]
        h = h0.copy()
        out = xp.empty((x.shape[0], h0.shape[1]), dtype=x.dtype)
        hprev = xp.empty_like(out)  # the state each row's step started from
        if mode == "LSTM":
            # sigmoid(a) = (tanh(a/2) + 1) / 2: with the i, f, o rows of the weights and biases halved, one
            # tanh over all four gates then one affine map (scale, shift) gives i, f, g, o.
            scale = xp.full(w_hh.shape[0], 0.5, dtype=x.dtype)
            scale[2 * hidden:3 * hidden] = 1
            shift = scale.copy()
            shift[2 * hidden:3 * hidden] = 0
            xw = xp.matmul(x, (w_ih * scale[:, None]).T)  # every timestep's input projection in one GEMM
            if b_ih is not None:
                xw += (b_ih + b_hh) * scale
            w_hh_s = w_hh * scale[:, None]
            c = c0.copy()
            cprev, tanh_c = xp.empty((x.shape[0], hidden), x.dtype), xp.empty((x.shape[0], hidden), x.dtype)
            hpre = xp.empty_like(tanh_c) if w_hr is not None else None
            for s, e, b in self.steps:
                hprev[s:e] = h[:b]
                gates = xw[s:e]
                gates += _hidden_gemm(w_hh_s, hprev[s:e])
                xp.tanh(gates, out=gates)
                gates *= scale
                gates += shift
                i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
                cprev[s:e] = c[:b]
                cn = xp.multiply(f, cprev[s:e], out=c[:b])
                cn += i * g
                tc = xp.tanh(cn, out=tanh_c[s:e])
                if w_hr is None:
                    h[:b] = xp.multiply(o, tc, out=out[s:e])
                else:
                    hq = xp.multiply(o, tc, out=hpre[s:e])
                    h[:b] = xp.matmul(hq, w_hr.T, out=out[s:e])
            self.saved = (x, w_ih, w_hh, w_hr, xw, hprev, cprev, tanh_c, hpre)
            return out, h, c
        xw = xp.matmul(x, w_ih.T)  # every timestep's input projection in one GEMM
        if b_ih is not None:
            xw += b_ih
            if mode != "GRU":  # GRU's b_hn sits inside r * (W_hn h + b_hn)
                xw += b_hh
        if mode == "GRU":
            ghn = xp.empty((x.shape[0], hidden), x.dtype)  # W_hn h + b_hn, needed for dr
            for s, e, b in self.steps:
                hprev[s:e] = h[:b]
                hp = hprev[s:e]
                gh = _hidden_gemm(w_hh, hp)
                if b_hh is not None:
                    gh += b_hh
                gates = xw[s:e]
                gates[:, :2 * hidden] += gh[:, :2 * hidden]
                r, z = _sigmoid_(gates[:, :hidden]), _sigmoid_(gates[:, hidden:2 * hidden])
                ghn[s:e] = gh[:, 2 * hidden:]
                n = gates[:, 2 * hidden:]
                n += r * gh[:, 2 * hidden:]
                xp.tanh(n, out=n)
                hn = xp.subtract(hp, n, out=out[s:e])  # h' = n + z (h - n)
                hn *= z
                hn += n
                h[:b] = hn
            self.saved = (x, w_ih, w_hh, None, xw, hprev, ghn)
            return out, h, None
        for s, e, b in self.steps:  # Elman RNN
            hprev[s:e] = h[:b]
            hp = hprev[s:e]
            pre = xw[s:e]
            pre += _hidden_gemm(w_hh, hp)
            if mode == "RNN_TANH":
                hn = xp.tanh(pre, out=out[s:e])
            else:
                hn = xp.maximum(pre, 0, out=out[s:e])
            h[:b] = hn
        self.saved = (x, w_ih, w_hh, None, out, hprev)
        return out, h, None

    def backward(self, g_out, g_h, g_c):
        if self.recorded_inputs is not None:
            return rnn_recorded.backward(self, g_out, g_h, g_c)
        x, w_ih, w_hh, w_hr, act, hprev = self.saved[:6]
        mode, hidden = self.mode, w_hh.shape[0] // GATES[self.mode]
        n_rows = hprev.shape[0]
        batch = max((b for _, _, b in self.steps), default=0)
        dh = xp.zeros((batch, hprev.shape[1]), x.dtype) if g_h is None else g_h.copy()
        dgi = xp.empty((n_rows, w_hh.shape[0]), x.dtype)  # gradient of the input-side pre-activations
        dgh = dgi if mode != "GRU" else xp.empty_like(dgi)  # ... and of the hidden-side ones (GRU differs)
        grads = {}
        if mode == "LSTM":
            cprev, tanh_c, hpre = self.saved[6:]
            dc = xp.zeros((batch, hidden), x.dtype) if g_c is None else g_c.copy()
            dh_all = xp.empty_like(hprev) if w_hr is not None else None
            # What depends on forward values alone, for all rows at once (into dgi, scaled per step below):
            # sigmoid' = s (1 - s) for i, f, o, tanh' = 1 - g^2 for g; and o * tanh'(c) on the cell path.
            xp.subtract(1, act, out=dgi)
            dgi *= act
            g_all = act[:, 2 * hidden:3 * hidden]
            xp.multiply(g_all, g_all, out=dgi[:, 2 * hidden:3 * hidden])
            xp.subtract(1, dgi[:, 2 * hidden:3 * hidden], out=dgi[:, 2 * hidden:3 * hidden])
            o_dtanh = tanh_c * tanh_c
            xp.subtract(1, o_dtanh, out=o_dtanh)
            o_dtanh *= act[:, 3 * hidden:]
            upstream = xp.empty((batch, w_hh.shape[0]), x.dtype)  # each gate's dL/d(activation), one step
            for s, e, b in reversed(self.steps):
                dht = dh[:b] if g_out is None else dh[:b] + g_out[s:e]
                if w_hr is not None:
                    dh_all[s:e] = dht
                    dht = xp.matmul(dht, w_hr)
                i, f, g = (act[s:e, k * hidden:(k + 1) * hidden] for k in range(3))
                dct = dht * o_dtanh[s:e]
                dct += dc[:b]
                u = upstream[:b]
                xp.multiply(dct, g, out=u[:, :hidden])
                xp.multiply(dct, cprev[s:e], out=u[:, hidden:2 * hidden])
                xp.multiply(dct, i, out=u[:, 2 * hidden:3 * hidden])
                xp.multiply(dht, tanh_c[s:e], out=u[:, 3 * hidden:])
                d = dgi[s:e]
                d *= u
                xp.multiply(dct, f, out=dc[:b])
                xp.matmul(d, w_hh, out=dh[:b])
            if w_hr is not None and self.needs_input_grad[7]:
                grads[7] = xp.matmul(dh_all.T, hpre)  # dW_hr = sum_t dh_t^T (o * tanh c)_t
            grads[2] = dc
        elif mode == "GRU":
            ghn = self.saved[6]
            for s, e, b in reversed(self.steps):
                dht = dh[:b] if g_out is None else dh[:b] + g_out[s:e]
                r, z, n = (act[s:e, k * hidden:(k + 1) * hidden] for k in range(3))
                hp = hprev[s:e]
                di, dhh = dgi[s:e], dgh[s:e]
                dn = dht * (1 - z)
                dn *= 1 - n * n  # through tanh
                di[:, 2 * hidden:] = dn
                dhh[:, 2 * hidden:] = dn * r
                dr = dn * ghn[s:e]
                dr *= r * (1 - r)
                dz = dht * (hp - n)
                dz *= z * (1 - z)
                di[:, :hidden] = dhh[:, :hidden] = dr
                di[:, hidden:2 * hidden] = dhh[:, hidden:2 * hidden] = dz
                dh[:b] = dht * z + xp.matmul(dhh, w_hh)
        else:
            for s, e, b in reversed(self.steps):
                dht = dh[:b] if g_out is None else dh[:b] + g_out[s:e]
                hn, d = act[s:e], dgi[s:e]
                if mode == "RNN_TANH":
                    xp.multiply(dht, 1 - hn * hn, out=d)
                else:
                    xp.multiply(dht, hn > 0, out=d)
                dh[:b] = xp.matmul(d, w_hh)
        needs = self.needs_input_grad
        db_ih = dgi.sum(0) if needs[5] or (needs[6] and dgh is dgi) else None
        return (
            xp.matmul(dgi, w_ih) if needs[0] else None,
            dh if needs[1] else None,
            grads.get(2) if needs[2] else None,
            xp.matmul(dgi.T, x) if needs[3] else None,
            xp.matmul(dgh.T, hprev) if needs[4] else None,
            db_ih if needs[5] else None,
            (db_ih if dgh is dgi else dgh.sum(0)) if needs[6] else None,  # the same sum unless GRU
            grads.get(7),
        )


def rnn_layer(x: Tensor, h0: Tensor, c0: Tensor | None, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
              b_hh: Tensor | None, w_hr: Tensor | None, mode: str, batch_sizes, reverse: bool = False):
    """Run one recurrent layer over packed rows ``x``; returns (out, h_n, c_n). See the module docstring."""
    return RNNLayer.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode=mode,
                          batch_sizes=[int(b) for b in batch_sizes], reverse=reverse)
