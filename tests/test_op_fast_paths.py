"""The common case of a small elementwise op without ``Node.apply``'s general path (``graph.apply_same`` for the
binary operators, ``graph.apply_one`` for neg and the one-input math ops): the same result tensor, node, edges,
shapes and saved versions as ``apply`` gives; and every case it declines (broadcasting, mixed dtypes, half
precision, 0-d and empty tensors, Python numbers, subclasses, anomaly mode, saved-tensor hooks, forward AD,
inference mode) still PyTorch's values, gradients and ``grad_fn`` names."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
from ember import _meta
from ember.autograd import graph
from ember.autograd.graph import apply_one, apply_same
from ember.ops import elementwise as E
from ember.ops import unary as U

BINARY = [(E.Add, operator.add, False), (E.Sub, operator.sub, False), (E.Mul, operator.mul, True),
          (E.Div, operator.truediv, True)]
UNARY = [U.Neg, U.Tanh, U.Relu, U.Exp, U.Sigmoid, U.Sqrt]
SLOTS = [s for s in ember.Tensor.__slots__ if s not in ("__weakref__", "__dict__")]


def _assert_as_applys(got, made, source) -> None:
    """``got``, an op's result made without its node, is ``made``, the node's ``apply`` result on the same input
    ``source``: the same bytes, shape, strides and dtype, and the same Tensor fields (a new version counter)."""
    assert got._data.shape == made._data.shape and got._data.strides == made._data.strides
    assert got._data.tobytes() == made._data.tobytes() and got._data.dtype == made._data.dtype
    assert got.requires_grad == made.requires_grad and (got.grad_fn is None) == (made.grad_fn is None)
    assert got.is_inference() == made.is_inference() and got._base is None and got._vc is not source._vc
    for s in SLOTS:
        if s not in ("_data", "_grad_fn", "_vc") and hasattr(made, s):
            assert getattr(got, s) == getattr(made, s), s


@pytest.fixture(autouse=True)
def _no_meta_yet(monkeypatch):
    # (the fast paths are off for good once a process has made a meta tensor, as an earlier test may have)
    monkeypatch.setattr(_meta, "made", [False])
    monkeypatch.setattr(graph, "_meta_made", _meta.made)


def _inputs(kind: str, dtype):
    """Two inputs of one shape and dtype: leaves that require grad, a leaf with one that does not, results of ops,
    views, one tensor twice, or tensors without grad."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3)).astype(dtype)
    b = (np.abs(rng.standard_normal((2, 3))) + 0.5).astype(dtype)
    x, y = ember.tensor(a, requires_grad=kind != "plain"), ember.tensor(b, requires_grad=kind != "plain")
    if kind == "one needs grad":
        y = y.detach()
    elif kind == "results":
        x, y = x * 2.0, y.exp()
    elif kind == "views":
        x, y = x.view(3, 2).view(2, 3), y.t().t()
    elif kind == "one tensor twice":
        y = x
    return x, y


def _same_node(fast_result, made_result) -> None:
    """The node fields ``apply`` sets, to the same values: edges and saved input arrays the same objects, a saved
    output each result's own array with its own version counter."""
    fast, made = fast_result.grad_fn, made_result.grad_fn
    assert type(fast) is type(made)
    assert fast.needs_input_grad == made.needs_input_grad
    assert len(fast.next_edges) == len(made.next_edges)
    for f, m in zip(fast.next_edges, made.next_edges):
        assert f is m is None or (f[0] is m[0] and f[1] == m[1])
    assert fast.input_shapes == made.input_shapes
    assert vars(fast) == vars(made)

    def same(f, m) -> bool:
        return f is m or (m is made_result._data and f is fast_result._data) or (m is made_result._vc and
                                                                                 f is fast_result._vc)

    assert len(fast.saved) == len(made.saved) and all(same(f, m) for f, m in zip(fast.saved, made.saved))
    assert len(fast._saved_versions) == len(made._saved_versions)
    for f, m in zip(fast._saved_versions, made._saved_versions):
        assert same(f[0], m[0]) and f[1] == m[1] and same(f[2], m[2])
        assert (f[3][0] is m[3][0] or f[3][0] == m[3][0]) and f[3][1] == m[3][1]
    assert fast.seq == made.seq + 1


def _same_result(fast, made, record: bool) -> None:
    assert [hasattr(fast, s) for s in SLOTS] == [hasattr(made, s) for s in SLOTS]
    for s in SLOTS:
        if s not in ("_data", "_grad_fn", "_vc") and hasattr(made, s):
            assert getattr(fast, s) == getattr(made, s), s
    assert fast._data.__class__ is np.ndarray and fast._data.dtype == made._data.dtype
    assert fast._data.tobytes() == made._data.tobytes() and fast._data.strides == made._data.strides
    assert fast._vc == [0] and (fast._grad_fn is not None) is record and fast._requires_grad is record


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["leaves", "one needs grad", "results", "views", "one tensor twice", "plain",
                                  "no_grad"])
@pytest.mark.parametrize("op", BINARY, ids=lambda o: o[0].__name__)
def test_binary_fast_path_is_applys(op, kind, dtype):
    cls, compute, saves = op
    x, y = _inputs(kind, dtype)
    record = kind not in ("plain", "no_grad")
    with ember.no_grad() if kind == "no_grad" else ember.enable_grad():
        made = cls.apply(x, y)
        fast = apply_same(cls, compute, x, y, saves)
    assert fast is not None
    _same_result(fast, made, record)
    if record:
        _same_node(fast, made)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["leaves", "results", "views", "plain", "no_grad"])
@pytest.mark.parametrize("cls", UNARY, ids=lambda c: c.__name__)
def test_unary_fast_path_is_applys(cls, kind, dtype):
    x, _ = _inputs(kind, dtype)
    x = x.abs() if cls is U.Sqrt else x
    record = kind not in ("plain", "no_grad")
    with ember.no_grad() if kind == "no_grad" else ember.enable_grad():
        made = cls.apply(x)
        fast = apply_one(cls, x)
    assert fast is not None
    _same_result(fast, made, record)
    if record:
        _same_node(fast, made)
        # a saved output is each result's own array, with each result's own version counter
        for node, result in ((fast.grad_fn, fast), (made.grad_fn, made)):
            for entry in node._saved_versions:
                assert entry[0] is result._vc and entry[2] is result._data


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["leaves", "results", "views", "plain", "no_grad"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_full_sum_fast_path_is_applys(keepdim, kind, dtype):
    from ember.ops.reduction import Sum

    x, _ = _inputs(kind, dtype)
    record = kind not in ("plain", "no_grad")
    with ember.no_grad() if kind == "no_grad" else ember.enable_grad():
        made = Sum.apply(x, axes=None, keepdim=keepdim)
        fast = apply_one(Sum, x, None, keepdim)
    assert fast is not None
    _same_result(fast, made, record)
    if record:
        _same_node(fast, made)


@pytest.mark.parametrize("case", ["float32", "keepdim", "dim", "dtype", "int64", "bool", "0-d", "empty", "float16",
                                  "Parameter"])
def test_sums_are_pytorchs(case):
    a = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    got = {}
    for fw in (ember, torch):
        if case in ("int64", "bool"):
            x = fw.tensor(a > 0 if case == "bool" else (a * 10).astype(np.int64))
        elif case == "0-d":
            x = fw.tensor(a[0, 0], requires_grad=True)
        elif case == "empty":
            x = fw.zeros(0, 4, requires_grad=True)
        elif case == "float16":
            x = fw.tensor(a, dtype=fw.float16, requires_grad=True)
        elif case == "Parameter":
            x = fw.nn.Parameter(fw.tensor(a))
        else:
            x = fw.tensor(a, requires_grad=True)
        out = (x.sum(None, True) if case == "keepdim" else x.sum(1) if case == "dim" else
               x.sum(dtype=fw.float64) if case == "dtype" else x.sum())
        if out.requires_grad:
            out.backward(fw.ones_like(out))
        got[fw] = (out.detach(), type(out.grad_fn).__name__, x.grad)
    (eo, en, eg), (to, tn, tg) = got[ember], got[torch]
    assert str(eo.dtype).split(".")[1] == str(to.dtype).split(".")[1] and tuple(eo.shape) == tuple(to.shape)
    assert_close(eo.float(), to.float())
    assert en == tn and (eg is None) == (tg is None)
    if eg is not None:
        assert_close(eg.float(), tg.float())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["leaves", "one needs grad", "results", "views", "one tensor twice", "plain",
                                  "no_grad"])
