"""DistributedDataParallel ↔ Reducer: keyword-only construction with named defaults, settings through
methods, a gradient store built at construction, and PyTorch's DDP arguments each either acted on,
listed as ignored, or listed as unsupported. (Behaviour on real ranks: tests/ranks/rank_ddp.py.)"""

import inspect
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import ember
from ember.distributed.reducer import Reducer
from ember.nn.parallel import distributed as ember_ddp


def three_linears():
    """The model most tests here reduce (seeded: two of them are the same numbers)."""
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(300, 300), ember.nn.Linear(300, 300), ember.nn.Linear(300, 4))


def reducer(**kwargs):
    model = three_linears()
    named = list(model.named_parameters())
    comm = SimpleNamespace(size=4, rank=0)  # construction reads only these
    return Reducer([p for _, p in named], [n for n, _ in named], comm, **kwargs), model


def test_construction_is_keyword_only_with_named_defaults():
    r, model = reducer()
    params = list(model.parameters())
    with pytest.raises(TypeError):
        Reducer(params, ["a"] * len(params), SimpleNamespace(size=2, rank=0), 25.0)
    defaults = {k: v.default for k, v in inspect.signature(Reducer).parameters.items()
                if v.kind is inspect.Parameter.KEYWORD_ONLY}
    assert defaults == {"bucket_cap_mb": 25.0, "find_unused_parameters": False, "gradient_as_bucket_view": False,
                        "grad_reduction": "mean", "nonfinite_grads": "skip", "static_graph": False}
    assert r.scale == 0.25 and r.nonfinite_policy == "skip"


def test_divisor_and_policy_are_set_through_methods():
    r, _ = reducer()
    r.set_divisor(3)
    assert r.scale == pytest.approx(1 / 3)
    r.reset_divisor()
    assert r.scale == 0.25
    summed, _ = reducer(grad_reduction="sum")
    summed.set_divisor(3)
    assert summed.scale == 1.0  # a sum is never divided
    r.set_nonfinite_policy("off")
    assert r.nonfinite_policy == "off"
    with pytest.raises(ValueError, match="nonfinite_grads must be"):
        r.set_nonfinite_policy("ignore")
    with pytest.raises(ValueError, match="grad_reduction must be"):
        reducer(grad_reduction="max")


def test_each_bucket_is_a_slice_of_the_gradient_store_built_at_construction():
    r, model = reducer(bucket_cap_mb=0.5)
    params = list(model.parameters())
    assert len(r.buckets) >= 2 and len(r.grad_stores) == 1
    store = r.grad_stores[0]
    assert [p._grad_slot for p in params] == [(store, i) for i in range(len(params))]  # registration order
    # buckets: contiguous slices from the end (PyTorch's reverse order), covering every slot once
    assert [(b.lo, b.hi) for b in r.buckets] == sorted(((b.lo, b.hi) for b in r.buckets), reverse=True)
    assert r.buckets[0].hi == len(params) and r.buckets[-1].lo == 0
    assert all(a.lo == b.hi for a, b in zip(r.buckets, r.buckets[1:]))
    model(ember.randn(2, 300)).sum().backward()  # the first backward writes into the store
    for bucket in r.buckets:
        region = store.region(bucket.lo, bucket.hi)
        assert region is not None and np.shares_memory(region, store.flat)
        assert all(np.shares_memory(p.grad._data, region) for p in bucket.params)


def test_each_bucket_names_its_own_parameters():
    """The names DDP's errors give for a bucket's slot (a parameter with no gradient, a sparse gradient) are
    the names of exactly that bucket's parameters, in slot order, in buckets cut at the cap and not."""
    r, model = reducer(bucket_cap_mb=0.5)
    name_of = {id(p): n for n, p in model.named_parameters()}
    assert len(r.buckets) >= 2
    for bucket in r.buckets:
        assert bucket.names == [name_of[id(p)] for p in bucket.params]


