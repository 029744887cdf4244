"""The gradient store (ember/autograd/grad_store.py): where ``.grad`` lives, in both modes, with PyTorch's
semantics for held, replaced and accumulated gradients. (Under DDP on real ranks: tests/ranks/rank_ddp.py.)"""

import pathlib

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember.autograd.grad_store import GradStore, flat_grads


def _models(seed=0):
    ember.manual_seed(seed)
    model = ember.nn.Sequential(ember.nn.Linear(4, 5), ember.nn.Tanh(), ember.nn.Linear(5, 2))
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    with torch.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    return model, tmodel


X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


def _backward(model, fw, scale=1.0):
    (model(fw.tensor(X)).square().sum() * scale).backward()


def test_no_reference_counts_anywhere_in_ember():
    root = pathlib.Path(ember.__file__).parent
    users = [str(f.relative_to(root)) for f in root.rglob("*.py") if "getrefcount" in f.read_text()]
    assert users == []


def test_the_optimizer_builds_a_store_in_group_order_and_backward_writes_into_it():
    model, _ = _models()
    params = list(model.parameters())
    ember.optim.SGD([{"params": params[2:]}, {"params": params[:2], "lr": 0.5}], lr=0.1)
    store = params[2]._grad_slot[0]
    assert [p._grad_slot for p in params[2:] + params[:2]] == [(store, i) for i in range(4)]
    assert store.flat is None  # nothing allocated before the first gradient
    _backward(model, ember)
    assert flat_grads(params[2:] + params[:2]) is store.flat
    assert flat_grads(params) is None  # not the store's order
    ember.optim.SGD(params, lr=0.1)  # a later optimizer keeps the store it finds
    assert params[0]._grad_slot[0] is store


@pytest.mark.parametrize("set_to_none", [True, False])
def test_held_grad_after_zero_grad_behaves_as_in_torch(set_to_none):
    """set_to_none: a held .grad keeps its values (the next backward writes a new generation of the store);
    zeros in place: the held .grad is .grad itself and sees the zeroing and the next gradient."""
    model, tmodel = _models()
    opt, topt = ember.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(tmodel.parameters(), lr=0.1)
    store = model[0].weight._grad_slot[0]
    _backward(model, ember)
    _backward(tmodel, torch)
    held, theld = model[0].weight.grad, tmodel[0].weight.grad
    taken = held.numpy()  # an array taken from the .grad: the same memory
    first_generation = store.flat
    for o in (opt, topt):
        o.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert store.flat is None  # every .grad cleared: the store let its buffer go (the holder keeps it)
    _backward(model, ember, 3.0)
    _backward(tmodel, torch, 3.0)
    assert_close(held, theld)
    assert_close(ember.tensor(taken), theld)
    assert (model[0].weight.grad is held) == (not set_to_none)
    assert (store.flat is first_generation) == (not set_to_none)
    assert flat_grads(list(model.parameters())) is store.flat  # end to end again either way
    assert_close(model[0].weight.grad, tmodel[0].weight.grad)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True:UserWarning")
@pytest.mark.parametrize("kind", ["create_graph", "requires_grad"])
@pytest.mark.parametrize("how", ["optimizer", "module"])
def test_zeroing_in_place_leaves_a_grad_without_history_or_requires_grad(how, kind):
    """zero_grad(set_to_none=False) of a .grad with history (a create_graph backward's) detaches it in place, and
    of one assigned requiring grad turns requires_grad off, as PyTorch: the same tensor, zeros, a leaf; the next
    backward accumulates into it as PyTorch's."""
    seen = {}
    for fw in (ember, torch):
        lin = fw.nn.Linear(2, 1)
        with fw.no_grad():
            lin.weight.copy_(fw.tensor([[0.5, -1.5]]))
            lin.bias.fill_(0.25)
        opt = fw.optim.SGD(lin.parameters(), lr=0.1)
        if kind == "create_graph":
            (lin(fw.ones(1, 2)) ** 2).sum().backward(create_graph=True)
        else:
            lin.weight.grad = fw.ones(1, 2, requires_grad=True)
        held = lin.weight.grad
        (opt if how == "optimizer" else lin).zero_grad(set_to_none=False)
        g = lin.weight.grad
        seen[fw] = (g is held, g.grad_fn is None, g.requires_grad, g.is_leaf, g.tolist())
        (lin(fw.tensor([[1.0, 2.0]])) ** 2).sum().backward()
        seen[fw] += (lin.weight.grad is held, lin.weight.grad.requires_grad, lin.weight.grad.tolist())
    assert seen[ember] == seen[torch]
    assert seen[torch][:5] == (True, True, False, True, [[0.0, 0.0]])


