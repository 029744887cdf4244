"""``Module._load_from_state_dict``: the per-module step of ``load_state_dict`` that libraries override to read
entries of their own (torchmetrics' metric states, kept as plain attributes and put into ``state_dict`` by an
override of it), checked against PyTorch's."""

import pytest
import torch

import ember


def counter_class(lib):
    """A module with a state that is no parameter or buffer: written by ``_save_to_state_dict``'s public form (a
    state-dict hook) and read back by ``_load_from_state_dict``, which pops it, as torchmetrics' Metric does."""

    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.total = lib.zeros(3)
            self.seen = []
            self.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.__setitem__(prefix + "total", m.total))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                  error_msgs):
            self.seen.append((prefix, sorted(k for k in local_metadata if k != "version"), strict))
            if prefix + "total" in state_dict:
                self.total = state_dict.pop(prefix + "total")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                          unexpected_keys, error_msgs)

    return Counter


def build(lib):
    root = lib.nn.Sequential(counter_class(lib)(), lib.nn.Linear(2, 1))
    root[0].total = lib.tensor([1.0, 2.0, 3.0])
    return root


@pytest.mark.parametrize("assign", [False, True])
def test_an_override_pops_its_own_entries(assign):
    results = []
    for lib in (torch, ember):
        state = build(lib).state_dict()
        before = list(state)
        fresh = build(lib)
        fresh[0].total = lib.zeros(3)
        keys = fresh.load_state_dict(state, assign=assign)
        assert list(state) == before  # the caller's dict is left alone (the override pops from a copy)
        results.append((list(keys.missing_keys), list(keys.unexpected_keys), fresh[0].total.tolist(), fresh[0].seen))
    assert results[0] == results[1]
    assert results[1][2] == [1.0, 2.0, 3.0]


def test_entries_left_unread_are_unexpected_and_absent_ones_missing():
    results = []
    for lib in (torch, ember):
        state = build(lib).state_dict()
        state["0.extra"] = lib.ones(1)
        del state["0.lin.bias"]
        fresh = build(lib)
        keys = fresh.load_state_dict(state, strict=False)
        with pytest.raises(RuntimeError) as error:
            build(lib).load_state_dict(state)
        results.append((list(keys.missing_keys), list(keys.unexpected_keys), str(error.value)))
    assert results[0][:2] == results[1][:2] == (["0.lin.bias"], ["0.extra"])
    assert results[1][2].replace("ember", "torch") == results[0][2]


def test_pre_hooks_run_inside_the_base_step():
    """PyTorch runs a module's load pre-hooks from ``Module._load_from_state_dict``: an override that pops an entry
    first hides it from them."""
    seen = []
    for lib in (torch, ember):
        model = build(lib)
        model[0].register_load_state_dict_pre_hook(
            lambda module, sd, prefix, *rest, lib=lib: seen.append((lib.__name__, sorted(k for k in sd
                                                                                           if k.startswith(prefix)))))
        model.load_state_dict(build(lib).state_dict())
    assert seen[0][1] == seen[1][1] == ["0.lin.bias", "0.lin.weight"]
