"""nn.utils.rnn (packing, padding, PackedSequence) against torch, alone and through nn.LSTM/GRU/RNN."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn
from conftest import ROOT
from nn_oracle import ember_state
from oracle import assert_close, assert_same_error

import ember
import ember.nn.utils.rnn as ernn

TIGHT = dict(atol=1e-10, rtol=1e-8)


def assert_same_packed(ep, tp):
    assert isinstance(ep, ernn.PackedSequence)
    assert_close(ep.data, tp.data, **TIGHT, msg="data")
    assert_close(ep.batch_sizes, tp.batch_sizes, msg="batch_sizes")
    for name in ("sorted_indices", "unsorted_indices"):
        e, t = getattr(ep, name), getattr(tp, name)
        assert (e is None) == (t is None), name
        if t is not None:
            assert_close(e, t, msg=name)


def backprop(e_out, t_out, e_leaves, t_leaves, seed=0):
    g = np.random.default_rng(seed).standard_normal(tuple(t_out.shape))
    e_out.backward(ember.tensor(g))
    t_out.backward(torch.tensor(g))
    for i, (el, tl) in enumerate(zip(e_leaves, t_leaves)):
        assert_close(el.grad, tl.grad, **TIGHT, msg=f"grad of leaf {i}")


LENGTHS = [[5, 3, 3, 1], [2, 5, 1, 5, 3], [4], [3, 3, 3]]


@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_padded_sequence(lengths, batch_first, enforce_sorted, as_tensor):
    if enforce_sorted and sorted(lengths, reverse=True) != lengths:
        return
    shape = (len(lengths), 6, 2) if batch_first else (6, len(lengths), 2)
    x = np.random.default_rng(1).standard_normal(shape)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    el = ember.tensor(lengths) if as_tensor else lengths
    tl = torch.tensor(lengths) if as_tensor else lengths
    ep = ernn.pack_padded_sequence(ex, el, batch_first=batch_first, enforce_sorted=enforce_sorted)
    tp = trnn.pack_padded_sequence(tx, tl, batch_first=batch_first, enforce_sorted=enforce_sorted)
    assert_same_packed(ep, tp)
    backprop(ep.data, tp.data, [ex], [tx])


@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("kw", [dict(), dict(padding_value=-2.5), dict(total_length=7)])
def test_pad_packed_sequence(lengths, batch_first, kw):
    x = np.random.default_rng(2).standard_normal((6, len(lengths), 3))
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ep = ernn.pack_padded_sequence(ex, lengths, enforce_sorted=False)
    tp = trnn.pack_padded_sequence(tx, lengths, enforce_sorted=False)
    e_pad, e_len = ernn.pad_packed_sequence(ep, batch_first=batch_first, **kw)
    t_pad, t_len = trnn.pad_packed_sequence(tp, batch_first=batch_first, **kw)
    assert_close(e_pad, t_pad, **TIGHT)
    assert_close(e_len, t_len)
    backprop(e_pad, t_pad, [ex], [tx])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
@pytest.mark.parametrize("trailing", [(), (2, 3)])
def test_pad_sequence(batch_first, padding_side, trailing):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((n, *trailing)) for n in (3, 5, 1)]
    e_in = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    e = ernn.pad_sequence(e_in, batch_first=batch_first, padding_value=9.0, padding_side=padding_side)
    t = trnn.pad_sequence(t_in, batch_first=batch_first, padding_value=9.0, padding_side=padding_side)
    assert_close(e, t, **TIGHT)
    backprop(e, t, e_in, t_in)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack(enforce_sorted):
    rng = np.random.default_rng(4)
    sizes = (4, 2, 2, 1) if enforce_sorted else (2, 4, 1, 3)
    arrays = [rng.standard_normal((n, 3)) for n in sizes]
    e_in = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    ep = ernn.pack_sequence(e_in, enforce_sorted=enforce_sorted)
    tp = trnn.pack_sequence(t_in, enforce_sorted=enforce_sorted)
    assert_same_packed(ep, tp)
    backprop(ep.data, tp.data, e_in, t_in)
    for e, t in zip(ernn.unpack_sequence(ep), trnn.unpack_sequence(tp)):
        assert_close(e, t, **TIGHT)
    padded = ernn.pad_sequence(e_in, batch_first=True)
    for e, a in zip(ernn.unpad_sequence(padded, ember.tensor(list(sizes)), batch_first=True), arrays):
        assert_close(e, torch.tensor(a), **TIGHT)


def test_packed_sequence_type():
    data, bs = ember.randn(4, 2), ember.tensor([2, 1, 1])
    p = ernn.PackedSequence(data, bs)
    assert isinstance(p, tuple) and p.sorted_indices is None and p.unsorted_indices is None
    d, b, s, u = p
    assert d is data and b is bs
    q = ernn.PackedSequence(data, bs, ember.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]
    assert q.double().data.dtype == ember.float64 and q.double().sorted_indices is q.sorted_indices
    assert q.to(ember.float32) is q and not q.is_cuda
    assert ernn.invert_permutation(ember.tensor([2, 0, 1])).tolist() == \
        trnn.invert_permutation(torch.tensor([2, 0, 1])).tolist()


@pytest.mark.parametrize("call", [
    lambda m, r: r.pack_padded_sequence(m.zeros(5, 3, 2), [2, 4, 1]),
    lambda m, r: r.pack_padded_sequence(m.zeros(5, 3, 2), [4, 2, 0]),
    lambda m, r: r.pad_packed_sequence(r.pack_padded_sequence(m.zeros(5, 2, 1), [5, 3]), total_length=4),
    lambda m, r: r.pad_sequence([m.zeros(2, 3)], padding_side="middle"),
])
def test_errors_match_torch(call):
    assert_same_error(lambda m: call(m, ernn if m is ember else trnn))


# ----------------------------------------------------------------- through the recurrent layers
@pytest.mark.parametrize("cls,kw", [
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=2, bidirectional=True)),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("RNN", dict(bidirectional=True, nonlinearity="relu")),
    ("GRU", dict(batch_first=True)),
])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_packed_input_through_recurrent_layer(cls, kw, enforce_sorted, with_state):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(3, 4, **kw).double()
    em = getattr(ember.nn, cls)(3, 4, **kw).double()
    em.load_state_dict(ember_state(tm))
    lengths = [5, 4, 2, 2, 1] if enforce_sorted else [2, 5, 1, 4, 2]
    bf = kw.get("batch_first", False)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 5, 3))
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    arrays = [x]
    if with_state:
        arrays.append(rng.standard_normal((layers, 5, kw.get("proj_size") or 4)))
        if cls == "LSTM":
            arrays.append(rng.standard_normal((layers, 5, 4)))
    e_in = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]

    def run(m, r, ins):
        packed = r.pack_padded_sequence(ins[0], lengths, batch_first=bf, enforce_sorted=enforce_sorted)
        state = None if not with_state else (tuple(ins[1:]) if cls == "LSTM" else ins[1])
        out, h = m(packed, state)
        padded, lens = r.pad_packed_sequence(out, batch_first=bf)
        return out, padded, lens, (list(h) if cls == "LSTM" else [h])

    e_packed, e_pad, e_len, e_states = run(em, ernn, e_in)
    t_packed, t_pad, t_len, t_states = run(tm, trnn, t_in)
    assert_same_packed(e_packed, t_packed)
    assert_close(e_len, t_len)
    rng = np.random.default_rng(6)
    e_roots, t_roots = [e_pad, *e_states], [t_pad, *t_states]
    grads = [rng.standard_normal(tuple(t.shape)) for t in t_roots]
    for e, t in zip(e_roots, t_roots):
        assert_close(e, t, **TIGHT)
    ember.autograd.backward(e_roots, [ember.tensor(g) for g in grads])
    torch.autograd.backward(t_roots, [torch.tensor(g) for g in grads])
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        assert_close(e.grad, t.grad, **TIGHT, msg=f"grad of leaf {i}")
    t_params = dict(tm.named_parameters())
    for name, p in em.named_parameters():
        assert_close(p.grad, t_params[name].grad, **TIGHT, msg=name)


def test_packed_equals_running_each_sequence_alone():
    """Each sequence's packed result equals running that sequence by itself (no leakage from padding)."""
    m = ember.nn.GRU(2, 3, bidirectional=True).double()
    rng = np.random.default_rng(7)
    seqs = [ember.tensor(rng.standard_normal((n, 2))) for n in (4, 1, 3)]
    out, h = m(ernn.pack_sequence(seqs, enforce_sorted=False))
    padded, _ = ernn.pad_packed_sequence(out)
    for b, s in enumerate(seqs):
        alone, h_alone = m(s)
        assert_close(padded[: s.shape[0], b], alone, **TIGHT)
        assert_close(h[:, b], h_alone, **TIGHT)