def test_a_parameter_given_data_of_another_shape_gets_its_gradients_outside_the_store():
    """``p.data = ...`` of another shape after the store was built: the parameter's slot no longer fits, so the
    backward that may build a gradient in the slot (Embedding's weight) makes its own array; two steps match
    PyTorch's."""
    w = np.arange(15, dtype=np.float32).reshape(5, 3) / 7
    res = {}
    for fw in (ember, torch):
        emb = fw.nn.Embedding(5, 3)
        opt = fw.optim.SGD(emb.parameters(), lr=0.1)  # (ember: the weight gets its gradient store's slot)
        emb.weight.data = fw.tensor(np.concatenate([w, w[:2]]))
        for _ in range(2):
            opt.zero_grad()
            emb(fw.tensor([0, 6, 6, 2])).pow(2).sum().backward()
            opt.step()
        res[fw] = (emb.weight.detach(), emb.weight.grad)
    assert tuple(res[ember][1].shape) == (7, 3)
    for e, t in zip(res[ember], res[torch]):
        assert_close(e, t)


def test_a_grad_held_by_a_user_splits_nothing_when_zero_grad_cleared_only_it():
    model, _ = _models()
    params = list(model.parameters())
    ember.optim.SGD(params, lr=0.1)
    store = params[0]._grad_slot[0]
    _backward(model, ember)
    held = params[1].grad
    before = held.numpy().copy()
    params[1].grad = None  # only this one: its slot was issued, so its next gradient starts a new generation
    _backward(model, ember, 2.0)
    assert np.array_equal(held.numpy(), before)
    assert np.shares_memory(params[1].grad._data, store.flat)
    assert flat_grads(params) is None  # the others still accumulate in the previous generation
    assert_close(params[1].grad, 2 * before, atol=1e-6)


def test_view_mode_grad_is_always_the_same_memory_as_with_gradient_as_bucket_view():
    model, tmodel = _models()
    params = list(model.parameters())
    store = GradStore(params, as_view=True)
    flat = store.flat
    _backward(model, ember)
    held = params[0].grad
    model.zero_grad()
    assert store.flat is flat and params[0].grad is None
    _backward(model, ember, 3.0)
    _backward(tmodel, torch, 3.0)
    assert np.shares_memory(held._data, params[0].grad._data)  # the held .grad sees the new values
    assert_close(held, tmodel[0].weight.grad)
    assert flat_grads(params) is flat


def test_a_replaced_grad_is_accumulated_into_in_place_and_the_store_comes_back_after_zero_grad():
    model, tmodel = _models()
    params = list(model.parameters())
    opt = ember.optim.SGD(params, lr=0.1)
    mine = ember.ones(5, 4)
    params[0].grad = mine
    tmodel[0].weight.grad = torch.ones(5, 4)
    _backward(model, ember)
    _backward(tmodel, torch)
    assert params[0].grad is mine  # backward adds into a .grad the user assigned, as PyTorch does
    assert_close(mine, tmodel[0].weight.grad)
    assert flat_grads(params) is None
    opt.step()
    opt.zero_grad()
    _backward(model, ember)
    assert flat_grads(params) is not None and not np.shares_memory(mine._data, flat_grads(params))


def test_accumulation_over_backward_calls_adds_in_place():
    model, tmodel = _models()
    ember.optim.Adam(model.parameters())
    _backward(model, ember)
    _backward(tmodel, torch)
    grads = [p.grad for p in model.parameters()]
    arrays = [g._data for g in grads]
    versions = [g._version for g in grads]
    _backward(model, ember, 0.5)
    _backward(tmodel, torch, 0.5)
    for p, q, g, a, v in zip(model.parameters(), tmodel.parameters(), grads, arrays, versions):
        assert p.grad is g and g._data is a and g._version > v
        assert_close(p.grad, q.grad, atol=1e-6)