def test_every_pytorch_ddp_argument_is_acted_on_ignored_or_unsupported():
    theirs = set(inspect.signature(torch.nn.parallel.DistributedDataParallel.__init__).parameters) - {"self"}
    ours = inspect.signature(ember_ddp.DistributedDataParallel.__init__).parameters
    assert theirs <= set(ours), f"PyTorch arguments ember does not accept: {theirs - set(ours)}"
    ignored, unsupported = set(ember_ddp.IGNORED_ARGUMENTS), set(ember_ddp.UNSUPPORTED_ARGUMENTS)
    assert ignored <= theirs and unsupported <= theirs and not ignored & unsupported
    acted_on = {"module", "broadcast_buffers", "init_sync", "process_group", "bucket_cap_mb", "find_unused_parameters",
                "gradient_as_bucket_view", "forward_sync_buffers", "static_graph"}
    assert theirs == ignored | unsupported | acted_on
    assert all(reason for reason in ember_ddp.IGNORED_ARGUMENTS.values())


def test_a_sparse_gradient_is_refused_naming_the_parameter():
    # PyTorch's DDP all-gathers sparse gradients; ember's says it does not rather than all-reduce them wrongly
    model = ember.nn.Sequential(ember.nn.Embedding(10, 3, sparse=True))
    named = list(model.named_parameters())
    r = Reducer([p for _, p in named], [n for n, _ in named], SimpleNamespace(size=2, rank=0))
    r.prepare_for_backward()
    with pytest.raises(RuntimeError, match=r"parameter 0\.weight got a sparse gradient.*use sparse=False"):
        model(ember.tensor([1, 2])).sum().backward()


@pytest.mark.parametrize("seed", range(6))
def test_buckets_fill_to_their_cap_from_the_last_parameter(seed):
    """Cut from the last parameter backwards, each bucket takes parameters while they fit its cap (the first
    bucket's own, smaller cap; then ``cap_bytes``), a parameter larger than the cap alone; a dtype change (a new
    store) ends a bucket. Sizes that exactly fill a cap are drawn often. No bucket is empty (a parameter larger than
    the cap at the start of a bucket opens none before its own), as none of PyTorch's is."""
    from ember.autograd.grad_store import build_stores
    from ember.distributed.reducer import assign_buckets

    rng = np.random.default_rng(seed)
    dtypes = [np.float32] * 7 + [np.float64] * 5 + [np.float32] * 4
    params = [ember.zeros(int(rng.choice([1, 2, 4, 8, 16, 24])), dtype=ember.float32 if d == np.float32 else
                          ember.float64, requires_grad=True) for d in dtypes]
    names = [f"p{i}" for i in range(len(params))]
    stores = build_stores(params)
    cap, first_cap = 64, 32
    buckets = assign_buckets(stores, names, cap, first_cap)
    slots = [(s, i) for s in reversed(stores) for i in reversed(range(len(s)))]  # the order buckets are cut in
    nbytes = {(s, i): (s.offsets[i + 1] - s.offsets[i]) * s.dtype.itemsize for s, i in slots}
    at = 0
    for k, b in enumerate(buckets):
        taken = [(b.store, i) for i in reversed(range(b.lo, b.hi))]
        assert taken, (k, b.lo, b.hi)
        assert taken == slots[at:at + len(taken)] and b.names == names_of(stores, names, b)
        at += len(taken)
        limit = first_cap if k == 0 else cap
        size = sum(nbytes[s] for s in taken)
        assert size <= limit or len(taken) == 1, (k, size, limit)
        if at < len(slots) and slots[at][0] is b.store:  # cut inside a store: the next parameter did not fit
            assert size + nbytes[slots[at]] > limit, (k, size, nbytes[slots[at]], limit)
    assert at == len(slots)


def names_of(stores, names, bucket):
    start = sum(len(s) for s in stores[:next(i for i, s in enumerate(stores) if s is bucket.store)])
    return names[start + bucket.lo:start + bucket.hi]


class OneRank:
    """A communicator of one rank (an all-reduce is the identity) that records, for each all-reduce it is asked
    to start, which parameters' gradients had landed by then."""

    size, rank = 1, 0

    def __init__(self, landed: list):
        self.landed, self.started = landed, []

    def iallreduce_(self, array, op):
        self.started.append(list(self.landed))
        return SimpleNamespace(is_completed=lambda: True, wait=lambda: None)


