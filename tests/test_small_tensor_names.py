"""``Tensor.output_nr``, the in-place logical ops (``logical_not_``, ``logical_and_``, ...) and
``torch.scalar_tensor``, against PyTorch."""

import pytest
import torch

import ember
from tests.oracle import assert_close, assert_same_error


def test_output_nr_is_the_position_among_the_nodes_outputs():
    def nrs(m):
        x = m.ones(3, requires_grad=True)
        a, _, c = m.rand(3, requires_grad=True).split(1)
        return [x.output_nr, (x * 2).output_nr, x.unbind()[1].output_nr, m.ones(2).output_nr,
                x.max(0)[1].output_nr, a.output_nr, c.output_nr]

    assert nrs(ember) == nrs(torch) == [0, 0, 1, 0, 0, 0, 2]


LOGICAL = {
    "not": lambda m, x: x.logical_not_(),
    "and": lambda m, x: x.logical_and_(m.tensor([1.0, 1.0, 0.0])),
    "or": lambda m, x: x.logical_or_(m.tensor([0, 0, 3])),
    "xor": lambda m, x: x.logical_xor_(m.tensor([True, True, False])),
    "and_broadcast": lambda m, x: x.logical_and_(m.tensor(2.0)),
}


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("op", LOGICAL)
def test_in_place_logical_ops_write_truth_in_the_tensors_dtype(op, dtype):
    got, want = (LOGICAL[op](m, m.tensor([1.5, 0.0, 2.0]).to(getattr(m, dtype))) for m in (ember, torch))
    assert got.dtype.name == dtype
    assert_close(got, want)


def test_in_place_logical_ops_are_not_recorded():
    for m in (ember, torch):
        leaf = m.ones(2, requires_grad=True)
        assert leaf.logical_not_() is leaf and leaf.grad_fn is None and leaf.requires_grad
        y = m.ones(2, requires_grad=True).clone()
        y.logical_and_(m.zeros(2))
        assert type(y.grad_fn).__name__ == "CloneBackward0"
        assert y._version == 1
    assert_same_error(lambda m: m.ones(1).logical_and_(m.ones(3)))
    assert_same_error(lambda m: m.ones(2).logical_and_(1))


SCALARS = {
    "int": lambda m: m.scalar_tensor(3), "bool": lambda m: m.scalar_tensor(True),
    "float": lambda m: m.scalar_tensor(2.5), "int_dtype": lambda m: m.scalar_tensor(2.5, dtype=m.int64),
    "float64": lambda m: m.scalar_tensor(1, dtype=m.float64), "tensor": lambda m: m.scalar_tensor(m.tensor(1.5)),
    "complex": lambda m: m.scalar_tensor(1 + 2j, dtype=m.complex64),
    "requires_grad": lambda m: m.scalar_tensor(1.0, requires_grad=True),
    # a half dtype is not checked: past its range the value is inf (float16), or rounds there (bfloat16)
    "float16_past_range": lambda m: m.scalar_tensor(1e5, dtype=m.float16),
    "bfloat16_past_range": lambda m: m.scalar_tensor(-1e39, dtype=m.bfloat16),
    "bfloat16_rounded": lambda m: m.scalar_tensor(65520.0, dtype=m.bfloat16),
}


@pytest.mark.parametrize("call", SCALARS)
def test_scalar_tensor_is_pytorchs(call):
    got, want = SCALARS[call](ember), SCALARS[call](torch)
    assert got.shape == () and got.dtype.name == str(want.dtype).split(".")[1]
    assert got.requires_grad == want.requires_grad
    if want.dtype == torch.bfloat16:  # (no NumPy array of PyTorch's bfloat16)
        got, want = got.float(), want.float()
    assert_close(got.detach(), want.detach())


@pytest.mark.parametrize("s", ["a", 1 + 2j, 1e39, "1-d tensor"])
def test_scalar_tensor_errors_are_pytorchs(s):
    assert_same_error(lambda m: m.scalar_tensor(m.tensor([1.0]) if s == "1-d tensor" else s))
