"""The matrix products of ``ember/ops/linalg.py`` at their edges, against PyTorch: every public function with its
keywords left to their defaults, on empty, 1-d, batched and broadcast operands, in each dtype PyTorch computes or
refuses (float64, float32, float16, bfloat16, complex128, int64, int32, uint8, bool): the value, dtype, shape and node
name, the gradients (first and second order in float64), or PyTorch's error type and message; each refusal of the
module beside its bound; the scaling-only path of the addmm family (nothing to sum: PyTorch's ``result.mul_(beta)``
and its cast check); ``tensordot``'s ``dims`` in each form PyTorch's wrapper reads."""

import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float64", "float32", "float16", "bfloat16", "complex128", "int64", "int32", "uint8", "bool"]
INEXACT = {"float64", "float32", "float16", "bfloat16", "complex128"}


def _array(rng, shape, dt):
    a = rng.standard_normal(shape)
    if dt == "bool":
        return a > 0
    if dt == "uint8":
        return (np.abs(a) * 3).astype(np.int64)
    if dt.startswith("int"):
        return (a * 3).astype(np.int64)
    if dt.startswith("complex"):
        return a + 1j * rng.standard_normal(shape)
    return a


def _numpy(t):
    t = t.detach()
    if t.dtype in (torch.bool, ember.bool):
        return t.numpy()
    return t.to(torch.complex128 if t.is_complex() else torch.float64).numpy() if isinstance(t, torch.Tensor) else \
        t.to(ember.complex128 if t.is_complex() else ember.float64).numpy()


def _run(m, fn, arrays, dts, kw):
    """The call on ``m``'s tensors: ("error", type, message) or the value, dtype, shape, node name, and for an inexact
    dtype the gradients of the sum (with float64, of the squared gradients' sum too: second order)."""
    grad = all(d in INEXACT for d in dts)
    ts = [m.tensor(a).to(getattr(m, d)).requires_grad_(grad) for a, d in zip(arrays, dts)]
    try:
        out = fn(m)(*ts, **kw)
    except Exception as e:  # noqa: BLE001 (PyTorch's type and message compared)
        return ("error", type(e).__name__, str(e).split("\n")[0])
    result = [_numpy(out), str(out.dtype).split(".")[-1], tuple(out.shape),
              None if out.grad_fn is None else type(out.grad_fn).__name__]
    if grad:
        create = dts[0] == "float64"
        grads = m.autograd.grad(out, ts, m.ones_like(out), allow_unused=True, create_graph=create)
        result.append([None if g is None else _numpy(g) for g in grads])
        if create:
            terms = [(g * g).sum() for g in grads if g is not None and g.requires_grad]
            if terms:
                second = m.autograd.grad(sum(terms), ts, allow_unused=True)
                result.append([None if g is None else _numpy(g) for g in second])
    return result


