"""bfloat16 (and float16) tensors as PyTorch has them on the CPU: creation, conversions, promotion, ops
computed in float32 and rounded once, autograd, nn modules and optimizers; results against torch within one
bfloat16 ulp (most are bit-exact)."""

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

F_OPS = {
    "add": lambda m, x, y: x + y, "mul": lambda m, x, y: x * y, "div": lambda m, x, y: x / (y.abs() + 1),
    "add_scalar": lambda m, x, y: x + 0.1, "pow": lambda m, x, y: x ** 2, "exp": lambda m, x, y: x.exp(),
    "tanh": lambda m, x, y: x.tanh(), "sigmoid": lambda m, x, y: x.sigmoid(), "relu": lambda m, x, y: m.relu(x),
    "sqrt": lambda m, x, y: (x.abs() + 0.1).sqrt(), "clamp": lambda m, x, y: x.clamp(-0.5, 0.5),
    "sum": lambda m, x, y: (x * 30).sum(), "sum_dim": lambda m, x, y: (x * 30).sum(1),
    "mean": lambda m, x, y: x.mean(0), "var": lambda m, x, y: x.var(1), "std": lambda m, x, y: x.std(),
    "cumsum": lambda m, x, y: x.cumsum(1), "norm": lambda m, x, y: x.norm(), "max": lambda m, x, y: x.max(1).values,
    "logsumexp": lambda m, x, y: x.logsumexp(1),
    "matmul": lambda m, x, y: x @ y.T, "bmm": lambda m, x, y: m.bmm(x[None], y.T[None]),
    "linear": lambda m, x, y: m.nn.functional.linear(x, y, y[0, :4] if y.shape[0] == 4 else None),
    "einsum": lambda m, x, y: m.einsum("ij,kj->ik", x, y),
    "gelu": lambda m, x, y: m.nn.functional.gelu(x), "gelu_tanh": lambda m, x, y: m.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda m, x, y: m.nn.functional.silu(x),
    "softmax": lambda m, x, y: x.softmax(-1), "log_softmax": lambda m, x, y: x.log_softmax(-1),
    "layer_norm": lambda m, x, y: m.nn.functional.layer_norm(x, (16,), y[0], y[1]),
    "rms_norm": lambda m, x, y: m.nn.functional.rms_norm(x * 3 + 1, (16,), y[0]),
    "rms_norm_plain": lambda m, x, y: m.nn.functional.rms_norm(x, (6, 16)),
    "cross_entropy": lambda m, x, y: m.nn.functional.cross_entropy(x, m.tensor([1, 2, 3, 0, 5, 7])),
    "mse": lambda m, x, y: m.nn.functional.mse_loss(x, y),
    "conv1d": lambda m, x, y: m.nn.functional.conv1d(x[None], y.reshape(6, 16, 1)[:, :6].reshape(6, 6, 1) * 0 +
                                                      y[:, :6].reshape(6, 6, 1)),
    "sdpa": lambda m, x, y: m.nn.functional.scaled_dot_product_attention(x[None], y[None], y[None], is_causal=True),
    "embedding": lambda m, x, y: m.nn.functional.embedding(m.tensor([1, 4]), x),
}


def bf16_ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in bfloat16 ulps of the larger magnitude (a and b: float32 arrays of bfloat16 values)."""
    mag = np.maximum(np.abs(a), np.abs(b)).astype(np.float64)
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(mag, 2.0 ** -126))) - 7)
    return np.abs(a.astype(np.float64) - b) / ulp


def values(t) -> np.ndarray:
    return t.detach().float().numpy()


def assert_bf16_close(e, t, name=""):
    """Every element within one bfloat16 ulp of torch's."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (name, e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape), name
    ulps = bf16_ulps(values(e), values(t))
    assert ulps.max(initial=0) <= 1, f"{name}: {ulps.max()} bfloat16 ulps apart"


def assert_grad_close(e, t, name=""):
    """Within two bfloat16 ulps of the gradient's largest element: PyTorch's backward formulas round some
    intermediate steps to bfloat16 (logsumexp's, softmax's), where ember's round once."""
    assert e.dtype == ember.bfloat16 and tuple(e.shape) == tuple(t.shape), name
    top = np.abs(values(t)).max()
    assert np.abs(values(e) - values(t)).max() <= 2 * 2.0 ** (np.floor(np.log2(max(top, 2.0 ** -126))) - 7), name


