"""The layout of an elementwise op's result where its operands' layouts differ: PyTorch's TensorIterator orders the
result's dimensions by its operands' strides, the first operand that tells two dimensions apart deciding (a broadcast
dimension tells nothing), where NumPy falls back to row-major. So ``x.t() + y`` is transposed, a channels-last
tensor plus a contiguous one channels-last, and ``.view`` of the result fails where PyTorch's does (gram-ai/
capsule-networks' ``(x * y[:, :, None]).view(x.size(0), -1)`` of a transposed ``x`` stops under PyTorch). The values
are NumPy's either way."""

import random

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_same_error


def test_product_with_a_broadcast_operand_keeps_pytorchs_layout():
    strides = []
    for m in (ember, torch):
        x = m.zeros(10, 8, 16).transpose(0, 1)
        z = x * m.zeros(8, 10)[:, :, None]
        strides.append(z.stride())
    assert strides[0] == strides[1] == (16, 128, 1)


def test_view_of_such_a_product_fails_as_pytorchs():
    assert_same_error(lambda m: (m.zeros(10, 8, 16).transpose(0, 1) * m.zeros(8, 10)[:, :, None]).view(8, -1))


def _from(m, a):
    return ember.from_numpy(a) if m is ember else torch.from_numpy(a)


def _operands(m, seed=0):
    """Named operands, the same values under ember and PyTorch: a (4, 3) row-major, its transposed twin, a slice,
    a (2, 3, 4, 5) channels-last one and row-major one, a bias and a column."""
    rng = np.random.default_rng(seed)
    x = _from(m, rng.standard_normal((3, 4)).astype(np.float32))
    y = _from(m, rng.standard_normal((4, 3)).astype(np.float32))
    s = _from(m, rng.standard_normal((4, 6)).astype(np.float32))
    c = _from(m, rng.standard_normal((2, 3, 4, 5)).astype(np.float32))
    d = _from(m, rng.standard_normal((2, 3, 4, 5)).astype(np.float32))
    b = _from(m, rng.standard_normal(3).astype(np.float32))
    return {"xt": x.t(), "y": y, "sl": s[:, ::2], "cl": c.to(memory_format=m.channels_last), "c": d, "b": b,
            "col": _from(m, rng.standard_normal((4, 1)).astype(np.float32)),
            "p3": _from(m, rng.standard_normal((2, 3, 4)).astype(np.float32)).permute(2, 0, 1),
            "q3": _from(m, rng.standard_normal((4, 2, 3)).astype(np.float32))}


