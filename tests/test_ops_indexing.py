"""Indexing against PyTorch: getitem/setitem with every index kind, gather, where, masked_fill, in-place rules."""

import numpy as np
import pytest
import torch
from oracle import assert_close, check

import ember

INDICES = [
    1, -1, slice(1, 3), slice(None, None, 2), slice(-2, None), (1, 2), (slice(None), 1), (Ellipsis, 0),
    (None, 1), (0, None, slice(1, 3)), Ellipsis, (1, Ellipsis, None), (slice(5, 10),), (),
    [0, 2], [2, 2, 0], ([0, 1], [1, 2]), (slice(None), [3, 3, 0]), ([[0, 1], [1, 1]],),
    (Ellipsis, [0, 0]), ([0, 2], slice(1, 3)), (1, [0, 1]),
]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_getitem(idx):
    check(lambda m, x: x[idx], [(3, 4, 2)])


@pytest.mark.parametrize("idx", [
    lambda m: m.tensor([0, 2, 2]), lambda m: m.tensor([[1], [0]]), lambda m: m.tensor(1),
    lambda m: (m.tensor([0, 1]), m.tensor([2, 2])), lambda m: (slice(None), m.tensor([0, 0, 3])),
    lambda m: m.tensor([True, False, True]), lambda m: m.tensor([[True, False, True, True]] * 3),
    lambda m: (m.tensor([False, True, True]), 1), lambda m: m.tensor([], dtype=m.int64),
])
def test_getitem_tensor_indices(idx):
    check(lambda m, x: x[idx(m)], [(3, 4)])


# a list holding a tensor, a sequence, a slice, ... or None is PyTorch's tuple of indices (with its deprecation
# warning); a list of numbers is one index
LISTS_AS_TUPLES = [
    lambda m: [m.tensor([0, 2]), m.tensor([1, 3])], lambda m: [m.tensor([0, 2])], lambda m: [[0, 2], [1, 3]],
    lambda m: [[0, 1]], lambda m: [0, slice(1, 3)], lambda m: [None, 0], lambda m: [Ellipsis, 1],
    lambda m: [m.tensor([[0], [2]]), [1, 3]],
]


@pytest.mark.parametrize("idx", LISTS_AS_TUPLES)
def test_getitem_list_read_as_a_tuple(idx):
    def fn(m, x):
        with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
            return x[idx(m)]
    check(fn, [(3, 4)])


@pytest.mark.parametrize("idx", LISTS_AS_TUPLES)
def test_setitem_list_read_as_a_tuple(idx):
    def fn(m, x, v):
        y = x * 1
        with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
            y[idx(m)] = v
        return y
    check(fn, [(3, 4), ()])


def test_getitem_bool_mask_from_data():
    check(lambda m, x: x[x > 0], [(3, 4)])
    check(lambda m, x: x[(x > 0).all(1)], [(3, 4)])


def test_getitem_repeated_indices_accumulate():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_getitem_0d_and_scalar_results():
    check(lambda m, x: x[()], [()])
    check(lambda m, x: x[None], [()])
    check(lambda m, x: x[...], [()])
    x = ember.tensor([[1.0, 2.0]])
    assert x[0, 1].shape == () and x[0, 1].item() == 2.0


@pytest.mark.parametrize("expr,exc", [
    ("x[3]", IndexError), ("x[0, 4]", IndexError), ("x[0, 0, 0]", IndexError), ("x[1.5]", IndexError),
    ("x[e.tensor([0.5])]", IndexError), ("x[[0, 5]]", IndexError), ("x[e.tensor([True, False])]", IndexError),
])
def test_getitem_errors(expr, exc):
    with pytest.raises(exc) as want:
        eval(expr, {"x": torch.ones(3, 4), "e": torch})
    with pytest.raises(exc) as err:
        eval(expr, {"x": ember.ones(3, 4), "e": ember})
    # PyTorch's message where ember gives it (an index out of range, a mask's shape, too many indices), else one
    # that names the shape or the kind of index
    assert str(err.value) == str(want.value) or "3, 4" in str(err.value) or "float" in str(err.value).lower() \
        or "tensor" in str(err.value)


def _setitem(idx, value):
    def fn(m, x, v):
        y = x * 1  # a non-leaf, so the in-place write is allowed and recorded
        y[idx] = v if value is None else value
        return y
    return fn


@pytest.mark.parametrize("idx,vshape", [
    (0, (4,)), ((slice(None), 1), (3,)), ((1, 2), ()), (slice(0, 2), (1, 4)), ([0, 2], (2, 4)),
    (([0, 1], [1, 3]), (2,)), ((Ellipsis, 0), ()), ([2, 0], (4,)),
], ids=repr)
def test_setitem_tensor_value(idx, vshape):
    check(_setitem(idx, None), [(3, 4), vshape])