def inputs(m, dtype, grad=False):
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((6, 16)).astype(np.float32), dtype=getattr(m, dtype), requires_grad=grad)
    y = m.tensor(rng.standard_normal((6, 16)).astype(np.float32), dtype=getattr(m, dtype), requires_grad=grad)
    return x, y


@pytest.mark.parametrize("name", list(F_OPS))
def test_ops_and_gradients_match_torch(name):
    results = {}
    for m in (torch, ember):
        x, y = inputs(m, "bfloat16", grad=True)
        out = F_OPS[name](m, x, y)
        g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
        out.backward(m.tensor(g, dtype=m.bfloat16))
        results[m] = (out, x.grad, y.grad)
    (eo, egx, egy), (to, tgx, tgy) = results[ember], results[torch]
    assert_bf16_close(eo, to, name)
    for eg, tg in ((egx, tgx), (egy, tgy)):
        assert (eg is None) == (tg is None), name
        if tg is not None:
            assert_grad_close(eg, tg, name + " grad")


def test_reductions_accumulate_in_float32_and_round_once():
    # 4096 values of 1.0 plus one of 2**-6: bfloat16 accumulation would stop at 256
    for m in (torch, ember):
        x = m.ones(4096, dtype=m.bfloat16)
        assert x.sum().item() == 4096.0 and x.mean().item() == 1.0
    a = np.random.default_rng(3).standard_normal((64, 300)).astype(np.float32)
    e, t = ember.tensor(a, dtype=ember.bfloat16), torch.tensor(a, dtype=torch.bfloat16)
    assert values(e.sum(1)).tobytes() == values(t.sum(1)).tobytes()
    assert values(e @ e.T).tobytes() == values(t @ t.T).tobytes()


@pytest.mark.parametrize("make", [
    lambda m: m.tensor([[1.1, -2.7], [3.3, 1e-3]], dtype=m.bfloat16), lambda m: m.tensor([1.7, 2.2]).bfloat16(),
    lambda m: m.tensor([1.7, 2.2]).to(m.bfloat16), lambda m: m.zeros(2, 3, dtype=m.bfloat16),
    lambda m: m.ones(2, dtype=m.bfloat16), lambda m: m.full((3,), 1.3, dtype=m.bfloat16),
    lambda m: m.arange(0, 300, 7, dtype=m.bfloat16), lambda m: m.arange(0, 3, 0.25, dtype=m.bfloat16),
    lambda m: m.tensor([1.7, 2.2], dtype=m.float16).to(m.bfloat16),
    lambda m: m.tensor([1.7, 2.2], dtype=m.bfloat16).half(), lambda m: m.tensor([1.7, 2.2], dtype=m.bfloat16).double(),
    lambda m: m.tensor([3e38, -1e-40, float("inf"), float("nan")], dtype=m.bfloat16),
    lambda m: m.tensor([257, 513]).to(m.bfloat16),
], ids=["tensor", "method", "to", "zeros", "ones", "full", "arange", "arange_float", "from_half", "to_half",
        "to_double", "extremes", "from_int"])
def test_creation_and_conversions_give_torchs_bits(make):
    e, t = make(ember), make(torch)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(values(e), values(t))


# float64 values whose float16 / bfloat16 neighbours differ by rounding once or through float32 (within float32's
# rounding of a halfway point), with random ones
_HALFWAY = np.concatenate([np.random.default_rng(0).uniform(-1, 1, 100000), [float.fromhex("0x1.50dfff6995595p-6")]])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("convert", [
    lambda m, a, d: m.tensor(a).to(d), lambda m, a, d: m.tensor(a, dtype=d), lambda m, a, d: m.as_tensor(a, dtype=d),
    lambda m, a, d: m.from_numpy(a).type_as(m.ones(1, dtype=d)), lambda m, a, d: m.empty(len(a), dtype=d).copy_(
        m.tensor(a)), lambda m, a, d: _assigned(m.zeros(len(a), dtype=d), m.tensor(a)),
], ids=["to", "tensor", "as_tensor", "type_as", "copy_", "setitem"])
def test_float64_into_half_precision_rounds_through_float32_as_torch(convert, dtype):
    """PyTorch converts float64 to float16 / bfloat16 through float32 (two roundings); NumPy rounds once, which
    differs in about one value in 10^4 (an input to a float16 loss or model off by an ulp)."""
    e, t = convert(ember, _HALFWAY, getattr(ember, dtype)), convert(torch, _HALFWAY, getattr(torch, dtype))
    assert values(e).tobytes() == values(t).tobytes()


