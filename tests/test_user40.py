"""Found by running small training programs under PyTorch and ember side by side: each checked against torch."""

import numpy as np
import pytest
import torch
from oracle import assert_close, node_names

import ember

RNG = np.random.default_rng(40)
X4 = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
W4 = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
X5 = RNG.standard_normal((2, 3, 4, 4, 4)).astype(np.float32)
W5 = RNG.standard_normal((4, 3, 3, 3, 3)).astype(np.float32)


def _conv_case(m, name):
    cl, cl3, F = m.channels_last, m.channels_last_3d, m.nn.functional
    x, w, x3, w3 = (m.tensor(a) for a in (X4, W4, X5, W5))
    return {
        "input": lambda: F.conv2d(x.to(memory_format=cl), w, padding=1),
        "weight": lambda: F.conv2d(x, w.to(memory_format=cl)),
        "both_stride2": lambda: F.conv2d(x.to(memory_format=cl), w.to(memory_format=cl), stride=2, padding=1),
        "float64": lambda: F.conv2d(x.double().to(memory_format=cl), w.double()),
        "one_by_one_output": lambda: F.conv2d(x.to(memory_format=cl), w, dilation=2),
        "one_by_one_weight": lambda: F.conv2d(x, w[:, :, :1, :1].contiguous(memory_format=cl)),
        "groups": lambda: F.conv2d(x.to(memory_format=cl), w[:3, :1].contiguous(), groups=3),
        "conv3d": lambda: F.conv3d(x3.to(memory_format=cl3), w3),
        "conv3d_float64": lambda: F.conv3d(x3.double().to(memory_format=cl3), w3.double()),
        "transposed": lambda: F.conv_transpose2d(x.to(memory_format=cl), w.transpose(0, 1).contiguous()),
        "transposed_weight": lambda: F.conv_transpose2d(x, w.transpose(0, 1).contiguous(memory_format=cl)),
        "transposed3d": lambda: F.conv_transpose3d(x3.to(memory_format=cl3), w3.transpose(0, 1).contiguous()),
        "contiguous": lambda: F.conv2d(x, w, padding=1),
        "conv1d": lambda: F.conv1d(x[:, :, 0], w[:, :, 0]),
    }[name]()


@pytest.mark.parametrize("name", ["input", "weight", "both_stride2", "float64", "one_by_one_output",
                                  "one_by_one_weight", "groups", "conv3d", "conv3d_float64", "transposed",
                                  "transposed_weight", "transposed3d", "contiguous", "conv1d"])
def test_convolution_of_a_channels_last_input_or_weight_is_channels_last_as_pytorch(name):
    e, t = _conv_case(ember, name), _conv_case(torch, name)
    assert e.stride() == t.stride()
    assert e.is_contiguous() == t.is_contiguous()
    assert_close(e, t, atol=1e-4, rtol=1e-4)


def test_channels_last_conv_output_views_and_gradients_as_pytorch():
    out = []
    for m in (ember, torch):
        cl = m.channels_last
        x = m.tensor(X4).to(memory_format=cl).requires_grad_()
        w = m.tensor(W4).to(memory_format=cl).requires_grad_()
        y = m.nn.functional.conv2d(x, w, padding=1)
        flat = y.permute(0, 2, 3, 1).view(-1, 4)  # a channels-last result views as (N*H*W, C), as PyTorch's
        (flat.pow(2).sum() + y.mean()).backward()
        out.append((flat.shape, x.grad.stride(), w.grad.stride(), x.grad, w.grad))
    (es, exs, ews, egx, egw), (ts, txs, tws, tgx, tgw) = out
    assert (es, exs, ews) == (ts, txs, tws)
    assert_close(egx, tgx, atol=1e-3, rtol=1e-4)
    assert_close(egw, tgw, atol=1e-3, rtol=1e-4)


def _node_case(m, name):
    F = m.nn.functional
    x = m.tensor(X4, requires_grad=True)
    w = m.tensor(W4)
    m.manual_seed(0)
    return {
        "conv1d": lambda: F.conv1d(x[:, :, 0], w[:, :, 0]),
        "conv2d": lambda: F.conv2d(x, w, padding=1),
        "conv3d": lambda: F.conv3d(x.unsqueeze(2), w.unsqueeze(2)),
        "conv_transpose2d": lambda: F.conv_transpose2d(x, w.transpose(0, 1).contiguous()),
        "module": lambda: m.nn.Conv2d(3, 2, 3)(x),
        "dropout": lambda: F.dropout(x, 0.5),
        "dropout2d": lambda: F.dropout2d(x, 0.5),
        "top_level_dropout": lambda: m.dropout(x, 0.3, True),
        "module_dropout": lambda: m.nn.Dropout(0.2)(x * 1),
    }[name]()


@pytest.mark.parametrize("name", ["conv1d", "conv2d", "conv3d", "conv_transpose2d", "module", "dropout", "dropout2d",
                                  "top_level_dropout", "module_dropout"])
def test_convolution_and_dropout_nodes_read_as_pytorch(name):
    e, t = _node_case(ember, name), _node_case(torch, name)
    assert node_names(e.grad_fn, 1) == node_names(t.grad_fn, 1)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    assert repr(e).split("grad_fn=")[1] == repr(t).split("grad_fn=")[1]