@pytest.mark.parametrize("idx,value", [(0, 5.0), ((slice(None), 1), -1), (Ellipsis, 0.5), ([0, 2], 2.0)], ids=repr)
def test_setitem_scalar_value(idx, value):
    check(lambda m, x: _setitem(idx, value)(m, x, None), [(3, 4)])


def test_setitem_bool_mask():
    def fn(m, x):
        y = x.clone()
        y[y < 0] = 0.0
        return y
    check(fn, [(3, 4)])


def test_setitem_casts_value_and_bumps_version():
    x = ember.zeros(3, dtype=ember.int64)
    v = x._version
    x[1] = 2.7
    assert x.tolist() == [0, 2, 0] and x._version == v + 1
    x[ember.tensor([True, False, True])] = ember.tensor(9)
    assert x.tolist() == [9, 2, 9]


def test_setitem_on_leaf_requiring_grad_raises():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 2.0
    with ember.no_grad():
        x[0] = 2.0
    assert x.tolist() == [2.0, 1.0, 1.0]


def test_setitem_shape_mismatch():
    with pytest.raises(RuntimeError, match="shape mismatch"):
        ember.zeros(3, 4)[0] = ember.ones(3)


def test_setitem_saved_tensor_detected():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    z = y * y
    y[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


@pytest.mark.parametrize("dim,index", [
    (0, [[0, 1, 2, 0]]), (1, [[0], [3], [1]]), (1, [[1, 1, 1], [0, 0, 3], [2, 2, 2]]), (-1, [[0, 0], [1, 1], [3, 3]]),
])
def test_gather(dim, index):
    idx = np.array(index)
    check(lambda m, x, i: x.gather(dim, i), [(3, 4), idx])
    check(lambda m, x, i: m.gather(x, dim, i), [(3, 4), idx])


def test_gather_errors():
    x = ember.ones(3, 4)
    with pytest.raises(RuntimeError, match="index 7 is out of bounds"):
        x.gather(1, ember.tensor([[7]]))
    with pytest.raises(RuntimeError, match="int64"):
        x.gather(1, ember.tensor([[0.0]]))
    with pytest.raises(RuntimeError):
        x.gather(1, ember.tensor([0]))


@pytest.mark.parametrize("shapes", [[(3, 4), (3, 4), (3, 4)], [(3, 1), (1, 4), (4,)], [(4,), (), (3, 4)]], ids=str)
def test_where(shapes):
    def fn(m, c, a, b):
        return m.where(c > 0, a, b)
    check(fn, shapes)
    check(lambda m, c, a, b: a.where(c > 0, b), shapes)


def test_where_scalars_and_promotion():
    check(lambda m, c, a: m.where(c > 0, a, 0.0), [(3, 4), (3, 4)])
    check(lambda m, c, a: m.where(c > 0, 1.0, a), [(3, 4), (3, 4)])
    check(lambda m, c, a: m.where(c > 0, a, a.double()), [(3, 4), (3, 4)])
    check(lambda m, c: m.where(c > 0, 1.0, 0.0), [(3, 4)], grad=False)
    check(lambda m, c: m.where(c > 0, 1, 0), [(3, 4)], grad=False)


def test_where_condition_only():
    check(lambda m, c: m.where(c > 0), [(3, 4)], grad=False)


def test_where_shape_error():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(5\) at "
                                           r"non-singleton dimension 1"):
        ember.where(ember.ones(2, 3) > 0, ember.ones(4, 1, 1), ember.ones(5, 1))


@pytest.mark.parametrize("mshape", [(3, 4), (4,), (3, 1)], ids=str)
def test_masked_fill(mshape):
    def fn(m, x, mk):
        return x.masked_fill(mk > 0, -1.5)
    check(fn, [(3, 4), mshape])
    check(lambda m, x, mk: m.masked_fill(x, mk > 0, float("-inf")), [(3, 4), mshape])
    check(lambda m, x, mk, v: x.masked_fill(mk > 0, v), [(3, 4), mshape, ()])


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_masked_fill_integer_tensor_from_a_value_requiring_grad_is_pytorchs_error(dtype):
    """An integer or bool tensor filled from a value tensor that requires grad: PyTorch's autograd refuses the
    result's history ("Autograd not support dtype: Long"), out of place; under no_grad it fills."""
    results = []
    for m in (torch, ember):
        x, mask = m.tensor([1, 0, 3]).to(getattr(m, dtype)), m.tensor([True, False, True])
        v = m.tensor(2.5, requires_grad=True)
        for fill in (x.masked_fill, lambda *args, x=x, m=m: m.masked_fill(x, *args)):
            with pytest.raises(RuntimeError) as err:
                fill(mask, v)
            results.append(str(err.value))
        with m.no_grad():
            results.append(x.masked_fill(mask, v).tolist())
    assert results[3:] == results[:3] and results[0].startswith("Autograd not support dtype: ")


