"""DataLoader and collation, against torch.utils.data on the same datasets.

Shuffled orders cannot match PyTorch's (different generators): for those the
tests check reproducibility, that each epoch is a permutation, and that the
TensorDataset fast path gives exactly the general path's batches.
"""

from collections import OrderedDict, namedtuple

import numpy as np
import pytest
import torch
import torch.utils.data as tdata
from oracle import assert_close, assert_same_error

import ember
import ember.utils.data as edata

Point = namedtuple("Point", "x y")


def assert_same(e, t, where="batch"):
    """ember batch == torch batch: same structure, container types, tensor values and dtypes."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{where}: {type(e)} is not a Tensor"
        assert_close(e, t, atol=0, rtol=0, msg=where)
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t), f"{where}: {e!r} vs {t!r}"
        for k in t:
            assert_same(e[k], t[k], f"{where}[{k!r}]")
    elif isinstance(t, (list, tuple)):
        # namedtuples are defined once, so compare by name and fields
        assert type(e).__name__ == type(t).__name__ and len(e) == len(t), f"{where}: {e!r} vs {t!r}"
        for i, (a, b) in enumerate(zip(e, t)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert e == t and type(e) is type(t), f"{where}: {e!r} vs {t!r}"


def run_both(make_dataset, **kwargs):
    """Batches of ember's and torch's DataLoader over the same dataset (a function of the framework)."""
    e = list(edata.DataLoader(make_dataset(ember), **kwargs))
    t = list(tdata.DataLoader(make_dataset(torch), **kwargs))
    return e, t


class Samples:
    """A map-style dataset (usable by both frameworks) returning ``fn(i)``."""

    def __init__(self, n, fn):
        self.n, self.fn = n, fn

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.fn(i)


def tensors(m, n=10):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    return m.utils.data.TensorDataset(m.tensor(x), m.arange(n), m.tensor(x[:, 0] > 0))


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (4, True), (10, False),
                                                  (16, False), (16, True)])
def test_tensor_dataset_batches_match_torch(batch_size, drop_last):
    e, t = run_both(tensors, batch_size=batch_size, drop_last=drop_last)
    assert len(e) == len(t)
    assert_same(e, t)
    assert len(edata.DataLoader(tensors(ember), batch_size=batch_size, drop_last=drop_last)) == len(t)


def sample_kinds(m, i):
    return {
        "tensor": m.full((2,), float(i)),
        "int": i,
        "float": i / 2,
        "bool": i % 2 == 0,
        "np": np.arange(3, dtype=np.int32) + i,
        "np_scalar": np.float32(i) / 3,
        "np_f64_scalar": np.float64(i),
        "str": f"s{i}",
        "tuple": (i, float(i)),
        "tuple_str": (i, f"name{i}"),  # strings inside a sample's sequence collate to a tuple in PyTorch
        "list_str": [f"a{i}", b"b"],
        "list": [m.tensor([i]), i],
        "point": Point(i, m.tensor(float(i))),
        "ordered": OrderedDict(a=i),
    }


@pytest.mark.parametrize("batch_size", [1, 3, 4])
def test_collation_of_every_kind_matches_torch(batch_size):
    e, t = run_both(lambda m: Samples(7, lambda i: sample_kinds(m, i)), batch_size=batch_size)
    assert_same(e, t)


def test_a_sample_of_tensor_and_name_batches_names_as_a_tuple_like_torch():
    """The common (image, filename) sample: PyTorch batches the names as a tuple (they come from zip)."""
    e, t = run_both(lambda m: Samples(5, lambda i: (m.full((2,), float(i)), f"img{i}.png")), batch_size=2)
    assert isinstance(t[0][1], tuple)
    assert_same(e, t)


def test_batch_size_none_converts_samples_like_torch():
    e, t = run_both(lambda m: Samples(4, lambda i: sample_kinds(m, i)), batch_size=None)
    assert_same(e, t)
    e, t = run_both(tensors, batch_size=None)
    assert len(e) == len(t) == 10
    assert_same(e, t)


@pytest.mark.parametrize("batch", [
    [np.array(["a", "b"]), np.array(["c", "d"])],
    [object(), object()],
    [None, None],
])
def test_collate_rejects_what_torch_rejects(batch):
    assert_same_error(lambda m: (edata if m is ember else tdata).default_collate(batch))


def test_collate_errors_on_ragged_batches():
    with pytest.raises(RuntimeError, match="equal size"):
        tdata.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="equal size"):
        edata.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError):
        tdata.default_collate([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(RuntimeError, match="stack"):
        edata.default_collate([ember.zeros(2), ember.zeros(3)])


def test_default_convert_matches_torch():
    for sample in ([np.arange(3), (np.float32(1.5), "s")], {"a": np.ones((2, 2))}, Point(np.int64(1), 2), "s", 3):
        assert_same(edata.default_convert(sample), tdata.default_convert(sample))


class Shuffled(edata.TensorDataset):
    """A TensorDataset that the DataLoader's fast path must not recognise (overridden __getitem__)."""

    def __getitem__(self, index):
        return super().__getitem__(index)


