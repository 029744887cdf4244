"""An in-place op on a tensor whose elements share memory through nonzero strides (``as_strided``): PyTorch does
not refuse it (only a stride 0, ``expand``'s, is refused) and writes element after element in its TensorIterator
order, each element reading what the earlier ones wrote (``b.as_strided((3, 3), (1, 1)).add_(1)`` leaves
``[1, 2, 3, 2, 1, 0]``); a ``copy_`` or an ``out=`` keeps at each location the last value written there."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember._internal_overlap import overlaps
from ember._meta import reorder_dimensions


def _strided(m, size, stride, n=12):
    """A 1-d base holding 1.0, 1.5, 2.0, ... and its view (size, stride) (float64: every result exact)."""
    base = m.arange(n, dtype=m.float64) * 0.5 + 1
    return base, base.as_strided(size, stride)


def test_the_documented_case():
    for m in (ember, torch):
        b = m.zeros(6)
        b.as_strided((3, 3), (1, 1)).add_(1)
        assert b.tolist() == [1, 2, 3, 2, 1, 0]


SRC = np.arange(9.0).reshape(3, 3) - 4

# (name, op on (view, module)): each reads the view's elements, or writes a value per element
OPS = [
    ("add_", lambda v, m: v.add_(1)),
    ("add_alpha", lambda v, m: v.add_(m.tensor(SRC), alpha=2)),
    ("add_tensor_t", lambda v, m: v.add_(m.tensor(SRC).t())),
    ("iadd", lambda v, m: v.__iadd__(m.tensor(SRC))),
    ("sub_", lambda v, m: v.sub_(0.5)),
    ("mul_", lambda v, m: v.mul_(2)),
    ("mul_0d", lambda v, m: v.mul_(m.tensor(3.0))),
    ("div_", lambda v, m: v.div_(2)),
    ("pow_", lambda v, m: v.pow_(2)),
    ("neg_", lambda v, m: v.neg_()),
    ("square_", lambda v, m: v.square_()),
    ("sqrt_", lambda v, m: v.sqrt_()),
    ("abs_", lambda v, m: v.neg_().abs_()),
    ("floor_divide_", lambda v, m: v.floor_divide_(0.75)),
    ("remainder_", lambda v, m: v.remainder_(1.75)),
    ("addcmul_", lambda v, m: v.addcmul_(m.tensor(SRC), m.tensor(SRC).t())),
    ("lerp_", lambda v, m: v.lerp_(m.tensor(SRC), 0.5)),
    ("clamp_", lambda v, m: v.mul_(2).clamp_(2, 5)),
    ("gt_", lambda v, m: v.sub_(1.5).gt_(0)),
    ("copy_", lambda v, m: v.copy_(m.tensor(SRC))),
    ("copy_t", lambda v, m: v.copy_(m.tensor(SRC).t())),
    ("copy_row", lambda v, m: v.copy_(m.tensor(SRC[0]))),
    ("add_out_t", lambda v, m: m.add(m.tensor(SRC).t(), 0.5, out=v)),
    ("neg_out", lambda v, m: m.neg(m.tensor(SRC), out=v)),
    ("index_fill_", lambda v, m: v.index_fill_(0, m.tensor([0]), 7.0)),
    ("masked_fill_", lambda v, m: v.masked_fill_(m.tensor(SRC > 0), 7.0)),
    ("setitem_t", lambda v, m: v.__setitem__(Ellipsis, m.tensor(SRC).t())),
    ("setitem_rows", lambda v, m: v.__setitem__(slice(1, None), m.tensor(SRC).t()[:2])),
    ("setitem_number", lambda v, m: v.__setitem__(1, 5.0)),
    ("fill_", lambda v, m: v.fill_(2)),
    ("zero_", lambda v, m: v.zero_()),
]
LAYOUTS = [((3, 3), (1, 1)), ((3, 3), (1, 2)), ((3, 3), (2, 1)), ((3, 3), (2, 3)), ((3, 3), (3, 1)),
           ((3, 3), (1, 3))]


@pytest.mark.parametrize("size,stride", LAYOUTS)
@pytest.mark.parametrize("name,op", OPS, ids=[n for n, _ in OPS])
def test_overlapping_view_written_in_turn(name, op, size, stride):
    results = []
    for m in (ember, torch):
        base, view = _strided(m, size, stride)
        op(view, m)
        results.append(base)
    assert_close(results[0], results[1], atol=0, rtol=1e-12, msg=name)


@pytest.mark.parametrize("seed", range(20))
def test_random_layouts_in_turn(seed):
    """Random 3-d layouts whose strides overlap, each written by an op reading it with an operand laid out in a
    random order (the order PyTorch visits the elements in follows the operands' strides)."""
    rng = np.random.default_rng(seed)
    size = tuple(int(n) for n in rng.integers(1, 4, 3))
    stride = tuple(int(s) for s in rng.integers(0, 4, 3))
    stride = tuple(s if s or n == 1 else 1 for s, n in zip(stride, size))  # (no stride 0: that one is refused)
    perm = tuple(int(d) for d in rng.permutation(3))
    other = np.round(rng.normal(size=[size[d] for d in perm]) * 4) / 4
    inverse = tuple(int(d) for d in np.argsort(perm))
    results = []
    for m in (ember, torch):
        base, view = _strided(m, size, stride, n=40)
        view.mul_(m.tensor(other).permute(*inverse)).add_(1)
        view.copy_(view.flip(0) * 0 + m.tensor(other).permute(*inverse))  # (a copy_ of a permuted value)
        results.append(base)
    assert_close(results[0], results[1], atol=0, rtol=1e-12, msg=f"{size} {stride} {perm}")


def test_expanded_is_still_refused():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            m.zeros(3).expand(2, 3).add_(1)


def test_overlap_told_cheaply():
    """The check: a contiguous or transposed array, a slice with a step, an expand's stride 0 are not an overlap
    that needs the elementwise write; interleaved strides that miss each other are not either."""
    a = np.zeros(24)
    assert not overlaps(a.reshape(4, 6))
    assert not overlaps(a.reshape(4, 6).T)
    assert not overlaps(a.reshape(4, 6)[:, ::2])
    assert not overlaps(np.lib.stride_tricks.as_strided(a, (2, 2), (24, 16)))  # (offsets 0, 16, 24, 40)
    assert overlaps(np.lib.stride_tricks.as_strided(a, (3, 3), (8, 8)))
    assert overlaps(np.lib.stride_tricks.as_strided(a, (2, 3), (16, 8)))


def test_iteration_order_follows_the_operands():
    # the output's strides decide; equal ones leave it to the next operand; equal sizes and strides: C order
    assert reorder_dimensions((3, 3), [(8, 8), (8, 8)]) == [1, 0]
    assert reorder_dimensions((3, 3), [(8, 8), (8, 8), (8, 24)]) == [0, 1]
    assert reorder_dimensions((3, 4), [(8, 16)]) == [0, 1]
    assert reorder_dimensions((4, 3), [(8, 8)]) == [1, 0]  # (equal strides: the larger dimension outside)
    assert reorder_dimensions((3, 4), [(8, 8)]) == [0, 1]


@pytest.mark.parametrize("name,op", [("mul_", lambda v, m, s: v.mul_(s)), ("exp_", lambda v, m, s: v.exp_()),
                                     ("addcmul_", lambda v, m, s: v.addcmul_(m.tensor(SRC), s.expand(3, 3)))])
def test_recorded_op_writes_in_turn(name, op):
    """Recorded (a view of a tensor that requires grad, or an operand that does): the value is the elementwise
    write's; the gradient is autograd's formula over the view, as PyTorch's."""
    results = []
    for m in (ember, torch):
        w = m.arange(6.0, dtype=m.float64, requires_grad=True)
        s = m.tensor(0.5, dtype=m.float64, requires_grad=True)
        b = w * 1
        op(b.as_strided((3, 3), (1, 1)), m, s)
        (b * m.arange(6.0, dtype=m.float64)).sum().backward()
        results.append((b.detach(), w.grad, s.grad))
    for got, want in zip(*results):
        assert (got is None) == (want is None)
        if want is not None:
            assert_close(got, want, atol=0, rtol=1e-12, msg=name)


def test_overlap_matches_a_count_of_the_locations():
    rng = np.random.default_rng(0)
    a = np.zeros(200)
    for _ in range(400):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 5, ndim))
        strides = tuple(int(s) * 8 for s in rng.integers(1, 9, ndim))
        v = np.lib.stride_tricks.as_strided(a, shape, strides)
        offsets = {sum(i * s for i, s in zip(idx, strides)) for idx in np.ndindex(*shape)}
        assert overlaps(v) == (len(offsets) < v.size), (shape, strides)


