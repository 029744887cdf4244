"""Shape ops against PyTorch: values, gradients, views sharing storage, errors."""

import pytest
import torch
from oracle import assert_same_error, check, outcomes

import ember


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: x.reshape(4, 3), (3, 4)),
    (lambda m, x: x.reshape(-1), (3, 4)),
    (lambda m, x: x.reshape((2, -1, 3)), (3, 4)),
    (lambda m, x: m.reshape(x, [12]), (3, 4)),
    (lambda m, x: x.reshape(()), (1,)),
    (lambda m, x: x.reshape(1, 1), ()),
    (lambda m, x: x.reshape(0, 5), (5, 0)),
    (lambda m, x: x.view(2, 6), (3, 4)),
    (lambda m, x: x.view(-1, 2), (3, 4)),
    (lambda m, x: x.view(x.shape), (3, 4)),
    (lambda m, x: x.view_as(x.t().contiguous()), (3, 4)),
    (lambda m, x: x.reshape_as(x.t()), (3, 4)),
    (lambda m, x: x.flatten(), (2, 3, 4)),
    (lambda m, x: x.flatten(1), (2, 3, 4)),
    (lambda m, x: m.flatten(x, 0, 1), (2, 3, 4)),
    (lambda m, x: x.flatten(), ()),
    (lambda m, x: x.unflatten(1, (2, 2)), (3, 4)),
    (lambda m, x: x.permute(2, 0, 1), (2, 3, 4)),
    (lambda m, x: x.permute((1, 0, 2)), (2, 3, 4)),
    (lambda m, x: m.permute(x, (-1, 0, 1)), (2, 3, 4)),
    (lambda m, x: x.transpose(0, 2), (2, 3, 4)),
    (lambda m, x: m.transpose(x, -1, -2), (2, 3, 4)),
    (lambda m, x: x.t(), (3, 4)),
    (lambda m, x: x.t(), (3,)),
    (lambda m, x: x.T, (3, 4)),
    (lambda m, x: x.mT, (2, 3, 4)),
    (lambda m, x: x.unsqueeze(0), (3, 4)),
    (lambda m, x: x.unsqueeze(-1), (3, 4)),
    (lambda m, x: m.unsqueeze(x, 1), (3, 4)),
    (lambda m, x: x.unsqueeze(0), ()),
    (lambda m, x: x.squeeze(), (1, 3, 1, 4)),
    (lambda m, x: x.squeeze(0), (1, 3, 1, 4)),
    (lambda m, x: x.squeeze(1), (1, 3, 1, 4)),
    (lambda m, x: x.squeeze(-2), (1, 3, 1, 4)),
    (lambda m, x: x.squeeze((0, 2)), (1, 3, 1, 4)),
    (lambda m, x: x.squeeze(), ()),
    (lambda m, x: x.expand(3, 4), (1, 4)),
    (lambda m, x: x.expand(2, 3, 4), (3, 1)),
    (lambda m, x: x.expand(-1, 5), (3, 1)),
    (lambda m, x: x.expand((2, 3)), ()),
    (lambda m, x: x.expand_as(m.ones(2, 3, 4)), (3, 1)),
    (lambda m, x: m.broadcast_to(x, (2, 3)), (3,)),
    (lambda m, x: x.t().contiguous(), (3, 4)),
    (lambda m, x: x.contiguous(), (3, 4)),
    (lambda m, x: x.flip(0), (3, 4)),
    (lambda m, x: x.flip((0, 1)), (3, 4)),
    (lambda m, x: x.flip(0, 1), (3, 4)),  # dims as separate arguments, as the method takes them
    (lambda m, x: x.flip(-1, 0, 1), (2, 3, 4)),
    (lambda m, x: x.flip(dims=[1]), (3, 4)),
    (lambda m, x: x.repeat(2, 3), (3, 4)),
    (lambda m, x: x.repeat(2, 1, 1), (3, 4)),
])
def test_shape_op(fn, shape):
    check(fn, [shape])


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: x.split(2), (5, 3)),
    (lambda m, x: x.split(2, dim=1), (5, 3)),
    (lambda m, x: x.split([1, 4]), (5, 3)),
    (lambda m, x: m.split(x, [2, 0, 1], 1), (5, 3)),
    (lambda m, x: x.split(10), (5, 3)),
    (lambda m, x: x.chunk(2), (5, 3)),
    (lambda m, x: x.chunk(3, 1), (5, 3)),
    (lambda m, x: m.chunk(x, 4), (6, 2)),
    (lambda m, x: x.chunk(3), (2, 3)),
    (lambda m, x: x.unbind(), (3, 2)),
    (lambda m, x: m.unbind(x, 1), (3, 2)),
])
def test_multi_output(fn, shape):
    check(lambda m, x: tuple(fn(m, x)), [shape])


