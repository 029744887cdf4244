"""index_add/index_copy/index_fill and the in-place indexing ops (masked_fill_, scatter_, scatter_add_,
index_*_) against PyTorch: values, gradients (recorded in-place too), errors."""

import warnings

import numpy as np
import pytest
import torch
from oracle import assert_close, check
from test_data_samplers import raises_like_torch

import ember

IDX = np.array([2, 0, 2])


@pytest.mark.parametrize("fn,shapes", [
    (lambda m, x, s: x.index_add(0, m.tensor(IDX), s), [(3, 4), (3, 4)]),
    (lambda m, x, s: m.index_add(x, 1, m.tensor(IDX), s, alpha=2.5), [(4, 3), (4, 3)]),
    (lambda m, x, s: x.index_add(-1, m.tensor([1]), s), [(2, 3), (2, 1)]),
    (lambda m, x, s: x.index_copy(0, m.tensor([2, 0]), s), [(3, 4), (2, 4)]),
    (lambda m, x, s: m.index_copy(x, 1, m.tensor([1]), s), [(3, 4), (3, 1)]),
    (lambda m, x, s: x.index_fill(1, m.tensor(IDX), 0.5) * s, [(3, 4), (3, 4)]),
    (lambda m, x, s: m.index_fill(x, 0, m.tensor([1]), s.sum()), [(3, 4), (2,)]),
    (lambda m, x, s: x.index_add(0, m.tensor([], dtype=m.long), s), [(3, 4), (0, 4)]),
])
def test_index_updates(fn, shapes):
    check(fn, shapes)


def test_index_fill_integer_tensor():
    a = np.arange(12).reshape(3, 4)
    assert_close(ember.tensor(a).index_fill(1, ember.tensor([0, 3]), -1),
                 torch.tensor(a).index_fill(1, torch.tensor([0, 3]), -1))


@pytest.mark.parametrize("op", [
    lambda m, t, s: t.masked_fill_(t > 0, 0.0),
    lambda m, t, s: t.masked_fill_(m.tensor([True, False, True, False]), s.sum()),
    lambda m, t, s: t.scatter_(1, m.tensor([[1], [3], [0]]), s[:, :1]),
    lambda m, t, s: t.scatter_(1, m.tensor([[1], [3], [0]]), 2.0),
    lambda m, t, s: t.scatter_add_(1, m.tensor([[1, 1], [0, 2], [3, 3]]), s[:, :2]),
    lambda m, t, s: t.index_add_(1, m.tensor([3, 3, 0, 1]), s),
    lambda m, t, s: t.index_copy_(0, m.tensor([2, 1, 0]), s),
    lambda m, t, s: t.index_fill_(0, m.tensor([1]), -2.0),
])
def test_in_place_forms_recorded_and_plain(op):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    # plain (nothing needs a gradient): written in place, version bumped
    e, t = ember.tensor(a), torch.tensor(a)
    v = e._version
    assert op(ember, e, ember.tensor(b)) is e
    op(torch, t, torch.tensor(b))
    assert_close(e, t)
    assert e._version > v
    # recorded: on a non-leaf, the gradient reaches the original tensor and the source
    grads = {}
    for m in (ember, torch):
        x, s = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        y = x * 1
        op(m, y, s)
        (y * y).sum().backward()
        grads[m] = (y, x.grad, s.grad)
    for i, (ge, gt) in enumerate(zip(grads[ember], grads[torch])):
        if gt is None:
            assert ge is None or not np.any(ge.numpy()), i
        else:
            assert_close(ge, gt, msg=str(i))