@pytest.mark.parametrize(("op", "call"), [
    (BINARY[0], lambda x, y: x + y), (BINARY[0], lambda x, y: x.add(y)), (BINARY[1], lambda x, y: x - y),
    (BINARY[1], lambda x, y: x.sub(y, alpha=1)), (BINARY[2], lambda x, y: x * y), (BINARY[3], lambda x, y: x / y),
    (BINARY[3], lambda x, y: x.div(y, rounding_mode=None))], ids=lambda c: getattr(c, "__name__", None))
def test_operators_of_two_plain_tensors_are_applys(op, call, kind, dtype):
    """The operators (and their methods) of two plain tensors take the common case from the method itself
    (``_tensor_methods/elementwise.py``): the result and node are still ``apply``'s, field by field."""
    cls = op[0]
    x, y = _inputs(kind, dtype)
    record = kind not in ("plain", "no_grad")
    with ember.no_grad() if kind == "no_grad" else ember.enable_grad():
        made = cls.apply(x, y)
        fast = call(x, y)
    _same_result(fast, made, record)
    if record:
        _same_node(fast, made)


@pytest.mark.parametrize("case", ["alpha=1.0", "alpha=True", "alpha=2", "alpha=tensor", "rounding_mode=floor",
                                  "rounding_mode=trunc", "rounding_mode=bad"])
def test_operator_methods_other_arguments_are_pytorchs(case):
    """An ``alpha`` other than the int 1, or a ``rounding_mode``, leaves the methods' common case for the op's
    function: PyTorch's values, gradients, ``grad_fn`` names and errors."""
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32) + 3
    got = {}
    name, value = case.split("=")
    for fw in (ember, torch):
        # (a rounded quotient's node is left out: ember records none, PyTorch a DivBackward2 of zero gradients)
        x, y = fw.tensor(a, requires_grad=name == "alpha"), fw.tensor(b, requires_grad=name == "alpha")
        if name == "alpha":
            alpha = {"1.0": 1.0, "True": True, "2": 2, "tensor": fw.tensor(1.0)}[value]
            calls = (("add", {"alpha": alpha}), ("sub", {"alpha": alpha}))
        else:
            calls = (("div", {"rounding_mode": value}),)
        for method, kwargs in calls:
            try:
                out = getattr(x, method)(y, **kwargs)
            except (RuntimeError, TypeError) as e:
                got.setdefault(fw, []).append((type(e), None, None))
                continue
            grads = fw.autograd.grad(out.sum(), (x, y), allow_unused=True) if out.requires_grad else None
            got.setdefault(fw, []).append((out.detach().numpy(), type(out.grad_fn).__name__, grads))
    for (eo, en, eg), (to, tn, tg) in zip(got[ember], got[torch]):
        if isinstance(to, type):
            assert eo is to
            continue
        np.testing.assert_array_equal(eo, to)
        assert en == tn
        assert (eg is None) == (tg is None)
        for e, t in zip(eg or (), tg or ()):
            assert (e is None) == (t is None)
            if e is not None:
                assert_close(e, t)


def _declined_binary():
    """(name, x, y): operands ``apply_same`` declines (None), the operators then take ``apply``'s path."""
    rng = np.random.default_rng(4)
    f32 = rng.standard_normal((2, 3)).astype(np.float32)
    return [
        ("broadcasting", f32, f32[0]),
        ("mixed dtypes", f32, f32.astype(np.float64)),
        ("float16", f32.astype(np.float16), f32.astype(np.float16)),
        ("bfloat16", "bfloat16", "bfloat16"),
        ("int64", np.arange(6).reshape(2, 3) + 1, np.arange(6).reshape(2, 3) + 2),
        ("0-d", np.float32(1.5), np.float32(2.5)),
        ("empty", np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)),
    ]


@pytest.mark.parametrize("case", _declined_binary(), ids=lambda c: c[0])
@pytest.mark.parametrize("op", BINARY, ids=lambda o: o[0].__name__)
def test_binary_declined_cases_are_pytorchs(op, case):
    cls, compute, saves = op
    name, a, b = case
    results = {}
    for fw in (ember, torch):
        if name == "bfloat16":
            x = fw.tensor([[1.5, -2.0, 3.25]], dtype=fw.bfloat16, requires_grad=True)
            y = fw.tensor([[0.5, 4.0, -1.25]], dtype=fw.bfloat16, requires_grad=True)
        else:
            grad = np.dtype(a.dtype).kind == "f"
            x, y = fw.tensor(np.array(a), requires_grad=grad), fw.tensor(np.array(b), requires_grad=grad)
        if fw is ember:
            assert apply_same(cls, compute, x, y, saves) is None
        out = compute(x, y)
        if out.requires_grad:
            out.float().sum().backward()
            results[fw] = (out, type(out.grad_fn).__name__, x.grad, y.grad)
        else:
            results[fw] = (out, None, None, None)
    (eo, en, egx, egy), (to, tn, tgx, tgy) = results[ember], results[torch]
    assert eo.dtype == getattr(ember, str(to.dtype).split(".")[1]) and tuple(eo.shape) == tuple(to.shape)
    # (half precision: the quotient's gradient by the divisor is another formula than PyTorch's, a last bit apart)
    tol = dict(rtol=2e-3) if name in ("float16", "bfloat16") else {}
    assert_close(eo.float(), to.float(), **tol)
    assert en == tn
    for eg, tg in ((egx, tgx), (egy, tgy)):
        assert (eg is None) == (tg is None)
        if eg is not None:
            assert_close(eg.float(), tg.float(), **tol)


@pytest.mark.parametrize(("op", "case"), [(op, case) for op in ("add", "sub", "mul", "div") for case in (
    "python number", "number on the left", "Parameter", "hooks on the inputs", "alpha") if case != "alpha" or
    op in ("add", "sub")])
def test_binary_other_operands_are_pytorchs(op, case):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32) + 3
    got = {}
    for fw in (ember, torch):
        x, y = fw.tensor(a, requires_grad=True), fw.tensor(b, requires_grad=True)
        seen = []
        if case == "Parameter":
            x = fw.nn.Parameter(fw.tensor(a))
        elif case == "hooks on the inputs":
            x.register_hook(lambda g, seen=seen: seen.append(g.clone()) or g * 2)
            y.register_hook(lambda g, seen=seen: seen.append(g.clone()))
        fn = getattr(operator, {"div": "truediv"}.get(op, op))
        if case == "python number":
            out = fn(x, 2.5)
        elif case == "number on the left":
            out = fn(2.5, x)
        elif case == "alpha":
            out = getattr(fw, op)(x, y, alpha=2)
        else:
            out = fn(x, y)
        out.backward(fw.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)))
        got[fw] = (out, type(out.grad_fn).__name__, x.grad, y.grad, seen)
    (eo, en, egx, egy, es), (to, tn, tgx, tgy, ts) = got[ember], got[torch]
    np.testing.assert_array_equal(eo.detach().numpy(), to.detach().numpy())
    assert en == tn
    for eg, tg in ((egx, tgx), (egy, tgy)):
        assert (eg is None) == (tg is None)
        if eg is not None:  # (close: the quotient's gradient by the divisor is another formula than PyTorch's)
            assert_close(eg, tg)
    assert len(es) == len(ts)
    for e, t in zip(es, ts):
        assert_close(e, t)


