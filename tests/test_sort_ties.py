"""The order of equal values in sort/argsort against PyTorch's CPU sort without ``stable=True`` (libstdc++'s
introsort over (value, index) pairs): the stable order up to 16 elements per slice, std::sort's beyond."""

import numpy as np
import pytest
import torch

import ember
from ember._kernels.policy import policy


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("n", [2, 5, 9, 16])
def test_ties_up_to_16_elements_are_ordered_as_pytorchs_default_sort(n, descending):
    values = torch.randint(0, 3, (4, n), generator=torch.Generator().manual_seed(n)).float()
    want = torch.sort(values, descending=descending).indices
    got = ember.sort(ember.tensor(values.numpy()), descending=descending).indices
    assert got.tolist() == want.tolist()
    assert ember.argsort(ember.tensor(values.numpy()), descending=descending).tolist() == want.tolist()


def test_past_16_elements_ties_are_ordered_as_pytorchs_default_sort():
    """PyTorch's order of ties past 16 elements is not the stable one; ember's is PyTorch's (failed before: ember
    gave the stable order)."""
    lengths = torch.tensor([5, 3, 5, 2, 5, 3, 1, 5, 3, 5, 2, 4, 5, 3, 5, 2, 5, 1])
    unstable = torch.sort(lengths, descending=True).indices.tolist()
    assert unstable != torch.sort(lengths, descending=True, stable=True).indices.tolist()
    got = ember.sort(ember.tensor(lengths.numpy()), descending=True)
    assert got.indices.tolist() == unstable
    assert ember.sort(ember.tensor(lengths.numpy()), descending=True, stable=True).indices.tolist() == \
        torch.sort(lengths, descending=True, stable=True).indices.tolist()


DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape,dim", [((17,), 0), ((3, 40), -1), ((40, 3), 0), ((2, 300, 2), 1), ((1000,), 0)])
def test_ties_in_long_rows_follow_pytorchs_std_sort(dtype, descending, shape, dim):
    rng = np.random.default_rng(sum(shape) + descending)
    a = rng.integers(0, 4, shape).astype(dtype)
    want = torch.sort(torch.from_numpy(a), dim=dim, descending=descending)
    got = ember.sort(ember.tensor(a), dim=dim, descending=descending)
    assert got.indices.tolist() == want.indices.tolist()
    assert got.values.tolist() == want.values.tolist()
    assert ember.argsort(ember.tensor(a), dim=dim, descending=descending).tolist() == \
        torch.argsort(torch.from_numpy(a), dim=dim, descending=descending).tolist()
    for stable in (None, False):  # (PyTorch's sort.stable overload with stable None or False: std::sort too)
        assert ember.sort(ember.tensor(a), stable=stable, dim=dim, descending=descending).indices.tolist() == \
            torch.sort(torch.from_numpy(a), stable=stable, dim=dim, descending=descending).indices.tolist()


@pytest.mark.parametrize("descending", [False, True])
def test_nan_ties_and_signed_zeros_follow_pytorchs_std_sort(descending):
    a = np.array([0.0, -0.0, np.nan, 1.0, np.nan, 0.0, 1.0, -0.0, np.nan, 2.0] * 4, dtype=np.float32)
    want = torch.sort(torch.from_numpy(a), descending=descending).indices.tolist()
    assert ember.sort(ember.tensor(a), descending=descending).indices.tolist() == want
    assert ember.Tensor.argsort(ember.tensor(a), descending=descending).tolist() == want


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("n", [32767, 32768])
def test_large_1d_integer_rows_take_pytorchs_stable_radix_sort(dtype, n):
    """From 32768 elements a 1-D integer tensor sorted ascending is sorted stably by PyTorch (bool is not)."""
    a = np.random.default_rng(n).integers(0, 3, n).astype(dtype)
    want = torch.argsort(torch.from_numpy(a)).tolist()
    assert ember.argsort(ember.tensor(a)).tolist() == want


def test_expanded_rows_keep_their_order_as_pytorchs():
    """A sorted dimension of stride 0 (all equal) gives 0, 1, 2, ... in PyTorch, not std::sort's order."""
    t = torch.tensor([[2.0], [1.0]]).expand(2, 40)
    e = ember.tensor([[2.0], [1.0]]).expand(2, 40)
    assert ember.sort(e).indices.tolist() == torch.sort(t).indices.tolist()
    assert ember.sort(e.contiguous()).indices.tolist() == torch.sort(t.contiguous()).indices.tolist()


def test_the_gradient_follows_the_tied_indices():
    a = np.array([1.0, 0.0, 1.0, 2.0, 0.0, 1.0] * 5, dtype=np.float32)
    w = np.arange(30, dtype=np.float32)
    t = torch.tensor(a, requires_grad=True)
    (torch.sort(t, descending=True).values * torch.from_numpy(w)).sum().backward()
    e = ember.tensor(a, requires_grad=True)
    (ember.sort(e, descending=True).values * ember.tensor(w)).sum().backward()
    assert e.grad.tolist() == t.grad.tolist()


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_sequence_orders_equal_lengths_as_pytorchs_sort(batch_first):
    """PyTorch sorts the lengths with torch.sort(descending=True): past 16 sequences equal lengths come in its
    std::sort's order, which sorted_indices and the packed data show (failed before: ember's order was stable)."""
    lengths = [3, 5, 2, 5, 4, 3, 5, 1, 2, 5, 3, 4, 5, 2, 3, 5, 4, 1, 5, 3]
    x = np.random.default_rng(0).standard_normal((20, 6, 2) if batch_first else (6, 20, 2)).astype(np.float32)
    want = torch.nn.utils.rnn.pack_padded_sequence(torch.from_numpy(x), lengths, batch_first=batch_first,
                                                   enforce_sorted=False)
    got = ember.nn.utils.rnn.pack_padded_sequence(ember.tensor(x), lengths, batch_first=batch_first,
                                                  enforce_sorted=False)
    assert want.sorted_indices.tolist() != sorted(range(20), key=lambda i: -lengths[i])  # (not the stable order)
    assert got.sorted_indices.tolist() == want.sorted_indices.tolist()
    assert got.unsorted_indices.tolist() == want.unsorted_indices.tolist()
    assert got.batch_sizes.tolist() == want.batch_sizes.tolist()
    assert np.array_equal(got.data.numpy(), want.data.numpy())
    out, lens = ember.nn.utils.rnn.pad_packed_sequence(got, batch_first=batch_first)
    ref, ref_lens = torch.nn.utils.rnn.pad_packed_sequence(want, batch_first=batch_first)
    assert np.array_equal(out.numpy(), ref.numpy()) and lens.tolist() == ref_lens.tolist()


