"""Compiled kernels on numba's OpenMP threads (``kernel.parallel``, ``ember/_kernels/_omp.py``): the same bits as the
serial kernels, the ops take that path at two threads and give the same bits as ember's own pool, forked children
(DataLoader workers) run the serial kernels, and a process where numba's ``omp`` layer cannot be used (or the program
chose another) falls back without a warning."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

import ember
from ember import _parallel
from ember._kernels import _omp, policy
from ember._kernels import activation as act
from ember._kernels import batch_norm as bn
from ember._kernels import embedding as emb
from ember._kernels import norm as nk
from ember._kernels import softmax as sm

compiled_only = pytest.mark.skipif(not policy.use_compiled(), reason="numba is not installed (or EMBER_KERNELS=numpy)")
omp_only = pytest.mark.skipif(not (policy.use_compiled() and _omp.available()),
                              reason="numba's omp threading layer is not available here (no libgomp.so.1?)")

SIZES = [1, 7, 4097, 70001]


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.fixture
def two_threads():
    _omp.use_threads(2)
    yield
    _omp.use_threads(ember.get_num_threads())


@pytest.fixture
def omp_requests(monkeypatch):
    """The thread counts asked of numba's OpenMP layer (``_omp.use_threads``, which still runs) during the test:
    an empty list while no op took an OpenMP region."""
    calls = []
    use = _omp.use_threads
    monkeypatch.setattr(_omp, "use_threads", lambda n: (calls.append(n), use(n)))
    return calls


@omp_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 3, 5), (2, 7, 4097), (3, 9, 1001)])
def test_batch_norm_parallel_gives_the_serial_bits(shape, dtype, two_threads):
    rng = np.random.default_rng(0)
    c = shape[1]
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    a, invstd = rng.standard_normal(c).astype(dtype), np.abs(rng.standard_normal(c)).astype(dtype)
    for w, b in ((rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)),
                 (np.empty(0, dtype), np.empty(0, dtype))):
        results = []
        for k in (bn.forward, bn.forward.parallel):
            mean, var, out = np.empty(c, dtype), np.empty(c, dtype), np.empty_like(x)
            k(x, w, b, 1e-5, 0, c, mean, var, out)
            results.append((mean, var, out))
        for k in (bn.backward, bn.backward.parallel):
            gs, gd, gx = np.empty(c, dtype), np.empty(c, dtype), np.empty_like(x)
            k(g, x, results[0][0], a, invstd, 0, c, gs, gd, gx)
            results.append((gs, gd, gx))
        for serial, parallel in ((results[0], results[1]), (results[2], results[3])):
            for s, p in zip(serial, parallel):
                assert np.array_equal(_bits(s), _bits(p))
    # a channel range that is not the whole (the serial kernel's chunks): only those channels written
    mean, var, out = np.full(c, 7, dtype), np.full(c, 7, dtype), np.full_like(x, 7)
    bn.forward.parallel(x, np.empty(0, dtype), np.empty(0, dtype), 1e-5, c // 2, c, mean, var, out)
    assert (mean[:c // 2] == 7).all() and (out[:, :c // 2] == 7).all() and not (out[:, c // 2:] == 7).any()


@omp_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_relu_kernels_parallel_give_the_serial_bits(n, dtype, two_threads):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype)
    x[::5], x[1::7], x[2::11], x[3::13] = -0.0, np.nan, -np.nan, 0.0
    ref = np.where(x < 0, np.zeros((), dtype), x)
    out = np.empty_like(x)
    act.relu.parallel(x, out)
    assert np.array_equal(_bits(out), _bits(ref))  # x kept unless below 0: -0.0 and a NaN's sign, as PyTorch's
    g = rng.standard_normal(n).astype(dtype)
    g[4::17] = np.inf
    serial, parallel = np.empty_like(g), np.empty_like(g)
    act.relu_grad(g, ref, serial)
    act.relu_grad.parallel(g, ref, parallel)
    assert np.array_equal(_bits(serial), _bits(parallel))


@omp_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows, feats", [(1, 1), (7, 33), (333, 211)])
@pytest.mark.parametrize("blocks", [2, 3])
def test_norm_kernels_parallel_give_the_serial_bits(rows, feats, blocks, dtype, two_threads):
    rng = np.random.default_rng(rows)
    x = (rng.standard_normal((rows, feats)) * 3 + 1).astype(dtype)
    g, xh = rng.standard_normal((rows, feats)).astype(dtype), rng.standard_normal((rows, feats)).astype(dtype)
    invstd = np.abs(rng.standard_normal((rows, 1))).astype(dtype)
    for w, b in ((rng.standard_normal(feats).astype(dtype), rng.standard_normal(feats).astype(dtype)),
                 (rng.standard_normal(feats).astype(dtype), np.empty(0, dtype)), (np.empty(0, dtype),) * 2):
        for center in (True, False):
            for keep in (True, False):
                results = []
                for k, extra in ((nk.layer_norm, ()), (nk.layer_norm_blocks.parallel, (blocks,)),
                                 (nk.layer_norm_blocks, (blocks,))):
                    out = np.full_like(x, 7)
                    scratch = ((np.empty_like(x), np.empty((rows, 1), dtype)) if keep else
                               (np.empty((1, feats), dtype), np.empty((1, 1), dtype)))
                    k(x, w, b, dtype(1e-5), center, *scratch, out, *extra)
                    results.append((out, *scratch) if keep else (out,))
                for other in results[1:]:
                    for s, p in zip(results[0], other):
                        assert np.array_equal(_bits(s), _bits(p))
            results = []
            for k in (nk.layer_norm_grad, nk.layer_norm_grad.parallel):
                gw_rows, gx = np.empty_like(g), np.empty_like(g)
                k(g, xh, invstd, w, center, gw_rows, gx)
                results.append((gw_rows, gx))
            for s, p in zip(*results):
                assert np.array_equal(_bits(s), _bits(p))


@omp_only
@pytest.mark.parametrize("rows, n", [(1, 16), (5, 7), (64, 64), (300, 211)])
@pytest.mark.parametrize("blocks", [2, 3])
def test_softmax_kernels_parallel_give_the_serial_bits(rows, n, blocks, two_threads):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((rows, n)) * 6).astype(np.float32)
    if rows > 3:  # the redo paths: a NaN entry, a row of -inf, a +inf entry
        x[1, n // 2], x[2], x[3, 0] = np.nan, -np.inf, np.inf
    for causal in (0, 4, rows):
        for empty_zero in (False, True):
            serial, parallel = np.empty_like(x), np.full_like(x, 7)
            sm.softmax(x, serial, np.float32(0.7), causal, 0, empty_zero)
            sm.softmax_blocks.parallel(x, parallel, np.float32(0.7), causal, empty_zero, blocks)
            assert np.array_equal(_bits(serial), _bits(parallel))
    if n >= 16:
        serial, parallel = np.empty_like(x), np.full_like(x, 7)
        sm.log_softmax(x, serial)
        sm.log_softmax_blocks.parallel(x, parallel, blocks)
        assert np.array_equal(_bits(serial), _bits(parallel))
    y = np.abs(rng.standard_normal((rows, n))).astype(np.float32)
    g = rng.standard_normal((rows, n)).astype(np.float32)
    serial, parallel = np.empty_like(g), g.copy()
    sm.softmax_vjp(g, y, serial, np.float32(0.25))
    sm.softmax_vjp.parallel(parallel, y, parallel, np.float32(0.25))  # (in place, as attention's backward)
    assert np.array_equal(_bits(serial), _bits(parallel))


@omp_only
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("blocks", [2, 3])
def test_pointwise_and_gather_kernels_parallel_give_the_serial_bits(n, blocks, two_threads):
    rng = np.random.default_rng(n)
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal(n) * 4).astype(dtype)
        x[::97] = np.nan
        pairs = [(act.gelu_erf64, act.gelu_erf64.parallel, ())] if dtype == np.float64 else [
            (act.gelu_erf, act.gelu_erf_blocks.parallel, (blocks,)), (act.silu, act.silu_blocks.parallel, (blocks,))]
        for serial_k, parallel_k, extra in pairs:
            for need in (True, False):
                outs = []
                for k, more in ((serial_k, ()), (parallel_k, extra)):
                    out, d = np.full_like(x, 7), np.full(n if need else 0, 7, dtype)
                    k(x, out, d, *more)
                    outs.append((out, d))
                for s, p in zip(*outs):
                    assert np.array_equal(_bits(s), _bits(p))
        y, prod = rng.standard_normal(n).astype(dtype), np.full_like(x, 7)
        act.multiply.parallel(x, y, prod)  # (GELU's and SiLU's gradient times the saved derivative)
        assert np.array_equal(_bits(prod), _bits(x * y))
    w = rng.standard_normal((50, 9)).astype(np.float32)
    idx = rng.integers(0, 50, n)
    out = np.full((n, 9), 7, np.float32)
    emb.gather_rows.parallel(w, idx, out, 0, n)
    assert np.array_equal(out, w[idx])


def _block_step(x_np, idx_np):
    """A transformer block's row ops, forward and backward: embedding, LayerNorm, causal attention (softmax and its
    gradient), GELU, RMSNorm, SiLU, softmax, log_softmax and cross-entropy; the outputs and every gradient."""
    ember.manual_seed(0)
    f = ember.nn.functional
    emb_w = ember.randn(40, 64, requires_grad=True)
    ln, rms = ember.nn.LayerNorm(64), ember.nn.RMSNorm(64)
    x = ember.tensor(x_np, requires_grad=True)
    h = x + f.embedding(ember.tensor(idx_np), emb_w)
    h = ln(h)
    q = h.reshape(16, 32, 4, 16).transpose(1, 2)
    a = f.scaled_dot_product_attention(q, q * 0.5, q * 2, is_causal=True).transpose(1, 2).reshape(16, 32, 64)
    h = f.gelu(rms(a + h)) + f.silu(h) + f.softmax(h, -1)
    logits = h.reshape(-1, 64)
    loss = f.cross_entropy(logits, ember.tensor(idx_np.reshape(-1))) + f.log_softmax(logits, -1).square().mean()
    loss.backward()
    return [t.detach().numpy().copy() for t in (loss, x.grad, emb_w.grad, ln.weight.grad, ln.bias.grad,
                                                   rms.weight.grad)]


@omp_only
def test_row_ops_on_omp_threads_give_the_one_thread_bits(threads, omp_requests):
    """With ``policy.omp`` at two threads the row kernels run as one region each, from ``omp_min_elements`` (32 Ki
    here, where ember's pool would not split below 64 Ki in this test), with the bits of one thread."""
    rng = np.random.default_rng(7)
    x, idx = rng.standard_normal((16, 32, 64)).astype(np.float32), rng.integers(0, 40, (16, 32))
    ember.set_num_threads(2)
    with policy.override(omp=True, omp_min_elements=1 << 14):
        with_omp = _block_step(x, idx)
    assert len(omp_requests) >= 12 and set(omp_requests) == {2}  # every row op above, forward and backward
    omp_requests.clear()
    with policy.override(omp=False):
        pool = _block_step(x, idx)
    ember.set_num_threads(1)
    with policy.override(omp=True, omp_min_elements=1 << 14):
        one = _block_step(x, idx)
    assert not omp_requests
    for a, b, c in zip(with_omp, pool, one):
        assert np.array_equal(_bits(a), _bits(b)) and np.array_equal(_bits(a), _bits(c))


def _adam_steps(opt_cls, dtype, **options):
    """Three steps of ``opt_cls`` on two parameters (one above the regions' threshold, one below): the parameters
    and their state arrays after."""
    rng = np.random.default_rng(11)
    params = [ember.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
              for shape in ((300, 130), (7, 5))]
    opt = opt_cls(params, lr=0.01, **options)
    for i in range(3):
        for p in params:
            p.grad = ember.tensor(rng.standard_normal(p.shape).astype(dtype) * (i + 1))
        opt.step()
    return [a.detach().numpy().copy() for p in params
            for a in (p, *(v for v in opt.state[p].values() if v.ndim))]


@omp_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opt_cls, options", [(ember.optim.AdamW, {}), (ember.optim.Adam, {}),
                                              (ember.optim.AdamW, {"weight_decay": 0.0}),
                                              (ember.optim.RMSprop, {"centered": True})])
