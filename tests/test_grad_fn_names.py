"""The nodes of view and shape ops, and of the common ops (``OPS``), carry PyTorch's names: ``type(y.grad_fn).__name__``, ``repr(y.grad_fn)`` and
a printed tensor's ``grad_fn=<...>`` read as under PyTorch (programs print them; error messages name them)."""

import numpy as np
import pytest
import torch
from oracle import assert_same_error

import ember

CASES = {
    "split": lambda x: x.split(2, 1)[1],
    "split_sizes": lambda x: x.split([2, 4], 1)[0],
    "split_with_sizes": lambda x: x.split_with_sizes([1, 3])[1],
    "chunk": lambda x: x.chunk(3, 1)[2],
    "unbind": lambda x: x.unbind(1)[3],
    "tensor_split": lambda x: x.tensor_split(3, 1)[0],
    "narrow": lambda x: x.narrow(1, 0, 2),
    "select": lambda x: x.select(1, 2),
    "view": lambda x: x.view(24),
    "reshape": lambda x: x.reshape(2, 12),
    "reshape_copy": lambda x: x.t().reshape(-1),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 3)),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x[:1].squeeze(),
    "squeeze_dim": lambda x: x[:1].squeeze(0),
    "squeeze_dims": lambda x: x[:1].unsqueeze(0).squeeze((0, 1)),
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "mT": lambda x: x.mT,
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "T": lambda x: x.T,
    "contiguous": lambda x: x.t().contiguous(),
    "stack": lambda x: torch_or_ember(x).stack([x, x]),
    "cat": lambda x: torch_or_ember(x).cat([x, x]),
    "expand": lambda x: x[:, :1].expand(4, 3),
    # reshape as a view of a tensor that is not contiguous: PyTorch's _reshape_alias (view and unflatten: a view)
    "reshape_of_transposed": lambda x: x.t().reshape(3, 2, 4),
    "reshape_of_slice": lambda x: x[:, ::2].reshape(2, 2, 3),
    "reshape_of_column": lambda x: x[:, 1].reshape(2, 2),
    "reshape_of_size_one_column": lambda x: x[:, :1].reshape(2, 2),
    "reshape_as_of_transposed": lambda x: x.t().reshape_as(x.t().unsqueeze(0)),
    "reshape_of_unsqueezed": lambda x: x.unsqueeze(1).reshape(2, 12),
    "flatten_of_slice": lambda x: x[:, :2].unsqueeze(2).flatten(1),
    "view_of_transposed": lambda x: x.t().view(3, 2, 4),
    "unflatten_of_transposed": lambda x: x.t().unflatten(1, (2, 2)),
    "unflatten_inferred": lambda x: x.t().unflatten(-1, (-1, 2)),
    # flatten of one dim is the tensor itself; ravel copies a tensor that is not contiguous, then views the copy
    "flatten_one_dim": lambda x: x.t().flatten(1),
    "ravel_of_transposed": lambda x: x.t().ravel(),
    "ravel": lambda x: x.ravel(),
    "ravel_function_of_transposed": lambda x: torch_or_ember(x).ravel(x.t()),
    "ravel_function": lambda x: torch_or_ember(x).ravel(x),
}
# x[...]'s name: the last step PyTorch's indexing takes (type(grad_fn) stays ember's BasicIndex)
INDEXING = ["x[0]", "x[-1]", "x[:, 1:3]", "x[1:3, 0]", "x[0, 1:3]", "x[None]", "x[1:, None]", "x[None, 0]",
            "x[..., 0]", "x[..., 1:2]", "x[:]", "x[:, :]", "x[...]", "x[0, ...]", "x[:, ::2]", "x[0][None]"]


def torch_or_ember(x):
    return torch if isinstance(x, torch.Tensor) else ember


def _pair(fn):
    out = []
    for m in (torch, ember):
        x = m.arange(24.0).reshape(4, 6).requires_grad_()
        out.append(fn(x))
    return out


def test_flatten_of_one_dim_is_the_tensor_and_ravel_copies_as_pytorchs():
    for m in (torch, ember):
        x = m.ones(4, 6, requires_grad=True)
        t = x.t()
        assert t.flatten(0, 0) is t and t.flatten(-1) is t
        r = t.ravel()
        assert r.grad_fn.next_functions[0][0].name() == "CloneBackward0" and r._base is not t and r._base is not x
        assert x.ravel()._base is x


