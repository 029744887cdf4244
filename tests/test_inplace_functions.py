"""PyTorch's top-level in-place functions (torch.clamp_, torch.relu_, torch.exp_, ...): each writes into its first
argument and returns it, with the values, dtype and autograd behaviour of the method of the same name."""

import numpy as np
import pytest
import torch
from oracle import assert_same_error

import ember

# name -> (positional arguments after the input, keyword arguments, input values)
UNIT = [0.1, 0.4, 0.75]
ARGS = {
    "abs_": ((), {}, [-1.5, 0.0, 2.0]), "acos_": ((), {}, UNIT), "acosh_": ((), {}, [1.0, 2.0, 3.5]),
    "arccos_": ((), {}, UNIT), "arccosh_": ((), {}, [1.0, 2.0, 3.5]), "arcsin_": ((), {}, UNIT),
    "arcsinh_": ((), {}, [-2.0, 0.5, 3.0]), "arctan_": ((), {}, [-2.0, 0.5, 3.0]), "arctanh_": ((), {}, UNIT),
    "asin_": ((), {}, UNIT), "asinh_": ((), {}, [-2.0, 0.5, 3.0]), "atan_": ((), {}, [-2.0, 0.5, 3.0]),
    "atanh_": ((), {}, UNIT), "ceil_": ((), {}, [-1.5, 0.2, 2.7]), "clamp_": ((-0.5,), {"max": 1.0}, [-2.0, 0.5, 3.0]),
    "clamp_max_": ((1.0,), {}, [-2.0, 0.5, 3.0]), "clamp_min_": ((0.0,), {}, [-2.0, 0.5, 3.0]),
    "clip_": ((), {"min": 0.0, "max": 1.0}, [-2.0, 0.5, 3.0]), "cos_": ((), {}, [-2.0, 0.5, 3.0]),
    "cosh_": ((), {}, [-2.0, 0.5, 3.0]), "deg2rad_": ((), {}, [90.0, 180.0, -45.0]),
    "erf_": ((), {}, [-2.0, 0.5, 3.0]), "erfc_": ((), {}, [-2.0, 0.5, 3.0]), "exp2_": ((), {}, [-2.0, 0.5, 3.0]),
    "exp_": ((), {}, [-2.0, 0.5, 3.0]), "expm1_": ((), {}, [-2.0, 0.5, 3.0]), "fill_": ((2.5,), {}, UNIT),
    "fix_": ((), {}, [-1.5, 0.2, 2.7]), "floor_": ((), {}, [-1.5, 0.2, 2.7]), "frac_": ((), {}, [-1.5, 0.2, 2.7]),
    "i0_": ((), {}, [-2.0, 0.5, 3.0]), "log10_": ((), {}, [0.5, 2.0, 30.0]), "log1p_": ((), {}, [0.5, 2.0, 30.0]),
    "log2_": ((), {}, [0.5, 2.0, 30.0]), "log_": ((), {}, [0.5, 2.0, 30.0]), "logit_": ((), {"eps": 0.2}, UNIT),
    "nan_to_num_": ((), {"nan": 1.0}, [float("nan"), 0.5, float("inf")]), "neg_": ((), {}, [-2.0, 0.5, 3.0]),
    "negative_": ((), {}, [-2.0, 0.5, 3.0]), "rad2deg_": ((), {}, [-2.0, 0.5, 3.0]),
    "reciprocal_": ((), {}, [-2.0, 0.5, 3.0]), "relu_": ((), {}, [-2.0, 0.5, 3.0]),
    "round_": ((), {"decimals": 1}, [-1.55, 0.24, 2.71]), "rsqrt_": ((), {}, [0.5, 2.0, 30.0]),
    "sigmoid_": ((), {}, [-2.0, 0.5, 3.0]), "sin_": ((), {}, [-2.0, 0.5, 3.0]), "sinc_": ((), {}, [-2.0, 0.5, 3.0]),
    "sinh_": ((), {}, [-2.0, 0.5, 3.0]), "sqrt_": ((), {}, [0.5, 2.0, 30.0]), "square_": ((), {}, [-2.0, 0.5, 3.0]),
    "tan_": ((), {}, [-1.0, 0.5, 1.2]), "tanh_": ((), {}, [-2.0, 0.5, 3.0]), "trunc_": ((), {}, [-1.5, 0.2, 2.7]),
    "xlogy_": ((2.0,), {}, [0.0, 0.5, 3.0]), "zero_": ((), {}, [-2.0, 0.5, 3.0]),
}
# Not pointwise on a float tensor: tested on their own below.
OTHERS = {"detach_", "index_put_", "resize_as_", "gcd_", "lcm_", "addmv_"}  # (addmv_: tests/test_deprecated_number_first_overloads.py)


def test_every_top_level_inplace_function_of_a_tensor_method_is_there():
    tensor = ember.zeros(1)
    wanted = {n for n in dir(torch) if n.endswith("_") and not n.startswith("_") and hasattr(tensor, n)}
    assert wanted == set(ARGS) | OTHERS | {"ldexp_"}
    assert all(callable(getattr(ember, n)) for n in wanted)


