"""The factories' ``out=`` (``torch.zeros(2, 3, out=t)``): the values written into ``out`` (resized, its strides
kept when its shape is the result's), ``out``'s dtype their dtype (a different ``dtype=`` is PyTorch's error),
``requires_grad=True`` making ``out`` require grad, an ``out`` that requires grad refused as PyTorch's; and
``arange`` into an integer dtype taking its bounds and step as integers."""

import warnings

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_same_error

FACTORIES = {
    "zeros": lambda m, **k: m.zeros(2, 3, **k),
    "ones": lambda m, **k: m.ones(2, 3, **k),
    "full": lambda m, **k: m.full((2, 3), 7, **k),
    "full_float": lambda m, **k: m.full((2, 3), 2.5, **k),
    "eye": lambda m, **k: m.eye(2, 3, **k),
    "linspace": lambda m, **k: m.linspace(0, 5, 6, **k),
    "logspace": lambda m, **k: m.logspace(0, 2, 3, **k),
    "arange": lambda m, **k: m.arange(6, **k),
    "range": lambda m, **k: m.range(0, 5, **k),
    "rand": lambda m, **k: m.rand(2, 3, **k),
    "randn": lambda m, **k: m.randn(2, 3, **k),
    "randint": lambda m, **k: m.randint(0, 9, (2, 3), **k),
    "randperm": lambda m, **k: m.randperm(6, **k),
}
RANDOM = {"rand", "randn", "randint", "randperm"}


def _run(m, name, out, **kwargs):
    if "dtype" in kwargs:
        kwargs["dtype"] = getattr(m, kwargs["dtype"])
    m.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.range's deprecation)
        return FACTORIES[name](m, out=out, **kwargs)


def _check(name, make_out, **kwargs):
    outs = {m: make_out(m) for m in (ember, torch)}
    try:
        want = _run(torch, name, outs[torch], **kwargs)
    except Exception:  # noqa: BLE001
        assert_same_error(lambda m: _run(m, name, make_out(m), **kwargs))
        return
    got = _run(ember, name, outs[ember], **kwargs)
    assert got is outs[ember] and want is outs[torch]
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.shape == want.shape and got.stride() == want.stride()
    assert got.requires_grad == want.requires_grad
    if name not in RANDOM:  # (ember's random streams are not PyTorch's: their values are compared below)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("name", FACTORIES)
def test_the_result_is_written_into_out_in_its_dtype(name, dtype):
    _check(name, lambda m: m.empty(0, dtype=getattr(m, dtype)))


@pytest.mark.parametrize("name", FACTORIES)
def test_out_keeps_its_strides_and_a_different_dtype_is_refused(name):
    if name in ("linspace", "logspace", "arange", "range", "randperm"):
        _check(name, lambda m: m.empty(6, 2)[:, 0])  # (a strided 1-d out of the result's shape)
    else:
        _check(name, lambda m: m.empty(3, 2).t())
    _check(name, lambda m: m.empty(0), dtype="float64")
    _check(name, lambda m: m.empty(0), requires_grad=True)


@pytest.mark.parametrize("name", FACTORIES)
def test_an_out_that_requires_grad_is_refused(name):
    _check(name, lambda m: m.empty(0, requires_grad=True))
    _check(name, lambda m: m.empty(6, requires_grad=True).view(*((2, 3) if name not in
                                                                   ("linspace", "logspace", "arange", "range",
                                                                    "randperm") else (6,))))


def test_random_values_are_the_ones_drawn_without_out():
    for name in RANDOM:
        for dtype in ("float32", "float64", "int64"):
            if name in ("rand", "randn") and dtype == "int64":
                assert_same_error(lambda m, name=name: _run(m, name, m.empty(0, dtype=m.int64)))
                continue
            out = ember.empty(0, dtype=getattr(ember, dtype))
            ember.manual_seed(0)
            want = FACTORIES[name](ember, dtype=getattr(ember, dtype))
            got = _run(ember, name, out)
            np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", FACTORIES)
def test_out_of_another_shape_is_resized_silently_save_aranges_warning(name):
    for shape in ((20,), (3, 2), (6,), (2, 3), (0,), (3, 1)):
        caught = {}
        for m in (ember, torch):
            out = m.zeros(shape)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                FACTORIES[name](m, out=out)
            caught[m] = ([str(w.message).split(" (Triggered internally")[0] for w in seen
                          if "torch.range is deprecated" not in str(w.message)],
                         tuple(out.shape))
        assert caught[ember] == caught[torch], shape


def test_empty_writes_out_of_its_shape():
    for m in (ember, torch):
        o = m.empty(0, dtype=m.int32)
        assert m.empty(2, 2, out=o) is o and o.shape == (2, 2) and o.dtype == m.int32


ARANGES = [(0, 2, 0.5), (0.5, 3.7, 1), (0, 5, 1.5), (-0.5, 3.7, 1.2), (0, 2.5), (2.9,), (5, 0.5, -1.5),
           (0.9, 7, 2.5), (7.5, 0.2, -2.7), (0, 10, 3)]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16"])
@pytest.mark.parametrize("args", ARANGES)
def test_arange_into_an_integer_dtype_truncates_its_numbers(args, dtype):
    try:
        want = torch.arange(*args, dtype=getattr(torch, dtype))
    except Exception:  # noqa: BLE001
        assert_same_error(lambda m: m.arange(*args, dtype=getattr(m, dtype)))
        return
    got = ember.arange(*args, dtype=getattr(ember, dtype))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert_same_error(lambda m: m.arange(*args, out=m.empty(0, dtype=m.int64))) if args == (0, 2, 0.5) else None
