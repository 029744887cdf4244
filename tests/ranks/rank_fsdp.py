"""FSDP on every rank: sharded training equals one process training on the full batch, for every sharding strategy,
FSDP1 and fully_shard; memory, state dicts, no_sync, mixed precision, clipping. (Run on 2 ranks by
tests/test_on_ranks.py.)"""

import copy
import functools
import tracemalloc
import weakref

import numpy as np
import pytest

import ember
import ember.distributed.fsdp as efsdp
import ember.nn as nn
from ember.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    get_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
    set_state_dict,
)
from ember.distributed.device_mesh import init_device_mesh
from ember.distributed.fsdp import (
    FSDPModule,
    FullStateDictConfig,
    MixedPrecision,
    ShardingStrategy,
    StateDictType,
    fully_shard,
)
from ember.distributed.fsdp import FullyShardedDataParallel as FSDP
from ember.distributed.fsdp._handle import _LIVE
from ember.distributed.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy, transformer_auto_wrap_policy
from ember.nn.parallel import DistributedDataParallel as DDP


class Block(nn.Module):
    """A transformer block's MLP half: pre-norm, expand, GELU, project, residual."""

    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln(x))))


class Net(nn.Module):
    def __init__(self, d=6, inputs=5, classes=3, blocks=2):
        super().__init__()
        self.inp = nn.Linear(inputs, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(blocks)])
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = b(h)
        return self.head(h)


AUTO_WRAP = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
STEPS = 3


def data(dtype=ember.float64, n=8):
    rng = np.random.default_rng(0)
    return ember.tensor(rng.standard_normal((n, 5))).to(dtype), ember.tensor(rng.integers(0, 3, n))


def local(t, rank, world):
    b = t.shape[0] // world
    return t[rank * b:(rank + 1) * b]


def train(model, opt, x, y, steps=STEPS):
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def full_params(model) -> dict:
    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))


def max_diff(sd, reference) -> float:
    assert list(sd) == list(reference), (list(sd), list(reference))
    return max(float((sd[k].double() - reference[k].double()).abs().max()) for k in sd)


def reference(dtype=ember.float64, optimizer=ember.optim.AdamW, **kw):
    """A model and the same model trained on the full batch in this one process."""
    ember.manual_seed(0)
    model = Net().to(dtype)
    base = copy.deepcopy(model)
    x, y = data(dtype)
    train(base, optimizer(base.parameters(), **kw), x, y)
    return model, base, x, y


def test_every_strategy_trains_as_one_process_on_the_full_batch(rank, world):
    for optimizer, kw in ((ember.optim.SGD, dict(lr=0.1, momentum=0.9)), (ember.optim.AdamW, dict(lr=0.05))):
        model, base, x, y = reference(ember.float64, optimizer, **kw)
        for strategy in ShardingStrategy:
            for orig in (False, True):
                fsdp = FSDP(copy.deepcopy(model), sharding_strategy=strategy, auto_wrap_policy=AUTO_WRAP,
                            use_orig_params=orig)
                train(fsdp, optimizer(fsdp.parameters(), **kw), local(x, rank, world), local(y, rank, world))
                assert max_diff(fsdp.state_dict(), base.state_dict()) < 1e-6, (optimizer, strategy, orig)


def test_float32_training_matches_to_1e_5(rank, world):
    model, base, x, y = reference(ember.float32, ember.optim.AdamW, lr=0.05)
    for strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP, ShardingStrategy.NO_SHARD):
        fsdp = FSDP(copy.deepcopy(model), sharding_strategy=strategy, auto_wrap_policy=AUTO_WRAP)
        train(fsdp, ember.optim.AdamW(fsdp.parameters(), lr=0.05), local(x, rank, world), local(y, rank, world))
        assert max_diff(fsdp.state_dict(), base.state_dict()) < 1e-5