def test_split_lengths_match_torch():
    for n, k in [(5, 2), (6, 4), (1, 3), (7, 7), (0, 2)]:
        sizes = [t.shape[0] for t in ember.ones(n, 2).chunk(k)]
        assert sizes == [t.shape[0] for t in torch.ones(n, 2).chunk(k)], (n, k)


@pytest.mark.parametrize("fn,shapes", [
    (lambda m, a, b: m.cat([a, b]), [(2, 3), (4, 3)]),
    (lambda m, a, b: m.cat((a, b), dim=1), [(2, 3), (2, 1)]),
    (lambda m, a, b: m.cat([a, b], -1), [(2, 3), (2, 5)]),
    (lambda m, a, b: m.cat([a, b, a]), [(2,), (3,)]),
    (lambda m, a, b: m.cat([a, b]), [(0,), (3, 2)]),
    (lambda m, a, b: m.cat([a, b]), [(0, 2), (3, 2)]),
    (lambda m, a, b: m.concat([a, b], 0), [(1, 2), (3, 2)]),
    (lambda m, a, b: m.stack([a, b]), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.stack([a, b], 1), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.stack((a, b), dim=-1), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.stack([a, b]), [(), ()]),
    (lambda m, a, b: m.hstack([a, b]), [(2, 3), (2, 1)]),
    (lambda m, a, b: m.vstack([a, b]), [(3,), (3,)]),
])
def test_cat_stack(fn, shapes):
    check(fn, shapes)


def test_cat_promotes_dtypes():
    a, b = ember.ones(2, dtype=ember.int64), ember.ones(2)
    assert str(ember.cat([a, b]).dtype) == "ember.float32"
    assert ember.stack([a, a.double()]).dtype == ember.float64


def test_views_share_storage_and_version():
    x = ember.zeros(3, 4)
    for v in (x.view(12), x.reshape(4, 3), x.t(), x.transpose(0, 1), x.unsqueeze(0), x[1:], x.expand(2, 3, 4),
              x.permute(1, 0), x.narrow(0, 1, 2), x.select(1, 0), x.squeeze(), x.flatten()):
        before = x._version
        x.add_(1)
        assert v._version == x._version == before + 1
        assert v.numpy().base is not None or v.numpy() is x.numpy()
    y = x.view(12)
    y[0] = 5
    assert x[0, 0].item() == 5


def test_non_view_ops_copy():
    x = ember.zeros(3, 4)
    for c in (x.clone(), x.flip(0), x.repeat(1, 1), x.t().contiguous()):
        c.add_(1)
    assert x.sum().item() == 0


@pytest.mark.parametrize("expr", [
    "x.view(5, 3)", "x.reshape(-1, -1)", "x.reshape(5, -1)", "x.view(-2, 6)",
    "x.t().view(12)", "x.permute(0, 1, 2)", "x.permute(0, 0)", "x.transpose(0, 3)",
    "x.unsqueeze(3)", "x.squeeze(2)", "x.expand(2, 4)", "x.expand(3)", "x.flatten(1, 0)",
    "x.split([2, 2])", "x.chunk(0)", "e.cat([x, x.t()])", "e.cat([])", "e.cat([x[0, 0], x[0, 0]])",
    "e.stack([x, x[:2]])", "e.cat([x, x], dim=2)", "x.repeat(2)", "x.unflatten(1, (3, 2))",
])
def test_shape_errors_match_torch(expr):
    with pytest.raises((RuntimeError, IndexError, ValueError, TypeError)) as err:
        eval(expr, {"x": ember.ones(3, 4), "e": ember})
    with pytest.raises((RuntimeError, IndexError, ValueError, TypeError)) as terr:
        eval(expr, {"x": torch.ones(3, 4), "e": torch})
    assert err.type is terr.type, (err.value, terr.value)


def test_error_messages_name_shapes():
    with pytest.raises(RuntimeError, match=r"shape '\[5, 3\]' is invalid for input of size 12"):
        ember.ones(3, 4).view(5, 3)
    with pytest.raises(RuntimeError, match=r"Sizes of tensors must match except in dimension 0"):
        ember.cat([ember.ones(2, 3), ember.ones(2, 4)])
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(4\) must match the existing size \(3\)"):
        ember.ones(3, 1).expand(4, 2)


def test_size_and_shape():
    x = ember.ones(2, 3, 4)
    assert x.shape == (2, 3, 4) and isinstance(x.shape, ember.Size)
    assert x.size() == x.shape and x.size(1) == 3 and x.size(-1) == 4
    assert x.shape[1:] == ember.Size([3, 4]) and repr(x.shape) == "ember.Size([2, 3, 4])"
    assert x.shape.numel() == 24 and x.dim() == 3 and x.ndim == 3 and x.numel() == 24
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(3)