def test_one_hot_by_scatter_and_causal_fill():
    """Patterns from public programs: y.zero_().scatter_(1, labels, 1) and att.masked_fill_(mask, -inf)."""
    for m in (ember, torch):
        labels = m.tensor([[2], [0], [1]])
        onehot = m.zeros(3, 4).scatter_(1, labels, 1)
        att = m.zeros(3, 3).masked_fill_(m.ones(3, 3).triu(1).bool(), float("-inf"))
        if m is ember:
            e = (onehot, att)
    assert_close(e[0], onehot)
    assert_close(e[1], att)


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_argument(reduce):
    a, src = np.arange(12.0).reshape(3, 4), np.full((2, 4), 3.0)
    idx = np.array([[1, 2, 0, 1]])
    for src_e, src_t in [(ember.tensor(src), torch.tensor(src)), (2.0, 2.0)]:
        e = ember.tensor(a).scatter_(0, ember.tensor(idx), src_e, reduce=reduce)
        t = torch.tensor(a).scatter_(0, torch.tensor(idx), src_t, reduce=reduce)
        assert_close(e, t)
    for m in (ember, torch):  # no gradient through a reduce=
        with pytest.raises(RuntimeError):
            x = m.tensor(a, requires_grad=True) * 1
            x.scatter_(0, m.tensor(idx), m.tensor(src, requires_grad=True), reduce=reduce)
            x.sum().backward()


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_out_of_place_scatter_reduce_argument(reduce):
    """Tensor.scatter and torch.scatter take scatter_'s reduce= too: the input is left as it was, the result has
    PyTorch's values, and backward through it raises PyTorch's error (the op has no derivative)."""
    a, src = np.arange(12.0).reshape(3, 4), np.full((2, 4), 3.0)
    idx = np.array([[1, 2, 0, 1], [1, 0, 0, 2]])
    for src_e, src_t in [(ember.tensor(src), torch.tensor(src)), (2.0, 2.0)]:
        x_e, x_t = ember.tensor(a), torch.tensor(a)
        assert_close(x_e.scatter(0, ember.tensor(idx), src_e, reduce=reduce),
                     x_t.scatter(0, torch.tensor(idx), src_t, reduce=reduce))
        assert_close(ember.scatter(x_e, 0, ember.tensor(idx), src_e, reduce=reduce),
                     torch.scatter(x_t, 0, torch.tensor(idx), src_t, reduce=reduce))
        assert_close(x_e, torch.tensor(a))
    messages = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        out = x.scatter(0, m.tensor(idx), m.tensor(src, requires_grad=True), reduce=reduce)
        assert out.requires_grad
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _scatter_reduce_warnings(m, call):
    """The warnings ``call(m)`` issues (its error, if any, swallowed) and their files."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call(m)
        except RuntimeError:
            pass
    return [(w.category, str(w.message).split(" (Triggered internally")[0], w.filename) for w in caught]


@pytest.mark.parametrize("call", [
    lambda m: m.zeros(3).scatter_(0, m.tensor([0, 1, 0]), m.ones(3), reduce="add"),
    lambda m: m.zeros(3).scatter_(0, m.tensor([0, 1, 0]), m.ones(3), reduce="multiply"),
    lambda m: m.zeros(3).scatter(0, m.tensor([0, 1, 0]), m.ones(3), reduce="multiply"),
    lambda m: m.scatter(m.zeros(3), 0, m.tensor([0, 1, 0]), m.ones(3), reduce="add"),
    lambda m: m.zeros(3).scatter_(0, m.tensor([0, 1, 0]), m.ones(3), reduce="mean"),  # warned, then refused
    lambda m: m.zeros(3).scatter_(0, m.tensor([0, 1, 0]), 2.0, reduce="add"),  # a number src: not deprecated
    lambda m: m.zeros(3).scatter_(0, m.tensor([0, 1, 0]), m.ones(3)),
])
def test_scatter_reduce_with_tensor_src_warns_once_as_pytorch(call, monkeypatch):
    """PyTorch's deprecation of scatter's reduce= with a Tensor src: its UserWarning and text, at the user's line,
    once per process (PyTorch's TORCH_WARN_ONCE, made to fire every time here by ``set_warn_always``)."""
    monkeypatch.setattr(ember._warnings, "_warned_once", set())  # as in a fresh process
    was = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        expected = _scatter_reduce_warnings(torch, call)
    finally:
        torch.set_warn_always(was)
    got = _scatter_reduce_warnings(ember, call)
    assert [(c, text) for c, text, _ in got] == [(c, text) for c, text, _ in expected]
    assert all(file == __file__ for *_, file in got)
    assert _scatter_reduce_warnings(ember, call) == []  # the once is used up


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([0, 0]), m.ones(2, 3)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([0, 5]), m.ones(2, 4)),
    lambda m: m.zeros(3, 4).index_fill(1, m.tensor([0.0, 2.0]), 5),
    lambda m: m.zeros(3, 4).index_copy(2, m.tensor([0]), m.ones(3, 1)),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([0]), m.ones(2)),
    lambda m: m.zeros(3, 4, requires_grad=True).masked_fill_(m.ones(3, 4).bool(), 0.0),
    lambda m: m.zeros(3, 4).masked_fill_(m.ones(3, 4), 0.0),
    pytest.param(lambda m: m.zeros(3).scatter_(0, m.tensor([1]), m.ones(1), reduce="max"),  # (warned, then refused)
                 marks=pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")),
])
def test_errors_like_torch(make):
    raises_like_torch(make)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate):
    rows, cols = np.array([0, 2, 0]), np.array([1, 3, 1])
    fn = (lambda m, x, v: m.index_put(x, (m.tensor(rows), m.tensor(cols)), v, accumulate))
    if accumulate:  # repeated positions add up
        check(fn, [(3, 4), (3,)])
    check(lambda m, x, v: x.index_put((m.tensor([1, 2]),), v, accumulate), [(3, 4), (4,)])
    check(lambda m, x, v: x.index_put((m.tensor([[True, False, True, False]] * 3),), v.sum(), accumulate),
          [(3, 4), (2,)])
    a = np.arange(12.0).reshape(3, 4)
    e, t = ember.tensor(a), torch.tensor(a)
    assert e.index_put_((ember.tensor(rows), ember.tensor(cols)), ember.tensor(5.0, dtype=ember.float64),
                        accumulate=accumulate) is e  # (a value of another dtype: PyTorch's error)
    t.index_put_((torch.tensor(rows), torch.tensor(cols)), torch.tensor(5.0, dtype=torch.float64),
                 accumulate=accumulate)
    assert_close(e, t)