@pytest.mark.parametrize("make", [lambda m: m.arange(24.0).reshape(4, 6).t(), lambda m: m.tensor(3.0),
                                  lambda m: m.arange(24.0).reshape(2, 3, 4)[:, 1:, ::2], lambda m: m.zeros(0, 3)])
def test_ravel_function_is_the_methods_as_pytorchs(make):
    outs = []
    for m in (torch, ember):
        x = make(m).requires_grad_()
        r = m.ravel(x)
        assert r.is_contiguous() and r.dim() == 1
        assert (r._base is x or r._base is getattr(x, "_base", None) and x.is_contiguous()) == x.is_contiguous()
        r.mul(m.arange(float(r.numel()))).sum().backward()
        outs.append((r, x.grad))
    for e, t in zip(outs[1], outs[0]):
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    with pytest.raises(TypeError):
        torch.ravel([1.0])
    with pytest.raises(TypeError):
        ember.ravel([1.0])


@pytest.mark.parametrize("op", list(CASES))
def test_node_class_and_repr_are_pytorchs(op):
    t, e = _pair(CASES[op])
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    assert repr(e.grad_fn).split(" object at")[0] == repr(t.grad_fn).split(" object at")[0]
    assert repr(e).split("grad_fn=")[1] == repr(t).split("grad_fn=")[1]


@pytest.mark.parametrize("expr", INDEXING)
def test_indexing_node_name_is_pytorchs(expr):
    t, e = _pair(lambda x: eval(expr))
    assert e.grad_fn.name() == t.grad_fn.name()
    assert repr(e).split("grad_fn=")[1] == repr(t).split("grad_fn=")[1]


# nodes whose class names end in a digit without being PyTorch's "...Backward<N>" (Atan2, Exp2, Expm1, Log10, Log2):
# their name gets "Backward0" as every other's
@pytest.mark.parametrize("expr", ["m.atan2(x, x + 1)", "m.exp2(x)", "m.expm1(x)", "m.log10(x + 1)", "m.log2(x + 1)"])
def test_a_node_class_named_with_a_final_digit_is_named_as_pytorchs(expr):
    t, e = _pair(lambda x: eval(expr, {"m": torch_or_ember(x), "x": x}))
    assert e.grad_fn.name() == t.grad_fn.name()
    assert repr(e).split("grad_fn=")[1] == repr(t).split("grad_fn=")[1]


