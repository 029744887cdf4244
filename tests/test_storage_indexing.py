"""Indexing a storage, against PyTorch: ``UntypedStorage[a:b]`` is a storage over those bytes (sharing memory, as
PyTorch's), not a list; a step other than 1, an index out of range or of another type is PyTorch's error;
``TypedStorage`` takes no slice."""

import warnings

import pytest
import torch

import ember


def _untyped(m):
    return m.arange(6, dtype=m.uint8).untyped_storage()


@pytest.mark.parametrize("index", [slice(1, 3), slice(None, 1), slice(-2, None), slice(4, 1), slice(0, 10)])
def test_a_slice_is_a_storage_sharing_the_bytes(index):
    got = []
    for m in (torch, ember):
        storage = _untyped(m)
        piece = storage[index]
        assert isinstance(piece, m.UntypedStorage)
        # (the offset of an empty piece is not compared: ember's empty arrays have no address)
        offset = piece.data_ptr() - storage.data_ptr() if piece.nbytes() else None
        got.append((piece.nbytes(), offset, piece.tolist()))
    assert got[1] == got[0]
    t = ember.arange(6, dtype=ember.uint8)
    piece = t.untyped_storage()[2:4]
    assert piece[0] == 2 and piece[-1] == 3
    t[2] = 9  # (the slice shares the tensor's memory)
    assert piece[0] == 9


@pytest.mark.parametrize("index", [slice(None, None, 2), slice(None, None, -1), 6, -7, "a", True, 1.0])
def test_bad_indices_are_pytorchs_errors(index):
    errors = []
    for m in (torch, ember):
        with pytest.raises(Exception) as caught:
            _untyped(m)[index]
        errors.append((type(caught.value), str(caught.value).replace("torch.", "ember.")))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("index", [slice(0, 2), 9, "a", 1.0])
def test_typed_storage_indexing(index):
    errors = []
    for m in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's TypedStorage is deprecated)
            storage = m.arange(4, dtype=m.float32).storage()
        with pytest.raises(Exception) as caught:
            storage[index]
        errors.append((type(caught.value), str(caught.value).replace("torch.", "ember.")))
    assert errors[1] == errors[0]
    assert ember.arange(4, dtype=ember.float32).storage()[-1] == 3.0