# integers past 2**24 whose bfloat16 neighbours differ by rounding once or through float32
_BIG_INTS = [2**25 + 2**17 + 1, -(2**25 + 2**17 + 1), 2**30 + 2**22 + 1, 2**24 + 1, 65519, 3001]


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("convert", [
    lambda m, a, d: m.tensor(a, dtype=d).to(m.bfloat16),
    lambda m, a, d: m.as_tensor(m.tensor(a, dtype=d), dtype=m.bfloat16),
    lambda m, a, d: m.zeros(len(a), dtype=m.bfloat16).copy_(m.tensor(a, dtype=d)),
    lambda m, a, d: _assigned(m.zeros(len(a), dtype=m.bfloat16), m.tensor(a, dtype=d)),
    lambda m, a, d: m.stack([m.full((1,), v, dtype=m.bfloat16) for v in a]),
    lambda m, a, d: m.stack([m.zeros(1, dtype=m.bfloat16).fill_(v) for v in a]),
], ids=["to", "as_tensor", "copy_", "setitem", "full", "fill_"])
def test_integers_into_bfloat16_round_through_float32_as_torch(convert, dtype):
    """PyTorch converts an integer to bfloat16 through float32 as well: 2**25 + 2**17 + 1 is float32's
    2**25 + 2**17, a halfway point that rounds to even (2**25), where one rounding goes up."""
    e, t = convert(ember, _BIG_INTS, getattr(ember, dtype)), convert(torch, _BIG_INTS, getattr(torch, dtype))
    assert values(e).tolist() == values(t).tolist()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", [
    lambda m, x: x * 0.1, lambda m, x: 0.1 * x, lambda m, x: x / 0.3, lambda m, x: 0.3 / x,
    lambda m, x: x.clone().mul_(0.1), lambda m, x: x.clone().div_(0.3), lambda m, x: m.mul(x, 3001),
    lambda m, x: m.div(x, 2.7182818), lambda m, x: x / 0.0,
], ids=["mul", "rmul", "div", "rdiv", "mul_", "div_", "mul_int", "div_e", "div_zero"])
def test_half_precision_times_a_number_rounds_once_as_torch(op, dtype):
    """A float16 / bfloat16 tensor times or divided by a Python number computes in float32 with the number rounded
    to float32, as PyTorch's scalar kernels (NumPy rounds the number to the half precision first: a third of
    ``x * 0.1`` an ulp off); its gradient too."""
    x = np.random.default_rng(0).standard_normal(20000).astype(np.float32)
    g = np.random.default_rng(1).standard_normal(20000).astype(np.float32)
    seen = []
    for m in (ember, torch):
        t = m.tensor(x).to(getattr(m, dtype)).requires_grad_()
        out = op(m, t)
        if out.requires_grad:
            out.backward(m.tensor(g).to(getattr(m, dtype)))
        seen.append((values(out).tobytes(), None if t.grad is None else values(t.grad).tobytes()))
    assert seen[0] == seen[1]


_N = 16384  # (a multiple of PyTorch's vector width: its scalar loop for the last elements may round otherwise)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", [
    lambda m, x, y: m.add(x, y, alpha=0.1), lambda m, x, y: m.sub(x, y, alpha=0.3), lambda m, x, y: x.add(y, alpha=3),
    lambda m, x, y: m.add(x, y.detach().float()[0], alpha=2.7), lambda m, x, y: m.add(x, 0.3, alpha=0.1) + y,
    lambda m, x, y: m.sub(x, 0.1, alpha=0.7) * y, lambda m, x, y: x + 0.1000061035157 + y,
    lambda m, x, y: 0.1000061035157 - x + y, lambda m, x, y: x - 3.30175781250300 + y,
    lambda m, x, y: x.clone().add_(y, alpha=0.1), lambda m, x, y: x.clone().sub_(y, alpha=0.1),
    lambda m, x, y: x.clone().add_(0.1000061035157), lambda m, x, y: x * m.tensor(0.1) + y,
    lambda m, x, y: x / m.tensor(0.3, dtype=m.float64) + y, lambda m, x, y: x.clone().mul_(m.tensor(0.1)),
    lambda m, x, y: m.tensor(0.1) * x.detach() + y, lambda m, x, y: x + 3001 + y, lambda m, x, y: 257 - x + y,
    lambda m, x, y: x.clone().add_(1025) + y,
], ids=["add_alpha", "sub_alpha", "add_int_alpha", "add_0d_alpha", "add_number_alpha", "sub_number_alpha",
        "add_number", "rsub_number", "sub_number", "add_alpha_", "sub_alpha_", "add_number_", "mul_0d", "div_0d",
        "mul_0d_", "rmul_0d", "add_int", "rsub_int", "add_int_"])
