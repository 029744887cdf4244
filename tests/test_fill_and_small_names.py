"""Names public code uses that ember lacked: ``torch.fill`` (and the nodes of ``fill_``/``zero_``, a 0-d tensor
value taking its gradient), ``torch.optim.optimizer.required``, ``torch.nn.modules.batchnorm``, the legacy
constructors' ``size=`` keyword; each as PyTorch's."""

import pytest
import torch

import ember
from tests.oracle import assert_close, assert_same_error


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "bool"])
@pytest.mark.parametrize("value", [3, 2.5, True, -1])
def test_fill_of_a_number(dtype, value):
    def run(m):
        return m.fill(m.ones(2, 3, dtype=getattr(m, dtype)), value)
    try:
        want = run(torch)
    except Exception:  # noqa: BLE001
        assert_same_error(run)
        return
    got = run(ember)
    assert got.dtype.name == str(want.dtype).split(".")[-1] and got.shape == want.shape
    assert_close(got.double(), want.double())


@pytest.mark.parametrize("out_of_place", [True, False])
def test_fill_with_a_0d_tensor_gives_it_the_gradient(out_of_place):
    results = {}
    for m in (ember, torch):
        x = m.ones(2, 3, requires_grad=True)
        v = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        if out_of_place:
            y = m.fill(x, v)
        else:
            y = x.clone()
            y.fill_(v)
        (y * m.arange(6.0).reshape(2, 3)).sum().backward()
        results[m] = (y.grad_fn.name(), y.dtype.is_floating_point, x.grad.tolist(), v.grad.item(), str(v.grad.dtype))
    assert results[ember] == tuple(r.replace("torch.", "ember.") if isinstance(r, str) else r
                                   for r in results[torch])


def test_the_fill_nodes_are_pytorchs():
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)
        y, z = x.clone(), x.clone()
        y.fill_(3.0)
        z.zero_()
        assert (y.grad_fn.name(), z.grad_fn.name(), m.fill(x, 1.0).grad_fn.name()) == \
            ("FillBackward2", "ZeroBackward0", "FillBackward0")


@pytest.mark.parametrize("call", [
    lambda m: m.fill(m.ones(2), m.tensor([1.0])),
    lambda m: m.ones(2).fill_(m.tensor([1.0, 2.0])),
    lambda m: m.fill(m.zeros(2, dtype=m.int8), 300),
    lambda m: m.fill(m.zeros(2, dtype=m.float16), 1e5),
])
def test_fill_errors(call):
    assert_same_error(call)


def test_a_required_optimizer_option():
    for m in (ember, torch):
        from importlib import import_module

        required = import_module(f"{m.__name__}.optim.optimizer").required
        assert repr(required) == "<required parameter>"

        class Custom(m.optim.Optimizer):
            def __init__(self, params, lr=required):
                super().__init__(params, {"lr": lr})

        with pytest.raises(ValueError, match="didn't specify a value of required optimization parameter lr"):
            Custom([m.ones(1, requires_grad=True)])
        assert Custom([m.ones(1, requires_grad=True)], lr=0.1).param_groups[0]["lr"] == 0.1


def test_batchnorm_module_path():
    from ember.nn.modules import batchnorm

    assert batchnorm.BatchNorm2d is ember.nn.BatchNorm2d and batchnorm.SyncBatchNorm is ember.nn.SyncBatchNorm
    assert isinstance(ember.nn.BatchNorm1d(3), batchnorm._BatchNorm)


def test_legacy_constructor_size_keyword():
    for m in (ember, torch):
        assert tuple(m.ByteTensor(size=(2, 3)).shape) == (2, 3) and m.ByteTensor(size=(2, 3)).dtype == m.uint8
        assert tuple(m.FloatTensor(size=[4]).shape) == (4,)
        with pytest.raises(TypeError):
            m.FloatTensor(2, size=(3,))
        with pytest.raises(TypeError):
            m.FloatTensor(size=2)