@pytest.mark.skipif(__import__("os").environ.get("EMBER_KERNELS") == "numpy", reason="the compiled sort's own test")
def test_compiled_std_sort_orders_as_the_python_reference():
    """The compiled std::sort from the values (``ember._kernels.mode.std_sort_keyed``) leaves every row in the Python
    reference's order (``ember._std_sort``) under PyTorch's comparators, rows of 17 to 600 with few and many ties,
    NaN, infinities and signed zeros, both directions, including the depth limit's heap sort (a long row of two
    values)."""
    from ember._kernels import mode as compiled_sort
    from ember._std_sort import std_sort

    def ascending(p, q):  # (PyTorch's KeyValueCompAsc)
        return (not np.isnan(p) and np.isnan(q)) or p < q

    def descending(p, q):  # (KeyValueCompDesc)
        return (np.isnan(p) and not np.isnan(q)) or p > q

    rng = np.random.default_rng(3)
    for n, distinct in [(17, 2), (40, 5), (200, 3), (600, 20), (600, 2), (333, 333)]:
        values = (rng.integers(0, distinct, (6, n)) - distinct // 2).astype(np.float64)
        specials = values[3:]
        for value, share in ((np.nan, 0.1), (-np.nan, 0.05), (np.inf, 0.05), (-np.inf, 0.05), (-0.0, 0.1)):
            specials[rng.random(specials.shape) < share] = value
        for floating in (False, True):
            rows = values if floating else values[:3].astype(np.int64)
            for desc in (False, True):
                out = np.full(rows.shape, -1, dtype=np.int64)
                compiled_sort.std_sort_keyed(rows.view(np.int64), floating, desc, out)
                for i, row in enumerate(rows.tolist()):
                    items = list(range(n))
                    less = descending if desc else ascending
                    std_sort(items, lambda a, b, row=row, less=less: less(row[a], row[b]))
                    assert out[i].tolist() == items, (n, distinct, floating, desc, i)


def _tied_grid():
    """Tensors of 17 to 1000 elements per row, few values (ties everywhere) and many, in every dtype sort accepts;
    the floating ones with NaN, +-inf and -0.0 among them."""
    rng = np.random.default_rng(7)
    for shape in [(17,), (33,), (3, 40), (40, 3), (2, 300, 2), (1, 1000)]:
        for levels in (1, 3, 40):
            for dtype in ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
                          "bool"):
                a = rng.integers(0, levels, shape) - (levels // 2 if dtype[0] in "if" else 0)
                a = a.astype("float32" if dtype == "bfloat16" else dtype)
                if a.dtype.kind == "f":
                    for value, share in ((np.nan, 0.1), (np.inf, 0.05), (-np.inf, 0.05), (-0.0, 0.1)):
                        a[rng.random(shape) < share] = value
                yield dtype, a


@pytest.mark.parametrize("compiled", [False, True])
def test_either_path_is_pytorchs(compiled):
    """sort and argsort on either path (compiled from any size, or NumPy with the Python reference) give PyTorch's
    indices, values (-0.0 and 0.0 told apart) and strides, in every dtype, along every dimension, both directions; bfloat16
    rows holding NaN among their equal values failed before (NaN tied with NaN was not seen as a tie), and so did
    the strides of a tied row-major tensor sorted along a dimension other than its last (transposed)."""
    if compiled and not policy.use_compiled():
        pytest.skip("numba is not installed (or EMBER_KERNELS=numpy)")
    with policy.override(compiled=compiled, min_compiled_elements=0):
        for dtype, a in _tied_grid():
            t, e = torch.from_numpy(a), ember.tensor(a)
            if dtype == "bfloat16":
                t, e = t.to(torch.bfloat16), e.to(ember.bfloat16)
            for dim in range(a.ndim):
                for desc in (False, True):
                    want = torch.sort(t, dim=dim, descending=desc)
                    got = ember.sort(e, dim=dim, descending=desc)
                    where = (dtype, a.shape, dim, desc)
                    assert got.indices.tolist() == want.indices.tolist(), where
                    assert ember.argsort(e, dim=dim, descending=desc).tolist() == want.indices.tolist(), where
                    x, y = got.values.float().numpy(), want.values.float().numpy()
                    assert np.array_equal(x, y, equal_nan=True), where
                    assert np.array_equal(np.signbit(x[~np.isnan(x)]), np.signbit(y[~np.isnan(y)])), where
                    assert got.indices.stride() == want.indices.stride(), where
                    assert got.values.stride() == want.values.stride(), where
