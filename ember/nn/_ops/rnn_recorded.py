"""A recurrent layer's forward and backpropagation through time in plain array expressions, for create_graph.

The fused layer (rnn.py) writes every step into preallocated buffers through views, which a recorded formula
cannot do. Under create_graph its forward runs again on recorded inputs (``rerun_for_higher_order``) and takes
these functions instead: the same recurrences, step by step, each result a new array, keeping what each step's
gradient needs; the backward then chains the steps' vector-Jacobian products (the formulas of rnn.py's backward),
so the gradient is recorded and can be differentiated again. Rows as in rnn.py: packed row blocks, one per step.
"""

from __future__ import annotations

from ..._backend import xp


def _sigmoid(a):
    return 0.5 * (1 + xp.tanh(0.5 * a))


def _rows_in_order(blocks: dict):
    """The blocks {start row: array} as one array in row order (a step order may be reversed)."""
    return xp.concatenate([blocks[s] for s in sorted(blocks)], axis=0)


def _advance(state, new, b: int):
    """The state with its first ``b`` rows replaced by ``new`` (the sequences still running)."""
    return new if b == state.shape[0] else xp.concatenate([new, state[b:]], axis=0)


def forward(node, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
    """(out, h_n, c_n) of the layer; ``node.cache`` keeps each step's values for ``backward``."""
    mode, hidden = node.mode, w_hh.shape[0] // {"LSTM": 4, "GRU": 3}.get(node.mode, 1)
    xw = x @ w_ih.T
    if b_ih is not None:
        xw = xw + b_ih if mode == "GRU" else xw + (b_ih + b_hh)  # GRU's b_hn sits inside r * (W_hn h + b_hn)
    h, c = h0, c0
    outs, cache = {}, []
    for s, e, b in node.steps:
        hp = h[:b]
        if mode == "LSTM":
            gates = xw[s:e] + hp @ w_hh.T
            i, f = _sigmoid(gates[:, :hidden]), _sigmoid(gates[:, hidden:2 * hidden])
            g, o = xp.tanh(gates[:, 2 * hidden:3 * hidden]), _sigmoid(gates[:, 3 * hidden:])
            cp = c[:b]
            cn = f * cp + i * g
            tc = xp.tanh(cn)
            hq = o * tc
            hn = hq @ w_hr.T if w_hr is not None else hq
            c = _advance(c, cn, b)
            cache.append((hp, cp, i, f, g, o, tc, hq))
        elif mode == "GRU":
            gh = hp @ w_hh.T
            if b_hh is not None:
                gh = gh + b_hh
            r = _sigmoid(xw[s:e, :hidden] + gh[:, :hidden])
            z = _sigmoid(xw[s:e, hidden:2 * hidden] + gh[:, hidden:2 * hidden])
            n = xp.tanh(xw[s:e, 2 * hidden:] + r * gh[:, 2 * hidden:])
            hn = n + z * (hp - n)
            cache.append((hp, r, z, n, gh[:, 2 * hidden:]))
        else:
            pre = xw[s:e] + hp @ w_hh.T
            hn = xp.tanh(pre) if mode == "RNN_TANH" else xp.maximum(pre, 0)
            cache.append((hp, hn))
        h = _advance(h, hn, b)
        outs[s] = hn
    node.cache = cache
    return _rows_in_order(outs), h, c


def backward(node, g_out, g_h, g_c):
    """The layer's input gradients (as rnn.py's backward returns them), each step's chained in reverse."""
    x, h0, c0, w_ih, w_hh, w_hr = node.recorded_inputs
    mode = node.mode
    ref = next(a for a in (g_out, g_h, g_c) if a is not None)
    dh = g_h if g_h is not None else xp.zeros_like(ref, shape=h0.shape)
    dc = (g_c if g_c is not None else xp.zeros_like(ref, shape=c0.shape)) if mode == "LSTM" else None
    dgi, dgh, hprev = {}, {}, {}
    dw_hr = None
    for (s, e, b), saved in zip(reversed(node.steps), reversed(node.cache)):
        dht = dh[:b] if g_out is None else dh[:b] + g_out[s:e]
        hp = saved[0]
        if mode == "LSTM":
            _, cp, i, f, g, o, tc, hq = saved
            if w_hr is not None:
                dw_hr = dht.T @ hq if dw_hr is None else dw_hr + dht.T @ hq
                dht = dht @ w_hr
            dct = dc[:b] + dht * o * (1 - tc * tc)
            d = xp.concatenate([dct * g * i * (1 - i), dct * cp * f * (1 - f), dct * i * (1 - g * g),
                                dht * tc * o * (1 - o)], axis=1)
            dc = _advance(dc, dct * f, b)
            dgi[s] = dgh[s] = d
            dhp = d @ w_hh
        elif mode == "GRU":
            _, r, z, n, ghn = saved
            dn = dht * (1 - z) * (1 - n * n)
            dr = dn * ghn * r * (1 - r)
            dz = dht * (hp - n) * z * (1 - z)
            dgi[s] = xp.concatenate([dr, dz, dn], axis=1)
            dgh[s] = xp.concatenate([dr, dz, dn * r], axis=1)
            dhp = dht * z + dgh[s] @ w_hh
        else:
            hn = saved[1]
            d = dht * (1 - hn * hn) if mode == "RNN_TANH" else dht * (hn > 0)
            dgi[s] = dgh[s] = d
            dhp = d @ w_hh
        hprev[s] = hp
        dh = _advance(dh, dhp, b)
    dgi, dgh, hprev = _rows_in_order(dgi), _rows_in_order(dgh), _rows_in_order(hprev)
    needs = node.needs_input_grad
    db_ih = dgi.sum(axis=0) if needs[5] or needs[6] else None
    return (
        dgi @ w_ih if needs[0] else None,
        dh if needs[1] else None,
        dc if needs[2] else None,
        dgi.T @ x if needs[3] else None,
        dgh.T @ hprev if needs[4] else None,
        db_ih if needs[5] else None,
        (dgh.sum(axis=0) if mode == "GRU" else db_ih) if needs[6] else None,
        dw_hr if needs[7] else None,
    )