def _compare(fn, shapes, dts, kw=None, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [_array(rng, s, d) for s, d in zip(shapes, dts)]
    kw = kw or {}
    e, t = _run(ember, fn, arrays, dts, kw), _run(torch, fn, arrays, dts, kw)
    where = f"{shapes} {dts} {kw}"
    if isinstance(t, tuple) or isinstance(e, tuple):
        assert e == t, where
        return
    assert e[1:4] == t[1:4], where  # dtype, shape, node name
    half = any(d in ("float16", "bfloat16") for d in dts)
    # (float32 sums of products of magnitude ~10 may round an ulp of that magnitude apart, by the BLAS's order:
    # AVX2 and AVX-512 builds differ)
    single = any(d in ("float32", "complex64") for d in dts)
    tol = dict(rtol=2e-2, atol=2e-2) if half else dict(rtol=1e-6, atol=2e-6 if single else 1e-7)
    np.testing.assert_allclose(e[0], t[0], **tol, err_msg=where)
    assert len(e) == len(t), where
    for order, (ge, gt) in enumerate(zip(e[4:], t[4:]), 1):
        for i, (x, y) in enumerate(zip(ge, gt)):
            assert (x is None) == (y is None), (where, order, i)
            if x is not None:
                np.testing.assert_allclose(x, y, **tol, err_msg=f"{where} order {order} operand {i}")


def _named(name):
    return lambda m: getattr(m, name)


PAIRS = {
    "mm": [((3, 4), (4, 5)), ((0, 4), (4, 5)), ((3, 0), (0, 5)), ((3, 4), (4, 0)), ((1, 1), (1, 1))],
    "bmm": [((2, 3, 4), (2, 4, 5)), ((0, 3, 4), (0, 4, 5)), ((2, 0, 4), (2, 4, 5)), ((2, 3, 0), (2, 0, 5)),
            ((1, 3, 4), (1, 4, 2))],
    "mv": [((3, 4), (4,)), ((0, 4), (4,)), ((3, 0), (0,))],
    "dot": [((4,), (4,)), ((0,), (0,)), ((1,), (1,))],
    "vdot": [((4,), (4,)), ((0,), (0,)), ((1,), (1,))],
    "outer": [((4,), (3,)), ((0,), (3,)), ((1,), (1,))],
    "ger": [((4,), (3,))],
    "inner": [((4,), (4,)), ((0,), (0,)), ((2, 4), (4,)), ((4,), (3, 4)), ((2, 0), (3, 0)), ((2, 3, 4), (5, 4)),
              ((), (2, 3)), ((2, 3), ())],
    "kron": [((2, 3), (4, 2, 1)), ((0,), (3,)), ((2, 1, 3), (3,)), ((), (2,)), ((2, 3), ())],
    "matmul": [((3, 4), (4, 5)), ((4,), (4,)), ((0,), (0,)), ((3, 0), (0, 5)), ((2, 1, 3, 4), (5, 4, 2)),
               ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((0, 3, 4), (4,)), ((3,), (0, 3, 2)), ((1, 3, 4), (2, 4, 5)),
               ((2, 1, 3, 4), (1, 5, 4, 2)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((4,), (4, 5)),
               ((3, 4), (4,))],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_each_product_of_two_at_its_edge_shapes_as_torch(name, dtype):
    for shapes in PAIRS[name]:
        _compare(_named(name), shapes, [dtype, dtype])


ADDED = {
    "addmm": [((3, 5), (3, 4), (4, 5)), ((5,), (3, 4), (4, 5)), ((), (3, 4), (4, 5)), ((1, 1), (0, 4), (4, 5)),
              ((3, 5), (3, 0), (0, 5)), ((3, 1), (3, 4), (4, 5))],
    "baddbmm": [((2, 3, 5), (2, 3, 4), (2, 4, 5)), ((5,), (2, 3, 4), (2, 4, 5)), ((), (0, 3, 4), (0, 4, 5)),
                ((2, 3, 5), (2, 3, 0), (2, 0, 5)), ((1, 3, 1), (2, 3, 4), (2, 4, 5))],
    "addbmm": [((3, 5), (2, 3, 4), (2, 4, 5)), ((5,), (2, 3, 4), (2, 4, 5)), ((3, 5), (0, 3, 4), (0, 4, 5)),
               ((), (2, 3, 4), (2, 4, 5)), ((3, 5), (1, 3, 4), (1, 4, 5))],
    "addmv": [((3,), (3, 4), (4,)), ((1,), (3, 4), (4,)), ((), (3, 4), (4,)), ((0,), (0, 4), (4,)),
              ((3,), (3, 0), (0,))],
    "addr": [((3, 4), (3,), (4,)), ((4,), (3,), (4,)), ((), (3,), (4,)), ((0, 4), (0,), (4,)), ((3, 1), (3,), (4,))],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ADDED))
def test_each_added_product_with_its_defaults_and_scales_at_its_edge_shapes_as_torch(name, dtype):
    scales = [{}, dict(beta=2, alpha=3)] if dtype != "bool" else [{}, dict(beta=True, alpha=True)]
    for shapes in ADDED[name]:
        for kw in scales:
            _compare(_named(name), shapes, [dtype] * 3, kw)


TENSORDOT = [((2, 3, 4), (3, 4, 5), None), ((2, 3, 4), (3, 4, 5), 2), ((2, 3, 4), (4, 5), 1), ((2, 3), (4, 5), 0),
             ((2, 3, 4), (4, 3, 2), ([1, 2], [1, 0])), ((2, 3), (3, 2), ((1,), (0,))), ((2, 3), (3, 2), ([-1], [0])),
             ((0, 3), (3, 2), 1), ((2, 3), (3, 2), [[1], [0]]), ((3,), (3,), 1), ((), (2,), 0)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensordot_with_its_default_and_each_form_of_dims_as_torch(dtype):
    for sa, sb, dims in TENSORDOT:
        _compare(_named("tensordot"), [sa, sb], [dtype, dtype], {} if dims is None else {"dims": dims})


def _dims_cases(m):
    return [(1, 0), ([1], 0), (1, [0]), ([1], [0], [1]), ([1],), 1.0, None, "1", m.tensor([1, 0]),
            m.tensor([[1], [0]]), m.tensor(-1), m.tensor([1]), m.tensor(1), (m.tensor([1]), [0]), ((1,), m.tensor([0])),
            ((1,), (0,)), [[1], [0]], True, ([True], [False]), ([1.0], [0]), ([np.int64(1)], [0]), np.int64(1), -1, 3]


def test_tensordot_reads_its_dims_as_pytorchs_wrapper():
    """PyTorch's ``tensordot`` takes an int, a tensor of one element (its int), two lists (or a tensor of two rows);
    a pair with an int or a tensor side is its argument parser's TypeError, naming the side (``dims_self``,
    ``dims_other``), any other kind its RuntimeError: ember took ``(1, 0)`` as NumPy's axes and refused a tensor of
    one element."""
    outcomes = []
    for m in (ember, torch):
        a, b = m.ones(2, 3), m.ones(3, 2)
        row = []
        for dims in _dims_cases(m):
            try:
                row.append(tuple(m.tensordot(a, b, dims=dims).shape))
            except Exception as e:  # noqa: BLE001
                row.append((type(e).__name__, str(e)))
        outcomes.append(row)
    for case, (e, t) in enumerate(zip(*outcomes)):
        assert e == t, (case, _dims_cases(torch)[case])


def _ones(m, shape, dt):
    return m.ones(shape, dtype=getattr(m, dt))


# products with nothing to sum: PyTorch's kernels scale the input alone (``result.mul_(beta)``; zero_ for beta 0),
# and addbmm runs one ``addmm_`` per batch entry, those after the first with beta 1 (an int)
NOTHING_TO_SUM = {"addmm": ("addmm", [(2, 3), (2, 0), (0, 3)]),
                  "addmm broadcast": ("addmm", [(3,), (2, 0), (0, 3)]),
                  "addmm of an empty result": ("addmm", [(0, 3), (0, 0), (0, 3)]),
                  "baddbmm": ("baddbmm", [(2, 2, 3), (2, 2, 0), (2, 0, 3)]),
                  "baddbmm broadcast": ("baddbmm", [(1, 3), (2, 2, 0), (2, 0, 3)]),
                  "baddbmm of no batch": ("baddbmm", [(0, 2, 3), (0, 2, 4), (0, 4, 3)]),
                  "addbmm": ("addbmm", [(2, 3), (2, 2, 0), (2, 0, 3)]),
                  "addbmm of one batch": ("addbmm", [(2, 3), (1, 2, 0), (1, 0, 3)]),
                  "addbmm of no batch": ("addbmm", [(2, 3), (0, 2, 4), (0, 4, 3)]),
                  "addbmm of no batch, empty result": ("addbmm", [(0, 3), (0, 0, 4), (0, 4, 3)]),
                  "addbmm of an empty result": ("addbmm", [(0, 3), (2, 0, 0), (2, 0, 3)]),
                  "addmv": ("addmv", [(2,), (2, 0), (0,)]),
                  "addmv of an empty result": ("addmv", [(0,), (0, 0), (0,)]),
                  # (an empty result with something to sum: returned before beta and alpha are read; addmv's
                  # shortcut for an empty matrix reads beta alone, as a tensor of the result's dtype)
                  "addmm of no rows": ("addmm", [(0, 3), (0, 2), (2, 3)]),
                  "baddbmm of no rows": ("baddbmm", [(2, 0, 3), (2, 0, 2), (2, 2, 3)]),
                  "addbmm of no rows": ("addbmm", [(0, 3), (2, 0, 2), (2, 2, 3)]),
                  "addmv of no rows": ("addmv", [(0,), (0, 2), (2,)])}
SCALES = [(1, 1), (0, 1), (2, 1), (True, True), (False, True), (0.5, 1), (1, 0.5), (0.0, 1), (-1, 1), (1, -1), (0, 0),
          (1 + 0j, 1), (0j, 1), (True, 2), (1, True), (1 + 2j, 1), (2j, 1), (1, 1 + 2j), (True, 1j), (300, 1),
          (1, 300)]


@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8", "int8", "float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", sorted(NOTHING_TO_SUM))
def test_a_product_with_nothing_to_sum_checks_and_keeps_the_results_dtype_as_torch(case, dtype):
    """Where PyTorch scales the input alone, its in-place cast check refuses a beta the result cannot hold (a float
    into an integer or bool result, a complex into a real one, an int into a bool one: ``result type Long can't be
    cast to the desired output type Bool``), and a result it computes keeps its dtype (a bool one bool, beta and
    alpha read as bools: ember's was int64 or float64 for an int or float scale). alpha is not read (a complex one
    taken), nor is either for an empty result (addmv's empty matrix: beta read alone, a complex one as True for a
    bool result, its refusal for half precision naming ``double``: ember refused them or named the half type)."""
    name, shapes = NOTHING_TO_SUM[case]
    for beta, alpha in SCALES:
        outcomes = []
        for m in (ember, torch):
            try:
                r = getattr(m, name)(*[_ones(m, s, dtype) for s in shapes], beta=beta, alpha=alpha)
                outcomes.append((str(r.dtype).split(".")[-1], tuple(r.shape), r.float().tolist()))
            except Exception as e:  # noqa: BLE001
                outcomes.append((type(e).__name__, str(e)))
        assert outcomes[0] == outcomes[1], (beta, alpha)


def test_inner_of_two_bool_vectors_is_dots_refusal_as_torch():
    """PyTorch's inner of two vectors is a dot product: its bool error names ``dot``, and an empty pair is refused
    too (ember named addmm's kernel, and returned False for two empty vectors)."""
    for n in (4, 1, 0):
        for m in (ember, torch):
            with pytest.raises(NotImplementedError, match="^\"dot\" not implemented for 'Bool'$"):
                m.inner(_ones(m, (n,), "bool"), _ones(m, (n,), "bool"))
    for sa, sb in [((2, 4), (4,)), ((4,), (3, 4))]:  # (a matrix beside: addmm's kernel, as PyTorch's)
        for m in (ember, torch):
            with pytest.raises(NotImplementedError, match="addmm_impl_cpu_"):
                m.inner(_ones(m, sa, "bool"), _ones(m, sb, "bool"))


def _t(m, *shape, dtype="float32"):
    return m.zeros(shape, dtype=getattr(m, dtype))


REFUSALS = {
    "matmul 0-d": lambda m: m.matmul(_t(m), _t(m, 3)),
    "matmul 0-d second": lambda m: m.matmul(_t(m, 3), _t(m)),
    "matmul inner sizes": lambda m: m.matmul(_t(m, 2, 3), _t(m, 4, 2)),
    "matmul inner sizes vector": lambda m: m.matmul(_t(m, 2, 3), _t(m, 4)),
    "matmul batches": lambda m: m.matmul(_t(m, 2, 3, 4), _t(m, 3, 4, 5)),
    "matmul dtypes of two vectors": lambda m: m.matmul(_t(m, 3), _t(m, 3, dtype="float64")),
    "matmul dtypes matrix vector": lambda m: m.matmul(_t(m, 2, 3), _t(m, 3, dtype="float64")),
    "matmul dtypes batch": lambda m: m.matmul(_t(m, 2, 3), _t(m, 2, 3, 2, dtype="float64")),
    "matmul dtypes matrices": lambda m: m.matmul(_t(m, 2, 3), _t(m, 3, 2, dtype="float64")),
    "matmul bool": lambda m: m.matmul(_t(m, 2, 3, dtype="bool"), _t(m, 3, 2, dtype="bool")),
    "matmul bool vector": lambda m: m.matmul(_t(m, 2, 3, dtype="bool"), _t(m, 3, dtype="bool")),
    "matmul bool batch": lambda m: m.matmul(_t(m, 2, 3, dtype="bool"), _t(m, 2, 3, 2, dtype="bool")),
    "matmul bool vectors": lambda m: m.matmul(_t(m, 3, dtype="bool"), _t(m, 3, dtype="bool")),
    "mm 1-d": lambda m: m.mm(_t(m, 3), _t(m, 3, 2)),
    "mm 3-d": lambda m: m.mm(_t(m, 2, 3), _t(m, 1, 3, 2)),
    "mm not a tensor": lambda m: m.mm(_t(m, 2, 3), [[1.0]]),
    "bmm 2-d": lambda m: m.bmm(_t(m, 2, 3), _t(m, 2, 3, 2)),
    "bmm batch sizes": lambda m: m.bmm(_t(m, 2, 2, 3), _t(m, 3, 3, 2)),
    "bmm 2-d second": lambda m: m.bmm(_t(m, 2, 2, 3), _t(m, 3, 2)),
    "bmm inner sizes": lambda m: m.bmm(_t(m, 2, 2, 3), _t(m, 2, 4, 2)),
    "bmm batch and inner sizes": lambda m: m.bmm(_t(m, 2, 2, 3), _t(m, 3, 4, 2)),
    "bmm empty batch sizes": lambda m: m.bmm(_t(m, 0, 2, 3), _t(m, 1, 3, 2)),
    "bmm batch sizes and dtypes": lambda m: m.bmm(_t(m, 2, 2, 3), _t(m, 3, 3, 2, dtype="float64")),
    "bmm bool": lambda m: m.bmm(_t(m, 2, 2, 3, dtype="bool"), _t(m, 2, 3, 2, dtype="bool")),
    "mv dims": lambda m: m.mv(_t(m, 2, 3), _t(m, 3, 1)),
    "mv sizes": lambda m: m.mv(_t(m, 2, 3), _t(m, 4)),
    "mv dtypes": lambda m: m.mv(_t(m, 2, 3), _t(m, 3, dtype="float64")),
    "mv bool": lambda m: m.mv(_t(m, 2, 3, dtype="bool"), _t(m, 3, dtype="bool")),
    "dot 2-d": lambda m: m.dot(_t(m, 2, 3), _t(m, 3)),
    "dot sizes": lambda m: m.dot(_t(m, 2), _t(m, 3)),
    "dot dtypes": lambda m: m.dot(_t(m, 3), _t(m, 3, dtype="float64")),
    "dot bool empty": lambda m: m.dot(_t(m, 0, dtype="bool"), _t(m, 0, dtype="bool")),
    "vdot 2-d": lambda m: m.vdot(_t(m, 2, 3), _t(m, 3)),
    "outer 2-d": lambda m: m.outer(_t(m, 2, 3), _t(m, 3)),
    "outer 2-d second": lambda m: m.outer(_t(m, 3), _t(m, 2, 3)),
    "inner last sizes": lambda m: m.inner(_t(m, 2, 3), _t(m, 4)),
    "inner dtypes": lambda m: m.inner(_t(m, 3), _t(m, 3, dtype="float64")),
    "addmm input shape": lambda m: m.addmm(_t(m, 3, 3), _t(m, 2, 3), _t(m, 3, 2)),
    "addmm input dtype": lambda m: m.addmm(_t(m, 2, 2, dtype="float64"), _t(m, 2, 3), _t(m, 3, 2)),
    "addmm operand dtypes": lambda m: m.addmm(_t(m, 2, 2), _t(m, 2, 3, dtype="float64"), _t(m, 3, 2)),
    "addmm 1-d": lambda m: m.addmm(_t(m, 2, 2), _t(m, 3), _t(m, 3, 2)),
    "baddbmm input dtype": lambda m: m.baddbmm(_t(m, 2, 2, 2, dtype="float64"), _t(m, 2, 2, 3), _t(m, 2, 3, 2)),
    "baddbmm input shape": lambda m: m.baddbmm(_t(m, 3, 2, 2), _t(m, 2, 2, 3), _t(m, 2, 3, 2)),
    "baddbmm batch sizes": lambda m: m.baddbmm(_t(m, 2, 2, 2), _t(m, 2, 2, 3), _t(m, 3, 3, 2)),
    "baddbmm inner sizes": lambda m: m.baddbmm(_t(m, 2, 2, 2), _t(m, 2, 2, 3), _t(m, 2, 4, 2)),
    "addbmm batch sizes": lambda m: m.addbmm(_t(m, 2, 2), _t(m, 2, 2, 3), _t(m, 3, 3, 2)),
    "addbmm inner sizes": lambda m: m.addbmm(_t(m, 2, 2), _t(m, 2, 2, 3), _t(m, 2, 4, 2)),
    "addbmm input shape": lambda m: m.addbmm(_t(m, 3, 3), _t(m, 2, 2, 3), _t(m, 2, 3, 2)),
    "addbmm input dtype": lambda m: m.addbmm(_t(m, 2, 2, dtype="float64"), _t(m, 2, 2, 3), _t(m, 2, 3, 2)),
    "addmv 2-d input": lambda m: m.addmv(_t(m, 2, 1), _t(m, 2, 3), _t(m, 3)),
    "addmv input size": lambda m: m.addmv(_t(m, 3), _t(m, 2, 3), _t(m, 3)),
    "addmv input dtype": lambda m: m.addmv(_t(m, 2, dtype="float64"), _t(m, 2, 3), _t(m, 3)),
    "addr 2-d vector": lambda m: m.addr(_t(m, 2, 3), _t(m, 2, 1), _t(m, 3)),
    "addr input shape": lambda m: m.addr(_t(m, 3, 3), _t(m, 2), _t(m, 3)),
    "addr bool beta": lambda m: m.addr(_t(m, 2, 3), _t(m, 2), _t(m, 3), beta=True),
    "addr float alpha integers": lambda m: m.addr(_t(m, 2, 3, dtype="int64"), _t(m, 2, dtype="int64"),
                                                  _t(m, 3, dtype="int64"), alpha=0.5),
    "tensordot dtypes": lambda m: m.tensordot(_t(m, 2, 3), _t(m, 3, 2, dtype="float64"), 1),
    "tensordot bool full contraction": lambda m: m.tensordot(_t(m, 2, 3, dtype="bool"), _t(m, 2, 3, dtype="bool")),
    "kron ok of 0-d": lambda m: m.kron(_t(m), _t(m)),
}


# refusals ember words its own way (the type PyTorch's; the words both messages share, where any)
OWN_WORDS = {"addbmm input shape": "", "addmm input shape": "", "addr input shape": "", "baddbmm input shape": "",
             "addmm 1-d": "", "mm 1-d": "", "mm 3-d": "", "addr 2-d vector": "addr: ",
             "dot sizes": "inconsistent tensor size, expected tensor [2] and src [3] to have the same number of elements",
             "matmul inner sizes": "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)",
             "matmul inner sizes vector": ""}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_each_refusal_of_the_products_as_torch(case):
    outcomes = []
    for m in (ember, torch):
        try:
            r = REFUSALS[case](m)
            outcomes.append(("ok", tuple(r.shape), str(r.dtype).split(".")[-1]))
        except Exception as e:  # noqa: BLE001
            outcomes.append((type(e).__name__, str(e).split("\n")[0]))
    (e, t) = outcomes
    if case in OWN_WORDS:
        assert e[0] == t[0] != "ok", outcomes
        assert OWN_WORDS[case] in e[1] and OWN_WORDS[case] in t[1], outcomes
    else:
        assert e == t


def test_chain_matmul_of_each_count_and_its_refusals_as_torch():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 1)]]
    for count in (1, 2, 3):
        outs = []
        for m in (ember, torch):
            ts = [m.tensor(a, requires_grad=True) for a in arrays[:count]]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                out = m.chain_matmul(*ts)
            grads = m.autograd.grad(out.sum(), ts)
            outs.append([out.detach().numpy(), *[g.numpy() for g in grads]])
        for x, y in zip(*outs):
            np.testing.assert_allclose(x, y, rtol=1e-12)
    for args in [(), ((2,),), ((2, 3), (3, 4, 1))]:
        outcomes = []
        for m in (ember, torch):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    m.chain_matmul(*[m.ones(s) for s in args])
                outcomes.append("ok")
            except Exception as e:  # noqa: BLE001
                outcomes.append((type(e).__name__, str(e).split("\n")[0]))
        assert outcomes[0] == outcomes[1], args


