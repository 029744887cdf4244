"""PyTorch's ``x[idx] = value`` first views the value without its leading dimensions of size 1
(``slicePrefix1sSize``), so a value with more dimensions than the indexed result is written where those extra
dimensions are ones: ``t[0] = torch.DoubleTensor([n])`` into a 1-element tensor (thop's parameter counter),
``t[i, j] = torch.ones(1, 1)``, a mask given a ``[1, k]`` value. ember wrote these only where NumPy's basic
assignment strips them itself (and, for a tracked value, through the graph), and refused the rest. Also PyTorch's
words for a value or an index that cannot be broadcast."""

import math

import pytest
import torch

import ember


def put(t, idx, value):
    """``t[idx] = value`` with the value in t's dtype (PyTorch's index_put_ refuses another)."""
    t[idx] = value.to(t.dtype)


WRITES = {
    "int into a 1-element tensor": ((1,), lambda lib, t: put(t, 0, lib.tensor([5.0]))),
    "two ints, a [1, 1, 1] value": ((3, 2), lambda lib, t: put(t, (0, 1), lib.ones(1, 1, 1) * 7)),
    "int, a [1, 2] value": ((3, 2), lambda lib, t: put(t, 0, lib.tensor([[1.0, 2.0]]))),
    "slice, a [1, 1, 2, 2] value": ((3, 2), lambda lib, t: put(t, slice(1, None), lib.ones(1, 1, 2, 2))),
    "index tensor, a [1, 2, 2] value": ((3, 2), lambda lib, t: put(t, lib.tensor([0, 2]), lib.ones(1, 2, 2))),
    "mask, a [1, 4] value": ((3, 2), lambda lib, t: put(t, lib.tensor([True, False, True]), lib.ones(1, 4)
                                                                  .view(1, 2, 2))),
    "2-d mask, a [1, 3] value": ((3, 2), lambda lib, t: put(t, lib.tensor([[True, False], [False, True],
                                                                                 [True, False]]), lib.ones(1, 3))),
    "int, a [1, 1] value broadcast": ((3, 2), lambda lib, t: put(t, 1, lib.ones(1, 1) * 3)),
    "0-d tensor, ellipsis": ((), lambda lib, t: put(t, Ellipsis, lib.ones(1, 1) * 2)),
    "0-d tensor, empty tuple": ((), lambda lib, t: put(t, (), lib.ones(1) * 2)),
}


@pytest.mark.parametrize("case", WRITES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_value_with_leading_ones_is_written_as_pytorch_writes_it(case, dtype):
    shape, write = WRITES[case]
    results = []
    for lib in (torch, ember):
        t = lib.arange(float(math.prod(shape)), dtype=getattr(lib, dtype)).reshape(shape)
        write(lib, t)
        results.append(t.tolist())
    assert results[1] == results[0]


def test_a_tracked_write_with_leading_ones_keeps_its_gradient():
    grads = []
    for lib in (torch, ember):
        v = lib.tensor([[3.0]], requires_grad=True)
        t = lib.zeros(2, 2)
        t[1, 0] = v * 2
        t.sum().backward()
        grads.append(v.grad.tolist())
    assert grads[1] == grads[0] == [[2.0]]


REFUSED = {
    "more than leading ones": ((3, 2), lambda lib, t: t.__setitem__(0, lib.ones(2, 1))),
    "a [1, 0] value into an element": ((3, 2), lambda lib, t: t.__setitem__((0, 0), lib.ones(1, 0))),
    "index tensor, a value of another shape": ((3, 2), lambda lib, t: t.__setitem__(lib.tensor([0, 1]),
                                                                                   lib.ones(3, 2))),
    "mask, a 2-d value": ((3, 2), lambda lib, t: t.__setitem__(t > -1, lib.ones(2, 3))),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_value_that_does_not_fit_is_refused_as_pytorch_refuses_it(case):
    shape, write = REFUSED[case]
    for lib in (torch, ember):
        t = lib.zeros(shape)
        with pytest.raises(RuntimeError):
            write(lib, t)
        assert t.tolist() == [[0.0, 0.0]] * 3  # nothing written


@pytest.mark.parametrize("case", ["index tensor, a value of another shape", "mask, a 2-d value"])
def test_an_index_put_shape_error_is_worded_as_pytorch_words_it(case):
    shape, write = REFUSED[case]
    said = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as e:
            write(lib, lib.zeros(shape))
        said.append(str(e.value))
    assert said[1] == said[0]


@pytest.mark.parametrize("index", [
    lambda lib: (lib.arange(2), lib.arange(3)),
    lambda lib: (lib.tensor([True, False, True, True, False]), lib.arange(2)),
    lambda lib: (0, lib.arange(2), lib.arange(3)),
    lambda lib: (lib.zeros(2, 3, dtype=lib.long), slice(None), lib.zeros(4, dtype=lib.long)),
    lambda lib: (lib.ones(5, 4, dtype=lib.bool), lib.arange(3)),
])
def test_index_tensors_that_do_not_broadcast_are_named_as_pytorch_names_them(index):
    said = []
    for lib in (torch, ember):
        with pytest.raises(IndexError) as e:
            lib.zeros(5, 4, 3)[index(lib)]
        said.append(str(e.value))
    assert said[1] == said[0]


def test_a_dual_value_with_leading_ones_writes_its_tangent():
    tangents = []
    for lib in (torch, ember):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            t, u = lib.zeros(3, 2), lib.zeros(2)
            t[0] = fw.make_dual(lib.ones(1, 1, 2), lib.full((1, 1, 2), 3.0))
            u[1] = fw.make_dual(lib.ones(1, 1), lib.full((1, 1), 4.0))
            tangents.append((fw.unpack_dual(t).tangent.tolist(), fw.unpack_dual(u).tangent.tolist()))
    assert tangents[1] == tangents[0]
