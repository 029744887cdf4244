"""ember.distributed.fsdp and checkpoint.state_dict in one process, against PyTorch: configuration types, wrap
policies, the shard layouts, and the FQN state dicts of a plain module. (Sharded training on several ranks:
tests/ranks/rank_fsdp.py.)"""

import dataclasses
import functools

import numpy as np
import pytest
import torch

import ember
import ember.distributed.checkpoint.state_dict as esd
import ember.distributed.fsdp as efsdp
import ember.distributed.fsdp.wrap as ewrap
from ember.distributed.fsdp._layout import FlatLayout, RowLayout

tsd = pytest.importorskip("torch.distributed.checkpoint.state_dict")
tfsdp = pytest.importorskip("torch.distributed.fsdp")
twrap = pytest.importorskip("torch.distributed.fsdp.wrap")


@pytest.mark.parametrize("name", ["ShardingStrategy", "BackwardPrefetch", "StateDictType"])
def test_enums_have_pytorchs_members(name):
    assert [m.name for m in getattr(efsdp, name)] == [m.name for m in getattr(tfsdp, name)]


@pytest.mark.parametrize("ours,theirs", [
    (efsdp.MixedPrecision, tfsdp.MixedPrecision), (efsdp.MixedPrecisionPolicy, tfsdp.MixedPrecisionPolicy),
    (efsdp.FullStateDictConfig, tfsdp.FullStateDictConfig), (efsdp.CPUOffload, tfsdp.CPUOffload),
    (efsdp.FullOptimStateDictConfig, tfsdp.FullOptimStateDictConfig),
    (esd.StateDictOptions, tsd.StateDictOptions)])
def test_config_dataclasses_have_pytorchs_fields_and_defaults(ours, theirs):
    def fields(cls):
        return [(f.name, tuple(c.__name__ for c in f.default) if f.name == "_module_classes_to_ignore" else f.default)
                for f in dataclasses.fields(cls) if "dtype" not in f.name]

    assert fields(ours) == fields(theirs)


def test_wrap_policies_decide_as_pytorchs():
    class TBlock(torch.nn.Module):
        pass

    class EBlock(ember.nn.Module):
        pass

    pairs = [(torch.nn.Linear(3, 4), ember.nn.Linear(3, 4)), (TBlock(), EBlock()),
             (torch.nn.ModuleList(), ember.nn.ModuleList()),
             (torch.nn.MultiheadAttention(4, 2), ember.nn.MultiheadAttention(4, 2))]
    policies = [
        (functools.partial(twrap.transformer_auto_wrap_policy, transformer_layer_cls={TBlock}),
         functools.partial(ewrap.transformer_auto_wrap_policy, transformer_layer_cls={EBlock})),
        (functools.partial(twrap.size_based_auto_wrap_policy, min_num_params=10),
         functools.partial(ewrap.size_based_auto_wrap_policy, min_num_params=10)),
        (twrap.ModuleWrapPolicy({torch.nn.Linear}), ewrap.ModuleWrapPolicy({ember.nn.Linear})),
        (functools.partial(twrap.lambda_auto_wrap_policy, lambda_fn=lambda m: isinstance(m, torch.nn.ModuleList)),
         functools.partial(ewrap.lambda_auto_wrap_policy, lambda_fn=lambda m: isinstance(m, ember.nn.ModuleList))),
        (twrap.always_wrap_policy, ewrap.always_wrap_policy),
    ]
    for theirs, ours in policies:
        for tm, em in pairs:
            for recurse in (True, False):
                for numel in (0, 9, 10, 1000):
                    assert ours(module=em, recurse=recurse, nonwrapped_numel=numel) == \
                        theirs(module=tm, recurse=recurse, nonwrapped_numel=numel), (ours, tm, recurse, numel)


