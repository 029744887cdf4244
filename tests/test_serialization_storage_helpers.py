"""``torch.serialization.location_tag`` and ``normalize_storage_type`` against torch: a storage's, a tensor's
and a meta tensor's location, the error for an object without a device, and storage classes mapped by name."""

import pytest
import torch
import torch.serialization

import ember
import ember.serialization


@pytest.mark.parametrize("make", [lambda m: m.ones(2).untyped_storage(), lambda m: m.ones(2),
                                  lambda m: m.ones(2, device="meta")])
def test_location_tag_as_torch(make):
    assert ember.serialization.location_tag(make(ember)) == torch.serialization.location_tag(make(torch))


def test_location_tag_refuses_what_has_no_device():
    messages = []
    for m in (torch, ember):
        with pytest.raises(AttributeError) as info:
            m.serialization.location_tag(3)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", ["FloatStorage", "DoubleStorage", "LongStorage", "UntypedStorage"])
def test_normalize_storage_type_as_torch(name):
    t = torch.serialization.normalize_storage_type(getattr(torch, name))
    e = ember.serialization.normalize_storage_type(getattr(ember, name))
    assert e is getattr(ember, name) and t.__name__ == e.__name__ == name
