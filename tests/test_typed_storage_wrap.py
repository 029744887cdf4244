"""``TypedStorage(wrap_storage=..., dtype=..., device=None, _internal=True)``, PyTorch's form that programs (lit_gpt's
checkpoint loading) use to view an untyped storage's bytes as elements of a dtype, against PyTorch."""

import warnings

import pytest
import torch

import ember


def _wrapped(m, dtype, **keywords):
    storage = m.tensor([1.0, -2.0, 0.5, 4.0]).untyped_storage()
    with warnings.catch_warnings():  # (PyTorch's TypedStorage warns that it is deprecated; ember's does not)
        warnings.simplefilter("ignore")
        typed = m.TypedStorage(wrap_storage=storage, dtype=getattr(m, dtype), _internal=True, **keywords)
        return storage, typed, typed.size(), typed.tolist(), typed.dtype


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16", "uint8", "float64"])
def test_wrap_storage_views_the_bytes_as_the_dtype(dtype):
    _, _, size, values, typed_dtype = _wrapped(torch, dtype, device=None)
    storage, typed, mine_size, mine_values, mine_dtype = _wrapped(ember, dtype, device=None)
    assert (mine_size, mine_values, str(mine_dtype)) == (size, values, str(typed_dtype).replace("torch", "ember"))
    assert typed.data_ptr() == storage.data_ptr() and typed.nbytes() == storage.nbytes() == 16
    assert ember.storage.TypedStorage is ember.TypedStorage


def test_a_device_given_with_wrap_storage_is_pytorchs_error():
    messages = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as err:
            _wrapped(m, "float32", device=m.device("cpu"))
        messages.append(str(err.value).replace("ember.", "torch."))
    assert messages[1] == messages[0]
