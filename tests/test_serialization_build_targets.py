"""BUILD in a torch file sets the state of what is on top of the stack: an object NEWOBJ built there (its dict of
attributes), a NumPy array or dtype, or a state_dict's OrderedDict (its ``_metadata``, no dunder attribute). On
anything else, and with a state that is not a dict of attribute names, ember refuses the file with its reason
instead of setting attributes on whatever is there (a list, a number, an OrderedDict's ``__class__``); and
ember.save refuses an object whose ``__getstate__()`` is not a dict of attribute names."""

import collections
import io
import pickle

import pytest
from test_serialization_hostile import refused, torch_file

import ember

ORDERED_DICT = b"ccollections\nOrderedDict\n)R"

CRAFTED = {
    "BUILD on a list": (b"\x80\x02]}b.", "expected a <class 'collections.OrderedDict'>"),
    "BUILD on a number": (b"\x80\x02K\x01}b.", "expected a <class 'collections.OrderedDict'>"),
    "BUILD on an empty stack": (b"\x80\x02}b.", "expected a <class 'collections.OrderedDict'>"),
    "a dunder attribute on an OrderedDict": (b"\x80\x02" + ORDERED_DICT + b"}X\t\x00\x00\x00__class__K\x01sb.",
                                             "unsupported attributes on an OrderedDict"),
    "a number key on an OrderedDict": (b"\x80\x02" + ORDERED_DICT + b"}K\x01K\x02sb.",
                                       "unsupported attributes on an OrderedDict"),
}


@pytest.mark.parametrize("name", list(CRAFTED))
def test_build_on_what_is_not_its_target_is_refused(name):
    pkl, reason = CRAFTED[name]
    refused(torch_file(pkl), reason)


def test_a_state_dicts_metadata_is_set_on_its_ordered_dict():
    pkl = b"\x80\x02" + ORDERED_DICT + b"}X\t\x00\x00\x00_metadataK\x07sb."
    out = ember.load(io.BytesIO(torch_file(pkl)))
    assert isinstance(out, collections.OrderedDict) and out._metadata == 7 and pickle.loads(pkl)._metadata == 7


class _State:
    def __init__(self, state):
        self.state = state

    def __getstate__(self):
        return self.state

    def __setstate__(self, state):
        self.state = state


@pytest.mark.parametrize("state", [{1: "a"}, {"a": 1, 2: "b"}, ("a", "b"), ["a"], "ab", 5])
def test_save_refuses_a_getstate_that_is_not_a_dict_of_attribute_names(state, tmp_path):
    with pytest.raises(TypeError, match="is not a dict of attribute names"):
        ember.save(_State(state), tmp_path / "x.pt")