def test_masked_fill_errors():
    with pytest.raises(RuntimeError, match="boolean"):
        ember.ones(3).masked_fill(ember.ones(3), 0.0)
    with pytest.raises(RuntimeError, match="broadcastable"):
        ember.ones(3).masked_fill(ember.ones(4) > 0, 0.0)


def test_masked_fill_int_tensor():
    check(lambda m, x: x.masked_fill(x > 1, 0), [np.array([1, 2, 3])], grad=False)


def test_index_select_narrow_select():
    check(lambda m, x, i: x.index_select(1, i), [(3, 4), np.array([3, 0, 3])])
    check(lambda m, x: x.narrow(1, 1, 2), [(3, 4)])
    check(lambda m, x: x.narrow(0, -2, 2), [(3, 4)])
    check(lambda m, x: x.select(1, -1), [(3, 4)])


def test_scatter_add():
    idx = np.array([[0, 1, 0], [2, 2, 2]])
    check(lambda m, x, s, i: x.scatter_add(0, i, s), [(3, 3), (2, 3), idx])


@pytest.mark.parametrize("call", [
    lambda m, x, s, i: x.scatter_add(0, i, s),
    lambda m, x, s, i: x.clone().scatter_add_(0, i, s),
    lambda m, x, s, i: m.scatter_add(x, 0, i, s),
])
def test_scatter_add_source_gradient_with_an_index_narrower_than_self(call):
    # the index covers column 0 of x only: src's gradient is the upstream gradient gathered there, not summed
    # over the columns the index does not reach
    idx = np.array([[0], [2], [1], [3]])
    check(call, [(4, 3), (4, 1), idx])


def test_masked_select_and_nonzero():
    check(lambda m, x: x.masked_select(x > 0), [(3, 4)])
    check(lambda m, x: x.nonzero(), [np.array([[0, 1], [2, 0]])], grad=False)
    check(lambda m, x: x.nonzero(as_tuple=True), [np.array([[0, 1], [2, 0]])], grad=False)


@pytest.mark.parametrize("value", [3.0, 0.0])
def test_nonzero_of_a_zero_dimensional_tensor(value):
    check(lambda m, x: m.nonzero(x), [np.array(value)], grad=False)  # (1, 0) or (0, 0)
    check(lambda m, x: m.nonzero(x, as_tuple=True), [np.array(value)], grad=False)  # indexes it as one element


@pytest.mark.parametrize("x", [np.array([[0.0, 1.5], [-2.0, 0.0]]), np.array([True, False, True]), np.array(3),
                               np.zeros((2, 0, 3))], ids=["float", "bool", "scalar", "empty"])
def test_argwhere(x):
    check(lambda m, t: m.argwhere(t), [x], grad=False)
    check(lambda m, t: t.argwhere(), [x], grad=False)


def test_getitem_of_view_writes_through():
    x = ember.zeros(3, 4)
    row = x[1]
    row.fill_(2.0)
    t = torch.zeros(3, 4)
    t[1].fill_(2.0)
    assert_close(x, t)


def _bool_index_outcome(lib, index, value):
    """``x[index] = value`` (both callables of lib and x): the values written, or the error's type and gist."""
    x = lib.arange(6.0).reshape(2, 3)
    try:
        x[index(lib)] = value(lib, x)
    except RuntimeError as err:
        return type(err).__name__, str(err).split(".")[0]
    return x.tolist()


