"""ember.futures.Future against torch.futures.Future on the cases programs use."""

import pytest
import torch

import ember


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_then_chain_set_result_and_done_callbacks(lib):
    fut = lib.futures.Future()
    seen = []
    fut.add_done_callback(lambda f: seen.append(("done", f.value())))
    chained = fut.then(lambda f: f.value() * 2).then(lambda f: f.value() + 1)
    assert not fut.done()
    fut.set_result(5)
    assert fut.done() and fut.wait() == 5 and fut.value() == 5
    assert chained.wait() == 11
    assert seen == [("done", 5)]
    later = []
    fut.add_done_callback(lambda f: later.append(f.value()))  # already complete: runs at once
    assert later == [5]
    with pytest.raises(RuntimeError):
        fut.set_result(6)


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_a_failing_callback_raises_where_waited(lib):
    fut = lib.futures.Future()
    bad = fut.then(lambda f: 1 / 0)
    fut.set_result(1)
    with pytest.raises(RuntimeError, match="division by zero"):
        bad.wait()


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_collect_all_and_wait_all(lib):
    futs = [lib.futures.Future() for _ in range(3)]
    for i, f in enumerate(futs):
        f.set_result(i * 10)
    assert lib.futures.wait_all(futs) == [0, 10, 20]
    assert [f.value() for f in lib.futures.collect_all(futs).wait()] == [0, 10, 20]


def test_wait_on_a_future_nothing_completes_says_so():
    with pytest.raises(RuntimeError, match="nothing will complete this future"):
        ember.futures.Future().wait()
