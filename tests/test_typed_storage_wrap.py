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


def _built(m, args, keywords):
    """(size, values, dtype) of ``m.TypedStorage(*args, **keywords)``, or its error's type and last line."""
    keywords = {k: getattr(m, v) for k, v in keywords.items()}
    try:
        with warnings.catch_warnings():  # (PyTorch's TypedStorage warns that it is deprecated; ember's does not)
            warnings.simplefilter("ignore")
            typed = m.TypedStorage(*args, **keywords)
    except (TypeError, RuntimeError) as err:
        return type(err).__name__, str(err).splitlines()[-1]
    values = typed.tolist() if args and not isinstance(args[0], int) else None  # (PyTorch's are uninitialised)
    return len(typed), typed.size(), values, str(typed.dtype).split(".")[-1]


@pytest.mark.parametrize("args,keywords", [
    (([1.0, 2.0],), {"dtype": "float64"}), ((3,), {"dtype": "float32"}), ((), {"dtype": "int64"}),
    (([1, 2],), {}), ((3,), {}), ((), {}), (([True, 0],), {"dtype": "bool"}), (([1.5, -2.5],), {"dtype": "int32"}),
    ((range(3),), {"dtype": "int8"}), (([[1, 2], [3, 4]],), {}), ((2.5,), {"dtype": "float32"}),
    (("ab",), {"dtype": "float32"}), ((3, 4), {"dtype": "float32"})])
def test_built_from_a_size_or_a_sequence_as_torchs(args, keywords):
    assert _built(ember, args, keywords) == _built(torch, args, keywords)