@pytest.mark.parametrize("shape,value,wrap", [((3, 3), 5.0, False), ((7, 3), 1.0, True), ((7, 3), 1.0, False),
                                              ((3, 5), -2.0, True), ((2, 2, 2), 4.0, False), ((4, 4), float("-inf"), False)])
def test_fill_diagonal_as_torch(shape, value, wrap):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    outs = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        y = x * 2
        assert y.fill_diagonal_(value, wrap=wrap) is y
        (y * m.tensor(a)).masked_fill(y.isinf(), 0).sum().backward()
        outs.append((y, x.grad))
    for e, t in zip(*outs):
        assert_close(e, t)
    assert_close(ember.zeros(3, 3, dtype=ember.long).fill_diagonal_(7), torch.zeros(3, 3, dtype=torch.long).fill_diagonal_(7))


@pytest.mark.parametrize("shape", [(3,), (2, 3, 4)])
def test_fill_diagonal_errors_as_torch(shape):
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="dimensions"):
            m.zeros(shape).fill_diagonal_(1)


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("dt", ["float32", "float64", "int16", "uint8", "bool", "int32", "int64"])
@pytest.mark.parametrize("op", ["index_add", "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_",
                                "index_reduce", "index_reduce_"])
def test_index_op_dtype_checked_as_pytorch(op, dt):
    """Each index op's own index dtypes and error: index_add/index_reduce take int32 and int64 (RuntimeError
    naming the dtype), index_copy only int64 (RuntimeError), index_fill only int64 (IndexError). A float index
    was refused with another type and message, an int32 one taken by index_copy and index_fill."""
    def run(lib):
        x = lib.zeros(3, 2)
        idx = lib.tensor([0, 2]).to(getattr(lib, dt))
        args = {"index_add": (lib.ones(2, 2),), "index_copy": (lib.ones(2, 2),), "index_fill": (1.5,),
                "index_reduce": (lib.ones(2, 2) * 2, "prod")}[op.rstrip("_")]
        try:
            return getattr(x, op)(0, idx, *args).tolist()
        except Exception as err:  # noqa: BLE001 (the type and message are compared)
            return type(err).__name__, str(err)

    assert run(ember) == run(torch)


