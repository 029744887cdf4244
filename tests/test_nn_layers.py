"""Every layer against torch with the same weights: outputs, input and parameter gradients, buffers."""

import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from nn_oracle import compare_module
from oracle import assert_close, check, make_inputs

import ember
import ember.nn as nn
from ember._kernels.openblas import matmul as ember_gemm


def randn(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3), (3,), (1, 3), (1, 1, 3), (0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(shape, bias):
    compare_module(nn.Linear(3, 6, bias=bias), torch.nn.Linear(3, 6, bias=bias), randn(*shape))


@pytest.mark.parametrize("in_f,out_f", [(0, 3), (3, 0), (0, 0)])
@pytest.mark.parametrize("shape", [(4,), (2, 5), ()])
def test_linear_with_no_features(in_f, out_f, shape):
    # in_features or out_features 0 (an adaptive softmax cluster with no hidden units): empty rows, an empty
    # output, zero gradients
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn that initialising a zero-element weight is a no-op
        em, tm = nn.Linear(in_f, out_f), torch.nn.Linear(in_f, out_f)
    compare_module(em, tm, randn(*shape, in_f))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 784), (784,), (1, 1, 784)])
def test_linear_one_row_weight_grad_is_the_gemm(shape, dtype):
    # One row takes an outer product (BLAS through dot) instead of matmul with inner dimension 1: the same products, so the
    # weight gradient equals the GEMM's bit for bit, and PyTorch's to rounding.
    x, g = randn(*shape, dtype=dtype), randn(*shape[:-1], 256, seed=2, dtype=dtype)
    lin, ref = nn.Linear(784, 256).to(ember.float64 if dtype == np.float64 else ember.float32), torch.nn.Linear(784, 256)
    ref.to(torch.float64 if dtype == np.float64 else torch.float32)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
    lin(ember.tensor(x)).backward(ember.tensor(g))
    ref(torch.from_numpy(x)).backward(torch.from_numpy(g))
    gemm = np.matmul(g.reshape(-1, 256).T, x.reshape(-1, 784))
    np.testing.assert_array_equal(lin.weight.grad.numpy(), gemm)
    assert_close(lin.weight.grad.numpy(), ref.weight.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(32, 2048), (5, 3, 2048), (2048,)])
def test_linear_one_output_feature_input_grad_is_the_gemm(shape, dtype):
    # One output feature (a critic's head) takes a broadcast multiply instead of matmul with inner dimension 1:
    # the same products, so the input gradient equals the GEMM's bit for bit, and PyTorch's to rounding.
    x, g = randn(*shape, dtype=dtype), randn(*shape[:-1], 1, seed=2, dtype=dtype)
    g.reshape(-1)[0] = -0.0  # matmul sums products from +0.0: a -0.0 product gives +0.0 there, and here
    lin, ref = nn.Linear(2048, 1), torch.nn.Linear(2048, 1)
    lin.to(ember.float64 if dtype == np.float64 else ember.float32)
    ref.to(torch.float64 if dtype == np.float64 else torch.float32)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
        ref.bias.copy_(torch.from_numpy(lin.bias.detach().numpy()))
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lin(ex).backward(ember.tensor(g))
    ref(tx).backward(torch.from_numpy(g))
    gemm = np.matmul(g.reshape(-1, 1), lin.weight.detach().numpy()).reshape(shape)
    np.testing.assert_array_equal(ex.grad.numpy(), gemm)
    np.testing.assert_array_equal(np.signbit(ex.grad.numpy()), np.signbit(gemm))
    assert ex.grad.dtype == lin.weight.dtype and ex.grad.shape == tx.grad.shape
    assert_close(ex.grad.numpy(), tx.grad.numpy())
    assert_close(lin.weight.grad.numpy(), ref.weight.grad.numpy())


