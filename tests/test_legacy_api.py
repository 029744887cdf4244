"""Legacy API still in tutorials, against torch: Variable, Tensor(...) and the typed constructors, isinstance
with typed classes, Tensor.type(), storages and data_ptr."""

import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int16", "int32", "int64", "bool"]
pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")  # torch's, not ember's
TYPED = ["FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor",
         "LongTensor", "BoolTensor"]


def same(e, t):
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)


# ------------------------------------------------------------------------------------------- Tensor(...)
@pytest.mark.parametrize("args", [
    (2, 3), (0,), (2, 0), (), (torch.Size([4]),), ([1, 2],), ([1.5, 2.5],), ([[1, 2], [3, 4]],), ([],),
    ((2, 3),), ([True, False],), (np.zeros(3),), (np.arange(3),), (np.ones((2, 2), dtype=np.float32),),
])
def test_tensor_constructor_gives_torch_dtype_and_shape(args):
    eargs = tuple(ember.Size(a) if isinstance(a, torch.Size) else a for a in args)
    e, t = ember.Tensor(*eargs), torch.Tensor(*args)
    same(e, t)
    if t.numel() and not (len(args) and isinstance(args[0], int)) and not isinstance(args[0], torch.Size):
        np.testing.assert_array_equal(e.numpy(), t.numpy())  # data, not sizes (uninitialised otherwise)


def test_tensor_of_float64_array_is_float32_not_a_late_dtype_mismatch():
    """The bug: Tensor(float64 array) stayed float64, and failed much later against float32 weights."""
    x = ember.Tensor(np.random.default_rng(0).standard_normal((4, 3)))
    assert x.dtype == ember.float32
    assert ember.nn.Linear(3, 2)(x).dtype == ember.float32
    assert ember.Tensor([1, 2]).dtype == ember.float32  # ints too, as torch.Tensor([1, 2])


def test_tensor_constructor_follows_the_default_dtype():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.Tensor(2).dtype == ember.float64 and ember.Tensor([1]).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


def test_tensor_of_a_tensor_shares_storage_and_dtype():
    for lib in (torch, ember):
        a = lib.arange(3)
        b = lib.Tensor(a)
        assert b is not a and b.dtype == lib.int64 and b.data_ptr() == a.data_ptr()
        b[0] = 7
        assert a[0].item() == 7


@pytest.mark.parametrize("constructor", ["Tensor", "FloatTensor"])
def test_tensor_of_a_tensor_is_a_view_with_its_history(constructor):
    """``Tensor(t)`` is an alias of ``t`` (``t`` its ``_base``) that keeps ``t``'s history where ``t`` requires grad
    (``AliasBackward0``): an unrolled optimisation that flattens its weights with ``torch.Tensor(p.reshape(-1))``
    and differentiates its loss with respect to them (MNIST-1D's learning-rate notebook) got a tensor without a
    grad_fn, and ``autograd.grad`` refused it."""
    seen = {}
    for lib in (torch, ember):
        make = getattr(lib, constructor)
        w = lib.arange(6.0).reshape(2, 3).requires_grad_()
        flat = make(w.reshape(-1))
        plain = lib.ones(3)
        with lib.no_grad():
            quiet = make(w)
        grad, = lib.autograd.grad((flat * flat).sum(), flat, create_graph=True)
        second, = lib.autograd.grad(grad.sum(), w)
        alias = make(plain)
        alias.add_(1)
        seen[lib] = (flat.requires_grad, type(flat.grad_fn).__name__, flat.is_leaf, grad.tolist(), second.tolist(),
                     make(plain)._base is plain, alias._version, plain._version, plain.tolist(),
                     quiet.requires_grad, quiet.grad_fn, quiet._base is w)
    assert seen[ember] == seen[torch]
    assert seen[torch][1] == "AliasBackward0" and seen[torch][4] == [[2.0] * 3] * 2


@pytest.mark.parametrize("bad,error,match", [
    ((2.5,), TypeError, "data must be a sequence"),
    ((np.float64(2.5),), TypeError, "data must be a sequence"),
    (("a",), TypeError, "invalid data type 'str'"),
    ((-1,), RuntimeError, "negative dimension -1"),
    ((2, [1]), TypeError, "invalid combination of arguments"),
])
def test_tensor_constructor_errors_like_torch(bad, error, match):
    with pytest.raises(error):
        torch.Tensor(*bad)
    with pytest.raises(error, match=match):
        ember.Tensor(*bad)
    with pytest.raises(TypeError):  # keyword arguments PyTorch's legacy constructor rejects
        ember.Tensor([1.0], requires_grad=True)


