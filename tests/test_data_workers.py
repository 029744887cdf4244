"""DataLoader workers over an IterableDataset, against PyTorch's real worker processes: each worker iterates its
own copy of the stream (sharded by ``get_worker_info()``, or read whole once per worker), collates its own
batches, and the loader yields them in turn; ember runs the workers in its own process with the same result."""

import math
import warnings

import pytest
import torch.utils.data as tdata

import ember.utils.data as edata


def stream(data, n, shard=True, lengths=None, epochs_seen=False):
    """An IterableDataset of ``n`` items; with ``shard`` each worker yields items ``id, id + num_workers, ...``;
    ``lengths``: per-worker item counts instead (uneven shards); ``epochs_seen``: items tagged with how many
    epochs this copy has started (state kept by persistent workers)."""

    class Stream(data.IterableDataset):
        def __init__(self):
            self.epochs = 0

        def __iter__(self):
            self.epochs += 1
            info = data.get_worker_info()
            wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
            if lengths is not None:
                items = [100 * wid + i for i in range(lengths[wid])]
            else:
                items = range(wid, n, nw) if shard else range(n)
            for i in items:
                yield [i, wid, self.epochs] if epochs_seen else [i, wid]

    return Stream()


class Ranged:
    """The PyTorch documentation's idiom: worker_init_fn splits [start, end) among the workers."""

    @staticmethod
    def make(data):
        class RangeStream(data.IterableDataset):
            def __init__(self, start, end):
                self.start, self.end = start, end

            def __iter__(self):
                return iter(range(self.start, self.end))

        return RangeStream(3, 20)

    @staticmethod
    def init(data):
        def worker_init_fn(worker_id):
            info = data.get_worker_info()
            ds = info.dataset
            per = int(math.ceil((ds.end - ds.start) / float(info.num_workers)))
            ds.start = ds.start + worker_id * per
            ds.end = min(ds.start + per, ds.end)
        return worker_init_fn


def as_lists(batches):
    return [b.tolist() if hasattr(b, "tolist") else [x.tolist() if hasattr(x, "tolist") else x for x in b]
            for b in batches]


CASES = {
    "sharded uneven": (lambda d: stream(d, 23), dict(batch_size=4, num_workers=2)),
    "unsharded read once per worker": (lambda d: stream(d, 7, shard=False), dict(batch_size=5, num_workers=3)),
    "drop_last": (lambda d: stream(d, 23), dict(batch_size=4, num_workers=2, drop_last=True)),
    "no batching": (lambda d: stream(d, 7), dict(batch_size=None, num_workers=2)),
    "very uneven shards, prefetch 1": (lambda d: stream(d, 0, lengths=[2, 9, 5]),
                                       dict(batch_size=2, num_workers=3, prefetch_factor=1)),
    "very uneven shards, prefetch 3": (lambda d: stream(d, 0, lengths=[2, 9, 5]),
                                       dict(batch_size=2, num_workers=3, prefetch_factor=3)),
    "a worker with nothing": (lambda d: stream(d, 0, lengths=[0, 5]), dict(batch_size=2, num_workers=2)),
}


@pytest.mark.parametrize("name", CASES)
def test_worker_batches_and_order_as_pytorchs(name):
    make, kw = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's advice on a 2-core machine against 3 workers (ember's too)
        want = as_lists(tdata.DataLoader(make(tdata), **kw))
        got = as_lists(edata.DataLoader(make(edata), **kw))
    assert got == want


def test_worker_init_fn_shards_the_dataset_copy():
    want = as_lists(tdata.DataLoader(Ranged.make(tdata), num_workers=2, worker_init_fn=Ranged.init(tdata)))
    dataset = Ranged.make(edata)
    got = as_lists(edata.DataLoader(dataset, num_workers=2, worker_init_fn=Ranged.init(edata)))
    assert got == want and (dataset.start, dataset.end) == (3, 20)  # the workers changed their copies only