@pytest.mark.parametrize("out_f", [1, 10])
def test_linear_gradient_of_a_mean_is_a_blas_product(out_f):
    # out.mean()'s gradient reaches the Linear as a broadcast (zero strides), which NumPy's matmul computes in its
    # own loop; the backward multiplies a contiguous copy instead: the weight gradient is BLAS's GEMM of it, bit for
    # bit, and PyTorch's to rounding. (The GEMM as ember calls it: NumPy's matmul may pass OpenBLAS other flags for
    # the same product, which on some CPUs, an AVX2 EPYC's among them, sums in another order.)

    x = randn(32, 2048)
    lin, ref = nn.Linear(2048, out_f), torch.nn.Linear(2048, out_f)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(lin.weight.detach().numpy()))
        ref.bias.copy_(torch.from_numpy(lin.bias.detach().numpy()))
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lin(ex).mean().backward()
    ref(tx).mean().backward()
    g = np.full((32, out_f), 1 / (32 * out_f), np.float32)
    np.testing.assert_array_equal(lin.weight.grad.numpy(), ember_gemm(g.T, x))
    np.testing.assert_array_equal(ex.grad.numpy(), ember_gemm(g, lin.weight.detach().numpy()))
    assert_close(lin.weight.grad.numpy(), ref.weight.grad.numpy())
    assert_close(ex.grad.numpy(), tx.grad.numpy())
    assert_close(lin.bias.grad.numpy(), ref.bias.grad.numpy())


def test_linear_float64():
    compare_module(nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double(), randn(4, 3, dtype=np.float64))


def test_linear_bad_input():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x5 and 3x2\)"):
        nn.Linear(3, 2)(ember.randn(4, 5))
    with pytest.raises(RuntimeError, match="same dtype"):
        nn.Linear(3, 2)(ember.randn(4, 3).double())


@pytest.mark.parametrize("x_shape,b_shape", [
    ((3, 4), (1, 5)), ((3, 4), (3, 5)), ((3, 4), (3, 1)), ((3, 4), (1,)), ((3, 4), ()),
    ((2, 3, 4), (1, 5)), ((2, 3, 4), (3, 5)), ((2, 3, 4), (2, 1, 5)), ((2, 3, 4), (6, 1)), ((2, 3, 4), (1, 1)),
    ((2, 2, 3, 4), (2, 2, 3, 5)), ((4,), (1, 5)), ((4,), (1,)),
])
def test_linear_broadcast_bias(x_shape, b_shape):
    # PyTorch's linear broadcasts the bias: against addmm's (rows, out_features) for a 2-D input or a bias of one
    # dimension once its 1s are dropped, else against the output; the bias gradient is summed to the bias's shape
    check(lambda m, x, w, b: m.nn.functional.linear(x, w, b), [x_shape, (5, 4), b_shape], dtype=np.float64)
    e = ember.nn.functional.linear(ember.randn(*x_shape), ember.randn(5, 4), ember.randn(b_shape, requires_grad=True))
    t = torch.nn.functional.linear(torch.randn(x_shape), torch.randn(5, 4), torch.randn(b_shape, requires_grad=True))
    assert e.grad_fn.name() == t.grad_fn.name()


@pytest.mark.parametrize("x_shape,b_shape,transpose", [
    ((3, 4), (1, 1, 5), False), ((3, 4), (2, 5), False), ((2, 3, 4), (1, 1, 5), False),
    ((2, 3, 4), (3, 1), False), ((2, 3, 4), (2, 2, 3, 5), False), ((4,), (2, 5), False), ((2, 3, 4), (3, 5), True),
])
def test_linear_bias_that_does_not_broadcast(x_shape, b_shape, transpose):
    def f(m, x, w, b):
        return m.nn.functional.linear(x.transpose(0, 1) if transpose else x, w, b)

    x, w, b = make_inputs([x_shape, (5, 4), b_shape])
    with pytest.raises(RuntimeError):
        f(torch, torch.tensor(x), torch.tensor(w), torch.tensor(b))
    with pytest.raises(RuntimeError, match="bias of shape"):
        f(ember, ember.tensor(x), ember.tensor(w), ember.tensor(b))