def test_same_shape_floats_match_pytorch_bit_for_bit():
    """The fast path's results and gradients (float32 and float64), and its node names and edges, as PyTorch's."""
    rng = np.random.default_rng(6)
    for dtype in (np.float32, np.float64):
        a, b = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((3, 4)).astype(dtype) + 3
        got = {}
        for fw in (ember, torch):
            x, y = fw.tensor(a, requires_grad=True), fw.tensor(b, requires_grad=True)
            outs = [x + y, x - y, x * y, x / y, -x, fw.relu(x), x * x]
            names = [type(o.grad_fn).__name__ for o in outs]
            edges = [[type(f).__name__ if f is not None else None for f, _ in o.grad_fn.next_functions] for o in outs]
            sum(o.sum() for o in outs).backward()
            got[fw] = ([o.detach().numpy() for o in outs], names, edges, x.grad.numpy(), y.grad.numpy())
        (eo, en, ee, egx, egy), (to, tn, te, tgx, tgy) = got[ember], got[torch]
        for e, t in zip(eo, to):
            np.testing.assert_array_equal(e, t)
        assert en == tn and ee == te
        np.testing.assert_array_equal(egx, tgx)
        np.testing.assert_array_equal(egy, tgy)


@pytest.mark.parametrize("recorded", [True, False])
def test_binary_fast_path_computes_quietly_under_the_users_error_state(recorded):
    """``x * y`` overflowing, ``x / y`` of 0 / 0, ``x - y`` of inf - inf: inf and nan silently, as PyTorch's, under a
    NumPy error state that raises on everything, which ember leaves as the user set it; also where the fast path's
    own error-state context is entered already (``_backend.quiet_run``: a finalizer's op inside one, another thread
    inside a large one), where it computes the same way after ``Context.run``'s RuntimeError."""
    from ember import _backend

    big = [3e38, 0.0, float("inf")]
    cases = [(operator.mul, [3e38, 0.0, 1.0]), (operator.truediv, [0.0, 0.0, 1.0]), (operator.sub, big),
             (operator.add, [-v for v in big])]
    with np.errstate(all="raise"):
        for entered in (False, True):
            for op, other in cases:
                got = []
                for fw in (ember, torch):
                    x = fw.tensor(big, requires_grad=recorded)
                    y = fw.tensor(other, requires_grad=recorded)
                    run = _backend._quiet_context.run if entered and fw is ember else (lambda f, *a: f(*a))
                    out = run(op, x, y)
                    assert out.requires_grad is recorded
                    got.append(out.detach().numpy())
                np.testing.assert_array_equal(got[0], got[1])
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}


def test_binary_fast_path_from_threads_at_once():
    """Two threads adding large tensors at once (NumPy lets go of the GIL inside the add, so one may find the
    fast path's error-state context entered by the other): every result is the sum, computed quietly."""
    import threading

    a = ember.full((200_000,), 3e38)
    results: list = []

    def work():
        for _ in range(40):
            results.append((a + a)._data)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 80 and all(np.isinf(r).all() for r in results)


