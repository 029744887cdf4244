"""nn.RNN / nn.LSTM / nn.GRU and their cells against PyTorch with the same weights: outputs, final states, and
gradients w.r.t. the input, the initial states and every parameter; state_dict layout, init, errors."""

import math

import numpy as np
import pytest
import torch
from nn_oracle import ember_state
from oracle import assert_close, assert_same_error

import ember

TIGHT = dict(atol=1e-10, rtol=1e-8)


def make_pair(cls, dtype=torch.float64, **kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(**kw).to(dtype)
    em = getattr(ember.nn, cls)(**kw).to(getattr(ember, str(dtype).split(".")[-1]))
    em.load_state_dict(ember_state(tm))
    return em, tm


def leaves(*arrays):
    """The same arrays as ember and torch leaves requiring grad."""
    return ([ember.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def flat_outputs(out):
    """(output, h_n) or (output, (h_n, c_n)) -> [output, h_n(, c_n)]."""
    y, h = out
    return [y, *h] if isinstance(h, tuple) else [y, h]


def backprop_and_compare(e_outs, t_outs, e_leaves, t_leaves, em, tm, tol):
    """Compare outputs, back-propagate the same random upstream gradients, compare leaf and parameter grads."""
    rng = np.random.default_rng(7)
    e_roots, t_roots, e_grads, t_grads = [], [], [], []
    for i, (eo, to) in enumerate(zip(e_outs, t_outs)):
        assert_close(eo, to, **tol, msg=f"output {i}")
        g = rng.standard_normal(tuple(to.shape)).astype(to.detach().numpy().dtype)
        e_roots.append(eo)
        t_roots.append(to)
        e_grads.append(ember.tensor(g))
        t_grads.append(torch.tensor(g))
    ember.autograd.backward(e_roots, e_grads)
    torch.autograd.backward(t_roots, t_grads)
    for i, (el, tl) in enumerate(zip(e_leaves, t_leaves)):
        assert_close(el.grad, tl.grad, **tol, msg=f"grad of leaf {i}")
    t_params = dict(tm.named_parameters())
    for name, p in em.named_parameters():
        assert_close(p.grad, t_params[name].grad, **tol, msg=f"grad of {name}")


CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(num_layers=3, bidirectional=True, batch_first=True),
    dict(bias=False, num_layers=2),
    dict(batch_first=True),
]


def state_shape(kw, batch, hidden, proj=0):
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    return (layers, batch, proj or hidden)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("kw", CONFIGS)
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_layer_matches_torch(cls, kw, with_state):
    em, tm = make_pair(cls, input_size=3, hidden_size=5, **kw)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 3) if kw.get("batch_first") else (4, 2, 3))
    arrays = [x]
    if with_state:
        arrays.append(rng.standard_normal(state_shape(kw, 2, 5)))
        if cls == "LSTM":
            arrays.append(rng.standard_normal(state_shape(kw, 2, 5)))
    e_in, t_in = leaves(*arrays)
    state = lambda ins: None if not with_state else (tuple(ins[1:]) if cls == "LSTM" else ins[1])  # noqa: E731
    e_out, t_out = em(e_in[0], state(e_in)), tm(t_in[0], state(t_in))
    backprop_and_compare(flat_outputs(e_out), flat_outputs(t_out), e_in, t_in, em, tm, TIGHT)


@pytest.mark.parametrize("kw", [dict(proj_size=2), dict(proj_size=3, num_layers=2, bidirectional=True),
                                dict(proj_size=1, bias=False, batch_first=True)])
