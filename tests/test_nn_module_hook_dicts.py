"""A module's hooks kept as PyTorch keeps them: dicts from a handle's id to the hook, with the ids registered
``with_kwargs`` / ``always_call`` in their own dicts. Public code reads and edits them directly (removing a weight-norm
hook by iterating ``_forward_pre_hooks.items()``, ``_forward_hooks.clear()``), so each case runs the same program
under torch and ember and compares what it sees."""

import copy
import os
import warnings
from collections import OrderedDict

import pytest
import torch

import ember
from ember.utils.hooks import RemovableHandle

FRAMEWORKS = [torch, ember]


def _hooked(fw, log):
    m = fw.nn.Linear(2, 2)
    handles = [
        m.register_forward_pre_hook(lambda mod, a: log.append("pre")),
        m.register_forward_pre_hook(lambda mod, a, k: log.append("pre_kw"), with_kwargs=True, prepend=True),
        m.register_forward_hook(lambda mod, a, o: log.append("post")),
        m.register_forward_hook(lambda mod, a, k, o: log.append("post_kw_always"), with_kwargs=True, always_call=True),
    ]
    return m, handles


def _seen(fw):
    log = []
    m, handles = _hooked(fw, log)
    ids = [h.id for h in handles]
    out = {
        "types": [type(m.__dict__[k]).__name__ for k in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                                                         "_forward_hooks", "_forward_hooks_with_kwargs",
                                                         "_forward_hooks_always_called", "_backward_pre_hooks",
                                                         "_backward_hooks")],
        # keys as positions of the handles' ids (the ids themselves are process-wide counters)
        "pre_keys": [ids.index(k) for k in m._forward_pre_hooks],
        "pre_kw": [ids.index(k) for k in m._forward_pre_hooks_with_kwargs],
        "post_keys": [ids.index(k) for k in m._forward_hooks],
        "post_kw": [ids.index(k) for k in m._forward_hooks_with_kwargs],
        "always": [ids.index(k) for k in m._forward_hooks_always_called],
        "ids_increase": ids == sorted(ids) and len(set(ids)) == 4,
    }
    m(fw.ones(1, 2))
    out["order"] = list(log)
    log.clear()
    with pytest.raises(RuntimeError):
        m(fw.ones(1, 3))  # forward raises: only the always_call hook runs after it
    out["on_error"] = list(log)
    for h in handles[1:]:
        h.remove()
        h.remove()  # a second remove does nothing
    out["after_remove"] = [len(m.__dict__[k]) for k in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                                                         "_forward_hooks", "_forward_hooks_with_kwargs",
                                                         "_forward_hooks_always_called")]
    m._forward_pre_hooks.clear()  # as public code turns hooks off
    log.clear()
    m(fw.ones(1, 2))
    out["after_clear"] = list(log)
    return out


def test_hook_dicts_as_pytorch():
    assert _seen(ember) == _seen(torch)


def test_public_idiom_removing_a_hook_by_iterating_the_dict():
    def program(fw):
        calls = []

        class Scale:
            def __call__(self, mod, args):
                calls.append("scale")
                return (args[0] * 2,)

        m = fw.nn.Linear(3, 1)
        m.register_forward_pre_hook(Scale())
        m.register_forward_pre_hook(lambda mod, a: calls.append("other"))
        before = m(fw.ones(1, 3)).item()
        for k, hook in list(m._forward_pre_hooks.items()):
            if isinstance(hook, Scale):
                del m._forward_pre_hooks[k]
        after = m(fw.ones(1, 3)).item()
        return calls, len(m._forward_pre_hooks), round(before - 2 * after + m.bias.item(), 5)

    torch.manual_seed(0)
    ember.manual_seed(0)
    got, want = program(ember), program(torch)
    assert got[:2] == want[:2] == (["scale", "other", "other"], 1)
    assert got[2] == pytest.approx(0.0, abs=1e-5)  # before = w·2 + b, after = w·1 + b


def test_weight_norm_hook_found_in_the_dict_and_removed():
    for fw in FRAMEWORKS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # PyTorch's deprecation of the old weight_norm
            m = fw.nn.utils.weight_norm(fw.nn.Linear(2, 2))
        hooks = list(m._forward_pre_hooks.values())
        assert [type(h).__name__ for h in hooks] == ["WeightNorm"], fw.__name__
        fw.nn.utils.remove_weight_norm(m)
        assert len(m._forward_pre_hooks) == 0 and isinstance(m.weight, fw.nn.Parameter)


