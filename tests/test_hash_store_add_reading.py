"""``HashStore.add`` reads a counter's value as PyTorch's store does (C++'s ``std::stoll``): an empty value is 0,
the leading decimal number counts ("3x" is 3, "1_000" is 1), none is ValueError("stoll"), one past int64
IndexError("stoll"), and the sum wraps around as an int64; each against PyTorch's HashStore."""
import pytest
import torch.distributed

import ember.distributed

VALUES = ["", "3x", "1_000", "0x10", " \t-7", "+5", "\x0b3", "9223372036854775807", "99999999999999999999", "-",
          "x3", "\u0663", " "]


def added(store_cls, value):
    store = store_cls()
    store.set("k", value)
    try:
        return store.add("k", 1), store.get("k")
    except Exception as e:  # (the error itself is compared)
        return type(e), str(e)


@pytest.mark.parametrize("value", VALUES, ids=[repr(v) for v in VALUES])
def test_hash_store_add_reads_a_value_as_pytorchs(value):
    assert added(ember.distributed.HashStore, value) == added(torch.distributed.HashStore, value)