def _sizes_case(lib, case):
    """The constructor call of ``case`` with ``lib``'s tensors (the sizes PyTorch takes as integers)."""
    n, m = np.int64(2), np.int32(3)
    return {
        "numpy ints": lambda: lib.Tensor(n, 3),
        "one numpy int": lambda: lib.Tensor(n),
        "typed, numpy ints": lambda: lib.FloatTensor(n, m),
        "typed, one numpy int": lambda: lib.LongTensor(n),
        "new, numpy ints": lambda: lib.zeros(1).new(n, 3),
        "0-d int array": lambda: lib.Tensor(np.array(3)),
        "0-d int tensor among sizes": lambda: lib.Tensor(2, lib.tensor(3)),
        "0-d int tensor alone is data": lambda: lib.Tensor(lib.tensor(3)),
        "0-d float array is data": lambda: lib.Tensor(np.array(3.0)),
        "sparse, numpy ints": lambda: lib.sparse.FloatTensor(n, 3),
    }[case]


@pytest.mark.filterwarnings("ignore:torch.sparse.SparseTensor:UserWarning")
@pytest.mark.parametrize("case", ["numpy ints", "one numpy int", "typed, numpy ints", "typed, one numpy int",
                                  "new, numpy ints", "0-d int array", "0-d int tensor among sizes",
                                  "0-d int tensor alone is data", "0-d float array is data", "sparse, numpy ints"])
def test_sizes_are_any_integer_like_torch(case):
    # gymnasium's Discrete(n).n is a NumPy int64: Tensor(out_features, in_features) of it is PyTorch's sizes
    same(_sizes_case(ember, case)(), _sizes_case(torch, case)())


@pytest.mark.parametrize("bad", [(True,), (np.bool_(True),), (2, np.float64(2.0)), (2, np.array([3]))])
def test_bools_floats_and_arrays_are_no_sizes_like_torch(bad):
    with pytest.raises(TypeError):
        torch.Tensor(*bad)
    with pytest.raises(TypeError):
        ember.Tensor(*bad)


# ---------------------------------------------------------------------------------- typed constructors
@pytest.mark.parametrize("name", TYPED)
@pytest.mark.parametrize("data", [[1, 2], [1.7, 2.7], [0, 1], np.array([3.9, 0.0]), np.array([-1.5, 2.5])])
def test_typed_constructors_convert_like_torch(name, data):
    e, t = getattr(ember, name)(data), getattr(torch, name)(data)
    same(e, t)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("name", TYPED)
def test_typed_constructor_sizes_and_isinstance_like_torch(name):
    same(getattr(ember, name)(2, 3), getattr(torch, name)(2, 3))
    for dtype in DTYPES:
        e, t = ember.zeros(2, dtype=getattr(ember, dtype)), torch.zeros(2, dtype=getattr(torch, dtype))
        assert isinstance(e, getattr(ember, name)) == isinstance(t, getattr(torch, name)), (name, dtype)
        assert isinstance(e, ember.Tensor)
    assert issubclass(getattr(ember, name), ember.Tensor) == issubclass(getattr(torch, name), torch.Tensor)
    assert repr(getattr(ember, name)) == repr(getattr(torch, name))


def test_typed_constructor_of_a_tensor_of_another_dtype_is_a_type_error():
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.FloatTensor(lib.zeros(2, dtype=lib.float64))
        same_dtype = lib.zeros(2)
        assert lib.FloatTensor(same_dtype).data_ptr() == same_dtype.data_ptr()


def test_parameter_isinstance_of_float_tensor():
    assert isinstance(ember.nn.Parameter(ember.zeros(1)), ember.FloatTensor)
    assert isinstance(torch.nn.Parameter(torch.zeros(1)), torch.FloatTensor)


# ---------------------------------------------------------------------------------------- Tensor.type
@pytest.mark.parametrize("dtype", DTYPES)
def test_type_string_like_torch(dtype):
    assert ember.zeros(1, dtype=getattr(ember, dtype)).type() == torch.zeros(1, dtype=getattr(torch, dtype)).type()


