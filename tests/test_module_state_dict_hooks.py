"""nn.Module's state-dict hooks against PyTorch: load pre/post hooks (gpt-fast merges old checkpoints' q/k/v
weights in one), state_dict pre/post hooks and the private forms."""

from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember


def build(m):
    class Attention(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.wqkv = m.nn.Linear(2, 6, bias=False)
            self._register_load_state_dict_pre_hook(self.load_hook)

        def load_hook(self, state_dict, prefix, *args):
            if prefix + "wq.weight" in state_dict:
                wq, wk, wv = (state_dict.pop(prefix + f"w{n}.weight") for n in "qkv")
                state_dict[prefix + "wqkv.weight"] = m.cat([wq, wk, wv])

    return m.nn.Sequential(Attention(), m.nn.Linear(6, 2))


def checkpoint(m):
    return OrderedDict({"0.wq.weight": m.ones(2, 2), "0.wk.weight": 2 * m.ones(2, 2), "0.wv.weight": 3 * m.ones(2, 2),
                        "1.weight": m.zeros(2, 6), "1.bias": m.zeros(2), "extra": m.ones(1)})


def run_load(m):
    net, sd, calls = build(m), checkpoint(m), []
    net.register_load_state_dict_pre_hook(
        lambda mod, d, prefix, meta, strict, mk, uk, em: calls.append(("pre", type(mod).__name__, prefix, strict)))
    net[1].register_load_state_dict_post_hook(
        lambda mod, keys: calls.append(("post1", list(keys.missing_keys), list(keys.unexpected_keys))))

    def forgive(mod, keys):
        calls.append(("post0", list(keys.unexpected_keys)))
        keys.unexpected_keys.remove("extra")

    net.register_load_state_dict_post_hook(forgive)
    result = net.load_state_dict(sd)
    return net, sd, calls, result


def test_load_hooks_edit_a_copy_and_post_hooks_forgive_keys():
    ours, theirs = run_load(ember), run_load(torch)
    np.testing.assert_array_equal(ours[0][0].wqkv.weight.detach().numpy(), theirs[0][0].wqkv.weight.detach().numpy())
    assert list(ours[1]) == list(theirs[1])  # the caller's dict is untouched
    assert ours[2] == theirs[2]
    assert (ours[3].missing_keys, ours[3].unexpected_keys) == (theirs[3].missing_keys, theirs[3].unexpected_keys)
    net = build(ember)  # without the forgiving hook "extra" is an error, as in PyTorch
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "extra"'):
        net.load_state_dict(checkpoint(ember))


def run_save(m):
    net, calls = build(m), []
    handle = net[1].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append((prefix, keep_vars)))
    net[1].register_state_dict_post_hook(lambda mod, d, prefix, meta: d.__setitem__(prefix + "note", m.zeros(1)))
    net._register_state_dict_hook(lambda mod, d, prefix, meta: OrderedDict((k.upper(), v) for k, v in d.items()))
    keys = list(net.state_dict(keep_vars=True))
    handle.remove()
    net.state_dict()
    net[1].register_state_dict_post_hook(lambda mod, d, prefix, meta: d)
    with pytest.raises(RuntimeError) as e:
        net.state_dict()
    return keys, calls, str(e.value), len(net[1]._state_dict_pre_hooks)


def test_state_dict_hooks():
    assert run_save(ember) == run_save(torch)


def test_a_module_without_hooks_saves_and_loads_as_before():
    lin = ember.nn.Linear(2, 2)
    assert not lin._load_state_dict_pre_hooks and "_state_dict_hooks" not in vars(lin)
    other = ember.nn.Linear(2, 2)
    sd = lin.state_dict()
    assert other.load_state_dict(sd) is not None and sd is not None
    np.testing.assert_array_equal(other.weight.detach().numpy(), lin.weight.detach().numpy())


STORES = ["_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"]


def _edited_stores(fw):
    """Public code's direct edits of the stores (as DeepSpeed's and Lightning's checkpoint code does)."""
    nn = fw.nn
    m = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    seen = [(type(getattr(m[0], s)).__name__, len(getattr(m[0], s)), getattr(m[0], s) is getattr(m[1], s))
            for s in STORES]
    log = []
    m[0]._state_dict_hooks[12345] = lambda mod, sd, prefix, meta: log.append(("post", prefix))
    m[1]._state_dict_pre_hooks[1] = lambda mod, prefix, keep: log.append(("pre", prefix))
    m._load_state_dict_pre_hooks[7] = lambda sd, prefix, *a: log.append(("load_pre", prefix))
    m._load_state_dict_post_hooks[8] = lambda mod, keys: log.append(("load_post", len(keys.missing_keys)))
    sd = m.state_dict()
    m.load_state_dict(sd)
    seen.append((list(sd), list(log)))
    m[0]._state_dict_hooks.clear()
    del m[1]._state_dict_pre_hooks[1]
    log.clear()
    m.state_dict()
    handle = m[1].register_state_dict_pre_hook(lambda mod, prefix, keep: log.append("registered"))
    m.state_dict()
    seen.append((list(log), len(m[1]._state_dict_pre_hooks)))
    handle.remove()
    seen.append(len(m[1]._state_dict_pre_hooks))
    return seen


def test_the_hook_stores_are_each_modules_own_editable_ordered_dicts():
    assert _edited_stores(ember) == _edited_stores(torch)