def test_declined_states(monkeypatch):
    """Anomaly mode, saved-tensor hooks (for an op that saves), forward AD, inference mode, meta tensors and tensor
    subclasses take ``apply``'s path; the ops there are still PyTorch's."""
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = ember.tensor([[0.5, -1.0], [2.0, 8.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (anomaly mode warns that it is on)
        with ember.autograd.detect_anomaly():
            assert apply_same(E.Add, operator.add, x, y) is None
            out = x * y
            assert out.grad_fn._trace is not None  # (the creation stack anomaly mode records)
    packed = []
    with ember.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        assert apply_same(E.Mul, operator.mul, x, y, True) is None
        assert apply_same(E.Add, operator.add, x, y) is not None  # (add saves nothing: no hook to call)
        (x * y).sum().backward()
    assert len(packed) == 2
    import ember.autograd.forward_ad as fwad

    with fwad.dual_level():
        d = fwad.make_dual(x.detach(), ember.ones(2, 2))
        assert apply_same(E.Mul, operator.mul, d, y, True) is None and apply_one(U.Tanh, d) is None
        t = fwad.unpack_dual(d * y).tangent
        np.testing.assert_array_equal(t.numpy(), y.detach().numpy())
    with ember.inference_mode():
        assert apply_same(E.Add, operator.add, x, y) is None and apply_one(U.Neg, x) is None
    p = ember.nn.Parameter(ember.ones(2, 2))
    assert apply_one(U.Neg, p) is None
    assert type(-p) is ember.Tensor and type((-p).grad_fn).__name__ == "NegBackward0"
    for bad in (ember.tensor(2.0, requires_grad=True), ember.zeros(0, 2, requires_grad=True),
                ember.ones(2, dtype=ember.float16, requires_grad=True), ember.ones(2, dtype=ember.int64)):
        assert apply_one(U.Neg, bad) is None and apply_one(U.Tanh, bad) is None
    monkeypatch.setattr(graph, "_meta_made", [True])
    m = ember.ones(2, 2, device="meta", requires_grad=True)
    assert apply_same(E.Add, operator.add, m, y) is None and apply_one(U.Neg, m) is None
    assert apply_same(E.Add, operator.add, x, m) is None
    # (a meta tensor made: the ordinary tensors keep the path, as a model built on the meta device then trained)
    assert apply_same(E.Add, operator.add, x, y) is not None and apply_one(U.Neg, x) is not None
    assert (m + m).grad_fn is not None and (m + m).is_meta and (-m).is_meta
    made = [True]  # (as a meta tensor made anywhere sets the flag every module imported: PyTorch's device check)
    monkeypatch.setattr(_meta, "made", made)
    monkeypatch.setattr(E, "_meta_made", made)
    with pytest.raises(RuntimeError, match="not on the expected device meta"):
        m + y  # (PyTorch's error: a CPU tensor of some dimensions beside a meta one)


@pytest.mark.parametrize("n", [0, 1, 5, 64])
def test_arange_of_one_int_is_the_general_paths(n):
    """``arange(n)`` of a plain non-negative int (a position index) is made without the argument table: the same
    tensor as the general path's (``arange(end=n)``) and PyTorch's, also with ``requires_grad`` (PyTorch's error for
    an integer tensor) and on the meta device."""
    fast, general = ember.arange(n), ember.arange(end=n)
    for t in (fast, general):
        assert t.dtype is ember.int64 and t.stride() == (1,) and t.is_leaf and not t.requires_grad
    np.testing.assert_array_equal(fast.numpy(), general.numpy())
    assert fast.tolist() == torch.arange(n).tolist()
    for flag in ("c_contiguous", "writeable", "owndata"):
        assert getattr(fast._data.flags, flag) == getattr(general._data.flags, flag)
    assert fast._data.strides == general._data.strides
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="floating point"):
            m.arange(n, requires_grad=True)
    assert ember.arange(n, device="meta").is_meta and tuple(ember.arange(n, device="meta").shape) == (n,)
    assert ember.arange(n, dtype=ember.float32).dtype is ember.float32  # (a dtype: the general path)


def test_attention_products_at_one_thread_are_numpys(monkeypatch):
    """``stack_matmul`` with ember and OpenBLAS on one thread goes straight to NumPy's matmul, which every branch it
    skips returned there: the same bits and errors for stacks, a stack of one, broadcasting, mixed dtypes."""
    from ember import _parallel
    from ember._kernels.policy import policy

    monkeypatch.setattr(_parallel, "_num_threads", 1)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((1, 4, 16, 8)).astype(np.float32), rng.standard_normal((1, 4, 8, 16)).astype(np.float32)
    cases = [(a, b), (a[0], b[0]), (a, b[0, 0]), (a, b.astype(np.float64)), (a.astype(np.float64), b.astype(np.float64)),
             (a.swapaxes(-1, -2).copy().swapaxes(-1, -2), b)]
    for blas in (1, 2):
        monkeypatch.setattr(policy, "blas_threads", blas)
        for x, y in cases:
            got = _parallel.stack_matmul(x, y)
            np.testing.assert_array_equal(got, np.matmul(x, y))
            assert got.dtype == np.matmul(x, y).dtype
        with pytest.raises(ValueError):
            _parallel.stack_matmul(a, a)


def test_row_and_column_sums_with_a_kept_ones_vector():
    """``col_sums``/``row_sums`` multiply by a vector of ones kept per size (read-only): the products of a new
    ``numpy.ones`` vector, bit for bit, every call; their results are new writable arrays; other sizes and dtypes
    get their own vector."""
    from ember.ops.activation import col_sums, ones_vector, row_sums

    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        for rows, cols in ((1, 3), (16, 96), (64, 128), (5000, 2)):
            a = rng.standard_normal((rows, cols)).astype(dtype)
            for _ in range(2):
                c, r = col_sums(a), row_sums(a, 1)
                np.testing.assert_array_equal(c, np.ones(rows, dtype) @ a)
                np.testing.assert_array_equal(r, (a @ np.ones(cols, dtype))[:, None])
                assert c.dtype == dtype and c.flags.writeable and r.flags.writeable
                c += 1  # (the result is its own array: the kept vector is unchanged)
    v = ones_vector(7, np.dtype(np.float32))
    assert not v.flags.writeable and v is ones_vector(7, np.dtype(np.float32))
    assert ones_vector(7, np.dtype(np.float64)).dtype == np.float64 and (v == 1).all()
    with pytest.raises(ValueError):
        v[0] = 2.0


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 12, 16, 48, 49, 64])
@pytest.mark.parametrize(("k", "n"), [(128, 384), (128, 128), (512, 128), (64, 256), (32, 96), (96, 24)])
def test_linear_of_a_few_rows_swapped_gives_the_same_values(monkeypatch, rows, k, n):
    """A float32 Linear of a few rows computed as ``(w @ x.T).T`` (``linear._swapped``) gives the values of
    ``x @ w.T`` (the policy off), a C-ordered output of PyTorch's shape and strides, its values, gradients and node name; with
    a bias, without, from a 3-D input, under ``no_grad``."""
    from ember._kernels.policy import policy
    from ember.nn._ops import linear as L

    rng = np.random.default_rng(rows * k + n)
    xa = rng.standard_normal((1, rows, k)).astype(np.float32)
    wa, ba = (0.1 * rng.standard_normal((n, k))).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    for shape in ((1, rows, k), (rows, k)):
        for bias in (True, False):
            got = {}
            for swap in (True, False):
                monkeypatch.setattr(policy, "swap_small_gemm", swap)
                x, w = ember.tensor(xa.reshape(shape), requires_grad=True), ember.tensor(wa, requires_grad=True)
                b = ember.tensor(ba, requires_grad=True) if bias else None
                y = ember.nn.functional.linear(x, w, b)
                y.backward(ember.ones_like(y))
                with ember.no_grad():
                    plain = ember.nn.functional.linear(x, w, b)
                got[swap] = (y, x.grad, w.grad, plain)
            (y, gx, gw, plain), (y0, gx0, gw0, plain0) = got[True], got[False]
            for a, b0 in ((y, y0), (gx, gx0), (gw, gw0), (plain, plain0)):
                # (the same bits with OpenBLAS's SkylakeX/Haswell kernels, measured; another CPU's kernels may sum
                # a dot product's blocks in another order for one layout, as OpenBLAS's Zen kernels on an AVX2 EPYC:
                # float32 rounding of the sum's terms apart, a few ulps of values of order 1, never more)
                np.testing.assert_allclose(a.detach().numpy(), b0.detach().numpy(), rtol=1e-5, atol=5e-6)
            assert y._data.flags.c_contiguous and y.stride() == y0.stride() and y.grad_fn.name() == y0.grad_fn.name()
            tx, tw = torch.tensor(xa.reshape(shape), requires_grad=True), torch.tensor(wa, requires_grad=True)
            tb = torch.tensor(ba, requires_grad=True) if bias else None
            ty = torch.nn.functional.linear(tx, tw, tb)
            ty.backward(torch.ones_like(ty))
            assert_close(y, ty, atol=1e-5, rtol=1e-5)
            assert y.stride() == ty.stride() and y.grad_fn.name() == ty.grad_fn.name()
            assert_close(gx, tx.grad, atol=1e-5, rtol=1e-5)
            assert_close(gw, tw.grad, atol=1e-4, rtol=1e-5)
    monkeypatch.setattr(policy, "swap_small_gemm", True)
    x2 = xa.reshape(rows, k)
    taken = L._swapped(x2, wa)
    assert taken == ((2 <= rows <= 48 or 48 < rows <= 64 and n >= 128 and policy.use_compiled()) and k >= 64
                     and rows * n >= 1536)
    assert not L._swapped(x2.astype(np.float64), wa.astype(np.float64))  # (double precision: no gain measured)
    assert not L._swapped(np.asfortranarray(x2), wa) or rows == 1  # (a layout not measured)


def _reshaped(x, shape):
    """``reshape``'s general path: a view where the strides allow one, else a copy."""
    from ember.ops import shape as S

    return (S.ViewBackward0 if S._viewable(x._data, shape) else S.UnsafeViewBackward0).apply(x, shape=shape)


def _copied(v):
    """``contiguous``'s general path: ``v`` itself when NumPy calls it C-ordered (an empty array), else a copy."""
    from ember.ops import shape as S

    return v if v._data.flags.c_contiguous else S.CloneBackward0.apply(v)


