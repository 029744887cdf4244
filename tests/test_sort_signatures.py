"""sort, argsort and msort take PyTorch's overloads and no other: ``(dim=-1, descending=False)`` by position or
keyword, or ``(*, stable, dim=-1, descending=False)`` (given ``stable``, ``dim`` and ``descending`` are keyword-only);
``dim`` an int, ``descending``/``stable`` bools (sort's ``stable`` may be None). Tabled against torch: the results
of the calls PyTorch accepts, its TypeError (and the gist of its message) for those it refuses."""

import numpy as np
import pytest
import torch

import ember

CALLS = {
    "sort(x)": lambda lib, x: lib.sort(x),
    "sort(x, 1)": lambda lib, x: lib.sort(x, 1),
    "sort(x, 1, True)": lambda lib, x: lib.sort(x, 1, True),
    "sort(x, 1, descending=True)": lambda lib, x: lib.sort(x, 1, descending=True),
    "sort(x, dim=0, descending=True)": lambda lib, x: lib.sort(x, dim=0, descending=True),
    "sort(x, stable=True)": lambda lib, x: lib.sort(x, stable=True),
    "sort(x, stable=None)": lambda lib, x: lib.sort(x, stable=None),
    "sort(x, stable=True, dim=0, descending=True)": lambda lib, x: lib.sort(x, stable=True, dim=0, descending=True),
    "sort(x, np.int64(0))": lambda lib, x: lib.sort(x, np.int64(0)),
    "sort(x, tensor(0))": lambda lib, x: lib.sort(x, lib.tensor(0)),
    "sort(input=x, dim=0)": lambda lib, x: lib.sort(input=x, dim=0),
    "sort(x, 0, False, out=)": lambda lib, x: lib.sort(x, 0, False, out=(lib.empty(0), lib.empty(0, dtype=lib.long))),
    "sort(x, stable=True, out=)": lambda lib, x: lib.sort(x, stable=True,
                                                         out=(lib.empty(0), lib.empty(0, dtype=lib.long))),
    "x.sort(1)": lambda lib, x: x.sort(1),
    "x.sort(1, True)": lambda lib, x: x.sort(1, True),
    "x.sort(stable=True, dim=0)": lambda lib, x: x.sort(stable=True, dim=0),
    "argsort(x)": lambda lib, x: lib.argsort(x),
    "argsort(x, 1, True)": lambda lib, x: lib.argsort(x, 1, True),
    "argsort(x, stable=True, dim=0)": lambda lib, x: lib.argsort(x, stable=True, dim=0),
    "argsort(x, dim=1, descending=True, stable=False)":
        lambda lib, x: lib.argsort(x, dim=1, descending=True, stable=False),
    "x.argsort(0, True)": lambda lib, x: x.argsort(0, True),
    "x.argsort(stable=True)": lambda lib, x: x.argsort(stable=True),
    "msort(x)": lambda lib, x: lib.msort(x),
    "msort(input=x)": lambda lib, x: lib.msort(input=x),
    "x.msort()": lambda lib, x: x.msort(),
}
# PyTorch refuses each: (call, the start of its message, or None for its combination error's words)
REFUSED = {
    "sort(x, True)": lambda lib, x: lib.sort(x, True),
    "sort(x, True, 1)": lambda lib, x: lib.sort(x, True, 1),
    "sort(x, 1, True, True)": lambda lib, x: lib.sort(x, 1, True, True),
    "sort(x, 1, stable=True)": lambda lib, x: lib.sort(x, 1, stable=True),
    "sort(x, 1, True, stable=True)": lambda lib, x: lib.sort(x, 1, True, stable=True),
    "sort(x, stable=1)": lambda lib, x: lib.sort(x, stable=1),
    "sort(x, stable=np.bool_(True))": lambda lib, x: lib.sort(x, stable=np.bool_(True)),
    "sort(x, dim=None)": lambda lib, x: lib.sort(x, dim=None),
    "sort(x, dim=1.0)": lambda lib, x: lib.sort(x, dim=1.0),
    "sort(x, tensor(1.0))": lambda lib, x: lib.sort(x, lib.tensor(1.0)),
    "sort(x, descending=1)": lambda lib, x: lib.sort(x, descending=1),
    "sort(x, descending=None)": lambda lib, x: lib.sort(x, descending=None),
    "sort(x, 1, 'a')": lambda lib, x: lib.sort(x, 1, "a"),
    "sort(x, 1, np.bool_(True))": lambda lib, x: lib.sort(x, 1, np.bool_(True)),
    "sort(x, 1, True, descending=True)": lambda lib, x: lib.sort(x, 1, True, descending=True),
    "sort(x, stable=False, dim=True)": lambda lib, x: lib.sort(x, stable=False, dim=True),
    "x.sort(True)": lambda lib, x: x.sort(True),
    "x.sort(1, stable=True)": lambda lib, x: x.sort(1, stable=True),
    "x.sort(1, True, True)": lambda lib, x: x.sort(1, True, True),
    "x.sort(descending=1)": lambda lib, x: x.sort(descending=1),
    "argsort(x, True)": lambda lib, x: lib.argsort(x, True),
    "argsort(x, 1, stable=True)": lambda lib, x: lib.argsort(x, 1, stable=True),
    "argsort(x, 1, True, True)": lambda lib, x: lib.argsort(x, 1, True, True),
    "argsort(x, stable=None)": lambda lib, x: lib.argsort(x, stable=None),
    "x.argsort(stable=None)": lambda lib, x: x.argsort(stable=None),
    "x.argsort(1, 1)": lambda lib, x: x.argsort(1, 1),
    "x.argsort(0, True, stable=True)": lambda lib, x: x.argsort(0, True, stable=True),
    "x.argsort(1, True, True)": lambda lib, x: x.argsort(1, True, True),
    "msort(x, 0)": lambda lib, x: lib.msort(x, 0),
    "msort(x, stable=True)": lambda lib, x: lib.msort(x, stable=True),
    "x.msort(0)": lambda lib, x: x.msort(0),
}
# calls whose message differs in its words (PyTorch's parser tells these apart by its third, named-dimension
# overload, or a method's class name), where only the TypeError is compared
WORDS_DIFFER = {"sort(x, 1, True, stable=True)", "x.argsort(0, True, stable=True)", "msort(x, 0)", "x.msort(0)",
                "msort(x, stable=True)"}


def _x(lib, requires_grad=True):
    return lib.tensor([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 4.0, 5.0]], requires_grad=requires_grad)


def _lists(r):
    if isinstance(r, tuple):
        return [_lists(v) for v in r]
    return r.tolist()


@pytest.mark.parametrize("call", list(CALLS))
def test_accepted_as_pytorch(call):
    grad = "out=" not in call  # (out= refuses an input that requires grad)
    got, want = CALLS[call](ember, _x(ember, grad)), CALLS[call](torch, _x(torch, grad))
    assert _lists(got) == _lists(want)
    if isinstance(want, tuple) and want[0].grad_fn is not None:
        assert type(got[0].grad_fn).__name__ == type(want[0].grad_fn).__name__


def _message(lib, call):
    with pytest.raises(TypeError) as info:
        REFUSED[call](lib, _x(lib))
    return str(info.value)


@pytest.mark.parametrize("call", list(REFUSED))
def test_refused_as_pytorch(call):
    got, want = _message(ember, call), _message(torch, call)
    if call in WORDS_DIFFER:
        return
    # the first line (what was given, PyTorch's words) and the overloads it lists; not its "didn't match" notes
    want_lines = [line for line in want.splitlines() if "didn't match" not in line]
    assert got.splitlines() == want_lines