@pytest.mark.parametrize("name", sorted(ARGS))
def test_values_and_identity_match_pytorch(name):
    args, kwargs, values = ARGS[name]
    t, e = torch.tensor(values, dtype=torch.float64), ember.tensor(values, dtype=ember.float64)
    rt, re_ = getattr(torch, name)(t, *args, **kwargs), getattr(ember, name)(e, *args, **kwargs)
    assert rt is t and re_ is e
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, equal_nan=True)
    assert e._version == t._version


def test_gradient_through_the_function_form():
    t = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    e = ember.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    torch.clamp_(t * 2, min=0.0, max=4.0).sum().backward()
    ember.clamp_(e * 2, min=0.0, max=4.0).sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())
    with pytest.raises(RuntimeError) as te:
        torch.exp_(t)
    with pytest.raises(RuntimeError) as ee:
        ember.exp_(e)
    assert str(ee.value).startswith(str(te.value))  # ember adds how to avoid it


def test_integer_input_refused_as_pytorch():
    assert_same_error(lambda m: m.sqrt_(m.tensor([1, 2])))


def test_the_other_forms():
    t, e = torch.zeros(2, 3), ember.zeros(2, 3)
    torch.index_put_(t, (torch.tensor([1]),), torch.tensor(4.0), accumulate=True)
    ember.index_put_(e, (ember.tensor([1]),), ember.tensor(4.0), accumulate=True)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert torch.resize_as_(torch.zeros(5), t).shape == ember.resize_as_(ember.zeros(5), e).shape == (2, 3)
    a, b = torch.tensor([12, 18]), ember.tensor([12, 18])
    assert torch.gcd_(a, torch.tensor([8, 4])).tolist() == ember.gcd_(b, ember.tensor([8, 4])).tolist()
    assert torch.lcm_(a, torch.tensor([3, 5])).tolist() == ember.lcm_(b, ember.tensor([3, 5])).tolist()
    y = ember.ones(2, requires_grad=True) * 3
    assert ember.detach_(y) is y and not y.requires_grad and y.grad_fn is None


def test_method_aliases_pytorch_has():
    for name in ("arcsin_", "arccos_", "arctan_", "arcsinh_", "arccosh_", "arctanh_", "negative_", "fix_",
                 "acos_", "asin_", "acosh_", "asinh_", "atanh_", "erfc_", "exp2_", "log2_", "log10_"):
        args, kwargs, values = ARGS[name]
        t, e = torch.tensor(values), ember.tensor(values)
        getattr(t, name)()
        assert getattr(e, name)() is e
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["abs_", "neg_", "negative_"])
def test_bool_input_refused_as_pytorch(name):
    """The in-place forms refuse a bool tensor as the out-of-place ones do (abs_ kept it, neg_ raised NumPy's
    TypeError)."""
    errors = []
    for m in (torch, ember):
        with pytest.raises(Exception) as err:
            getattr(m, name)(m.tensor([True, False]))
        errors.append((type(err.value), str(err.value)))
    assert errors[0] == errors[1]


def test_fix_is_trunc_as_in_pytorch():
    """torch.fix / Tensor.fix: trunc's alias, whose in-place forms (fix_) ember has as well."""
    got = []
    for m in (torch, ember):
        x = m.tensor([-1.5, 0.2, 2.7], requires_grad=True)
        y = m.fix(x) + x.fix()
        y.sum().backward()
        out = m.empty(3)
        m.fix(x.detach(), out=out)
        with pytest.raises(RuntimeError) as err:
            m.fix(x.detach(), out=m.empty(3, dtype=m.float64))
        got.append((y.tolist(), x.grad.tolist(), out.tolist(), str(err.value)))
    assert got[0] == got[1]


AUGMENTED = {
    "**=": lambda x, y: x.__ipow__(y), "//=": lambda x, y: x.__ifloordiv__(y), "%=": lambda x, y: x.__imod__(y),
    "floor_divide_": lambda x, y: x.floor_divide_(y), "true_divide_": lambda x, y: x.true_divide_(y),
}


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("op", list(AUGMENTED))
def test_augmented_assignments_write_in_place_as_pytorchs(op, dtype):
    """``x **= y``, ``x //= y``, ``x %= y`` write into x (a view's base sees it), as PyTorch's ``__ipow__`` & co.;
    without them Python rebinds x to a new tensor."""
    got = []
    for m in (torch, ember):
        base = m.tensor([7, -7, 5, 3], dtype=getattr(m, dtype))
        view = base[1:]
        try:
            out = AUGMENTED[op](view, m.tensor([2, 3, 2], dtype=getattr(m, dtype)))
            got.append((out is view, base.tolist(), str(base.dtype).split(".")[-1]))
        except Exception as e:  # noqa: BLE001 (PyTorch's error type is compared)
            got.append(type(e).__name__)
    assert got[1] == got[0]


def test_augmented_power_of_a_leaf_that_requires_grad_is_refused():
    for m in (torch, ember):
        x = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x **= 2
