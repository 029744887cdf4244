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


# ---------------------------------------------------------------- small functions

V = np.array([1.5, np.inf, -np.inf, np.nan, 0.0, -2.0], dtype=np.float32)


@pytest.mark.parametrize("name", ["isposinf", "isneginf", "isreal"])
def test_value_tests_as_torch(name):
    for values in (V, V.astype(np.float64), np.array([1, -3], dtype=np.int64)):
        assert_close(getattr(ember, name)(ember.tensor(values)), getattr(torch, name)(torch.tensor(values)))
        assert_close(getattr(ember.tensor(values), name)(), getattr(torch.tensor(values), name)())
    c = np.array([1 + 0j, 1j, np.inf + 0j], dtype=np.complex64)
    if name == "isreal":
        assert_close(ember.isreal(ember.tensor(c)), torch.isreal(torch.tensor(c)))
    else:
        with pytest.raises(RuntimeError, match="does not support complex inputs") as t_err:
            getattr(torch, name)(torch.tensor(c))
        with pytest.raises(RuntimeError) as e_err:
            getattr(ember, name)(ember.tensor(c))
        assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("make", [
    lambda m, a, b: m.float_power(a, b), lambda m, a, b: m.float_power(a, 2), lambda m, a, b: a.float_power(b),
    lambda m, a, b: m.float_power(a, 0.5), lambda m, a, b: m.float_power(a.to(m.float32), b.to(m.float32)),
])
def test_float_power_values_and_gradients_as_torch(make):
    a, b = np.array([0.5, 2.0, 3.0]), np.array([1.5, -1.0, 2.0])
    te, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ee, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    t, e = make(torch, te, tb), make(ember, ee, eb)
    assert e.dtype == ember.float64 and t.dtype == torch.float64
    assert_close(e, t)
    t.sum().backward()
    e.sum().backward()
    assert_close(ee.grad, te.grad)
    if tb.grad is not None:
        assert_close(eb.grad, tb.grad)
    assert_close(ember.float_power(ember.tensor([2, 3]), 3), torch.float_power(torch.tensor([2, 3]), 3))
    assert_close(ember.float_power(ember.tensor([2.0]), ember.tensor([1j])),
                 torch.float_power(torch.tensor([2.0]), torch.tensor([1j])))


def test_cartesian_prod_values_gradients_and_errors_as_torch():
    a, b, c = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0]), np.array([6.0])
    ts = [torch.tensor(x, requires_grad=True) for x in (a, b, c)]
    es = [ember.tensor(x, requires_grad=True) for x in (a, b, c)]
    t, e = torch.cartesian_prod(*ts), ember.cartesian_prod(*es)
    assert_close(e, t)
    weights = np.arange(t.numel(), dtype=np.float64).reshape(t.shape)
    (t * torch.tensor(weights)).sum().backward()
    (e * ember.tensor(weights)).sum().backward()
    for x, y in zip(es, ts):
        assert_close(x.grad, y.grad)
    assert_close(ember.cartesian_prod(ember.tensor(b)), torch.cartesian_prod(torch.tensor(b)))
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
        torch.cartesian_prod(torch.ones(2, 2), torch.ones(2))
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
        ember.cartesian_prod(ember.ones(2, 2), ember.ones(2))


@pytest.mark.parametrize("values, dim", [
    ([1, 1, 2, 2, 3, 1, 1, 2], None), ([], None), ([[1, 1], [2, 2]], None), ([5], None),
    ([[1, 2], [1, 2], [3, 4], [1, 2]], 0), ([[1, 1, 2], [3, 3, 4]], 1), ([[1, 1, 2], [3, 3, 4]], -1),
    ([[[1.0, 1.0]], [[1.0, 1.0]]], 0),
])
@pytest.mark.parametrize("inverse, counts", [(False, False), (True, False), (False, True), (True, True)])
def test_unique_consecutive_as_torch(values, dim, inverse, counts):
    a = np.array(values, dtype=np.float32 if values and isinstance(np.ravel(values)[0], float) else np.int64)
    e = ember.unique_consecutive(ember.tensor(a), return_inverse=inverse, return_counts=counts, dim=dim)
    t = torch.unique_consecutive(torch.tensor(a), return_inverse=inverse, return_counts=counts, dim=dim)
    for x, y in zip(*((e, t) if isinstance(t, tuple) else ((e,), (t,)))):
        assert_close(x, y)
    assert_close(ember.tensor(a).unique_consecutive(dim=dim), torch.tensor(a).unique_consecutive(dim=dim))