CASES = {
    "xt + y": lambda m, o: o["xt"] + o["y"],
    "y + xt": lambda m, o: o["y"] + o["xt"],
    "xt * y": lambda m, o: o["xt"] * o["y"],
    "xt - y (sub, alpha)": lambda m, o: m.sub(o["xt"], o["y"], alpha=2),
    "xt / y": lambda m, o: o["xt"] / o["y"],
    "xt ** y": lambda m, o: o["xt"].abs() ** o["y"],
    "xt + y double": lambda m, o: o["xt"] + o["y"].double(),
    "xt < y": lambda m, o: o["xt"] < o["y"],
    "xt == y": lambda m, o: o["xt"] == o["y"],
    "logical_and": lambda m, o: m.logical_and(o["xt"] > 0, o["y"] > 0),
    "maximum": lambda m, o: m.maximum(o["xt"], o["y"]),
    "atan2": lambda m, o: m.atan2(o["xt"], o["y"]),
    "sl + xt": lambda m, o: o["sl"] + o["xt"],
    "xt + sl": lambda m, o: o["xt"] + o["sl"],
    "xt + b": lambda m, o: o["xt"] + o["b"],
    "b + xt": lambda m, o: o["b"] + o["xt"],
    "xt * col": lambda m, o: o["xt"] * o["col"],
    "cl + c": lambda m, o: o["cl"] + o["c"],
    "c + cl": lambda m, o: o["c"] + o["cl"],
    "cl * c[:, :1]": lambda m, o: o["cl"] * o["c"][:, :1],
    "p3 + q3": lambda m, o: o["p3"] + o["q3"],
    "q3 + p3": lambda m, o: o["q3"] + o["p3"],
    "where(xt > 0, xt, y)": lambda m, o: m.where(o["xt"] > 0, o["xt"], o["y"]),
    "where(y > 0, xt, y)": lambda m, o: m.where(o["y"] > 0, o["xt"], o["y"]),
    "where(y > 0, xt, 0.0)": lambda m, o: m.where(o["y"] > 0, o["xt"], 0.0),
    "lerp": lambda m, o: m.lerp(o["xt"], o["y"], 0.5),
    "addcmul": lambda m, o: m.addcmul(o["xt"], o["y"], o["y"]),
    "xt.exp()": lambda m, o: o["xt"].exp(),
    "xt + 1": lambda m, o: o["xt"] + 1,
    "-p3": lambda m, o: -o["p3"],
    "cl.relu()": lambda m, o: m.relu(o["cl"]),
    "xt.sigmoid()": lambda m, o: o["xt"].sigmoid(),
    # one-input ops whose kernels compute on the flat array: the input's layout, as the ufuncs keep it
    "xt.erf()": lambda m, o: o["xt"].erf(),
    "cl.erfc()": lambda m, o: o["cl"].erfc(),
    "p3.erf() double": lambda m, o: o["p3"].double().erf(),
    "gelu(cl)": lambda m, o: m.nn.functional.gelu(o["cl"]),
    "gelu(xt, tanh)": lambda m, o: m.nn.functional.gelu(o["xt"], approximate="tanh"),
    "silu(p3)": lambda m, o: m.nn.functional.silu(o["p3"]),
    "lgamma(xt)": lambda m, o: o["xt"].abs().lgamma(),
    "digamma(cl)": lambda m, o: o["cl"].abs().digamma(),
    "gelu(xt) (grad)": lambda m, o: m.nn.functional.gelu(o["xt"].requires_grad_()),
    # two-input ops outside the elementwise nodes
    "rsub(xt, y)": lambda m, o: m.rsub(o["xt"], o["y"]),
    "rsub(y, xt)": lambda m, o: m.rsub(o["y"], o["xt"]),
    "fmax": lambda m, o: m.fmax(o["xt"], o["y"]),
    "fmin": lambda m, o: m.fmin(o["xt"], o["y"]),
    "heaviside": lambda m, o: m.heaviside(o["xt"], o["y"]),
    "igamma": lambda m, o: m.igamma(o["xt"].abs(), o["y"].abs()),
    "special.gammaincc": lambda m, o: m.special.gammaincc(o["xt"].abs(), o["y"].abs()),
    "isclose": lambda m, o: m.isclose(o["xt"], o["y"]),
    "complex": lambda m, o: m.complex(o["xt"], o["y"]),
    "polar": lambda m, o: m.polar(o["xt"].abs(), o["y"]),
    "logsigmoid(xt)": lambda m, o: m.nn.functional.logsigmoid(o["xt"]),  # (PyTorch's kernel: contiguous)
    "isreal(cl)": lambda m, o: m.isreal(o["cl"]),
    "isreal(xt complex)": lambda m, o: m.isreal(o["xt"] * 1j),
    "xt + y (grad)": lambda m, o: o["xt"].requires_grad_() + o["y"].requires_grad_(),
    "xt * y (grad)": lambda m, o: o["xt"].requires_grad_() * o["y"],
    "cl + c (grad)": lambda m, o: o["cl"].requires_grad_() + o["c"],
    "xt.add_(y)": lambda m, o: o["xt"].add_(o["y"]),
    "y.add_(xt)": lambda m, o: o["y"].add_(o["xt"]),
}


@pytest.mark.parametrize("name", CASES)
def test_result_strides_and_values_are_pytorchs(name):
    got = []
    for m in (ember, torch):
        z = CASES[name](m, _operands(m))
        got.append((tuple(z.shape), z.stride(), z.is_contiguous(), z.detach().numpy()))
    assert got[0][:3] == got[1][:3]
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-6, atol=1e-6)  # (pow, digamma: last bits)


def _sweep_operand(m, rng, shape):
    """A float32 operand of ``shape`` (sizes > 1) laid out at random: permuted, perhaps a slice of every other
    element, perhaps broadcast in some dimensions (stride 0, or a dimension it lacks)."""
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    step = rng.choice([1, 1, 2])
    pre = [shape[p] for p in perm]
    pre[-1] *= step
    a = np.arange(int(np.prod(pre)), dtype=np.float32).reshape(pre)
    t = _from(m, a)[..., ::step].permute(*np.argsort(perm).tolist())
    return t


def test_a_sweep_of_layouts_gives_pytorchs_strides():
    """Random permutations, slices and broadcasts of two or three operands: every op's result as PyTorch's."""
    rng = random.Random(0)
    for _ in range(300):
        shape = [rng.choice([2, 3, 4]) for _ in range(rng.choice([2, 3, 4]))]
        specs = []
        for k in range(rng.choice([2, 3])):
            nd = len(shape) if k == 0 else rng.choice(range(1, len(shape) + 1))
            keep = [n for n in shape[len(shape) - nd:]]
            specs.append((keep, rng.getstate()))
            rng.random()
        got = []
        for m in (ember, torch):
            ts = []
            for keep, state in specs:
                r = random.Random()
                r.setstate(state)
                ts.append(_sweep_operand(m, r, keep))
            zs = [ts[0] + ts[1], m.mul(ts[1], ts[0]), ts[0] > ts[1], m.maximum(ts[0], ts[1])]
            if len(ts) == 3:
                zs.append(m.where(ts[2] > 5, ts[0], ts[1]))
            got.append([(tuple(z.shape), z.stride(), z.numpy().tolist()) for z in zs])
        assert got[0] == got[1], [(keep) for keep, _ in specs]