def test_a_parameter_cast_to_another_dtype_leaves_the_store():
    model, _ = _models()
    ember.optim.SGD(model.parameters(), lr=0.1)
    model.double()  # the slots no longer fit: these gradients get their own arrays
    model(ember.tensor(X).double()).sum().backward()
    lin = model[2]
    assert lin.weight.grad.dtype == ember.float64
    store = lin.weight._grad_slot[0]
    assert store.flat is None or not np.shares_memory(lin.weight.grad._data, store.flat)


def test_autograd_grad_and_backward_inputs_leave_held_results_alone():
    model, _ = _models()
    params = list(model.parameters())
    ember.optim.SGD(params, lr=0.1)
    (g,) = ember.autograd.grad(model(ember.tensor(X)).sum(), [params[0]])
    before = g.numpy().copy()
    model(ember.tensor(X)).sum().backward(inputs=[params[0]])
    kept = params[0].grad
    kept_values = kept.numpy().copy()
    params[0].grad = None
    _backward(model, ember, 5.0)
    assert np.array_equal(g.numpy(), before) and np.array_equal(kept.numpy(), kept_values)


def test_zeros_for_an_unused_parameter_never_overwrite_a_held_grad():
    """DDP's unused parameter gets zeros in its slot (issue_zeros); when the slot is still the .grad a user holds
    from the last step (separate mode), the user's tensor keeps its values and nothing is issued."""
    model, _ = _models()
    ember.optim.SGD(model.parameters(), lr=0.1)
    w = model[0].weight
    store, i = w._grad_slot
    _backward(model, ember)
    held, before = w.grad, w.grad.numpy().copy()
    w.grad = None  # dropped by the user, still held
    assert store.issue_zeros(i) is None
    np.testing.assert_array_equal(held.numpy(), before)
    assert w.grad is None


@pytest.mark.parametrize("as_view", [False, True])
def test_zeros_for_an_unused_parameter_go_in_its_free_slot_and_are_retracted(as_view):
    """DDP's unused parameter (no ``.grad`` after a backward that did not reach it) gets zeros in its slot of the
    current generation (``issue_zeros``), in either mode: its ``.grad`` is the slot, reduced in place with the
    others; ``retract`` (no rank used it) leaves it None again, as PyTorch's, and the slot free for the next."""
    model, _ = _models()
    params = list(model.parameters())
    store = GradStore(params, as_view=as_view)
    for i, p in enumerate(params):
        p._grad_slot = (store, i)
    model[0](ember.tensor(X)).square().sum().backward()  # (the second Linear unused)
    unused = params[2]
    assert unused.grad is None and store.holds(0, params[0].grad)
    zeros = store.issue_zeros(2)
    assert zeros is unused.grad and store.holds(2, unused.grad)
    np.testing.assert_array_equal(unused.grad.numpy(), np.zeros((2, 5), np.float32))
    store.retract(2)
    assert unused.grad is None
    assert store.issue_zeros(2) is unused.grad and store.holds(2, unused.grad)


def test_view_mode_adopts_an_assigned_grad_keeping_its_values_and_zeros_for_none():
    """DDP with gradient_as_bucket_view takes each parameter's ``.grad`` into its slot before reducing a bucket
    in place (``adopt``): an assigned ``.grad`` keeps its values, now in the store; a missing one becomes
    zeros there."""
    model, _ = _models()
    params = list(model.parameters())
    store = GradStore(params, as_view=True)
    assigned = np.arange(params[0].numel(), dtype=np.float32).reshape(params[0].shape)
    params[0].grad = ember.tensor(assigned)
    assert not store.holds(0, params[0].grad) and params[1].grad is None
    store.adopt(0)
    store.adopt(1)
    for i in (0, 1):
        assert store.holds(i, params[i].grad)
    np.testing.assert_array_equal(params[0].grad.numpy(), assigned)
    np.testing.assert_array_equal(params[1].grad.numpy(), np.zeros(params[1].shape, np.float32))


