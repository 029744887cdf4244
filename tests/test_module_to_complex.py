"""``Module.to(complex dtype)``: PyTorch casts every floating parameter, gradient and buffer to it (integral buffers
keep theirs) with its "Complex modules" UserWarning, and refuses integral dtypes with a TypeError naming floating
point or complex; ``to(real dtype)`` casts complex tensors back (their real part, its "discards the imaginary part"
warning), while ``float()``, ``double()``, ``half()`` and ``bfloat16()`` leave complex tensors as they are (FITS
builds its frequency layer as ``nn.Linear(...).to(torch.cfloat)`` inside a model it then calls ``.float()`` on)."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _model(m):
    m.manual_seed(0)
    model = m.nn.Sequential(m.nn.Linear(4, 3), m.nn.BatchNorm1d(3))
    model[0].weight.grad = m.ones_like(model[0].weight)
    return model


def _state(model):
    tensors = [*model.named_parameters(), *model.named_buffers()]
    tensors += [(f"{n}.grad", p.grad) for n, p in model.named_parameters() if p.grad is not None]
    return {n: (str(t.dtype).split(".")[-1], type(t).__name__, t.detach().numpy().tolist()) for n, t in tensors}


def _messages(record):
    return [str(w.message).split(" (Triggered internally")[0] for w in record]


@pytest.mark.parametrize("dtype", ["cfloat", "complex128"])
def test_to_a_complex_dtype_casts_the_floating_tensors_with_the_warning(dtype):
    seen = {}
    for m in (ember, torch):
        model = _model(m)
        weight = model[0].weight
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            assert model.to(getattr(m, dtype)) is model
        assert model[0].weight is weight  # (in place: an optimizer built before holds the same parameters)
        seen[m.__name__] = (_state(model), _messages(record), [w.filename for w in record])
    assert seen["ember"][:2] == seen["torch"][:2]
    assert seen["ember"][2] == [__file__]  # (the warning names the caller's line, as PyTorch's stacklevel=2)


def test_float_keeps_complex_tensors_and_to_a_real_dtype_takes_the_real_part():
    seen = {}
    for m in (ember, torch):
        model = _model(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model[0].to(m.cfloat)
        model[0].weight.data += 1j * m.ones_like(model[0].weight)
        model.float()
        after_float = _state(model)
        model.half()
        after_half = _state(model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (its "discards the imaginary part", once a process under both)
            model.to(m.float64)
        seen[m.__name__] = (after_float, after_half, _state(model))
    assert seen["ember"] == seen["torch"]
    assert seen["ember"][0]["0.weight"][0] == "complex64"
    assert seen["ember"][2]["0.weight"][0] == "float64"


def test_a_complex_linear_layer_trains_as_pytorchs():
    values = {}
    for m in (ember, torch):
        m.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = m.nn.Linear(5, 7).to(m.cfloat)
        # (a spectrum whose every bin has an imaginary part: a real DC bin gives gradients whose imaginary part is
        # rounding noise, which Adam's first step turns into +-lr under either framework)
        parts = np.random.default_rng(0).standard_normal((2, 2, 5)).astype(np.float32)
        x = m.complex(m.tensor(parts[0]), m.tensor(parts[1]))
        optimizer = m.optim.Adam(layer.parameters(), lr=0.01)
        for _ in range(3):
            optimizer.zero_grad()
            loss = m.fft.irfft(layer(x), dim=1).pow(2).mean()
            loss.backward()
            optimizer.step()
        values[m.__name__] = (loss.item(), layer.weight.detach().numpy(), layer.bias.grad.numpy())
    np.testing.assert_allclose(values["ember"][0], values["torch"][0], rtol=1e-5)
    for got, want in zip(values["ember"][1:], values["torch"][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_an_integral_dtype_is_refused():
    messages = {}
    for m in (ember, torch):
        with pytest.raises(TypeError) as caught:
            _model(m).to(m.int32)
        messages[m.__name__] = str(caught.value).replace(m.__name__ + ".", "torch.")
    assert messages["ember"] == messages["torch"]
    assert "floating point or complex" in messages["torch"]