def _view_cases():
    from ember.ops import shape as S

    return [  # (name, the public call, the general path: its node's apply)
        ("view", lambda x: x.view(x.shape[0] * x.shape[1], x.shape[2]),
         lambda x: S.ViewBackward0.apply(x, shape=(x.shape[0] * x.shape[1], x.shape[2]))),
        ("view 4-D", lambda x: x.view(1, *x.shape), lambda x: S.ViewBackward0.apply(x, shape=(1, *x.shape))),
        ("reshape", lambda x: x.reshape(x.shape[0], -1), lambda x: _reshaped(x, (x.shape[0], x.shape[1] * x.shape[2]))),
        ("reshape ints", lambda x: x.reshape(*x.shape[::-1]), lambda x: _reshaped(x, tuple(x.shape[::-1]))),
        ("reshape merged", lambda x: x.reshape(x.shape[0] * x.shape[1], x.shape[2]),
         lambda x: _reshaped(x, (x.shape[0] * x.shape[1], x.shape[2]))),
        ("permute", lambda x: x.permute(2, 0, 1), lambda x: S.PermuteBackward0.apply(x, dims=(2, 0, 1))),
        ("transpose", lambda x: x.transpose(1, 2), lambda x: S.TransposeBackward0.apply(x, dims=(0, 2, 1))),
        *[(f"unsqueeze {d}", lambda x, d=d: x.unsqueeze(d), lambda x, d=d: S.UnsqueezeBackward0.apply(
            x, shape=x.shape[:d % 4] + (1,) + x.shape[d % 4:], dim=d % 4)) for d in (0, 1, 3, -1, -2)],
        ("t", lambda x: x[0].t(), lambda x: S.TBackward0.apply(x[0], dims=(1, 0))),
        ("contiguous", lambda x: x.transpose(0, 2).contiguous(),
         lambda x: _copied(x.transpose(0, 2))),
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("mode", ["no_grad", "grad mode", "grad mode, of a split piece", "no_grad, of a split piece",
                                  "no_grad, leaf base", "inference_mode", "recorded", "empty"])
def test_views_fast_paths_are_the_general_paths(mode, dtype):
    """``view``, ``reshape``, ``permute``, ``transpose``, ``unsqueeze``, ``t`` and ``contiguous`` without their node
    where nothing records (``unrecorded_view``, ``apply_one``): every field of the result as the node's ``apply``
    gives it (strides, offset, the version counter shared or not, ``_base``, ``_view_creation`` and the version
    its history is current at, ``requires_grad``, the note on the base's counter), and the node where one records."""
    grad = mode.endswith("leaf base") or mode == "recorded"
    shape = (2, 0, 4) if mode == "empty" else (2, 3, 4)
    src = ember.tensor(np.arange(int(np.prod(shape))).astype(dtype).reshape(shape),
                       requires_grad=grad and dtype != np.int64)
    ctx = (ember.no_grad() if mode.startswith("no_grad") else ember.inference_mode() if mode == "inference_mode"
           else ember.enable_grad())
    with ctx:
        x = src.split(2, dim=2)[0] if mode.endswith("split piece") else src
        for name, public, general in _view_cases():
            watched = len(x._vc[1].refs) if len(x._vc) > 1 else 0
            made = general(x)
            after_general = len(x._vc[1].refs) if len(x._vc) > 1 else 0
            fast = public(x)
            after_fast = len(x._vc[1].refs) if len(x._vc) > 1 else 0
            assert after_fast - after_general == after_general - watched, name
            assert [hasattr(fast, s) for s in SLOTS] == [hasattr(made, s) for s in SLOTS], name
            for s in SLOTS:
                if s == "_data":
                    assert fast._data.shape == made._data.shape and fast._data.strides == made._data.strides, name
                    assert fast._data.tobytes() == made._data.tobytes(), name
                    assert fast.storage_offset() == made.storage_offset(), name
                    assert np.shares_memory(fast._data, src._data) == np.shares_memory(made._data, src._data), name
                elif s == "_grad_fn":
                    assert type(fast._grad_fn) is type(made._grad_fn), name
                    if made._grad_fn is not None:
                        assert fast._grad_fn.name() == made._grad_fn.name(), name
                elif s == "_vc":
                    assert (fast._vc is x._vc) == (made._vc is x._vc) and fast._vc[0] == made._vc[0], name
                elif hasattr(made, s):
                    a, b = getattr(fast, s), getattr(made, s)
                    assert a is b or (not isinstance(a, ember.Tensor) and a == b), (name, s)
            assert fast.requires_grad == made.requires_grad and fast.is_contiguous() == made.is_contiguous(), name


@pytest.mark.parametrize("call", ["view", "reshape", "permute", "unsqueeze", "t", "contiguous"])
def test_views_fast_paths_errors_and_gradients_are_pytorchs(call):
    """The calls the fast paths take or decline: PyTorch's results, errors and gradients (sizes that do not fit, a
    negative size, a repeated or out-of-range dim, -1, a non-contiguous input, sizes as a tuple or a keyword)."""
    good = {"view": [((2, 12),), ((24,),), ((-1, 4),), ((4, 3, 2),)], "reshape": [((2, 12),), ((-1,),), ((3, 8),)],
            "permute": [((2, 0, 1),), ((-1, 0, 1),), (((1, 2, 0),),)], "unsqueeze": [((0,),), ((3,),), ((-4,),)],
            "t": [()], "contiguous": [()]}[call]
    bad = {"view": [(5, 5), (-2, 12)], "reshape": [(5, 5), (-1, -1)], "permute": [(0, 0, 1), (0, 1),
           (0, 1, 3)], "unsqueeze": [(4,), (-5,)], "t": [], "contiguous": []}[call]
    for args in good:
        args = args[0] if args else ()
        got = []
        for e in (ember, torch):
            x = e.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4), requires_grad=True)
            src = x if call != "t" else x[0]
            if call == "view" and args == (4, 3, 2):
                src = x.transpose(0, 2).contiguous()
            y = getattr(src, call)(*args)
            (y * e.arange(y.numel(), dtype=e.float32).reshape(y.shape)).sum().backward()
            got.append((y, x.grad, type(y.grad_fn).__name__))
        assert_close(got[0][0], got[1][0])
        assert_close(got[0][1], got[1][1])
        assert got[0][2] == got[1][2]
    for args in bad:
        errors = []
        for e in (ember, torch):
            with e.no_grad():
                x = e.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
                try:
                    getattr(x, call)(*args)
                    errors.append(None)
                except Exception as err:  # noqa: BLE001 - the exception type is what is compared
                    errors.append(type(err))
        assert errors[0] is errors[1] and errors[0] is not None, (args, errors)
    with ember.no_grad():  # a view the strides do not allow: PyTorch's error; reshape copies
        xt = ember.ones(2, 3, 4).transpose(0, 2)
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            xt.view(24)
        assert xt.reshape(24)._base is None


@pytest.mark.parametrize("mode", ["no_grad", "grad mode", "recorded"])
@pytest.mark.parametrize(("size", "dim"), [(2, 2), (3, 2), (4, -1), (9, 2), (1, 0), (2, 1), (5, -2)])
def test_split_by_an_int_is_the_general_paths(mode, size, dim):
    """``split`` by a positive int size takes its pieces' bounds in one loop: the pieces ``view_pieces`` makes from the
    general path's sizes (every field, the multi-output marks), and PyTorch's values, gradients and node names."""
    from ember.ops import indexing as I

    a = np.arange(2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8)
    x = ember.tensor(a, requires_grad=mode == "recorded")
    with ember.no_grad() if mode == "no_grad" else ember.enable_grad():
        d = dim % 3
        n = a.shape[d]
        sizes = [min(size, n - i) for i in range(0, n, size)]
        starts = np.cumsum([0] + sizes[:-1])
        made = I.view_pieces(x, [(slice(None),) * d + (slice(s, s + k),) for s, k in zip(starts, sizes)],
                             I.SplitPieces)
        fast = x.split(size, dim=dim)
    assert len(fast) == len(made)
    for f, m in zip(fast, made):
        assert [hasattr(f, s) for s in SLOTS] == [hasattr(m, s) for s in SLOTS]
        for s in SLOTS:
            if s == "_data":
                assert f._data.shape == m._data.shape and f._data.strides == m._data.strides
                assert f.storage_offset() == m.storage_offset() and f._data.tobytes() == m._data.tobytes()
            elif s == "_grad_fn":
                assert type(f._grad_fn) is type(m._grad_fn) and f._output_nr == m._output_nr
            elif hasattr(m, s):
                u, v = getattr(f, s), getattr(m, s)
                assert u is v or (not isinstance(u, ember.Tensor) and u == v), s
    tx = torch.tensor(a, requires_grad=mode == "recorded")
    with torch.no_grad() if mode == "no_grad" else torch.enable_grad():
        ref = tx.split(size, dim=dim)
    assert len(ref) == len(fast)
    for f, r in zip(fast, ref):
        assert_close(f, r)
        assert f.stride() == r.stride() and f.storage_offset() == r.storage_offset()
        assert (f.grad_fn is None) == (r.grad_fn is None)
        if r.grad_fn is not None:
            assert f.grad_fn.name() == r.grad_fn.name()
    if mode == "recorded":
        sum(p.sum() * (i + 1) for i, p in enumerate(fast)).backward()
        sum(p.sum() * (i + 1) for i, p in enumerate(ref)).backward()
        assert_close(x.grad, tx.grad)
    for e in (ember, torch):  # (a size of 0 and an empty dimension: the general path's answers, as PyTorch's)
        with pytest.raises(RuntimeError, match="split_size"):
            e.ones(2, 3).split(0)
        assert len(e.ones(0, 3).split(2)) == 1


