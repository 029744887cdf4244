"""Embedding(sparse=True): sparse COO gradients as PyTorch's (indices, values, coalesce, to_dense, accumulation,
zero_grad), the optimizers that take them (SGD, Adagrad, SparseAdam) stepped against torch, PyTorch's errors
elsewhere, and torch.sparse_coo_tensor."""

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, assert_same_error

VOCAB, DIM = 10, 3
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")  # torch's, from its Adagrad


def _emb(fw, padding_idx=None, functional=False):
    weight = np.arange(VOCAB * DIM, dtype=np.float32).reshape(VOCAB, DIM) / 10
    emb = fw.nn.Embedding(VOCAB, DIM, padding_idx=padding_idx, sparse=True)
    emb.weight.data = fw.tensor(weight)
    if functional:
        return emb, lambda x: fw.nn.functional.embedding(x, emb.weight, padding_idx=padding_idx, sparse=True)
    return emb, emb


def _backward(fw, lookup, idx, scale=1.0):
    out = lookup(fw.tensor(idx))
    (out * out * scale).sum().backward()


def _same_sparse(e, t, entries=True):
    """``entries``: the uncoalesced entries too (PyTorch's accumulation sometimes merges equal indices)."""
    assert e.is_sparse and t.is_sparse and repr(e.layout) == repr(t.layout) == "torch.sparse_coo"
    assert e.sparse_dim() == t.sparse_dim() and e.dense_dim() == t.dense_dim()
    if entries:
        assert e.is_coalesced() == t.is_coalesced() and e._nnz() == t._nnz()
        # (clones: numpy() would pin torch's storage, which its next accumulation resizes)
        assert_close(e._indices(), t._indices().clone())
        assert_close(e._values(), t._values().clone(), atol=1e-6)
    ec, tc = e.coalesce(), t.coalesce()
    assert ec.is_coalesced() and tc.is_coalesced()
    assert_close(ec.indices(), tc.indices().clone())
    assert_close(ec.values(), tc.values().clone(), atol=1e-6)
    assert_close(e.to_dense(), t.to_dense(), atol=1e-6)


@pytest.mark.parametrize("idx", [np.array([[0, 3, 2], [3, 9, 0]]), np.array([4]), np.zeros((0,), np.int64),
                                 np.array([[2, 2]])], ids=["batch", "one", "empty", "only-padding"])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("functional", [False, True])
def test_sparse_grad_is_pytorchs(idx, padding_idx, functional):
    (emb, look), (temb, tlook) = _emb(ember, padding_idx, functional), _emb(torch, padding_idx, functional)
    _backward(ember, look, idx)
    _backward(torch, tlook, idx)
    e, t = emb.weight.grad, temb.weight.grad
    _same_sparse(e, t)
    assert e.shape == tuple(t.shape) and str(e.dtype) == str(t.dtype).replace("torch", "ember")
    assert not e.requires_grad and e.grad_fn is None
    # the dense gradient of sparse=False is the sparse gradient made dense
    dense = torch.nn.Embedding(VOCAB, DIM, padding_idx=padding_idx)
    dense.weight.data = temb.weight.data.clone()
    _backward(torch, dense, idx)
    assert_close(e.to_dense(), dense.weight.grad, atol=1e-6)
    for name in ("indices", "values"):
        if not t.is_coalesced():
            with pytest.raises(RuntimeError) as te:
                getattr(t, name)()
            with pytest.raises(RuntimeError) as ee:
                getattr(e, name)()
            assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_two_backwards_concatenate_and_zero_grad(set_to_none):
    (emb, _), (temb, _) = _emb(ember), _emb(torch)
    for fw, m in ((ember, emb), (torch, temb)):
        _backward(fw, m, np.array([[1, 4], [4, 7]]))
        _backward(fw, m, np.array([7, 0, 1]), scale=3.0)
    _same_sparse(emb.weight.grad, temb.weight.grad, entries=False)
    assert emb.weight.grad._indices().tolist() == [[1, 4, 4, 7, 7, 0, 1]]  # entries concatenated, uncoalesced
    first = emb.weight.grad
    eopt, topt = ember.optim.SGD(emb.parameters(), lr=0.1), torch.optim.SGD(temb.parameters(), lr=0.1)
    eopt.zero_grad(set_to_none=set_to_none)
    topt.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert emb.weight.grad is None and temb.weight.grad is None
    else:
        _same_sparse(emb.weight.grad, temb.weight.grad)  # nnz 0
        assert emb.weight.grad is first and first._nnz() == 0
    for fw, m in ((ember, emb), (torch, temb)):
        _backward(fw, m, np.array([5, 5]))
    _same_sparse(emb.weight.grad, temb.weight.grad)
    emb.zero_grad(set_to_none=False)  # Module.zero_grad too
    assert emb.weight.grad._nnz() == 0