def test_adam_on_omp_threads_gives_the_reference_bits(opt_cls, options, dtype, threads, omp_requests):
    """Adam's and AdamW's update of a large parameter as one region (``_kernels.optim.adam``) gives the bits of
    the NumPy reference's passes (``_adam_rows``); so do RMSprop's three ``add_scaled`` passes as regions."""
    ember.set_num_threads(2)
    with policy.override(omp=True, omp_min_elements=1 << 14):
        with_omp = _adam_steps(opt_cls, dtype, **options)
    assert omp_requests == [2] * 3 * (3 if opt_cls is ember.optim.RMSprop else 1)  # the large parameter, each step
    with policy.override(omp=False):
        pool = _adam_steps(opt_cls, dtype, **options)
    for a, b in zip(with_omp, pool):
        assert np.array_equal(_bits(a), _bits(b))


def _step(x_np, layout_t):
    """BatchNorm2d (training) then ReLU, forward and backward: the outputs and gradients as NumPy arrays."""
    ember.manual_seed(0)
    bn2d = ember.nn.BatchNorm2d(x_np.shape[1]).to(ember.float64 if x_np.dtype == np.float64 else ember.float32)
    with ember.no_grad():
        bn2d.weight.copy_(ember.linspace(0.5, 1.5, x_np.shape[1]))
        bn2d.bias.copy_(ember.linspace(-0.2, 0.3, x_np.shape[1]))
    x = ember.tensor(x_np)
    if layout_t:  # batch-last memory behind an (N, C, H, W) view, as convolutions return it
        x = ember.tensor(np.ascontiguousarray(x_np.transpose(1, 2, 3, 0))).permute(3, 0, 1, 2)
    x.requires_grad_(True)
    y = ember.relu(bn2d(x))
    g = ember.tensor(np.random.default_rng(5).standard_normal(y.shape).astype(x_np.dtype))
    y.backward(g)
    return [t.detach().numpy().copy() for t in (y, x.grad, bn2d.weight.grad, bn2d.bias.grad)]


