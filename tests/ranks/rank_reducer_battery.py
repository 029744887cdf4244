"""A battery of DDP reducer checks against PyTorch's DDP on the same 2 ranks (each rank also joins a PyTorch gloo
group), one configuration after another in one process pair: one bucket and several, the bucket view, a static
graph, find_unused_parameters with parameters used on some ranks, no_sync() accumulation, a communication hook
(the arguments it is given and the gradients its result becomes). After every backward each rank's gradients
(None or values) and after each SGD-with-momentum step its parameters equal PyTorch's.

Run first in tests/test_reducer_on_ranks.py's job (the reducer's mutation map runs it early): each check is a few
steps of a small model, so the whole battery costs a few seconds of the job."""

import numpy as np
import pytest
import torch
from rank_ddp_vs_torch import _close, heads  # (the trunk-and-three-heads model; equal to float64 rounding)
from torch.nn.parallel import DistributedDataParallel as TorchDDP

import ember
from ember.nn.parallel import DistributedDataParallel as DDP


def _pair():
    torch.manual_seed(0)
    torch_model, ember_model = heads(torch), heads(ember)
    ember_model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()})
    return torch_model, ember_model


def _snapshot(model, grads: bool) -> dict:
    if grads:
        return {n: None if p.grad is None else p.grad.detach().numpy().copy() for n, p in model.named_parameters()}
    return {n: p.detach().numpy().copy() for n, p in model.named_parameters()}


def _run(m, ddp, model, plan, rank):
    """``plan``: per step (kind, heads used on rank 0, on rank 1); kind "sync" (a synchronised backward, then an
    SGD step and zero_grad), "no_sync" (a backward under no_sync(), gradients kept) or "keep" (a synchronised
    backward, no zero_grad after the step: the next backward accumulates)."""
    optimizer = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    seen = []
    for step, (kind, *use) in enumerate(plan):
        x = m.tensor(np.random.default_rng(10 * step + rank).standard_normal((5, 3)))
        if kind == "no_sync":
            with ddp.no_sync():
                ddp(x, use[min(rank, 1)]).pow(2).sum().backward()
            seen.append(_snapshot(model, True))
            continue
        ddp(x, use[min(rank, 1)]).pow(2).sum().backward()
        seen.append(_snapshot(model, True))
        optimizer.step()
        seen.append(_snapshot(model, False))
        if kind == "sync":
            optimizer.zero_grad()
    return seen


def _differences(mine, theirs, rank, plan) -> list[str]:
    problems = []
    for k, (got, want) in enumerate(zip(mine, theirs)):
        nones = [n for n, v in got.items() if v is None], [n for n, v in want.items() if v is None]
        if nones[0] != nones[1]:
            problems.append(f"rank {rank}, snapshot {k}: None for {nones[0]}, PyTorch's for {nones[1]}")
        problems += [f"rank {rank}, snapshot {k}: {n}: {got[n]} != {v}" for n, v in want.items()
                     if v is not None and got[n] is not None and not _close(got[n], v)]
    if len(mine) != len(theirs):
        problems.append(f"rank {rank}: {len(mine)} snapshots, PyTorch's {len(theirs)}")
    return problems


ALL = "abc"
CONFIGS = {  # name: (DDP's keyword arguments, the plan)
    "one bucket": ({}, [("sync", ALL, ALL), ("keep", ALL, ALL), ("sync", ALL, ALL)]),
    "several buckets": ({"bucket_cap_mb": 1e-4}, [("sync", ALL, ALL), ("keep", ALL, ALL), ("sync", ALL, ALL)]),
    "bucket view": ({"bucket_cap_mb": 1e-4, "gradient_as_bucket_view": True},
                    [("sync", ALL, ALL), ("keep", ALL, ALL), ("sync", ALL, ALL)]),
    "no_sync": ({"bucket_cap_mb": 1e-4},
                [("no_sync", ALL, ALL), ("sync", ALL, ALL), ("no_sync", ALL, ALL), ("no_sync", ALL, ALL),
                 ("sync", ALL, ALL)]),
    "static graph": ({"bucket_cap_mb": 1e-4, "static_graph": True},
                     [("sync", "ab", "ab"), ("sync", "ab", "ab"), ("keep", "ab", "ab"), ("sync", "ab", "ab")]),
    "unused": ({"bucket_cap_mb": 1e-4, "find_unused_parameters": True},
               [("sync", "ab", "ab"), ("sync", "a", "ab"), ("keep", "c", "a"), ("sync", "b", "b"),
                ("no_sync", "c", "a"), ("sync", "a", "a")]),
    "unused, bucket view": ({"find_unused_parameters": True, "gradient_as_bucket_view": True},
                            [("sync", "ab", "ab"), ("keep", "a", "ab"), ("sync", "ac", "a"), ("sync", "b", "b")]),
}