@pytest.mark.parametrize("make", [
    lambda m: m.empty(0, 1, 3) + 0.3,  # (a number keeps TensorIterator off its fast setup: (3, 0, 1))
    lambda m: m.empty(0, 1, 3) * m.empty(0, 1, 3),  # (the fast setup: contiguous)
    lambda m: m.empty(0, 1, 3).exp(),
    lambda m: m.empty(0, 1, 3) + m.empty(1, 1, 3),
    lambda m: m.empty(0, 1, 3).add(m.empty(3)),
    lambda m: m.empty(4, 0, 1) + 2,
    lambda m: m.empty(0, 1, 3).transpose(0, 2) + 1,
    lambda m: m.empty(0, 1, 3).transpose(0, 2).exp(),  # (no elements: contiguous, the fast setup)
    lambda m: m.empty(2, 0, 3).permute(2, 1, 0) + 1,
    lambda m: m.empty(0, 2, 3).transpose(1, 2) + 1,
    lambda m: m.empty(0, 2, 3).transpose(1, 2).sigmoid(),
    lambda m: m.empty(2, 3, 0) + m.empty(2, 1, 0),
    lambda m: m.where(m.empty(0, 1, 3) > 0, m.empty(0, 1, 3), 1.0),
])
def test_empty_results_take_pytorchs_strides(make):
    """A result with no elements is laid out in TensorIterator's order too, its strides computed in that order
    (a dimension after one of size 0 takes stride 0), unless the fast setup (every operand of the result's shape,
    a tensor with no elements counting as contiguous) makes it contiguous."""
    got, want = make(ember), make(torch)
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()



_EMPTY_OPERANDS = {  # name -> an empty tensor not laid out row-major (each a copy of NumPy's contiguous empties)
    "permuted": lambda m, rg: m.empty(2, 0, 3, requires_grad=rg).permute(2, 1, 0),
    "transposed": lambda m, rg: m.empty(0, 3, requires_grad=rg).t(),
    "sliced": lambda m, rg: m.empty(4, 0, 3, requires_grad=rg).transpose(0, 2)[::2],
    "moved": lambda m, rg: m.empty(3, 2, 0, requires_grad=rg).movedim(2, 0),
}
_NUMBER_OPERAND_OPS = {  # a tensor beside a number that is no input: TensorIterator's binary setup, not the unary one
    "rsub": lambda m, x: 1.5 - x,
    "torch_rsub": lambda m, x: m.rsub(x, 2),
    "remainder": lambda m, x: x % 2,
    "remainder_fn": lambda m, x: m.remainder(x, 0.3),
    "fmod": lambda m, x: m.fmod(x, 2.5),
    "add": lambda m, x: x + 1,
    "mul": lambda m, x: x * 2,
    "div": lambda m, x: x / 3,
    "pow": lambda m, x: x ** 2,
    "floor_divide": lambda m, x: x // 2,
    "eq": lambda m, x: x == 0,
    "clamp": lambda m, x: x.clamp(0, 1),
    "where": lambda m, x: m.where(x > 0, x, 0.0),
    "lerp": lambda m, x: x.lerp(x, 0.5),
    "atan2": lambda m, x: m.atan2(x, x),
    "exp": lambda m, x: x.exp(),  # (the unary setup: contiguous)
    "sigmoid": lambda m, x: x.sigmoid(),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("operand", list(_EMPTY_OPERANDS))
@pytest.mark.parametrize("op", list(_NUMBER_OPERAND_OPS))
def test_empty_results_of_a_tensor_and_a_number_take_pytorchs_strides(op, operand, requires_grad):
    """An op of one tensor and a number (``2 - x``, ``x % 2``, ``fmod``) whose result has no elements:
    PyTorch's TensorIterator runs it as a binary op with a 0-d operand, so the result takes the tensor's order of
    dimensions (its strides computed in that order, a dimension after one of size 0 taking stride 0), as ``x + 1``'s;
    NumPy's result is row-major."""
    got, want = (_NUMBER_OPERAND_OPS[op](m, _EMPTY_OPERANDS[operand](m, requires_grad)) for m in (ember, torch))
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    assert got.requires_grad == want.requires_grad