@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_row_layout_gives_each_rank_its_torch_chunk(world):
    shapes = [(5, 3), (1,), (7,), (2, 2, 2)]
    arrays = [np.arange(np.prod(s), dtype=np.float64).reshape(s) + 100 * i for i, s in enumerate(shapes)]
    gathered = None
    for rank in range(world):
        layout = RowLayout(shapes, world, rank)
        shards = layout.to_shards(arrays, np.float64)
        gathered = shards
        for i, a in enumerate(arrays):
            chunks = torch.chunk(torch.from_numpy(a), world)
            expected = chunks[rank].numpy() if rank < len(chunks) else np.empty((0,) + a.shape[1:])
            np.testing.assert_array_equal(layout.local_view(shards[rank], i), expected)
    full = RowLayout(shapes, world, 0).full_from_gathered(gathered)
    for i, a in enumerate(arrays):
        np.testing.assert_array_equal(RowLayout(shapes, world, 0).full_view(full, i), a)
    grads = RowLayout(shapes, world, 0).scatter_input(full)  # a gradient is cut as the parameters are
    np.testing.assert_array_equal(grads, gathered)


@pytest.mark.parametrize("world", [1, 2, 3, 5])
def test_flat_layout_pieces_cover_every_parameter_once(world):
    shapes = [(4, 3), (3,), (2,)]
    arrays = [np.arange(np.prod(s), dtype=np.float64).reshape(s) + 100 * i for i, s in enumerate(shapes)]
    layouts = [FlatLayout(shapes, world, r) for r in range(world)]
    shards = layouts[0].to_shards(arrays, np.float64)
    assert shards.shape == (world, -(-17 // world))
    full = layouts[0].full_from_gathered(shards)
    for i, a in enumerate(arrays):
        np.testing.assert_array_equal(layouts[0].full_view(full, i), a)
        pieces = [layouts[r].local_view(shards[r], i) for r in range(world)]
        np.testing.assert_array_equal(np.concatenate([p.reshape(-1) for p in pieces]), a.reshape(-1))


def _pair():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    em = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, em


def _step(model, opt, x):
    opt.zero_grad()
    model(x).pow(2).sum().backward()
    opt.step()


def test_plain_module_state_dicts_by_name_match_pytorch():
    tm, em = _pair()
    topt, eopt = torch.optim.AdamW(tm.parameters(), lr=0.1), ember.optim.AdamW(em.parameters(), lr=0.1)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    _step(tm, topt, torch.from_numpy(x))
    _step(em, eopt, ember.tensor(x))
    tmodel, toptim = tsd.get_state_dict(tm, topt)
    emodel, eoptim = esd.get_state_dict(em, eopt)
    assert list(emodel) == list(tmodel)
    assert list(eoptim["state"]) == list(toptim["state"])
    assert eoptim["param_groups"][0]["params"] == toptim["param_groups"][0]["params"]
    for name, state in toptim["state"].items():
        assert sorted(eoptim["state"][name]) == sorted(state)
        np.testing.assert_allclose(eoptim["state"][name]["exp_avg_sq"].numpy(), state["exp_avg_sq"].numpy(),
                                   rtol=1e-5, atol=1e-7)
    # into fresh models and optimizers: the next step is the same
    tm2, em2 = _pair()
    topt2, eopt2 = torch.optim.AdamW(tm2.parameters(), lr=0.1), ember.optim.AdamW(em2.parameters(), lr=0.1)
    tsd.set_state_dict(tm2, topt2, model_state_dict=tmodel, optim_state_dict=toptim)
    result = esd.set_state_dict(em2, eopt2, model_state_dict=emodel, optim_state_dict=eoptim)
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    _step(tm2, topt2, torch.from_numpy(x))
    _step(em2, eopt2, ember.tensor(x))
    for k, v in tm2.state_dict().items():
        np.testing.assert_allclose(em2.state_dict()[k].numpy(), v.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_frozen_parameters_can_be_left_out():
    _, em = _pair()
    em[0].weight.requires_grad_(False)
    sd = esd.get_model_state_dict(em, options=esd.StateDictOptions(ignore_frozen_params=True))
    assert list(sd) == ["0.bias", "2.weight", "2.bias"]
    with pytest.raises(NotImplementedError, match="submodules"):
        esd.get_model_state_dict(em, submodules={em[0]})
