"""``clamp``/``clip`` (function, method, in place) given a bound that is neither a tensor nor a number, or a tensor
with a number: PyTorch's TypeError word for word, bounds given by keyword listed as its parser lists them
(``got (min=str, )``, ``got (Tensor, max=str, min=int)``) and the method's reasons for each overload."""

import pytest
import torch

import ember

CALLS = {
    "method_positional": lambda m, t: t.clamp("a"),
    "method_min_keyword": lambda m, t: t.clamp(min="a"),
    "method_max_keyword": lambda m, t: t.clamp(max="a"),
    "method_both_positional": lambda m, t: t.clamp("a", 1),
    "method_both_keywords": lambda m, t: t.clamp(min="a", max=1),
    "method_mixed": lambda m, t: t.clamp(1, max="a"),
    "method_tensor_and_number": lambda m, t: t.clamp(min=t, max=1.0),
    "function_positional": lambda m, t: m.clamp(t, "a"),
    "function_min_keyword": lambda m, t: m.clamp(t, min="a"),
    "function_max_keyword": lambda m, t: m.clamp(t, max="a"),
    "function_mixed": lambda m, t: m.clamp(t, "a", max=1),
    "function_both_keywords": lambda m, t: m.clamp(t, min=1, max="a"),
    "in_place_keyword": lambda m, t: t.clamp_(max="a"),
    "clip_method_keyword": lambda m, t: t.clip(min="a"),
    "clip_function_keywords": lambda m, t: m.clip(t, max=None, min="a"),
    "clip_in_place_positional": lambda m, t: t.clip_("a", "b"),
}


@pytest.mark.parametrize("call", CALLS)
def test_pytorchs_words(call):
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as caught:
            CALLS[call](m, m.ones(2))
        messages.append(str(caught.value))
    assert messages[1] == messages[0]


def test_bounds_that_are_taken_are_still_taken():
    t = ember.tensor([-1.0, 0.5, 3.0])
    assert t.clamp(min=0.0, max=1.0).tolist() == [0.0, 0.5, 1.0] == ember.clamp(t, 0.0, max=1.0).tolist()
    assert t.clip_(max=2).tolist() == [-1.0, 0.5, 2.0]
