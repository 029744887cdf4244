"""The per-op shortcuts of small ops give PyTorch's answers: same-dtype and mixed operands of add/mul, a Python
number with a tensor, basic and non-basic indices, a full sum (a writable 0-d tensor), ReLU below the threading
size on a non-contiguous input, view/reshape/split, recorded saved versions (in-place changes still caught)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


def _pair(a: np.ndarray, requires_grad: bool = False):
    return (ember.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad))


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float32", "float64"), ("int64", "float32"),
                                    ("bool", "int64"), ("float16", "float16")])
@pytest.mark.parametrize("op", ["add", "mul"])
def test_binary_dtypes_and_gradients(dtypes, op):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(4).astype(d) if d != "bool" else rng.standard_normal(4) > 0 for d in dtypes)
    grad = all(np.dtype(d).kind == "f" for d in dtypes)
    (ea, ta), (eb, tb) = _pair(a, grad), _pair(b, grad)
    e, t = getattr(ember, op)(ea, eb), getattr(torch, op)(ta, tb)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert_close(e, t)
    if grad:
        e.sum().backward()
        t.sum().backward()
        assert_close(ea.grad, ta.grad)
        assert_close(eb.grad, tb.grad)


@pytest.mark.parametrize("scalar", [1.5, 2, True, np.float64(0.5), 1 + 2j])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_tensor_with_python_number(scalar, dtype):
    a = np.array([1, 0, 3]).astype(dtype)
    e, t = ember.tensor(a) + scalar, torch.tensor(a) + scalar
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert_close(e, t)


@pytest.mark.parametrize("idx", [1, -1, slice(1, 3), (slice(None), 0), (None, 1), (Ellipsis, 2), True, False,
                                 (0, True), np.int64(1), [0, 2], (slice(None), [1, 0])])
def test_getitem_plain_and_converted(idx):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    (e, t) = _pair(a, True)
    ye, yt = e[idx], t[idx]
    assert tuple(ye.shape) == tuple(yt.shape)
    assert_close(ye, yt)
    (ye * 2).sum().backward()
    (yt * 2).sum().backward()
    assert_close(e.grad, t.grad)


def test_full_sum_is_a_writable_0d_tensor():
    e, t = _pair(np.arange(4, dtype=np.float32))
    se, st = e.sum(), t.sum()
    se += 1
    st += 1
    assert se.shape == () and se._data.flags.writeable
    assert_close(se, st)
    assert e.sum(dim=()).shape == t.sum(dim=()).shape


def test_small_relu_keeps_the_memory_order():
    a = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    (e, t) = _pair(a, True)
    ye, yt = torch.nn.functional.relu(t.t()), ember.nn.functional.relu(e.t())
    assert yt.stride() == ye.stride() and not yt.is_contiguous()
    assert_close(yt, ye)


def test_view_reshape_split():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (e, t) = _pair(a, True)
    assert_close(e.view(6, -1), t.view(6, -1))
    assert_close(e.reshape(-1), t.reshape(-1))
    pe, pt = e.split(2, dim=2), t.split(2, dim=2)
    assert len(pe) == len(pt)
    for x, y in zip(pe, pt):
        assert_close(x, y)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        e.transpose(0, 2).view(-1)
    with pytest.raises(RuntimeError, match="invalid for input of size 24"):
        e.view(5, 5)
    with pytest.raises(RuntimeError, match="multiple views"):
        (e * 1).split(2, dim=2)[0].mul_(2)


def test_saved_versions_still_catch_in_place_changes():
    e = ember.tensor(np.ones(3, np.float32), requires_grad=True)
    x = e * 1
    y = x * x  # the same array saved twice
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# Found by review: pieces cut without narrow's checks took a negative size as a slice from the end.
@pytest.mark.parametrize("sizes, dim", [([-1, 4], 0), ([4, -1], 0), ([2, -1, 2], 1)])
def test_split_refuses_negative_sizes(sizes, dim):
    for fw in (torch, ember):
        x = fw.arange(9.0).reshape(3, 3) if dim else fw.arange(3.0)
        with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes have only non-negative"):
            x.split(sizes, dim)


# Found by review: NumPy's negative steps reversed silently where PyTorch refuses them.
@pytest.mark.parametrize("key", [(slice(None, None, -1),), (slice(None), slice(None, None, -2)),
                                 (slice(None, None, 0),), (Ellipsis, slice(2, 0, -1))])
def test_slices_with_a_step_below_one_are_refused(key):
    for fw in (torch, ember):
        x = fw.arange(6.0).reshape(2, 3)
        message = "slice step cannot be zero" if key[-1].step == 0 else "step must be greater than zero"
        with pytest.raises(ValueError, match=message):
            x[key]
        with pytest.raises(ValueError, match=message):
            x[key] = 1.0