def _bound(m, kind):
    return {"zero_d": lambda: m.tensor(0.5), "zero_d_int": lambda: m.tensor(1), "zero_d_double": lambda: m.tensor(0.5, dtype=m.float64),
            "zero_d_bool": lambda: m.tensor(True), "float": lambda: 1.0, "np_float32": lambda: np.float32(0.25),
            "int": lambda: 0}[kind]()


@pytest.mark.parametrize("lo,hi", [("float", "zero_d"), ("zero_d", "float"), ("int", "zero_d_int"), ("zero_d_double", "int"),
                                   ("np_float32", "zero_d_bool"), ("np_float32", "zero_d")])
@pytest.mark.parametrize("form", ["function", "clip", "method", "inplace", "int_method", "int_inplace"])
def test_clamp_takes_a_0d_tensor_bound_with_a_number_one_as_pytorch(lo, hi, form):
    # PyTorch's parser reads a 0-d tensor that needs no gradient as a number: the Number overload (ClampBackward1)
    def run(m):
        x = m.linspace(-2, 2, 9, requires_grad=True)
        a, b = _bound(m, lo), _bound(m, hi)
        call = {"function": lambda: m.clamp(x, a, b), "clip": lambda: m.clip(x, min=a, max=b),
                "method": lambda: x.clamp(a, max=b), "inplace": lambda: (x * 1).clamp_(a, b),
                "int_method": lambda: x.detach().int().clamp(a, b), "int_inplace": lambda: x.detach().int().clamp_(a, b)}
        try:
            y = call[form]()
        except RuntimeError as e:
            return str(e)
        return y.detach(), y.dtype, y.grad_fn.name() if y.grad_fn is not None else None

    e, t = run(ember), run(torch)
    if isinstance(t, str):
        assert e == t
    else:
        assert_close(e[0], t[0])
        assert (str(e[1]).split(".")[1], e[2]) == (str(t[1]).split(".")[1], t[2])


@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8", "bool"])
def test_clamp_inplace_names_the_dtype_as_pytorch(dtype):
    # number bounds: PyTorch's check prints the C++ type (``long int``); tensor bounds its ScalarType (``Long``)
    for call in (lambda m, t: t.clamp_(0.5, 2), lambda m, t: t.clip_(max=1.5),
                 lambda m, t: t.clamp_(m.tensor([0.5]), m.tensor([2.0]))):
        messages = []
        for m in (ember, torch):
            with pytest.raises(RuntimeError) as info:
                call(m, m.tensor([1, 2], dtype=getattr(m, dtype)))
            messages.append(str(info.value))
        assert messages[0] == messages[1]


def test_clamp_still_refuses_a_tensor_bound_that_is_not_a_number():
    for lo in (lambda m: m.tensor([0.5]), lambda m: m.tensor(0.5, requires_grad=True)):
        messages = []
        for m in (ember, torch):
            with pytest.raises(TypeError) as info:
                m.clamp(m.tensor([0.0, 2.0]), lo(m), 1.5)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


@pytest.mark.parametrize("args", [(np.float32(0.5), 3), (np.float32(1), np.int32(4)), (0, np.float16(2)),
                                  (np.int32(1), 5, np.float32(1)), (np.float64(0), 2), (np.int64(4),),
                                  (np.int32(0), np.int64(3), np.int8(1))])
@pytest.mark.parametrize("dtype", [None, "int32"])
def test_arange_of_numpy_scalars_as_pytorch(args, dtype):
    # a NumPy float scalar is a float: the default float dtype, as PyTorch's (ember gave int64)
    e = ember.arange(*args, **({"dtype": getattr(ember, dtype)} if dtype else {}))
    t = torch.arange(*args, **({"dtype": getattr(torch, dtype)} if dtype else {}))
    assert_close(e, t)


def _special_nodes(m):
    x = m.ones(3, requires_grad=True)
    y = x.clone()
    y[0] = 2  # CopySlices
    z = m.zeros(3).copy_(x)  # CopyBackwards
    acc = (x * 2).grad_fn.next_functions[0][0]  # AccumulateGrad
    return [(f.name(), type(f).__name__, repr(f).split(" at ")[0]) for f in (y.grad_fn, z.grad_fn, acc)] + \
        [repr(y).split("grad_fn=")[1], repr(z).split("grad_fn=")[1]]


def test_accumulate_grad_and_copy_nodes_are_named_as_pytorch():
    # name() in PyTorch's torch::autograd:: namespace; the type, repr and a printed tensor without it
    assert _special_nodes(ember) == _special_nodes(torch)


@pytest.mark.parametrize("make", [lambda m, x: _set_first(x.clone()), lambda m, x: m.zeros(3).copy_(x)],
                         ids=["CopySlices", "CopyBackwards"])
def test_modified_in_place_message_names_the_copy_nodes_as_pytorch(make):
    # PyTorch's message names the creator by name(), in its torch::autograd:: namespace
    messages = []
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        y = make(m, x)
        z = y * y
        with m.no_grad():
            y.add_(1)
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        messages.append(str(info.value).split(" is at version")[0])
    assert messages[0] == messages[1]


def _set_first(y):
    y[0] = 2.0
    return y