def test_linear_broadcast_bias_forward_ad():
    x, w, b, tb = make_inputs([(2, 3, 4), (5, 4), (3, 5), (3, 5)], dtype=np.float64)
    outs = []
    for m in (ember, torch):
        with m.autograd.forward_ad.dual_level():
            bd = m.autograd.forward_ad.make_dual(m.tensor(b), m.tensor(tb))
            y = m.nn.functional.linear(m.tensor(x), m.tensor(w), bd)
            outs.append([m.autograd.forward_ad.unpack_dual(y).tangent.numpy(), y.detach().numpy()])
    for a, e in zip(*outs):
        np.testing.assert_allclose(a, e)


def test_bilinear():
    compare_module(nn.Bilinear(3, 4, 5), torch.nn.Bilinear(3, 4, 5), randn(6, 3), randn(6, 4, seed=1))
    compare_module(nn.Bilinear(3, 4, 2, bias=False), torch.nn.Bilinear(3, 4, 2, bias=False), randn(2, 6, 3),
                   randn(2, 6, 4, seed=1))


@pytest.mark.parametrize("kwargs", [
    {}, {"stride": 2}, {"padding": 1}, {"padding": (1, 2)}, {"dilation": 2, "padding": 2},
    {"groups": 2}, {"groups": 4, "bias": False}, {"padding": "same"}, {"padding": "valid", "stride": (2, 1)},
    {"padding": "same", "dilation": 2}, {"padding": 1, "padding_mode": "reflect"},
    {"padding": 1, "padding_mode": "replicate"}, {"padding": 2, "padding_mode": "circular"},
])
def test_conv2d(kwargs):
    compare_module(nn.Conv2d(4, 8, 3, **kwargs), torch.nn.Conv2d(4, 8, 3, **kwargs), randn(2, 4, 7, 6),
                   atol=1e-4)


def test_conv2d_even_kernel_same_and_unbatched():
    compare_module(nn.Conv2d(2, 3, (2, 4), padding="same"), torch.nn.Conv2d(2, 3, (2, 4), padding="same"),
                   randn(2, 2, 5, 6), atol=1e-4)
    compare_module(nn.Conv2d(2, 3, 3), torch.nn.Conv2d(2, 3, 3), randn(2, 5, 5), atol=1e-4)


@pytest.mark.parametrize("kwargs", [{}, {"stride": 2, "padding": 1}, {"dilation": 3}, {"groups": 2},
                                    {"padding": "same"}])
def test_conv1d(kwargs):
    compare_module(nn.Conv1d(4, 6, 3, **kwargs), torch.nn.Conv1d(4, 6, 3, **kwargs), randn(3, 4, 11), atol=1e-4)


def test_conv_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(RuntimeError, match="expected input.*to have 3 channels, but got 4"):
        nn.Conv2d(3, 4, 3)(ember.randn(1, 4, 5, 5))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        nn.Conv2d(3, 4, 5)(ember.randn(1, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Expected 3D .* or 4D"):
        nn.Conv2d(3, 4, 3)(ember.randn(3, 5))


@pytest.mark.parametrize("kwargs", [
    {"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1}, {"kernel_size": 3, "stride": 1},
    {"kernel_size": (2, 3), "dilation": 2}, {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True},
])
def test_maxpool2d(kwargs):
    compare_module(nn.MaxPool2d(**kwargs), torch.nn.MaxPool2d(**kwargs), randn(2, 3, 7, 8))


def test_maxpool_indices_and_1d():
    x = randn(2, 3, 9, seed=3)
    compare_module(nn.MaxPool1d(3, 2, 1), torch.nn.MaxPool1d(3, 2, 1), x)
    xi = randn(2, 3, 7, 8, seed=4)
    eo, ei = nn.MaxPool2d(3, 2, 1, return_indices=True)(ember.tensor(xi))
    to, ti = torch.nn.MaxPool2d(3, 2, 1, return_indices=True)(torch.tensor(xi))
    assert_close(eo, to)
    assert_close(ei, ti)
    eo, ei = ember.nn.functional.max_pool1d(ember.tensor(x), 2, return_indices=True)
    to, ti = torch.nn.functional.max_pool1d(torch.tensor(x), 2, return_indices=True)
    assert_close(ei, ti)


@pytest.mark.parametrize("kwargs", [
    {"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
    {"kernel_size": 2, "divisor_override": 3},
])
def test_avgpool2d(kwargs):
    compare_module(nn.AvgPool2d(**kwargs), torch.nn.AvgPool2d(**kwargs), randn(2, 3, 7, 8))


def test_avgpool1d():
    compare_module(nn.AvgPool1d(3, 2, 1), torch.nn.AvgPool1d(3, 2, 1), randn(2, 3, 10))
    assert repr(nn.AvgPool1d(3)) == repr(torch.nn.AvgPool1d(3))


@pytest.mark.parametrize("size", [1, 2, (3, 4), (None, 3), (5, 7)])
def test_adaptive_avg_pool2d(size):
    compare_module(nn.AdaptiveAvgPool2d(size), torch.nn.AdaptiveAvgPool2d(size), randn(2, 3, 7, 9))


def test_adaptive_avg_pool1d_unbatched():
    compare_module(nn.AdaptiveAvgPool1d(4), torch.nn.AdaptiveAvgPool1d(4), randn(3, 10))
    compare_module(nn.AdaptiveAvgPool2d(2), torch.nn.AdaptiveAvgPool2d(2), randn(3, 5, 5))


@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm1d, (8, 5)), (nn.BatchNorm1d, (4, 5, 3)),
                                       (nn.BatchNorm2d, (4, 5, 3, 2))])
@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"momentum": None}, {"track_running_stats": False},
                                    {"momentum": 0.3, "eps": 1e-3}])
