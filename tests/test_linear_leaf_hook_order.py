"""The order in which backward reaches the leaves of a ``Linear`` (their tensor hooks and post-accumulate-grad hooks,
so the hooks a debugging script puts on ``model.named_parameters()``), against PyTorch's engine.

PyTorch's linear is addmm(bias, input, weight.t()): its backward passes the bias's gradient first, then the
input's, then runs weight.t()'s node, which leads to the weight; ember's ``Linear`` is one node of inputs (input,
weight, bias) and passes its gradients on in PyTorch's order."""

import pytest
import torch

import ember


def _order(lib, shape, bias: bool, input_grad: bool, post: bool):
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 2, bias=bias)
    x = lib.randn(*shape, requires_grad=input_grad)
    order = []
    for name, t in [*layer.named_parameters(), ("input", x)]:
        if not t.requires_grad:
            continue
        if post:
            t.register_post_accumulate_grad_hook(lambda t, name=name: order.append(name))
        else:
            t.register_hook(lambda g, name=name: order.append((name, tuple(g.shape))))
    layer(x).sum().backward()
    return order


@pytest.mark.parametrize("post", [False, True], ids=["tensor_hook", "post_accumulate"])
@pytest.mark.parametrize("shape,bias,input_grad", [((4, 3), True, False), ((4, 3), True, True),
                                                   ((2, 4, 3), True, True), ((3,), True, True),
                                                   ((4, 3), False, True)])
def test_leaves_of_a_linear_get_their_gradients_in_pytorchs_order(shape, bias, input_grad, post):
    assert _order(ember, shape, bias, input_grad, post) == _order(torch, shape, bias, input_grad, post)


def test_parameters_of_a_stack_of_linears_in_pytorchs_order():
    def order(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(5, 7), lib.nn.ReLU(), lib.nn.Linear(7, 1))
        seen = []
        for name, p in model.named_parameters():
            p.register_hook(lambda g, name=name: seen.append(name))
        model(lib.randn(6, 5)).pow(2).mean().backward()
        return seen

    assert order(ember) == order(torch) == ["2.bias", "2.weight", "0.bias", "0.weight"]


def _graph(fn, names, seen):
    """A walk of ``fn.next_functions`` as debugging scripts print it: node types, leaves by name, a node met
    again marked so (the walk must meet the same node object each time)."""
    if fn is None:
        return None
    if fn in seen:
        return "seen " + type(fn).__name__
    seen.add(fn)
    if hasattr(fn, "variable"):
        return names[fn.variable]
    return [type(fn).__name__, *(_graph(nxt, names, seen) for nxt, _ in fn.next_functions)]


@pytest.mark.parametrize("bias", [True, False])
def test_a_linears_weight_is_reached_through_its_transpose_as_in_pytorch(bias):
    """PyTorch's graph of an MLP: AddmmBackward0 (MmBackward0 without a bias) leads to the bias, the input's
    node and weight.t()'s TBackward0, which leads to the weight; the same nodes on every walk, before and after
    backward, and the weight's own AccumulateGrad under the TBackward0."""
    def walks(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 8, bias=bias), lib.nn.ReLU(), lib.nn.Linear(8, 3, bias=bias))
        names = {p: n for n, p in model.named_parameters()}
        loss = model(lib.randn(5, 4)).pow(2).sum()
        before = _graph(loss.grad_fn, names, set())
        again = _graph(loss.grad_fn, names, set())
        shared = set()
        _graph(loss.grad_fn, names, shared)
        twice = _graph(loss.grad_fn, names, shared)  # the root met again: the same node objects throughout
        linear = loss.grad_fn.next_functions[0][0].next_functions[0][0]  # (under PowBackward0, SumBackward0)
        transpose = linear.next_functions[-1][0]
        leaf = transpose.next_functions[0][0]
        loss.backward()
        return (before, again, twice, _graph(loss.grad_fn, names, set()), type(transpose).__name__,
                leaf.variable is model[2].weight)

    expected = walks(torch)
    assert expected[0][1][1][-1] == ["TBackward0", "2.weight"] and expected[-2:] == ("TBackward0", True)
    assert walks(ember) == expected