# Common ops whose node reads as PyTorch's (``type(y.grad_fn).__name__``); x, y: (3, 4) float64 leaves. (Ops ember
# computes in one fused node where PyTorch's last node depends on the call, F.linear, the losses, or as a
# composition, lerp, addcmul, std, are not listed.)
OPS = {
    "add": lambda m, x, y: x + y, "sub": lambda m, x, y: x - y, "mul": lambda m, x, y: x * y,
    "div": lambda m, x, y: x / y, "add_scalar": lambda m, x, y: x + 1, "mul_scalar": lambda m, x, y: x * 2,
    "neg": lambda m, x, y: -x, "pow": lambda m, x, y: x ** 2, "exp": lambda m, x, y: x.exp(),
    "log": lambda m, x, y: x.abs().log(), "sqrt": lambda m, x, y: x.abs().sqrt(), "abs": lambda m, x, y: x.abs(),
    "sin": lambda m, x, y: x.sin(), "cos": lambda m, x, y: x.cos(), "tanh": lambda m, x, y: x.tanh(),
    "sigmoid": lambda m, x, y: x.sigmoid(), "relu": lambda m, x, y: x.relu(),
    "F.relu": lambda m, x, y: m.nn.functional.relu(x), "reciprocal": lambda m, x, y: x.reciprocal(),
    "rsqrt": lambda m, x, y: x.abs().rsqrt(), "log1p": lambda m, x, y: x.abs().log1p(),
    "softmax": lambda m, x, y: x.softmax(-1), "log_softmax": lambda m, x, y: x.log_softmax(-1),
    "sum": lambda m, x, y: x.sum(), "sum_dim": lambda m, x, y: x.sum(0), "sum_dims": lambda m, x, y: x.sum((0, 1)),
    "mean": lambda m, x, y: x.mean(), "mean_dim": lambda m, x, y: x.mean(1), "var": lambda m, x, y: x.var(),
    "prod": lambda m, x, y: x.prod(), "logsumexp": lambda m, x, y: x.logsumexp(-1), "cumsum": lambda m, x, y: x.cumsum(0),
    "mm": lambda m, x, y: x.mm(y.t()), "matmul 2-D": lambda m, x, y: x @ y.t(), "matmul 1-D": lambda m, x, y: x[0] @ y[0],
    "matmul 2-D by 1-D": lambda m, x, y: x @ y[0], "matmul 1-D by 2-D": lambda m, x, y: x[0] @ y.t(),
    "matmul 3-D": lambda m, x, y: x.unsqueeze(0) @ y.t().unsqueeze(0),
    "matmul 3-D by 2-D": lambda m, x, y: x.unsqueeze(0).expand(2, 3, 4) @ y.t(),
    "matmul 2-D by 3-D": lambda m, x, y: x @ y.t().unsqueeze(0),
    # (3-D by 3-D: a batch of 1 against a stack is PyTorch's matrix a[0] folded against it, two stacks its bmm)
    "matmul 3-D of one by a stack": lambda m, x, y: x.unsqueeze(0) @ y.t().unsqueeze(0).expand(2, 4, 3),
    "matmul 3-D stacks": lambda m, x, y: x.unsqueeze(0).expand(2, 3, 4) @ y.t().unsqueeze(0).expand(2, 4, 3),
    "bmm": lambda m, x, y: m.bmm(x.unsqueeze(0), y.t().unsqueeze(0)), "mv": lambda m, x, y: x.mv(y[0]),
    "dot": lambda m, x, y: x[0].dot(y[0]), "masked_fill": lambda m, x, y: x.masked_fill(x > 0, 0.0),
    "where": lambda m, x, y: m.where(x > 0, x, y), "clamp": lambda m, x, y: x.clamp(-1, 1),
    "clamp_min": lambda m, x, y: x.clamp(min=0), "maximum": lambda m, x, y: m.maximum(x, y),
    "gather": lambda m, x, y: x.gather(1, m.zeros(3, 2, dtype=m.long)),
    "embedding": lambda m, x, y: m.nn.functional.embedding(m.tensor([0, 1]), x),
    "layer_norm": lambda m, x, y: m.nn.functional.layer_norm(x, (4,)), "repeat": lambda m, x, y: x.repeat(2, 1),
    "flip": lambda m, x, y: x.flip(0), "roll": lambda m, x, y: x.roll(1, 0), "clone": lambda m, x, y: x.clone(),
    "pad": lambda m, x, y: m.nn.functional.pad(x, (1, 1)), "outer": lambda m, x, y: m.outer(x[0], y[0]),
    "sinc": lambda m, x, y: x.sinc(), "deg2rad": lambda m, x, y: x.deg2rad(),
    "round": lambda m, x, y: x.round(), "round_decimals": lambda m, x, y: m.round(x, decimals=1),
    "round_decimals_0": lambda m, x, y: x.round(decimals=0), "round_": lambda m, x, y: (x * 1).round_(),
    "floor": lambda m, x, y: x.floor(), "ceil": lambda m, x, y: m.ceil(x), "trunc": lambda m, x, y: x.trunc(),
    "sign": lambda m, x, y: x.sign(), "sgn": lambda m, x, y: x.sgn(), "logit": lambda m, x, y: x.sigmoid().logit(),
    "logit_eps": lambda m, x, y: m.logit(x.sigmoid(), 1e-3), "fix": lambda m, x, y: x.fix(),
    "kthvalue": lambda m, x, y: x.kthvalue(2).values, "kthvalue_keepdim": lambda m, x, y: x.kthvalue(2, 0, True)[0],
    "kthvalue_0d": lambda m, x, y: x[0, 0].kthvalue(1).values,
}


@pytest.mark.parametrize("op", list(OPS))
def test_common_op_node_names_are_pytorchs(op):
    names, reprs = [], []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0, 3.0], [1.5, 2.5, -0.5, 1.0], [-2.0, 0.25, 1.0, -3.0]], dtype=m.float64,
                     requires_grad=True)
        y = (x * 0.5 + 1).detach().requires_grad_()
        out = OPS[op](m, x, y)
        names.append(type(out.grad_fn).__name__)
        reprs.append(repr(out.grad_fn).split(" object at")[0])
    assert names[1] == names[0] and reprs[1] == reprs[0]