def test_parameters_are_this_ranks_shard(rank, world):
    ember.manual_seed(0)
    fsdp = FSDP(Net().double(), auto_wrap_policy=AUTO_WRAP)
    names = [n for n, _ in fsdp.named_parameters()]
    assert names == ["_fsdp_wrapped_module._flat_param",
                     "_fsdp_wrapped_module.blocks.0._fsdp_wrapped_module._flat_param",
                     "_fsdp_wrapped_module.blocks.1._fsdp_wrapped_module._flat_param"]
    root_numel = 6 * 5 + 6 + 3 * 6 + 3  # inp and head: not in a block
    assert [p.numel() for p in fsdp.parameters()][0] == -(-root_numel // world)
    orig = FSDP(Net().double(), auto_wrap_policy=AUTO_WRAP, use_orig_params=True)
    named = dict(orig.named_parameters())
    assert "_fsdp_wrapped_module.blocks.0._fsdp_wrapped_module.fc1.weight" in named
    assert all(p.dim() == 1 for p in named.values())  # 1-D pieces of the flat shard, as PyTorch's
    total = ember.zeros(1, dtype=ember.int64)
    total += sum(p.numel() for p in named.values())
    ember.distributed.all_reduce(total)
    assert int(total) == sum(p.numel() for p in Net().parameters())
    assert isinstance(orig.module, Net) and isinstance(orig.blocks[0], FSDP)
    assert "Linear(in_features=5, out_features=6, bias=True)" in repr(fsdp)
    inp = fsdp.module.inp  # outside forward (flat parameters) a module's attribute is this rank's 1-D part
    assert inp.weight.dim() == 1 and inp.weight.numel() <= 30 and not inp.weight.requires_grad
    with FSDP.summon_full_params(fsdp):
        assert tuple(inp.weight.shape) == (6, 5)
        inp.bias.data.fill_(7.0)
    assert float(fsdp.state_dict()["inp.bias"].sum()) == 42.0


def test_auto_wrap_policies_make_the_same_units_as_pytorch(rank, world):
    ember.manual_seed(0)
    by_class = FSDP(Net(), auto_wrap_policy=ModuleWrapPolicy({Block}))
    assert [type(m.module).__name__ for m in FSDP.fsdp_modules(by_class)] == ["Net", "Block", "Block"]
    sized = FSDP(Net(), auto_wrap_policy=functools.partial(size_based_auto_wrap_policy, min_num_params=100))
    # PyTorch wraps fc1 (168 >= 100) and fc2 (150) in each block; the block's LayerNorm (12) stays in the root.
    assert [type(m.module).__name__ for m in FSDP.fsdp_modules(sized)] == ["Net"] + ["Linear", "Linear"] * 2
    assert FSDP.fsdp_modules(sized, root_only=True) == [sized]


def test_full_shard_frees_gathered_parameters_and_uses_less_memory(rank, world):
    def model():
        ember.manual_seed(0)
        return nn.Sequential(*[nn.Sequential(nn.Linear(128, 128), nn.Tanh()) for _ in range(6)]).double()

    x = ember.randn(2, 128, dtype=ember.float64)
    peaks, models = {}, {}
    for strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP):
        fsdp = models[strategy] = FSDP(model(), sharding_strategy=strategy,
                                       auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
        fsdp(x).sum().backward()  # a first step (the gradients' own memory is the same under both)
        tracemalloc.start()
        out = fsdp(x)
        inner = FSDP.fsdp_modules(fsdp)[1]._fsdp_handle
        if strategy is ShardingStrategy.FULL_SHARD:
            assert inner.full_arr is None and not any(h is inner for h in _LIVE.values())
        else:
            assert inner.full_arr is not None
        out.sum().backward()
        peaks[strategy] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert inner.full_arr is None  # after backward every sharded strategy has let them go
    full_bytes = 6 * (128 * 128 + 128) * 8
    assert peaks[ShardingStrategy.SHARD_GRAD_OP] > full_bytes
    # parameter memory of a FULL_SHARD rank: its shards plus, at most, the gathered units alive at once
    gathered = {}
    for strategy, fsdp in models.items():
        efsdp.reset_peak_unsharded_memory()
        before = efsdp.unsharded_memory()["unsharded_bytes"]  # (other tests' models may still hold theirs)
        fsdp(x).sum().backward()
        assert efsdp.unsharded_memory()["unsharded_bytes"] == before
        gathered[strategy] = efsdp.unsharded_memory()["peak_unsharded_bytes"] - before
        kept = sum(p.numel() * 8 for p in fsdp.parameters())
        assert kept == full_bytes // world
    assert gathered[ShardingStrategy.SHARD_GRAD_OP] == full_bytes
    assert 0 < gathered[ShardingStrategy.FULL_SHARD] <= full_bytes // 6  # one unit at a time
    assert full_bytes // world + gathered[ShardingStrategy.FULL_SHARD] < full_bytes
    assert peaks[ShardingStrategy.FULL_SHARD] < 0.5 * peaks[ShardingStrategy.SHARD_GRAD_OP], peaks


def test_the_gathered_array_is_really_released(rank, world):
    ember.manual_seed(0)
    fsdp = FSDP(Net().double(), auto_wrap_policy=AUTO_WRAP)
    x, y = data()
    handle = FSDP.fsdp_modules(fsdp)[1]._fsdp_handle
    seen = []
    fsdp.blocks[0].module.fc1.register_forward_hook(lambda m, i, o: seen.append(weakref.ref(m.weight._data.base)))
    loss = nn.functional.cross_entropy(fsdp(x), y)
    assert seen[0]() is None  # nothing (no saved tensor either) keeps block 0's gathered parameters alive
    loss.backward()
    assert handle.full_arr is None and handle.flat_param.grad is not None


def test_fully_shard_trains_as_one_process(rank, world):
    model, base, x, y = reference(ember.float64, ember.optim.AdamW, lr=0.05)
    for reshard in (True, False):
        sharded = copy.deepcopy(model)
        for block in sharded.blocks:
            fully_shard(block, reshard_after_forward=reshard)
        fully_shard(sharded)
        assert isinstance(sharded, FSDPModule) and isinstance(sharded, Net)
        w = dict(sharded.named_parameters())["blocks.0.fc1.weight"]
        assert tuple(w.shape) == tuple(ember.chunk(model.blocks[0].fc1.weight, world)[rank].shape)
        train(sharded, ember.optim.AdamW(sharded.parameters(), lr=0.05), local(x, rank, world), local(y, rank, world))
        assert max_diff(full_params(sharded), base.state_dict()) < 1e-6


def test_fully_shard_gradient_sync_switch_and_reshard(rank, world):
    model, _, x, y = reference()
    base = copy.deepcopy(model)
    sharded = copy.deepcopy(model)
    fully_shard(sharded.blocks[0])
    fully_shard(sharded)
    opt, ref_opt = ember.optim.SGD(sharded.parameters(), lr=0.1), ember.optim.SGD(base.parameters(), lr=0.1)
    half = x.shape[0] // 2
    sharded.set_requires_gradient_sync(False)  # accumulate two micro-batches, reduce once
    nn.functional.cross_entropy(sharded(local(x[:half], rank, world)), local(y[:half], rank, world)).backward()
    sharded.set_requires_gradient_sync(True)
    nn.functional.cross_entropy(sharded(local(x[half:], rank, world)), local(y[half:], rank, world)).backward()
    opt.step()
    (nn.functional.cross_entropy(base(x[:half]), y[:half]) + nn.functional.cross_entropy(base(x[half:]),
                                                                                           y[half:])).backward()
    ref_opt.step()
    assert max_diff(full_params(sharded), base.state_dict()) < 1e-6
    sharded.unshard()
    assert sharded._fsdp_handle.full_arr is not None
    sharded.reshard()
    assert sharded._fsdp_handle.full_arr is None


def test_no_sync_accumulates_and_the_next_backward_reduces(rank, world):
    model, _, x, y = reference()
    base = copy.deepcopy(model)
    fsdp = FSDP(copy.deepcopy(model), auto_wrap_policy=AUTO_WRAP)
    opt, ref_opt = ember.optim.SGD(fsdp.parameters(), lr=0.1), ember.optim.SGD(base.parameters(), lr=0.1)
    half = x.shape[0] // 2
    with fsdp.no_sync():
        nn.functional.cross_entropy(fsdp(local(x[:half], rank, world)), local(y[:half], rank, world)).backward()
    assert all(p.grad is None for p in fsdp.parameters())
    nn.functional.cross_entropy(fsdp(local(x[half:], rank, world)), local(y[half:], rank, world)).backward()
    opt.step()
    (nn.functional.cross_entropy(base(x[:half]), y[:half]) + nn.functional.cross_entropy(base(x[half:]),
                                                                                           y[half:])).backward()
    ref_opt.step()
    assert max_diff(fsdp.state_dict(), base.state_dict()) < 1e-6


def test_clip_grad_norm_is_the_global_norm(rank, world):
    model, _, x, y = reference()
    base = copy.deepcopy(model)
    for strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.NO_SHARD):
        fsdp = FSDP(copy.deepcopy(model), sharding_strategy=strategy, auto_wrap_policy=AUTO_WRAP)
        nn.functional.cross_entropy(fsdp(local(x, rank, world)), local(y, rank, world)).backward()
        base.zero_grad()
        nn.functional.cross_entropy(base(x), y).backward()
        for norm_type in (2.0, float("inf")):
            expected = nn.utils.get_total_norm([p.grad for p in base.parameters()], norm_type)
            assert abs(float(fsdp.clip_grad_norm_(1e9, norm_type)) - float(expected)) < 1e-9
        sharded = copy.deepcopy(model)
        fully_shard(sharded.blocks[0])
        fully_shard(sharded)
        nn.functional.cross_entropy(sharded(local(x, rank, world)), local(y, rank, world)).backward()
        expected = nn.utils.get_total_norm([p.grad for p in base.parameters()], 2.0)
        assert abs(float(sharded.clip_grad_norm_(1e9)) - float(expected)) < 1e-9
        total = float(fsdp.clip_grad_norm_(0.01))
        nn.utils.clip_grad_norm_(base.parameters(), 0.01)
        ember.optim.SGD(fsdp.parameters(), lr=1.0).step()
        ember.optim.SGD(base.parameters(), lr=1.0).step()
        assert total > 0.01 and max_diff(fsdp.state_dict(), base.state_dict()) < 1e-6
        model = copy.deepcopy(base)