def test_half_precision_with_a_number_rounds_as_torch(op, dtype):
    """float16 / bfloat16 with a Python number or a 0-d tensor as PyTorch's kernels: add and sub take the number
    and ``alpha`` rounded to the half precision (through float32) and compute ``x + alpha * y`` in float32,
    rounded once; mul and div by a 0-d floating tensor on the right read its value in float32. Gradients too."""
    rng = np.random.default_rng(0)
    x, y, g = (rng.standard_normal(_N).astype(np.float32) * 3 for _ in range(3))
    seen = []
    for m in (ember, torch):
        d = getattr(m, dtype)
        a, b = m.tensor(x).to(d).requires_grad_(), m.tensor(y).to(d).requires_grad_()
        out = op(m, a, b)
        out.backward(m.tensor(g).to(d))
        seen.append([values(out).tobytes(), out.dtype == d, *(None if t.grad is None else values(t.grad).tobytes()
                                                                 for t in (a, b))])
    assert seen[0] == seen[1]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("other", ["float32", "float64"])
@pytest.mark.parametrize("op", [
    lambda x, y: x.add_(y), lambda x, y: x.sub_(y), lambda x, y: x.add_(y, alpha=3), lambda x, y: x.mul_(y),
    lambda x, y: x.div_(y),
], ids=["add_", "sub_", "add_alpha_", "mul_", "div_"])
def test_half_precision_in_place_with_a_0d_tensor_of_another_dtype_as_torch(op, other, dtype):
    """In place, a 0-d floating tensor of another dtype is the kernels' scalar, as out of place: add_ and sub_
    round it to the half precision, mul_ and div_ read its float32 value (a float64 beyond float32's range is
    infinite there), not NumPy's arithmetic in its dtype."""
    x = np.tile(np.array([0.0, 1.0, -1.0, 0.1, 2.0315, 7.77, 1 / 3, 65504.0, -65000.0, 1e-8, 3.3e38, np.inf],
                         np.float32), 1024)
    seen = []
    for m in (ember, torch):
        got = []
        for v in (0.1, 1 / 3, 1 + 2.0**-12, 65519.0, 1e5, 3.5e38):
            a = m.tensor(x).to(getattr(m, dtype))
            out = values(op(a, m.tensor(v, dtype=getattr(m, other))))
            out[np.isnan(out)] = np.nan  # (one NaN: bfloat16's rounding keeps another payload than PyTorch's)
            got.append(out.tobytes())
        seen.append(got)
    assert seen[0] == seen[1]


@pytest.mark.parametrize("op", [lambda x, y: x * y, lambda x, y: x / y, lambda x, y: x.clone().mul_(y)],
                         ids=["mul", "div", "mul_"])
def test_half_precision_times_a_0d_tensor_keeps_its_tangent(op):
    """(The 0-d tensor read as its float32 value must still carry its forward-mode tangent.)"""
    seen = []
    for m in (ember, torch):
        fwad = m.autograd.forward_ad
        with fwad.dual_level():
            y = fwad.make_dual(m.tensor(3.0), m.tensor(1.0))
            primal, tangent = fwad.unpack_dual(op(m.full((4,), 2.0, dtype=m.float16), y))
            seen.append((values(primal).tolist(), None if tangent is None else values(tangent).tolist()))
    assert seen[0] == seen[1]


