"""The DataLoader warns as PyTorch's: more workers than the CPUs the process may run on (as it is made and as it
makes each iterator, once for persistent workers), pin_memory without an accelerator (each iterator, once for
persistent workers), each naming torch.utils.data.dataloader as PyTorch's do. The CPUs are what
``os.sched_getaffinity`` (else ``os.cpu_count``) says; the tests set them to one, so two workers are too many."""

import os
import warnings

import pytest
import torch
from test_warnings_module import ModuleSpy

import ember


def warned(lib, persistent: bool, pin: bool, workers: int, epochs: int = 2):
    """[(category, text, module)] of making a DataLoader and iterating it ``epochs`` times."""
    spy = ModuleSpy()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        warnings.filters.insert(0, ("always", None, Warning, spy, 0))
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(4.0)), batch_size=2,
                                           num_workers=workers, persistent_workers=persistent, pin_memory=pin)
        batches = [[b[0].tolist() for b in loader] for _ in range(epochs)]
    assert batches == [[[0.0, 1.0], [2.0, 3.0]]] * epochs
    return [(w.category, str(w.message), m) for w, m in zip(record, spy.modules)]


@pytest.fixture
def one_cpu(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)


CASES = {
    "two workers": (False, False, 2),
    "two persistent workers, pin_memory": (True, True, 2),
    "two workers, pin_memory": (False, True, 2),
    "one persistent worker, pin_memory": (True, True, 1),
    "one worker": (False, False, 1),
    "no worker, pin_memory": (False, True, 0),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_worker_number_and_pin_memory_warnings_as_torch(one_cpu, case):
    expected = warned(torch, *case)
    assert warned(ember, *case) == expected
    if case[2] == 2:
        assert expected[0][1].startswith("This DataLoader will create 2 worker processes in total. Our suggested "
                                         "max number of worker in current system is 1, which is smaller")


@pytest.mark.parametrize("cpus", [None, 1])
def test_worker_number_warning_without_sched_getaffinity(monkeypatch, cpus):
    """Where the CPU set cannot be read, the count is os.cpu_count()'s (PyTorch says ``cpuset`` is not taken into
    account), or none at all."""
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    texts = {}
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(4.0)), num_workers=2)
        texts[lib] = [str(w.message) for w in record]
    assert texts[ember] == texts[torch] and len(texts[torch]) == 1
    assert ("not able to compute" if cpus is None else "(`cpuset` is not taken into account)") in texts[torch][0]


def shown_by_default(lib) -> list[str]:
    """The first words of each warning Python's default filter shows (once per place it is issued from) for a
    program that makes loaders and iterates them at several of its own lines."""
    data = lib.utils.data.TensorDataset(lib.arange(4.0))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")  # (a change of the filters: what was shown before shows again)
        pinned = lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True)
        next(iter(pinned))
        list(pinned)
        for _ in pinned:
            pass
        list(lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True))
        list(lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True, num_workers=1))
        list(lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True, num_workers=1))
        lib.utils.data.DataLoader(data, num_workers=2)
        lib.utils.data.DataLoader(data, num_workers=3)
        lib.utils.data.DataLoader(data, num_workers=2)
    return [" ".join(str(w.message).split()[:5]) for w in record]


def test_loader_warnings_shown_once_per_process_as_torch(one_cpu):
    """PyTorch's DataLoader warns from its own frames, so the default filter shows each warning once per process (the
    single-process and the workers' iterators warn from two places: pin_memory's twice), whichever of the program's
    lines made or iterated the loader: issued from the program's lines, they showed at each of them (a script that
    reads ``next(iter(loader))`` before its loop printed the pin_memory warning twice)."""
    expected = shown_by_default(torch)
    assert shown_by_default(ember) == expected
    assert sorted(expected) == ["'pin_memory' argument is set as", "'pin_memory' argument is set as",
                                "This DataLoader will create 2", "This DataLoader will create 3"]