def test_lstm_projection_matches_torch(kw):
    em, tm = make_pair("LSTM", input_size=4, hidden_size=6, **kw)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 4))
    h0 = rng.standard_normal(state_shape(kw, 3 if kw.get("batch_first") else 5, 6, kw["proj_size"]))
    c0 = rng.standard_normal(state_shape(kw, 3 if kw.get("batch_first") else 5, 6))
    e_in, t_in = leaves(x, h0, c0)
    e_out, t_out = em(e_in[0], (e_in[1], e_in[2])), tm(t_in[0], (t_in[1], t_in[2]))
    assert tuple(e_out[1][0].shape) == tuple(t_out[1][0].shape)
    backprop_and_compare(flat_outputs(e_out), flat_outputs(t_out), e_in, t_in, em, tm, TIGHT)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_float32_and_relu(cls):
    kw = dict(nonlinearity="relu") if cls == "RNN" else {}
    em, tm = make_pair(cls, torch.float32, input_size=6, hidden_size=8, num_layers=2, **kw)
    x = np.random.default_rng(2).standard_normal((7, 3, 6)).astype(np.float32)
    e_in, t_in = leaves(x)
    backprop_and_compare(flat_outputs(em(e_in[0])), flat_outputs(tm(t_in[0])), e_in, t_in, em, tm,
                         dict(atol=1e-5, rtol=1e-4))


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input(cls, batch_first):
    em, tm = make_pair(cls, input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=batch_first)
    rng = np.random.default_rng(3)
    x, h0, c0 = rng.standard_normal((5, 3)), rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    arrays = [x, h0, c0] if cls == "LSTM" else [x, h0]
    e_in, t_in = leaves(*arrays)
    state = (lambda ins: tuple(ins[1:])) if cls == "LSTM" else (lambda ins: ins[1])
    e_out, t_out = em(e_in[0], state(e_in)), tm(t_in[0], state(t_in))
    backprop_and_compare(flat_outputs(e_out), flat_outputs(t_out), e_in, t_in, em, tm, TIGHT)
    e_out, t_out = em(ember.tensor(x)), tm(torch.tensor(x))  # no state given: zeros
    for eo, to in zip(flat_outputs(e_out), flat_outputs(t_out)):
        assert_close(eo, to, **TIGHT)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("shape,hidden", [((1, 1, 1), 1), ((3, 0, 2), 3), ((1, 4, 2), 1)])
def test_edge_shapes(cls, shape, hidden):
    """One step, an empty batch, hidden size 1: values and gradients as torch's."""
    em, tm = make_pair(cls, input_size=shape[-1], hidden_size=hidden, bidirectional=True)
    e_in, t_in = leaves(np.random.default_rng(12).standard_normal(shape))
    backprop_and_compare(flat_outputs(em(e_in[0])), flat_outputs(tm(t_in[0])), e_in, t_in, em, tm, TIGHT)


def test_repeated_training_steps_match_torch():
    """Three SGD steps through a 2-layer LSTM: every step's loss and the final weights agree."""
    em, tm = make_pair("LSTM", input_size=3, hidden_size=4, num_layers=2)
    eo, to = ember.optim.SGD(em.parameters(), lr=0.5), torch.optim.SGD(tm.parameters(), lr=0.5)
    x = np.random.default_rng(4).standard_normal((6, 2, 3))
    for _ in range(3):
        for model, opt, mod in ((em, eo, ember), (tm, to, torch)):
            opt.zero_grad()
            out, (h, c) = model(mod.tensor(x))
            loss = (out ** 2).mean() + h.sum() * 0.1 + c.abs().mean()
            loss.backward()
            opt.step()
            model.last_loss = float(loss.detach())
        assert math.isclose(em.last_loss, tm.last_loss, rel_tol=1e-9)
    for k, v in tm.state_dict().items():
        assert_close(em.state_dict()[k], v, **TIGHT, msg=k)


# ----------------------------------------------------------------- parameters, init, layout
@pytest.mark.parametrize("cls,kw", [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True)),
    ("LSTM", dict(bias=False, proj_size=3)),
    ("GRU", dict(num_layers=3)),
    ("RNN", dict(bidirectional=True, bias=False, nonlinearity="relu")),
])
def test_state_dict_layout_matches_torch(cls, kw):
    em, tm = getattr(ember.nn, cls)(5, 7, **kw), getattr(torch.nn, cls)(5, 7, **kw)
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert em._flat_weights_names == tm._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in em.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in tm.all_weights]
    assert em.all_weights[0][0] is em.weight_ih_l0
    em.flatten_parameters()  # exists (a no-op), as programs call it after .to(device)
    assert repr(em) == repr(tm)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"])