@pytest.mark.parametrize("dt", ["float32", "int16", "uint8", "int8", "bool", "int32", "int64"])
@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_reduce", "gather", "index_select"])
def test_index_dtype_checked_as_pytorch(op, dt):
    # int32 and int64 only, in PyTorch's words ("scatter(): Expected dtype int32/int64 for index" for the whole
    # scatter family, "int32 or int64" for index_select); an int16 or uint8 index was taken
    def run(lib):
        x = lib.ones(3, 3)
        idx = lib.tensor([[1]], dtype=getattr(lib, dt))
        calls = {"scatter": lambda: lib.scatter(x, 0, idx, x), "scatter_add": lambda: lib.scatter_add(x, 0, idx, x),
                 "scatter_reduce": lambda: lib.scatter_reduce(x, 0, idx, x, "sum"),
                 "gather": lambda: lib.gather(x, 0, idx), "index_select": lambda: lib.index_select(x, 0, idx[0])}
        try:
            return calls[op]().tolist()
        except Exception as err:  # noqa: BLE001 (the type and message are compared)
            return type(err).__name__, str(err)

    assert run(ember) == run(torch)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("alpha", [0.5, 2.5, -1.5, 1e-3])
def test_index_add_float_alpha_of_an_integer_tensor_is_converted_as_pytorch(dtype, alpha):
    # PyTorch converts alpha to the tensor's scalar type (truncated toward zero; any nonzero is True for bool)
    def run(m):
        x = m.tensor([1, 2, 3, 0], dtype=getattr(m, dtype))
        return x.index_add(0, m.tensor([0, 1, 1]), m.tensor([5, 5, 1], dtype=getattr(m, dtype)), alpha=alpha)

    if dtype == "uint8" and alpha < 0:
        alpha = -alpha
    assert_close(run(ember), run(torch))
    assert_close(run(ember).index_add_(0, ember.tensor([3]), ember.tensor([1], dtype=getattr(ember, dtype)),
                                       alpha=alpha),
                 run(torch).index_add_(0, torch.tensor([3]), torch.tensor([1], dtype=getattr(torch, dtype)),
                                       alpha=alpha))


# A 0-d tensor: PyTorch's scatter and index_* kernels take it (and a 0-d index or source) as a vector of its one
# element along dim 0 or -1; index_put counts each index tensor as a dimension and refuses one on it.
ZERO_D_OPS = {
    "scatter": lambda m, x, d, i, s: m.scatter(x, d, i, s),
    "scatter_number": lambda m, x, d, i, s: x.scatter(d, i, 2.5),
    "scatter_add": lambda m, x, d, i, s: m.scatter_add(x, d, i, s),
    "scatter_reduce": lambda m, x, d, i, s: m.scatter_reduce(x, d, i, s, "prod"),
    "index_add": lambda m, x, d, i, s: m.index_add(x, d, i, s, alpha=2),
    "index_copy": lambda m, x, d, i, s: m.index_copy(x, d, i, s),
    "index_fill": lambda m, x, d, i, s: m.index_fill(x, d, i, s.reshape(())),
    "index_fill_number": lambda m, x, d, i, s: x.index_fill(d, i, -1.0),
    "scatter_": lambda m, x, d, i, s: (x * 1).scatter_(d, i, s),
    "scatter_add_": lambda m, x, d, i, s: (x * 1).scatter_add_(d, i, s),
    "index_add_": lambda m, x, d, i, s: (x * 1).index_add_(d, i, s),
    "index_copy_": lambda m, x, d, i, s: (x * 1).index_copy_(d, i, s),
    "index_fill_": lambda m, x, d, i, s: (x * 1).index_fill_(d, i, s.reshape(())),
    "index_put": lambda m, x, d, i, s: m.index_put(x, (i,), s),
    "index_put_accumulate": lambda m, x, d, i, s: x.index_put((i,), s, accumulate=True),
    "index_put_": lambda m, x, d, i, s: (x * 1).index_put_((i,), s),
}