# calls that do not match: the products with PyTorch's second, out_dtype overload list both where its parser finds
# each plausible for the count of the arguments (keywords included); a call only the first takes names the argument
OVERLOAD_MISMATCHES = {
    "baddbmm list and beta": lambda m: m.baddbmm(_t(m, 2, 2, 2), [[1.0]], _t(m, 2, 2, 2), beta=2),
    "baddbmm int and alpha": lambda m: m.baddbmm(_t(m, 2, 2, 2), _t(m, 2, 2, 2), 3, alpha=2),
    "baddbmm int input and beta": lambda m: m.baddbmm(1, _t(m, 2, 2, 2), _t(m, 2, 2, 2), beta=2),
    "baddbmm str, beta and alpha": lambda m: m.baddbmm(_t(m, 2, 2, 2), "a", _t(m, 2, 2, 2), beta=1, alpha=2),
    "baddbmm by keyword with beta": lambda m: m.baddbmm(_t(m, 2, 2, 2), batch1=[[1.0]], batch2=_t(m, 2, 2, 2),
                                                        beta=2),
    "baddbmm all by keyword": lambda m: m.baddbmm(input=3, batch1=_t(m, 2, 2, 2), batch2=_t(m, 2, 2, 2), beta=2),
    "baddbmm numpy array and beta": lambda m: m.baddbmm(_t(m, 2, 2, 2), np.ones((2, 2, 2)), _t(m, 2, 2, 2), beta=1),
    "addmm list and beta": lambda m: m.addmm(_t(m, 2, 2), [[1.0]], _t(m, 2, 2), beta=2),
    "baddbmm list alone": lambda m: m.baddbmm(_t(m, 2, 2, 2), [[1.0]], _t(m, 2, 2, 2)),
    "baddbmm by keyword alone": lambda m: m.baddbmm(_t(m, 2, 2, 2), batch1=[[1.0]], batch2=_t(m, 2, 2, 2)),
    "addbmm list and beta": lambda m: m.addbmm(_t(m, 2, 2), [[1.0]], _t(m, 2, 2, 2), beta=2),
    "addmv list and beta": lambda m: m.addmv(_t(m, 2), [[1.0]], _t(m, 2), beta=2),
    "baddbmm method list and beta": lambda m: _t(m, 2, 2, 2).baddbmm([[1.0]], _t(m, 2, 2, 2), beta=2),
}