# linear's node reads as the op PyTorch's linear ends in, which depends on the input's rank and layout and on
# the bias (a printed ``nn.Linear`` output shows it: ``grad_fn=<AddmmBackward0>``).
LINEAR_INPUTS = {
    "1-D": lambda m: m.arange(3.0), "1-D strided": lambda m: m.arange(6.0)[::2], "2-D": lambda m: m.arange(12.0).reshape(4, 3),
    "2-D transposed": lambda m: m.arange(12.0).reshape(3, 4).t(), "3-D": lambda m: m.arange(24.0).reshape(2, 4, 3),
    "3-D transposed": lambda m: m.arange(24.0).reshape(4, 2, 3).transpose(0, 1),
    "4-D": lambda m: m.arange(48.0).reshape(2, 2, 4, 3), "3-D empty": lambda m: m.zeros(0, 4, 3),
    "3-D expanded": lambda m: m.arange(3.0).reshape(1, 1, 3).expand(2, 4, 3),
}


@pytest.mark.parametrize("bias", ["vector", "scalar", "none"])
@pytest.mark.parametrize("inp", list(LINEAR_INPUTS))
def test_linear_node_name_is_pytorchs(inp, bias):
    names = []
    for m in (torch, ember):
        w = m.arange(6.0).reshape(2, 3).requires_grad_()
        b = {"vector": m.ones(2), "scalar": m.tensor(1.0), "none": None}[bias]
        out = m.nn.functional.linear(LINEAR_INPUTS[inp](m), w, b)
        names.append((out.grad_fn.name(), repr(out.grad_fn).split(" object at")[0]))
    assert names[1] == names[0]


# A class loss's node reads as the node PyTorch's composition ends in: nll_loss's kernel (its 2-D one for inputs of
# other ranks than 1 and 2, whose unreduced loss is viewed back except for (N, C, H, W)), the addition of a
# label-smoothing term, the negation (and division by N for 'mean') of class-probability targets' sum.
CLASS_LOSS_SHAPES = [(4, 3), (3,), (2, 3, 5), (2, 3, 4, 2), (2, 3, 2, 2, 2)]


@pytest.mark.parametrize("target", ["indices", "probabilities"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", CLASS_LOSS_SHAPES)
def test_cross_entropy_and_nll_loss_node_names_are_pytorchs(shape, reduction, smoothing, target):
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    idx = rng.integers(0, 3, size=(shape[0], *shape[2:]) if len(shape) > 1 else ())
    probs = rng.random(shape)
    results = []
    for m in (torch, ember):
        inp = m.tensor(x, requires_grad=True)
        t = m.tensor(idx) if target == "indices" else m.tensor(probs)
        out = m.nn.functional.cross_entropy(inp, t, reduction=reduction, label_smoothing=smoothing)
        shown = [out.grad_fn.name(), repr(out).split("grad_fn=")[1], tuple(out.shape)]
        out.sum().backward()
        if target == "indices" and not smoothing:
            nll = m.nn.functional.nll_loss(inp.log_softmax(1 if len(shape) > 1 else 0), t, reduction=reduction)
            shown += [nll.grad_fn.name(), tuple(nll.shape)]
            nll.sum().backward()
        results.append((shown, inp.grad.detach().numpy() if m is torch else inp.grad.numpy()))
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10, atol=1e-12)


# Losses PyTorch computes in one node of its own, which ember composes of several: the last one carries PyTorch's
# name whatever the reduction; first- and second-order gradients are PyTorch's (PyTorch has no second order for
# the margin losses of classes).
ONE_NODE_LOSSES = {
    "soft_margin_loss": lambda m, x: m.nn.functional.soft_margin_loss(
        x, m.tensor([[1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]], dtype=m.float64),
        reduction=x.reduction),
    "multi_margin_loss": lambda m, x: m.nn.functional.multi_margin_loss(x, m.tensor([0, 2, 3]), p=2,
                                                                        reduction=x.reduction),
    "multilabel_margin_loss": lambda m, x: m.nn.functional.multilabel_margin_loss(
        x, m.tensor([[0, 1, -1, 0], [2, -1, 0, 0], [3, 0, 1, -1]]), reduction=x.reduction),
    "frac": lambda m, x: (x * 1.7).frac(),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("op", list(ONE_NODE_LOSSES))
def test_one_node_ops_composed_by_ember_read_as_pytorchs_node(op, reduction):
    import numpy as np
    results = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0, 3.0], [1.5, 2.5, -0.5, 1.0], [-2.0, 0.25, 1.0, -3.0]], dtype=m.float64,
                     requires_grad=True)
        x.reduction = reduction
        out = ONE_NODE_LOSSES[op](m, x)
        (g,) = m.autograd.grad((out * out).sum(), x, create_graph=True)
        second = g.requires_grad and op in ("soft_margin_loss", "frac")
        (gg,) = m.autograd.grad((g * g).sum(), x, allow_unused=True) if second else (None,)
        results.append((type(out.grad_fn).__name__, repr(out.grad_fn).split(" object at")[0],
                        repr(out).split("grad_fn=")[1], out.detach().numpy(), g.detach().numpy(),
                        None if gg is None else gg.detach().numpy()))
    (*t_names, t_out, t_g, t_gg), (*e_names, e_out, e_g, e_gg) = results
    assert e_names == t_names
    np.testing.assert_allclose(e_out, t_out, rtol=1e-12)
    np.testing.assert_allclose(e_g, t_g, rtol=1e-12)
    assert (e_gg is None) == (t_gg is None)
    if t_gg is not None:
        np.testing.assert_allclose(e_gg, t_gg, rtol=1e-12, atol=1e-12)