@pytest.mark.parametrize("op", sorted(ZERO_D_OPS))
@pytest.mark.parametrize("dim", [0, -1, 1])
@pytest.mark.parametrize("index", [0, [0], 1, [-1], True])
@pytest.mark.parametrize("src_shape", [(), (1,)])
def test_zero_d_tensor_as_pytorch(op, dim, index, src_shape):
    fn = ZERO_D_OPS[op]

    def run(m):
        x = m.tensor(1.5, requires_grad=True)
        s = m.tensor(np.full(src_shape, 7.0, np.float32), requires_grad=True)
        return x, s, fn(m, x, dim, m.tensor(index), s)

    try:
        tx, ts, t_out = run(torch)
    except Exception as err:  # ember raises the same type, with PyTorch's words
        e_msg, t_msg = raises_like_torch(lambda m: run(m)[2], type(err))
        key = t_msg.split(" (")[0] if "Dimension out of range" not in t_msg else t_msg
        assert key.split(": ")[-1] in e_msg
        return
    ex, es, e_out = run(ember)
    assert tuple(e_out.shape) == tuple(t_out.shape) == ()
    assert_close(e_out, t_out, 0, 0)
    try:
        (t_out * 3).backward()
    except Exception as err:  # (PyTorch refuses a 0-d index's gradient for a larger source, a negative index's)
        with pytest.raises(type(err)) as ee:
            (e_out * 3).backward()
        assert str(ee.value) == str(err)
        return
    (e_out * 3).backward()
    for e, t in ((ex, tx), (es, ts)):
        assert (e.grad is None) == (t.grad is None)
        if t.grad is not None:
            assert tuple(e.grad.shape) == tuple(t.grad.shape)
            assert_close(e.grad, t.grad, 0, 0)


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("src", [3.0, (), (1,)])
def test_zero_d_scatter_reduce_in_place_as_pytorch(reduce, src):
    outs = []
    for m in (torch, ember):
        x = m.tensor(2.0)
        value = src if isinstance(src, float) else m.full(src, 3.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the deprecation warning of a tensor src)
            assert x.scatter_(-1, m.tensor(0), value, reduce=reduce) is x
            outs.append((x, m.tensor(2.0).scatter(0, m.tensor([0]), value, reduce=reduce)))
    for e, t in zip(outs[1], outs[0]):
        assert e.shape == () and t.shape == ()
        assert_close(e, t, 0, 0)


@pytest.mark.parametrize("indices", [(0, 0), (True, 0), ((2, 2), 0, 0, 0)])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_more_indices_than_dimensions_as_pytorch(indices, accumulate):
    shape, *idx = indices

    def run(m):
        x = m.zeros(shape) if isinstance(shape, tuple) else m.tensor(1.0) if shape == 0 else m.ones(2)
        return m.index_put(x, tuple(m.tensor(i) for i in idx), m.tensor(5.0), accumulate)

    if indices == (True, 0):  # a 0-d bool index on a vector: one dimension, accepted
        assert_close(run(ember), run(torch), 0, 0)
        return
    e_msg, t_msg = raises_like_torch(run, IndexError)
    assert e_msg == t_msg


@pytest.mark.parametrize("shape,dim,index", [((), 0, [-1]), ((), 0, [-1, -1]), ((), -1, [0, -1]), ((3,), -1, [0, -1]),
                                             ((2, 3), 0, [0, -1]), ((2, 3), -1, [0, -1]), ((2, 3, 4), 1, [0, -1])])
def test_index_fill_value_gradient_of_a_negative_index_as_pytorch(shape, dim, index):
    def run(m, value_grad):
        x = m.ones(shape, requires_grad=True)
        v = m.tensor(2.0, requires_grad=value_grad)
        m.index_fill(x, dim, m.tensor(index), v).sum().backward()
        return x.grad

    e_msg, t_msg = raises_like_torch(lambda m: run(m, True))
    assert e_msg == t_msg
    assert_close(run(ember, False), run(torch, False), 0, 0)  # (x's own gradient alone is computed)


@pytest.mark.parametrize("shape,dim,index", [((3,), 0, [0, 0, 2]), ((2, 3), 1, [2, 2]), ((2, 3), 0, [1, 0, 1]),
                                             ((), 0, [0, 0])])
def test_index_fill_value_gradient_counts_a_repeated_index_once_as_pytorch(shape, dim, index):
    grads = []
    for m in (torch, ember):
        x = m.ones(shape, requires_grad=True)
        v = m.tensor(2.0, requires_grad=True)
        m.index_fill(x * 1, dim, m.tensor(index), v).mul(m.arange(1.0, 1.0 + max(1, x.numel())).reshape(shape)) \
            .sum().backward()
        grads.append((x.grad, v.grad))
    for e, t in zip(grads[1], grads[0]):
        assert_close(e, t, 0, 0)
