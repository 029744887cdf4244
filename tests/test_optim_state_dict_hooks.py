"""Optimizer state-dict hooks (``register_state_dict_pre_hook``/``_post_hook``,
``register_load_state_dict_pre_hook``/``_post_hook``), checked against PyTorch: calling order with ``prepend``,
what each hook receives, results that replace the dict, the shallow copy a load pre hook edits, removal."""

import pytest
import torch

import ember


def trained(fw):
    fw.manual_seed(0)
    lin = fw.nn.Linear(3, 2)
    opt = fw.optim.Adam(lin.parameters(), lr=0.1)
    lin(fw.ones(4, 3)).pow(2).sum().backward()
    opt.step()
    return lin, opt


def state_dict_events(fw):
    _, opt = trained(fw)
    events = []
    handles = [
        opt.register_state_dict_pre_hook(lambda o: events.append(("pre a", o is opt))),
        opt.register_state_dict_pre_hook(lambda o: events.append(("pre b", o is opt)), prepend=True),
        opt.register_state_dict_post_hook(lambda o, sd: events.append(("post a", sorted(sd), len(sd["state"])))),
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1}),
        opt.register_state_dict_post_hook(lambda o, sd: events.append(("post first", "extra" in sd)), prepend=True),
    ]
    sd = opt.state_dict()
    events.append(("result", sorted(sd)))
    handles[1].remove()
    handles[3].remove()
    handles[3].remove()  # a second remove does nothing
    events.append(("after remove", sorted(opt.state_dict())))
    return events


def test_state_dict_hooks_order_and_results():
    assert state_dict_events(ember) == state_dict_events(torch)


def load_events(fw):
    _, opt = trained(fw)
    sd = opt.state_dict()
    events = []

    def pre_edit(o, d):  # edits the copy it is given (returns None): the caller's dict is untouched
        events.append(("pre edit", o is opt, d is sd))
        d["param_groups"] = [{**g, "lr": 0.5} for g in d["param_groups"]]

    def pre_replace(o, d):
        events.append(("pre replace", d["param_groups"][0]["lr"]))
        return {"state": d["state"], "param_groups": [{**g, "weight_decay": 0.25} for g in d["param_groups"]]}

    opt.register_load_state_dict_pre_hook(pre_replace)
    opt.register_load_state_dict_pre_hook(pre_edit, prepend=True)
    handle = opt.register_load_state_dict_post_hook(
        lambda o: events.append(("post", o.param_groups[0]["lr"], o.param_groups[0]["weight_decay"])))
    opt.load_state_dict(sd)
    events.append(("caller's dict", sd["param_groups"][0]["lr"], sd["param_groups"][0]["weight_decay"]))
    handle.remove()
    opt.load_state_dict(sd)
    events.append(("loaded", opt.param_groups[0]["lr"], opt.param_groups[0]["weight_decay"]))
    return events


def test_load_state_dict_hooks_order_copy_and_replacement():
    assert load_events(ember) == load_events(torch)


@pytest.mark.parametrize("name", ["register_state_dict_pre_hook", "register_state_dict_post_hook",
                                  "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook"])
def test_hook_registration_signature(name):
    import inspect

    params = lambda f: [(p.name, p.default) for p in inspect.signature(f).parameters.values()]  # noqa: E731
    assert params(getattr(ember.optim.Optimizer, name)) == params(getattr(torch.optim.Optimizer, name))


def pickled_round_trip(fw):
    import pickle

    _, opt = trained(fw)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    copy = pickle.loads(pickle.dumps(opt))  # hooks are not pickled: the copy has empty tables
    copy.register_load_state_dict_post_hook(lambda o: None)
    copy.load_state_dict(opt.state_dict())
    return sorted(copy.state_dict()), len(copy.state), copy.param_groups[0]["lr"]


def test_state_dict_hooks_after_pickling():
    assert pickled_round_trip(ember) == pickled_round_trip(torch)
