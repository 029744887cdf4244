"""Every public attribute of a DataLoader is PyTorch's, for map-style and iterable datasets, with and without
batch_size / shuffle / sampler / batch_sampler / drop_last: over an IterableDataset PyTorch's loader has an
``_InfiniteConstantSampler`` (no len()) and, when batching, a BatchSampler over it (ember's had None for both, so
``loader.batch_sampler.batch_size`` was an AttributeError)."""

import itertools

import pytest
import torch

import ember


def _dataset(lib, kind):
    data = lib.utils.data
    if kind == "map":
        return data.TensorDataset(lib.arange(10.0))

    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    class Sized(Stream):
        def __len__(self):
            return 7

    return Stream() if kind == "stream" else Sized()


def _describe(value):
    """A sampler or value as comparable data: its class name, batch_size/drop_last, its sampler, its len()."""
    if value is None or isinstance(value, (int, float, str, bool)):
        return value
    out = [type(value).__name__]
    out += [(a, getattr(value, a)) for a in ("batch_size", "drop_last") if hasattr(value, a)]
    if hasattr(value, "sampler"):
        out.append(("sampler", _describe(value.sampler)))
    try:
        out.append(("len", len(value)))
    except TypeError as e:
        out.append(("no len", str(e).replace(type(value).__module__, "")))
    return tuple(out)


def _attributes(lib, kind, options):
    data = lib.utils.data
    options = dict(options)
    if options.get("sampler") == "seq":
        options["sampler"] = data.SequentialSampler(range(10))
    if options.get("batch_sampler") == "batches":
        options["batch_sampler"] = data.BatchSampler(data.SequentialSampler(range(10)), 4, False)
    loader = data.DataLoader(_dataset(lib, kind), **options)
    out = {}
    for name in dir(loader):
        if name.startswith("_") or name in ("dataset", "generator", "check_worker_number_rationality"):
            continue
        value = getattr(loader, name)
        out[name] = value.__name__ if name == "collate_fn" else _describe(value)
    try:
        out["len()"] = len(loader)
    except TypeError as e:
        out["len()"] = type(e).__name__
    out["first"] = repr(next(iter(loader))).replace("tensor", "T")
    return out


OPTIONS = [{}, {"batch_size": None}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"shuffle": False},
           {"batch_size": None, "shuffle": False}, {"sampler": "seq"}, {"batch_sampler": "batches"},
           {"shuffle": True, "batch_size": 4}]


@pytest.mark.parametrize("kind", ["map", "stream", "sized stream"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_public_attributes_are_pytorchs(kind, options):
    if kind != "map" and {"sampler", "batch_sampler"} & set(options) or kind != "map" and options.get("shuffle"):
        pytest.skip("refused for an IterableDataset (tests/test_errors_match.py)")
    torch.manual_seed(0)
    ember.manual_seed(0)
    assert _attributes(ember, kind, options) == _attributes(torch, kind, options)


@pytest.mark.parametrize("lib", [torch, ember])
def test_an_iterable_datasets_sampler_yields_none_forever_and_has_no_len(lib):
    loader = lib.utils.data.DataLoader(_dataset(lib, "stream"), batch_size=2)
    assert type(loader.sampler).__name__ == "_InfiniteConstantSampler"
    assert list(itertools.islice(loader.sampler, 3)) == [None, None, None]
    with pytest.raises(TypeError, match="has no len"):
        len(loader.sampler)
    assert loader.batch_sampler.batch_size == 2 and loader.batch_sampler.sampler is loader.sampler
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6]]