def test_split_takes_pytorchs_keyword_names():
    import torch

    for m in (torch, ember):
        x = m.arange(10.0).reshape(2, 5)
        a, b = x.split(split_size=[2, 3], dim=-1)  # the method's name (as in mamba-minimal's model)
        c, d = m.split(x, split_size_or_sections=[2, 3], dim=1)  # the function's
        assert (a.shape[1], b.shape[1], c.shape[1], d.shape[1]) == (2, 3, 2, 3)


# ---------------------------------------------------------------- as_strided

AS_STRIDED = [
    ((12,), (3, 2), (1, 3), 1),
    ((12,), (2, 2), (1, 1), None),  # overlapping windows: their gradients add up
    ((3, 4), (3, 3), (4, 1), None),
    ((3, 4), (2, 2, 2), (4, 1, 2), 2),
    ((3, 4), (0, 3), (3, 1), None),
    ((3, 4), (), (), 5),
]


@pytest.mark.parametrize("shape,size,stride,offset", AS_STRIDED)
def test_as_strided_values_and_gradients(shape, size, stride, offset):
    check(lambda m, x: m.as_strided(x * 1, size, stride, offset), [shape])  # x * 1: the view's own storage
    check(lambda m, x: (x * 1).as_strided(size, stride, offset) ** 2, [shape])


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_as_strided_views_the_storage_from_the_tensors_own_offset(m):
    base = m.arange(12.0)
    view = base[2:]
    assert view.as_strided((2, 2), (1, 1)).tolist() == [[2.0, 3.0], [3.0, 4.0]]  # from where view starts
    assert view.as_strided((2,), (1,), 0).tolist() == [0.0, 1.0]  # an explicit offset counts from the storage
    strided = base.as_strided((3, 2), (1, 3), 1)
    assert strided.stride() == (1, 3) and strided.storage_offset() == 1 and not strided.is_contiguous()
    strided[0, 1] = 100.0  # shares memory with base
    assert base[4].item() == 100.0
    for bad in (lambda: base.as_strided((5, 5), (5, 1)), lambda: base.as_strided((2,), (-1,)),
                lambda: base.as_strided((2, 2), (1,))):
        with pytest.raises(RuntimeError):
            bad()



def test_flip_method_argument_errors():
    for m in (ember, torch):
        x = m.zeros(2, 3)
        with pytest.raises(TypeError, match="missing 1 required positional"):
            x.flip()
        with pytest.raises(RuntimeError, match="appears multiple times"):
            x.flip(0, 0)


@pytest.mark.parametrize("op", [
    lambda x: x.t(), lambda x: x.transpose(0, 0), lambda x: x.transpose(-1, -1), lambda x: x.transpose(-1, 0),
    lambda x: x.transpose(0, 1), lambda x: x.transpose(1, 0),
])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_transposes_of_0d_and_1d_tensors_are_views_as_pytorch(op, shape):
    """t() and transpose() of a 0-d or 1-d tensor: a new view with PyTorch's grad_fn (not the tensor itself), and
    dims out of range are its IndexError (a 0-d tensor's range is [-1, 0])."""
    outcomes = []
    for m in (torch, ember):
        x = m.ones(shape, requires_grad=True) * 2
        try:
            y = op(x)
        except IndexError as err:
            outcomes.append(("IndexError", str(err)))
            continue
        outcomes.append((tuple(y.shape), y is x, y._base is x, y.grad_fn.name()))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("fn", [
    lambda m: m.zeros(2, 3).repeat(-1, 2),
    lambda m: m.arange(3).repeat(-1),
    lambda m: m.zeros(2, 3).repeat(2, -1, -2),
    lambda m: m.zeros(()).repeat(-2),
    lambda m: m.zeros(2).repeat(0, -1),
    lambda m: m.zeros(2, 3).tile(2, -1, -2),
    lambda m: m.empty(2, -2, -6),
    lambda m: m.zeros(2).new_empty((1, -1, -3)),
])
def test_a_negative_repeat_or_size_is_pytorchs_error_naming_the_first_negative_dimension(fn):
    assert_same_error(fn)


def test_an_empty_tensor_repeated_a_negative_number_of_times_is_empty_as_pytorchs():
    for m in (ember, torch):
        assert tuple(m.zeros(0).repeat(-1).shape) == (0,)
        assert tuple(m.zeros(0, 2).repeat(-1, 3).shape) == (0, 6)


