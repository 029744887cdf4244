"""The lazy modules (LazyLinear, LazyConv1d/2d/3d, LazyBatchNorm1d/2d/3d) against PyTorch's: the sizes inferred at
the first forward, the parameters initialised with the same draws under the same seed, the repr before and after,
state_dict keys, loading into an uninitialised module, an optimizer built before the first forward, deepcopy."""

import copy
import re

import numpy as np
import pytest
import torch

import ember


def _both(build, x_shape, seed=0):
    """(ember module, torch module) built by ``build(nn)`` and called once on ones of ``x_shape`` under ``seed``."""
    out = []
    for m in (ember, torch):
        m.manual_seed(seed)
        module = build(m.nn)
        module(m.ones(*x_shape))
        out.append(module)
    return out


def _same_state(e_module, t_module, rtol=0.0):
    e_state, t_state = e_module.state_dict(), t_module.state_dict()
    assert list(e_state) == list(t_state)
    for key in t_state:
        np.testing.assert_allclose(e_state[key].numpy(), t_state[key].numpy(), rtol=rtol, atol=rtol, err_msg=key)


@pytest.mark.parametrize("build, x_shape", [
    (lambda nn: nn.LazyLinear(4), (2, 3)),
    (lambda nn: nn.LazyLinear(4, bias=False), (5,)),
    (lambda nn: nn.LazyConv1d(4, 3, groups=2), (6, 5)),
    (lambda nn: nn.LazyConv2d(8, 3, padding=1), (1, 5, 6, 6)),
    (lambda nn: nn.LazyConv3d(2, 1, bias=False), (1, 3, 2, 2, 2)),
    (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    (lambda nn: nn.LazyBatchNorm2d(affine=False), (2, 3, 4, 4)),
    (lambda nn: nn.LazyBatchNorm2d(affine=False, track_running_stats=False), (2, 3, 4, 4)),
    (lambda nn: nn.LazyBatchNorm3d(momentum=None), (2, 3, 1, 2, 2)),
    (lambda nn: nn.LazyBatchNorm1d(bias=False), (4, 3, 2)),
    (lambda nn: nn.LazyConvTranspose2d(4, 3, stride=2, groups=2, output_padding=1), (1, 6, 3, 3)),
    (lambda nn: nn.LazyConvTranspose1d(2, 3, bias=False), (3, 5)),
    (lambda nn: nn.LazyConvTranspose3d(2, 2, dilation=2), (1, 2, 3, 3, 3)),
    (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 5)),
    (lambda nn: nn.LazyInstanceNorm2d(momentum=0.5), (2, 3, 4, 4)),
    (lambda nn: nn.LazyInstanceNorm3d(affine=False), (2, 3, 2, 2, 2)),
])
def test_first_forward_initialises_as_pytorchs(build, x_shape):
    e_module, t_module = _both(build, x_shape)
    assert repr(e_module) == repr(t_module)  # (Linear(in_features=3, ...): the module it stands for)
    _same_state(e_module, t_module)
    assert type(e_module) is getattr(ember.nn, type(t_module).__name__)  # (the class it stands for, as PyTorch's)
    assert not e_module._forward_pre_hooks and not e_module._hooks_in("_load_state_dict_pre_hooks")