@pytest.mark.parametrize("by", ["module", "optimizer"])
def test_zero_grad_keeps_a_sparse_grad_zeroed_and_detached(by):
    """A sparse .grad that requires grad (``requires_grad_()`` on it) is zeroed in place and stops requiring
    grad, as PyTorch's zero_grad(set_to_none=False) detaches every gradient it keeps."""
    results = []
    for fw in (ember, torch):
        emb = fw.nn.Embedding(VOCAB, DIM, sparse=True)
        emb(fw.tensor([1, 4, 4])).sum().backward()
        grad = emb.weight.grad.requires_grad_()
        (emb if by == "module" else fw.optim.SGD(emb.parameters(), lr=0.1)).zero_grad(set_to_none=False)
        assert emb.weight.grad is grad
        results.append((grad.requires_grad, grad.is_sparse, grad._nnz(), tuple(grad.shape)))
    assert results[0] == results[1] == (False, True, 0, (VOCAB, DIM))


def test_sparse_and_dense_gradients_of_one_weight_add_up_dense():
    (emb, _), (temb, _) = _emb(ember), _emb(torch)
    for fw, m in ((ember, emb), (torch, temb)):
        _backward(fw, m, np.array([1, 4]))  # sparse .grad, then a dense gradient into it
        (m.weight * 2).sum().backward()
    assert not emb.weight.grad.is_sparse and not temb.weight.grad.is_sparse
    assert_close(emb.weight.grad, temb.weight.grad)
    for fw, m in ((ember, emb), (torch, temb)):
        _backward(fw, m, np.array([4, 9]))  # sparse into the dense .grad
    assert_close(emb.weight.grad, temb.weight.grad)
    (emb2, _), (temb2, _) = _emb(ember), _emb(torch)
    for fw, m in ((ember, emb2), (torch, temb2)):  # one backward: the lookup and a dense use of the weight
        out = m(fw.tensor(np.array([3, 3, 8])))
        (out.sum() + (m.weight ** 2).sum()).backward()
    assert not emb2.weight.grad.is_sparse
    assert_close(emb2.weight.grad, temb2.weight.grad, atol=1e-6)


OPTIMIZERS = [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.3, maximize=True)),
    ("Adagrad", dict(lr=0.1)), ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2, maximize=True)),
    ("Adagrad", dict(lr=0.1, eps=0.5, lr_decay=0.5)),  # an eps and a decay large enough to show in the result
    ("SparseAdam", dict(lr=0.1)), ("SparseAdam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, maximize=True)),
]


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
@pytest.mark.parametrize("backwards", [1, 2])
def test_optimizer_steps_on_sparse_grads_match_torch(name, kwargs, backwards):
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, VOCAB, (4, 3)) for _ in range(5)]
    runs = {}
    for fw in (ember, torch):
        fw.manual_seed(0)
        emb, _ = _emb(fw, padding_idx=2)
        head = fw.nn.Linear(DIM, 2)  # a dense parameter in the same group (not for SparseAdam: dense grads)
        head.weight.data, head.bias.data = fw.tensor(np.ones((2, DIM), np.float32) / 3), fw.tensor(np.zeros(2,
                                                                                                          np.float32))
        params = list(emb.parameters()) + ([] if name == "SparseAdam" else list(head.parameters()))
        opt = getattr(fw.optim, name)(params, **kwargs)
        for x in batches:
            opt.zero_grad()
            for k in range(backwards):
                out = head(emb(fw.tensor(x[:, k:]))) if name != "SparseAdam" else emb(fw.tensor(x[:, k:]))
                (out * out).mean().backward()
            opt.step()
        runs[fw] = (params, opt)
    (ep, eo), (tp, to) = runs[ember], runs[torch]
    for p, t in zip(ep, tp):
        assert_close(p, t, atol=2e-5, rtol=1e-5)
    es, ts = eo.state_dict(), to.state_dict()
    assert es["param_groups"][0].keys() == ts["param_groups"][0].keys()
    for key, state in ts["state"].items():
        assert set(es["state"][key]) == set(state)
        for k, v in state.items():
            mine = es["state"][key][k]
            if isinstance(v, torch.Tensor):
                assert tuple(mine.shape) == tuple(v.shape) and mine.is_sparse == v.is_sparse, k
                assert_close(mine.to_dense() if mine.is_sparse else mine, v.to_dense() if v.is_sparse else v,
                             atol=2e-5, rtol=1e-5)
            else:
                assert mine == v