def test_batchnorm(cls, shape, kwargs):
    tcls = getattr(torch.nn, cls.__name__)
    em, tm = cls(5, **kwargs), tcls(5, **kwargs)
    with torch.no_grad():  # non-trivial affine and running stats so eval mode is a real test
        if tm.affine:
            tm.weight.uniform_(0.5, 1.5)
            tm.bias.uniform_(-1, 1)
    compare_module(em, tm, randn(*shape), train=True, steps=3, atol=1e-4)
    # continue from the updated running stats in eval mode (em keeps them; reload is the same values)
    compare_module(em, tm, randn(*shape, seed=5), train=False, atol=1e-4)


def test_batchnorm_errors():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(ember.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(ember.randn(1, 3))
    nn.BatchNorm1d(3).eval()(ember.randn(1, 3))  # fine in eval mode


def test_batchnorm_num_batches_tracked():
    bn = nn.BatchNorm1d(3)
    for _ in range(3):
        bn(ember.randn(4, 3))
    assert bn.num_batches_tracked.item() == 3 and bn.num_batches_tracked.dtype == ember.int64
    bn.eval()
    bn(ember.randn(4, 3))
    assert bn.num_batches_tracked.item() == 3


def test_batchnorm_loads_a_state_dict_without_num_batches_tracked_as_pytorch(tmp_path):
    """Checkpoints from before PyTorch added num_batches_tracked (early pretrained weights), and state dicts rebuilt
    key by key (which lose _metadata), load without it, the count staying; with _metadata saying version 2, the key
    is missing as in PyTorch."""
    for m in (torch, ember):
        net = m.nn.Sequential(m.nn.Conv2d(1, 2, 1), m.nn.BatchNorm2d(2))
        net[1].num_batches_tracked.fill_(7)
        old = {k: v + 1 for k, v in net.state_dict().items() if not k.endswith("num_batches_tracked")}
        assert str(net.load_state_dict(old)) == "<All keys matched successfully>"
        assert net[1].num_batches_tracked.item() == 7 and net[1].running_var.tolist() == [2.0, 2.0]
    path = str(tmp_path / "bn.pt")
    sd = torch.nn.BatchNorm1d(2).state_dict()  # with PyTorch's _metadata: {"": {"version": 2}}
    del sd["num_batches_tracked"]
    torch.save(sd, path)
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
            m.nn.BatchNorm1d(2).load_state_dict(m.load(path, weights_only=True))
    assert ember.nn.BatchNorm1d(2, track_running_stats=False).load_state_dict(
        {"weight": ember.ones(2), "bias": ember.zeros(2)}).missing_keys == []


def test_state_dict_metadata_records_module_versions_as_pytorch():
    """state_dict() records each module's version in ``_metadata`` (BatchNorm's is 2), so a dict from it that lost
    num_batches_tracked reports the key missing, as PyTorch, instead of being taken for an old checkpoint."""
    got, want = (m.nn.Sequential(m.nn.Linear(2, 2), m.nn.BatchNorm1d(2), m.nn.InstanceNorm1d(2)).state_dict()
                 for m in (ember, torch))
    assert dict(got._metadata) == dict(want._metadata)
    for m in (torch, ember):
        net = m.nn.Sequential(m.nn.BatchNorm1d(2))
        sd = net.state_dict()
        del sd["0.num_batches_tracked"]
        assert net.load_state_dict(sd, strict=False).missing_keys == ["0.num_batches_tracked"]
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0.num_batches_tracked"'):
            net.load_state_dict(sd)
        given = OrderedDict()  # a destination without _metadata gets none, as in PyTorch
        assert net.state_dict(destination=given) is given and not hasattr(given, "_metadata")


@pytest.mark.parametrize("shape,norm", [((4, 6), 6), ((2, 3, 4), (3, 4)), ((2, 3, 5), 5), ((7,), [7])])
@pytest.mark.parametrize("layer,kwargs", [
    ("LayerNorm", {}), ("LayerNorm", {"elementwise_affine": False}), ("LayerNorm", {"bias": False}),
    ("LayerNorm", {"eps": 1e-2}), ("RMSNorm", {}), ("RMSNorm", {"elementwise_affine": False}),
    ("RMSNorm", {"eps": 1e-2}), ("RMSNorm", {"eps": 1e-6}),
])
def test_layernorm_and_rmsnorm(shape, norm, layer, kwargs):
    em, tm = getattr(nn, layer)(norm, **kwargs), getattr(torch.nn, layer)(norm, **kwargs)
    assert repr(em) == repr(tm)
    if tm.weight is not None:
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
    compare_module(em, tm, randn(*shape), atol=1e-4)


@pytest.mark.parametrize("groups,shape", [(2, (3, 4, 5)), (1, (2, 4, 3, 3)), (4, (2, 4, 3, 2))])
@pytest.mark.parametrize("affine", [True, False])
def test_groupnorm(groups, shape, affine):
    em, tm = nn.GroupNorm(groups, 4, affine=affine), torch.nn.GroupNorm(groups, 4, affine=affine)
    if affine:
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            tm.bias.uniform_(-1, 1)
    compare_module(em, tm, randn(*shape), atol=1e-4)
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -1}, {"scale_grad_by_freq": True}])
def test_embedding(kwargs):
    idx = np.array([[0, 2, 1, 2], [4, 3, 2, 1]])
    em, tm = nn.Embedding(5, 3, **kwargs), torch.nn.Embedding(5, 3, **kwargs)
    compare_module(em, tm, idx)
    assert repr(em) == repr(tm)