def test_a_view_of_a_no_grad_view_in_grad_mode_takes_the_fast_path_once_its_label_is_known(monkeypatch):
    from ember.ops import shape as S

    """A view in grad mode of a view made under no_grad carries PyTorch's label of the op for its in-place error
    (``("of", "no_grad", "View")``): the general path works it out once per view class, after which
    ``unrecorded_view`` makes such views without running the node (its forward is not called), with the same
    fields."""
    x = ember.ones(4, 6)
    with ember.no_grad():
        v = x.view(24)
    first = v.view(6, 4)  # (the general path, or the fast one if the label is known already)
    calls = []
    forward = S.ViewBackward0.forward
    monkeypatch.setattr(S.ViewBackward0, "forward", lambda self, *a, **k: calls.append(1) or forward(self, *a, **k))
    second = v.view(3, 8)
    assert not calls
    assert first._view_creation == second._view_creation == ("of", "no_grad", "View")
    assert second._base is x and second._vc is x._vc and np.shares_memory(second._data, x._data)
    # (no grad_fn of its own, its base needing no gradient: PyTorch's message says it was made under no_grad)
    tx = torch.ones(4, 6)
    with torch.no_grad():
        tv = tx.view(24)
    with pytest.raises(RuntimeError) as expected:
        tv.view(3, 8).mul_(torch.ones(3, 8, requires_grad=True))
    assert str(expected.value).startswith("A view was created in no_grad mode and is being modified")
    with pytest.raises(RuntimeError) as got:
        second.mul_(ember.ones(3, 8, requires_grad=True))
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["no_grad", "no_grad, input requires grad", "grad mode, nothing requires grad",
                                  "recorded", "parameters recorded", "inference_mode", "transposed input", "2-d",
                                  "two normalized dims", "one row"])
def test_layer_norm_without_its_node_is_applys(monkeypatch, case, dtype):
    """``LayerNorm`` where nothing records (``records_nothing``) calls its compiled kernel without the node: the same
    bits, shape, strides and fields (no ``grad_fn``, ``requires_grad`` False, its own version counter, no base) as
    ``LayerNorm.apply`` gives, and PyTorch's values; where something records, or in inference mode, or for a
    non-row-major input, the node runs (its forward called) as before."""
    from ember._kernels.policy import policy
    from ember.nn._ops import norm as N

    shape = {"2-d": (6, 16), "one row": (1, 16), "two normalized dims": (2, 3, 4, 4)}.get(case, (2, 5, 16))
    norm = shape[-2:] if case == "two normalized dims" else shape[-1:]
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    wa, ba = (rng.standard_normal(norm).astype(dtype) for _ in range(2))
    x = ember.tensor(a, requires_grad=case in ("no_grad, input requires grad", "recorded"))
    if case == "transposed input":
        x = ember.tensor(np.ascontiguousarray(a.swapaxes(0, 1))).transpose(0, 1)
    w = ember.nn.Parameter(ember.tensor(wa), requires_grad=case == "parameters recorded")
    b = ember.nn.Parameter(ember.tensor(ba), requires_grad=case == "parameters recorded")
    ctx = (ember.no_grad() if case.startswith("no_grad") else ember.inference_mode() if case == "inference_mode"
           else ember.enable_grad())
    calls = []
    forward = N.LayerNorm.forward
    monkeypatch.setattr(N.LayerNorm, "forward", lambda self, *a, **k: calls.append(1) or forward(self, *a, **k))
    with ctx:
        made = N.LayerNorm.apply(x, w, b, k=len(norm), eps=1e-5, accumulate=None)
        calls.clear()
        got = ember.nn.functional.layer_norm(x, norm, w, b, 1e-5)
    node_runs = case in ("recorded", "parameters recorded", "inference_mode", "transposed input")
    assert bool(calls) == (node_runs or not policy.use_compiled())  # (the NumPy kernels: the node as before)
    _assert_as_applys(got, made, x)
    tx = torch.tensor(a, requires_grad=x.requires_grad)
    if case == "transposed input":
        tx = torch.tensor(np.ascontiguousarray(a.swapaxes(0, 1))).transpose(0, 1)
    with torch.no_grad() if case.startswith("no_grad") else torch.enable_grad():
        tw, tb = (torch.tensor(v, requires_grad=case == "parameters recorded") for v in (wa, ba))
        ref = torch.nn.functional.layer_norm(tx, norm, tw, tb, 1e-5)
    assert_close(got, ref, atol=1e-5, rtol=1e-5)
    assert got.stride() == ref.stride() and got.requires_grad == ref.requires_grad
    if case.startswith("no_grad"):  # (a module's call takes it too: its parameters require grad)
        m = ember.nn.LayerNorm(norm, dtype=ember.float32 if dtype == np.float32 else ember.float64)
        with ember.no_grad():
            m(x)
        assert bool(calls) == (not policy.use_compiled())


@pytest.mark.parametrize("mode", ["no_grad", "grad mode", "recorded"])
def test_views_of_a_non_contiguous_tensor_kept_layouts_are_pytorchs(mode, monkeypatch):
    """``view`` of a non-contiguous tensor keeps its layout answer per (shape, strides, new shape, item size)
    (``_view_layout``): asked twice (the second from what was kept), a view NumPy strides as PyTorch does, one whose
    size-1 dimension PyTorch strides otherwise, and one no strides allow (PyTorch's error) each give PyTorch's
    strides, offset, values and error both times."""
    from ember.ops import shape as S

    monkeypatch.setattr(S, "_view_layouts", {})  # (what earlier tests kept is not this test's)
    monkeypatch.setattr(S, "_meta_made", [False])  # (a meta tensor made earlier in the process turns the fast path off)
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    cases = [(lambda t: t[:, :, 1:2], (6, 1)), (lambda t: t[:, :, 1:2], (3, 2, 1)), (lambda t: t[:, :, :2], (1, 2, 3, 2)), (lambda t: t[:, :, :2], (2, 6)),
             (lambda t: t[:, :, 1:3], (2, 1, 3, 2, 1))]
    for _ in range(2):
        for piece, shape in cases:
            results = []
            for fw in (ember, torch):
                x = fw.tensor(a, requires_grad=mode == "recorded")
                with fw.no_grad() if mode == "no_grad" else fw.enable_grad():
                    try:
                        v = piece(x).view(*shape)
                        results.append((v.stride(), v.storage_offset(), v.detach().numpy().copy(), v.requires_grad))
                    except RuntimeError as err:
                        results.append(str(err).split(" (")[0].split(".")[0])
            if isinstance(results[1], str):
                assert results[0] == results[1]
            else:
                assert results[0][:2] == results[1][:2] and results[0][3] == results[1][3]
                np.testing.assert_array_equal(results[0][2], results[1][2])
    # (kept: PyTorch's strides where NumPy's differ at a size-1 dimension, True where they are NumPy's, None for no
    # view)
    assert S._view_layouts[((2, 3, 1), (48, 16, 4), (6, 1), 4)] == (16, 4)
    assert S._view_layouts[((2, 3, 2), (48, 16, 4), (2, 1, 3, 2, 1), 4)] is True
    assert S._view_layouts[((2, 3, 2), (48, 16, 4), (2, 6), 4)] is None


def test_view_layouts_kept_are_forgotten_when_full_and_the_newest_kept(monkeypatch):
    """The kept answers are bounded (1,024) and, once full, forgotten all at once so the newest layouts are kept
    (a long-running process that viewed many shapes first: the whole test suite filled it, then kept nothing)."""
    from ember.ops import shape as S

    monkeypatch.setattr(S, "_view_layouts", {("filler", i): None for i in range(1024)})
    monkeypatch.setattr(S, "_meta_made", [False])  # (as above)
    x = ember.arange(24.0).reshape(2, 3, 4)[:, :, 1:3]
    assert x.view(2, 3, 2, 1).stride() == torch.arange(24.0).reshape(2, 3, 4)[:, :, 1:3].view(2, 3, 2, 1).stride()
    assert len(S._view_layouts) == 1 and ((2, 3, 2), (48, 16, 4), (2, 3, 2, 1), 4) in S._view_layouts