def test_global_forward_hooks_run_first_and_are_removed():
    def program(fw):
        log = []
        mod = fw.nn.modules.module
        m = fw.nn.Linear(2, 2)
        m.register_forward_pre_hook(lambda mm, a: log.append("own_pre"))
        m.register_forward_hook(lambda mm, a, o: log.append("own_post"))
        g1 = mod.register_module_forward_pre_hook(lambda mm, a: log.append("global_pre"))
        g2 = mod.register_module_forward_hook(lambda mm, a, k, o: log.append(("global_post", sorted(k))),
                                              with_kwargs=True)
        try:
            m(fw.ones(1, 2))
        finally:
            g1.remove()
            g2.remove()
        m(fw.ones(1, 2))
        return log

    assert program(ember) == program(torch)


def test_global_forward_pre_hook_replaces_args():
    for fw in FRAMEWORKS:
        m = fw.nn.Identity()
        h = fw.nn.modules.module.register_module_forward_pre_hook(lambda mm, a: (a[0] + 1,))
        try:
            assert m(fw.zeros(2)).tolist() == [1.0, 1.0], fw.__name__
        finally:
            h.remove()
        assert m(fw.zeros(2)).tolist() == [0.0, 0.0]


def test_always_call_hook_that_raises_is_a_warning_and_the_forward_error_propagates():
    for fw in FRAMEWORKS:
        m = fw.nn.Linear(2, 2)

        def bad(mod, args, out):
            raise ValueError("hook failed")

        m.register_forward_hook(bad, always_call=True)
        with pytest.warns(UserWarning, match="always_call=True.*hook failed"):
            with pytest.raises(RuntimeError):
                m(fw.ones(1, 5))


def test_always_call_hook_not_run_twice_when_a_later_hook_raises():
    for fw in FRAMEWORKS:
        log = []
        m = fw.nn.Linear(2, 2)
        m.register_forward_hook(lambda mod, a, o, log=log: log.append(o is None), always_call=True)

        def later(mod, a, o):
            raise KeyError("later")

        m.register_forward_hook(later)
        with pytest.raises(KeyError):
            m(fw.ones(1, 2))
        assert log == [False], fw.__name__


def test_removable_handle_pytorch_form():
    for handle_cls in (torch.utils.hooks.RemovableHandle, RemovableHandle):
        hooks, flags, more = OrderedDict(), OrderedDict(), OrderedDict()
        h = handle_cls(hooks, extra_dict=[flags, more])
        hooks[h.id] = print
        flags[h.id] = more[h.id] = True
        h2 = handle_cls(hooks, extra_dict=flags)
        assert h2.id == h.id + 1
        hooks[h2.id] = len
        with h:
            pass  # leaving the block removes it
        assert list(hooks.values()) == [len] and not flags and not more
        h2.remove()
        h2.remove()
        assert not hooks


def test_removable_handle_does_not_keep_the_dicts_alive():
    import gc
    import weakref

    hooks = OrderedDict()
    h = RemovableHandle(hooks)
    ref = weakref.ref(hooks)
    del hooks
    gc.collect()
    assert ref() is None
    h.remove()  # nothing left to remove from: quiet


def test_deepcopy_keeps_hooks_and_flags():
    for fw in FRAMEWORKS:
        log = []
        m, _ = _hooked(fw, log)
        m2 = copy.deepcopy(m)
        m2(fw.ones(1, 2))
        assert log == ["pre_kw", "pre", "post", "post_kw_always"], fw.__name__


def test_module_state_with_hook_lists_from_an_earlier_ember_is_upgraded():
    m = ember.nn.Linear(2, 2)
    log = []
    state = dict(m.__dict__)
    for k in ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs", "_forward_hooks_always_called"):
        del state[k]
    state["_forward_pre_hooks"] = [(lambda mod, a: log.append("pre"), False),
                                   (lambda mod, a, k: log.append("pre_kw"), True)]
    state["_forward_hooks"] = [(lambda mod, a, o: log.append("post"), False)]
    state["_backward_hooks"] = []
    restored = ember.nn.Linear.__new__(ember.nn.Linear)
    restored.__setstate__(state)
    restored(ember.ones(1, 2))
    assert log == ["pre", "pre_kw", "post"]
    assert isinstance(restored._forward_hooks, OrderedDict) and len(restored._forward_pre_hooks_with_kwargs) == 1


