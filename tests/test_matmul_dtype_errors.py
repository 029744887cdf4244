"""The refusal of matrix-product operands of two dtypes in PyTorch's words, which name the kernel its matmul
reaches for those shapes and strides (dot, addmv, mm, or the batched kernel when a stack cannot be folded into
one matrix without a copy), and linear's (addmm's words with a bias, matmul's without)."""

import pytest

from tests.oracle import assert_same_error

# (left shape, right shape): every pairing of vector, matrix and stack matmul dispatches on
SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (4,)),
          ((4,), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 2, 3, 4), (4, 5))]


def _operand(m, shape, dtype, layout):
    """ones of ``shape``: row-major, its last two dims stored transposed, or its batch dims stored swapped (a stack
    that cannot be viewed as one matrix)."""
    t = m.ones(*shape, dtype=dtype)
    if layout == "transposed" and t.dim() >= 2:
        t = t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "batch swapped" and t.dim() >= 3:
        t = t.transpose(0, -2).contiguous().transpose(0, -2)
    return t


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("layout", ["row-major", "transposed", "batch swapped"])
@pytest.mark.parametrize("double_first", [False, True])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matmul_of_two_dtypes_is_refused_in_pytorchs_words(shapes, double_first, layout, requires_grad):
    def product(m):
        dtypes = (m.float64, m.float32) if double_first else (m.float32, m.float64)
        a, b = (_operand(m, s, d, layout) for s, d in zip(shapes, dtypes))
        return m.matmul(a.requires_grad_(requires_grad), b.requires_grad_(requires_grad))

    assert_same_error(product)


CALLS = {
    "mm": lambda m: m.mm(m.ones(4, 3).T, m.ones(4, 5, dtype=m.float64)),
    "bmm": lambda m: m.bmm(m.ones(2, 4, 3).mT, m.ones(2, 4, 5, dtype=m.float64)),
    "mv": lambda m: m.mv(m.ones(4, 3).T, m.ones(8, dtype=m.float64)[::2]),
    "dot": lambda m: m.dot(m.ones(8)[::2], m.ones(4, dtype=m.float64)),
    "inner": lambda m: m.inner(m.ones(3, 4), m.ones(5, 4, dtype=m.float64)),
    "tensordot": lambda m: m.tensordot(m.ones(3, 4), m.ones(4, 5, dtype=m.float64), 1),
    "linear 2-d with bias": lambda m: m.nn.functional.linear(m.ones(2, 4), m.ones(5, 4, dtype=m.float64),
                                                             m.ones(5, dtype=m.float64)),
    "linear bias of another dtype": lambda m: m.nn.functional.linear(m.ones(2, 4), m.ones(5, 4),
                                                                     m.ones(5, dtype=m.float64)),
    "linear vector with bias": lambda m: m.nn.functional.linear(m.ones(4), m.ones(5, 4), m.ones(5, dtype=m.float64)),
    "linear 3-d without bias": lambda m: m.nn.functional.linear(m.ones(3, 2, 4), m.ones(5, 4, dtype=m.float64)),
    "linear 3-d strided without bias": lambda m: m.nn.functional.linear(m.ones(3, 2, 4).transpose(0, 1),
                                                                        m.ones(5, 4, dtype=m.float64)),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_the_products_refuse_two_dtypes_in_pytorchs_words(call):
    assert_same_error(CALLS[call])


@pytest.mark.parametrize("layout", ["row-major", "batch swapped"])
@pytest.mark.parametrize("grad_of", ["left", "right"])
@pytest.mark.parametrize("shapes", [s for s in SHAPES if len(s[0]) > 2 or len(s[1]) > 2], ids=str)
def test_matmul_folds_a_stack_as_pytorch_when_one_operand_requires_grad(shapes, grad_of, layout):
    """PyTorch folds a stack times a vector or matrix into one product when the smaller operand requires grad,
    whatever the stack's strides: its dtype error is then mm's or addmv's."""
    def product(m):
        a, b = (_operand(m, s, d, layout) for s, d in zip(shapes, (m.float32, m.float64)))
        return m.matmul(a.requires_grad_(grad_of == "left"), b.requires_grad_(grad_of == "right"))

    assert_same_error(product)