def test_view_and_reshape_keep_their_fast_path_after_a_meta_tensor(monkeypatch):
    """A program that builds its model on the meta device, then trains, keeps view's and reshape's path for plain
    int sizes (no argument parsing; a non-contiguous tensor's layout answer kept; no node for an unrecorded view) on
    its ordinary tensors, while a meta tensor's views still take the general path and report PyTorch's strides."""
    from ember.ops import shape as S

    made = S._meta_made  # (the flag every module imported; the fixture's fresh one is graph's alone)
    monkeypatch.setattr(_meta, "made", made)
    monkeypatch.setattr(graph, "_meta_made", made)
    was = made[0]
    try:
        _view_fast_path_after_meta(monkeypatch, S)
    finally:
        made[0] = was  # (as it was before this test)


def _view_fast_path_after_meta(monkeypatch, S):
    monkeypatch.setattr(S, "_view_layouts", {})
    with ember.device("meta"):
        ember.nn.Linear(4, 6)
    assert _meta.made[0]
    parsed = []
    shape_arg = S._shape_arg
    monkeypatch.setattr(S, "_shape_arg", lambda *args: parsed.append(args) or shape_arg(*args))
    applied = []
    apply = S.ViewBackward0.apply.__func__
    monkeypatch.setattr(S.ViewBackward0, "apply", classmethod(lambda cls, *a, **k: applied.append(1) or apply(cls, *a, **k)))
    x = ember.arange(24.0).reshape(2, 3, 4)
    with ember.no_grad():
        v, r, p = x.view(6, 4), x.reshape(4, 6), x[:, :, 1:3].view(2, 3, 2, 1)
    assert not parsed and not applied
    assert ((2, 3, 2), (48, 16, 4), (2, 3, 2, 1), 4) in S._view_layouts
    expected = torch.arange(24.0).reshape(2, 3, 4)
    assert v.stride() == expected.view(6, 4).stride() and r.stride() == expected.reshape(4, 6).stride()
    assert p.stride() == expected[:, :, 1:3].view(2, 3, 2, 1).stride()
    np.testing.assert_array_equal(p.numpy(), expected[:, :, 1:3].view(2, 3, 2, 1).numpy())
    m, tm = ember.empty(3, 4, device="meta"), torch.empty(3, 4, device="meta")
    assert m.t().reshape(12).is_meta and m.t().reshape(12).stride() == tm.t().reshape(12).stride()
    assert m[:, 1:3].view(3, 2, 1).stride() == tm[:, 1:3].view(3, 2, 1).stride()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        tm.t().view(12)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        m.t().view(12)
    assert parsed  # (the meta tensor's views: the general path)


def _heads(rng, shape, layout: str, requires_grad: bool):
    """query, key and value of ``shape`` (B, H, T, E) as ember tensors and PyTorch's: the heads of one (B, T, 3 H E)
    projection split and viewed as a GPT block makes them ("split"), or three row-major tensors ("contiguous")."""
    B, H, T, E = shape
    if layout == "split":
        a = rng.standard_normal((B, T, 3 * H * E)).astype(np.float32)
        out = []
        for fw in (ember, torch):
            p = fw.tensor(a, requires_grad=requires_grad)
            out.append([t.view(B, T, H, E).transpose(1, 2) for t in p.split(H * E, dim=2)])
        return out
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    return [[fw.tensor(a, requires_grad=requires_grad) for a in arrays] for fw in (ember, torch)]


@pytest.mark.skipif(__import__("os").environ.get("EMBER_KERNELS") == "numpy",
                    reason="the common case takes the compiled softmax")
@pytest.mark.parametrize("layout", ["split", "contiguous"])
@pytest.mark.parametrize("case", ["no_grad", "no_grad, inputs require grad", "grad mode, nothing requires grad",
                                  "recorded", "inference_mode", "not causal, a scale", "one token"])
def test_sdpa_without_its_node_is_applys(monkeypatch, case, layout):
    """``scaled_dot_product_attention``'s common case (plain 4-d float32 heads, no mask, dropout or grouped heads)
    where nothing records (``records_nothing``) runs its forward's calls without the node: the same bits, shape,
    strides and fields as the node's ``apply`` gives, and PyTorch's values and strides; where something records, or
    in inference mode, the node runs (its forward called) and its gradients are PyTorch's."""
    from ember.nn._ops import attention as A

    rng = np.random.default_rng(5)
    shape = (2, 2, 1 if case == "one token" else 16, 8)
    requires_grad = case in ("no_grad, inputs require grad", "recorded")
    (q, k, v), (tq, tk, tv) = _heads(rng, shape, layout, requires_grad)
    causal, scale = (False, 0.3) if case.startswith("not causal") else (True, None)
    node = A.ScaledDotProductFlashAttentionForCpuBackward0
    ctx = (ember.no_grad() if case.startswith("no_grad") else ember.inference_mode() if case == "inference_mode"
           else ember.enable_grad())
    calls = []
    forward = node.forward
    monkeypatch.setattr(node, "forward", lambda self, *a, **kw: calls.append(1) or forward(self, *a, **kw))
    with ctx:
        made = node.apply(q, k, v, mask=None, dmask=None, scale=scale or 1 / np.sqrt(8), causal=causal, groups=1)
        calls.clear()
        got = ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    assert bool(calls) == (case in ("recorded", "inference_mode"))
    _assert_as_applys(got, made, q)
    with torch.no_grad() if case.startswith("no_grad") else torch.enable_grad():
        ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, scale=scale)
    assert_close(got, ref, atol=1e-5, rtol=1e-5)
    assert got.stride() == ref.stride() and got.requires_grad == ref.requires_grad
    if case == "recorded":
        assert type(got.grad_fn).__name__ == type(ref.grad_fn).__name__
        g = rng.standard_normal(shape).astype(np.float32)
        grads = ember.autograd.grad(got, (q, k, v), ember.tensor(g))
        expected = torch.autograd.grad(ref, (tq, tk, tv), torch.tensor(g))
        for a, b in zip(grads, expected):
            assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("recorded", [False, True])
def test_sdpa_common_case_computes_quietly(recorded):
    """The common case's products run with NumPy's floating-point errors ignored, as ``Node.apply`` runs an op's
    forward (and as PyTorch computes): scores that overflow or are inf - inf give inf/NaN without a warning, where
    PyTorch gives NaN too."""
    a = np.full((1, 2, 4, 8), 3e38, np.float32)
    a[0, 0, :, ::2] = -np.inf
    results = []
    for fw in (ember, torch):
        q, k, v = (fw.tensor(a, requires_grad=recorded) for _ in range(3))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with fw.enable_grad() if recorded else fw.no_grad():
                results.append(fw.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True))
    got, ref = results
    assert np.array_equal(np.isnan(got.detach().numpy()), np.isnan(ref.detach().numpy()))
    assert got.requires_grad == ref.requires_grad == recorded


