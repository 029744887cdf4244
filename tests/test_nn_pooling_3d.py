"""3-d pooling layers and adaptive max pooling against PyTorch: values, gradients, indices, errors."""

import numpy as np
import pytest
import torch
from oracle import assert_close, check

import ember

F_CASES = [
    ("max_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=2)),
    ("max_pool3d", (3, 6, 5, 4), dict(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=1, dilation=(1, 2, 1))),
    ("max_pool3d", (1, 2, 5, 5, 5), dict(kernel_size=2, ceil_mode=True)),
    ("avg_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1)),
    ("avg_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("avg_pool3d", (1, 2, 5, 5, 5), dict(kernel_size=2, ceil_mode=True, divisor_override=3)),
    ("adaptive_avg_pool3d", (2, 3, 5, 6, 7), dict(output_size=(2, 4, 5))),
    ("adaptive_avg_pool3d", (3, 5, 6, 7), dict(output_size=(1, None, 3))),
    ("adaptive_max_pool1d", (2, 3, 10), dict(output_size=4)),
    ("adaptive_max_pool2d", (2, 3, 7, 9), dict(output_size=(3, 4))),
    ("adaptive_max_pool2d", (3, 7, 9), dict(output_size=(None, 2))),
    ("adaptive_max_pool2d", (2, 3, 5, 5), dict(output_size=1)),
    ("adaptive_max_pool3d", (2, 3, 5, 6, 7), dict(output_size=(2, 4, 5))),
]


@pytest.mark.parametrize("name,shape,kwargs", F_CASES)
def test_functional_values_and_gradients(name, shape, kwargs):
    check(lambda m, x: getattr(m.nn.functional, name)(x, **kwargs), [shape], dtype=np.float64)


@pytest.mark.parametrize("name,shape,kwargs", [c for c in F_CASES if c[0].startswith(("max", "adaptive_max"))])
def test_indices_as_pytorch(name, shape, kwargs):
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    e_out, e_idx = getattr(ember.nn.functional, name)(ember.tensor(x), return_indices=True, **kwargs)
    t_out, t_idx = getattr(torch.nn.functional, name)(torch.tensor(x), return_indices=True, **kwargs)
    assert_close(e_out, t_out)
    assert_close(e_idx, t_idx)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_adaptive_max_pool_shared_maxima_and_nan(m):
    """Neighbouring bins share an element (7 -> 4 bins): a maximum there gets both bins' gradients; a NaN wins."""
    x = m.tensor([[[0.0, 9.0, 1.0, 2.0, 3.0, 4.0, 5.0]]], requires_grad=True)
    out = m.nn.functional.adaptive_max_pool1d(x, 4)
    out.backward(m.ones_like(out))
    assert x.grad.tolist() == [[[0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 1.0]]]
    nan = m.nn.functional.adaptive_max_pool1d(m.tensor([[[1.0, float("nan"), 3.0]]]), 1)
    assert np.isnan(nan.item())


@pytest.mark.parametrize("layer,args,shape", [
    ("MaxPool3d", (2,), (2, 3, 4, 4, 4)), ("AvgPool3d", (3, 1, 1), (2, 3, 4, 4, 4)),
    ("AdaptiveAvgPool3d", ((1, 2, 3),), (2, 3, 4, 4, 4)), ("AdaptiveMaxPool1d", (3,), (2, 3, 8)),
    ("AdaptiveMaxPool2d", ((2, 3),), (2, 3, 7, 7)), ("AdaptiveMaxPool3d", (2,), (2, 3, 4, 5, 6)),
])
def test_layers_as_pytorch(layer, args, shape):
    check(lambda m, x: getattr(m.nn, layer)(*args)(x), [shape], dtype=np.float64)
    assert repr(getattr(ember.nn, layer)(*args)) == repr(getattr(torch.nn, layer)(*args))


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_adaptive_max_pool_layer_returns_indices_and_refuses_wrong_ranks(m):
    out, idx = m.nn.AdaptiveMaxPool2d(2, return_indices=True)(m.arange(16.0).reshape(1, 1, 4, 4))
    assert idx.tolist() == [[[[5, 7], [13, 15]]]]
    with pytest.raises(RuntimeError):
        m.nn.functional.adaptive_max_pool2d(m.zeros(4, 4), 2)  # no channel dim
    with pytest.raises(RuntimeError):
        m.nn.functional.max_pool3d(m.zeros(4, 4, 4), 2)


def test_gumbel_softmax_is_the_softmax_of_gumbel_perturbed_logits():
    logits = ember.tensor(np.random.default_rng(0).standard_normal((4, 5)), requires_grad=True)
    ember.manual_seed(7)
    soft = ember.nn.functional.gumbel_softmax(logits, tau=0.5)
    ember.manual_seed(7)
    gumbels = -ember.empty_like(logits).exponential_().log()
    assert_close(soft, ember.softmax((logits + gumbels) / 0.5, -1))
    hard = ember.nn.functional.gumbel_softmax(logits, hard=True, dim=0)
    assert sorted(set(hard.detach().numpy().ravel().tolist())) == [0.0, 1.0]
    assert hard.detach().sum(0).tolist() == [1.0] * 5
    (hard * ember.arange(20.0).reshape(4, 5)).sum().backward()  # straight through: the soft sample's gradient
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0
    for m in (torch, ember):
        with pytest.warns(UserWarning, match="eps"):
            m.nn.functional.gumbel_softmax(m.zeros(3), eps=1e-5)


@pytest.mark.parametrize("name", ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
                                  "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"])
@pytest.mark.parametrize("shape,output_size", [((2, 3, 4, 5, 6), 0), ((0, 3, 4, 5, 6), 2), ((2, 3, 4, 5, 6), -1),
                                               ((2, 3, 0, 5, 6), 2), ((2, 0, 4, 5, 6), 2)])
def test_adaptive_pools_at_zero_and_negative_sizes(name, shape, output_size):
    """A zero output size or an empty batch gives an empty result as PyTorch's; a negative size and an empty
    spatial input dimension are PyTorch's errors (its text where it names the pool's own check)."""
    nd = int(name[-2])
    shape = shape[:2 + nd]
    results = []
    for lib in (torch, ember):
        x = lib.ones(shape, requires_grad=True)
        try:
            out = getattr(lib.nn.functional, name)(x, output_size)
        except RuntimeError as err:
            # compared word for word in 2-d: PyTorch's 1-d pools run its 2-d ones (their texts name those), its
            # 3-d text spaces the sizes unevenly, its max pools' negative-size text comes from allocating the result
            same_text = nd == 2 and ("avg" in name or "empty" in str(err))
            results.append(("error", str(err) if same_text else "error"))
            continue
        if shape[0] == 0:  # an empty batch trains: the gradient is the input's (empty) shape
            out.sum().backward()
            assert tuple(x.grad.shape) == shape
        results.append(("shape", tuple(out.shape)))
    assert results[1] == results[0]