@pytest.mark.parametrize("target", ["FloatTensor", "LongTensor", "torch.DoubleTensor", "torch.BoolTensor", "int32"])
def test_type_casts_like_torch(target):
    def resolve(lib):
        if target.startswith("torch."):
            return target
        return getattr(lib, target)

    e, t = ember.tensor([0.5, 1.5, -2.0]).type(resolve(ember)), torch.tensor([0.5, 1.5, -2.0]).type(resolve(torch))
    same(e, t)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_type_returns_self_when_already_that_type_and_rejects_bad_names():
    for lib in (torch, ember):
        x = lib.ones(2)
        assert x.type(lib.FloatTensor) is x and x.type(lib.float32) is x
        with pytest.raises(ValueError, match="invalid type: 'float'"):
            x.type("float")
    with pytest.raises(RuntimeError, match="ember computes on the CPU"):
        ember.ones(1).type("torch.cuda.FloatTensor")


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("source", ["int64", "float64", "float32"])
def test_type_of_torch_tensor_is_the_default_float_dtype_like_torch(default, source):
    """``x.type(torch.Tensor)`` (GAN scripts' ``Tensor = torch.cuda.FloatTensor if cuda else torch.Tensor``) casts
    to the default tensor type, the default float dtype; so does its name."""
    results = {}
    for lib in (torch, ember):
        previous = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            x = lib.tensor([1.7, -2.0, 3.0], dtype=getattr(lib, source))
            results[lib] = (x.type(lib.Tensor), x.type("torch.Tensor"), x)
        finally:
            lib.set_default_dtype(previous)
    for e, t in zip(results[ember], results[torch]):
        same(e, t)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    if source == default:
        assert results[ember][0] is results[ember][2] and results[torch][0] is results[torch][2]


def test_type_rejects_classes_and_objects_that_are_no_tensor_types_like_torch():
    for lib in (torch, ember):
        x = lib.ones(2)
        for cls in (lib.nn.Module, int):
            with pytest.raises(ValueError, match=f"invalid type: '{cls.__name__}'"):
                x.type(cls)
        with pytest.raises(TypeError):
            x.type(3)


# --------------------------------------------------------------------------------------------- Variable
def test_variable_returns_a_detached_tensor_sharing_storage():
    for lib in (torch, ember):
        t = lib.ones(2, requires_grad=True)
        y = t * 2
        for src in (t, y):
            v = lib.autograd.Variable(src)
            assert isinstance(v, lib.Tensor) and v is not src and v.data_ptr() == src.data_ptr()
            assert v.requires_grad is False and v.is_leaf and v.grad_fn is None
        v = lib.autograd.Variable(lib.ones(2), requires_grad=True)
        v.sum().backward()
        assert v.grad.tolist() == [1.0, 1.0]
        assert isinstance(lib.ones(1), lib.autograd.Variable) and isinstance(v, lib.autograd.Variable)
        assert lib.autograd.Variable().shape == (0,)


def test_variable_errors_and_volatile_warning_like_torch():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            lib.autograd.Variable([1, 2])
        with pytest.raises(RuntimeError, match="can require gradients"):
            lib.autograd.Variable(lib.arange(2), requires_grad=True)
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            v = lib.autograd.Variable(lib.ones(2), volatile=True)
        assert not v.requires_grad
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.autograd.Variable(lib.ones(2), volatile=False)


def test_volatile_attribute_warns_and_is_false_like_torch():
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always False\)"):
            assert x.volatile is False
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            x.volatile = True
        assert x.requires_grad


# ----------------------------------------------------------------------------------- storage, data_ptr
@pytest.mark.parametrize("view", [
    lambda x: x, lambda x: x[1:], lambda x: x.t(), lambda x: x[:, 1], lambda x: x.reshape(-1)[2:5],
])
def test_storage_matches_torch(view):
    e, t = view(ember.arange(12.0).reshape(3, 4)), view(torch.arange(12.0).reshape(3, 4))
    for es, ts in ((e.storage(), t.storage()), (e.untyped_storage(), t.untyped_storage())):
        assert es.size() == ts.size() and len(es) == len(ts) and es.nbytes() == ts.nbytes()
        assert es.element_size() == ts.element_size()
        assert es[0] == ts[0] and es[-1] == ts[-1] and es.tolist() == ts.tolist()
    assert e.storage().dtype == ember.float32
    assert e.storage_offset() == t.storage_offset() and e.stride() == t.stride()
    assert e.data_ptr() - e.untyped_storage().data_ptr() == t.data_ptr() - t.untyped_storage().data_ptr()


