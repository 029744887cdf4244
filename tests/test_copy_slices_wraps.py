"""An in-place op on a view of a tensor that needs a gradient: PyTorch's CopySlices wraps the op's own node (its
edges are the base's old history, then the op's other inputs), compared with torch: node chains, values, gradients,
second derivatives and the errors of a saved tensor changed in place."""

import numpy as np
import pytest
import torch
from oracle import assert_close, assert_same_grads, node_names, outcomes

import ember

X = np.arange(12.0).reshape(3, 4) - 5.0
W = np.linspace(-1.0, 1.0, 6).reshape(3, 2)


def _slice_iadd(m, y, w):
    y[:, 1:3] += w


def _select_mul(m, y, w):
    y[0].mul_(2)


def _narrow_clamp(m, y, w):
    y.narrow(1, 0, 2).clamp_(min=0)


def _t_add(m, y, w):
    y.t().add_(1)


def _mul_by_view_itself(m, y, w):
    v = y[1]
    v.mul_(v.clone())


def _select_mul_tensor(m, y, w):
    y[:, 2].mul_(w[:, 0])


def _exp(m, y, w):
    y[1:, 1:3].exp_()


def _addcmul_twice(m, y, w):
    y[0, :2].addcmul_(w[0], w[1], value=0.5)
    y[1:, 2].sub_(w[1:, 1], alpha=3)


def _promoted(m, y, w):
    y[0, :2].add_(w[0].to(m.float32))


CASES = [_slice_iadd, _select_mul, _narrow_clamp, _t_add, _mul_by_view_itself, _select_mul_tensor, _exp,
         _addcmul_twice, _promoted]


def _run(m, write, base_grad=True):
    x = m.tensor(X, requires_grad=True)
    w = m.tensor(W, requires_grad=True)
    y = x * 2 if base_grad else m.zeros(3, 4, dtype=m.float64)
    write(m, y, w)
    return x, w, y