# linear algebra ops whose one node PyTorch names after the linalg function (torch.svd, torch.qr too)
LINALG = {
    "svd": lambda m, x: m.svd(x)[0], "linalg.svd": lambda m, x: m.linalg.svd(x)[1],
    "svdvals": lambda m, x: m.linalg.svdvals(x), "linalg.qr": lambda m, x: m.linalg.qr(x)[1],
    "slogdet": lambda m, x: m.slogdet(x)[1], "linalg.slogdet": lambda m, x: m.linalg.slogdet(x)[0],
    "eigh": lambda m, x: m.linalg.eigh(x)[0], "eigvalsh": lambda m, x: m.linalg.eigvalsh(x), "det": lambda m, x: m.det(x),
    "linalg.det": lambda m, x: m.linalg.det(x), "linalg.inv": lambda m, x: m.linalg.inv(x),
    "inverse": lambda m, x: m.inverse(x), "linalg.solve": lambda m, x: m.linalg.solve(x, x * 2),
}


@pytest.mark.parametrize("op", list(LINALG))
def test_linalg_node_names_are_pytorchs(op):
    names = []
    for m in (torch, ember):
        x = m.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 4.0]], dtype=m.float64, requires_grad=True)
        out = LINALG[op](m, x * 1)
        names.append((type(out.grad_fn).__name__, repr(out.grad_fn).split(" object at")[0]))
    assert names[1] == names[0]


SOLVES = {  # (A's shape, B's shape, left)
    "vector": ((3, 3), (3,), True), "batch of vectors": ((2, 3, 3), (2, 3), True),
    "vector broadcast": ((2, 3, 3), (3,), True), "matrix": ((3, 3), (3, 2), True),
    "left=False": ((3, 3), (2, 3), False), "left=False batch": ((2, 3, 3), (2, 4, 3), False),
}


@pytest.mark.parametrize("case", list(SOLVES))
def test_linalg_solve_is_one_node_in_every_form(case):
    """PyTorch's linalg.solve records one LinalgSolveExBackward0 for a vector right-hand side and for left=False
    too (ember used to add squeeze or transpose nodes around it); its gradients, second derivatives and
    forward-mode tangents are those of PyTorch."""
    a_shape, b_shape, left = SOLVES[case]
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape) + 3 * np.eye(a_shape[-1])
    b, v = rng.standard_normal(b_shape), rng.standard_normal(b_shape)
    got = []
    for m in (torch, ember):
        ta, tb = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        x = m.linalg.solve(ta, tb, left=left)
        names = (type(x.grad_fn).__name__, [type(f).__name__ for f, _ in x.grad_fn.next_functions])
        ga, gb = m.autograd.grad((x * x).sum(), (ta, tb), create_graph=True)
        second = m.autograd.grad((ga * ga).sum() + (gb * gb).sum(), (ta, tb))
        _, tangent = m.func.jvp(lambda p, q, m=m: m.linalg.solve(p, q, left=left), (m.tensor(a), m.tensor(b)),
                                (m.tensor(a * 0.5), m.tensor(v)))
        got.append((names, [t.detach().numpy() for t in (x, ga, gb, *second, tangent)]))
    assert got[1][0] == got[0][0] == ("LinalgSolveExBackward0", ["AccumulateGrad", "AccumulateGrad"])
    for e, t in zip(got[1][1], got[0][1]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [3, 1])