def test_sgd_on_a_sparse_grad_touches_only_its_rows():
    (emb, _), _ = _emb(ember), None
    opt = ember.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
    before = emb.weight.detach().numpy().copy()
    _backward(ember, emb, np.array([1, 4, 4]))
    opt.step()
    after = emb.weight.detach().numpy()
    untouched = [r for r in range(VOCAB) if r not in (1, 4)]
    assert np.array_equal(after[untouched], before[untouched]) and not np.array_equal(after[[1, 4]], before[[1, 4]])
    assert opt.state[emb.weight]["momentum_buffer"].is_sparse


def _step_error(fw, name, kwargs, sparse=True):
    emb, _ = _emb(fw)
    if not sparse:
        emb.sparse = False
    opt = getattr(fw.optim, name)(emb.parameters(), **kwargs)
    _backward(fw, emb, np.array([1, 2]))
    with pytest.raises(Exception) as info:
        opt.step()
    return info


@pytest.mark.parametrize("name,kwargs,sparse", [
    ("Adam", {}, True), ("AdamW", {}, True), ("RMSprop", {}, True), ("Adadelta", {}, True), ("Adamax", {}, True),
    ("NAdam", {}, True), ("RAdam", {}, True), ("Adagrad", dict(weight_decay=0.1), True),
    ("SGD", dict(lr=0.1, weight_decay=0.1), True), ("SparseAdam", {}, False)])
def test_optimizers_without_a_sparse_path_raise_pytorchs_error(name, kwargs, sparse):
    mine, theirs = _step_error(ember, name, kwargs, sparse), _step_error(torch, name, kwargs, sparse)
    assert mine.type is theirs.type
    assert str(mine.value).startswith(str(theirs.value))


def test_sparse_adam_refuses_a_dense_gradient_in_a_group_that_asks_for_foreach_false():
    """SparseAdam has no per-parameter reference step: a group given ``foreach=False`` (a key it keeps as given)
    still refuses a dense gradient with PyTorch's error, and leaves the parameter, rather than skip the update."""
    errors = {}
    for fw in (ember, torch):
        p = fw.nn.Parameter(fw.ones(3))
        opt = fw.optim.SparseAdam([{"params": [p], "foreach": False}])
        p.grad = fw.ones(3)
        with pytest.raises(RuntimeError) as info:
            opt.step()
        errors[fw] = str(info.value)
        assert p.tolist() == [1.0, 1.0, 1.0]
    assert errors[ember] == errors[torch]


@pytest.mark.parametrize("kwargs", [dict(lr=-1), dict(eps=-1), dict(betas=(1.0, 0.9)), dict(betas=(0.9, 1.5))])
def test_sparse_adam_arguments(kwargs):
    assert_same_error(lambda m: m.optim.SparseAdam([m.zeros(2, requires_grad=True)], **kwargs))
    assert ember.optim.SparseAdam([ember.zeros(2, requires_grad=True)]).defaults == \
        torch.optim.SparseAdam([torch.zeros(2, requires_grad=True)]).defaults


