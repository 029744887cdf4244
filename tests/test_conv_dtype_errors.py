"""A convolution given tensors of different dtypes (a float64 NumPy image, a uint8 image, a layer made .double())
fails as PyTorch's: a bias of another dtype than the input first, before the shapes (``Input type (double) and bias
type (float) should be the same``), then a weight of another dtype after them (``expected scalar type Double but
found Float``). Transposed convolutions and padding="same"/"valid" add a bias of another dtype in the input's."""

import warnings

import numpy as np
import pytest
import torch

import ember

F32, F64 = "float32", "float64"
# (input dtype, weight dtype, bias dtype or None)
DTYPES = [(F64, F32, F32), (F64, F64, F32), (F32, F64, F32), (F32, F64, F64), (F64, F32, F64), (F32, F32, F64),
          ("int64", F32, F32), ("int64", F32, None), ("uint8", F32, F32), ("uint8", F32, None), ("int8", F32, F32),
          ("bool", F32, F32), ("float16", F32, None), ("bfloat16", F32, F32), (F32, "float16", None), (F64, F32, None)]
SHAPES = {  # (input shape, weight shape, function); bias: weight.shape[0] (transposed: [1])
    "conv1d": ((2, 3, 9), (4, 3, 3)), "conv2d": ((1, 3, 8, 8), (4, 3, 3, 3)), "conv3d": ((1, 3, 4, 4, 4), (2, 3, 2, 2, 2)),
    "conv2d_unbatched": ((3, 8, 8), (4, 3, 3, 3)), "conv_transpose2d": ((1, 3, 5, 5), (3, 4, 3, 3)),
    "conv_transpose1d": ((1, 3, 5), (3, 2, 3)),
}


def _outcome(m, op, dtypes, **kwargs):
    (xs, ws), (xd, wd, bd) = SHAPES[op], dtypes
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal(xs).astype(np.float32) * 3).to(getattr(m, xd))
    w = m.tensor(rng.standard_normal(ws).astype(np.float32)).to(getattr(m, wd))
    b = None if bd is None else m.tensor(rng.standard_normal(ws[1] if "transpose" in op else ws[0])).to(getattr(m, bd))
    fn = getattr(m.nn.functional, op.replace("_unbatched", ""))
    try:
        out = fn(x, w, b, **kwargs)
    except Exception as e:  # noqa: BLE001 (the error's type and message are compared)
        return type(e).__name__, str(e)
    return str(out.dtype).split(".")[-1], out.float().detach().numpy()


@pytest.mark.parametrize("dtypes", DTYPES, ids=["-".join(map(str, d)) for d in DTYPES])
@pytest.mark.parametrize("op", list(SHAPES))
def test_mixed_dtypes_as_torch(op, dtypes):
    want, got = _outcome(torch, op, dtypes), _outcome(ember, op, dtypes)
    if "transpose" in op and dtypes[0] in ("int64", "uint8", "int8", "bool") and want[0] == "NotImplementedError":
        pytest.skip("PyTorch has no integer transposed convolution kernel; ember's refusal words differ")
    assert got[0] == want[0], (got, want)
    if isinstance(want[1], str):  # (PyTorch's oneDNN path's words where its heuristics take it: test_onednn_...)
        assert got[1] == want[1]
    else:
        np.testing.assert_allclose(got[1], want[1], rtol=2e-2 if "16" in str(dtypes) else 1e-5, atol=1e-2)


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("dtypes", [(F32, F32, F64), (F64, F64, F32), (F64, F32, F32)])
def test_padding_string_orders_checks_as_torch(padding, dtypes):
    want, got = _outcome(torch, "conv2d", dtypes, padding=padding), _outcome(ember, "conv2d", dtypes, padding=padding)
    assert got[0] == want[0]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)


def test_bias_check_precedes_channel_check():
    """A float64 input with the wrong number of channels: PyTorch names the dtype first (with a bias)."""
    for kwargs in ({}, {"bias": False}):
        outs = []
        for m in (torch, ember):
            layer = m.nn.Conv2d(3, 4, 3, **kwargs)
            try:
                layer(m.zeros(1, 2, 8, 8, dtype=m.float64))
            except RuntimeError as e:
                outs.append(str(e))
        assert outs[0] == outs[1]


@pytest.mark.parametrize("op", ["conv_transpose2d", "conv2d_same"])
def test_cast_bias_gets_gradient_in_its_dtype(op):
    grads = []
    for m in (torch, ember):
        x = m.ones(1, 3, 5, 5, requires_grad=True)
        b = m.tensor([0.5, -1.0, 2.0, 0.25], dtype=m.float64, requires_grad=True)
        if op == "conv_transpose2d":
            y = m.nn.functional.conv_transpose2d(x, m.ones(3, 4, 3, 3), b)
        else:
            y = m.nn.functional.conv2d(x, m.ones(4, 3, 3, 3), b, padding="same")
        (y * y).sum().backward()
        grads.append((str(y.dtype).split(".")[-1], str(b.grad.dtype).split(".")[-1], b.grad.numpy(), x.grad.numpy()))
    assert grads[0][:2] == grads[1][:2] == ("float32", "float64")
    np.testing.assert_allclose(grads[1][2], grads[0][2], rtol=1e-6)
    np.testing.assert_allclose(grads[1][3], grads[0][3], rtol=1e-6)