def test_linalg_solve_vector_with_left_false_is_pytorchs_error(n):
    """A vector right-hand side is a column for left=False too: X A = B with B n x 1 is PyTorch's shape error, and
    with 1 x 1 matrices its refusal of a vector there."""
    errors = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as err:
            m.linalg.solve(m.eye(n, dtype=m.float64), m.ones(n, dtype=m.float64), left=False)
        errors.append(str(err.value))
    assert errors[1] == errors[0]


# The activations' nodes (ember's one node per activation: PyTorch's are one node too, but softsign's and
# tanhshrink's, which PyTorch composes: their name is its last node's, whose two next functions ember's lacks)
ACTIVATIONS = {
    "gelu": lambda F, x: F.gelu(x), "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x), "elu": lambda F, x: F.elu(x), "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x), "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "hardtanh": lambda F, x: F.hardtanh(x), "relu6": lambda F, x: F.relu6(x), "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x, beta=2.0), "logsigmoid": lambda F, x: F.logsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x), "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "mish": lambda F, x: F.mish(x), "softshrink": lambda F, x: F.softshrink(x), "hardshrink": lambda F, x: F.hardshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.1, 0.0), "rrelu": lambda F, x: F.rrelu(x),
    "rrelu_training": lambda F, x: F.rrelu(x, training=True), "prelu": lambda F, x: F.prelu(x, x.new_ones(1) * 0.25),
    "relu": lambda F, x: F.relu(x), "sigmoid": lambda F, x: F.sigmoid(x), "tanh": lambda F, x: F.tanh(x),
    "softsign": lambda F, x: F.softsign(x), "tanhshrink": lambda F, x: F.tanhshrink(x),
}


@pytest.mark.parametrize("op", list(ACTIVATIONS))
def test_activation_node_names_are_pytorchs(op):
    seen = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [-3.0, 0.25, 4.0]], dtype=m.float64, requires_grad=True)
        node = ACTIVATIONS[op](m.nn.functional, x).grad_fn
        seen.append((node.name(), type(node).__name__, repr(node).split(" object at")[0],
                     len(node.next_functions) if op not in ("softsign", "tanhshrink") else None))
    assert seen[1] == seen[0]


# where's and masked_fill's next functions: one per differentiable input, in PyTorch's order (the condition and
# mask take no gradient and are no input of the node; masked_fill with a number has one input)
NEXT_FUNCTIONS = {
    "where": lambda m, x, y: m.where(x > 0, x, y), "where method": lambda m, x, y: x.where(x > 0, y),
    "where number other": lambda m, x, y: m.where(x > 0, x, 0.0), "where number input": lambda m, x, y: m.where(x > 0, 1.0, y),
    "where constant other": lambda m, x, y: m.where(x > 0, x, m.zeros(3, 4, dtype=m.float64)),
    "masked_fill number": lambda m, x, y: x.masked_fill(x > 0, 0.0),
    "masked_fill tensor": lambda m, x, y: x.masked_fill(x > 0, y[0, 0]),
    "masked_fill constant tensor": lambda m, x, y: x.masked_fill(x > 0, m.tensor(2.0, dtype=m.float64)),
    "masked_fill_": lambda m, x, y: (x * 1).masked_fill_(x > 0, 0.0),
}


