"""DistributedDataParallel next to PyTorch's on the same ranks (each rank also joins a PyTorch gloo group), with
``find_unused_parameters=True``: parameters used on every rank, on some, on none; gradients held across
``zero_grad(set_to_none=False)``, added to by hand on one rank, assigned by hand (not in the gradient store: a
staging copy, or the bucket view adopting them), None; one bucket and several. After every backward each rank's
gradients (None or values) and, after each SGD-with-momentum step, its parameters equal PyTorch's.
(Run on 2 ranks by tests/test_reducer_on_ranks.py.)"""

import warnings

import numpy as np
import pytest
import torch
from torch.nn.parallel import DistributedDataParallel as TorchDDP

import ember
from ember.nn.parallel import DistributedDataParallel as DDP


def heads(m):
    """A trunk and three heads; a forward goes through the heads it is given (the others get no gradient)."""

    class Heads(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = m.nn.Linear(3, 4)
            self.a, self.b, self.c = m.nn.Linear(4, 2), m.nn.Linear(4, 2), m.nn.Linear(4, 2)

        def forward(self, x, use):
            h = self.trunk(x).tanh()
            return sum((getattr(self, k)(h) for k in use), m.zeros(x.shape[0], 2, dtype=x.dtype))

    return Heads().double()


# each step: what is done to the gradients before it (on rank 0, on the others), the heads used (likewise)
STEPS = [
    ((None, None), ("ab", "ab")),
    (("zero_grad(set_to_none=False)",) * 2, ("a", "ab")),  # b used on some ranks: rank 0 gives its zeros
    (("add to b's grad", None), ("a", "a")),  # b and c used by no rank: each keeps its own (c: None)
    (("zero_grad()",) * 2, ("ac", "a")),  # c used on rank 0 only: the others' None becomes the mean
    (("assign a's and c's grads",) * 2, ("b", "b")),  # assigned, then unused everywhere: each keeps its own
    (("zero_grad()", "zero_grad(), assign b's grad"), ("abc", "b")),  # a, c staged with no .grad on rank 1
    ((None, None), ("c", "a")),  # accumulated over the step before
]


def _prepare(m, model, what, rank):
    if what is None:
        return
    if what.startswith("zero_grad(set_to_none=False)"):
        model.zero_grad(set_to_none=False)
    elif what.startswith("zero_grad()"):
        model.zero_grad()
    if what == "add to b's grad":
        with m.no_grad():
            model.b.weight.grad.add_(3.0)
    elif what == "assign a's and c's grads":
        model.a.weight.grad = m.full((2, 4), 2.0 + rank, dtype=m.float64)
        model.c.bias.grad = m.full((2,), -1.0 - rank, dtype=m.float64)
    elif what.endswith("assign b's grad"):
        model.b.weight.grad = m.full((2, 4), 0.5, dtype=m.float64)


def _close(got, want):
    """Equal to float64 rounding: an element may differ by rounding at the scale of the largest one (a sum's
    error grows with its largest term, so a small element of a large gradient can differ relatively more)."""
    return np.allclose(got, want, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(want).max(initial=0.0))))


def _run(m, ddp, model, optimizer, rank):
    seen = []
    for step, (prepare, use) in enumerate(STEPS):
        _prepare(m, model, prepare[min(rank, 1)], rank)
        x = m.tensor(np.random.default_rng(10 * step + rank).standard_normal((5, 3)))
        ddp(x, use[min(rank, 1)]).pow(2).sum().backward()
        seen.append({n: None if p.grad is None else p.grad.detach().numpy().copy()
                     for n, p in model.named_parameters()})
        optimizer.step()
        seen.append({n: p.detach().numpy().copy() for n, p in model.named_parameters()})
    return seen