def test_always_call_hook_sees_the_arguments_the_pre_hooks_left_and_the_output_so_far():
    class Failing:
        def forward(self, x, k=0):
            raise KeyError("forward failed")

    def program(fw):
        seen = []
        m = fw.nn.Identity()
        m.register_forward_pre_hook(lambda mod, a: (a[0] * 2,))

        def bad(mod, a, o):
            raise ValueError("hook failed")

        m.register_forward_hook(bad)
        m.register_forward_hook(lambda mod, a, o: seen.append((a[0].tolist(), o.tolist())), always_call=True)
        with pytest.raises(ValueError):
            m(fw.ones(2))  # a hook raised after forward: the always_call hook gets forward's output
        f = type("F", (fw.nn.Module,), {"forward": Failing.forward})()
        f.register_forward_pre_hook(lambda mod, a, kw: ((a[0] + 1,), {"k": 5}), with_kwargs=True)
        f.register_forward_hook(lambda mod, a, kw, o: seen.append((a[0].tolist(), kw, o)), with_kwargs=True,
                                always_call=True)
        with pytest.raises(KeyError):
            f(fw.ones(2))  # forward raised: output None, args and kwargs as the pre-hook replaced them
        return seen

    assert program(ember) == program(torch) == [([2.0, 2.0], [2.0, 2.0]), ([2.0, 2.0], {"k": 5}, None)]


def _forward_hook_for_pickle(mod, args, out):
    return None


def test_handle_copied_or_pickled_with_its_module_removes_the_copys_hook():
    import pickle

    for fw in FRAMEWORKS:
        m = fw.nn.Linear(2, 2)
        h = m.register_forward_hook(_forward_hook_for_pickle, with_kwargs=True)
        m2, h2 = copy.deepcopy((m, h))
        h2.remove()
        assert (len(m._forward_hooks), len(m2._forward_hooks), len(m2._forward_hooks_with_kwargs)) == (1, 0, 0), fw
        m3, h3 = pickle.loads(pickle.dumps((m, h)))
        assert h3.id == h.id
        h3.remove()
        assert (len(m._forward_hooks), len(m3._forward_hooks), len(m3._forward_hooks_with_kwargs)) == (1, 0, 0), fw
        h4 = pickle.loads(pickle.dumps(h))  # alone: its dicts die with the unpickling, a removal does nothing
        h4.remove()
        assert len(m._forward_hooks) == 1
        assert fw.nn.Linear(1, 1).register_forward_hook(print).id > h.id  # ids are not reused


def test_unpickled_module_hook_ids_are_not_reused():
    m = ember.nn.Linear(2, 2)
    h = m.register_forward_hook(_forward_hook_for_pickle)
    restored = ember.nn.Linear.__new__(ember.nn.Linear)
    counter = RemovableHandle.next_id
    RemovableHandle.next_id = h.id  # as in a fresh process, where the counter starts again
    try:
        restored.__setstate__(dict(m.__dict__))
        restored.register_forward_hook(print)
    finally:
        RemovableHandle.next_id = max(counter, RemovableHandle.next_id)
    assert list(restored._forward_hooks.values()) == [_forward_hook_for_pickle, print]


def test_global_forward_hook_dicts_under_pytorchs_private_names():
    for fw in FRAMEWORKS:
        mod = fw.nn.modules.module
        h = mod.register_module_forward_hook(print, with_kwargs=True, always_call=True)
        try:
            assert mod._global_forward_hooks[h.id] is print, fw.__name__
            assert h.id in mod._global_forward_hooks_with_kwargs and h.id in mod._global_forward_hooks_always_called
        finally:
            h.remove()
        assert h.id not in mod._global_forward_hooks and not mod._global_forward_hooks_always_called


def test_always_call_hook_warning_comes_from_the_librarys_own_frame():
    m = ember.nn.Linear(2, 2)

    def bad(mod, args, out):
        raise ValueError("hook failed")

    m.register_forward_hook(bad, always_call=True)
    with pytest.warns(UserWarning, match="always_call") as record:
        with pytest.raises(RuntimeError):
            m(ember.ones(1, 5))
    # (PyTorch's warns from its own module.py, once per process under the default filter: ember's from its own)
    assert record[0].filename.startswith(os.path.dirname(ember.__file__))


def test_kwargs_pre_hook_returning_something_else_is_pytorchs_error():
    for fw in FRAMEWORKS:
        m = fw.nn.Identity()
        m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got 5"):
            m(fw.ones(1))