def test_scale_grad_by_freq_and_clipping_refuse_sparse_grads_like_torch():
    for fw in (ember, torch):
        emb = fw.nn.Embedding(VOCAB, DIM, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
            emb(fw.tensor([1, 1])).sum().backward()
        emb, _ = _emb(fw)
        _backward(fw, emb, np.array([1, 2]))
        with pytest.raises(NotImplementedError):
            fw.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
        with pytest.raises(NotImplementedError):
            fw.nn.utils.clip_grad_value_(emb.parameters(), 1.0)


def test_grad_scaler_unscales_sparse_grads_like_torch():
    weights = {}
    for fw in (ember, torch):
        emb, _ = _emb(fw)
        opt = fw.optim.SGD(emb.parameters(), lr=0.1)
        scaler = fw.amp.GradScaler("cpu", init_scale=8.0)
        for idx in ([1, 2], [2, 5]):
            opt.zero_grad()
            scaler.scale((emb(fw.tensor(idx)) ** 2).sum()).backward()
            scaler.step(opt)
            scaler.update()
        weights[fw] = emb.weight
    assert_close(weights[ember], weights[torch], atol=1e-6)


def test_hooks_autograd_grad_and_anomaly_with_sparse_grads():
    emb, _ = _emb(ember)
    kept = []
    emb.weight.register_hook(kept.append)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"), ember.autograd.detect_anomaly():
        _backward(ember, emb, np.array([1, 2]))
    assert kept[0].is_sparse and kept[0]._values()._data is not emb.weight.grad._values()._data
    emb.weight.grad.mul_(2)
    assert_close(kept[0].to_dense() * 2, emb.weight.grad.to_dense())  # the hook's tensor is not .grad
    (g,) = ember.autograd.grad((emb(ember.tensor([3])) ** 2).sum(), emb.weight)
    assert g.is_sparse and g._indices().tolist() == [[3]]
    with pytest.raises(TypeError, match="to_dense"):
        g.numpy()
    with pytest.raises(NotImplementedError, match="'sum' is not supported on a sparse COO tensor"):
        g.sum()
    assert g.double().is_sparse and g.double().dtype == ember.float64  # a cast keeps it sparse


def test_sparse_coo_tensor_like_torch():
    cases = [([[0, 2, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], (4, 2)), ([[0, 1], [1, 0]], [1.0, 2.0], None),
             ([[2, 0, 2]], [1.0, 2.0, 3.0], (3,))]
    for indices, values, size in cases:
        e = ember.sparse_coo_tensor(indices, values, size)
        t = torch.sparse_coo_tensor(indices, values, *([size] if size else []))
        _same_sparse(e, t)
        assert tuple(e.shape) == tuple(t.shape)
        _same_sparse(e * 2, t * 2)
        _same_sparse(e.clone().mul_(3), t.clone().mul_(3))
        _same_sparse(e.clone().add_(e), t.clone().add_(t), entries=False)  # (PyTorch merges some entries)
        _same_sparse(-e, -t)
    assert ember.sparse_coo_tensor([[0]], [1], (2,)).dtype == ember.int64
    assert ember.ones(2).layout is ember.strided and not ember.ones(2).is_sparse
    with pytest.raises(RuntimeError, match="indices and values must have same nnz"):
        ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0, 3.0], (3,))
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 3 but found index 5"):
        ember.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,))
    s = ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        s.add(ember.ones(3))


@pytest.mark.parametrize("cast", ["double", "half", "long", "to", "type"])
def test_sparse_casts_and_dense_plus_sparse_promote_like_torch(cast):
    """A cast keeps a sparse tensor sparse (its values cast); ``dense + sparse`` of two dtypes promotes the sparse
    operand, as graph programs add an int64 adjacency to ``torch.eye``."""
    results = []
    for m in (ember, torch):
        s = m.sparse_coo_tensor([[0, 1, 2], [1, 2, 1]], [2, 3, 4], (3, 3), dtype=m.int64)
        converted = {"double": lambda s, m: s.double(), "half": lambda s, m: s.half(),
                     "long": lambda s, m: s.float().long(), "to": lambda s, m: s.to(m.float32),
                     "type": lambda s, m: s.type(m.float64)}[cast](s, m)
        results.append((converted, m.eye(3) + s, m.eye(3, dtype=m.float64) * 0.5 - s))
    for e, t in zip(*results):
        assert e.dtype.name == str(t.dtype).split(".")[1]
        if t.is_sparse:
            _same_sparse(e, t)
        else:
            assert e.layout is ember.strided
            assert_close(e, t)


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor"])
def test_legacy_sparse_constructors_like_torch(name):
    """``torch.sparse.FloatTensor(indices, values, size)`` (old GCN code), ``(indices, values)``, ``(*sizes)`` and
    ``()``: PyTorch's tensors (the values keep their dtype) and deprecation warnings (each form's once a process,
    in both), ``isinstance`` by dtype."""
    import warnings

    made = {}
    for m in (ember, torch):
        idx, vals = m.tensor([[0, 1, 1], [2, 0, 2]]), m.tensor([1.5, 2.0, -3.0])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            cls = getattr(m.sparse, name)
            out = (cls(idx, vals, m.Size([2, 4])), cls(idx, vals.double()), cls(2, 5), cls(m.Size([3])), cls())
        made[m] = out, [str(w.message) for w in seen]
        assert isinstance(out[2], cls) and not isinstance(m.ones(1), cls)
        assert isinstance(out[0], m.sparse.FloatTensor) and isinstance(out[1], m.sparse.DoubleTensor)  # values'
    (e_out, e_warns), (t_out, t_warns) = made[ember], made[torch]
    assert [w.split(" (Triggered")[0] for w in t_warns] == e_warns
    for e, t in zip(e_out, t_out):
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        _same_sparse(e, t)
    assert repr(ember.sparse.FloatTensor) == repr(torch.sparse.FloatTensor)
    with pytest.raises(TypeError):
        ember.sparse.FloatTensor("x")