@pytest.mark.parametrize("case", sorted(OVERLOAD_MISMATCHES))
def test_a_call_matching_no_overload_is_refused_as_pytorchs_parser(case):
    """PyTorch's "invalid combination of arguments" (its whole message) where two overloads are plausible: ember
    named the argument as for a function of one overload."""
    messages = []
    for m in (ember, torch):
        with pytest.raises(TypeError) as info:
            OVERLOAD_MISMATCHES[case](m)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


OUT_CALLS = {"baddbmm": lambda m, grad, out: m.baddbmm(m.ones(2, 2, 3), m.ones(2, 2, 4, requires_grad=grad),
                                                        m.ones(2, 4, 3), out=out),
             "addbmm": lambda m, grad, out: m.addbmm(m.ones(3), m.ones(2, 2, 4, requires_grad=grad), m.ones(2, 4, 3),
                                                      out=out),
             "tensordot": lambda m, grad, out: m.tensordot(m.ones(2, 3, requires_grad=grad), m.ones(3, 4), 1, out=out)}
OUTS = {"empty": lambda m: m.empty(0), "float64": lambda m: m.empty(0, dtype=m.float64),
        "int64": lambda m: m.empty(0, dtype=m.int64), "filled, another shape": lambda m: m.zeros(5),
        "the result's shape": lambda m: m.zeros(2, 4), "requiring grad": lambda m: m.empty(0, requires_grad=True),
        "requiring grad, not a leaf": lambda m: m.zeros(2, 4, requires_grad=True) * 1}


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_of_baddbmm_addbmm_and_tensordot_as_torch(name, grad):
    """``out=`` (ember had none): the result written into ``out`` and returned, an empty one resized silently, a
    filled one of another shape with PyTorch's warning (addbmm's without); PyTorch's refusal of another dtype
    (baddbmm's C++ type names, addbmm's addmm check of out against the batches, tensordot's own words); under
    autograd baddbmm's and addbmm's refusal, tensordot's differentiable copy (refused into an ``out`` that requires
    grad and has another shape, in its words)."""
    for kind, make_out in OUTS.items():
        outcomes = []
        for m in (ember, torch):
            out = make_out(m)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    r = OUT_CALLS[name](m, grad, out)
                    outcomes.append((r is out, tuple(r.shape), str(r.dtype).split(".")[-1], r.sum().item(),
                                     r.requires_grad, None if r.grad_fn is None else "node"))
                except RuntimeError as e:
                    outcomes.append(str(e))
            outcomes.append([str(w.message).split(",")[0] for w in caught if "resized" in str(w.message)])
        assert outcomes[:2] == outcomes[2:], (kind, outcomes)


