"""Basic indexing's nodes as PyTorch's: ``type(x[:2].grad_fn).__name__`` is SliceBackward0 (x[0]: Select, x[None]:
Unsqueeze, x[...]: Alias), not one class for all; bool indexes (True, False, a 0-d bool tensor; one or several)
among basic parts are PyTorch's steps (each bool's new dimension unsqueezed in the view, then one IndexBackward0
of them), values and gradients unchanged; and a saved view changed in place before backward is named in the error
as PyTorch's regenerated grad_fn, ``output 0 of AsStrided``."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, str(Path(__file__).parent))
from oracle import assert_same_grads, node_names, outcomes  # noqa: E402

E = Ellipsis
BASIC = [0, -1, slice(None, 2), slice(None), (slice(None), slice(1, 3)), (0, slice(None)), (slice(None), 0), None,
         (E, None), E, (slice(None), slice(None)), (0, E), (slice(1, 2), slice(None), E), (None, slice(None))]


@pytest.mark.parametrize("idx", BASIC, ids=repr)
def test_basic_index_node_class_is_pytorchs(idx):
    got = [(type((y := m.ones(3, 4, requires_grad=True)[idx]).grad_fn).__name__, y.grad_fn.name())
           for m in (torch, ember)]
    assert got[1] == got[0]


BOOLS = [True, False, "t0d", "f0d", (True, 0), (0, True), (E, True), (slice(1, 3), True), (True, slice(None), None),
         (None, False, 1), (True, True), (False, True, 0), (True, E, True), (None, True, 1, False), (True, 0, False)]


def _bool(m, part):
    return m.tensor(True) if part == "t0d" else m.tensor(False) if part == "f0d" else part


@pytest.mark.parametrize("idx", BOOLS, ids=repr)
def test_bool_index_chain_values_and_gradients_as_pytorchs(idx):
    out = {}
    for m in (torch, ember):
        x = m.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        y = x[_bool(m, idx)]
        (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        out[m] = node_names(y.grad_fn, 4), tuple(y.shape), y.tolist(), x
    assert out[ember][:3] == out[torch][:3]
    assert_same_grads([out[ember][3]], [out[torch][3]])


def test_bool_index_of_a_0d_tensor_as_pytorchs():
    names = [node_names(m.tensor(2.0, requires_grad=True)[_bool(m, idx)].grad_fn, 3)
             for idx in (True, "t0d") for m in (torch, ember)]
    assert names[1] == names[0] and names[3] == names[2]


def _changed(kind):
    def run(m):
        x = m.ones(3, 2, requires_grad=True)
        a = x * 1
        v = {"select": lambda: a[0], "slice": lambda: a[:, 1], "t": lambda: a.t()}[kind]() if kind != "leaf" else x[0]
        z = v.sin()
        if kind == "leaf":
            with m.no_grad():
                x.mul_(2)
        else:
            a.mul_(2)
        z.sum().backward()

    return run


@pytest.mark.parametrize("kind", ["select", "slice", "t", "leaf"])
def test_a_saved_view_changed_in_place_is_named_as_pytorchs(kind):
    (got, _), (want, _) = outcomes(_changed(kind))
    assert isinstance(want, RuntimeError) and "output 0 of AsStrided," in str(want)
    assert (type(got), str(got)) == (type(want), str(want))


SETS = [slice(-3, None), (slice(-3, None), E), (E, slice(-2, None)), (slice(0, 9), slice(-2, None)), (True, 0),
        (slice(1, None), True, slice(None, 1)), (False, None, 0), (True, True), (None, False, slice(None)),
        (0, True, 0), slice(0, 9), (slice(None), slice(None)), E]


@pytest.mark.parametrize("idx", SETS, ids=repr)
def test_setitem_through_basic_and_bool_parts_as_pytorchs(idx):
    """``b[idx] = v`` of a non-leaf: a slice that takes a step as written (``[-3:]`` of 3 rows) copies into its
    view (CopySlices), not the whole tensor (CopyBackwards); bools with basic parts are index_put_ into their
    unsqueezed view, CopySlices too (ember recorded IndexPutBackward0 on the tensor itself, or refused)."""
    out = {}
    for m in (torch, ember):
        x = m.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        w = m.tensor(3.0, dtype=m.float64, requires_grad=True)
        b = x * 2
        b[idx] = w * 2
        (b * m.arange(6.0, dtype=m.float64).reshape(3, 2)).sum().backward()
        out[m] = node_names(b.grad_fn, 3), b.tolist(), w.grad.item(), x
    assert out[ember][:3] == out[torch][:3]
    assert_same_grads([out[ember][3]], [out[torch][3]])


NUMPY_INTS = [(np.int64(1), slice(1, 3)), (np.int32(0), None, E), (slice(None), np.int16(-1)), (np.uint8(2), np.int64(0))]


@pytest.mark.parametrize("idx", NUMPY_INTS, ids=repr)
def test_numpy_integers_among_basic_parts_select_as_pytorchs(idx):
    # (a NumPy integer is PyTorch's number; ember's recorded x[np.int64(1), 1:3] split its views off forever:
    # RecursionError)
    out = {}
    for m in (torch, ember):
        x = m.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        y = x[idx]
        (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        out[m] = node_names(y.grad_fn, 4), tuple(y.shape), y.tolist(), x
    assert out[ember][:3] == out[torch][:3]
    assert_same_grads([out[ember][3]], [out[torch][3]])