def test_ddp_refuses_sparse_gradients_naming_the_parameter():
    model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Embedding(5, 2, sparse=True))
    with pytest.raises(RuntimeError, match=r"DistributedDataParallel: 1\.weight would get sparse gradients"):
        ember.nn.parallel.DistributedDataParallel(model)
    # a sparse gradient made by F.embedding(sparse=True) inside a forward: refused when it arrives
    from ember.distributed.reducer import Reducer

    weight = ember.nn.Parameter(ember.randn(5, 2))
    reducer = Reducer([weight], ["table"], SimpleNamespace(size=2, rank=0))
    reducer._armed = True  # as after a DDP forward
    with pytest.raises(RuntimeError, match="parameter table got a sparse gradient"):
        ember.nn.functional.embedding(ember.tensor([1, 3]), weight, sparse=True).sum().backward()


def test_deepcopy_load_state_dict_and_save_with_sparse_state():
    import copy
    import io

    runs = {}
    for fw in (ember, torch):
        emb, _ = _emb(fw)
        opt = fw.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
        _backward(fw, emb, np.array([1, 4, 4]))
        opt.step()
        grad = copy.deepcopy(emb.weight.grad)
        assert grad.is_sparse and grad._indices().tolist() == [[1, 4, 4]] and grad is not emb.weight.grad
        assert_close(grad.to_dense(), emb.weight.grad.to_dense())
        resumed = fw.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
        resumed.load_state_dict(opt.state_dict())
        resumed.zero_grad()
        _backward(fw, emb, np.array([4, 7]))
        resumed.step()
        runs[fw] = (emb, resumed)
    assert runs[ember][1].state[runs[ember][0].weight]["momentum_buffer"].is_sparse
    assert_close(runs[ember][0].weight, runs[torch][0].weight, atol=1e-6)
    with pytest.raises(NotImplementedError, match="ember.save cannot store a sparse COO tensor"):
        ember.save(runs[ember][1].state_dict(), io.BytesIO())


def test_sparse_grad_values_do_not_alias_a_gradient_another_input_receives():
    emb, _ = _emb(ember)
    w = ember.zeros(2, DIM, requires_grad=True)
    y = emb(ember.tensor([1, 3]))
    (y + w).sum().backward()  # add's backward hands the same gradient array to both inputs
    emb.weight.grad.mul_(5)
    assert_close(w.grad, np.ones((2, DIM), np.float32))
    assert_close(emb.weight.grad._values(), np.full((2, DIM), 5, np.float32))


def test_grad_report_reads_a_sparse_gradient_as_the_dense_one():
    from ember.diagnostics import grad_report

    emb, _ = _emb(ember)
    _backward(ember, emb, np.array([1, 4, 4]))
    (row,) = grad_report(emb)
    dense = emb.weight.grad.to_dense()
    assert row.norm == pytest.approx(float(dense.norm())) and row.mean == pytest.approx(float(dense.mean()))


def test_sparse_minus_sparse_and_sparse_minus_dense_as_pytorch():
    """``s - t`` and ``s.sub(t, alpha=)`` of sparse tensors are sparse; ``s - dense`` raises PyTorch's error (it
    leaked NumPy's TypeError)."""
    results = []
    for m in (torch, ember):
        s = m.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
        t = m.sparse_coo_tensor([[0], [1]], [5.0], (2, 2))
        with pytest.raises(RuntimeError) as caught:
            _ = s - m.ones(2, 2)
        results.append(((s - t).to_dense().tolist(), s.sub(t, alpha=2).to_dense().tolist(), (s - t).is_sparse,
                        str(caught.value)))
    assert results[1] == results[0]


