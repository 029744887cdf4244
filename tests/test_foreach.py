"""torch._foreach_*: ember against torch on the same lists (values, in-place updates, return types)."""

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember.ops.foreach import FUNCTIONS

RNG = np.random.default_rng(0)
SHAPES = [(2,), (3, 2), ()]


def _lists():
    base = [np.abs(RNG.standard_normal(s)).astype(np.float32) + 0.5 for s in SHAPES]
    return [ember.tensor(a) for a in base], [torch.tensor(a) for a in base]


def _others(m, kind):
    arrays = [np.abs(RNG.standard_normal(s)).astype(np.float32) + 0.5 for s in SHAPES]
    if kind == "scalar":
        return 1.5
    if kind == "scalars":
        return [0.5, 2.0, 3.0]
    if kind == "tensor0d":
        return m.tensor(2.0)
    return [m.tensor(a) for a in arrays]


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "clamp_min", "clamp_max"]
UNARY = ["neg", "sqrt", "exp", "log", "abs", "sign", "reciprocal", "sigmoid"]


def _run(name, make_args, kwargs=None):
    state = RNG.bit_generator.state
    results = []
    for m in (ember, torch):
        RNG.bit_generator.state = state
        tensors = _lists()[0 if m is ember else 1]
        args = make_args(m)
        out = getattr(m, name)(tensors, *args, **(kwargs or {}))
        results.append((out, tensors))
    (e_out, e_in), (t_out, t_in) = results
    assert type(e_out) is type(t_out) and len(e_out) == len(t_out)
    for a, b in zip(e_out, t_out):
        assert_close(a, b)
    for a, b in zip(e_in, t_in):
        assert_close(a, b)


@pytest.mark.parametrize("inplace", ["", "_"])
@pytest.mark.parametrize("kind", ["scalar", "scalars", "tensors", "tensor0d"])
@pytest.mark.parametrize("op", BINARY)
def test_binary(op, kind, inplace):
    if kind == "tensor0d" and op not in ("add", "sub", "mul", "div"):
        pytest.skip("PyTorch takes a 0-d tensor only for add, sub, mul and div")
    _run(f"_foreach_{op}{inplace}", lambda m: (_others(m, kind),))


@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha(op):
    _run(f"_foreach_{op}", lambda m: (_others(m, "tensors"),), {"alpha": 2.0})
    _run(f"_foreach_{op}_", lambda m: (_others(m, "tensors"),), {"alpha": -0.5})


@pytest.mark.parametrize("inplace", ["", "_"])
@pytest.mark.parametrize("op", UNARY)
def test_unary(op, inplace):
    _run(f"_foreach_{op}{inplace}", lambda m: ())


@pytest.mark.parametrize("inplace", ["", "_"])
@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_pointwise_with_value(op, inplace):
    _run(f"_foreach_{op}{inplace}", lambda m: (_others(m, "tensors"), _others(m, "tensors")))
    _run(f"_foreach_{op}{inplace}", lambda m: (_others(m, "tensors"), _others(m, "tensors")),
         {"value": 0.25})
    _run(f"_foreach_{op}{inplace}",
         lambda m: (_others(m, "tensors"), _others(m, "tensors"), [1.0, 2.0, 3.0]))


@pytest.mark.parametrize("inplace", ["", "_"])
def test_lerp(inplace):
    _run(f"_foreach_lerp{inplace}", lambda m: (_others(m, "tensors"), 0.3))


def test_copy_zero_norm():
    _run("_foreach_copy_", lambda m: (_others(m, "tensors"),))
    _run("_foreach_zero_", lambda m: ())
    _run("_foreach_norm", lambda m: ())
    _run("_foreach_norm", lambda m: (1,))


def test_every_function_exists_in_pytorch():
    assert all(hasattr(torch, name) for name in FUNCTIONS)


def test_list_lengths_must_match():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="Tensor lists must have the same number of tensors, got 1 and 2"):
            m._foreach_add([m.ones(2)], [m.ones(2), m.ones(2)])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_aten_packet_lists_pytorchs_overloads(name):
    """torch.ops.aten._foreach_*: the overloads PyTorch lists (less _foreach_pow's ScalarAndTensor, a scalar base
    ember's op does not take), each one callable."""
    e_packet, t_packet = getattr(ember.ops.aten, name), getattr(torch.ops.aten, name)
    expected = sorted(o for o in t_packet.overloads() if o != "ScalarAndTensor")
    assert sorted(e_packet.overloads()) == expected
    assert getattr(e_packet, expected[0]) is FUNCTIONS[name]
    with pytest.raises(AttributeError):
        e_packet.NoSuchOverload()


def test_aten_packet_runs_the_op_as_timm_calls_it():
    e, t = _lists()
    assert "Scalar" in ember.ops.aten._foreach_maximum_.overloads()
    ember.ops.aten._foreach_maximum_(e, 1.2)
    torch.ops.aten._foreach_maximum_(t, 1.2)
    for a, b in zip(e, t):
        assert_close(a, b)
    with pytest.raises(AttributeError, match="torch.ops.aten.not_an_op"):
        ember.ops.aten.not_an_op()