def test_sdpa_common_case_keeps_the_checks():
    """Inputs the common case does not take (a mask, dropout, grouped heads, another dtype, mismatched shapes, 3-d
    heads, a last dimension of stride > 1) still meet PyTorch's checks and values."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1, 2, 6, 4)).astype(np.float32)
    for fw in (ember, torch):
        F = fw.nn.functional
        x = fw.tensor(a)
        with pytest.raises(RuntimeError, match="same dtype"):
            F.scaled_dot_product_attention(x, x.double(), x)
        with pytest.raises(RuntimeError):
            F.scaled_dot_product_attention(x, fw.tensor(a[:, :, :, :3]), x)
        with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1"):
            F.scaled_dot_product_attention(x, x, x, dropout_p=1.5)  # (F.dropout's is a ValueError)
        with pytest.raises(RuntimeError, match="dropout"):
            F.scaled_dot_product_attention(x, x, x, dropout_p=-0.1)
    e, t = (fw.tensor(a) for fw in (ember, torch))
    for kwargs in ({"enable_gqa": True}, {"scale": -0.5}, {"attn_mask": "bool"}):
        if kwargs.get("attn_mask") == "bool":
            m = np.tril(np.ones((6, 6), bool))
            args = ({"attn_mask": ember.tensor(m)}, {"attn_mask": torch.tensor(m)})
        else:
            args = (kwargs, kwargs)
        got = ember.nn.functional.scaled_dot_product_attention(e, e, e, **args[0])
        ref = torch.nn.functional.scaled_dot_product_attention(t, t, t, **args[1])
        assert_close(got, ref, atol=1e-5, rtol=1e-5)
    wide = rng.standard_normal((1, 2, 4, 6)).astype(np.float32)  # heads of stride 2 in the last dimension
    got = ember.nn.functional.scaled_dot_product_attention(*(ember.tensor(wide)[..., ::2] for _ in range(3)))
    ref = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(wide)[..., ::2] for _ in range(3)))
    assert_close(got, ref, atol=1e-5, rtol=1e-5)
    assert got.stride() == ref.stride()


@pytest.mark.parametrize("case", ["no_grad", "no_grad, input requires grad", "grad mode, nothing requires grad",
                                  "recorded", "inference_mode", "dim 0", "transposed input", "float64", "1-d",
                                  "a row of -inf", "method"])
def test_softmax_without_its_node_is_applys(monkeypatch, case):
    """``softmax`` over the last dim of a row-major float32 tensor where nothing records runs ``Softmax.forward``'s
    kernel call without the node: the same bits, shape, strides and fields as ``Softmax.apply`` gives, and PyTorch's
    values; where something records, in inference mode, along another dim, of a non-row-major or float64 input,
    the node runs (its forward called) as before."""
    from ember._kernels.policy import policy
    from ember.ops import activation as A

    rng = np.random.default_rng(4)
    shape = (7,) if case == "1-d" else (3, 5, 6)
    a = rng.standard_normal(shape).astype(np.float64 if case == "float64" else np.float32)
    if case == "a row of -inf":
        a[1, 2] = -np.inf
    x = ember.tensor(a, requires_grad=case in ("no_grad, input requires grad", "recorded"))
    tx = torch.tensor(a, requires_grad=x.requires_grad)
    if case == "transposed input":
        x = ember.tensor(np.ascontiguousarray(a.swapaxes(0, 2))).transpose(0, 2)
        tx = torch.tensor(np.ascontiguousarray(a.swapaxes(0, 2))).transpose(0, 2)
    dim = 0 if case == "dim 0" else -1
    ctx = (ember.no_grad() if case.startswith("no_grad") else ember.inference_mode() if case == "inference_mode"
           else ember.enable_grad())
    calls = []
    forward = A.Softmax.forward
    monkeypatch.setattr(A.Softmax, "forward", lambda self, *a, **kw: calls.append(1) or forward(self, *a, **kw))
    with ctx:
        made = A.Softmax.apply(x, dim=dim % x.dim())
        calls.clear()
        got = x.softmax(dim) if case == "method" else ember.nn.functional.softmax(x, dim)
    node_runs = case in ("recorded", "inference_mode", "dim 0", "transposed input", "float64")
    assert bool(calls) == (node_runs or not policy.use_compiled())  # (the NumPy kernels: the node as before)
    _assert_as_applys(got, made, x)
    with torch.no_grad() if case.startswith("no_grad") else torch.enable_grad():
        ref = torch.nn.functional.softmax(tx, dim)
    assert_close(got, ref, atol=1e-6, rtol=1e-5)  # (NaN where PyTorch has NaN)
    assert got.stride() == ref.stride() and got.requires_grad == ref.requires_grad


@pytest.mark.parametrize("dim", [True, 1.0, "1"])
def test_softmax_without_its_node_keeps_the_dim_check(dim):
    """The no-node softmax path takes an int dim only: a bool or float dim meets PyTorch's TypeError as the node's
    path does (it once took ``True`` and ``1.0`` for the last dim of a 2-d tensor)."""
    for fw in (ember, torch):
        with fw.no_grad(), pytest.raises(TypeError):
            fw.softmax(fw.ones(2, 3), dim)
        with fw.no_grad(), pytest.raises(TypeError):
            fw.nn.functional.softmax(fw.ones(2, 3), dim=dim)


def test_sum_product_unsqueeze_and_layout_keep_their_path_after_a_meta_tensor(monkeypatch):
    """After a meta tensor exists, add's and mul's operands of one dtype skip promote, unsqueeze skips its node where
    nothing records, and a row-major elementwise result keeps NumPy's strides without the layout rule's work, on
    ordinary tensors (all four ran their general path for the rest of the process before); meta operands still
    take it: their results are meta tensors with PyTorch's strides, and a meta tensor beside a CPU one is PyTorch's
    error."""
    from ember.ops import shape as S

    made = [True]  # (as a meta tensor made anywhere sets the flag every module imported)
    for module in (_meta, E, S):
        monkeypatch.setattr(module, "made" if module is _meta else "_meta_made", made)
    monkeypatch.setattr(graph, "_meta_made", made)
    promoted, unsqueezed, relaid = [], [], []
    promote = E.promote
    monkeypatch.setattr(E, "promote", lambda *a: promoted.append(1) or promote(*a))
    apply = S.UnsqueezeBackward0.apply.__func__
    monkeypatch.setattr(S.UnsqueezeBackward0, "apply",
                        classmethod(lambda cls, *a, **k: unsqueezed.append(1) or apply(cls, *a, **k)))
    size_one = _meta.size_one_strides
    monkeypatch.setattr(_meta, "size_one_strides", lambda *a: relaid.append(1) or size_one(*a))
    x, y = ember.randn(2, 3), ember.randn(2, 3)
    pos = ember.randn(1, 5, 4)
    with ember.no_grad():
        s, p, u = E._sum(E.Add, x, y), E.mul(x, y), x.unsqueeze(0)
        h = pos + ember.randn(5, 4)
    assert not promoted and not unsqueezed and not relaid
    np.testing.assert_array_equal(s.numpy(), x.numpy() + y.numpy())
    np.testing.assert_array_equal(p.numpy(), x.numpy() * y.numpy())
    assert u.stride() == torch.randn(2, 3).unsqueeze(0).stride() and h.stride() == (20, 4, 1)
    m, tm = ember.empty(3, 4, device="meta"), torch.empty(3, 4, device="meta")
    assert (m + m).is_meta and (m * m).is_meta and m.t().unsqueeze(1).stride() == tm.t().unsqueeze(1).stride()
    assert promoted and unsqueezed
    with pytest.raises(RuntimeError, match="not on the expected device meta"):
        m * ember.randn(3, 4)  # (PyTorch's error)


def test_is_meta_walks_to_the_placeholder():
    """``_meta.is_meta`` (a walk along the bases) answers as the overlap with the placeholder does, for meta arrays
    and their views (empty ones too), broadcast and strided ones, and for ordinary arrays and views of them."""
    meta = _meta.meta_array((8, 64), np.float32)
    real = np.random.rand(8, 64).astype(np.float32)
    strided = np.lib.stride_tricks.as_strided
    metas = [meta, meta.T[1:], _meta.meta_array((0, 3), np.int64)[:, 1:], meta[None], meta.reshape(512),
             np.broadcast_to(_meta.meta_array((1, 64), np.float32), (8, 64)), strided(meta, (4, 4), (8, 4)),
             _meta.meta_array((), np.bool_), ember.ones(2, 3, device="meta").t()._data]
    ordinary = [real, real.T, real[1:][:, 2:], strided(np.empty(512, np.float32), (8, 64), (4, 32)), np.float32(1.0),
                np.broadcast_to(np.float32(2.0), (3, 3)), real[:0], ember.ones(2, 3).t()._data, [1.0]]
    for a in metas:
        assert _meta.is_meta(a) and (np.may_share_memory(a, _meta._PLACEHOLDER) or not a.size)
    for a in ordinary:
        assert not _meta.is_meta(a)