def test_default_init_is_uniform_in_one_over_sqrt_hidden(cls):
    ember.manual_seed(0)
    m = getattr(ember.nn, cls)(50, 64)
    bound = 1 / math.sqrt(64)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.95 * bound and values.max() > 0.95 * bound  # fills the whole interval
    assert abs(values.std() - bound / math.sqrt(3)) < 0.02 * bound  # the std of U(-b, b)
    assert abs(values.mean()) < 0.02 * bound


def test_dropout_between_layers():
    """Dropout acts on the outputs of every layer but the last, in training only; p=0 and eval are exact."""
    for p in (0.0, 0.3):
        em, tm = make_pair("LSTM", input_size=3, hidden_size=4, num_layers=3, dropout=p)
        x = np.random.default_rng(5).standard_normal((5, 2, 3))
        if p == 0:
            e_in, t_in = leaves(x)
            backprop_and_compare(flat_outputs(em(e_in[0])), flat_outputs(tm(t_in[0])), e_in, t_in, em, tm, TIGHT)
        em.eval()
        tm.eval()
        for eo, to in zip(flat_outputs(em(ember.tensor(x))), flat_outputs(tm(torch.tensor(x)))):
            assert_close(eo, to, **TIGHT)
    # p=1 drops every inter-layer value (deterministic): the same in both frameworks, in training mode.
    em, tm = make_pair("GRU", input_size=3, hidden_size=4, num_layers=2, dropout=1.0)
    x = np.random.default_rng(6).standard_normal((5, 2, 3))
    for eo, to in zip(flat_outputs(em(ember.tensor(x))), flat_outputs(tm(torch.tensor(x)))):
        assert_close(eo, to, **TIGHT)


def test_dropout_statistics():
    """Layer 2 of a ReLU RNN set to pass its input through shows the mask: zeros at rate p, the rest * 1/(1-p)."""
    p = 0.4
    m = ember.nn.RNN(8, 64, num_layers=2, nonlinearity="relu", dropout=p).double()
    with ember.no_grad():
        m.weight_hh_l0.zero_()
        m.weight_hh_l1.zero_()
        m.weight_ih_l1.copy_(ember.eye(64, dtype=ember.float64))
        m.bias_ih_l1.zero_()
        m.bias_hh_l1.zero_()
        m.bias_ih_l0.fill_(1.0)  # layer 1's outputs are positive, so the ReLU of layer 2 passes them
    x = ember.tensor(np.abs(np.random.default_rng(8).standard_normal((50, 20, 8))) * 0.01)
    m.eval()
    clean = m(x)[0].detach().numpy()
    assert (clean > 0).all()
    m.train()
    ratio = m(x)[0].detach().numpy() / clean
    kept = ratio != 0
    assert abs(1 - kept.mean() - p) < 0.02
    np.testing.assert_allclose(ratio[kept], 1 / (1 - p), rtol=1e-9)
    assert (m(x)[0].detach().numpy() != m(x)[0].detach().numpy()).any()  # a fresh mask every call


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize("call", [
    lambda m: m.nn.LSTM(4, 5)(m.randn(1, 2, 3, 4)),
    lambda m: m.nn.GRU(4, 5)(m.randn(1, 2, 3, 4)),
    lambda m: m.nn.RNN(4, 5)(m.randn(4)),
    lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 6)),
    lambda m: m.nn.GRU(4, 5)(m.randn(3, 2, 4).double()),
    lambda m: m.nn.LSTM(4, 5, num_layers=2)(m.randn(3, 2, 4), (m.randn(1, 2, 5), m.randn(2, 2, 5))),
    lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 4), (m.randn(1, 2, 5), m.randn(1, 2, 6))),
    lambda m: m.nn.LSTM(4, 5, proj_size=2)(m.randn(3, 2, 4), (m.randn(1, 2, 5), m.randn(1, 2, 5))),
    lambda m: m.nn.GRU(4, 5, bidirectional=True)(m.randn(3, 2, 4), m.randn(1, 2, 5)),
    lambda m: m.nn.RNN(4, 5, batch_first=True)(m.randn(3, 2, 4), m.randn(1, 2, 5)),
    lambda m: m.nn.RNN(4, 5)(m.randn(3, 4), m.randn(1, 1, 5)),
    lambda m: m.nn.GRU(4, 5)(m.randn(3, 2, 4), m.randn(2, 5)),
    lambda m: m.nn.LSTM(4, 5)(m.randn(3, 4), (m.randn(1, 1, 5), m.randn(1, 1, 5))),
    lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 4), (m.randn(2, 5), m.randn(2, 5))),
    lambda m: m.nn.GRU(4, 5, proj_size=2),
    lambda m: m.nn.LSTM(4, 5)(m.randn(0, 2, 4)),
    lambda m: m.nn.GRU(4, 5, batch_first=True)(m.randn(2, 0, 4)),
    lambda m: m.nn.RNN(4, 5, proj_size=2),
    lambda m: m.nn.LSTM(4, 5, proj_size=5),
    lambda m: m.nn.LSTM(4, 5, proj_size=-1),
    lambda m: m.nn.LSTM(4, 5, dropout=1.5),
    lambda m: m.nn.LSTM(0, 5),
    lambda m: m.nn.LSTM(4, 5, num_layers=0),
    lambda m: m.nn.LSTM(4, 5.0),
    lambda m: m.nn.LSTM(4, 5, bias=1),
    lambda m: m.nn.RNN(4, 5, nonlinearity="gelu"),
    lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 4), (m.randn(2, 5), m.randn(2, 5))),
    lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 6)),
    lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 4), (m.randn(3, 5), m.randn(3, 6))),
    lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 4), (m.randn(3, 5), m.randn(1, 3, 5))),
    lambda m: m.nn.GRUCell(4, 5)(m.randn(3, 4), m.randn(2, 5)),
    lambda m: m.nn.GRUCell(4, 5)(m.randn(1, 3, 4)),
    lambda m: m.nn.RNNCell(4, 5)(m.randn(3, 4), m.randn(3, 1, 5)),
])
def test_errors_match_torch(call):
    assert_same_error(call)


