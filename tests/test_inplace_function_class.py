"""``torch.autograd.function.InplaceFunction``, PyTorch's legacy base class (BinaryNet-era quantisation code
subclasses it for straight-through estimators called through ``apply``), and the DeprecationWarning PyTorch gives
when any autograd Function is instantiated. Compared with PyTorch."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _rounding(lib):
    # as BinaryNet-era code writes it: forward and backward without @staticmethod, called on the class by apply
    class Round(lib.autograd.function.InplaceFunction):
        def forward(ctx, input, inplace=False):
            if inplace:
                ctx.mark_dirty(input)
                return input.round_()
            return input.round()

        def backward(ctx, grad_output):
            return grad_output, None  # straight through

    return Round


def test_inplace_function_subclass_applies_as_pytorchs():
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        rounding = _rounding(lib)
        assert issubclass(rounding, lib.autograd.Function)
        w = lib.tensor(a, requires_grad=True)
        out = rounding.apply(w * 3)
        (out * lib.arange(4.0)).sum().backward()
        results.append((out.detach().numpy(), w.grad.numpy(), type(out.grad_fn).__name__))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2] == "RoundBackward"


def test_inplace_function_marks_its_input_dirty_as_pytorchs():
    for lib in (torch, ember):
        rounding = _rounding(lib)
        w = lib.tensor([0.4, -2.6, 3.2], requires_grad=True)
        x = w * 1
        out = rounding.apply(x, True)
        assert out is x and x.tolist() == [0.0, -3.0, 3.0]
        out.sum().backward()
        assert w.grad.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("inplace", [None, False, True])
def test_inplace_function_instance_keeps_inplace_and_warns(inplace):
    for lib in (torch, ember):
        kwargs = {} if inplace is None else {"inplace": inplace}
        with pytest.warns(DeprecationWarning, match="should not be instantiated") as record:
            f = lib.autograd.function.InplaceFunction(**kwargs)
        assert f.inplace is bool(inplace)
        # (Function.__init__'s stacklevel points at InplaceFunction.__init__, in the library's module)
        assert record[0].filename == lib.autograd.function.__file__


def test_instantiating_a_function_is_pytorchs_deprecation_warning():
    messages = []
    for lib in (torch, ember):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            Square()
        assert [w.category for w in record] == [DeprecationWarning]
        assert record[0].filename == __file__
        messages.append(str(record[0].message).replace(lib.__name__, "LIB"))
    assert "Square'> should not be instantiated. Methods on autograd functions are all static" in messages[1]
    assert messages[0].split("'>")[1] == messages[1].split("'>")[1]


def test_inplace_function_is_not_in_autograds_namespace():
    assert hasattr(torch.autograd, "InplaceFunction") == hasattr(ember.autograd, "InplaceFunction")