@pytest.mark.parametrize("cap_mb", [0.5, 0.2])
def test_each_bucket_is_launched_once_it_and_those_before_it_are_complete(cap_mb):
    """A bucket's all-reduce starts in the hook of the gradient that completes it and the buckets before it (they
    start in order on every rank): the overlap with the rest of backward that buckets exist for, not with some
    later gradient's hook or at the end of backward. The lockstep table's all-reduce comes last."""
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(300, 300), ember.nn.Linear(300, 300), ember.nn.Linear(300, 4))
    named = list(model.named_parameters())
    landed: list[str] = []
    for n, p in named:  # registered before the reducer's hooks, so they run first
        p.register_post_accumulate_grad_hook(lambda p, n=n: landed.append(n))
    comm = OneRank(landed)
    r = Reducer([p for _, p in named], [n for n, _ in named], comm, bucket_cap_mb=cap_mb)
    assert len(r.buckets) >= 2 and any(len(b.params) >= 2 for b in r.buckets)
    r.prepare_for_backward()
    model(ember.randn(2, 300)).sum().backward()
    assert len(comm.started) == len(r.buckets) + 1 and comm.started[-1] == landed  # the table after every bucket
    needed: set[str] = set()
    for bucket, seen in zip(r.buckets, comm.started):
        needed |= set(bucket.names)
        assert len(seen) == 1 + max(landed.index(n) for n in needed), (bucket.names, seen)


@pytest.mark.parametrize("unused", [1, 9, 10, 11, 25])
def test_the_parameters_without_gradient_are_named_ten_at_most(unused):
    """A backward that leaves parameters without a gradient (find_unused_parameters=False) is refused naming the
    first ten of them (here one bucket's, in slot order), with " ..." only when there are more."""
    params = [ember.zeros(3, requires_grad=True) for _ in range(unused + 1)]
    names = [f"p{i}" for i in range(len(params))]
    r = Reducer(params, names, OneRank([]))
    r.prepare_for_backward()
    with pytest.raises(RuntimeError) as raised:
        (params[0] * 2).sum().backward()
    listed = ", ".join(names[1:11]) + (" ..." if unused > 10 else "")
    assert f"{unused} parameter(s) received no gradient in this backward on rank 0: {listed}. Every" \
        in str(raised.value), str(raised.value)


@pytest.mark.parametrize("as_view", [False, True])
def test_assigned_grads_in_every_bucket_are_reduced_through_their_copies(as_view):
    """A ``.grad`` assigned by hand is not in its store slot: backward adds into it and its bucket is reduced
    through a staging copy (or, with gradient_as_bucket_view, the slot adopts it), each parameter's piece of
    that copy at its own offset in the bucket, in every bucket (not only the one that starts at slot 0)."""
    x = ember.randn(2, 300)
    ref = three_linears()
    ref(x).sum().backward()
    m = three_linears()
    named = list(m.named_parameters())
    r = Reducer([p for _, p in named], [n for n, _ in named], OneRank([]), bucket_cap_mb=0.2,
                gradient_as_bucket_view=as_view)
    assert len(r.buckets) >= 3 and any(b.lo > 0 and len(b.params) >= 2 for b in r.buckets)
    for k, (_, p) in enumerate(named):
        p.grad = ember.full(p.shape, float(k + 1))
    r.prepare_for_backward()
    m(x).sum().backward()
    assert [b.in_place for b in r.buckets] == [as_view] * len(r.buckets)  # (staged, or adopted and in place)
    for k, ((n, p), q) in enumerate(zip(named, ref.parameters())):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy() + (k + 1), rtol=1e-6, err_msg=n)