OUT_DTYPE_CALLS = {
    "mm": lambda m: m.mm(_t(m, 2, 4), _t(m, 4, 3), m.float32),
    "mm by keyword, bfloat16": lambda m: m.mm(_t(m, 2, 4, dtype="bfloat16"), _t(m, 4, 3, dtype="bfloat16"),
                                              out_dtype=m.float32),
    "mm of mismatched shapes": lambda m: m.mm(_t(m, 2, 4), _t(m, 3, 3), m.float32),
    "bmm": lambda m: m.bmm(_t(m, 2, 2, 4), _t(m, 2, 4, 3), m.float16),
    "addmm": lambda m: m.addmm(_t(m, 2, 3), _t(m, 2, 4), _t(m, 4, 3), m.float32),
    "addmm with beta": lambda m: m.addmm(_t(m, 2, 3), _t(m, 2, 4), _t(m, 4, 3), m.float32, beta=2),
    "addmm by keyword": lambda m: m.addmm(_t(m, 2, 3), _t(m, 2, 4), _t(m, 4, 3), out_dtype=m.float32),
    "baddbmm": lambda m: m.baddbmm(_t(m, 2, 2, 3), _t(m, 2, 2, 4), _t(m, 2, 4, 3), m.float32),
    "mm, a str": lambda m: m.mm(_t(m, 2, 4), _t(m, 4, 3), "x"),
    "mm, a list operand": lambda m: m.mm(_t(m, 2, 4), [[1.0]], m.float32),
    "baddbmm, a str by keyword": lambda m: m.baddbmm(_t(m, 2, 2, 3), _t(m, 2, 2, 4), _t(m, 2, 4, 3), out_dtype="x"),
}


@pytest.mark.parametrize("case", sorted(OUT_DTYPE_CALLS))
def test_the_out_dtype_overload_is_refused_on_the_cpu_as_torch(case):
    """PyTorch's ``out_dtype`` overload of mm, bmm, addmm and baddbmm has no CPU kernel: its NotImplementedError
    (ember's message is PyTorch's first sentences, without its list of the backends that have one); a value that is
    no dtype, or an operand that is no tensor beside one, its parser's TypeError listing both overloads (ember had
    no such parameter)."""
    outcomes = []
    for m in (ember, torch):
        try:
            OUT_DTYPE_CALLS[case](m)
            outcomes.append(("ok",))
        except (TypeError, NotImplementedError) as e:
            outcomes.append((type(e).__name__, str(e)))
    (e, t) = outcomes
    assert e[0] == t[0] != "ok", outcomes
    assert t[1].startswith(e[1]) and (e[0] == "TypeError") == (e[1] == t[1]), outcomes
    if e[0] == "NotImplementedError":
        assert "'CPU' backend" in e[1]