_TRANSPOSES = {
    "t": lambda s: s.t(),
    "T": lambda s: s.T,
    "mT": lambda s: s.mT,
    "transpose": lambda s: s.transpose(0, 1),
    "transpose_negative": lambda s: s.transpose(-1, 0),
    "transpose_same_dim": lambda s: s.transpose(1, 1),
    "functional_t": lambda s: s.t() if isinstance(s, torch.Tensor) else ember.t(s),
    "functional_transpose": lambda s: (torch if isinstance(s, torch.Tensor) else ember).transpose(s, 1, 0),
    "swapdims": lambda s: s.swapdims(0, 1),
    "permute": lambda s: s.permute(1, 0),
}


def _coo(fw, indices, values, size, coalesce):
    s = fw.sparse_coo_tensor(fw.tensor(indices), fw.tensor(values), size)
    return s.coalesce() if coalesce else s


@pytest.mark.parametrize("op", list(_TRANSPOSES))
@pytest.mark.parametrize("entries", [([[0, 1, 1, 0], [2, 0, 2, 2]], [3.0, 4.0, 5.0, 6.0]), ([[1], [0]], [2.0]),
                                     ([[], []], [])])
@pytest.mark.parametrize("coalesce", [True, False])
def test_transposes_of_a_sparse_matrix_like_torch(op, entries, coalesce):
    """A GCN's adj.t(): indices, values, size and the coalesced flag as torch's (a transposed matrix is marked
    uncoalesced, even of one entry), the input untouched."""
    indices, values = entries
    e, t = (_coo(fw, np.array(indices, np.int64).reshape(2, -1), np.array(values, np.float32), (2, 3), coalesce)
            for fw in (ember, torch))
    er, tr = _TRANSPOSES[op](e), _TRANSPOSES[op](t)
    assert tuple(er.shape) == tuple(tr.shape)
    _same_sparse(er, tr)
    assert_close(er.to_dense(), tr.to_dense())
    _same_sparse(e, t)  # the input is unchanged


def test_transposes_of_sparse_tensors_with_more_dims_like_torch():
    idx, vals = np.array([[0, 1], [1, 0], [2, 2]], np.int64), np.ones((2,), np.float32)
    e, t = (fw.sparse_coo_tensor(fw.tensor(idx), fw.tensor(vals), (2, 2, 3)).coalesce() for fw in (ember, torch))
    for op in (lambda s: s.transpose(0, 2), lambda s: s.permute(2, 0, 1), lambda s: s.mT):
        _same_sparse(op(e), op(t))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # x.T of other than 2-D is deprecated: warned by both, as the dense one
        _same_sparse(e.T, t.T)
    hybrid = [fw.sparse_coo_tensor(fw.tensor(np.array([[0, 1]], np.int64)), fw.ones(2, 3), (2, 3))
              for fw in (ember, torch)]  # one sparse and one dense dimension
    for op, pair in ((lambda s: s.t(), hybrid), (lambda s: s.transpose(0, 1), hybrid), (lambda s: s.T, hybrid),
                     (lambda s: s.permute(1, 0), hybrid), (lambda s: s.transpose(0, 2), hybrid),
                     (lambda s: s.t(), (e, t))):
        ee, te = (_error_of(op, s) for s in pair)
        assert type(ee) is type(te) and str(ee) == str(te), (ee, te)
    vector = [fw.sparse_coo_tensor(fw.tensor(np.array([[0, 2]], np.int64)), fw.tensor([1.0, 2.0]), (3,)).coalesce()
              for fw in (ember, torch)]
    _same_sparse(vector[0].t(), vector[1].t())
    _same_sparse(vector[0].transpose(0, 0), vector[1].transpose(0, 0))


def _error_of(fn, *args):
    try:
        fn(*args)
    except Exception as err:  # noqa: BLE001 (compared with torch's)
        return err
    return None


@pytest.mark.parametrize("op", ["t_", "transpose_"])
def test_in_place_transposes_of_a_sparse_matrix_like_torch(op):
    e, t = (_coo(fw, np.array([[0, 1, 1], [2, 0, 2]], np.int64), np.array([3.0, 4.0, 5.0], np.float32), (2, 3), True)
            for fw in (ember, torch))
    er, tr = (s.t_() if op == "t_" else s.transpose_(0, 1) for s in (e, t))
    assert er is e and tr is t and tuple(e.shape) == (3, 2)
    _same_sparse(e, t)
    assert_close(e.to_dense(), t.to_dense())