@pytest.mark.filterwarnings("ignore:find_unused_parameters=True was specified")
@pytest.mark.parametrize("as_view", [False, True])
@pytest.mark.parametrize("cap_mb", [25.0, 1e-4])  # one bucket; four
def test_parameters_used_on_some_ranks_or_none_step_as_pytorchs_ddp(ranks, as_view, cap_mb):
    rank, _ = ranks
    torch.manual_seed(0)  # the same weights on every run (unseeded, some draws grew gradients to ~1e3)
    torch_model, ember_model = heads(torch), heads(ember)
    ember_model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()})
    kwargs = dict(find_unused_parameters=True, gradient_as_bucket_view=as_view, bucket_cap_mb=cap_mb)
    theirs = _run(torch, TorchDDP(torch_model, **kwargs), torch_model,
                  torch.optim.SGD(torch_model.parameters(), lr=0.1, momentum=0.9), rank)
    ddp = DDP(ember_model, **kwargs)
    mine = _run(ember, ddp, ember_model, ember.optim.SGD(ember_model.parameters(), lr=0.1, momentum=0.9), rank)
    problems = []
    for k, (got, want) in enumerate(zip(mine, theirs)):
        where = f"rank {rank}, step {k // 2} {STEPS[k // 2]}, {'gradients' if k % 2 == 0 else 'parameters'}"
        nones = [n for n, v in got.items() if v is None], [n for n, v in want.items() if v is None]
        if nones[0] != nones[1]:
            problems.append(f"{where}: None for {nones[0]}, PyTorch's for {nones[1]}")
        problems += [f"{where}: {n}: {got[n]} != {v}" for n, v in want.items()
                     if v is not None and got[n] is not None and not _close(got[n], v)]
    assert (len(ddp.reducer.buckets) == 1) == (cap_mb == 25.0)
    assert not problems, "\n".join(problems[:5])


def mixed(m):
    """A float64 trunk and a float32 head (a gradient store, and buckets, of its own)."""

    class Mixed(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = m.nn.Linear(3, 4).double()
            self.head = m.nn.Linear(4, 2)

        def forward(self, x, use_head):
            h = self.trunk(x).tanh()
            return h.sum() + (self.head(h.float()).double().pow(2).sum() if use_head else 0)

    return Mixed()


@pytest.mark.filterwarnings("ignore:find_unused_parameters=True was specified")
@pytest.mark.parametrize("as_view", [False, True])
def test_a_store_no_gradient_reached_yet_on_this_rank_takes_the_others_mean(ranks, as_view):
    """The first backward on rank 1 reaches none of the float32 head's parameters, which rank 0 uses: rank 1's
    head gets the mean of the ranks' gradients (its own counted as zeros) as its first .grad, as PyTorch's."""
    rank, _ = ranks
    uses = [(True, False), (True, True), (False, True)]  # per step: (rank 0, rank 1)
    torch.manual_seed(0)  # (the same weights on every run: a float32 head's rounding then gives one verdict)
    torch_model, ember_model = mixed(torch), mixed(ember)
    ember_model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()})
    results = []
    for m, wrap, model in ((torch, TorchDDP, torch_model), (ember, DDP, ember_model)):
        ddp = wrap(model, find_unused_parameters=True, gradient_as_bucket_view=as_view)
        optimizer = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        seen = []
        for step, use in enumerate(uses):
            optimizer.zero_grad()
            x = m.tensor(np.random.default_rng(10 * step + rank).standard_normal((5, 3)))
            ddp(x, use[min(rank, 1)]).backward()
            seen.append([None if p.grad is None else p.grad.detach().numpy().copy() for p in model.parameters()])
            optimizer.step()
            seen.append([p.detach().numpy().copy() for p in model.parameters()])
        results.append(seen)
    theirs, mine = results
    problems = [f"rank {rank}, {k}, parameter {j}: {g} != {w}" for k, (got, want) in enumerate(zip(mine, theirs))
                for j, (g, w) in enumerate(zip(got, want))
                if (g is None) != (w is None) or (w is not None and not np.allclose(g, w, rtol=1e-6, atol=1e-7))]
    assert not problems, "\n".join(problems[:5])


def with_batchnorm(m):
    return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.Linear(4, 1)).double()


