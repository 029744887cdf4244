"""Rarer PyTorch names that public code uses (tools/api_coverage.py's report): Tensor.nbytes/itemsize,
Tensor.sparse_mask, DLPack exchange (torch.utils.dlpack, torch.from_dlpack), each against torch."""

import gc

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember.utils import dlpack


@pytest.mark.parametrize("make", [
    lambda m: m.ones(2, 3), lambda m: m.ones(2, 3, dtype=m.float64)[:, 1], lambda m: m.ones(1).expand(10),
    lambda m: m.zeros(0, 3), lambda m: m.tensor(True), lambda m: m.ones(2, dtype=m.complex64),
    lambda m: m.ones(3, dtype=m.int16), lambda m: m.ones(2, 2, dtype=m.bfloat16).t(),
])
def test_nbytes_and_itemsize_as_torch(make):
    e, t = make(ember), make(torch)
    assert (e.nbytes, e.itemsize) == (t.nbytes, t.itemsize)


def test_nbytes_of_a_sparse_tensor_raises_as_torch():
    e = ember.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (4,))
    t = torch.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (4,), check_invariants=True)
    with pytest.raises(RuntimeError, match="nbytes is not defined for sparse tensors") as t_err:
        _ = t.nbytes
    with pytest.raises(RuntimeError) as e_err:
        _ = e.nbytes
    assert str(e_err.value) == str(t_err.value)
    assert e.itemsize == t.itemsize


X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) - 7.0


@pytest.mark.parametrize("indices, values_shape, shape", [
    ([[1, 0, 1], [2, 0, 2], [3, 1, 3]], (3,), (2, 3, 4)),  # repeats kept, uncoalesced
    ([[0, 1], [1, 2], [0, 3]], (2,), (2, 3, 4)),
    ([[1, 0], [2, 1]], (2, 4), (2, 3, 4)),  # a hybrid mask: rows over the dense dimension
    ([[1]], (1, 3, 4), (2, 3, 4)),
    ([[], [], []], (0,), (2, 3, 4)),
])
@pytest.mark.parametrize("coalesce", [False, True])
def test_sparse_mask_as_torch(indices, values_shape, shape, coalesce):
    def run(m):
        mask = m.sparse_coo_tensor(m.tensor(indices, dtype=m.int64).reshape(len(indices), -1),
                                   m.ones(*values_shape, dtype=m.float64), shape, check_invariants=True)
        mask = mask.coalesce() if coalesce else mask
        return m.tensor(X).sparse_mask(mask)

    e, t = run(ember), run(torch)
    assert e.is_sparse and e.dtype == ember.float32 and e.is_coalesced() == t.is_coalesced()
    assert_close(e._indices(), t._indices())
    assert_close(e._values(), t._values())
    assert_close(e.to_dense(), t.to_dense())


def test_sparse_mask_of_a_sparse_tensor_as_torch():
    a = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]], dtype=np.float32)
    e = ember.tensor(a).to_sparse().sparse_mask(ember.tensor(np.ones_like(a)).to_sparse())
    t = torch.tensor(a).to_sparse().sparse_mask(torch.tensor(np.ones_like(a)).to_sparse())
    assert_close(e.to_dense(), t.to_dense())


def test_sparse_mask_errors_as_torch():
    mask = [[0, 1]], [1.0, 1.0], (5,)
    with pytest.raises(RuntimeError, match="incompatible sizes"):
        torch.ones(3).sparse_mask(torch.sparse_coo_tensor(*mask, check_invariants=True))
    with pytest.raises(RuntimeError, match=r"self has size \[3\] but mask has size \[5\]"):
        ember.ones(3).sparse_mask(ember.sparse_coo_tensor(*mask))
    with pytest.raises(NotImplementedError):
        torch.ones(3).sparse_mask(torch.ones(3))
    with pytest.raises(NotImplementedError, match="sparse COO"):
        ember.ones(3).sparse_mask(ember.ones(3))
    with pytest.raises(NotImplementedError, match="detach"):  # ember's sparse tensors never join a graph
        ember.ones(5, requires_grad=True).sparse_mask(ember.sparse_coo_tensor(*mask))


# ---------------------------------------------------------------- DLPack

def test_torch_reads_an_ember_tensor_without_a_copy():
    e = ember.tensor(X)[:, 1:]  # a strided view
    t = torch.from_dlpack(e)
    assert_close(e, t)
    t[0, 0, 0] = 100.0
    assert e[0, 0, 0].item() == 100.0
    assert e.__dlpack_device__() == torch.ones(1).__dlpack_device__() == (dlpack.DLDeviceType.kDLCPU, 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int8, torch.bool,
                                   torch.complex64, torch.float16])
def test_ember_reads_a_torch_tensor_without_a_copy(dtype):
    t = torch.tensor(X[0]).to(dtype).t()  # non-contiguous
    e = ember.from_dlpack(t)
    assert_close(e, t)
    assert e.dtype == getattr(ember, str(dtype).removeprefix("torch."))
    e[0, 0] = 1
    assert t[0, 0].item() == 1


def test_capsules_as_torch():
    # torch's to_dlpack capsule into ember, writable, its memory kept alive by the tensor
    t = torch.arange(6.0).reshape(2, 3).t()
    e = dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    del t
    gc.collect()
    e[0, 1] = -1.0
    assert_close(e, torch.tensor([[0.0, -1.0], [1.0, 4.0], [2.0, 5.0]]))
    # ember's capsule into torch: exported even when the tensor requires grad, as torch.utils.dlpack.to_dlpack
    src = ember.tensor(X, requires_grad=True)
    assert_close(torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(src)), torch.tensor(X))
    assert_close(torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.tensor(X, requires_grad=True))),
                 torch.tensor(X))


def test_dlpack_with_numpy_and_copies():
    a = np.arange(4.0)
    e = ember.from_dlpack(a)
    e[0] = 9.0
    assert a[0] == 9.0
    c = ember.from_dlpack(a, copy=True)
    c[1] = 7.0
    assert a[1] == 1.0
    assert_close(np.from_dlpack(ember.tensor(X)), torch.tensor(X))


def test_dlpack_errors_as_torch():
    with pytest.raises(BufferError, match="require gradient") as t_err:
        torch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError) as e_err:
        ember.ones(2, requires_grad=True).__dlpack__()
    assert str(e_err.value) == str(t_err.value)
    with pytest.raises(RuntimeError, match="CPU"):
        ember.from_dlpack(np.ones(2), device="cuda")
    with pytest.raises(TypeError, match="must be Tensor"):
        dlpack.to_dlpack(np.ones(2))
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.utils.dlpack.to_dlpack(np.ones(2))
    assert list(dlpack.DLDeviceType.__members__.items()) == [
        (k, int(v)) for k, v in torch.utils.dlpack.DLDeviceType.__members__.items()]