KERNEL_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "bool", "float16", "bfloat16", "float64", "complex64"]


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True], ids=["conv", "conv_transpose"])
def test_integer_and_bool_kernels_as_torch(transposed, nd, dtype):
    """Input and weight of one dtype: PyTorch's CPU convolution takes every number type but bool; its transposed
    convolution only the floating and complex types and int64 (NotImplementedError naming its kernel)."""
    outcomes = []
    for m in (ember, torch):
        d = getattr(m, dtype)
        x = (m.arange(2 * 5 ** nd) % 3).reshape((1, 2) + (5,) * nd).to(d)
        w = (m.arange(2 * 2 * 2 ** nd) % 2).reshape((2, 2) + (2,) * nd).to(d)
        fn = getattr(m.nn.functional, f"conv{'_transpose' if transposed else ''}{nd}d")
        try:
            out = fn(x, w)
        except NotImplementedError as e:
            outcomes.append(("NotImplementedError", str(e)))
            continue
        outcomes.append((str(out.dtype).split(".")[-1], out.to(m.complex128).numpy().tolist()))
    assert outcomes[0] == outcomes[1]


def test_same_padding_asymmetric_warns_once_as_torch():
    """padding="same" whose total padding is odd (an even kernel, odd dilation): PyTorch's UserWarning, once per
    process; a symmetric one (odd kernel, or an even kernel with an even dilation) never warns."""
    from ember import _warnings

    _warnings._warned_once.discard(ASYMMETRIC_SAME)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.nn.functional.conv2d(ember.ones(1, 2, 4, 4), ember.ones(2, 2, 3, 3), padding="same")
        ember.nn.functional.conv2d(ember.ones(1, 2, 4, 4), ember.ones(2, 2, 2, 2), padding="same", dilation=2)
        assert not caught
        ember.nn.functional.conv1d(ember.ones(1, 2, 4), ember.ones(2, 2, 2), padding="same")
        ember.nn.functional.conv2d(ember.ones(1, 2, 4, 4), ember.ones(2, 2, 2, 2), padding="same")
    assert [(str(w.message), w.category) for w in caught] == [(ASYMMETRIC_SAME, UserWarning)]


ASYMMETRIC_SAME = ("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
                   "of the input be created")


# (op, input shape, weight shape, keywords): cases on either side of PyTorch's oneDNN heuristics (a batch of one or
# more, 1x1, 3x3 and 5x5 kernels, strides, groups, an input past 20480 elements, a transposed one's output padding)
ONEDNN_CASES = [
    ("conv2d", (8, 16, 32, 32), (32, 16, 3, 3), {}), ("conv2d", (1, 16, 32, 32), (32, 16, 3, 3), {"stride": 2}),
    ("conv2d", (1, 16, 40, 40), (8, 16, 3, 3), {}), ("conv2d", (1, 4, 12, 12), (4, 4, 5, 5), {}),
    ("conv2d", (1, 4, 12, 12), (4, 1, 3, 3), {"groups": 4}), ("conv2d", (1, 4, 12, 12), (4, 4, 1, 1), {}),
    ("conv2d", (2, 4, 12, 12), (4, 4, 1, 1), {}), ("conv1d", (8, 16, 64), (32, 16, 3), {}),
    ("conv1d", (1, 4, 30), (4, 4, 5), {}), ("conv3d", (2, 8, 8, 8, 8), (8, 8, 3, 3, 3), {}),
    ("conv_transpose2d", (8, 16, 12, 12), (16, 8, 3, 3), {}),
    ("conv_transpose2d", (8, 16, 12, 12), (16, 8, 3, 3), {"stride": 2, "output_padding": 1}),
    ("conv_transpose2d", (8, 16, 12, 12), (16, 8, 3, 3), {"stride": 1, "dilation": 2, "output_padding": 1}),
    ("conv_transpose1d", (1, 4, 9), (4, 2, 3), {}),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtypes", [(F32, F64), (F64, F32), (F32, "bfloat16"), ("bfloat16", F32), (F32, "float16"),
                                    ("float16", F32)], ids="-".join)
@pytest.mark.parametrize("case", ONEDNN_CASES, ids=lambda c: f"{c[0]}{c[1]}{c[3]}")
def test_onednn_path_weight_dtype_error_as_torch(case, dtypes, threads):
    """A weight of another dtype than the input: PyTorch's oneDNN path's words (``Input type (torch.FloatTensor)
    and weight type (torch.DoubleTensor) should be the same or input should be a MKLDNN tensor ...``, a bfloat16
    one's ``CPUBFloat16Type``) where its heuristics take that path, its own kernels' words elsewhere; the thread
    count is one of them (a 1x1 kernel's small case)."""
    op, xs, ws, kwargs = case

    def outcome(m):
        before = m.get_num_threads()
        m.set_num_threads(threads)
        try:
            getattr(m.nn.functional, op)(m.ones(xs, dtype=getattr(m, dtypes[0])), m.ones(ws, dtype=getattr(m, dtypes[1])),
                                         **kwargs)
        except RuntimeError as err:
            return str(err)
        finally:
            m.set_num_threads(before)
        return None

    want = outcome(torch)
    assert want is not None
    assert outcome(ember) == want
