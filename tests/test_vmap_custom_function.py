"""A custom ``autograd.Function`` under ``vmap``, against ``torch.func``: with ``generate_vmap_rule`` it is
batched without the fallback's performance warning (PyTorch's generated rule warns of nothing), with neither that
nor a ``vmap`` staticmethod it is PyTorch's error."""

import re
import warnings

import numpy as np
import pytest
import torch

import ember


def _sine(m, generate: bool):
    class Sine(m.autograd.Function):
        generate_vmap_rule = generate

        @staticmethod
        def forward(x, scale):
            return x.sin() * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.scale = inputs[1]

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * ctx.scale, None

    return Sine


X = np.random.default_rng(0).standard_normal((3, 4))


@pytest.mark.parametrize("how", ["vmap_grad", "vmap", "vmap_vmap"])
def test_generate_vmap_rule_matches_pytorch_without_a_warning(how):
    results = []
    for m in (torch, ember):
        sine = _sine(m, True)

        def f(x, sine=sine):
            return sine.apply(x, 2.0).sum()

        fn = {"vmap_grad": m.func.vmap(m.func.grad(f)), "vmap": m.func.vmap(lambda x, sine=sine: sine.apply(x, 2.0)),
              "vmap_vmap": m.func.vmap(m.func.vmap(lambda x, sine=sine: sine.apply(x, 2.0)))}[how]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (ember's fallback warned of a performance drop here)
            results.append(fn(m.tensor(X)).detach().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_no_vmap_support_is_pytorchs_error():
    messages = []
    for m in (torch, ember):
        sine = _sine(m, False)
        with pytest.raises(RuntimeError) as caught:
            m.func.vmap(lambda x, sine=sine: sine.apply(x, 2.0))(m.tensor(X))
        messages.append(str(caught.value))
    assert messages[1] == messages[0]
    assert re.match("You tried to vmap over Sine, but it does not have vmap support", messages[1])


def test_a_vmap_staticmethod_is_called_as_pytorchs():
    results = []
    for m in (torch, ember):
        seen = []

        class Doubled(m.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * 2 + y

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 2, g

            @staticmethod
            def vmap(info, in_dims, x, y, seen=seen):
                seen.append((info.batch_size, info.randomness, in_dims))
                return (x.movedim(in_dims[0], 0) * 2 + y).movedim(0, 1), 1

        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (ember's fallback warned, and ran the Function once per example)
            out = m.func.vmap(Doubled.apply, in_dims=(0, None))(m.tensor(X), m.ones(4))
        results.append((out.numpy(), seen))
    np.testing.assert_allclose(results[1][0], results[0][0])
    assert results[1][1] == results[0][1] == [(3, "error", (0, None))]


def _product(m, seen: list):
    class Product(m.autograd.Function):
        @staticmethod
        def forward(a, b):
            return a * b

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g, g

        @staticmethod
        def vmap(info, in_dims, a, b):
            seen.append((info.batch_size, in_dims, tuple(a.shape), tuple(b.shape), a.stride()))
            a = a.unsqueeze(0) if in_dims[0] is None else a.movedim(in_dims[0], 0)
            b = b.unsqueeze(0) if in_dims[1] is None else b.movedim(in_dims[1], 0)
            return a * b, 0

    return Product


# (vmap's in_dims, the batched input made how: its batch dim is then where the caller had it, as PyTorch's)
IN_DIMS_CASES = {
    "(1, None)": ((1, None), lambda m: (m.arange(6.0).reshape(3, 2), m.arange(3.0))),
    "(None, 1)": ((None, 1), lambda m: (m.arange(3.0), m.arange(6.0).reshape(3, 2))),
    "(1, 0)": ((1, 0), lambda m: (m.arange(6.0).reshape(3, 2), m.arange(6.0).reshape(2, 3))),
    "(-1, None) of 3-d": ((-1, None), lambda m: (m.arange(12.0).reshape(2, 3, 2), m.arange(3.0).reshape(1, 3))),
}


@pytest.mark.parametrize("case", list(IN_DIMS_CASES))
def test_a_vmap_staticmethod_gets_the_callers_in_dims(case):
    in_dims, make = IN_DIMS_CASES[case]
    results = []
    for m in (torch, ember):
        seen: list = []
        out = m.func.vmap(_product(m, seen).apply, in_dims=in_dims)(*make(m))
        results.append((out.tolist(), seen))
    assert results[1] == results[0]