@omp_only
@pytest.mark.parametrize("layout_t", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ops_on_omp_threads_give_the_bits_of_ember_pool(layout_t, dtype, threads, monkeypatch, omp_requests):
    x = np.random.default_rng(3).standard_normal((8, 16, 24, 40)).astype(dtype)  # 123 Ki elements: split at 2
    ember.set_num_threads(2)
    monkeypatch.setattr(policy, "omp", True)
    with_omp = _step(x, layout_t)
    # BatchNorm forward and backward, ReLU and its gradient took numba's threads
    assert omp_requests and set(omp_requests) == {2}
    omp_requests.clear()
    with policy.override(omp=False):
        pool = _step(x, layout_t)
    assert not omp_requests
    ember.set_num_threads(1)
    one = _step(x, layout_t)
    assert not omp_requests  # one thread: the serial kernels
    for a, b, c in zip(with_omp, pool, one):
        assert np.array_equal(_bits(a), _bits(b)) and np.array_equal(_bits(a), _bits(c))


@compiled_only
def test_parallel_kernel_falls_back_to_the_pool(threads, monkeypatch):
    """Where numba's omp layer is not available, the serial kernel runs in chunks over ember's pool."""
    monkeypatch.setattr(_omp, "_available", False)
    ember.set_num_threads(2)
    spans = []
    _parallel.parallel_kernel(bn.forward, lambda k, lo, hi: spans.append((k is bn.forward, lo, hi)), 4, 1 << 20)
    assert sorted(spans) == [(True, 0, 2), (True, 2, 4)]


def _run(code: str, **env) -> str:
    base = {k: v for k, v in os.environ.items() if k not in ("EMBER_KERNELS", "EMBER_OMP_KERNELS",
                                                              "NUMBA_THREADING_LAYER")}
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], env={**base, "PYTHONPATH": ROOT, **env},
                         capture_output=True, text=True, timeout=300, check=True)
    return out.stdout.strip()


