"""``ember.distributed.nn`` (autograd-aware collectives) next to PyTorch's ``torch.distributed.nn`` on the same
ranks (each rank also joins a PyTorch gloo process group): values and gradients of every function, and
all_gather's gradient against the single-process computation it stands for.
(Run on 2 and 3 ranks by tests/test_on_ranks.py.)"""

import warnings

import numpy as np
import pytest
import torch
import torch.distributed as tdist
import torch.distributed.nn as tnn
from rank_funcol_vs_torch import close, data

import ember
import ember.distributed.nn as enn
from ember.distributed import ReduceOp
from ember.distributed.nn import functional as enn_functional


def both(x):
    return ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


def quiet(fn, *args, **kwargs):
    """PyTorch's call, without its FutureWarning (deprecation notes pointing at _functional_collectives)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return fn(*args, **kwargs)


def weighted(outs, weights, lib):
    """A loss that differs per rank and per output, so each gradient carries where it came from."""
    outs = outs if isinstance(outs, tuple) else (outs,)
    return sum((o * lib.tensor(w)).sum() for o, w in zip(outs, weights))


def run(e_fn, t_fn, x, weights):
    """The same call on ember and PyTorch: (ember result, torch result, ember grad, torch grad)."""
    ex, tx = both(x)
    e_out, t_out = e_fn(ex), quiet(t_fn, tx)
    weighted(e_out, weights, ember).backward()
    weighted(t_out, weights, torch).backward()
    return e_out, t_out, ex.grad, tx.grad


def test_torch_distributed_nn_names():
    assert enn.all_gather is enn_functional.all_gather
    for name in ("all_reduce", "all_gather", "broadcast", "reduce", "reduce_scatter", "all_to_all",
                 "all_to_all_single", "gather", "scatter"):
        assert hasattr(enn, name) and hasattr(tnn, name), name


@pytest.mark.parametrize("op", ["SUM", "MAX"])
def test_all_reduce_values_and_gradients_match_pytorch(ranks, op):
    rank, n = ranks
    x = data(rank, (3, 4))
    e, t, eg, tg = run(lambda a: enn.all_reduce(a * 2, op=getattr(ReduceOp, op)),
                       lambda a: tnn.all_reduce(a * 2, op=getattr(tdist.ReduceOp, op)), x, [data(rank, (3, 4), 9)])
    close(e, t)
    close(eg, tg)  # the gradient all-reduced with the same op (PyTorch's rule)
    np.testing.assert_array_equal(x, data(rank, (3, 4)))


def test_all_gather_gradient_is_the_reduce_scatter_of_the_gradients(ranks):
    rank, n = ranks
    x = data(rank, (2, 3))
    weights = [data(rank, (2, 3), 10 * (j + 1)) for j in range(n)]
    e, t, eg, tg = run(enn.all_gather, tnn.all_gather, x, weights)
    assert isinstance(e, tuple) and len(e) == n
    for a, b in zip(e, t):
        close(a, b)
    close(eg, tg)
    # one process: the total loss is the sum of every rank's; rank k's input reaches slot k of every rank
    expected = sum(data(r, (2, 3), 10 * (rank + 1)) for r in range(n))
    np.testing.assert_allclose(eg.numpy(), expected, rtol=1e-12)
    for j in range(n):
        np.testing.assert_array_equal(e[j].detach().numpy(), data(j, (2, 3)))


def test_broadcast_and_reduce_values_and_gradients_match_pytorch(ranks):
    rank, n = ranks
    x, w = data(rank, (4,)), [data(rank, (4,), 5)]
    src = n - 1
    e, t, eg, tg = run(lambda a: enn.broadcast(a, src), lambda a: tnn.broadcast(a, src), x, w)
    close(e, t)
    close(eg, tg)
    expected = sum(data(r, (4,), 5) for r in range(n)) if rank == src else np.zeros(4)
    np.testing.assert_allclose(eg.numpy(), expected, rtol=1e-12)
    e, t, eg, tg = run(lambda a: enn.reduce(a, 0), lambda a: tnn.reduce(a, 0), x, w)
    if rank == 0:  # (the other ranks' results are unspecified)
        close(e, t)
    close(eg, tg)


def test_reduce_scatter_values_and_gradients_match_pytorch(ranks):
    rank, n = ranks
    xs = [data(rank, (2, 3), 3 * j) for j in range(n)]
    exs = [ember.tensor(x, requires_grad=True) for x in xs]
    txs = [torch.tensor(x, requires_grad=True) for x in xs]
    e = enn.reduce_scatter(ember.empty(2, 3, dtype=ember.float64), exs)
    t = quiet(tnn.reduce_scatter, torch.empty(2, 3, dtype=torch.float64), txs)
    close(e, t)
    weighted(e, [data(rank, (2, 3), 4)], ember).backward()
    weighted(t, [data(rank, (2, 3), 4)], torch).backward()
    for a, b in zip(exs, txs):
        close(a.grad, b.grad)


def test_gather_and_scatter_values_and_gradients_match_pytorch(ranks):
    rank, n = ranks
    x = data(rank, (3,))
    weights = [data(rank, (3,), 6 + j) for j in range(n)]
    e, t, eg, tg = run(lambda a: enn.gather(a, 1), lambda a: tnn.gather(a, 1), x, weights)
    for a, b in zip(e, t):
        close(a, b)
    close(eg, tg)
    xs = [data(rank, (3,), 20 + j) for j in range(n)]
    exs = [ember.tensor(v, requires_grad=True) for v in xs]
    txs = [torch.tensor(v, requires_grad=True) for v in xs]
    e, t = enn.scatter(exs, src=0), tnn.scatter(txs, src=0)
    close(e, t)
    weighted(e, [data(rank, (3,), 2)], ember).backward()
    weighted(t, [data(rank, (3,), 2)], torch).backward()
    for a, b in zip(exs, txs):
        close(a.grad, b.grad)


def test_all_to_all_values_and_gradients_match_pytorch(ranks):
    rank, n = ranks
    sizes = [1 + (rank + j) % 2 for j in range(n)]       # rank r sends sizes[j] rows to rank j
    back = [1 + (j + rank) % 2 for j in range(n)]        # and receives back[j] rows from rank j
    xs = [data(rank, (2, 3), 30 + j) for j in range(n)]  # (the list form: blocks of one shape)
    exs = [ember.tensor(v, requires_grad=True) for v in xs]
    txs = [torch.tensor(v, requires_grad=True) for v in xs]
    e = enn.all_to_all([ember.empty(2, 3, dtype=ember.float64) for _ in range(n)], exs)
    t = tnn.all_to_all([torch.empty(2, 3, dtype=torch.float64) for _ in range(n)], txs)
    for j, (a, b) in enumerate(zip(e, t)):
        close(a, b)
        np.testing.assert_array_equal(a.detach().numpy(), data(j, (2, 3), 30 + rank))
    ws = [data(rank, (2, 3), 40 + j) for j in range(n)]
    weighted(e, ws, ember).backward()
    weighted(t, ws, torch).backward()
    for a, b in zip(exs, txs):
        close(a.grad, b.grad)
    x = data(rank, (sum(sizes), 2), 50)
    e, t, eg, tg = run(lambda a: enn.all_to_all_single(ember.empty(sum(back), 2, dtype=ember.float64), a, back,
                                                       sizes),
                       lambda a: tnn.all_to_all_single(torch.empty(sum(back), 2, dtype=torch.float64), a, back,
                                                       sizes),
                       x, [data(rank, (sum(back), 2), 60)])
    close(e, t)
    close(eg, tg)


def test_all_to_all_of_tensors_of_different_shapes(ranks):
    """PyTorch's all_to_all takes tensors of different sizes (on its MPI and NCCL backends; gloo's scatter-based
    one refuses them, so the expected values are written out): rank r sends (r + j + 1) % 3 rows to rank j, an
    empty block among them; the values, and the gradients travelling back (each input's: the weights its
    receiver applied)."""
    rank, n = ranks
    rows = [[(r + j + 1) % 3 for j in range(n)] for r in range(n)]  # rows[r][j]: rank r to rank j
    exs = [ember.tensor(data(rank, (rows[rank][j], 2), 70 + j), requires_grad=True) for j in range(n)]
    e = enn.all_to_all([ember.empty(rows[j][rank], 2, dtype=ember.float64) for j in range(n)], exs)
    for j, a in enumerate(e):
        np.testing.assert_array_equal(a.detach().numpy(), data(j, (rows[j][rank], 2), 70 + rank))
    weighted(e, [data(rank, (rows[j][rank], 2), 80 + j) for j in range(n)], ember).backward()
    for j, a in enumerate(exs):
        np.testing.assert_array_equal(a.grad.numpy(), data(j, (rows[rank][j], 2), 80 + rank))


def test_second_derivative_goes_through_the_adjoint_collective(ranks):
    rank, n = ranks
    x = data(rank, (3,))
    ex, tx = both(x)
    e_out, t_out = enn.all_reduce(ex ** 2), quiet(tnn.all_reduce, tx ** 2)
    (eg,) = ember.autograd.grad((e_out * ember.tensor(x)).sum(), ex, create_graph=True)
    (tg,) = torch.autograd.grad((t_out * torch.tensor(x)).sum(), tx, create_graph=True)
    close(eg, tg)
    (egg,) = ember.autograd.grad(eg.sum(), ex)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    close(egg, tgg)
    e_out, t_out = enn.broadcast(ex ** 3, 1), quiet(tnn.broadcast, tx ** 3, 1)   # backward: reduce, zeroed off src
    (eg,) = ember.autograd.grad((e_out * e_out).sum(), ex, create_graph=True)
    (tg,) = torch.autograd.grad((t_out * t_out).sum(), tx, create_graph=True)
    close(eg, tg)
    (egg,) = ember.autograd.grad(eg.sum(), ex)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    close(egg, tgg)
