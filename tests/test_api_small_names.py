"""Small names public PyTorch code uses (found by tools/api_coverage.py), each against torch."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


@pytest.mark.parametrize("call", [
    lambda m, **k: m.zeros(2, 3, **k), lambda m, **k: m.ones(2, **k), lambda m, **k: m.full((2,), 1.5, **k),
    lambda m, **k: m.arange(4, **k), lambda m, **k: m.linspace(0, 1, 5, **k), lambda m, **k: m.eye(2, **k),
    lambda m, **k: m.zeros_like(m.ones(3), **k), lambda m, **k: m.empty(0, **k).shape,
    lambda m, **k: m.logspace(0, 1, 3, **k),
])
def test_factories_take_layout_and_pin_memory(call):
    e = call(ember, layout=ember.strided, pin_memory=False)
    t = call(torch, layout=torch.strided, pin_memory=False)
    if isinstance(t, torch.Size):
        assert tuple(e) == tuple(t)
    else:
        assert_close(e, t)


def test_factory_refuses_another_layout():
    with pytest.raises(NotImplementedError, match="strided"):
        ember.zeros(2, layout=ember.sparse_coo)


def test_module_type_casts_parameters_and_buffers_as_pytorch():
    for dst in ("float64", "DoubleTensor"):
        mods = []
        for m in (ember, torch):
            bn = m.nn.BatchNorm1d(2)
            out = bn.type(getattr(m, dst) if dst == "float64" else f"torch.{dst}")
            assert out is bn
            mods.append(bn)
        for name in ("weight", "bias", "running_mean", "num_batches_tracked"):
            assert str(getattr(mods[0], name).dtype).split(".")[1] == str(getattr(mods[1], name).dtype).split(".")[1]
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="floating point"):
            m.nn.Linear(2, 2).type(m.int32)


def test_module_compile_runs_the_module_as_written():
    lin = ember.nn.Linear(3, 2)
    x = ember.randn(4, 3)
    before = lin(x)
    assert lin.compile(dynamic=True, mode="max-autotune") is None
    assert_close(lin(x), before)


@pytest.mark.parametrize("args", [(2, 3), (ember.Size([2]),), ([1, 2],), ()], ids=["sizes", "Size", "data", "none"])
def test_tensor_new(args):
    x = ember.ones(2, dtype=ember.int32)
    targs = tuple(torch.Size(a) if isinstance(a, ember.Size) else a for a in args)
    e, t = x.new(*args), torch.ones(2, dtype=torch.int32).new(*targs)
    assert tuple(e.shape) == tuple(t.shape) and e.dtype == ember.int32 and t.dtype == torch.int32
    if args and isinstance(args[0], list):
        assert_close(e, t)


def test_dense_to_dense_is_itself():
    for m in (ember, torch):
        x = m.ones(2)
        assert x.to_dense() is x
    assert_close(ember.ones(2).to_dense(ember.float64), torch.ones(2).to_dense(torch.float64))


def test_params_t_is_the_optimizer_params_type():
    assert "Iterable" in str(ember.optim.optimizer.ParamsT)
    params: ember.optim.optimizer.ParamsT = [ember.nn.Parameter(ember.ones(1))]
    ember.optim.SGD(params, lr=0.1)


def test_from_file(tmp_path):
    path = str(tmp_path / "values.bin")
    np.arange(10, dtype=np.float32).tofile(path)
    for kwargs in ({"size": 4}, {"size": 3, "dtype": "int32"}, {}):
        ek = {k: getattr(ember, v) if k == "dtype" else v for k, v in kwargs.items()}
        tk = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
        assert_close(ember.from_file(path, **ek), torch.from_file(path, **tk))
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="smaller than the required mapping size"):
            m.from_file(path, size=20)
    shared = ember.from_file(path, shared=True, size=10)
    shared[0] = 42.0
    assert np.fromfile(path, np.float32)[0] == 42.0
    private = ember.from_file(path, shared=False, size=10)
    private[1] = 7.0
    assert np.fromfile(path, np.float32)[1] == 1.0


def test_autograd_grad_only_inputs_is_ignored_with_pytorch_warning():
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            (g,) = m.autograd.grad((x * 3).sum(), x, only_inputs=False)
        assert g.tolist() == [3.0, 3.0]


def test_compiler_disable_and_is_compiling():
    def f(x):
        return x + 1

    for m in (ember, torch):
        assert m.compiler.is_compiling() is False
        assert m.compiler.disable(f)(1) == 2 and m.compiler.disable()(f)(1) == 2


def test_checkpoint_gives_the_values_and_gradients_of_pytorch():
    import torch.utils.checkpoint as tc

    import ember.utils.checkpoint as ec

    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    grads = []
    for m, c in ((ember, ec), (torch, tc)):
        wt, xt = m.tensor(w, requires_grad=True), m.tensor(x, requires_grad=True)
        y = c.checkpoint(lambda a, b: (a @ b).tanh(), xt, wt, use_reentrant=False)
        seq = m.nn.Sequential(m.nn.Tanh(), m.nn.Sigmoid())
        z = c.checkpoint_sequential(seq, 2, y, use_reentrant=False)
        z.sum().backward()
        grads.append((z, wt.grad, xt.grad))
    for e, t in zip(*grads):
        assert_close(e, t)
    for c in (ec, tc):
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            m = ember if c is ec else torch  # (an input that requires grad: no other warning)
            c.checkpoint(lambda a: a * 2, m.ones(1, requires_grad=True))
    for c in (ec, tc):  # no input requires grad: PyTorch's reentrant checkpoint warns, and so does ember's
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            c.checkpoint(lambda a: a, ember.ones(1) if c is ec else torch.ones(1), use_reentrant=True)


def test_get_autocast_gpu_and_cpu_dtype_as_pytorch():
    for name in ("get_autocast_gpu_dtype", "get_autocast_cpu_dtype"):
        with pytest.warns(DeprecationWarning, match="deprecated"):
            got = getattr(ember, name)()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(torch, name)()
        assert str(got).split(".")[1] == str(want).split(".")[1]


def test_cuda_peak_memory_reset_is_a_no_op():
    assert ember.cuda.reset_peak_memory_stats() is None and ember.cuda.reset_max_memory_allocated() is None
    assert ember.cuda.max_memory_allocated() == 0


def test_optim_adamw_module():
    from ember.optim.adamw import AdamW

    assert AdamW is ember.optim.AdamW


def test_flatten_and_unflatten_dense_tensors_as_pytorch():
    import torch._utils as tu

    import ember._utils as eu

    arrays = [np.arange(4, dtype=np.float32).reshape(2, 2), np.array([5.0, 6.0, 7.0], dtype=np.float32)]
    e_flat = eu._flatten_dense_tensors([ember.tensor(a) for a in arrays])
    t_flat = tu._flatten_dense_tensors([torch.tensor(a) for a in arrays])
    assert_close(e_flat, t_flat)
    e_parts = eu._unflatten_dense_tensors(e_flat * 2, [ember.tensor(a) for a in arrays])
    t_parts = tu._unflatten_dense_tensors(t_flat * 2, [torch.tensor(a) for a in arrays])
    for e, t in zip(e_parts, t_parts):
        assert_close(e, t)


@pytest.mark.parametrize("shape, dim, keepdim", [((4, 7), -1, False), ((4, 7), 0, True), ((3, 5, 6), 1, False),
                                                 ((9,), 0, False), ((), 0, False)])
def test_mode_values_indices_and_gradient_as_pytorch(shape, dim, keepdim):
    from oracle import check

    data = np.random.default_rng(1).integers(0, 4, size=shape).astype(np.float32)  # many ties
    check(lambda m, x: m.mode(x, dim, keepdim), [data])
    check(lambda m, x: x.mode(dim=dim, keepdim=keepdim).values * 2, [data])


@pytest.mark.parametrize("call", [
    lambda s, x: s.expm1(x), lambda s, x: s.exp2(x), lambda s, x: s.expit(x), lambda s, x: s.erf(x),
    lambda s, x: s.erfc(x), lambda s, x: s.log1p(x.abs()), lambda s, x: s.logsumexp(x, 1),
    lambda s, x: s.softmax(x, 1), lambda s, x: s.log_softmax(x, 0), lambda s, x: s.round(x, decimals=1),
    lambda s, x: s.logit(x.sigmoid(), eps=1e-6), lambda s, x: s.erfinv(x.tanh() * 0.9),
])
def test_special_as_pytorch(call):
    from oracle import check

    import ember.special  # noqa: F401

    check(lambda m, x: call(m.special, x), [(3, 4)])


@pytest.mark.parametrize("shape, groups", [((4, 2, 3), 1), ((4, 4, 3, 3), 2), ((2, 3, 3, 5, 5), 1), ((6, 2, 4), 3)])
def test_dirac_init_as_pytorch(shape, groups):
    e, t = ember.empty(*shape), torch.empty(*shape)
    assert ember.nn.init.dirac_(e, groups) is e
    torch.nn.init.dirac_(t, groups)
    assert_close(e, t)


def test_dirac_init_errors_as_pytorch():
    for m in (ember, torch):
        with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
            m.nn.init.dirac_(m.empty(2, 2))
        with pytest.raises(ValueError, match="divisible by groups"):
            m.nn.init.dirac_(m.empty(3, 2, 3), groups=2)


@pytest.mark.parametrize("call", [
    lambda m, y, x: m.trapezoid(y), lambda m, y, x: m.trapezoid(y, dx=0.5), lambda m, y, x: m.trapezoid(y, dim=0),
    lambda m, y, x: m.trapezoid(y, x[0]), lambda m, y, x: m.trapezoid(y, x),
    lambda m, y, x: m.trapz(y, x[0]), lambda m, y, x: m.trapz(y, dx=2.0, dim=0),
    lambda m, y, x: m.cumulative_trapezoid(y), lambda m, y, x: m.cumulative_trapezoid(y, x, dim=-1),
    lambda m, y, x: m.cumulative_trapezoid(y, x[1], dim=1), lambda m, y, x: m.cumulative_trapezoid(y, dx=0.5, dim=0),
    lambda m, y, x: m.cumulative_trapezoid(y[:, :1]), lambda m, y, x: m.cumulative_trapezoid(y[:, :0]),
])
def test_trapezoid_values_and_gradients_as_pytorch(call):
    from oracle import check

    check(call, [(3, 4), (3, 4)])


def test_module_to_empty_keeps_shapes_and_dtypes():
    lin = ember.nn.Linear(3, 2).double()
    assert lin.to_empty(device="cpu") is lin
    assert lin.weight.shape == (2, 3) and lin.weight.dtype == ember.float64 and lin.bias.shape == (2,)


@pytest.mark.parametrize("q", [0.3, [0.0, 0.25, 0.5, 1.0]])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (1, False), (0, True), (-1, True)])
def test_quantile_values_and_gradients_as_pytorch(q, interpolation, dim, keepdim):
    from oracle import check

    def call(m, x):
        qq = m.tensor(q, dtype=x.dtype) if isinstance(q, list) else q
        return m.quantile(x, qq, dim, keepdim, interpolation=interpolation)

    check(call, [(3, 5)])
    check(lambda m, x: call(m, x) * 1, [(3, 5)], dtype=np.float64)


def test_quantile_nan_and_errors_as_pytorch():
    a = np.array([[1.0, np.nan, 2.0], [0.0, 5.0, 3.0]], dtype=np.float32)
    assert_close(ember.tensor(a).quantile(0.5, dim=1), torch.tensor(a).quantile(0.5, dim=1))
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match=r"q must be in the range \[0, 1\]"):
            m.quantile(m.ones(3), 1.5)
        with pytest.raises(RuntimeError, match="float or double"):
            m.quantile(m.ones(3, dtype=m.int64), 0.5)


def test_cuda_device_context_as_pytorch_without_cuda():
    for m in (ember, torch):
        ctx = m.cuda.device(0)  # constructing one is fine
        with pytest.raises(RuntimeError):
            with ctx:
                pass
        with m.cuda.device(-1):  # no device: nothing to switch
            pass
    with pytest.raises(RuntimeError, match="needs a CUDA device"):
        with ember.cuda.device("cuda:1"):
            pass


@pytest.mark.parametrize("call", [
    lambda m, x: m.rad2deg(x), lambda m, x: x.deg2rad(), lambda m, x: (x * 1).rad2deg_(), lambda m, x: (x * 1).deg2rad_(),
])
def test_rad2deg_deg2rad_as_pytorch(call):
    from oracle import check

    check(call, [(3, 4)])
    for m in (ember, torch):  # integers become the default float dtype
        assert m.rad2deg(m.tensor([1, 2])).dtype == m.float32 and m.deg2rad(m.tensor([180])).dtype == m.float32
    assert ember.rad2deg(ember.tensor([1.0], dtype=ember.float64)).tolist() == \
        torch.rad2deg(torch.tensor([1.0], dtype=torch.float64)).tolist()
