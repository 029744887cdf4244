"""``block_diag``, ``row_stack``, and ``hstack``/``vstack`` of 0-d tensors, against PyTorch: values, dtypes, shapes,
gradients, node names and errors."""

import numpy as np
import pytest
import torch
from oracle import assert_same_outcome

import ember

CASES = {
    "two matrices": [(2, 3), (1, 2)],
    "0-d, 1-d, 2-d": [(), (3,), (2, 2)],
    "empty rows": [(0, 3), (2,)],
    "one": [(2, 2)],
}


def _tensors(m, shapes, dtypes=None, requires_grad=False):
    rng = np.random.default_rng(0)
    dtypes = dtypes or ["float64"] * len(shapes)
    return [m.tensor(rng.standard_normal(s)).to(getattr(m, d)).requires_grad_(requires_grad) for s, d in
            zip(shapes, dtypes)]


@pytest.mark.parametrize("case", list(CASES))
def test_block_diag_values_gradients_and_node(case):
    outs = []
    for m in (torch, ember):
        xs = _tensors(m, CASES[case], requires_grad=True)
        y = m.block_diag(*xs)
        weights = m.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * weights).sum().backward()
        outs.append((y.detach().numpy(), y.grad_fn.name(), [x.grad.numpy() for x in xs]))
    (ty, tname, tgrads), (ey, ename, egrads) = outs
    np.testing.assert_array_equal(ey, ty)
    assert ename == tname == "BlockDiagBackward0"
    for e, t in zip(egrads, tgrads):
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("dtypes", [["int64", "float32"], ["bool", "int64"], ["float16", "float32"],
                                    ["int32", "uint8"]])
def test_block_diag_promotes_as_pytorch(dtypes):
    t = torch.block_diag(*_tensors(torch, [(2,), (1, 1)], dtypes))
    e = ember.block_diag(*_tensors(ember, [(2,), (1, 1)], dtypes))
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("dtypes", [["float64", "float32"], ["float64", "int64"], ["int64", "uint8"],
                                    ["complex64", "float64"]])
def test_block_diag_promotes_a_0d_block_as_pytorchs_result_type(dtypes):
    # (a 0-d block takes part in the promotion by its category only, as in PyTorch's result_type)
    t = torch.block_diag(*_tensors(torch, [(), (2,)], dtypes))
    e = ember.block_diag(*_tensors(ember, [(), (2,)], dtypes))
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_block_diag_of_mixed_precision_casts_each_gradient_back():
    grads = []
    for m in (torch, ember):
        xs = _tensors(m, [(2,), (1, 1)], ["float16", "float32"], requires_grad=True)
        y = m.block_diag(*xs)
        y.sum().backward()
        grads.append([(str(x.grad.dtype), x.grad.float().numpy()) for x in xs])
        assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    assert grads[0][0][0].split(".")[1] == grads[1][0][0].split(".")[1] == "float16"
    for (_, t), (_, e) in zip(*grads):
        np.testing.assert_array_equal(e, t)


def test_block_diag_of_nothing_and_its_errors():
    assert tuple(ember.block_diag().shape) == tuple(torch.block_diag().shape) == (1, 0)
    assert ember.block_diag().dtype == ember.float32
    for args in [lambda m: (1,), lambda m: ([m.ones(2)],), lambda m: (m.ones(2), m.ones(2, 2, 2))]:
        assert_same_outcome(lambda m, args=args: m.block_diag(*args(m)))


@pytest.mark.parametrize("name", ["hstack", "vstack", "row_stack", "dstack", "column_stack"])
@pytest.mark.parametrize("shapes", [[(), ()], [(), (1,)], [(3,), (3,)], [(2, 3), (1, 3)]])
def test_stacking_functions_of_low_rank_tensors_as_pytorch(name, shapes):
    assert_same_outcome(lambda m: getattr(m, name)(_tensors(m, shapes)))


def test_row_stack_errors_are_pytorchs():
    assert_same_outcome(lambda m: m.row_stack([]))
    assert_same_outcome(lambda m: m.row_stack(m.ones(2, 2)))