@pytest.mark.parametrize("as_view", [False, True])
def test_ddp_built_after_the_optimizer_reduces_in_the_optimizers_store(as_view):
    """An optimizer built first gives the parameters a store in their order; DDP built on the same parameters
    keeps it (separate mode): the gradients an earlier backward left there, held across
    zero_grad(set_to_none=False), are the buckets' own memory and are reduced in place, with no staging copy
    and no second gradient-sized buffer. With gradient_as_bucket_view DDP needs a store of its own (view mode),
    and adopts the held gradients into it. Either way the values are the backward's."""
    x = ember.randn(2, 300)
    ref = three_linears()
    ref(x).sum().backward()
    m = three_linears()
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    named = list(m.named_parameters())
    optimizers_store = named[0][1]._grad_slot[0]
    m(x).sum().backward()
    opt.zero_grad(set_to_none=False)
    held = [p.grad for _, p in named]
    r = Reducer([p for _, p in named], [n for n, _ in named], OneRank([]), bucket_cap_mb=0.2,
                gradient_as_bucket_view=as_view)
    assert len(r.buckets) >= 3 and len(r.grad_stores) == 1
    assert (r.grad_stores[0] is optimizers_store) is not as_view
    r.prepare_for_backward()
    m(x).sum().backward()
    assert all(b.in_place for b in r.buckets)
    for (n, p), q, h in zip(named, ref.parameters(), held):
        assert (p.grad is h) is not as_view, n
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, err_msg=n)


class Skips(ember.nn.Module):
    """Three layers; ``skip`` names one the forward leaves out (its parameters get no gradient)."""

    def __init__(self):
        super().__init__()
        ember.manual_seed(0)
        self.a, self.b, self.c = ember.nn.Linear(300, 300), ember.nn.Linear(300, 300), ember.nn.Linear(300, 4)
        self.skip = ""

    def forward(self, x):
        for name in "abc":
            if name != self.skip:
                x = getattr(self, name)(x)
        return x


@pytest.mark.parametrize("as_view", [False, True])
@pytest.mark.parametrize("cap_mb", [0.2, 25.0])
def test_find_unused_leaves_the_grad_of_what_no_rank_used_backward_after_backward(as_view, cap_mb):
    """find_unused_parameters, PyTorch's rule: a parameter no rank used in a synchronised backward keeps its .grad
    as it was (None after zero_grad()), in whichever bucket it lies (one starting past slot 0 included), and what
    a backward used counts for that backward only; the used parameters get the reduced gradients (on one rank the
    plain backward's)."""
    x = ember.randn(2, 300)
    m, ref = Skips(), Skips()
    named = list(m.named_parameters())
    r = Reducer([p for _, p in named], [n for n, _ in named], OneRank([]), bucket_cap_mb=cap_mb,
                find_unused_parameters=True, gradient_as_bucket_view=as_view)
    if cap_mb < 1:
        slot = {id(p): i for i, (_, p) in enumerate(named)}
        assert any(b.lo > 0 and slot[id(m.b.weight)] in range(b.lo, b.hi) for b in r.buckets)
    for skip, zero in (("", False), ("b", True), ("b", False), ("", False), ("a", True), ("c", True), ("", False)):
        if zero:
            m.zero_grad()
            ref.zero_grad()
        m.skip = ref.skip = skip
        r.prepare_for_backward()
        m(x).sum().backward()
        ref(x).sum().backward()
        _assert_grads_as_plain_model(named, ref, skip)


def test_the_first_bucket_is_pytorchs_small_one():
    """PyTorch's DDP cuts its first bucket (the last parameters, whose gradients land first) at 1 MiB
    (``dist._DEFAULT_FIRST_BUCKET_BYTES``), the others at ``bucket_cap_mb``: so does the reducer by default. Three
    parameters of 600,000 bytes: the first bucket takes one of them (two would pass 1 MiB), the second the other two."""
    from ember.distributed.reducer import FIRST_BUCKET_BYTES

    assert FIRST_BUCKET_BYTES == torch.distributed._DEFAULT_FIRST_BUCKET_BYTES == 1 << 20
    params = [ember.zeros(150_000, requires_grad=True) for _ in range(3)]  # 600,000 bytes each
    r = Reducer(params, ["a", "b", "c"], SimpleNamespace(size=2, rank=0))
    assert r.bucket_sizes() == [600_000, 1_200_000]
    assert [b.names for b in r.buckets] == [["c"], ["a", "b"]]