def test_split_with_sizes_and_expand_copy_as_torch():
    a = np.arange(10.0).reshape(5, 2)
    for m in (ember, torch):
        assert isinstance(m.split_with_sizes(m.tensor(a), [2, 3]), tuple)
    for x, y in zip(ember.split_with_sizes(ember.tensor(a), [1, 1], dim=1), torch.tensor(a).split_with_sizes([1, 1], 1)):
        assert_close(x, y)
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=r"expects split_sizes to sum exactly to 5 .*split_sizes=\[2, 2\]"):
            lib.split_with_sizes(lib.tensor(a), [2, 2])
    te, ee = torch.tensor([[1.0], [2.0]], requires_grad=True), ember.tensor([[1.0], [2.0]], requires_grad=True)
    t, e = torch.expand_copy(te, (2, 3)), ember.expand_copy(ee, (2, 3))
    assert_close(e, t)
    assert e.is_contiguous() and not np.shares_memory(e.numpy(force=True), ee.numpy(force=True))
    (t * torch.arange(6.0).reshape(2, 3)).sum().backward()
    (e * ember.arange(6.0).reshape(2, 3)).sum().backward()
    assert_close(ee.grad, te.grad)


def test_deterministic_debug_mode_as_torch():
    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        for mode in ("warn", 2, "default", 1, "error", 0):
            torch.set_deterministic_debug_mode(mode)
            ember.set_deterministic_debug_mode(mode)
            assert ember.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert ember.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
            assert ember.is_deterministic_algorithms_warn_only_enabled() == \
                torch.is_deterministic_algorithms_warn_only_enabled()
        for bad, error in (("loud", RuntimeError), (3, RuntimeError), (1.0, TypeError)):
            with pytest.raises(error) as t_err:
                torch.set_deterministic_debug_mode(bad)
            with pytest.raises(error) as e_err:
                ember.set_deterministic_debug_mode(bad)
            assert str(e_err.value) == str(t_err.value)
    finally:
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
        ember.use_deterministic_algorithms(False)


def test_log_normal_fills_as_torch():
    ember.manual_seed(0)
    e = ember.empty(200_000, dtype=ember.float64).log_normal_(0.5, 0.25)
    logs = np.log(e.numpy())
    assert abs(logs.mean() - 0.5) < 0.005 and abs(logs.std() - 0.25) < 0.005
    t = torch.empty(5).log_normal_()
    assert (t > 0).all() and (ember.empty(5).log_normal_().numpy() > 0).all()  # the defaults, mean 1, std 2
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0, but found std=0"):
        torch.ones(2).log_normal_(std=0)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0, but found std=0"):
        ember.ones(2).log_normal_(std=0)


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_is_pinned_layout_and_is_storage_as_torch():
    assert ember.ones(2).is_pinned() is torch.ones(2).is_pinned() is False
    assert isinstance(ember.strided, ember.layout) and isinstance(torch.strided, torch.layout)
    assert isinstance(ember.sparse_coo, ember.layout) and not isinstance("strided", ember.layout)
    for lib in (ember, torch):
        t = lib.ones(2)
        assert lib.is_storage(t.untyped_storage()) and lib.is_storage(lib.FloatStorage(2))
        assert not lib.is_storage(t) and not lib.is_storage(np.ones(2))


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, -2.0), (0, 1)])
def test_addmm_in_place_values_and_gradients_as_torch(beta, alpha):
    rng = np.random.default_rng(0)
    c, a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((4, 3))
    results = []
    for lib in (torch, ember):
        leaves = [lib.tensor(v, requires_grad=True) for v in (c, a, b)]
        x = leaves[0] * 1.0  # a non-leaf, written in place
        out = x.addmm_(leaves[1], leaves[2], beta=beta, alpha=alpha)
        assert out is x
        (out * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
        results.append((out.detach(), [t.grad for t in leaves]))
    assert_close(results[1][0], results[0][0])
    for e, t in zip(results[1][1], results[0][1]):
        assert_close(e, t)
    plain = ember.tensor(c)  # no graph: written in memory
    plain.addmm_(ember.tensor(a), ember.tensor(b))
    assert_close(plain, torch.tensor(c).addmm_(torch.tensor(a), torch.tensor(b)))
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=r"Bad in-place call: input tensor size \[1, 3\] and output tensor "
                                               r"size \[2, 3\] should match"):
            lib.ones(1, 3).addmm_(lib.ones(2, 2), lib.ones(2, 3))