# x large enough to be split at two threads; the check is the same arithmetic as the test's parent computes
_CHECK = """
import numpy as np, ember
ember.set_num_threads(2)
x = np.random.default_rng(0).standard_normal((4, 8, 64, 64)).astype(np.float32)
def compute():
    t = ember.tensor(x).requires_grad_(True)
    y = ember.relu(ember.nn.functional.batch_norm(t, None, None, training=True))
    y.sum().backward()
    return y.detach().numpy(), t.grad.numpy()
"""


@compiled_only
@pytest.mark.parametrize("env, code, expected", [
    ({"NUMBA_THREADING_LAYER": "workqueue"}, "", "False workqueue"),  # the program's choice stands (no start)
    ({}, "import numba; numba.config.THREADING_LAYER = 'workqueue'", "False workqueue"),
    ({"EMBER_OMP_KERNELS": ""}, "", "False default"),  # off by default: numba's layer left alone
    # libgomp.so.1 missing: numba's omppool does not import
    ({}, "import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
         "        if name == 'numba.np.ufunc.omppool': raise ImportError('libgomp.so.1: cannot open')\n"
         "sys.meta_path.insert(0, Block())", "False default"),
])
def test_fallback_when_the_omp_layer_is_not_used(env, code, expected):
    """ember's kernels keep ember's pool, compute the same bits, warn nothing (``-W error``), and leave numba's layer
    as the program set it (``default`` when nothing chose one: the layer is picked by numba when it first starts)."""
    out = _run(f"""{code}
{_CHECK}
y, gx = compute()
from ember._kernels import policy
import numba
print(policy.use_omp(), numba.config.THREADING_LAYER, y.sum(), gx.sum())
""", **{"EMBER_OMP_KERNELS": "1", **env})
    ref = _run(_CHECK + "y, gx = compute(); print(y.sum(), gx.sum())")  # (omp off: ember's pool)
    flag, layer, *sums = out.split()
    assert f"{flag} {layer}" == expected
    assert sums == ref.split()