def test_mixed_precision_computes_in_bfloat16_and_keeps_float32_shards(rank, world):
    model, base, x, y = reference(ember.float32, ember.optim.SGD, lr=0.1)
    policy = MixedPrecision(param_dtype=ember.bfloat16, reduce_dtype=ember.float32)
    fsdp = FSDP(copy.deepcopy(model), auto_wrap_policy=AUTO_WRAP, mixed_precision=policy)
    seen = []
    fsdp.blocks[0].module.fc1.register_forward_hook(lambda m, i, o: seen.append((m.weight.dtype, o.dtype)))
    train(fsdp, ember.optim.SGD(fsdp.parameters(), lr=0.1), local(x, rank, world), local(y, rank, world))
    assert seen[0] == (ember.bfloat16, ember.bfloat16)
    assert all(p.dtype == ember.float32 and p.grad.dtype == ember.float32 for p in fsdp.parameters())
    sd = fsdp.state_dict()
    assert all(v.dtype == ember.float32 for v in sd.values())
    assert 0 < max_diff(sd, base.state_dict()) < 3e-2  # bfloat16 rounding, not a different model


def test_full_state_dict_rank0_only_and_loading_resume_training(rank, world):
    for orig in (False, True):
        model, _, x, y = reference()
        base = copy.deepcopy(model)
        base_opt = ember.optim.AdamW(base.parameters(), lr=0.05)
        fsdp = FSDP(copy.deepcopy(model), auto_wrap_policy=AUTO_WRAP, use_orig_params=orig)
        opt = ember.optim.AdamW(fsdp.parameters(), lr=0.05)
        train(fsdp, opt, local(x, rank, world), local(y, rank, world))
        train(base, base_opt, x, y)
        with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT,
                                  FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
            sd = fsdp.state_dict()
        assert (list(sd) == list(base.state_dict())) if rank == 0 else sd == {}
        osd = FSDP.optim_state_dict(fsdp, opt)
        assert sorted(osd["state"]) == sorted(k for k, _ in base.named_parameters())
        assert tuple(osd["state"]["blocks.0.fc1.weight"]["exp_avg"].shape) == (24, 6)
        resumed = FSDP(Net().double(), auto_wrap_policy=AUTO_WRAP, use_orig_params=orig)
        opt2 = ember.optim.AdamW(resumed.parameters(), lr=0.05)
        resumed.load_state_dict(fsdp.state_dict())
        opt2.load_state_dict(FSDP.optim_state_dict_to_load(resumed, opt2, osd))
        train(resumed, opt2, local(x, rank, world), local(y, rank, world))
        train(base, base_opt, x, y)
        assert max_diff(resumed.state_dict(), base.state_dict()) < 1e-6