@pytest.mark.parametrize("persistent", [False, True])
def test_persistent_workers_keep_their_dataset_copies(persistent):
    results = []
    for data in (tdata, edata):
        loader = data.DataLoader(stream(data, 6, epochs_seen=True), batch_size=3, num_workers=2,
                                 persistent_workers=persistent)
        results.append([as_lists(loader) for _ in range(2)])
    assert results[1] == results[0]


def test_worker_info_inside_worker_code_only():
    seen = []

    def collate(batch):
        info = edata.get_worker_info()
        seen.append((info.id, info.num_workers, type(info.dataset).__name__))
        return batch

    loader = edata.DataLoader(stream(edata, 4), batch_size=2, num_workers=2, collate_fn=collate)
    for _ in loader:
        assert edata.get_worker_info() is None
    assert seen == [(0, 2, "Stream"), (1, 2, "Stream")]
    info = None

    def init(worker_id):
        nonlocal info
        info = edata.get_worker_info()

    list(edata.DataLoader(stream(edata, 4), num_workers=2, worker_init_fn=init))
    assert (info.id, info.num_workers, info.seed - info.id) == (1, 2, info.seed - 1)


def test_workers_random_states_are_their_own():
    # a worker seeding NumPy or ember's generator leaves the calling process's random numbers as they were
    import numpy as np

    import ember

    def init(worker_id):
        np.random.seed(worker_id)
        ember.manual_seed(worker_id)

    np.random.seed(5)
    ember.manual_seed(5)
    list(edata.DataLoader(stream(edata, 4), batch_size=2, num_workers=2, worker_init_fn=init))
    after = (np.random.random(), ember.rand(1).item())
    np.random.seed(5)
    ember.manual_seed(5)
    ember.empty((), dtype=ember.int64).random_()  # the base seed the loader drew
    assert (np.random.random(), ember.rand(1).item()) == after