def test_sparse_new_is_pytorchs_legacy_sparse_constructor():
    """``grad.new(indices, values, size)`` (DLRM's row-wise sparse Adagrad builds its updates so): a COO tensor of
    the values' dtype, without the typed constructors' deprecation warning; ``(indices, values)`` infers the size,
    ``(*sizes)`` and ``()`` are empty ones of the tensor's dtype."""
    import warnings

    made = {}
    for m in (ember, torch):
        s = m.sparse_coo_tensor(m.tensor([[0, 2]]), m.tensor([1.0, 2.0]), (4,))
        idx, vals = m.tensor([[0, 1]]), m.tensor([3.0, 4.0], dtype=m.float64)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            made[m] = (s.new(idx, vals, [4]), s.new(idx, vals, m.Size([4])), s.new(idx, vals), s.new(3), s.new(2, 3),
                       s.new())
        assert not [w for w in seen if "deprecated" in str(w.message)]
        with pytest.raises(RuntimeError, match="indices must be an int64 tensor"):
            s.new(idx.float(), vals, [4])
    for e, t in zip(made[ember], made[torch]):
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1] and e.is_coalesced() == t.is_coalesced()
        _same_sparse(e, t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dense_add_and_sub_of_a_sparse_tensor_in_place_like_torch(dtype):
    """``dense.add_(sparse, alpha=)`` and ``sub_`` (optimizers written for sparse gradients update their dense
    state so): the sparse entries added (repeats summed), PyTorch's errors for another size, a dtype that cannot
    hold the result, and a leaf that requires grad; inside a graph the gradient passes to the dense operand."""
    out = {}
    for m in (ember, torch):
        s = m.sparse_coo_tensor(m.tensor([[0, 2, 0]]), m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), (4, 2))
        d = m.arange(8, dtype=getattr(m, dtype)).reshape(4, 2)
        steps = [d.add_(s).clone(), d.add_(s, alpha=2).clone(), d.sub_(s).clone(), d.sub_(s, alpha=0.5).clone()]
        errors = []
        for target in (m.zeros(3, 2), m.zeros(4, 2, dtype=m.int64), m.zeros(4, 2, requires_grad=True)):
            with pytest.raises(RuntimeError) as e:
                target.add_(s)
            errors.append(str(e.value).split(". Wrap")[0].rstrip("."))  # (ember adds how to fix it)
        a = m.ones(4, 2, dtype=getattr(m, dtype), requires_grad=True)
        b = a * 2
        b.add_(s)
        b.sum().backward()
        out[m] = steps, errors, b.detach(), a.grad, d._version
    for e, t in zip(out[ember][0], out[torch][0]):
        np.testing.assert_allclose(e.numpy(), t.numpy())
    assert out[ember][1] == out[torch][1]
    np.testing.assert_allclose(out[ember][2].numpy(), out[torch][2].numpy())
    np.testing.assert_allclose(out[ember][3].numpy(), out[torch][3].numpy())
    assert out[ember][4] == out[torch][4]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dense_add_and_sub_of_a_sparse_tensor_with_alpha_like_torch(dtype):
    """Out of place, ``dense.add(sparse, alpha=)``/``sub`` scale the sparse values (the fused dense kernel read the
    sparse operand as an array); a sparse ``sub_`` of a sparse tensor is add_'s with -alpha, and a dense operand of
    either is PyTorch's add(sparse, dense) error."""
    out = {}
    for m in (ember, torch):
        s = m.sparse_coo_tensor(m.tensor([[0, 2, 0]]), m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), (4, 2))
        d = m.arange(8, dtype=getattr(m, dtype)).reshape(4, 2).requires_grad_()
        results = [d.add(s, alpha=2), d.sub(s, alpha=0.5), m.add(d, s, alpha=-3), m.sub(d, s, alpha=2)]
        (sum(r.sum() for r in results)).backward()
        t = s.clone()
        t.sub_(s, alpha=2)
        errors = []
        for op in ("sub_", "add_"):
            with pytest.raises(RuntimeError) as e:
                getattr(s.clone(), op)(m.ones(4, 2))
            errors.append(str(e.value))
        out[m] = [r.detach() for r in results], d.grad, t.to_dense(), errors
    for e, t in zip(out[ember][0] + [out[ember][1], out[ember][2]], out[torch][0] + [out[torch][1], out[torch][2]]):
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_allclose(e.numpy(), t.numpy())
    assert out[ember][3] == out[torch][3]