def test_a_weight_used_twice_gets_one_lent_slot_and_the_sum_of_both_gradients():
    """Two embedding lookups of one weight (in a store) in one graph: the first backward builds its gradient in
    the weight's lent slot, so the second must build its own array, not overwrite the first's."""
    ember.manual_seed(0)
    emb = ember.nn.Embedding(6, 3)
    temb = torch.nn.Embedding(6, 3)
    with torch.no_grad():
        temb.weight.copy_(torch.tensor(emb.weight.detach().numpy()))
    ember.optim.SGD(emb.parameters(), lr=0.1)
    assert emb.weight._grad_slot is not None
    i, j = [[0, 1, 1]], [[2, 1, 5]]
    for fw, m in ((ember, emb), (torch, temb)):
        (m(fw.tensor(i)).square().sum() + 3 * m(fw.tensor(j)).sum()).backward()
    assert_close(emb.weight.grad, temb.weight.grad)


def test_zero_grad_keeping_a_sparse_gradient_zeroes_it_in_place_as_pytorch():
    """zero_grad(set_to_none=False) on an embedding's sparse gradient: still sparse, all zeros, and the next
    backward accumulates into it as PyTorch's."""
    out = {}
    for m in (torch, ember):
        m.manual_seed(0)
        emb = m.nn.Embedding(5, 3, sparse=True)
        with m.no_grad():
            emb.weight.copy_(m.arange(15.0).reshape(5, 3))
        opt = m.optim.SGD(emb.parameters(), lr=0.1)
        (emb(m.tensor([1, 3])) ** 2).sum().backward()
        opt.zero_grad(set_to_none=False)
        g = emb.weight.grad
        assert g.is_sparse and not g.to_dense().any()
        (emb(m.tensor([3, 4])) * 2).sum().backward()
        out[m] = emb.weight.grad.to_dense().numpy().copy()
    np.testing.assert_array_equal(out[ember], out[torch])


def test_a_store_needs_parameters_of_one_dtype():
    with pytest.raises(ValueError, match="needs at least one parameter"):
        GradStore([])
    with pytest.raises(ValueError, match="one dtype"):
        GradStore([ember.nn.Parameter(ember.ones(2)), ember.nn.Parameter(ember.ones(2, dtype=ember.float64))])


@pytest.mark.parametrize("pick", [(0, 1, 2, 3), (0, 1), (1, 0, 2, 3), (0, 3, 2, 1), (0, 1, 2, 4), (0, 5, 2, 3),
                                  (0, 1, 0, 3), (2, 3, 0, 1)])