def _cube_function(lib, decorate):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @decorate
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            assert not lib.is_grad_enabled()  # once_differentiable runs backward under no_grad
            return grad * 3 * x ** 2

    return Cube


def test_once_differentiable_as_torch():
    a = np.array([0.5, -2.0, 3.0])
    results = []
    for lib, decorate in ((torch, torch.autograd.function.once_differentiable),
                          (ember, ember.autograd.function.once_differentiable)):
        cube = _cube_function(lib, decorate)
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(cube.apply(x).sum(), x)
        assert not g.requires_grad
        (g1,) = lib.autograd.grad(cube.apply(x).sum(), x, create_graph=True)
        assert not g1.requires_grad  # no input of backward requires grad: plain results
        v = lib.tensor([1.0, 2.0, -1.0], dtype=lib.float64, requires_grad=True)
        (g2,) = lib.autograd.grad(cube.apply(x), x, grad_outputs=v, create_graph=True)
        assert g2.requires_grad and g2.grad_fn is not None
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                               "@once_differentiable"):
            g2.sum().backward()
        results.append((g, g2.detach()))
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])


def test_binomial_as_torch():
    ember.manual_seed(0)
    count, prob = np.full(200_000, 10.0, dtype=np.float32), np.full(200_000, 0.3, dtype=np.float32)
    e = ember.binomial(ember.tensor(count), ember.tensor(prob))
    assert e.dtype == ember.float32 and torch.binomial(torch.tensor(count[:2]), torch.tensor(prob[:2])).dtype == torch.float32
    assert abs(float(e.mean()) - 3.0) < 0.02 and abs(float(e.var()) - 2.1) < 0.05
    assert (e.numpy() == np.round(e.numpy())).all() and e.numpy().min() >= 0 and e.numpy().max() <= 10
    edge = np.array([5.0, 5.0, 0.0]), np.array([1.5, -0.5, 0.5])
    assert_close(ember.binomial(*(ember.tensor(v) for v in edge)), torch.binomial(*(torch.tensor(v) for v in edge)))
    for bad, error in (((np.array([10]), np.array([0.5])), ValueError),
                       ((np.array([10.0], dtype=np.float32), np.array([0.5])), RuntimeError)):
        with pytest.raises(error) as t_err:
            torch.binomial(*(torch.tensor(v) for v in bad))
        with pytest.raises(error) as e_err:
            ember.binomial(*(ember.tensor(v) for v in bad))
        assert str(e_err.value) == str(t_err.value)


def test_fork_rng_restores_the_generator_as_torch():
    for lib in (torch, ember):
        lib.manual_seed(3)
        with lib.random.fork_rng(devices=[]):
            inside = lib.rand(4)
        after = lib.rand(4)
        assert_close(after, inside)  # the same draws: the state was restored
        with lib.random.fork_rng(enabled=False):
            lib.rand(4)
        assert not lib.equal(lib.rand(4), after)
    with pytest.raises(RuntimeError, match="only the CPU"):
        with ember.random.fork_rng(devices=[0]):
            pass


def test_symeig_is_removed_as_in_torch():
    with pytest.raises(RuntimeError) as t_err:
        torch.symeig(torch.eye(2), eigenvectors=True)
    with pytest.raises(RuntimeError) as e_err:
        ember.symeig(ember.eye(2), eigenvectors=True)
    assert str(e_err.value) == str(t_err.value)


def test_init_device_mesh_where_torch_distributed_tensor_has_it():
    import torch.distributed.tensor

    import ember.distributed.device_mesh
    import ember.distributed.tensor

    assert torch.distributed.tensor.init_device_mesh is torch.distributed.device_mesh.init_device_mesh
    assert ember.distributed.tensor.init_device_mesh is ember.distributed.device_mesh.init_device_mesh
