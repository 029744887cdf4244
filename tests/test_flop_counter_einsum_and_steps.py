"""``FlopCounterMode`` counts ``einsum`` as PyTorch's: its pairwise contractions' ``aten.bmm`` (left to right, a
letter summed away by the bmm where both operands hold it), forward and backward; and a counter held open over
many training steps holds no step's graph (the per-call gradient hooks are not kept until exit)."""
import gc
import weakref

import pytest
import torch
import torch.utils.flop_counter

import ember
import ember.utils.flop_counter

EQUATIONS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("ij->", [(3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ijk,jl->il", [(2, 3, 4), (3, 5)]), ("ij,kj->ik", [(1, 4), (5, 4)]), ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("ii,ij->j", [(3, 3), (3, 4)]), ("ij,jk->", [(3, 4), (4, 5)]), ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
]


def einsum_counts(lib, mode_cls, equation, shapes, grads):
    operands = [lib.ones(*shape, requires_grad=wants) for shape, wants in zip(shapes, grads)]
    with mode_cls(display=False) as forward:
        out = lib.einsum(equation, *operands)
    with mode_cls(display=False) as backward:
        if out.requires_grad:
            out.sum().backward()
    return [{str(op): n for op, n in c.get_flop_counts().get("Global", {}).items()} for c in (forward, backward)]


@pytest.mark.parametrize("equation, shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_counts_pytorchs_bmm(equation, shapes):
    for grads in ([True] * len(shapes), [False] * (len(shapes) - 1) + [True], [True] + [False] * (len(shapes) - 1)):
        want = einsum_counts(torch, torch.utils.flop_counter.FlopCounterMode, equation, shapes, grads)
        got = einsum_counts(ember, ember.utils.flop_counter.FlopCounterMode, equation, shapes, grads)
        assert got == want, grads


def test_a_counter_open_over_many_steps_holds_no_steps_graph():
    model = ember.nn.Sequential(ember.nn.Linear(4, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    graphs = []
    with ember.utils.flop_counter.FlopCounterMode(display=False) as counter:
        for _ in range(4):
            out = model(ember.randn(3, 4, requires_grad=True))
            graphs.append(weakref.ref(out.grad_fn))
            out.sum().backward()
            del out
        gc.collect()
        assert [g() for g in graphs] == [None] * 4
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    with torch.utils.flop_counter.FlopCounterMode(display=False) as want:
        for _ in range(4):
            tmodel(torch.randn(3, 4, requires_grad=True)).sum().backward()
    assert counter.get_flop_counts() == {m: {str(op): n for op, n in ops.items()}
                                         for m, ops in want.get_flop_counts().items()}