@pytest.mark.parametrize("kwargs", [
    dict(batch_size=4, shuffle=True),
    dict(batch_size=4, shuffle=True, drop_last=True),
    dict(batch_size=3),
    dict(batch_size=3, drop_last=True),
    dict(batch_size=5, sampler="replacement"),
    dict(batch_size=2, sampler="subset"),
])
def test_fast_path_equals_general_path(kwargs):
    x, y = ember.randn(11, 2, 3), ember.arange(11)

    def batches(ds):
        kw = dict(kwargs)
        if kw.get("sampler") == "replacement":
            kw["sampler"] = edata.RandomSampler(ds, replacement=True, num_samples=23)
        elif kw.get("sampler") == "subset":
            kw["sampler"] = edata.SubsetRandomSampler([1, 5, 7, 10, 3])
        ember.manual_seed(3)
        loader = edata.DataLoader(ds, **kw)
        assert loader._can_index_tensors() is (type(ds) is edata.TensorDataset)
        return [b for _ in range(2) for b in loader]

    fast, general = batches(edata.TensorDataset(x, y)), batches(Shuffled(x, y))
    assert len(fast) == len(general) > 0
    for f, g in zip(fast, general):
        assert isinstance(f, list) and len(f) == 2
        for a, b in zip(f, g):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_fast_path_batches_do_not_alias_the_dataset():
    x = ember.zeros(6, 2)
    for xb, in edata.DataLoader(edata.TensorDataset(x), batch_size=3):
        xb.add_(1.0)
    assert float(x.abs().sum()) == 0.0


def test_fast_path_is_skipped_for_tensors_requiring_grad():
    w = ember.randn(4, 2, requires_grad=True)
    loader = edata.DataLoader(edata.TensorDataset(w), batch_size=2)
    assert not loader._can_index_tensors()
    (b,) = next(iter(loader))
    b.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [1, 1], [0, 0], [0, 0]])


def epoch_orders(loader, epochs=3):
    return [[int(i) for _, yb in loader for i in yb] for _ in range(epochs)]


def test_shuffle_is_a_fresh_permutation_each_epoch_and_reproducible():
    ds = edata.TensorDataset(ember.zeros(50, 1), ember.arange(50))
    ember.manual_seed(7)
    first = epoch_orders(edata.DataLoader(ds, batch_size=8, shuffle=True))
    ember.manual_seed(7)
    again = epoch_orders(edata.DataLoader(ds, batch_size=8, shuffle=True))
    assert first == again
    for order in first:
        assert sorted(order) == list(range(50))
    assert first[0] != first[1] != first[2] and first[0] != list(range(50))
    ember.manual_seed(8)
    assert epoch_orders(edata.DataLoader(ds, batch_size=8, shuffle=True)) != first


