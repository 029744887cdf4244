"""``Tensor.resize_`` / ``resize_as_`` and the in-place activations of ``torch.nn.functional`` (``F.relu_`` ...)
against PyTorch: shapes, strides, kept data, storage growth seen by every view, errors."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
import ember.nn.functional as F


def state(t, known: int):
    """Shape, strides, offset, and the first ``known`` elements in memory order (the rest is uninitialised)."""
    flat = t.detach().float().contiguous().reshape(-1)[:known]
    return tuple(t.shape), t.stride(), t.storage_offset(), flat.tolist(), str(t.dtype).split(".")[1]


CASES = [  # (make the tensor, resize arguments, elements whose values PyTorch defines afterwards)
    (lambda lib: lib.arange(6.0), ((2, 2),), 4),
    (lambda lib: lib.arange(6.0), (2, 3), 6),
    (lambda lib: lib.arange(6.0), (10,), 6),  # growth: the prefix is kept
    (lambda lib: lib.arange(6.0), ([3],), 3),
    (lambda lib: lib.arange(6.0), ((),), 1),
    (lambda lib: lib.arange(6.0), ((0, 4),), 0),
    (lambda lib: lib.arange(6.0).reshape(2, 3).t(), (3, 2), 6),  # the same shape: nothing changes, strides stay
    (lambda lib: lib.arange(6.0).reshape(2, 3).t(), (2, 2), 4),  # another shape: contiguous over the storage
    (lambda lib: lib.arange(12.0)[4:], (2, 3), 6),  # a view keeps its storage offset
    (lambda lib: lib.arange(12.0)[4:], (3, 4), 8),  # ... and grows its storage past the end
    (lambda lib: lib.arange(6, dtype=lib.int64), (2, 2), 4),
    (lambda lib: lib.tensor([1.5, 2.5]).bfloat16(), (3,), 2),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_resize_matches_torch(case):
    make, args, known = CASES[case]
    e, t = make(ember), make(torch)
    assert e.resize_(*args) is e
    t.resize_(*args)
    assert state(e, known) == state(t, known)


def test_resize_keeps_views_of_the_storage_coherent():
    for lib in (ember, torch):
        base = lib.arange(4.0)
        view = base[1:]
        view.resize_(6)  # past the end: the storage grows for base as well
        view[0] = 100.0
        assert base.shape == (4,) and base[1].item() == 100.0, lib.__name__
        assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        assert view.untyped_storage().nbytes() == 28
        small = lib.arange(6.0)
        part = small[:2]
        small.resize_(2)  # shrinking leaves the storage, and its other users, as they are
        small[1] = -1.0
        assert part[1].item() == -1.0 and small.untyped_storage().nbytes() == 24


def test_resize_as_takes_the_shape_not_the_dtype():
    for lib in (ember, torch):
        x = lib.ones(2)
        assert x.resize_as_(lib.zeros(2, 3, dtype=lib.int64)) is x
        assert tuple(x.shape) == (2, 3) and x.dtype == lib.float32


@pytest.mark.parametrize("call,error", [
    (lambda lib: lib.ones(3, requires_grad=True).resize_(2), RuntimeError),
    (lambda lib: lib.ones(3, requires_grad=True).resize_as_(lib.ones(2)), RuntimeError),
    (lambda lib: lib.ones(3).resize_(-2), RuntimeError),
    (lambda lib: lib.ones(3).resize_(2, -1), RuntimeError),
    (lambda lib: lib.ones(3).resize_(2.0), TypeError),
])
def test_resize_errors_as_torch(call, error):
    for lib in (ember, torch):
        with pytest.raises(error):
            call(lib)


def test_shared_memory_cannot_grow():
    x = ember.ones(3).share_memory_()  # (PyTorch 2.13 crashes here: its shared storage cannot be resized)
    x.resize_(2)  # shrinking is fine
    with pytest.raises(RuntimeError, match="not resizable"):
        x.resize_(10)


def test_resize_of_a_tensor_that_requires_grad_works_once_detached():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        d = x.detach()
        d.resize_(5)
        assert tuple(d.shape) == (5,) and tuple(x.shape) == (3,) and d[:3].tolist() == [1.0, 1.0, 1.0]


INPLACE = [
    ("relu_", ()), ("elu_", ()), ("elu_", (0.5,)), ("celu_", (2.0,)), ("selu_", ()), ("leaky_relu_", (0.2,)),
    ("hardtanh_", (-0.5, 0.25)), ("rrelu_", (0.1, 0.3)), ("threshold_", (0.5, -3.0)),
]


@pytest.mark.parametrize("name,args", INPLACE)
def test_inplace_activation_overwrites_input_as_torch(name, args):
    data = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    e, t = ember.tensor(data), torch.tensor(data)
    out_e, out_t = getattr(F, name)(e, *args), getattr(torch.nn.functional, name)(t, *args)
    assert out_e is e and out_t is t
    assert_close(e, t, atol=1e-6, msg=name)


@pytest.mark.parametrize("name,args", INPLACE)
def test_inplace_activation_gradient_through_a_non_leaf(name, args):
    data = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float64)
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(data, requires_grad=True)
        y = x * 1.5
        getattr(lib.nn.functional, name)(y, *args)
        y.sum().backward()
        grads.append(x.grad)
    assert_close(grads[0], grads[1], atol=1e-12, msg=name)


def test_inplace_activation_on_a_leaf_that_requires_grad_is_refused():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError):
            lib.nn.functional.relu_(lib.ones(2, requires_grad=True))


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_set_makes_the_tensor_share_the_sources_data(m):
    a, b = m.zeros(3), m.arange(4.0).reshape(2, 2).t()
    assert a.set_(b) is a
    assert tuple(a.shape) == (2, 2) and a.stride() == b.stride() and a.data_ptr() == b.data_ptr()
    b[0, 0] = 9.0
    assert a[0, 0].item() == 9.0
    assert tuple(a.set_().shape) == (0,)
    with pytest.raises(RuntimeError):  # another dtype
        a.set_(m.zeros(2, dtype=m.int64))
    p = m.nn.Parameter(m.ones(2, 3).t())
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.set_(p.contiguous())
    with m.no_grad():
        p.set_(p.contiguous())
    assert p.is_contiguous() and p.requires_grad and isinstance(p, m.nn.Parameter)


DTYPE_PAIRS = [("float32", "float64"), ("float64", "float32"), ("float32", "int64"), ("float32", "float16"),
               ("float32", "bfloat16"), ("float32", "int32"), ("float32", "int16"), ("float32", "int8"),
               ("float32", "uint8"), ("float32", "bool"), ("float32", "complex64"), ("float64", "complex128")]


@pytest.mark.parametrize("own,other", DTYPE_PAIRS)
def test_set_from_another_dtype_names_both_as_pytorchs_message_does(own, other):
    # GRU4Rec's weight.set_(torch.tensor(float64 array)) into a float32 weight: the C++ type names
    messages = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as caught:
            m.zeros(2, dtype=getattr(m, own)).set_(m.zeros(2, dtype=getattr(m, other)))
        messages.append(str(caught.value))
    assert messages[1] == messages[0]
