"""What PyTorch's engine checks of a gradient that user code hands it: a custom Function's backward (count,
types, shape compatible with the input's, cast to the input's dtype) and every kind of hook (a tensor's, a leaf's,
a node's post-hook, a module's full backward hooks: same size, same dtype). Each case runs in both libraries."""

from __future__ import annotations

import pytest
import torch

import ember


def _function(m, grads):
    """A Function over ``(x, *rest)`` whose backward returns ``grads(g, m)``."""

    class Fn(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, *rest):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return grads(g, m)

    return Fn


def _outcome(m, grads, inputs):
    """(error type, message) of a backward through the Function, or the inputs' gradients (dtype, shape, values)."""
    args = [a(m) if callable(a) else a for a in inputs]
    try:
        y = _function(m, grads).apply(*args)
        (y.abs() if y.is_complex() else y).sum().backward()
    except Exception as err:  # noqa: BLE001 (the error is what is compared)
        return type(err).__name__, str(err).replace("torch", "ember")
    return [None if not isinstance(a, m.Tensor) or a.grad is None
            else (str(a.grad.dtype).split(".")[1], tuple(a.grad.shape), a.grad.detach().numpy().tolist())
            for a in args]


def _leaf(shape, dtype="float32", grad=True):
    return lambda m: m.ones(shape, dtype=getattr(m, dtype), requires_grad=grad)


CASES = {
    "smaller": (lambda g, m: m.ones(1), [_leaf(3)]),
    "broadcast": (lambda g, m: m.ones(2, 3), [_leaf(3)]),
    "leading one": (lambda g, m: m.ones(1, 3), [_leaf(3)]),
    "not reducible": (lambda g, m: m.ones(2, 1), [_leaf(3)]),
    "0-d": (lambda g, m: m.tensor(2.0), [_leaf(3)]),
    "trailing one": (lambda g, m: m.ones(3, 1), [_leaf(3)]),
    "fewer dims": (lambda g, m: m.ones(3), [_leaf((1, 3))]),
    "same size": (lambda g, m: m.ones(4), [_leaf((2, 2))]),
    "float64 for float32": (lambda g, m: m.full((3,), 0.1, dtype=m.float64), [_leaf(3)]),
    "int for float32": (lambda g, m: m.ones(3, dtype=m.int64), [_leaf(3)]),
    "bool for float32": (lambda g, m: m.ones(3, dtype=m.bool), [_leaf(3)]),
    "complex for real": (lambda g, m: m.ones(3, dtype=m.complex64), [_leaf(3)]),
    "real for complex": (lambda g, m: m.ones(3), [_leaf(3, "complex64")]),
    "complex128 for complex64": (lambda g, m: m.ones(3, dtype=m.complex128), [_leaf(3, "complex64")]),
    "float64 for float16": (lambda g, m: m.ones(3, dtype=m.float64), [_leaf(3, "float16")]),
    "too few": (lambda g, m: (g,), [_leaf(3), _leaf(3)]),
    "extra Nones": (lambda g, m: (g, None, None), [_leaf(3)]),
    "extra gradient": (lambda g, m: (g, g), [_leaf(3)]),
    "extra gradient, two inputs": (lambda g, m: (g, g, g), [_leaf(3), _leaf(3, grad=False)]),
    "unneeded gradient unchecked": (lambda g, m: (g, m.ones(5)), [_leaf(3), _leaf(3, grad=False)]),
    "gradient of a non-tensor": (lambda g, m: (g, m.ones(5)), [_leaf(3), 3]),
    "index among tensors": (lambda g, m: (None, g, m.ones(1)), [2, _leaf(3), _leaf(3)]),
    "None": (lambda g, m: (None,), [_leaf(3)]),
    "a float": (lambda g, m: 3.0, [_leaf(3)]),
    "a list": (lambda g, m: [g], [_leaf(3)]),
    "an array": (lambda g, m: g.numpy(), [_leaf(3)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_function_backward_result_checked_as_pytorch(name):
    grads, inputs = CASES[name]
    theirs = _outcome(torch, grads, inputs)
    ours = _outcome(ember, grads, inputs)
    if isinstance(theirs, tuple) and "isFloatingType" in theirs[1]:  # (PyTorch's message is its internal check's)
        assert ours[0] == theirs[0] and "complex gradient" in ours[1]
    else:
        assert ours == theirs


def test_function_gradient_cast_before_the_next_node():
    """A float64 gradient for a float32 input is cast there: the op before the Function gets float32."""
    seen = {}
    for m in (torch, ember):
        x = m.randn(3, requires_grad=True)
        z = x.exp()
        z.register_hook(lambda g, m=m: seen.__setitem__(m.__name__, str(g.dtype).split(".")[1]))
        _function(m, lambda g, m: g.double()).apply(z).sum().backward()
    assert seen == {"torch": "float32", "ember": "float32"}


def test_function_gradient_cast_is_recorded_under_create_graph():
    results = []
    for m in (torch, ember):
        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return (2 * g * x).float()

        x = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
        g.sum().backward()
        results.append((str(g.dtype).split(".")[1], g.grad_fn.name(), x.grad.tolist()))
    assert results[0] == results[1]


def _hook_outcome(m, where, returned):
    x = m.randn(2, 3, requires_grad=True)
    try:
        if where == "tensor":
            y = x * 2
            y.register_hook(lambda g: returned(m))
            y.sum().backward()
        elif where == "leaf":
            x.register_hook(lambda g: returned(m))
            (x * 2).sum().backward()
        elif where == "node post-hook":
            y = x * 2
            y.grad_fn.register_hook(lambda gi, go: (returned(m), None))
            y.sum().backward()
        elif where == "node pre-hook":
            y = x * 2
            y.grad_fn.register_prehook(lambda go: (returned(m),))
            y.sum().backward()
        else:
            layer = m.nn.Linear(3, 3)
            if where == "module full backward hook":
                layer.register_full_backward_hook(lambda mod, gi, go: (returned(m),))
            else:
                layer.register_full_backward_pre_hook(lambda mod, go: (returned(m),))
            layer(x).sum().backward()
    except RuntimeError as err:
        message = str(err)  # (the hook's name aside: PyTorch names its wrapper of a module's hook)
        return "size" if "changed the size of value" in message else message.split("'")[-1].replace("torch", "ember")
    return tuple(x.grad.shape), str(x.grad.dtype).split(".")[1]


@pytest.mark.parametrize("where", ["tensor", "leaf", "node post-hook", "node pre-hook", "module full backward hook",
                                   "module full backward pre-hook"])
@pytest.mark.parametrize("returned", ["smaller", "broadcast", "float64", "same"])
def test_hook_results_checked_as_pytorch(where, returned):
    make = {"smaller": lambda m: m.ones(1), "broadcast": lambda m: m.ones(4, 2, 3),
            "float64": lambda m: m.ones(2, 3, dtype=m.float64), "same": lambda m: m.ones(2, 3)}[returned]
    theirs = _hook_outcome(torch, where, make)
    assert theirs != "size" or returned != "same"
    assert _hook_outcome(ember, where, make) == theirs