@omp_only
def test_forked_children_compute_with_the_serial_kernels():
    """GNU OpenMP is not fork-safe: after the parent ran parallel regions, a forked child that entered one would be
    ended by numba (a PyTorch DataLoader's worker processes, a multiprocessing pool). Children run the serial kernels
    (ember's own pool, restarted in the child) and compute the same bits as the parent."""
    out = _run(_CHECK + """
from ember._kernels import policy
assert policy.use_omp()
want = compute()  # the parent: numba's OpenMP threads ran

def child(i):
    y, gx = compute()
    return policy.use_omp(), np.array_equal(y, want[0]), np.array_equal(gx, want[1])

import multiprocessing
with multiprocessing.get_context("fork").Pool(2) as pool:
    rows = np.array(pool.map_async(child, range(4)).get(240))
print(rows.shape, rows[:, 0].any(), rows[:, 1:].all())
""", EMBER_OMP_KERNELS="1")
    assert out == "(4, 3) False True"


@pytest.mark.parametrize("value, expected", [("", "False"), ("0", "False"), ("1", "True"), ("on", "True")])
def test_ember_omp_kernels_env_sets_the_policy(value, expected):
    assert _run("from ember._kernels import policy; print(policy.omp)", EMBER_OMP_KERNELS=value) == expected


@omp_only
@pytest.mark.parametrize("layout_t", [False, True])
def test_passes_below_the_pool_threshold_take_one_region_under_omp(layout_t, threads, monkeypatch, omp_requests):
    """Under ``omp`` BatchNorm's and ReLU's passes split from ``policy.omp_min_elements`` (16 Ki), far below
    the 512 Ki from which they are handed to ember's pool: a region costs a few µs, a hand-off 50-300. The same bits
    as the pool's split and one thread; without ``omp`` the same sizes stay on the calling thread."""
    monkeypatch.setattr(policy, "min_parallel_pass_elements", 1 << 19)  # as shipped (``threads`` lowers it)
    x = np.random.default_rng(4).standard_normal((8, 16, 24, 40)).astype(np.float32)  # 120 Ki elements
    ember.set_num_threads(2)
    monkeypatch.setattr(policy, "omp", True)
    with_omp = _step(x, layout_t)
    # BatchNorm forward and backward, ReLU and its gradient: one region each asked for (ReLU's gradient of a
    # batch-last output by a C-ordered g, whose memory orders differ, then runs as one pass on the calling thread,
    # as on the pool: ``parallel_flat`` asks for the region's threads before it compares the orders)
    assert len(omp_requests) == 4
    omp_requests.clear()
    with policy.override(omp_min_elements=1 << 18):  # above the input's size: no region
        _step(x, layout_t)
    assert not omp_requests
    with policy.override(omp=False):
        pool = _step(x, layout_t)
    assert not omp_requests
    ember.set_num_threads(1)
    one = _step(x, layout_t)
    for a, b, c in zip(with_omp, pool, one):
        assert np.array_equal(_bits(a), _bits(b)) and np.array_equal(_bits(a), _bits(c))