def test_module_paths_programs_import():
    import ember.nn.modules.rnn as mr

    assert mr.LSTM is ember.nn.LSTM and mr.RNNBase is ember.nn.RNNBase and mr.GRUCell is ember.nn.GRUCell
    assert issubclass(ember.nn.GRU, mr.RNNBase) and issubclass(ember.nn.LSTMCell, mr.RNNCellBase)
    assert ember.nn.utils.rnn is ernn
    for name in ernn.__all__:
        assert hasattr(trnn, name), name


def test_pytorch_program_imports_recurrent_modules_by_name(tmp_path):
    """A PyTorch program run under ``python -m ember.compat`` imports the modules by their torch paths."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch.nn.modules.rnn
        from torch.nn.modules.rnn import RNNBase, LSTM
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, PackedSequence
        import ember
        assert torch.nn.modules.rnn is ember.nn.modules.rnn and LSTM is ember.nn.LSTM
        lstm = LSTM(3, 4, batch_first=True)
        packed = pack_padded_sequence(torch.randn(2, 5, 3), torch.tensor([2, 5]), batch_first=True,
                                      enforce_sorted=False)
        out, (h, c) = lstm(packed)
        padded, lengths = pad_packed_sequence(out, batch_first=True)
        assert isinstance(out, PackedSequence) and isinstance(lstm, RNNBase)
        print(tuple(padded.shape), lengths.tolist(), tuple(h.shape))
    """))
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": ROOT}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(2, 5, 4) [2, 5] (1, 2, 4)"
