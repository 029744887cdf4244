"""torch.nn.utils.fusion (folding an evaluation-mode batch norm into the layer before it) and nn.utils.skip_init,
against PyTorch on the same weights."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember


def _pair(make_torch, make_ember, seed=0):
    """The same module in both frameworks: ember's built from torch's state_dict (running statistics made
    non-trivial so that the fold has something to do)."""
    torch.manual_seed(seed)
    t = make_torch(torch)
    for mod in t.modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) and mod.running_mean is not None:
            mod.running_mean.uniform_(-1, 1)
            mod.running_var.uniform_(0.5, 2)
            if mod.weight is not None:
                with torch.no_grad():
                    mod.weight.uniform_(0.5, 1.5)
                    mod.bias.uniform_(-0.5, 0.5)
    e = make_ember(ember)
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return t.eval(), e.eval()


CONV_CASES = {
    "conv1d": (lambda m: m.nn.Sequential(m.nn.Conv1d(3, 4, 3), m.nn.BatchNorm1d(4)), (2, 3, 7), False),
    "conv2d_no_bias": (lambda m: m.nn.Sequential(m.nn.Conv2d(3, 4, 3, bias=False), m.nn.BatchNorm2d(4)),
                       (2, 3, 6, 6), False),
    "conv2d_bn_not_affine": (lambda m: m.nn.Sequential(m.nn.Conv2d(2, 3, 1), m.nn.BatchNorm2d(3, affine=False)),
                             (1, 2, 4, 4), False),
    "conv_transpose2d": (lambda m: m.nn.Sequential(m.nn.ConvTranspose2d(4, 6, 3, stride=2),
                                                          m.nn.BatchNorm2d(6)), (2, 4, 5, 5), True),
    "conv3d": (lambda m: m.nn.Sequential(m.nn.Conv3d(2, 3, 2), m.nn.BatchNorm3d(3, eps=1e-3)), (1, 2, 4, 4, 4),
               False),
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_fuse_conv_bn_eval_matches_pytorch(case):
    make, shape, transpose = CONV_CASES[case]
    t, e = _pair(make, make)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    ft = torch.nn.utils.fusion.fuse_conv_bn_eval(t[0], t[1], transpose=transpose)
    fe = ember.nn.utils.fusion.fuse_conv_bn_eval(e[0], e[1], transpose=transpose)
    assert type(fe) is type(e[0]) and fe is not e[0]
    assert_close(fe.weight, ft.weight, rtol=1e-6, atol=1e-6)
    assert_close(fe.bias, ft.bias, rtol=1e-6, atol=1e-6)
    assert isinstance(fe.weight, ember.nn.Parameter) and isinstance(fe.bias, ember.nn.Parameter)
    assert (fe.weight.requires_grad, fe.bias.requires_grad) == (ft.weight.requires_grad, ft.bias.requires_grad)
    out = fe(ember.tensor(x))
    assert_close(out, t(torch.tensor(x)), rtol=1e-5, atol=1e-5)  # the fused layer computes bn(conv(x))
    assert_close(e[0].weight, t[0].weight)  # the original convolution is left as it was
    assert (e[0].bias is None) == (t[0].bias is None)


@pytest.mark.parametrize("bias, features", [(True, 5), (False, 5), (True, 1)])
def test_fuse_linear_bn_eval_matches_pytorch(bias, features):
    def make(m):
        return m.nn.Sequential(m.nn.Linear(4, 5, bias=bias), m.nn.BatchNorm1d(features))

    t, e = _pair(make, make)
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    ft = torch.nn.utils.fuse_linear_bn_eval(t[0], t[1])
    fe = ember.nn.utils.fuse_linear_bn_eval(e[0], e[1])
    assert_close(fe.weight, ft.weight, rtol=1e-6, atol=1e-6)
    assert_close(fe.bias, ft.bias, rtol=1e-6, atol=1e-6)
    assert fe.bias.requires_grad == ft.bias.requires_grad
    assert_close(fe(ember.tensor(x)), ft(torch.tensor(x)), rtol=1e-6, atol=1e-6)


def test_fuse_weights_functions_and_dtypes():
    """The *_weights functions on float64 tensors, a missing batch norm affine and a missing bias."""
    rng = np.random.default_rng(3)
    w, b = rng.standard_normal((4, 2, 3)), rng.standard_normal(4)
    rm, rv, bw, bb = rng.standard_normal(4), rng.uniform(0.5, 2, 4), rng.standard_normal(4), rng.standard_normal(4)
    for args in [(w, b, rm, rv, 1e-5, bw, bb), (w, None, rm, rv, 1e-3, None, None)]:
        def convert(m, args=args):
            return [m.tensor(a, requires_grad=i == 0) if isinstance(a, np.ndarray) else a for i, a in enumerate(args)]
        got, want = ember.nn.utils.fuse_conv_bn_weights(*convert(ember)), torch.nn.utils.fuse_conv_bn_weights(
            *convert(torch))
        for g, t_ in zip(got, want):
            assert_close(g, t_, rtol=1e-12, atol=1e-12)
            assert g.requires_grad == t_.requires_grad and g.dtype == ember.float64
        lin = [a[:, :, 0] if i == 0 else bw if i == 5 else bb if i == 6 else a
               for i, a in enumerate(args)]  # (PyTorch's needs the batch norm's affine weight and bias)
        got = ember.nn.utils.fuse_linear_bn_weights(
            *[ember.tensor(a) if isinstance(a, np.ndarray) else a for a in lin])
        want = torch.nn.utils.fuse_linear_bn_weights(
            *[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in lin])
        for g, t_ in zip(got, want):
            assert_close(g, t_, rtol=1e-12, atol=1e-12)


def test_fusion_refuses_training_mode_and_mismatched_features():
    for m in (ember, torch):
        conv, bn = m.nn.Conv2d(2, 3, 1), m.nn.BatchNorm2d(3)
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            m.nn.utils.fuse_conv_bn_eval(conv, bn)
        lin, bn = m.nn.Linear(2, 3).eval(), m.nn.BatchNorm1d(4).eval()
        with pytest.raises(AssertionError, match=r"linear.out_features == bn.num_features or bn.num_features == 1, "
                                                 r"got linear.out_features=3 and bn.num_features=4"):
            m.nn.utils.fuse_linear_bn_eval(lin, bn)


def test_skip_init_builds_without_initialising():
    """skip_init gives the module's shapes, dtypes and device without its init: the generator is where it was
    (PyTorch's numbers after it), and a module without a device argument is refused as PyTorch refuses it."""
    draws = []
    for m in (ember, torch):
        m.manual_seed(4)
        lin = m.nn.utils.skip_init(m.nn.Linear, 5, 3, bias=False, dtype=m.float64)
        assert tuple(lin.weight.shape) == (3, 5) and lin.weight.dtype == m.float64 and lin.bias is None
        assert lin.weight.device.type == "cpu" and lin.weight.requires_grad
        draws.append(m.rand(3).numpy())
    np.testing.assert_array_equal(draws[0], draws[1])

    class NoDevice(ember.nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        ember.nn.utils.skip_init(NoDevice, 3)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        ember.nn.utils.skip_init(ember.nn.Linear(2, 2))