@pytest.mark.parametrize("make,target", [
    (lambda m: m.zeros(10)[3:5], (1, 2)),
    (lambda m: m.zeros(10)[3:3], (2, 0)),
    (lambda m: m.zeros(10)[3:4][:0], (2, 0)),
    (lambda m: m.zeros(4, 5)[2:, 5:], (3, 2, 0)),
    (lambda m: m.zeros(4, 5)[:, 1:2], (2, 4, 1)),
    (lambda m: m.zeros(4, 5)[:, 1:2], (1, 4, 1)),
    (lambda m: m.zeros(2, 1), (1, 1, 2, 1)),
    (lambda m: m.zeros(2, 1), (3, 2, 4)),
    (lambda m: m.zeros(3), (1, 3)),
    (lambda m: m.zeros(()), (1, 1)),
    (lambda m: m.zeros(6)[1:].view(1, 5), (4, -1)),
    (lambda m: m.zeros(4, 5)[:, 1:2], (3, 4, 2)),  # (broadcasts to no dimension of size 1: NumPy's own view)
    (lambda m: m.zeros(4, 5).t()[1:], (2, 4, 4)),
])
def test_expand_keeps_its_bases_storage_and_offset_with_pytorchs_strides(make, target):
    seen = []
    for m in (ember, torch):
        x = make(m)
        y = x.expand(*target)
        seen.append((tuple(y.shape), y.stride(), y.storage_offset(), y.is_contiguous(),
                     y.untyped_storage().nbytes(), y.data_ptr() == x.data_ptr() or not y.numel()))
    assert seen[0] == seen[1]


def test_expand_without_repeats_writes_through_and_a_broadcast_stays_read_only():
    for m in (ember, torch):
        base = m.zeros(6)
        base[2:4].expand(1, 2).add_(1)
        assert base.tolist() == [0, 0, 1, 1, 0, 0]
        with pytest.raises(RuntimeError):
            base[2:4].expand(3, 2).add_(1)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("layout", ["t31", "perm", "sliced", "expanded", "size1-mid", "empty"])
def test_unsqueeze_keeps_the_other_strides_as_pytorch(layout, requires_grad):
    # NumPy's reshape may restride a dimension of size 1 other than the new one ((3, 1).t().unsqueeze(1) gave
    # strides (3, 3, 1) for PyTorch's (1, 3, 1)): the new dimension's stride alone was checked

    def make(lib):
        x = {"t31": lambda: lib.ones(3, 1).t(), "perm": lambda: lib.ones(4, 1, 3).permute(2, 1, 0),
             "sliced": lambda: lib.ones(4, 1, 6)[:, :, ::2], "expanded": lambda: lib.ones(3, 1).expand(3, 4),
             "size1-mid": lambda: lib.ones(2, 1, 3)[:, :, 1:], "empty": lambda: lib.ones(2, 0, 1).transpose(0, 2)}[layout]()
        return x.requires_grad_() if requires_grad and x.is_leaf else x

    for dim in range(-make(torch).dim() - 1, make(torch).dim() + 1):
        expected, got = make(torch).unsqueeze(dim), make(ember).unsqueeze(dim)
        assert (tuple(got.shape), got.stride()) == (tuple(expected.shape), expected.stride()), dim


@pytest.mark.parametrize("call", [
    lambda m, x: x.split(2), lambda m, x: x.split([1]), lambda m, x: m.split(x, 1, 0), lambda m, x: x.chunk(2),
    lambda m, x: x.chunk(0), lambda m, x: x.unbind(), lambda m, x: x.unbind(-1), lambda m, x: x.unbind(1),
    lambda m, x: m.tensor_split(x, 1),
], ids=["split", "split sizes", "torch.split", "chunk", "chunk 0", "unbind", "unbind -1", "unbind 1", "tensor_split"])
def test_splitting_a_0d_tensor_is_pytorchs_error(call):
    # a 0-d tensor's dim 0 wraps, but it has no size: these indexed its empty shape (IndexError: tuple index)
    assert_same_error(lambda m: call(m, m.ones(())))


@pytest.mark.parametrize("dims", [(0, 0), (0, -4), (2, -2, 0), (3, 1, 3, 1), (0, 0, 9)])
@pytest.mark.parametrize("call", [
    lambda m, x, d: m.squeeze(x, d), lambda m, x, d: x.squeeze(d), lambda m, x, d: m.flip(x, d),
    lambda m, x, d: m.sum(x, d),
], ids=["squeeze", "squeeze_method", "flip", "sum"])
def test_a_repeated_dim_is_refused_as_pytorch(call, dims):
    # (in the order PyTorch reads the list: the first dim that repeats one before it, before a later bad dim)
    assert_same_error(lambda m: call(m, m.zeros(1, 2, 1, 3), dims))


@pytest.mark.parametrize("args", [(0, (-1, 1)), (-1, (1,)), (1, (1,))])
def test_unflatten_of_a_0d_tensor_raises_as_pytorch(args):
    # (it reshaped the single element where PyTorch has no dim to unflatten)
    (got, _), (want, _) = outcomes(lambda m: m.zeros(()).unflatten(*args))
    assert type(got).__name__ == type(want).__name__
    assert str(want).startswith(str(got))  # (PyTorch's goes on with its C++ stack)