@pytest.mark.parametrize("op", list(NEXT_FUNCTIONS))
def test_where_and_masked_fill_next_functions_are_pytorchs(op):
    seen = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0, 3.0], [1.5, 2.5, -0.5, 1.0], [-2.0, 0.25, 1.0, -3.0]], dtype=m.float64,
                     requires_grad=True)
        y = (x * 0.5 + 1).detach().requires_grad_()
        out = NEXT_FUNCTIONS[op](m, x, y)
        (gx, gy) = m.autograd.grad(out, (x, y), m.ones_like(out) * 1.5, allow_unused=True, materialize_grads=True)
        nexts = [None if f is None else f.name().split("::")[-1] for f, _ in out.grad_fn.next_functions]
        seen.append((out.grad_fn.name(), nexts, gx.tolist(), gy.tolist()))
    assert seen[1] == seen[0]


INPLACE_ACTIVATIONS = {
    "elu": lambda F, y: F.elu(y, inplace=True), "selu": lambda F, y: F.selu(y, inplace=True),
    "celu": lambda F, y: F.celu(y, inplace=True), "leaky_relu": lambda F, y: F.leaky_relu(y, 0.2, inplace=True),
    "hardtanh": lambda F, y: F.hardtanh(y, inplace=True), "relu6": lambda F, y: F.relu6(y, inplace=True),
    "silu": lambda F, y: F.silu(y, inplace=True), "hardswish": lambda F, y: F.hardswish(y, inplace=True),
    "hardsigmoid": lambda F, y: F.hardsigmoid(y, inplace=True), "mish": lambda F, y: F.mish(y, inplace=True),
    "threshold": lambda F, y: F.threshold(y, 0.1, 0.0, inplace=True), "rrelu": lambda F, y: F.rrelu(y, inplace=True),
    "elu_": lambda F, y: F.elu_(y), "relu": lambda F, y: F.relu(y, inplace=True),
}


@pytest.mark.parametrize("op", list(INPLACE_ACTIVATIONS))
def test_inplace_activation_nodes_are_pytorchs(op):
    """An in-place activation's result carries its activation's node (PyTorch's ``EluBackward1`` for the forms that
    save their result, ``SiluBackward0`` ...), one next function to the input's history; ember's was the node of a
    copy into the input (CopyFromBackward0)."""
    seen = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [-3.0, 0.25, 4.0]], dtype=m.float64, requires_grad=True)
        y = INPLACE_ACTIVATIONS[op](m.nn.functional, x * 1.5)
        nexts = [None if f is None else f.name() for f, _ in y.grad_fn.next_functions]
        (g,) = m.autograd.grad(y, x, m.ones_like(y))
        seen.append((y.grad_fn.name(), type(y.grad_fn).__name__, nexts, g.numpy()))
    assert seen[1][:3] == seen[0][:3]
    np.testing.assert_allclose(seen[1][3], seen[0][3], rtol=1e-12)


ADAPTIVE_MAX_POOLS = {
    "1d": lambda F, x: F.adaptive_max_pool1d(x.reshape(2, 3, 8), 3, return_indices=True),
    "1d unbatched": lambda F, x: F.adaptive_max_pool1d(x.reshape(6, 8), 5, return_indices=True),
    "2d": lambda F, x: F.adaptive_max_pool2d(x.reshape(2, 3, 4, 2), (3, 1), return_indices=True),
    "3d": lambda F, x: F.adaptive_max_pool3d(x.reshape(1, 3, 4, 2, 2), 2, return_indices=True),
}


def _chain(fn, depth: int = 3) -> list:
    """The names along the first next function from ``fn``, ``depth`` nodes deep."""
    names = []
    while fn is not None and len(names) < depth:
        names.append(type(fn).__name__)
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return names