@pytest.mark.parametrize("base_grad", [True, False])
@pytest.mark.parametrize("write", CASES, ids=lambda f: f.__name__)
def test_chain_values_and_grads_match_torch(write, base_grad):
    if not base_grad and write in (_select_mul, _narrow_clamp, _t_add, _mul_by_view_itself, _exp):
        pytest.skip("nothing needs a gradient")
    (ex, ew, ey), (tx, tw, ty) = (_run(m, write, base_grad) for m in (ember, torch))
    assert node_names(ey.grad_fn, 4) == node_names(ty.grad_fn, 4)
    assert_close(ey, ty)
    g = np.cos(np.arange(12.0)).reshape(3, 4)
    (ey * ember.tensor(g)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    assert_same_grads([ex, ew], [tx, tw])


def test_the_view_reads_the_base_after_the_op():
    for m in (ember, torch):
        y = m.tensor(X, requires_grad=True) * 2
        v = y[0]
        v.mul_(3)
        assert v.grad_fn.name().split("::")[-1] == "AsStridedBackward0"
        assert node_names(v.grad_fn, 1)[1][1] == "CopySlices"


def test_second_derivative_through_the_wrapped_node():
    res = []
    for m in (ember, torch):
        x = m.tensor(X, requires_grad=True)
        w = m.tensor(W, requires_grad=True)
        y = x * x
        y[:, 1:3].mul_(w * w)
        (gx,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gw,) = m.autograd.grad((gx * gx).sum(), w)
        res.append((gx, gw))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


@pytest.mark.parametrize("op", ["exp_", "sigmoid_", "tanh_", "sqrt_"])
def test_second_derivative_of_an_op_saving_its_output(op):
    # the formula recorded under create_graph reads the op's saved output, whose history reaches the wrapped node
    # itself: the second backward runs it there too (CopySlices, run first, must not have freed it)
    res = []
    for m in (ember, torch):
        x = m.tensor(X + 6.0, requires_grad=True)
        y = x * 0.5
        getattr(y[:, 1], op)()
        (gx,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        (ggx,) = m.autograd.grad(gx.sum(), x)
        res.append((gx, ggx))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


def _set_number(y):
    y[0] = 2


def _set_tensor_index(y):
    y[0, ember.tensor([1, 2]) if isinstance(y, ember.Tensor) else torch.tensor([1, 2])] = 2


@pytest.mark.parametrize("write", [lambda y: y[0].add_(1), lambda y: y[:, 1:].zero_(), _set_number, _set_tensor_index],
                         ids=["add_", "zero_", "setitem", "setitem_index"])
def test_backward_twice_through_copy_slices_that_saved_nothing(write):
    # PyTorch's CopySlices drops the node it wraps once run without retain_graph: a second backward is its error
    # even where neither that node nor the base's history saved a tensor
    def fn(m):
        x = m.tensor(X, requires_grad=True)
        y = x.clone()
        write(y)
        y.sum().backward()
        y.sum().backward()

    (got, _), (want, _) = outcomes(fn)
    assert isinstance(want, RuntimeError) and type(got) is type(want)
    assert str(got) == str(want)


def test_saved_tensor_of_the_wrapped_node_changed_in_place():
    def fn(m):
        y = m.tensor(X, requires_grad=True) * 2
        y[0].exp_()  # ExpBackward0 saves its result: the view's new value
        y.add_(1)  # changes it
        y.sum().backward()

    (got, _), (want, _) = outcomes(fn)
    assert isinstance(want, RuntimeError) and type(got) is type(want)
    assert "modified by an inplace operation" in str(got)
    assert str(got).split("; ")[1][:40] == str(want).split("; ")[1][:40]


def test_retain_graph_and_autograd_grad_with_inputs():
    res = []
    for m in (ember, torch):
        x = m.tensor(X, requires_grad=True)
        w = m.tensor(W, requires_grad=True)
        y = x * 2
        y[:, 1:3].mul_(w)
        out = (y * y).sum()
        (gw,) = m.autograd.grad(out, w, retain_graph=True)
        out.backward()
        res.append((gw, x.grad, w.grad))
    for a, b in zip(*res):
        assert_close(a, b)


GETITEMS = ["[0, :2]", "[-1, 1:3]", "[1:3, 2:4]", "[None, 0]", "[0, None]", "[0, ..., None]", "[..., 0, 1:]",
            "[1:, None, ::2]", "[2:2, 1]", "[0:3, 1]", "[:, 1]", "[:, :]", "[1, 2]", "[None, :, None]",
            "[1, i]", "[i, 1:3]", "[1:3, i]", "[i, None]", "[i, :, 0]", "[:, i]",
            # a slice is a whole dimension (no step) when it starts at 0 as given, steps by 1 and ends at or past the
            # end: [-3:] slices, [0:9] does not; a lone step is named as that step, none an alias
            "[-3:, 1]", "[:, 1, 0:2]", "[1, 0:4:1]", "[0:3, 0:4]", "[0:9, 1]", "[None, 0:3]", "[None, -9:]",
            "[(slice(0, 3),)]", "[-3:, i]"]


@pytest.mark.parametrize("index", GETITEMS)
def test_getitem_records_one_view_per_step(index):
    """PyTorch applies a basic index one step at a time (select, slice, unsqueeze; a whole dimension no step), its
    basic parts before its index tensors: a node per step."""
    res = []
    for m in (ember, torch):
        x = m.tensor(np.arange(24.0).reshape(3, 4, 2), requires_grad=True)
        i = m.tensor([0, 1, 1])  # noqa: F841 (read by the index)
        y = eval("(x * 1)" + index)
        g = np.sin(np.arange(y.numel())).reshape(tuple(y.shape))
        (y * m.tensor(g)).sum().backward()
        res.append((node_names(y.grad_fn, 4), y, x))
    assert res[0][0] == res[1][0]
    assert_close(res[0][1], res[1][1])
    assert tuple(res[0][1].stride()) == tuple(res[1][1].stride())
    assert_same_grads([res[0][2]], [res[1][2]])


def test_getitem_steps_keep_pytorchs_index_errors():
    (got, _), (want, _) = outcomes(lambda m: (m.tensor(X, requires_grad=True) * 1)[1:, 7])
    assert (type(got), str(got)) == (type(want), str(want))


SETITEMS = ["[i, 1:3]", "[1:3, i]", "[0, i]", "[i, 0]", "[:, i]", "[i]", "[i, :, 0]", "[1, :, i]", "[..., 1:, i]",
            "[mask, 1:3]"]


@pytest.mark.parametrize("index", SETITEMS)
def test_setitem_with_index_tensors_writes_through_the_views(index):
    """``y[i, 1:3] = v``: PyTorch's index_put_ into the view ``y[:, 1:3]``, CopySlices wrapping IndexPutBackward0;
    with no narrowing basic part, IndexPutBackward0 on ``y`` itself."""
    res = []
    for m in (ember, torch):
        x = m.tensor(np.arange(24.0).reshape(3, 4, 2), requires_grad=True)
        i, mask = m.tensor([0, 1, 1]), m.tensor([True, False, True])  # noqa: F841 (read by the index)
        y = x * 1
        w = m.ones_like(eval("y" + index)).requires_grad_()
        exec("y" + index + " = w * 3")
        (y * m.arange(24.0).reshape(3, 4, 2)).sum().backward()
        res.append((node_names(y.grad_fn, 3), y, x, w))
    assert res[0][0] == res[1][0]
    assert_close(res[0][1], res[1][1])
    assert_same_grads(res[0][2:], res[1][2:])