def test_before_the_first_forward():
    for m in (ember, torch):
        lazy = m.nn.LazyLinear(4)
        assert repr(lazy) == "LazyLinear(in_features=0, out_features=4, bias=True)"
        assert lazy.has_uninitialized_params()
        assert isinstance(lazy.weight, m.nn.parameter.UninitializedParameter)
        assert isinstance(lazy.weight, m.nn.Parameter)
        state = lazy.state_dict()
        assert list(state) == ["weight", "bias"]
        assert isinstance(state["weight"], m.nn.parameter.UninitializedParameter)
        norm = m.nn.LazyBatchNorm1d()
        assert list(norm.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
        assert isinstance(norm.running_mean, m.nn.parameter.UninitializedBuffer)
        assert repr(m.nn.LazyConv2d(8, 3)) == "LazyConv2d(0, 8, kernel_size=(3, 3), stride=(1, 1))"
    assert not isinstance(ember.nn.Parameter(ember.ones(2)), ember.nn.parameter.UninitializedParameter)


def test_the_same_draws_as_the_layer_it_stands_for():
    ember.manual_seed(3)
    lazy = ember.nn.LazyLinear(5)
    lazy(ember.ones(2, 7))
    after_lazy = ember.rand(3)
    torch.manual_seed(3)
    eager = torch.nn.Linear(7, 5)
    after_eager = torch.rand(3)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), eager.weight.detach().numpy())
    np.testing.assert_array_equal(after_lazy.numpy(), after_eager.numpy())  # no draw at construction


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_optimizer_built_before_the_first_forward(optimizer):
    results = []
    for m in (ember, torch):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.LazyLinear(5), m.nn.ReLU(), m.nn.LazyLinear(2))
        opt = getattr(m.optim, optimizer)(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            model(m.linspace(-1, 1, 12).reshape(3, 4)).square().sum().backward()
            opt.step()
        assert opt.param_groups[0]["params"][0] is model[0].weight
        results.append(model)
    _same_state(*results, rtol=1e-5)  # (two steps of float32 arithmetic)
    assert repr(results[0]) == repr(results[1])


def test_load_state_dict_into_an_uninitialised_module():
    for m in (ember, torch):
        m.manual_seed(0)
        source = m.nn.Linear(3, 4)
        lazy = m.nn.LazyLinear(4)
        lazy.load_state_dict(source.state_dict())
        assert (lazy.in_features, tuple(lazy.weight.shape)) == (0, (4, 3))
        assert repr(lazy) == "LazyLinear(in_features=0, out_features=4, bias=True)"
        np.testing.assert_array_equal(lazy.weight.detach().numpy(), source.weight.detach().numpy())
        assert tuple(lazy(m.ones(1, 3)).shape) == (1, 4)
        assert lazy.in_features == 3 and repr(lazy) == "Linear(in_features=3, out_features=4, bias=True)"
        # a lazy module's state dict leaves another lazy module uninitialised
        other = m.nn.LazyLinear(4)
        other.load_state_dict(m.nn.LazyLinear(4).state_dict())
        assert other.has_uninitialized_params()
        norm = m.nn.LazyBatchNorm2d()
        norm.load_state_dict(m.nn.BatchNorm2d(3).state_dict())
        assert tuple(norm.running_var.shape) == (3,)


def test_deepcopy_and_refusals():
    for m in (ember, torch):
        copied = copy.deepcopy(m.nn.LazyLinear(3))
        assert copied.has_uninitialized_params()
        assert tuple(copied(m.ones(2, 2)).shape) == (2, 3)
        with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
            m.nn.LazyConv2d(2, 3)(m.ones(3, 3))
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            m.nn.LazyConv2d(2, 3, groups=2)(m.ones(1, 3, 4, 4))
        with pytest.raises(ValueError, match='^Only "zeros" padding mode is supported for LazyConvTranspose1d$'):
            m.nn.LazyConvTranspose1d(2, 3, padding_mode="reflect")
        wide = m.nn.LazyLinear(3, dtype=m.float64)
        wide(m.ones(2, 2, dtype=m.float64))
        assert wide.weight.dtype == m.float64


def test_a_type_test_after_the_first_forward_sees_the_plain_layer_as_pytorchs():
    """d2l's ``init_weights`` tests ``type(m) == nn.Linear`` after one forward: it must reach the lazy layers."""
    results = []
    for m in (ember, torch):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.LazyLinear(8), m.nn.ReLU(), m.nn.LazyLinear(2))
        net(m.ones(3, 5))

        def init_weights(module, m=m):
            if type(module) == m.nn.Linear:  # noqa: E721 (d2l's spelling)
                m.nn.init.constant_(module.weight, 0.5)

        net.apply(init_weights)
        with m.no_grad():
            results.append(([type(layer).__name__ for layer in net], float(net(m.ones(1, 5)).sum())))
    assert results[0][0] == results[1][0] == ["Linear", "ReLU", "Linear"]
    assert results[0][1] == pytest.approx(results[1][1], rel=1e-6)  # (the first bias's draws; the weights 0.5)