@pytest.mark.parametrize("case", list(ADAPTIVE_MAX_POOLS))
def test_adaptive_max_pool_nodes_are_pytorchs(case):
    """PyTorch's adaptive max pooling nodes are AdaptiveMaxPool2DBackward0 / 3DBackward0, and its 1-d pooling is
    the 2-d one of an unsqueezed view, squeezed back: the same chain of nodes, values, indices and gradients."""
    x = np.random.default_rng(0).standard_normal(48)
    got = []
    for m in (torch, ember):
        t = m.tensor(x, requires_grad=True)
        out, idx = ADAPTIVE_MAX_POOLS[case](m.nn.functional, t * 1)
        (g,) = m.autograd.grad((out * out).sum(), t)
        got.append((_chain(out.grad_fn), out.detach().numpy(), idx.numpy(), g.numpy()))
    assert got[1][0] == got[0][0]
    for e, t in zip(got[1][1:], got[0][1:]):
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_glu_is_one_node_as_pytorchs(dim, dtype):
    """PyTorch's glu is one GluBackward0 node on its input (ember composed split, sigmoid and mul): its values,
    gradients, second derivatives (float64) and forward-mode tangents are PyTorch's."""
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal((4, 6, 2)) * 3, rng.standard_normal((4, 6, 2))
    got = []
    for m in (torch, ember):
        dt = getattr(m, dtype)
        t = m.tensor(x, dtype=dt, requires_grad=True)
        y = m.nn.functional.glu(t * 1, dim)
        names = (type(y.grad_fn).__name__, [type(f).__name__ for f, _ in y.grad_fn.next_functions])
        double = dtype == "float64"  # (a plain sum below it: no rounding of the upstream gradient in bfloat16)
        (g,) = m.autograd.grad((y * y).sum() if double else y.sum(), t, create_graph=double)
        arrays = [y, g]
        if double:
            arrays.append(m.autograd.grad((g * g).sum(), t)[0])
            arrays.append(m.func.jvp(lambda a, m=m: m.nn.functional.glu(a, dim), (m.tensor(x),), (m.tensor(v),))[1])
        got.append((names, str(y.dtype).split(".")[1], [a.detach().double().numpy() for a in arrays]))
    assert got[1][:2] == got[0][:2]
    assert got[1][0] == ("GluBackward0", ["MulBackward0"])
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == "float64" else dict(rtol=1e-5, atol=1e-5) if dtype == "float32" \
        else dict(rtol=2e-2, atol=2e-2)
    for e, t in zip(got[1][2], got[0][2]):
        np.testing.assert_allclose(e, t, **tol)


@pytest.mark.parametrize("nd", [2, 3])
def test_max_pool_nodes_are_pytorchs(nd):
    """PyTorch's 2-d and 3-d max pooling nodes are MaxPool2DWithIndicesBackward0 / MaxPool3DWithIndicesBackward0
    (ember's read MaxPoolNdBackward0)."""
    x = np.random.default_rng(0).standard_normal((2, 3) + (4,) * nd)
    got = []
    for m in (torch, ember):
        t = m.tensor(x, requires_grad=True)
        out = getattr(m.nn.functional, f"max_pool{nd}d")(t * 1, 2)
        (g,) = m.autograd.grad((out * out).sum(), t)
        got.append((_chain(out.grad_fn, 2), out.detach().numpy(), g.numpy()))
    assert got[1][0] == got[0][0]
    for e, t in zip(got[1][1:], got[0][1:]):
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("dim", [2, -3])
def test_glu_dim_out_of_range_is_pytorchs_index_error(dim):
    assert_same_error(lambda m: m.nn.functional.glu(m.ones(3, 4), dim))


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_forward_mode_hessian_blocks_are_pytorchs_reshape_alias(shape):
    """The forward-mode Hessian's blocks: a reshape of its permuted Jacobian, PyTorch's ReshapeAliasBackward0 (not
    a view of a contiguous tensor), whose next function is the permute."""
    def blocks(lib):
        h = lib.autograd.functional.hessian(lambda a: (a ** 3).sum(), lib.ones(shape), vectorize=True,
                                            outer_jacobian_strategy="forward-mode")
        return h.grad_fn.name(), h.grad_fn.next_functions[0][0].name(), h.requires_grad, h.detach().double().numpy().tolist()

    assert blocks(ember) == blocks(torch)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast_nodes_are_pytorchs(n, shape):
    """atleast_Nd records PyTorch's composite: a 0-d tensor's reshape (ViewBackward0), unsqueezes of a 1-D or 2-D one
    (UnsqueezeBackward0), the tensor itself when it has the dims already; shapes and strides as PyTorch's."""
    def chain(lib):
        x = lib.ones(shape, requires_grad=True)
        y = getattr(lib, f"atleast_{n}d")(x)
        names, fn = [], y.grad_fn
        while fn is not None and fn.next_functions:
            names.append(fn.name())
            fn = fn.next_functions[0][0]
        return tuple(y.shape), y.stride(), names, y is x

    assert chain(ember) == chain(torch)