def test_dropout_with_one_layer_warns_like_torch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ember.nn.LSTM(3, 4, dropout=0.5)


# ----------------------------------------------------------------- cells
@pytest.mark.parametrize("cls,kw", [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}),
                                    ("RNNCell", dict(nonlinearity="relu")), ("LSTMCell", dict(bias=False)),
                                    ("GRUCell", dict(bias=False))])
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_torch(cls, kw, batched):
    em, tm = make_pair(cls, input_size=3, hidden_size=4, **kw)
    rng = np.random.default_rng(9)
    lead = (5,) if batched else ()
    arrays = [rng.standard_normal(lead + (3,)), rng.standard_normal(lead + (4,))]
    if cls == "LSTMCell":
        arrays.append(rng.standard_normal(lead + (4,)))
    e_in, t_in = leaves(*arrays)
    if cls == "LSTMCell":
        e_out, t_out = em(e_in[0], (e_in[1], e_in[2])), tm(t_in[0], (t_in[1], t_in[2]))
    else:
        e_out, t_out = [em(e_in[0], e_in[1])], [tm(t_in[0], t_in[1])]
    backprop_and_compare(list(e_out), list(t_out), e_in, t_in, em, tm, TIGHT)
    # no state: zeros
    e_out, t_out = em(ember.tensor(arrays[0])), tm(torch.tensor(arrays[0]))
    for eo, to in zip(e_out if cls == "LSTMCell" else [e_out], t_out if cls == "LSTMCell" else [t_out]):
        assert_close(eo, to, **TIGHT)


def test_cell_unrolled_equals_layer():
    """An LSTMCell stepped over a sequence gives the LSTM layer's outputs (same weights)."""
    layer = ember.nn.LSTM(3, 4).double()
    cell = ember.nn.LSTMCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = ember.tensor(np.random.default_rng(10).standard_normal((6, 2, 3)))
    out, (h, c) = layer(x)
    state = None
    for t in range(6):
        state = cell(x[t], state)
        assert_close(state[0], out[t], **TIGHT)
    assert_close(state[1], c[0], **TIGHT)