def _error(method, m):
    try:
        method(m.nn.Sequential(m.nn.LazyLinear(3), m.nn.LazyBatchNorm1d()))
    except Exception as error:  # noqa: BLE001 (the error compared with PyTorch's)
        return type(error), str(error)
    return None


@pytest.mark.parametrize("method", [
    lambda net: sum(p.numel() for p in net.parameters()),  # counting a lazy model's parameters
    lambda net: [b.nelement() for b in net.buffers()],
    lambda net: net.requires_grad_(False),
    lambda net: net.share_memory(),
    lambda net: net[0].weight.share_memory_(),
])
def test_an_uninitialised_parameter_refuses_as_pytorchs(method):
    errors = [_error(method, m) for m in (ember, torch)]
    assert errors[1] is not None
    assert errors[0] == errors[1]


def test_uninitialised_tensors_become_plain_ones_at_the_first_forward_as_pytorchs():
    for m in (ember, torch):
        net = m.nn.Sequential(m.nn.LazyLinear(3), m.nn.LazyBatchNorm1d())
        assert isinstance(net[0].weight, m.nn.parameter.UninitializedParameter)
        assert repr(net[1].running_mean) == "<UninitializedBuffer>"
        net(m.ones(4, 5))
        assert sum(p.numel() for p in net.parameters()) == 15 + 3 + 3 + 3
        assert type(net[0].weight) is m.nn.Parameter and type(net[1].running_mean) is m.Tensor


@pytest.mark.parametrize("read", [
    "shape", "numel", "nelement", "dim", "ndimension", "stride", "is_contiguous", "element_size", "item", "tolist",
    "numpy", "data_ptr", "untyped_storage", "storage", "__len__", "__array__", "iter",
    "size", "dtype", "device", "requires_grad", "ndim", "grad",  # (these PyTorch answers)
])
def test_what_an_uninitialised_parameter_or_buffer_refuses_is_pytorchs(read):
    """PyTorch's UninitializedTensorMixin: the shape is its RuntimeError, the methods that count, lay out or read
    the elements its ValueError naming the method (its address, for the methods of its Python Tensor, aside)."""
    outcomes = []
    for m in (ember, torch):
        net = m.nn.Sequential(m.nn.LazyLinear(3), m.nn.LazyBatchNorm1d())
        for tensor in (net[0].weight, net[1].running_mean):
            try:
                value = iter(tensor) if read == "iter" else getattr(tensor, read)
                value = value() if callable(value) else value
                outcomes.append(("ok", str(value).replace("torch.", "").replace("ember.", "")))
            except Exception as error:  # noqa: BLE001 (the error compared with PyTorch's)
                outcomes.append((type(error).__name__, re.sub(r" at 0x[0-9a-f]+", "", str(error))))
    assert outcomes[:2] == outcomes[2:]


UNINITIALISED_OPS = {
    "torch.add(w, 1)": lambda m, w, b: m.add(w, 1), "w * 2": lambda m, w, b: w * 2, "1 + w": lambda m, w, b: 1 + w,
    "w.sum()": lambda m, w, b: w.sum(), "torch.relu(w)": lambda m, w, b: m.relu(w),
    "w.clone()": lambda m, w, b: w.clone(), "w.detach()": lambda m, w, b: w.detach(),
    "w.view(-1)": lambda m, w, b: w.view(-1), "torch.cat([w, w])": lambda m, w, b: m.cat([w, w]),
    "w @ w": lambda m, w, b: w @ w, "torch.mean(b)": lambda m, w, b: m.mean(b), "b - 1": lambda m, w, b: b - 1,
}


@pytest.mark.parametrize("op", UNINITIALISED_OPS)
def test_ops_on_an_uninitialised_parameter_or_buffer_raise_pytorchs_value_error(op):
    """An op given an uninitialised parameter (a lazy module's weight before its first forward) or buffer is
    PyTorch's ValueError, not a result computed on its empty storage; its data, dtype and the module's state dict
    still answer."""
    for m in (torch, ember):
        w, b = m.nn.LazyLinear(3).weight, m.nn.LazyBatchNorm1d().running_mean
        with pytest.raises(ValueError, match=r"^Attempted to use an uninitialized parameter in .*`torch\.nn\."
                                             r"parameter\.Uninitialized(Parameter|Buffer)` objects\. When using "
                                             r"LazyModules Call `forward`"):
            UNINITIALISED_OPS[op](m, w, b)
        assert tuple(w.data.shape) == (0,) and w.dtype == m.float32
        assert list(m.nn.LazyLinear(3).state_dict()) == ["weight", "bias"]