BOOL_SETITEMS = {  # a 0-d bool (or byte) tensor is an index tensor to PyTorch's setitem: index_put_, its overlap check
    "T = x": (lambda m: m.tensor(True), lambda m, x: x),
    "F = x": (lambda m: m.tensor(False), lambda m, x: x),
    "T = x[0]": (lambda m: m.tensor(True), lambda m, x: x[0]),
    "T = x[0, 0]": (lambda m: m.tensor(True), lambda m, x: x[0, 0]),
    "T = x.unsqueeze(0)": (lambda m: m.tensor(True), lambda m, x: x.unsqueeze(0)),
    "(T, ...) = x": (lambda m: (m.tensor(True), Ellipsis), lambda m, x: x),
    "(T, 0) = x[0]": (lambda m: (m.tensor(True), 0), lambda m, x: x[0]),
    "(T, 0) = x[1]": (lambda m: (m.tensor(True), 0), lambda m, x: x[1]),
    "(0, T) = x[0]": (lambda m: (0, m.tensor(True)), lambda m, x: x[0]),
    "(1:, T) = x[:1]": (lambda m: (slice(1, None), m.tensor(True)), lambda m, x: x[:1]),
    "byte 1 = x[0, 0]": (lambda m: m.tensor(1, dtype=m.uint8), lambda m, x: x[0, 0]),
    # a lone Python bool copies (copy_); in a tuple it is an index tensor as a 0-d bool tensor is
    "True = x": (lambda m: True, lambda m, x: x),
    "False = x": (lambda m: False, lambda m, x: x),
    "(True,) = x": (lambda m: (True,), lambda m, x: x),
    "(True, 0) = x[0]": (lambda m: (True, 0), lambda m, x: x[0]),
    "(..., True) = x[..., None]": (lambda m: (Ellipsis, True), lambda m, x: x.unsqueeze(-1)),
    "(None, T) = x": (lambda m: (None, m.tensor(True)), lambda m, x: x),
    "T = x.clone()": (lambda m: m.tensor(True), lambda m, x: x.clone()),
    "T = 5": (lambda m: m.tensor(True), lambda m, x: 5.0),
}


@pytest.mark.parametrize("case", sorted(BOOL_SETITEMS))
def test_setitem_through_a_0d_bool_tensor_as_pytorch(case):
    index, value = BOOL_SETITEMS[case]
    assert _bool_index_outcome(ember, index, value) == _bool_index_outcome(torch, index, value)


@pytest.mark.parametrize("index", [lambda m: m.tensor(True), lambda m: m.tensor(False), lambda m: (m.tensor(True), 0),
                                   lambda m: (0, m.tensor(True)), lambda m: (Ellipsis, m.tensor(False))])
def test_getitem_through_a_0d_bool_tensor_as_pytorch(index):
    outs = []
    for lib in (torch, ember):
        x = lib.arange(6.0).reshape(2, 3)
        out = x[index(lib)]
        outs.append((tuple(out.shape), out.tolist(), out._base is None))
    assert outs[1] == outs[0]


@pytest.mark.parametrize("call", [
    lambda m, x, i, s: m.scatter(x, 0, i, s),
    lambda m, x, i, s: x.scatter(-1, i, s),
    lambda m, x, i, s: m.scatter(x, 0, i, 5.0),
    lambda m, x, i, s: m.scatter(x.detach(), 1, i, s.detach(), reduce="add"),
], ids=["src", "method", "number", "reduce"])
@pytest.mark.parametrize("layout", ["transposed", "channels_last"])
def test_scatter_of_a_non_contiguous_input_is_contiguous_as_pytorch(call, layout):
    # (PyTorch allocates the result contiguous whatever the input's layout; values and gradients unchanged)
    import warnings

    base = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    results = []
    for m in (ember, torch):
        x = m.tensor(base)
        x = x.transpose(1, 3) if layout == "transposed" else x.to(memory_format=m.channels_last)
        x.requires_grad_(True)
        s = m.full((1, 2, 2, 2), -1.0, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch deprecates reduce= with a tensor src)
            r = call(m, x, m.zeros(1, 2, 2, 2, dtype=m.long), s)
        assert r.is_contiguous(), m.__name__
        assert r.stride() == tuple(r.contiguous().stride())
        results.append(r)
    assert_close(results[0], results[1])


@pytest.mark.parametrize("tensor_value", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_masked_fill_gradient_of_inf_and_nan_as_pytorch(tensor_value, dtype):
    # (the filled places get 0 whatever reaches them, not inf * 0 = NaN: PyTorch selects, it does not multiply)
    grads = []
    for m in (ember, torch):
        x = m.tensor([[1.5, 0.2], [0.1, 0.3]], dtype=getattr(m, dtype), requires_grad=True)
        v = m.tensor(2.0, dtype=getattr(m, dtype), requires_grad=True)
        mask = m.tensor([[True, False], [False, True]])
        y = x.masked_fill(mask, v if tensor_value else 2.0)
        (y * m.tensor([[float("inf"), 1.0], [2.0, float("nan") if not tensor_value else 3.0]],
                      dtype=getattr(m, dtype))).sum().backward()
        grads.append((x.grad, v.grad if tensor_value else x.grad))
    assert_close(grads[0][0], grads[1][0])
    assert_close(grads[0][1], grads[1][1])