def test_embedding_max_norm_and_errors():
    tm = torch.nn.Embedding(5, 3, max_norm=1.0)
    with torch.no_grad():
        tm.weight.mul_(3)
    em = nn.Embedding(5, 3, max_norm=1.0)
    compare_module(em, tm, np.array([0, 2, 2, 4]))
    assert_close(em.weight, tm.weight)
    with pytest.raises(IndexError, match="index out of range"):
        em(ember.tensor([5]))
    with pytest.raises(RuntimeError, match="Long, Int"):
        em(ember.tensor([1.0]))
    pre = nn.Embedding.from_pretrained(ember.randn(4, 2))
    assert not pre.weight.requires_grad and pre.weight.shape == (4, 2)


def test_embedding_init():
    ember.manual_seed(0)
    w = nn.Embedding(1000, 50, padding_idx=3).weight.detach().numpy()
    assert np.all(w[3] == 0)
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02


ACTIVATIONS = [
    ("ReLU", {}), ("LeakyReLU", {}), ("LeakyReLU", {"negative_slope": 0.2}), ("GELU", {}),
    ("GELU", {"approximate": "tanh"}), ("SiLU", {}), ("Tanh", {}), ("Sigmoid", {}), ("Softmax", {"dim": 1}),
    ("LogSoftmax", {"dim": -1}), ("ELU", {}), ("ELU", {"alpha": 0.5}), ("Softplus", {}),
    ("Softplus", {"beta": 2.0, "threshold": 1.0}), ("Hardtanh", {}), ("Hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    ("ReLU6", {}), ("LogSigmoid", {}), ("Identity", {}),
    # (PyTorch's ELU kernel with inner = 1 / alpha: the derivative's alpha * inner cancels only for alpha 1)
    ("CELU", {"alpha": 2.0}), ("CELU", {"alpha": 0.5}), ("SELU", {}),
]


@pytest.mark.parametrize("name,kwargs", ACTIVATIONS)
def test_activation(name, kwargs):
    x = randn(4, 6) * 3
    x[0, :3] = [0.0, 1.0, -1.0]  # kinks
    em, tm = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    compare_module(em, tm, x, atol=2e-6)
    compare_module(em.double(), tm.double(), x.astype(np.float64), atol=1e-6)
    assert repr(em) == repr(tm)


def test_hardtanh_of_equal_bounds_is_that_constant():
    """F.hardtanh takes min_val == max_val (a constant, gradient 0 everywhere), as PyTorch's function does; its
    module refuses them (tests/test_errors_match.py)."""
    x = randn(3, 4)
    x[0, :3] = [0.5, 0.0, 1.0]  # at the bound
    check(lambda m, a: m.nn.functional.hardtanh(a, 0.5, 0.5), [x])


@pytest.mark.parametrize("name", ["ReLU", "LeakyReLU", "SiLU", "ELU", "Hardtanh"])
def test_activation_inplace(name):
    x = randn(3, 4)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eh, th = ex * 2, tx * 2
    eo, to = getattr(nn, name)(inplace=True)(eh), getattr(torch.nn, name)(inplace=True)(th)
    assert eo is eh
    assert_close(eh, th)
    eo.sum().backward()
    to.sum().backward()
    assert_close(ex.grad, tx.grad)
    assert repr(getattr(nn, name)(inplace=True)) == repr(getattr(torch.nn, name)(inplace=True))


def test_gelu_extremes():
    x = np.array([-30.0, -8.0, -3.0, -1e-3, 0.0, 1e-3, 3.0, 8.0, 30.0], dtype=np.float32)
    for approx in ("none", "tanh"):
        compare_module(nn.GELU(approx), torch.nn.GELU(approx), x, atol=1e-6)
    with pytest.raises(RuntimeError, match="approximate"):
        ember.nn.functional.gelu(ember.tensor(x), approximate="fast")


def test_dropout():
    x = ember.ones(200, 500, requires_grad=True)
    d = nn.Dropout(0.3)
    ember.manual_seed(0)
    y = d(x)
    kept = y.detach().numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.7, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy() != 0, kept)
    ember.manual_seed(0)
    np.testing.assert_array_equal(d(x).detach().numpy(), y.detach().numpy())  # reproducible from the seed
    d.eval()
    assert d(x) is x
    assert nn.Dropout(1.0)(x).detach().numpy().sum() == 0
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    assert repr(nn.Dropout(0.3)) == repr(torch.nn.Dropout(0.3))