def test_views_share_storage_and_copies_do_not():
    x = ember.zeros(4, 4)
    assert x[1:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr() == x.storage().data_ptr()
    assert x.clone().untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert x[1].data_ptr() == x.data_ptr() + 4 * x.element_size()
    x[0, 0] = 5.0  # storages read live memory
    assert x.storage()[0] == 5.0 and x.untyped_storage()[3] == torch.tensor([5.0]).untyped_storage()[3]


def test_storage_of_empty_and_zero_dim_tensors():
    for lib in (torch, ember):
        assert lib.zeros(0).storage().size() == 0 and lib.zeros(0).untyped_storage().nbytes() == 0
        assert lib.tensor(3.0).storage().tolist() == [3.0] and lib.tensor(3.0).stride() == ()


def test_set_default_tensor_type_like_torch():
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: deprecated since 2.1
            try:
                lib.set_default_tensor_type(lib.DoubleTensor)
                assert lib.get_default_dtype() == lib.float64 and lib.Tensor(1).dtype == lib.float64
                lib.set_default_tensor_type("torch.FloatTensor")
                assert lib.get_default_dtype() == lib.float32
                with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
                    lib.set_default_tensor_type(lib.LongTensor)
                with pytest.raises(TypeError, match="torch.cuda.FloatTensor not available"):
                    lib.set_default_tensor_type(lib.cuda.FloatTensor)
            finally:
                lib.set_default_dtype(lib.float32)


def test_variable_execution_engine_queues_callbacks():
    def queue_from_hook(lib, ran):
        def hook(grad):
            lib.autograd.Variable._execution_engine.queue_callback(lambda: ran.append(len(ran)))

        return hook

    for lib in (torch, ember):
        ran = []
        x = lib.ones(2, requires_grad=True)
        x.register_hook(queue_from_hook(lib, ran))
        (x * 2).sum().backward()
        assert ran == [0]


# ---------------------------------------------------------------- legacy typed storages

STORAGE_CASES = [
    ("ByteStorage", b"abc", None, -1, 0),
    ("ByteStorage", bytearray(b"abcdef"), "middle", 2, 1),  # byte_order is not looked at for one-byte elements
    ("FloatStorage", np.arange(3, dtype="<f4").tobytes(), "little", -1, 0),
    ("FloatStorage", np.arange(3, dtype=">f4").tobytes(), "big", 2, 4),
    ("LongStorage", np.arange(3, dtype=np.int64).tobytes(), "native", -1, 8),
    ("ShortStorage", np.arange(3, dtype="<i2").tobytes(), "little", -1, 0),
]


@pytest.mark.parametrize("name,buffer,order,count,offset", STORAGE_CASES)
def test_storage_from_buffer_as_pytorch(name, buffer, order, count, offset):
    order = () if order is None else (order,)
    t = getattr(torch, name).from_buffer(buffer, *order, count=count, offset=offset)
    e = getattr(ember, name).from_buffer(buffer, *order, count=count, offset=offset)
    assert e.tolist() == t.tolist() and e.size() == t.size() and str(e.dtype)[6:] == str(t.dtype)[6:]
    tensor = torch.ByteTensor if name == "ByteStorage" else getattr(torch, name.replace("Storage", "Tensor"))
    np.testing.assert_array_equal(getattr(ember, tensor.__name__)(e).numpy(), tensor(t).numpy())


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_storage_from_buffer_errors_and_sharing(m):
    with pytest.raises(RuntimeError):  # wider elements need the byte order
        m.FloatStorage.from_buffer(b"\0" * 8)
    with pytest.raises(ValueError):  # not a whole number of elements
        m.FloatStorage.from_buffer(b"\0" * 6, "little")
    with pytest.raises(ValueError):  # more elements asked for than there are
        m.ByteStorage.from_buffer(b"abc", count=5)
    with pytest.raises(ValueError):
        m.ByteStorage.from_buffer(b"abc", offset=10)
    with pytest.raises(RuntimeError):  # a storage of another dtype
        m.ByteTensor(m.FloatStorage(2))
    buffer = bytearray(b"ab")
    storage = m.ByteStorage.from_buffer(buffer)
    t = m.ByteTensor(storage)
    t[0] = 5  # the tensor writes the storage's memory, a copy of the buffer's
    assert storage.tolist() == [5, 98] and buffer == bytearray(b"ab")
    assert m.ByteStorage(3).size() == 3 and m.LongStorage([1, 2]).tolist() == [1, 2]


def test_legacy_function_instance_call_is_pytorchs_runtime_error():
    # pygcn-era code: SparseMM()(adj, x) with a non-static forward
    for lib in (torch, ember):
        class Double(lib.autograd.Function):
            def forward(self, a):
                return a * 2

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # PyTorch's notice on instantiating
            legacy = Double()
        with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method"):
            legacy(lib.ones(2))


def test_variable_volatile_and_requires_grad_is_a_value_error_like_torch():
    for lib in (torch, ember):
        for data in (lib.ones(2), 3):
            with pytest.warns(UserWarning, match="volatile was removed"):
                with pytest.raises(ValueError, match="can't be volatile and require_grad at the same time"):
                    lib.autograd.Variable(data, requires_grad=True, volatile=True)