@pytest.mark.filterwarnings("ignore:find_unused_parameters=True was specified")
def test_each_configuration_steps_as_pytorchs_ddp(ranks):
    rank, _ = ranks
    problems = []
    for name, (kwargs, plan) in CONFIGS.items():
        torch_model, ember_model = _pair()
        theirs = _run(torch, TorchDDP(torch_model, **kwargs), torch_model, plan, rank)
        ddp = DDP(ember_model, **kwargs)
        mine = _run(ember, ddp, ember_model, plan, rank)
        problems += [f"{name}: {p}" for p in _differences(mine, theirs, rank, plan)[:3]]
        if (len(ddp.reducer.buckets) > 1) != ("bucket_cap_mb" in kwargs):
            problems.append(f"{name}: {len(ddp.reducer.buckets)} buckets")
    assert not problems, "\n".join(problems[:10])


def _recording_hook(m, calls: list, scale: float):
    """A communication hook that records its arguments (bucket index, whether last, the buffer it is given, its
    parameters' shapes) and returns the all-reduced sum times ``scale`` (the hook does its own averaging)."""
    import importlib

    dist = importlib.import_module(f"{m.__name__}.distributed")

    def hook(state, bucket):
        calls.append((bucket.index(), bucket.is_last(), bucket.buffer().detach().numpy().copy(),
                      sorted(tuple(p.shape) for p in bucket.parameters()), state))
        fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0] * scale)

    return hook


def test_a_communication_hooks_arguments_and_result_are_pytorchs(ranks):
    """One bucket (PyTorch's default cap): the hook is given the bucket's local gradients, not divided by the world
    size, index 0, is_last, every parameter and the state; its Future's value becomes the gradients. The buffer's
    values are compared as a sorted multiset (the two DDPs may lay the parameters out in other orders)."""
    rank, world = ranks
    plan = [("sync", ALL, ALL), ("keep", ALL, ALL), ("sync", ALL, ALL)]
    problems = []
    seen_calls = []
    for scale in (1.0, 0.25):
        runs = []
        for m, wrap, model in zip((torch, ember), (TorchDDP, DDP), _pair()):
            calls: list = []
            ddp = wrap(model)
            ddp.register_comm_hook("state", _recording_hook(m, calls, scale))
            runs.append((_run(m, ddp, model, plan, rank), calls))
        (theirs, their_calls), (mine, my_calls) = runs
        problems += [f"scale {scale}: {p}" for p in _differences(mine, theirs, rank, plan)[:3]]
        seen_calls.append(len(my_calls))
        if len(my_calls) != len(their_calls):
            problems.append(f"scale {scale}: the hook called {len(my_calls)} times, PyTorch's {len(their_calls)}")
        for k, (got, want) in enumerate(zip(my_calls, their_calls)):
            if got[:2] != want[:2] or got[3:] != want[3:]:
                problems.append(f"scale {scale}, call {k}: {got[:2]} {got[3:]} != PyTorch's {want[:2]} {want[3:]}")
            if not _close(np.sort(got[2]), np.sort(want[2])):
                problems.append(f"scale {scale}, call {k}: buffer {got[2]} != PyTorch's {want[2]}")
    assert seen_calls == [3, 3] and world == 2
    assert not problems, "\n".join(problems[:10])
