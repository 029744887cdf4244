"""``torch.device`` of each device type PyTorch's CPU build parses (``xpu``, ``hpu``, ``xla`` ...) is built as
PyTorch's; a tensor made or moved there is PyTorch's AssertionError (its CPU build was not compiled for it); an
unknown type is PyTorch's RuntimeError listing the types."""

import pytest
import torch

import ember

TYPES = ["xpu", "hpu", "xla", "ipu", "mtia", "privateuseone", "vulkan", "lazy", "maia", "hip"]


@pytest.mark.parametrize("name", TYPES)
def test_every_pytorch_device_type_can_be_named(name):
    for spelling in (name, f"{name}:1"):
        theirs, mine = torch.device(spelling), ember.device(spelling)
        assert (mine.type, mine.index, str(mine)) == (theirs.type, theirs.index, str(theirs))
    assert repr(ember.device(name, 2)) == repr(torch.device(name, 2))


@pytest.mark.parametrize("move", [lambda m: m.zeros(2).to("xpu"), lambda m: m.zeros(2, device="xpu"),
                                  lambda m: m.zeros(2).to(m.device("xpu", 0))], ids=["to", "factory", "to-device"])
def test_a_tensor_on_xpu_is_an_assertion_error_as_pytorchs_cpu_build(move):
    for m in (torch, ember):
        with pytest.raises(AssertionError):
            move(m)


def test_an_unknown_device_type_lists_pytorchs_types():
    messages = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as err:
            m.device("bogus:0")
        messages.append(str(err.value))
    assert messages[1] == messages[0]