def test_clip_grad_norm_of_parameters_that_are_not_one_stores_slots_in_order(pick):
    """clip_grad_norm_ works on a store's one flat array only when the parameters are exactly its slots in order;
    any other list (a store's slots in another order, a parameter from another store or from none, one twice,
    a store's first slots only) clips each gradient as PyTorch does."""
    model, tmodel = _models()
    extra, textra = ember.nn.Linear(4, 5), torch.nn.Linear(4, 5)  # an optimizer of its own, and a parameter of none
    with torch.no_grad():
        for p, q in zip(extra.parameters(), textra.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    ember.optim.SGD(model.parameters(), lr=0.1)  # the store of the model's 4 parameters, in order
    ember.optim.SGD([extra.weight], lr=0.1)
    for m, net, ex in ((ember, model, extra), (torch, tmodel, textra)):
        _backward(net, m)
        (ex(m.tensor(X)).sum() * 3).backward()
    params = [*model.parameters(), extra.weight, extra.bias]
    tparams = [*tmodel.parameters(), textra.weight, textra.bias]
    total = ember.nn.utils.clip_grad_norm_([params[i] for i in pick], 0.5)
    ttotal = torch.nn.utils.clip_grad_norm_([tparams[i] for i in pick], 0.5)
    assert_close(total, ttotal, atol=1e-5, rtol=1e-5)
    for p, q in zip(params, tparams):
        assert_close(p.grad, q.grad, atol=1e-6, rtol=1e-5)


# (not through a view's node: PyTorch's ViewBackward hands AccumulateGrad a new view of the caller's tensor, which it
# steals by its reference count, so that .grad shares the caller's memory; ember keeps no reference counts and copies)
@pytest.mark.parametrize("path", ["leaf", "clone", "sum"])
def test_a_first_grad_is_a_copy_of_the_gradient_the_caller_holds(path):
    """The first ``.grad`` of a leaf outside any store is its own array: PyTorch's AccumulateGrad clones a gradient
    someone else still references (the tensor handed to ``backward``, passed through unchanged by a clone's node), so changing that tensor afterwards leaves ``.grad`` as it was, and changing ``.grad`` leaves the tensor."""
    results = []
    for m in (torch, ember):
        x = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
        g = m.tensor([0.5, 0.25, 2.0], dtype=m.float64)
        y = {"leaf": x, "clone": x.clone(), "sum": x + 0}[path]
        y.backward(g)
        g.add_(10.0)
        first = x.grad.tolist()
        x.grad.mul_(2.0)
        results.append((first, x.grad.tolist(), g.tolist()))
    assert results[1] == results[0]
    assert results[0][0] == [0.5, 0.25, 2.0]


@pytest.mark.parametrize("layer", ["embedding", "linear"])
def test_a_weight_gradient_is_built_in_its_slot_without_a_second_weight_sized_array(layer):
    """Embedding's backward builds the weight's dense gradient, and Linear's weight-gradient GEMM writes it, in the
    store's slot they are lent (graph.py's leaf_slot_to_fill), which becomes ``.grad`` with no copy: a backward's
    peak memory is one weight-sized array (the store's, on the first backward), not a gradient array and then the
    slot it is copied into (Linear's failed before its GEMM wrote into the slot: 2.0 weights)."""
    import tracemalloc

    ember.manual_seed(0)
    if layer == "embedding":
        module = ember.nn.Embedding(50_000, 64)
        inputs = ember.tensor([[1, 5, 7], [5, 2, 49_999]])
    else:
        module = ember.nn.Linear(1024, 2048, bias=False)
        inputs = ember.randn(4, 1024)
    opt = ember.optim.SGD(module.parameters(), lr=0.1)
    weight_bytes = module.weight.numel() * module.weight.element_size()
    for _ in range(2):  # the first backward allocates the store, the second refills the slot zero_grad freed
        loss = module(inputs).square().sum()
        tracemalloc.start()
        try:
            loss.backward()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1.5 * weight_bytes, peak / weight_bytes
        assert flat_grads([module.weight]) is module.weight._grad_slot[0].flat
        opt.step()
        opt.zero_grad()


@pytest.mark.parametrize("hook", ["tensor_hook", "accumulator_prehook"])
def test_a_gradient_a_hook_keeps_is_not_the_memory_a_later_backward_adds_into(hook):
    """A hook that keeps the gradient it is given (a tensor hook of Embedding's weight, or a pre-hook of the weight's
    accumulator node) keeps it as it was: a second backward adding into ``.grad`` leaves it alone, as PyTorch's
    (its AccumulateGrad copies a gradient something else still holds). So the store's slot is not lent to a
    backward whose gradient such a hook sees (graph.py's leaf_slot_to_fill)."""
    results = []
    for m in (ember, torch):
        m.manual_seed(0)
        emb = m.nn.Embedding(10, 3)
        m.optim.SGD(emb.parameters(), lr=0.1)  # (ember: the weight gets a gradient store, its slot lendable)
        idx = m.tensor([1, 5, 5, 9])
        kept = []
        if hook == "tensor_hook":
            emb.weight.register_hook(kept.append)
        out = emb(idx)
        if hook == "accumulator_prehook":
            out.grad_fn.next_functions[0][0].register_prehook(lambda grads, kept=kept: kept.append(grads[0]))
        (out * 2).sum().backward()
        first = kept[0].clone()
        emb(idx).sum().backward()
        results.append((kept[0], first, emb.weight.grad))
    (kept, first, grad), (tkept, tfirst, tgrad) = results
    assert_close(first, tfirst)
    assert_close(kept, first)
    assert_close(kept, tkept)
    assert_close(grad, tgrad)