def test_shuffle_with_an_explicit_generator():
    ds = edata.TensorDataset(ember.zeros(30, 1), ember.arange(30))
    orders = [epoch_orders(edata.DataLoader(ds, batch_size=7, shuffle=True,
                                            generator=ember.Generator().manual_seed(5))) for _ in range(2)]
    assert orders[0] == orders[1]
    # the global generator is neither used nor needed
    ember.manual_seed(0)
    before = ember.randn(3)
    ember.manual_seed(0)
    epoch_orders(edata.DataLoader(ds, batch_size=7, shuffle=True, generator=ember.Generator().manual_seed(5)))
    np.testing.assert_array_equal(ember.randn(3).numpy(), before.numpy())


class Stream:
    """An iterable dataset of n samples, for either framework."""

    @staticmethod
    def make(m, n, with_len=True):
        base = m.utils.data.IterableDataset

        class S(base):
            def __iter__(self):
                return iter([(m.tensor([float(i)]), i) for i in range(n)])

        if with_len:
            S.__len__ = lambda self: n
        return S()


@pytest.mark.parametrize("batch_size,drop_last", [(None, False), (1, False), (3, False), (3, True), (5, True)])
def test_iterable_dataset_matches_torch(batch_size, drop_last):
    e, t = run_both(lambda m: Stream.make(m, 10), batch_size=batch_size, drop_last=drop_last)
    assert_same(e, t)
    assert len(edata.DataLoader(Stream.make(ember, 10), batch_size=batch_size, drop_last=drop_last)) == \
        len(tdata.DataLoader(Stream.make(torch, 10), batch_size=batch_size, drop_last=drop_last))


def test_len_of_stream_without_len_is_a_type_error():
    with pytest.raises(TypeError):
        len(tdata.DataLoader(Stream.make(torch, 3, with_len=False)))
    with pytest.raises(TypeError):
        len(edata.DataLoader(Stream.make(ember, 3, with_len=False)))


@pytest.mark.parametrize("kwargs", [
    dict(shuffle=True, sampler="seq"),
    dict(batch_sampler="batch", batch_size=2),
    dict(batch_sampler="batch", shuffle=True),
    dict(batch_sampler="batch", sampler="seq"),
    dict(batch_sampler="batch", drop_last=True),
    dict(batch_size=None, drop_last=True),
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(persistent_workers=True),
])
def test_invalid_option_combinations_raise_like_torch(kwargs):
    def make(m):
        ds = tensors(m)
        kw = dict(kwargs)
        if kw.get("sampler") == "seq":
            kw["sampler"] = m.utils.data.SequentialSampler(ds)
        if kw.get("batch_sampler") == "batch":
            kw["batch_sampler"] = m.utils.data.BatchSampler(m.utils.data.SequentialSampler(ds), 2, False)
        return m.utils.data.DataLoader(ds, **kw)

    with pytest.raises(ValueError) as et:
        make(torch)
    with pytest.raises(ValueError) as ee:
        make(ember)
    assert str(ee.value).split()[:3] == str(et.value).split()[:3]


@pytest.mark.parametrize("option", ["shuffle", "sampler", "batch_sampler"])
def test_iterable_dataset_refuses_sampling_options(option):
    for m in (torch, ember):
        value = True if option == "shuffle" else [[0]] if option == "batch_sampler" else [0]
        with pytest.raises(ValueError, match=f"expected unspecified {option} option"):
            m.utils.data.DataLoader(Stream.make(m, 3), **{option: value})


def test_attributes_are_frozen_after_init_like_torch():
    for m in (torch, ember):
        loader = m.utils.data.DataLoader(tensors(m), batch_size=2)
        with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
            loader.batch_size = 3
        loader.num_workers = 0  # not frozen