@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cell_state_dict_and_repr(cls):
    kw = dict(bias=False, nonlinearity="relu") if cls == "RNNCell" else dict(bias=False)
    em, tm = getattr(ember.nn, cls)(5, 7, **kw), getattr(torch.nn, cls)(5, 7, **kw)
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    assert repr(em) == repr(tm)
    em2, tm2 = getattr(ember.nn, cls)(5, 7), getattr(torch.nn, cls)(5, 7)
    assert list(em2.state_dict()) == list(tm2.state_dict())
    assert repr(em2) == repr(tm2)


def test_gradients_accumulate_across_backwards_like_torch():
    """Two backwards without zero_grad add up, each parameter into its own .grad (the two biases included)."""
    em, tm = make_pair("LSTM", input_size=3, hidden_size=4)
    x = np.random.default_rng(11).standard_normal((4, 2, 3))
    for _ in range(2):
        for model, mod in ((em, ember), (tm, torch)):
            out, (h, c) = model(mod.tensor(x))
            (out.sum() + (h * c).sum()).backward()
    assert not np.shares_memory(em.bias_ih_l0.grad.numpy(), em.bias_hh_l0.grad.numpy())
    for name, p in tm.named_parameters():
        assert_close(em.get_parameter(name).grad, p.grad, **TIGHT, msg=name)


# ---------------------------------------------------------------- the flat weights list forward computes with
@pytest.mark.parametrize("cls,kw", [("LSTM", dict(num_layers=2, bidirectional=True)), ("GRU", dict(bias=False)),
                                    ("RNN", dict(num_layers=2)), ("LSTM", dict(proj_size=2))])
def test_flat_weights_are_the_list_forward_uses_as_pytorch(cls, kw):
    """``_flat_weights`` is a list, as PyTorch's, and forward computes with it: assigning it (``higher`` gives a
    patched RNN its fast weights so), assigning a weight, or replacing a weight in ``_parameters`` (read again by
    its identity at the next forward) all act as in PyTorch."""
    em, tm = make_pair(cls, input_size=3, hidden_size=4, **kw)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    for mod in (em, tm):
        assert isinstance(mod._flat_weights, list)
        assert [w is getattr(mod, n) for w, n in zip(mod._flat_weights, mod._flat_weights_names)] == \
            [True] * len(mod._flat_weights_names)
    ys = {}
    for m, mod in ((ember, em), (torch, tm)):
        mod._flat_weights = [w * 1.5 for w in mod._flat_weights]  # non-leaf fast weights, differentiable
        y1 = mod(m.tensor(x))[0]
        name = mod._flat_weights_names[1]
        setattr(mod, name, m.nn.Parameter(getattr(mod, name).detach() * 0.5))
        assert mod._flat_weights[1] is getattr(mod, name)
        y2 = mod(m.tensor(x))[0]
        mod._parameters[name] = m.nn.Parameter(getattr(mod, name).detach() * -1)  # seen at the next forward
        y3 = mod(m.tensor(x))[0]
        assert mod._flat_weights[1] is getattr(mod, name)
        ys[m] = (y1, y2, y3)
    for a, b in zip(ys[ember], ys[torch]):
        assert_close(a, b, **TIGHT)


def test_flat_weights_follow_copies_pickles_saves_and_dtype_moves():
    import copy
    import io
    import pickle

    em, tm = make_pair("LSTM", input_size=3, hidden_size=4, num_layers=2)
    x = np.random.default_rng(1).standard_normal((4, 2, 3))
    want = tm(torch.tensor(x))[0]
    buf = io.BytesIO()
    ember.save(em, buf)  # the whole module
    buf.seek(0)
    for twin in (copy.deepcopy(em), pickle.loads(pickle.dumps(em)), ember.load(buf, weights_only=False)):
        assert all(w is getattr(twin, n) for w, n in zip(twin._flat_weights, twin._flat_weights_names))
        assert_close(twin(ember.tensor(x))[0], want, **TIGHT)
    em.float()
    assert em._flat_weights[0].dtype == ember.float32
    assert_close(em(ember.tensor(x, dtype=ember.float32))[0], tm.float()(torch.tensor(x, dtype=torch.float32))[0],
                 atol=1e-6, rtol=1e-5)