def test_dropout2d_zeroes_channels():
    ember.manual_seed(1)
    y = nn.Dropout2d(0.5)(ember.ones(8, 16, 3, 3)).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))


@pytest.mark.parametrize("shape", [(40, 30), (6, 40, 3), (2, 30, 2, 2, 2), (7,), ()])
def test_dropout2d_other_ranks_as_pytorch(shape):
    """PyTorch drops (N, C) channels of any input of 2 dims or more: a 3-D input is (N, C, L), not (C, H, W),
    and other ranks than 3 and 4 are warned of as deprecated; fewer than 2 dims is an error in training."""
    import warnings

    caught = {}
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                out = m.nn.Dropout2d(0.5)(m.ones(shape)).numpy()
            except RuntimeError as e:
                out = str(e)
            assert m.nn.functional.dropout2d(m.ones(shape), training=False).shape == m.ones(shape).shape
        caught[m] = ([(w.category, str(w.message)) for w in seen], out)
    assert caught[ember][0] == caught[torch][0]
    out = caught[ember][1]
    if len(shape) < 2:
        assert out == caught[torch][1] == "Feature dropout requires at least 2 dimensions in the input"
        return
    per_channel = out.reshape(shape[0], shape[1], -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))  # whole (N, C) channels
    assert 0 < (per_channel == 0).mean() < 1