# writes into a view whose stride 0 is as_strided's rather than expand's: (name, write, PyTorch refuses it)
ZERO_STRIDE_WRITES = [
    ("add_", lambda v, m: v.add_(1), True),
    ("mul_", lambda v, m: v.mul_(m.ones(3, 3)), True),
    ("copy_", lambda v, m: v.copy_(m.ones(3, 3)), True),
    ("setitem", lambda v, m: v.__setitem__(Ellipsis, m.ones(3, 3)), True),
    ("mm_out", lambda v, m: m.mm(m.ones(3, 3), m.ones(3, 3), out=v), True),
    ("addmm_", lambda v, m: v.addmm_(m.ones(3, 3), m.ones(3, 3)), True),
    ("matmul_out", lambda v, m: m.matmul(m.ones(3, 3), m.ones(3, 3), out=v), True),
    ("neg_out", lambda v, m: m.neg(m.ones(3, 3), out=v), True),
    ("cumsum_out", lambda v, m: m.cumsum(m.ones(3, 3), 0, out=v), True),
    ("fill_", lambda v, m: v.fill_(2), False),
    ("zero_", lambda v, m: v.zero_(), False),
]


@pytest.mark.parametrize("name,write,refused", ZERO_STRIDE_WRITES, ids=[w[0] for w in ZERO_STRIDE_WRITES])
@pytest.mark.parametrize("stride", [(0, 1), (1, 0)])
def test_as_strided_zero_stride_refused_as_expand(name, write, refused, stride):
    """A stride 0 made by as_strided repeats elements as expand's does: PyTorch refuses the same writes (its check
    reads the strides, not how the view was made), and fill_/zero_ write one value through it."""
    bases = []
    for m in (ember, torch):
        base = m.arange(9.0)
        view = base.as_strided((3, 3), stride)
        if refused:
            with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a "
                                                   "single memory location"):
                write(view, m)
        else:
            write(view, m)
        assert view.sum().item() == pytest.approx(float(view.detach().numpy().sum()))  # (still read freely)
        bases.append(base.tolist())
    assert bases[0] == bases[1]