def test_batch_sampler_and_custom_collate():
    bs = [[0, 1, 2], [5], [9, 3]]
    e, t = run_both(tensors, batch_sampler=bs)
    assert_same(e, t)
    e, t = run_both(tensors, batch_size=4, collate_fn=lambda samples: len(samples))
    assert e == t == [4, 4, 2]
    loader = edata.DataLoader(tensors(ember), batch_sampler=bs)
    assert len(loader) == 3 and loader.batch_size is None and loader.drop_last is False


def test_dataset_getitems_is_used_for_whole_batches():
    class Batched(edata.Dataset):
        calls = []

        def __len__(self):
            return 5

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [ember.tensor(float(i)) for i in indices]

    out = [b.tolist() for b in edata.DataLoader(Batched(), batch_size=2)]
    assert out == [[0.0, 1.0], [2.0, 3.0], [4.0]] and Batched.calls == [[0, 1], [2, 3], [4]]


def test_workers_and_pin_memory_are_accepted_and_change_nothing():
    kw = dict(batch_size=3, shuffle=True)
    ember.manual_seed(1)
    plain = [b[1].tolist() for b in edata.DataLoader(tensors(ember), **kw)]
    ember.manual_seed(1)
    loader = edata.DataLoader(tensors(ember), num_workers=2, pin_memory=True, prefetch_factor=2,
                              persistent_workers=True, worker_init_fn=lambda i: None, timeout=5, **kw)
    with pytest.warns(UserWarning, match="no accelerator is found"):  # as PyTorch's on a machine without one
        assert [b[1].tolist() for b in loader] == plain
    assert edata.get_worker_info() is None


def test_samples_as_tuples_become_lists_as_in_torch():
    e, t = run_both(lambda m: Samples(4, lambda i: (i, m.tensor(float(i)))), batch_size=2)
    assert isinstance(t[0], list) and isinstance(e[0], list)
    assert_same(e, t)


class _Batched(tdata.Dataset):
    """A dataset with its own batched fetch, written once for either library's base class."""

    def __init__(self, n, short=False):
        self.n, self.short = n, short

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * 10

    def __getitems__(self, indices):
        return [-i for i in indices][:len(indices) - 1 if self.short else None]


def _plain(x):
    """Tensors as nested lists (and containers rebuilt), so that ember's and torch's samples compare with ==."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return ("tensor", x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


@pytest.mark.parametrize("as_dict", [False, True])
def test_stack_dataset_matches_torch(as_dict):
    """StackDataset(a, b) gives (a[i], b[i]); with keywords, {name: part[i]}; a DataLoader batches each part, and a
    part's own __getitems__ serves the batched fetch."""
    def build(lib):
        x = lib.arange(12.0).reshape(6, 2)
        parts = [lib.utils.data.TensorDataset(x), list("abcdef"), _Batched(6)]
        data = lib.utils.data
        return data.StackDataset(**dict(zip("xyz", parts))) if as_dict else data.StackDataset(*parts)
    e, t = build(ember), build(torch)
    assert len(e) == len(t) == 6
    assert _plain(e[2]) == _plain(t[2])
    assert _plain(e.__getitems__([4, 1])) == _plain(t.__getitems__([4, 1]))
    eb = list(ember.utils.data.DataLoader(e, batch_size=4))
    tb = list(torch.utils.data.DataLoader(t, batch_size=4))
    assert _plain(eb) == _plain(tb) and len(eb) == 2


def test_stack_dataset_errors_match_torch():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="Size mismatch between datasets"):
            lib.utils.data.StackDataset([1, 2], [1])
        with pytest.raises(ValueError, match="At least one dataset should be passed"):
            lib.utils.data.StackDataset()
        with pytest.raises(ValueError, match="but both types are given"):
            lib.utils.data.StackDataset([1], b=[2])
        with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
            lib.utils.data.StackDataset(_Batched(3, short=True)).__getitems__([0, 1])
