"""A tensor made over a read-only NumPy array (an environment's frozen observation, ``np.broadcast_to``,
``np.frombuffer``) gives PyTorch's once-per-process UserWarning that writing to it is undefined: ``from_numpy``,
``as_tensor`` (with or without a dtype), ``asarray`` and the legacy ``Tensor(array)``/``FloatTensor(array)`` warn;
``tensor(array)``, which copies, does not (as PyTorch 2.13, case by case in fresh processes)."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember


def read_only(dtype=np.float32):
    a = np.arange(3, dtype=dtype)
    a.setflags(write=False)
    return a


CASES = {
    "from_numpy": (lambda m: m.from_numpy(read_only()), True),
    "as_tensor": (lambda m: m.as_tensor(read_only()), True),
    "as_tensor_dtype": (lambda m: m.as_tensor(read_only(), dtype=m.float64), True),
    "asarray": (lambda m: m.asarray(read_only()), True),
    "Tensor": (lambda m: m.Tensor(read_only()), True),
    "FloatTensor": (lambda m: m.FloatTensor(read_only(np.float64)), True),
    "broadcast_to": (lambda m: m.from_numpy(np.broadcast_to(np.zeros(2, np.float32), (2, 2))), True),
    "frombuffer": (lambda m: m.from_numpy(np.frombuffer(b"\0" * 8, dtype=np.float32)), True),
    "empty": (lambda m: m.from_numpy(read_only()[:0]), True),
    "tensor_copies": (lambda m: m.tensor(read_only()), False),
    "writable": (lambda m: m.from_numpy(np.zeros(3)), False),
}


def torch_message() -> str:
    """PyTorch's own text, from a fresh process (its warning is once per process, so not from this one)."""
    code = ("import warnings, numpy as np, torch\n"
            "a = np.zeros(2); a.setflags(write=False)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always'); torch.from_numpy(a)\n"
            "print(str(w[0].message).split(' (Triggered internally')[0])")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def ember_warnings(make) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make(ember)
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("name", sorted(CASES))
def test_read_only_array_warns_where_pytorch_does(name, monkeypatch):
    monkeypatch.setattr(ember._warnings, "_warned_once", set())  # as in a fresh process
    make, warns = CASES[name]
    got = ember_warnings(make)
    assert [c for c, _ in got] == ([UserWarning] if warns else [])
    if warns:
        assert got[0][1].startswith("The given NumPy array is not writable")


def test_message_is_pytorchs_and_given_once(monkeypatch):
    monkeypatch.setattr(ember._warnings, "_warned_once", set())
    first = ember_warnings(CASES["from_numpy"][0])
    assert [m for _, m in first] == [torch_message()]
    assert ember_warnings(CASES["as_tensor"][0]) == []  # (once per process, as PyTorch's)


def test_tensor_over_read_only_view_still_writes_through(monkeypatch):
    monkeypatch.setattr(ember._warnings, "_warned_once", set())
    base = np.arange(4, dtype=np.float32)
    view = base[:2]
    view.setflags(write=False)
    with pytest.warns(UserWarning, match="not writable"):
        t = ember.from_numpy(view)
    t.mul_(2)  # (as PyTorch: the memory is the array's; writing through is what the warning is about)
    assert base.tolist() == [0.0, 2.0, 2.0, 3.0]
