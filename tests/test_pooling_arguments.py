"""Pooling arguments PyTorch refuses (a zero or negative stride, kernel or dilation, a negative padding) are
refused by ember with PyTorch's exception type, not a ZeroDivisionError from the output size's arithmetic."""

import pytest

import ember

torch = pytest.importorskip("torch")

BAD = {
    "stride 0": dict(kernel_size=2, stride=0),
    "stride -1": dict(kernel_size=2, stride=-1),
    "kernel 0": dict(kernel_size=0, stride=1),
    "padding -1": dict(kernel_size=2, padding=-1),
    "dilation 0": dict(kernel_size=2, dilation=0),
}
POOLS = {
    "max_pool1d": (3, True), "max_pool2d": (4, True), "max_pool3d": (5, True),
    "avg_pool1d": (3, False), "avg_pool2d": (4, False), "avg_pool3d": (5, False),
}


@pytest.mark.parametrize("pool", sorted(POOLS))
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_pooling_arguments_raise_pytorchs_type(pool, case):
    ndim, has_dilation = POOLS[pool]
    kwargs = dict(BAD[case])
    if "dilation" in kwargs and not has_dilation:
        pytest.skip("average pooling has no dilation")
    kinds = []
    for lib in (torch, ember):
        x = lib.ones((2,) + (6,) * (ndim - 1))
        try:
            getattr(lib.nn.functional, pool)(x, **kwargs)
            kinds.append(None)
        except Exception as err:  # noqa: BLE001 (the type is what is compared)
            kinds.append(type(err))
    assert kinds[1] is kinds[0]


def test_zero_stride_message_names_the_problem():
    with pytest.raises(RuntimeError, match="stride"):
        ember.nn.functional.max_pool2d(ember.ones(1, 4, 4), 2, stride=0)


@pytest.mark.parametrize("name, ndim, args", [
    ("max_pool1d_with_indices", 3, (2,)), ("max_pool2d_with_indices", 4, (2,)), ("max_pool3d_with_indices", 5, (2,)),
    ("adaptive_max_pool1d_with_indices", 3, (3,)), ("adaptive_max_pool2d_with_indices", 4, (3,)),
    ("adaptive_max_pool3d_with_indices", 5, (3,)),
])
def test_with_indices_functions_return_values_and_indices(name, ndim, args):
    import numpy as np

    x = np.random.default_rng(0).standard_normal((2,) + (6,) * (ndim - 1)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        values, indices = getattr(lib.nn.functional, name)(t, *args)
        (values * values).sum().backward()
        results.append((values.detach().numpy(), indices.numpy(), t.grad.numpy(), values.grad_fn.name()))
    for got, want in zip(results[1][:3], results[0][:3]):
        np.testing.assert_array_equal(got, want)
    assert results[1][3] == results[0][3]