@pytest.mark.parametrize("method", ["double", "half", "to"])
def test_a_lazy_batchnorm_converted_before_its_first_forward_stays_uninitialised_as_pytorchs(method):
    for lib in (ember, torch):
        bn = lib.nn.LazyBatchNorm1d()
        bn = bn.to(lib.float64) if method == "to" else getattr(bn, method)()
        dtype = bn.running_mean.dtype
        assert type(bn.running_mean).__name__ == "UninitializedBuffer"
        with pytest.raises(ValueError, match="uninitialized parameter"):
            bn.running_mean + 1
        bn.train()
        out = bn(lib.ones(2, 3, dtype=dtype))
        assert out.dtype == dtype and tuple(bn.running_mean.shape) == (3,)


@pytest.mark.parametrize("method", ["double", "half", "to"])
def test_an_uninitialised_parameter_converted_to_another_dtype_is_a_plain_empty_tensor_as_pytorchs(method):
    results = []
    for lib in (ember, torch):
        w = lib.nn.LazyLinear(3).weight
        out = w.to(lib.float64) if method == "to" else getattr(w, method)()
        results.append((type(out).__name__, tuple(out.shape), str(out.dtype).split(".")[1], out.requires_grad,
                        type(out.grad_fn).__name__))
    assert results[0] == results[1]


@pytest.mark.parametrize("pickler", ["pickle", "multiprocessing"])
@pytest.mark.parametrize("build", [lambda nn: nn.LazyLinear(3), lambda nn: nn.LazyBatchNorm1d()])
def test_an_unpickled_lazy_module_still_refuses_ops_on_its_uninitialised_tensors_as_pytorchs(build, pickler):
    """Pickled, or sent to another process (``multiprocessing``'s pickler, which shares tensors' memory)."""
    import pickle
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing  # noqa: F401

    import ember.multiprocessing  # noqa: F401 (its reducers registered, as torch.multiprocessing's)

    dumps = pickle.dumps if pickler == "pickle" else ForkingPickler.dumps
    for lib in (ember, torch):
        module = pickle.loads(dumps(build(lib.nn)))
        for t in (*module.parameters(), *module.buffers()):
            if type(t).__name__.startswith("Uninitialized"):
                with pytest.raises(ValueError, match=f"torch.nn.parameter.{type(t).__name__}`"):
                    t + 1
        module(lib.ones(2, 4 if isinstance(module, lib.nn.Linear) else 3))


@pytest.mark.parametrize("write", ["zero_", "fill_", "uniform_", "normal_", "random_", "init.zeros_", "init.constant_",
                                   "init.uniform_", "init.normal_", "init.trunc_normal_"])
def test_an_in_place_write_to_an_uninitialised_parameter_raises_pytorchs_value_error(write):
    """An initialisation before the first forward (a loop of ``nn.init`` calls over a lazy model) is refused, as
    PyTorch refuses it, rather than run on the empty storage and be lost at materialisation."""
    for lib in (ember, torch):
        weight = lib.nn.LazyLinear(3).weight
        args = {"fill_": (1.0,), "init.constant_": (1.0,)}.get(write, ())
        fn = getattr(lib.nn.init, write[5:]) if write.startswith("init.") else getattr(weight, write)
        with lib.no_grad(), pytest.raises(ValueError, match="uninitialized parameter"):
            fn(weight, *args) if write.startswith("init.") else fn(*args)


@pytest.mark.parametrize("first", [True, False])
def test_cat_of_an_uninitialised_parameter_raises_pytorchs_value_error(first):
    """``cat`` skips a 1-D empty input without computing on it (PyTorch's legacy rule): an uninitialised one is
    still refused, as PyTorch refuses it."""
    for lib in (ember, torch):
        weight = lib.nn.LazyLinear(3).weight
        pieces = [weight, lib.ones(2)] if first else [lib.ones(2), weight]
        with pytest.raises(ValueError, match="uninitialized parameter"):
            lib.cat(pieces)