def random_stream(data, lib, n):
    """A sharded stream whose items are what a worker's random states give: its initial seed, Python's, NumPy's
    and the framework's (``lib``: torch or ember) next numbers."""
    import random

    import numpy as np

    class RandomStream(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            for _ in range(info.id, n, info.num_workers):
                yield [info.id, lib.initial_seed(), random.random(), float(np.random.random()),
                       lib.rand(1).item(), lib.randint(0, 1000, (1,)).item()]

    return RandomStream()


def numpy_from_initial_seed(lib):
    """The worker_init_fn idiom of PyTorch's documentation and many programs: NumPy seeded from the worker's seed."""
    import numpy as np

    def init(worker_id):
        np.random.seed(lib.initial_seed() % 2**32)
    return init


@pytest.mark.parametrize("init", [None, numpy_from_initial_seed], ids=["no init", "numpy seeded from initial_seed"])
def test_workers_random_states_are_pytorchs(init):
    # each worker's Python, NumPy and framework random states are seeded as PyTorch's workers' are (the base seed
    # drawn from the global generator), so a stream's random numbers are PyTorch's, with or without worker_init_fn
    import torch

    import ember

    def run(lib, data):
        lib.manual_seed(7)
        kw = dict(batch_size=2, num_workers=2, worker_init_fn=None if init is None else init(lib))
        epochs = [as_lists(data.DataLoader(random_stream(data, lib, 6), **kw)) for _ in range(2)]
        return epochs, lib.rand(2).tolist()  # the global generator after: two base seeds drawn

    assert run(ember, edata) == run(torch, tdata)


def random_items(data, lib):
    """A map-style dataset of 7 items whose __getitem__ draws as a random augmentation would, from the worker's
    Python, NumPy and framework states, and reports the worker it ran in."""
    import random

    import numpy as np

    class RandomItems(data.Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            info = data.get_worker_info()
            return [i, -1 if info is None else info.id, lib.initial_seed(), random.random(),
                    float(np.random.random()), lib.rand(1).item(), lib.randint(0, 1000, (1,)).item()]

    return RandomItems()


MAP_CASES = {
    "shuffled batches": dict(batch_size=2, shuffle=True, num_workers=2),
    "three workers, drop_last": dict(batch_size=2, num_workers=3, drop_last=True),
    "no batching": dict(batch_size=None, num_workers=2),
    "persistent workers": dict(batch_size=3, shuffle=True, num_workers=2, persistent_workers=True),
    "numpy seeded from initial_seed": dict(batch_size=2, num_workers=2, worker_init_fn=numpy_from_initial_seed),
}


@pytest.mark.parametrize("name", MAP_CASES)
def test_map_style_workers_draw_pytorchs_numbers(name):
    # PyTorch fetches (and collates) batch k in worker k % num_workers, with that worker's random states: a
    # dataset's random augmentations draw the worker's numbers, not the calling process's
    import torch

    import ember

    def run(lib, data):
        kw = dict(MAP_CASES[name])
        if "worker_init_fn" in kw:
            kw["worker_init_fn"] = kw["worker_init_fn"](lib)
        lib.manual_seed(11)
        loader = data.DataLoader(random_items(data, lib), **kw)
        epochs = [as_lists(loader) for _ in range(2)]
        return epochs, lib.rand(2).tolist()  # the global generator after: base seeds and sampler seeds only

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's advice on a 2-core machine against 3 workers (ember's too)
        want = run(torch, tdata)
        got = run(ember, edata)
    assert got == want


@pytest.mark.parametrize("num_workers", [0, 1, 2])
@pytest.mark.parametrize("tensors", [False, True], ids=["list", "TensorDataset"])
def test_shuffled_loaders_draw_their_order_when_pytorchs_do(num_workers, tensors):
    # PyTorch's worker iterator hands out its first indices as it is made, so a shuffled loader with workers
    # draws its order at iter(loader); without workers at the first next(). Draws between the two (a second
    # loader zipped with the first, dropout in the loop) then meet the same generator state as PyTorch's.
    import torch

    import ember

    def run(lib, data):
        lib.manual_seed(0)

        def loader(start):
            items = lib.arange(start, start + 10) if tensors else list(range(start, start + 10))
            ds = data.TensorDataset(items) if tensors else items
            return data.DataLoader(ds, batch_size=4, shuffle=True, num_workers=num_workers)

        def batch(b):
            return (b[0] if tensors else b).tolist()

        pairs = [(batch(x), batch(y)) for x, y in zip(loader(0), loader(10))]
        it = iter(loader(20))
        between = lib.rand(1).item()  # drawn after iter(), before the first next()
        return pairs, between, [batch(b) for b in it]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's advice against more workers than CPUs
        want = run(torch, tdata)
        got = run(ember, edata)
    assert got == want


@pytest.mark.parametrize("num_workers", [0, 1, 2])
@pytest.mark.parametrize("tensors", [False, True], ids=["list", "TensorDataset"])
@pytest.mark.parametrize("how", ["global", "generator", "replacement"])
def test_samplers_drawing_as_they_go_draw_between_pytorchs_next_calls(num_workers, tensors, how):
    # PyTorch reads the sampler batch by batch: without workers at each next(), with workers the first
    # prefetch_factor * num_workers batches at iter(loader) and one more as each batch is returned. A sampler that
    # draws as it goes (a custom one on the global generator, RandomSampler with replacement or several passes on
    # a generator the loop also draws from) meets the loop's draws in that order (ember's TensorDataset path read
    # the whole epoch at once, its worker path the later batches one next() late).
    import torch

    import ember

    def run(lib, data):
        lib.manual_seed(0)
        g = lib.Generator().manual_seed(5)

        class Drawing(data.Sampler):
            def __len__(self):
                return 30

            def __iter__(self):
                for _ in range(30):
                    yield int(lib.randint(0, 10, ()))

        ds = data.TensorDataset(lib.arange(10)) if tensors else list(range(10))
        if how == "global":
            sampler = Drawing()
        else:
            sampler = data.RandomSampler(ds, replacement=how == "replacement", num_samples=40, generator=g)
        out = []
        for b in data.DataLoader(ds, batch_size=3, sampler=sampler, num_workers=num_workers):
            out.append((b[0] if tensors else b).tolist())
            out.append(lib.rand(1, generator=None if how == "global" else g).item())  # the loop's own draw
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's advice against more workers than CPUs
        want = run(torch, tdata)
        got = run(ember, edata)
    assert got == want