def test_flatten_unflatten():
    compare_module(nn.Flatten(), torch.nn.Flatten(), randn(2, 3, 4))
    compare_module(nn.Flatten(0, 1), torch.nn.Flatten(0, 1), randn(2, 3, 4))
    compare_module(nn.Unflatten(1, (2, 3)), torch.nn.Unflatten(1, (2, 3)), randn(4, 6))
    assert repr(nn.Unflatten(1, (2, 3))) == repr(torch.nn.Unflatten(1, (2, 3)))


def test_small_cnn_end_to_end():
    def build(m):
        return m.nn.Sequential(
            m.nn.Conv2d(3, 8, 3, padding=1), m.nn.BatchNorm2d(8), m.nn.ReLU(), m.nn.MaxPool2d(2),
            m.nn.Conv2d(8, 8, 3, groups=2), m.nn.GELU(), m.nn.AdaptiveAvgPool2d(1), m.nn.Flatten(),
            m.nn.LayerNorm(8), m.nn.Linear(8, 4))
    compare_module(build(ember), build(torch), randn(4, 3, 10, 10), atol=1e-4, steps=2)
    assert repr(build(ember)) == repr(build(torch))


@pytest.mark.parametrize("factory", [
    lambda m: m.nn.Linear(3, 4, bias=False), lambda m: m.nn.Conv2d(3, 6, (3, 5), stride=2, padding=(1, 2)),
    lambda m: m.nn.Conv2d(4, 4, 3, dilation=2, groups=2, padding="same", padding_mode="reflect"),
    lambda m: m.nn.Conv1d(3, 6, 3, padding="valid"), lambda m: m.nn.MaxPool2d(3, 2, 1),
    lambda m: m.nn.AvgPool2d(2), lambda m: m.nn.AdaptiveAvgPool2d((None, 3)), lambda m: m.nn.BatchNorm2d(4),
    lambda m: m.nn.BatchNorm1d(4, momentum=None, affine=False), lambda m: m.nn.LayerNorm([3, 4]),
    lambda m: m.nn.GroupNorm(2, 4), lambda m: m.nn.Embedding(4, 2, padding_idx=0), lambda m: m.nn.Flatten(),
    lambda m: m.nn.Bilinear(2, 3, 4), lambda m: m.nn.Softmax(dim=1), lambda m: m.nn.MaxPool1d(2),
    lambda m: m.nn.Dropout2d(), lambda m: m.nn.CrossEntropyLoss(), lambda m: m.nn.Identity(),
])
def test_repr_matches_torch(factory):
    assert repr(factory(ember)) == repr(factory(torch))


def test_functional_batch_norm_default_momentum_moves_the_running_stats_like_torch():
    x = randn(6, 3, 4)
    stats = {}
    for m in (ember, torch):
        mean, var = m.zeros(3), m.ones(3)
        out = m.nn.functional.batch_norm(m.tensor(x), mean, var, training=True)
        stats[m] = (out, mean, var)
    for a, b in zip(stats[ember], stats[torch]):
        assert_close(a, b, atol=1e-5)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("shape", [(2, 6, 4), (2, 4, 3, 3), (1, 3, 2, 2, 2)])