def _near_halfway(dtype: str) -> list[float]:
    """Python floats a hair either side of the midpoint between two neighbouring ``dtype`` values: the numbers
    whose rounding through float32 (PyTorch's) and directly (NumPy's) differ."""
    h = torch.tensor(np.random.default_rng(0).standard_normal(100).astype(np.float32)).to(getattr(torch, dtype))
    mids = ((h.double() + torch.nextafter(h, torch.full_like(h, 100)).double()) / 2).tolist()
    return [v + s * abs(v) * 2.0**-40 for v in mids for s in (1, -1)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("make", [
    lambda m, d, v: m.zeros(2, dtype=d).fill_(v), lambda m, d, v: m.full((2,), v, dtype=d),
    lambda m, d, v: _assigned(m.zeros(2, dtype=d), v), lambda m, d, v: _put(m.zeros(2, dtype=d), v),
    lambda m, d, v: m.zeros(2, dtype=d) + v, lambda m, d, v: m.zeros(2, dtype=d).add_(v),
    lambda m, d, v: m.full_like(m.zeros(2, dtype=d), v), lambda m, d, v: m.zeros(2, dtype=d).new_full((2,), v),
    lambda m, d, v: m.zeros(2, dtype=d).masked_fill(m.tensor([True, False]), v),
    lambda m, d, v: m.zeros(2, dtype=d).masked_fill_(m.tensor([True, False]), v),
    lambda m, d, v: m.full((2,), -6e4, dtype=d).clamp(min=v), lambda m, d, v: m.full((2,), 6e4, dtype=d).clamp(max=v),
], ids=["fill_", "full", "setitem", "setitem_index", "add", "add_", "full_like", "new_full", "masked_fill",
        "masked_fill_", "clamp_min", "clamp_max"])
def test_python_float_into_half_precision_rounds_through_float32_as_torch(make, dtype):
    """A Python float written into (or added to) a float16 / bfloat16 tensor is converted double -> float ->
    half, as PyTorch's; NumPy's one rounding differs for numbers just past a halfway point."""
    numbers = _near_halfway(dtype)
    e = [values(make(ember, getattr(ember, dtype), v)).tobytes() for v in numbers]
    t = [values(make(torch, getattr(torch, dtype), v)).tobytes() for v in numbers]
    assert e == t


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_alpha_that_overflows_is_refused_as_torch(dtype):
    for m in (ember, torch):
        x = m.ones(3, dtype=getattr(m, dtype))
        for call in (lambda m, x: m.add(x, x, alpha=1e300), lambda m, x: m.sub(x, 2.0, alpha=-1e300),
                     lambda m, x: x.clone().add_(x, alpha=1e300)):
            with pytest.raises(RuntimeError, match="without overflow"):
                call(m, x)


@pytest.mark.parametrize("dtype,alpha", [("float16", 65519.0), ("float16", -65505), ("bfloat16", 3.3896e38)])
def test_half_precision_alpha_just_past_the_largest_value_is_refused_as_torch(dtype, alpha):
    """PyTorch refuses an alpha beyond the dtype's largest finite value even where rounding would bring it back
    to that value (65519 rounds to float16's 65504): the check is on alpha itself."""
    for m in (ember, torch):
        x = m.ones(3, dtype=getattr(m, dtype))
        for call in (lambda m, x: m.add(x, x, alpha=alpha), lambda m, x: m.sub(x, 2.0, alpha=alpha),
                     lambda m, x: x.clone().add_(2, alpha=alpha)):
            with pytest.raises(RuntimeError, match="without overflow"):
                call(m, x)


def _put(x, v):
    x[0] = v
    return x


def _assigned(x, v):
    x[:] = v
    return x


def test_random_creation_makes_bfloat16():
    for make in (ember.randn, ember.rand, ember.empty):
        assert make(3, 2, dtype=ember.bfloat16).dtype == ember.bfloat16
    assert ember.randint(0, 5, (3,), dtype=ember.bfloat16).dtype == ember.bfloat16


def test_finfo_repr_item_tolist_numpy_as_torch():
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ember.finfo(ember.bfloat16), attr) == getattr(torch.finfo(torch.bfloat16), attr), attr
    a = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    for scale in (1, 1000, 1e-3):
        e, t = ember.tensor(a * scale, dtype=ember.bfloat16), torch.tensor(a * scale, dtype=torch.bfloat16)
        assert repr(e) == repr(t).replace("torch.", "ember.")
    assert e[0, 0].item() == t[0, 0].item() and e.tolist() == t.tolist()
    for x in (t, e):
        with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
            x.numpy()
    assert e.element_size() == 2 and e.is_floating_point() and ember.bfloat16.itemsize == 2


@pytest.mark.parametrize("other", ["float32", "float16", "float64", "int64", "int8", "bool", "pyfloat", "pyint",
                                   "scalar_tensor_f32"])