def test_local_state_dict_round_trip(rank, world):
    ember.manual_seed(0)
    fsdp = FSDP(Net().double(), auto_wrap_policy=AUTO_WRAP)
    with FSDP.state_dict_type(fsdp, StateDictType.LOCAL_STATE_DICT):
        mine = {k: v.clone() for k, v in fsdp.state_dict().items()}
        for p in fsdp.parameters():
            p.data.zero_()
        fsdp.load_state_dict(mine)
    ember.manual_seed(0)
    assert max_diff(fsdp.state_dict(), Net().double().state_dict()) == 0
    with pytest.raises(NotImplementedError, match="SHARDED_STATE_DICT"):
        FSDP.set_state_dict_type(fsdp, StateDictType.SHARDED_STATE_DICT)


def test_checkpoint_state_dict_functions_for_plain_ddp_and_sharded_models(rank, world):
    model, _, x, y = reference()
    base = copy.deepcopy(model)
    ref_opt = ember.optim.AdamW(base.parameters(), lr=0.05)
    train(base, ref_opt, x, y, steps=1)
    expected_model, expected_optim = get_state_dict(base, ref_opt)
    assert list(expected_optim["state"]) == [n for n, _ in base.named_parameters()]
    ddp = DDP(copy.deepcopy(model))
    ddp_opt = ember.optim.AdamW(ddp.parameters(), lr=0.05)
    train(ddp, ddp_opt, local(x, rank, world), local(y, rank, world), steps=1)
    fsdp = FSDP(copy.deepcopy(model), auto_wrap_policy=AUTO_WRAP)
    fsdp_opt = ember.optim.AdamW(fsdp.parameters(), lr=0.05)
    train(fsdp, fsdp_opt, local(x, rank, world), local(y, rank, world), steps=1)
    full = StateDictOptions(full_state_dict=True)
    for m, o in ((ddp, ddp_opt), (fsdp, fsdp_opt)):
        msd, osd = get_state_dict(m, o, options=full)
        assert max_diff(msd, expected_model) < 1e-9
        # (FSDP's flat parameters list the root's names first, then each unit's, as PyTorch's)
        assert sorted(osd["param_groups"][0]["params"]) == sorted(expected_optim["param_groups"][0]["params"])
        for name, state in expected_optim["state"].items():
            assert float((osd["state"][name]["exp_avg"] - state["exp_avg"]).abs().max()) < 1e-9
    # into a fresh sharded model, then both train on: the same parameters
    fresh = FSDP(Net().double(), auto_wrap_policy=AUTO_WRAP, use_orig_params=True)
    fresh_opt = ember.optim.AdamW(fresh.parameters(), lr=0.05)
    set_state_dict(fresh, fresh_opt, model_state_dict=expected_model, optim_state_dict=expected_optim, options=full)
    train(fresh, fresh_opt, local(x, rank, world), local(y, rank, world))
    train(base, ref_opt, x, y)
    assert max_diff(get_model_state_dict(fresh, options=full), base.state_dict()) < 1e-9
    # the local (per-rank) form round-trips on the same ranks
    local_model, local_optim = get_model_state_dict(fresh), get_optimizer_state_dict(fresh, fresh_opt)
    assert tuple(local_model["blocks.0.fc1.weight"].shape) != (24, 6)
    set_model_state_dict(fresh, local_model)
    set_optimizer_state_dict(fresh, fresh_opt, local_optim)
    cpu = get_model_state_dict(fresh, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    assert (rank == 0) == bool(cpu)


def test_hybrid_shard_over_a_device_mesh(rank, world):
    model, base, x, y = reference(ember.float64, ember.optim.AdamW, lr=0.05)
    for shape in ((world, 1), (1, world)):  # (replicate, shard): all replicas, or all shards
        mesh = init_device_mesh("cpu", shape, mesh_dim_names=("replicate", "shard"))
        fsdp = FSDP(copy.deepcopy(model), sharding_strategy=ShardingStrategy.HYBRID_SHARD, device_mesh=mesh,
                    auto_wrap_policy=AUTO_WRAP)
        assert fsdp._fsdp_handle.layout.world == shape[1]
        train(fsdp, ember.optim.AdamW(fsdp.parameters(), lr=0.05), local(x, rank, world), local(y, rank, world))
        assert max_diff(fsdp.state_dict(), base.state_dict()) < 1e-6, shape
        sharded = copy.deepcopy(model)
        fully_shard(sharded, mesh=mesh)
        assert sharded._fsdp_handle.layout.world == shape[1]
        train(sharded, ember.optim.AdamW(sharded.parameters(), lr=0.05), local(x, rank, world),
              local(y, rank, world))
        assert max_diff(full_params(sharded), base.state_dict()) < 1e-6, shape
    one_d = init_device_mesh("cpu", (world,))
    sharded = copy.deepcopy(model)
    fully_shard(sharded, mesh=one_d)
    train(sharded, ember.optim.AdamW(sharded.parameters(), lr=0.05), local(x, rank, world), local(y, rank, world))
    assert max_diff(full_params(sharded), base.state_dict()) < 1e-6


def test_clear_errors(rank, world):
    mixed = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2).double())
    with pytest.raises(ValueError, match="one dtype"):
        FSDP(mixed)
    with pytest.raises(TypeError, match="ember.nn.Module"):
        FSDP(object())
    with pytest.raises(NotImplementedError, match="list of modules"):
        fully_shard([nn.Linear(2, 2)])


def test_sync_module_states_takes_rank_0s_parameters(rank, world):
    ember.manual_seed(rank)  # a different model on each rank
    fsdp = FSDP(Net().double(), auto_wrap_policy=AUTO_WRAP, sync_module_states=True)
    ember.manual_seed(0)
    assert max_diff(fsdp.state_dict(), Net().double().state_dict()) == 0
