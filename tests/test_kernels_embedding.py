"""The embedding and sparse-gradient kernels (ember/_kernels/embedding.py): the dense gradient of a lookup, the
coalescing of a sparse gradient, SGD's and SparseAdam's row updates. Each gives the NumPy reference's bits (the
same additions in the same order) at any thread count, and the optimizers' steps match PyTorch's."""

import numpy as np
import pytest
import torch
from test_kernels import assert_same_bits, both_ways, compiled_only

import ember
from ember._kernels import policy
from ember._sparse import SparseCOO, segment_sum

THREADS = (1, 2, 3)


def _at_every_thread_count(run):
    """run() at 1, 2 and 3 threads, each under the compiled and the NumPy kernels: all the same bits."""
    results = []
    for n in THREADS:
        ember.set_num_threads(n)
        fast, ref = both_ways(run)
        assert_same_bits(fast, ref)
        results.append(fast)
    for other in results[1:]:
        assert_same_bits(other, results[0])
    return results[0]


def _lookups(lookups: int, vocab: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, vocab, (lookups // 8, 8))


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("padding_idx, in_store", [(None, False), (3, True), (None, True)])
def test_dense_embedding_grad_same_bits_at_every_thread_count(dtype, padding_idx, in_store, threads):
    """3000 rows of width 48 (144 Ki elements: split among threads by table rows), 4000 lookups with repeats
    (192 Ki elements looked up: split by lookups); the gradient built in the optimizer's gradient store (a slot
    holding the last step's values) or in a new array."""
    idx = _lookups(4000, 3000)
    idx[0, :4] = 7  # one row looked up four times in a row
    rng = np.random.default_rng(2)
    grads = [rng.standard_normal((*idx.shape, 48)).astype(dtype) for _ in range(2)]
    grads[0][0, 0, 0] = -0.0

    def run():
        w = ember.zeros(3000, 48, dtype=getattr(ember, np.dtype(dtype).name), requires_grad=True)
        opt = ember.optim.SGD([w], lr=0.1) if in_store else None
        out = []
        for g in grads:  # the second step refills the slot the first one wrote
            if opt is not None:
                opt.zero_grad()
            else:
                w.grad = None
            looked_up = ember.nn.functional.embedding(ember.tensor(idx), w, padding_idx=padding_idx)
            looked_up.backward(ember.tensor(g))
            out += [w.grad.numpy().copy(), looked_up.detach().numpy()]
            with ember.no_grad():
                w += 1
        return out

    assert min(3000, idx.size) * 48 >= 3 * policy.min_parallel_elements // 2  # the gather and gradient are split
    first, _, second, looked_up = _at_every_thread_count(run)
    np.testing.assert_array_equal(looked_up, np.ones((3000, 48), dtype)[idx])
    for got, g in zip((first, second), grads):
        expected = np.zeros((3000, 48), dtype)
        np.add.at(expected, idx.reshape(-1), g.reshape(-1, 48))
        if padding_idx is not None:
            expected[padding_idx] = 0
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@compiled_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lookups, vocab, width", [(4000, 3000, 5), (64, 3, 4), (2, 2, 1), (9, 1000, 3)])
def test_coalesce_same_bits_as_segment_sums(dtype, lookups, vocab, width):
    """Distinct indices ascending, each row's entries summed in lookup order; a lone -0.0 keeps its sign."""
    idx = _lookups(max(lookups, 8), vocab).reshape(-1)[:lookups]
    values = np.random.default_rng(3).standard_normal((idx.size, width)).astype(dtype)
    values[-1] = -0.0
    coo = SparseCOO(idx[None, :], values, (vocab, width))
    fast, ref = both_ways(lambda: (lambda c: (c.indices, c.values))(coo.coalesce()))
    rows, sums = segment_sum(idx, values)
    assert_same_bits(ref, (rows[None, :], sums))
    if 2 * rows.size <= idx.size and rows.size * idx.size <= 1 << 20:  # the reference's one-hot GEMM: to rounding
        np.testing.assert_array_equal(fast[0], ref[0])
        np.testing.assert_allclose(fast[1], ref[1], rtol=1e-6, atol=1e-6)
    else:
        assert_same_bits(fast, ref)
    assert fast[0].dtype == np.int64 and np.all(np.diff(fast[0][0]) > 0)


def _sparse_steps(name: str, kwargs: dict, dtype=np.float32, steps: int = 3):
    """``steps`` steps of optimizer ``name`` on an Embedding(3000, 48, sparse=True) looked up 4000 times a step:
    the table after each step, and the optimizer's state tensors."""
    rng = np.random.default_rng(4)
    weight = rng.standard_normal((3000, 48)).astype(dtype)
    batches = [(_lookups(4000, 3000, seed=s), rng.standard_normal((500, 8, 48)).astype(dtype))
               for s in range(steps)]

    def run():
        emb = ember.nn.Embedding(3000, 48, sparse=True, dtype=getattr(ember, np.dtype(dtype).name))
        with ember.no_grad():
            emb.weight.copy_(ember.tensor(weight))
        opt = getattr(ember.optim, name)(emb.parameters(), **kwargs)
        out = []
        for idx, g in batches:
            opt.zero_grad()
            emb(ember.tensor(idx)).backward(ember.tensor(g))
            opt.step()
            out.append(emb.weight.detach().numpy().copy())
        state = opt.state[emb.weight]
        out += [t.to_dense().numpy() if t.is_sparse else t.numpy() for t in state.values()
                if isinstance(t, ember.Tensor)]
        return out

    return run, weight, batches


@compiled_only
@pytest.mark.parametrize("name, kwargs", [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2)),
    ("SGD", dict(lr=0.05, momentum=0.5, nesterov=True, maximize=True)),
    ("SparseAdam", dict(lr=0.01)), ("SparseAdam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, maximize=True))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sparse_updates_same_bits_at_every_thread_count(name, kwargs, dtype, threads):
    run, weight, batches = _sparse_steps(name, kwargs, dtype)
    distinct = min(np.unique(idx).size for idx, _ in batches)
    assert distinct * weight.shape[1] >= 3 * policy.min_parallel_elements // 2  # the row updates are split
    _at_every_thread_count(run)


@pytest.mark.parametrize("name, kwargs", [("SGD", dict(lr=0.1)), ("SparseAdam", dict(lr=0.01))])
def test_sparse_updates_of_a_large_table_match_torch(name, kwargs, threads):
    """The threaded row updates (the default kernels, 3 threads) against PyTorch's steps."""
    ember.set_num_threads(3)
    run, weight, batches = _sparse_steps(name, kwargs)
    got = run()
    emb = torch.nn.Embedding(3000, 48, sparse=True, _weight=torch.tensor(weight))
    opt = getattr(torch.optim, name)(emb.parameters(), **kwargs)
    for k, (idx, g) in enumerate(batches):
        opt.zero_grad()
        emb(torch.tensor(idx)).backward(torch.tensor(g))
        opt.step()
        np.testing.assert_allclose(got[k], emb.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_coalesce_table_ratio_picks_the_path():
    """A table much larger than the gradient is sorted (the reference), else marked: the same result."""
    idx = np.array([9000, 3, 9000, 3, 5])
    values = np.arange(10, dtype=np.float32).reshape(5, 2)
    sorted_ = SparseCOO(idx[None, :], values, (10000, 2)).coalesce()  # 10000 rows > 64 per entry
    with policy.override(coalesce_table_ratio=2000):
        marked = SparseCOO(idx[None, :], values, (10000, 2)).coalesce()
    assert_same_bits((sorted_.indices, sorted_.values), (marked.indices, marked.values))
    np.testing.assert_array_equal(marked.indices, [[3, 5, 9000]])
    np.testing.assert_array_equal(marked.values, [[8, 10], [8, 9], [4, 6]])