def test_buffers_follow_rank_0_where_pytorchs_ddp_copies_them(ranks):
    """Gradient accumulation (no_sync() then a synchronised forward, twice), an evaluation under no_grad(), and two
    synchronised steps: after every grad-mode forward each rank's BatchNorm statistics equal PyTorch's DDP's, which
    copies rank 0's at the first forward and at each one after a synchronised forward (with accumulation: the first
    no_sync() forward of each cycle)."""
    rank, _ = ranks
    torch.manual_seed(0)
    torch_model, ember_model = with_batchnorm(torch), with_batchnorm(ember)
    ember_model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()})
    plan = ["no_sync", "sync", "no_sync", "sync", "eval", "sync", "sync"]
    results = []
    for m, wrap, model in ((torch, TorchDDP, torch_model), (ember, DDP, ember_model)):
        ddp = wrap(model)
        optimizer = m.optim.SGD(model.parameters(), lr=0.1)
        seen = []
        for step, kind in enumerate(plan):
            x = m.tensor(np.random.default_rng(10 * step + rank).standard_normal((6, 3)))
            if kind == "eval":
                model.eval()
                with m.no_grad():
                    ddp(x)
                model.train()
                continue
            if kind == "no_sync":
                with ddp.no_sync():
                    ddp(x).pow(2).sum().backward()
            else:
                ddp(x).pow(2).sum().backward()
                optimizer.step()
                optimizer.zero_grad()
            seen.append((step, model[1].running_mean.detach().numpy().copy(),
                         model[1].running_var.detach().numpy().copy()))
        results.append(seen)
    theirs, mine = results
    problems = [f"rank {rank}, after step {step} ({plan[step]}): running stats {gm} {gv} != PyTorch's {wm} {wv}"
                for (step, gm, gv), (_, wm, wv) in zip(mine, theirs) if not (_close(gm, wm) and _close(gv, wv))]
    assert not problems, "\n".join(problems[:5])


def test_join_of_a_model_and_a_zero_optimizer_with_uneven_inputs_as_pytorchs(ranks):
    """PyTorch's Join tutorial: ``Join([model, ZeroRedundancyOptimizer])``, rank 0 with fewer batches. The rank that
    ran out takes part in the others' rounds (zero gradients, and a ZeRO step of its shard with the gradients it
    holds, which it broadcasts), and every rank leaves with the last joiner's parameters: PyTorch's, on every rank.
    With the training-loop warnings on: that step reapplies gradients by design, so no warning says otherwise."""
    from torch.distributed.algorithms.join import Join as TorchJoin
    from torch.distributed.optim import ZeroRedundancyOptimizer as TorchZeRO

    from ember.distributed.algorithms import Join
    from ember.distributed.optim import ZeroRedundancyOptimizer

    rank, _ = ranks
    torch.manual_seed(0)
    torch_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    ember_model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2)).double()
    ember_model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()})
    results = []
    ember.diagnostics.enable()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for m, wrap, zero, join, model in ((torch, TorchDDP, TorchZeRO, TorchJoin, torch_model),
                                               (ember, DDP, ZeroRedundancyOptimizer, Join, ember_model)):
                ddp = wrap(model)
                optimizer = zero(model.parameters(), m.optim.Adam, lr=0.05)
                with join([ddp, optimizer]):
                    for step in range(2 + 2 * rank):
                        optimizer.zero_grad()
                        x = m.tensor(np.random.default_rng(10 * step + rank).standard_normal((5, 3)))
                        ddp(x).pow(2).sum().backward()
                        optimizer.step()
                results.append([p.detach().numpy().copy() for p in model.parameters()])
    finally:
        ember.diagnostics.set_warnings(False)
    assert not [str(w.message) for w in caught if w.category is ember.diagnostics.TrainingLoopWarning]
    theirs, mine = results
    problems = [f"rank {rank}, parameter {j}: {g} != {w}" for j, (g, w) in enumerate(zip(mine, theirs))
                if not _close(g, w)]
    assert not problems, "\n".join(problems[:5])
