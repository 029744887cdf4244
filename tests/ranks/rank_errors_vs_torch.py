"""The errors of misused collectives next to PyTorch's gloo on the same ranks (each rank also joins a PyTorch gloo
group): the same exception type, and the words of PyTorch's message in ember's. A root that is no rank of the
group, an output of the wrong size or dtype, a message to this rank itself. ``ReduceOp.AVG`` of integers (gloo
averages in floating point and cannot write the mean back: no truncated mean) is checked against PyTorch's words
without calling gloo: its error comes on some ranks only, when the work completes or at a later collective, while
ember raises it on every rank at the call.
(Run on 2 and 3 ranks by tests/test_on_ranks.py.)"""

import re
import warnings

import pytest
import torch
import torch.distributed as tdist
from rank_plugin import join_torch_gloo

import ember


def cases(world, rank):
    """(name, call(m, dist): the same misuse in PyTorch's (m=torch) and ember's (m=ember) API, and a pattern that
    picks the words both messages must hold out of PyTorch's)."""
    w = world
    gloo = r"ProcessGroupGloo::\w+: invalid (?:tensor \w+|root rank)"
    return [
        ("all_gather_into_tensor size", lambda m, d: d.all_gather_into_tensor(m.empty(w * 2 + 1), m.ones(2)), gloo),
        ("all_gather_into_tensor 2-d size", lambda m, d: d.all_gather_into_tensor(m.empty(w, 3), m.ones(2)), gloo),
        ("all_gather_into_tensor dtype",
         lambda m, d: d.all_gather_into_tensor(m.empty(w * 2, dtype=m.float64), m.ones(2)), gloo),
        ("broadcast src=world", lambda m, d: d.broadcast(m.ones(2), src=w), gloo + r": \d+"),
        ("broadcast src=-1", lambda m, d: d.broadcast(m.ones(2), src=-1), gloo + r": -1"),
        ("broadcast group_src=world", lambda m, d: d.broadcast(m.ones(2), group_src=w), gloo + r": \d+"),
        ("reduce dst=world", lambda m, d: d.reduce(m.ones(2), dst=w), gloo + r": \d+"),
        ("scatter src=world", lambda m, d: d.scatter(m.empty(2), None, src=w), gloo + r": \d+"),
        ("gather dst=world", lambda m, d: d.gather(m.ones(2), None, dst=w), gloo + r": \d+"),
        ("reduce_scatter_tensor input size",
         lambda m, d: d.reduce_scatter_tensor(m.empty(2), m.ones(w * 2 + 1)), r"Check failed: .*\(\d+ vs\. \d+\)"),
        ("reduce_scatter_tensor output size",
         lambda m, d: d.reduce_scatter_tensor(m.empty(3), m.ones(w * 2)), r"Check failed: .*\(\d+ vs\. \d+\)"),
        ("send to itself", lambda m, d: d.send(m.ones(2), dst=rank), r"Invalid destination rank: [^.]+\."),
    ]


def error_of(call, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # (ember's deprecation of all_gather_into_tensor)
            call(*args)
    except Exception as err:  # noqa: BLE001  (the type is what is compared)
        return err
    return None


@pytest.fixture(scope="module")
def torch_gloo(process_group):
    join_torch_gloo(process_group)
    yield
    tdist.destroy_process_group()


def test_misused_collectives_raise_pytorchs_errors(rank, world, process_group, torch_gloo):
    problems = []
    for name, call, words in cases(world, rank):
        theirs = error_of(call, torch, tdist)
        ours = error_of(call, ember, process_group)
        tdist.barrier()
        process_group.barrier()
        if theirs is None:
            problems.append(f"{name}: PyTorch raised nothing")
            continue
        if type(ours) is not type(theirs):
            problems.append(f"{name}: ember raised {ours!r}, PyTorch {type(theirs).__name__}: {theirs}")
            continue
        found = re.search(words, str(theirs).splitlines()[0])
        if found is None or found.group(0) not in str(ours):
            problems.append(f"{name}: PyTorch's words {found and found.group(0)!r} are not in ember's {ours}")
    # after the errors, both still reduce
    t = ember.ones(2)
    process_group.all_reduce(t, op=ember.distributed.ReduceOp.AVG)
    assert t.tolist() == [1.0, 1.0]
    assert not problems, "\n".join(problems)


def test_integer_averages_raise_pytorchs_error(rank, world, process_group):
    """``ReduceOp.AVG`` of integers or bools: PyTorch's gloo averages in floating point and raises "result type Float
    can't be cast to the desired output type Long" when the work completes on some ranks and at a later collective
    on others (under load its error surfaced in the next barrier), so it is not called beside ember here: ember
    raises the same words on every rank at the call, and the group still reduces after."""
    for dtype, name in ((ember.int64, "Long"), (ember.int32, "Int"), (ember.bool, "Bool")):
        with pytest.raises(RuntimeError, match=f"result type Float can't be cast to the desired output type {name}"):
            process_group.all_reduce(ember.ones(2, dtype=dtype), op=process_group.ReduceOp.AVG, async_op=True).wait()
    t = ember.ones(2)
    process_group.all_reduce(t, op=ember.distributed.ReduceOp.AVG)
    assert t.tolist() == [1.0, 1.0]