def test_type_promotion_as_torch(other):
    def result(m):
        x = m.ones(2, dtype=m.bfloat16)
        o = {"pyfloat": 0.5, "pyint": 3, "scalar_tensor_f32": m.tensor(2.0)}.get(other)
        return (x + (m.ones(2, dtype=getattr(m, other)) if o is None else o)).dtype

    assert str(result(ember)).split(".")[-1] == str(result(torch)).split(".")[-1]
    assert str(ember.promote_types(ember.bfloat16, ember.float16)) == "ember.float32"


def _train(m, dtype_name, opt_name):
    m.manual_seed(0)
    rng = np.random.default_rng(0)
    model = m.nn.Sequential(m.nn.Linear(8, 16), m.nn.GELU(), m.nn.LayerNorm(16), m.nn.Linear(16, 4))
    with m.no_grad():
        for p in model.parameters():
            p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    model = model.bfloat16() if dtype_name == "bfloat16" else model.half()
    x = m.tensor(rng.standard_normal((5, 8)).astype(np.float32), dtype=getattr(m, dtype_name))
    y = m.tensor([0, 1, 2, 3, 1])
    opt = m.optim.AdamW(model.parameters(), lr=1e-2) if opt_name == "adamw" else m.optim.SGD(
        model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = m.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss)
    return losses, list(model.parameters())


@pytest.mark.parametrize("opt_name", ["adamw", "sgd"])
def test_training_a_bfloat16_model_follows_torch(opt_name):
    (el, ep), (tl, tp) = _train(ember, "bfloat16", opt_name), _train(torch, "bfloat16", opt_name)
    for e, t in zip(el, tl):
        assert e.dtype == ember.bfloat16
        assert abs(e.item() - t.item()) <= 2 * 2 ** -7 * abs(t.item())
    for e, t in zip(ep, tp):
        assert e.dtype == ember.bfloat16 and e.grad.dtype == ember.bfloat16
        # three steps of an optimizer whose updates round in bfloat16: a few ulps of the largest weight
        assert np.abs(values(e) - values(t)).max() <= 4 * 2 ** -7 * np.abs(values(t)).max()


def test_half_model_trains_in_float16():
    (_, ep), (_, tp) = _train(ember, "float16", "sgd"), _train(torch, "float16", "sgd")
    for e, t in zip(ep, tp):
        assert e.dtype == ember.float16
        np.testing.assert_allclose(values(e), values(t), rtol=5e-3, atol=5e-3)


def test_float16_reductions_and_matmul_accumulate_in_float32_as_torch():
    a = np.random.default_rng(3).standard_normal((64, 300)).astype(np.float32)
    e, t = ember.tensor(a, dtype=ember.float16), torch.tensor(a, dtype=torch.float16)
    np.testing.assert_array_equal(e.sum(1).numpy(), t.sum(1).numpy())
    got, want = (e @ e.T).numpy(), (t @ t.T).numpy()  # one float16 ulp: PyTorch's GEMM sums in another order
    assert (np.abs(got.astype(np.float32) - want) <= np.spacing(np.abs(want))).all()
    assert ember.ones(4096, dtype=ember.float16).sum().item() == 4096.0