@pytest.mark.parametrize("cap_mb", [0.2, 25.0])
def test_a_grad_set_to_none_by_hand_and_unused_stays_none_and_its_old_tensor_unchanged(cap_mb):
    """find_unused_parameters: a parameter whose ``.grad`` the user set to None (not by zero_grad) and that no rank
    uses in the next backward keeps None, as in PyTorch; and the tensor that was its ``.grad``, which the user
    still holds, never changes afterwards (PyTorch gives the next gradient a new tensor), not even when a later
    backward uses the parameter again. The gradients of the others as a plain model's, backward after backward."""
    x = ember.randn(2, 300)
    m, ref = Skips(), Skips()
    named = list(m.named_parameters())
    r = Reducer([p for _, p in named], [n for n, _ in named], OneRank([]), bucket_cap_mb=cap_mb,
                find_unused_parameters=True)
    r.prepare_for_backward()  # (a backward without it would count as using every parameter until the next)
    for model in (m, ref):
        model(x).sum().backward()
    held = m.b.weight.grad
    kept = held.numpy().copy()
    m.b.weight.grad = ref.b.weight.grad = None
    for skip in ("b", "", "b", ""):
        m.skip = ref.skip = skip
        r.prepare_for_backward()
        m(x).sum().backward()
        ref(x).sum().backward()
        _assert_grads_as_plain_model(named, ref, skip)
        np.testing.assert_array_equal(held.numpy(), kept)


@pytest.mark.parametrize("as_view", [False, True])
@pytest.mark.parametrize("cap_mb", [0.2, 25.0])
def test_an_assigned_grad_of_a_parameter_no_rank_uses_is_left_as_assigned(as_view, cap_mb):
    """find_unused_parameters: PyTorch leaves the ``.grad`` of a parameter no rank used untouched, also one the user
    assigned by hand (which is not in its store slot: its bucket is reduced through a copy, or the slot adopts it
    in view mode); the used parameters' gradients accumulate into what they had, as a plain model's."""
    x = ember.randn(2, 300)
    m, ref = Skips(), Skips()
    named = list(m.named_parameters())
    r = Reducer([p for _, p in named], [n for n, _ in named], OneRank([]), bucket_cap_mb=cap_mb,
                find_unused_parameters=True, gradient_as_bucket_view=as_view)
    for skip in ("b", "", "b"):
        for model in (m, ref):
            for k, p in enumerate(model.b.parameters()):
                p.grad = ember.full(p.shape, float(k + 2))
        m.skip = ref.skip = skip
        r.prepare_for_backward()
        m(x).sum().backward()
        ref(x).sum().backward()
        for (n, p), q in zip(named, ref.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, err_msg=f"{skip} {n}")


def _assert_grads_as_plain_model(named, ref, skip):
    """Each parameter's gradient as the plain model ``ref``'s: None where it has none, else equal."""
    for (n, p), q in zip(named, ref.parameters()):
        if q.grad is None:
            assert p.grad is None, (skip, n)
        else:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, err_msg=f"{skip} {n}")


@pytest.mark.parametrize("used_later", [3, 4])
def test_a_changed_static_graph_names_at_most_five_of_this_ranks_changes(used_later):
    """static_graph: a backward whose parameters with gradients differ from the first iteration's is PyTorch's
    error; ember's message adds what changed on this rank, the first five, then " ..." when there are more."""
    layers = ember.nn.ModuleList([ember.nn.Linear(2, 2) for _ in range(4)])
    named = list(layers.named_parameters())
    r = Reducer([p for _, p in named], [n for n, _ in named], OneRank([]), static_graph=True)
    for used in (1, used_later):
        r.prepare_for_backward()
        y = ember.ones(1, 2)
        for layer in layers[:used]:
            y = layer(y)
        if used == 1:
            y.sum().backward()
    with pytest.raises(RuntimeError, match="Your training graph has changed in this iteration") as err:
        y.sum().backward()
    changes = 2 * (used_later - 1)  # a weight and a bias per layer the first iteration did not use
    listed = str(err.value).split("; on this rank: ")[1].split(". Every rank")[0]
    assert listed.count("got a gradient, which it did not in the first iteration") == min(changes, 5)
    assert listed.endswith(" ...") == (changes > 5)