def _pool_step(x_np, layout_t, kwargs):
    """max_pool2d forward and backward: the output and the input gradient as NumPy arrays."""
    x = ember.tensor(x_np)
    if layout_t:  # batch-last memory behind an (N, C, H, W) view (the batch-last kernels)
        x = ember.tensor(np.ascontiguousarray(x_np.transpose(1, 2, 3, 0))).permute(3, 0, 1, 2)
    x.requires_grad_(True)
    y = ember.nn.functional.max_pool2d(x, **kwargs)
    g = np.random.default_rng(6).standard_normal(y.shape).astype(x_np.dtype)
    if layout_t:
        g = np.ascontiguousarray(g.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)
    y.backward(ember.tensor(g))
    return [t.detach().numpy().copy() for t in (y, x.grad)]


@omp_only
@pytest.mark.parametrize("kwargs", [dict(kernel_size=2, stride=2), dict(kernel_size=3, stride=2, padding=1)])
@pytest.mark.parametrize("layout_t", [False, True])
def test_max_pooling_takes_one_region_under_omp(layout_t, kwargs, threads, monkeypatch, omp_requests):
    """Max pooling's compiled forward and backward (2x2 windows on (N, C, H, W) planes, any window batch-last) run
    as one OpenMP region under ``omp``, from ``omp_min_elements``: each plane or channel (its gradient zeroed
    by the thread that adds into it) computed as the serial kernel does, so the same bits as ember's pool, one
    thread and PyTorch's values; overlapping windows add each position's contributions in output order."""
    import torch
    x = np.random.default_rng(7).standard_normal((16, 16, 32, 32)).astype(np.float32)  # 256 Ki; 64 Ki out
    x[1, 3, 4, 4] = np.nan  # NaN wins its windows
    ember.set_num_threads(2)
    monkeypatch.setattr(policy, "omp", True)
    monkeypatch.setattr(policy, "omp_chunks", False)  # (the NumPy passes' splits on ember's pool: not counted)
    with_omp = _pool_step(x, layout_t, kwargs)
    # the backward's kernel takes any window; the forward's NCHW 3x3 windows are NumPy's per-offset passes
    assert len(omp_requests) == (2 if layout_t or kwargs["kernel_size"] == 2 else 1)
    with policy.override(omp=False):
        pool = _pool_step(x, layout_t, kwargs)
    ember.set_num_threads(1)
    one = _pool_step(x, layout_t, kwargs)
    for a, b, c in zip(with_omp, pool, one):
        assert np.array_equal(_bits(a), _bits(b)) and np.array_equal(_bits(a), _bits(c))
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.max_pool2d(tx, **kwargs)
    ty.backward(torch.tensor(np.random.default_rng(6).standard_normal(tuple(ty.shape)).astype(np.float32)))
    np.testing.assert_allclose(with_omp[0], ty.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(with_omp[1], tx.grad.numpy(), rtol=1e-5, atol=1e-6)


@omp_only
def test_relu_without_a_compiled_kernel_keeps_the_pool_threshold_under_omp(threads, monkeypatch):
    """An integer ReLU has no ``kernel.parallel`` form: under ``omp`` it stays on the calling thread below the pool's
    threshold (512 Ki) rather than being handed to ember's pool from ``omp_min_elements``."""
    monkeypatch.setattr(policy, "min_parallel_pass_elements", 1 << 19)  # as shipped (``threads`` lowers it)
    monkeypatch.setattr(policy, "omp", True)
    ember.set_num_threads(2)
    split = []
    real = _parallel.parallel_for
    monkeypatch.setattr(_parallel, "parallel_for", lambda *a, **k: (split.append(a[1]), real(*a, **k)))
    x = np.arange(-50_000, 50_000, dtype=np.int32).reshape(100, 1000)  # 98 Ki elements
    assert np.array_equal(ember.relu(ember.tensor(x)).numpy(), np.maximum(x, 0))
    assert not split