def test_ml_dtypes_arrays_become_bfloat16_tensors():
    import ml_dtypes

    a = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    for make in (ember.tensor, ember.as_tensor, ember.from_numpy):
        t = make(a)
        assert t.dtype == ember.bfloat16 and t.tolist() == [1.5, -2.0, 3.25]
    assert ember.from_numpy(a)._data is a  # shares memory, as from_numpy does


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,shapes", [
    ("addmm", [(64,), (32, 20), (20, 64)]), ("baddbmm", [(3, 4, 5), (3, 4, 6), (3, 6, 5)]),
    ("addbmm", [(4, 5), (3, 4, 6), (3, 6, 5)]), ("addmv", [(4,), (4, 6), (6,)]),
])
def test_addmm_family_rounds_once_as_torch(name, shapes, dtype):
    """Half-precision addmm/baddbmm/addmv sum the product and the input in float32 and round once (rounding the
    product first differs by an ulp in many entries); addbmm adds one batch entry at a time. Gradients too."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    for kw in ({}, {"beta": 0.5, "alpha": 2.0}):
        outs = []
        for m in (ember, torch):
            ins = [m.tensor(a).to(getattr(m, dtype)).requires_grad_() for a in arrays]
            out = getattr(m, name)(*ins, **kw)
            out.backward(m.ones_like(out))
            outs.append([out] + [t.grad for t in ins])
        for e, t in zip(*outs):
            _assert_equal_but_at_rare_ties(e.detach(), t.detach())


def _assert_equal_but_at_rare_ties(ours, theirs):
    """Bit-equal, except that an entry may differ by one half-precision ulp in at most 0.5 % of the entries (and
    at least one): PyTorch's half-precision GEMM sums in float32 in an order that depends on the CPU's vector width
    (AVX2 or AVX-512), so an entry whose float32 sum lands on a half-precision rounding midpoint rounds either way.
    Rounding twice (the product first) differs in about a quarter of the entries, so this still tells the two."""
    e, t = ours.float().numpy(), theirs.float().numpy()
    differ = e != t
    if not differ.any():
        return
    # one ulp of the half-precision dtype at each differing entry: the gap between the two neighbours of t
    half = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}[str(theirs.dtype).split(".")[-1]]
    at = t[differ].astype(half)
    ulp = np.abs(np.nextafter(at, np.array(np.inf, half)).astype(np.float32) - at.astype(np.float32))
    np.testing.assert_array_equal(np.abs(e[differ] - t[differ]), ulp, err_msg="more than one ulp apart")
    assert differ.sum() <= max(1, 0.005 * e.size), f"{differ.sum()} of {e.size} entries differ by an ulp"


def test_layer_norm_of_bfloat16_through_float32_parameters_computes_in_float32():
    """A bfloat16 input through a float32 LayerNorm (autocast's mixed case) is normalised in float32 and rounded
    once, with or without the affine parameters."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32) * 5
    w, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    for args in ((), (w, b)):
        e = ember.nn.functional.layer_norm(ember.tensor(x).bfloat16(), (64,), *map(ember.tensor, args))
        t = torch.nn.functional.layer_norm(torch.tensor(x).bfloat16(), (64,), *map(torch.tensor, args))
        assert e.dtype == ember.bfloat16
        diff = np.abs(e.float().numpy() - t.float().numpy()) / np.abs(t.float().numpy()).clip(1e-3)
        assert diff.max() <= 2 ** -8  # within one bfloat16 rounding


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_layer_norm_mixed_precision_gradients_as_torch(dtype):
    """autocast's mixed LayerNorm (half input, float32 weight and bias) in backward: the input's gradient is
    rounded to the input's dtype before the layer below uses it, and the weight and bias gradients are accumulated
    row by row in the input's dtype, as PyTorch's (one-thread) CPU kernel does: bit for bit."""
    rng = np.random.default_rng(0)
    x, lin_w = rng.standard_normal((32, 20)).astype(np.float32), rng.standard_normal((16, 20)).astype(np.float32)
    w, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    gy = rng.standard_normal((32, 16)).astype(np.float32)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        grads = []
        for m in (ember, torch):
            params = [m.tensor(a, requires_grad=True) for a in (lin_w, w, b)]
            h = m.tensor(x).to(getattr(m, dtype)) @ params[0].to(getattr(m, dtype)).T
            y = m.nn.functional.layer_norm(h, (16,), params[1], params[2])
            assert y.dtype == getattr(m, dtype)
            y.backward(m.tensor(gy).to(getattr(m, dtype)))
            grads.append([p.grad for p in params])
    finally:
        torch.set_num_threads(threads)
    for e, t in zip(*grads):
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_layer_norm_bfloat16_accumulation_kernel_matches_reference():
    """The compiled row accumulation of the mixed LayerNorm's parameter gradients rounds as the NumPy reference
    (ml_dtypes) does, infinities and NaN included."""
    from ember._kernels import norm as compiled
    from ember._kernels.policy import policy

    if not policy.use_compiled():
        pytest.skip("numba kernels are off")
    rng = np.random.default_rng(1)
    terms = (rng.standard_normal((300, 37)) * 10.0 ** rng.integers(-3, 4, (300, 37))).astype(np.float32)
    terms[5, 3], terms[7, 4], terms[9, 5] = np.inf, -np.inf, np.nan
    terms[2, 6] = terms[3, 6] = np.float32(3e38)
    acc = np.zeros(37, np.float32)
    compiled.accumulate_rows_bf16(terms, acc)
    ref = np.zeros(37, pytest.importorskip("ml_dtypes").bfloat16)
    with np.errstate(over="ignore", invalid="ignore"):
        for row in terms:
            ref = (ref.astype(np.float32) + row).astype(ref.dtype)
    np.testing.assert_array_equal(acc, ref.astype(np.float32))


NUMBER_OPS = {
    "mul": lambda x: x * 2.0315, "rmul": lambda x: -4.775 * x, "div": lambda x: x / 3.3, "rdiv": lambda x: 3.3 / x,
    "mul_int": lambda x: x * 3, "mul_method": lambda x: x.mul(0.1), "mul_": lambda x: x.clone().mul_(3.4445),
    "div_": lambda x: x.clone().div_(0.7), "imul": lambda x: _imul(x.clone(), 1 / 3),
    "add": lambda x: x + 0.1234, "rsub": lambda x: 0.1234 - x,  # (these round the number first, as NumPy does)
    # a + alpha * b: alpha rounded to the dtype, one fused multiply-add
    "add_alpha": lambda x: x.add(x * 0.7, alpha=0.3), "sub_alpha": lambda x: x.sub(x * 0.7, alpha=2.3),
    "add__alpha": lambda x: x.clone().add_(x * 0.7, alpha=-0.3), "sub__alpha": lambda x: x.clone().sub_(x, alpha=0.1),
}


def _imul(x, c):
    x *= c
    return x


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", list(NUMBER_OPS))
def test_products_and_quotients_with_a_python_number_compute_in_float32_bit_exact(op, dtype):
    # PyTorch's mul and div kernels take the number as a float32 (x * 2.0315 is not x * 2.03125), round once
    data = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
    outs = []
    for m in (ember, torch):
        x = m.tensor(data).to(getattr(m, dtype)).requires_grad_()
        y = NUMBER_OPS[op](x)
        (y * m.linspace(-1, 1, 4096, dtype=getattr(m, dtype))).sum().backward()
        outs.append((y.detach().float().numpy(), x.grad.float().numpy()))
    (ey, eg), (ty, tg) = outs
    np.testing.assert_array_equal(ey, ty)
    np.testing.assert_array_equal(eg, tg)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", ["add_", "sub_"])
def test_a_float32_tensor_updated_in_place_by_alpha_times_a_half_one_computes_in_float32(op, dtype):
    # an optimizer's p.add_(update, alpha=-lr) with a bfloat16 update (Muon's): alpha * update is not rounded to
    # the half precision first; it is a float32 product (PyTorch fuses it with the sum, ember rounds it: within
    # half a unit of the product's last place)
    data = np.random.default_rng(1).standard_normal((2, 2048)).astype(np.float32)
    outs = []
    for m in (ember, torch):
        p = m.tensor(data[0])
        update = m.tensor(data[1]).to(getattr(m, dtype))
        getattr(p, op)(update, alpha=-0.02)
        outs.append(p.numpy())
    product = torch.tensor(data[1]).to(getattr(torch, dtype)).float().numpy() * np.float32(0.02)
    assert (np.abs(outs[0] - outs[1]) <= np.spacing(np.abs(product)) / 2 + np.spacing(np.abs(outs[1]))).all()
    half_product = torch.tensor(data[1]).to(getattr(torch, dtype)).mul(0.02).float().numpy()  # (the old bug's)
    rounded_to_half_first = data[0] - half_product if op == "add_" else data[0] + half_product
    assert np.abs(outs[0] - outs[1]).sum() < np.abs(rounded_to_half_first - outs[1]).sum()


@pytest.mark.parametrize("dtype,ulps", [("bfloat16", 2 * 2.0**-7), ("float16", 2 * 2.0**-10)])
def test_logsumexp_of_a_long_half_precision_row_is_pytorchs(dtype, ulps):
    """A 4096-element row's logsumexp in bfloat16/float16 is computed in float32 and rounded once (a sum of
    exponentials accumulated in bfloat16 stalls: 7.9 where the answer is 8.8); within two units in the last place
    of PyTorch's."""
    x = np.random.default_rng(0).standard_normal((3, 4096)).astype(np.float32)
    e = ember.tensor(x, dtype=getattr(ember, dtype)).logsumexp(1)
    t = torch.tensor(x, dtype=getattr(torch, dtype)).logsumexp(1)
    assert e.dtype == getattr(ember, dtype)
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=ulps)