def test_local_response_norm(size, shape):
    kwargs = dict(alpha=0.5, beta=0.75, k=1.5)  # alpha large enough for every window's term to show
    compare_module(nn.LocalResponseNorm(size, **kwargs), torch.nn.LocalResponseNorm(size, **kwargs), randn(*shape),
                   atol=1e-5)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("module,shape", [("BatchNorm1d", (0, 3)), ("BatchNorm2d", (0, 3, 4, 4))])
def test_batch_norm_of_an_empty_batch_as_pytorch(module, shape, affine):
    """An empty batch: an empty output, and (affine) a graph to the weight and bias, whose gradients are zeros."""
    results = []
    for fw in (torch, ember):
        bn = getattr(fw.nn, module)(3, affine=affine)
        x = fw.zeros(*shape, requires_grad=True)
        y = bn(x)
        y.sum().backward()
        grads = [bn.weight.grad.tolist(), bn.bias.grad.tolist()] if affine else [bn.weight, bn.bias]
        results.append((tuple(y.shape), tuple(x.grad.shape), grads))
    assert results[0] == results[1]


def test_norm_shape_and_dtype_errors_as_pytorch():
    """Channels not divisible into groups, an input whose trailing dims are not normalized_shape, an integral
    input to rms_norm: PyTorch's errors and messages."""
    for m in (torch, ember):
        F = m.nn.functional
        with pytest.raises(RuntimeError, match=r"Expected number of channels in input to be divisible by "
                                               r"num_groups, but got input of shape \[2, 3, 4\] and num_groups=2"):
            F.group_norm(m.ones(2, 3, 4), 2)
        with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                                               r"but got input of size\[2, 3\]"):
            F.layer_norm(m.ones(2, 3), (4,))
        with pytest.raises(NotImplementedError, match="\"rms_norm\" not implemented for 'Long'"):
            F.rms_norm(m.ones(2, 3, dtype=m.int64), (3,))
        with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
            F.batch_norm(m.ones(2, 3), m.zeros(4), m.ones(3))


def test_local_response_norm_of_an_empty_batch_is_empty_as_pytorch():
    for m in (torch, ember):
        x = m.ones(0, 3, 4, requires_grad=True)
        out = m.nn.functional.local_response_norm(x, 2)
        assert tuple(out.shape) == (0, 3, 4)
        out.sum().backward()
        assert tuple(x.grad.shape) == (0, 3, 4)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", ["layer_norm", "group_norm", "batch_norm", "instance_norm"])
def test_half_input_with_float32_parameters_is_normalised_in_float32_as_pytorch(op, dtype):
    """PyTorch's mixed-dtype normalisation (a half input, float32 weight and bias) computes in float32 and
    rounds the result (and the input's gradient) once to the input's dtype. Rows of nearly equal values need
    float32: their variance is below the half type's resolution of the mean."""
    rng = np.random.default_rng(0)
    x = (1 + 0.01 * rng.standard_normal((4, 6, 5))).astype(np.float32)
    g = rng.standard_normal((4, 6, 5)).astype(np.float32)
    n = 5 if op == "layer_norm" else 6
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    call = {"layer_norm": lambda F, t, w, b: F.layer_norm(t, (5,), w, b),
            "group_norm": lambda F, t, w, b: F.group_norm(t, 3, w, b),
            "batch_norm": lambda F, t, w, b: F.batch_norm(t, None, None, w, b, training=True),
            "instance_norm": lambda F, t, w, b: F.instance_norm(t, weight=w, bias=b)}[op]
    got = {}
    for m in (torch, ember):
        xt = m.tensor(x).to(getattr(m, dtype)).requires_grad_()
        wt, bt = m.tensor(w, requires_grad=True), m.tensor(b, requires_grad=True)
        out = call(m.nn.functional, xt, wt, bt)
        assert out.dtype == xt.dtype
        out.backward(m.tensor(g).to(out.dtype))
        assert xt.grad.dtype == xt.dtype
        got[m] = [t.detach().float().numpy() for t in (out, xt.grad, wt.grad, bt.grad)]
    for e, t in zip(got[ember], got[torch]):
        np.testing.assert_allclose(e, t, rtol=2e-2, atol=2e-2 * np.abs(t).max())
