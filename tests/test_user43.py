"""Found by running small training programs under PyTorch and ember side by side: each checked against torch."""

import numpy as np
import pytest
import torch
from oracle import node_names

import ember


class _Stream:
    """An IterableDataset over ten samples (made for either library)."""

    def __init__(self, m, sized):
        base = m.utils.data.IterableDataset

        class Stream(base):
            def __iter__(self):
                return iter([m.tensor([float(i), 1.0]) for i in range(10)])

        class Sized(Stream):
            def __len__(self):
                return 10

        self.dataset = Sized() if sized else Stream()


def _loader(m, kind, **kw):
    if kind == "map":
        return m.utils.data.DataLoader(list(range(10)), **kw)
    if kind == "tensors":
        return m.utils.data.DataLoader(m.utils.data.TensorDataset(m.arange(10.0)), **kw)
    return m.utils.data.DataLoader(_Stream(m, kind == "sized_stream").dataset, **kw)


def _len_or_error(obj):
    try:
        return len(obj)
    except TypeError as e:
        return ("TypeError", str(e))


@pytest.mark.parametrize("kind", ["map", "tensors", "stream", "sized_stream"])
@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
                                dict(batch_size=4, num_workers=2)])
def test_len_of_a_dataloaders_iterator(kind, kw):
    """``len(iter(loader))`` is the length of the loader's index sampler, as PyTorch's iterators give it (a stream's
    has none: the infinite sampler's TypeError), before and after batches are taken; its type is PyTorch's."""
    if kind == "tensors" and kw.get("batch_size") is None:
        pytest.skip("a TensorDataset's samples are tuples either way: covered by 'map'")
    got, want = iter(_loader(ember, kind, **kw)), iter(_loader(torch, kind, **kw))
    assert type(got).__name__ == type(want).__name__
    assert _len_or_error(got) == _len_or_error(want)
    first_got, first_want = next(got), next(want)
    assert np.asarray(first_got[0] if isinstance(first_got, list) else first_got).tolist() == \
        np.asarray(first_want[0] if isinstance(first_want, list) else first_want).tolist()
    assert _len_or_error(got) == _len_or_error(want)
    assert iter(got) is got
    assert len(list(got)) == len(list(want))


@pytest.mark.parametrize("op", ["chebyshev_polynomial_t", "hermite_polynomial_h", "modified_bessel_i0"])
def test_backward_through_an_op_without_derivative_says_so(op):
    """PyTorch records no history for these ops (their results do not require grad), so backward raises its
    "does not require grad" error; ember's explanation names that cause, not only no_grad or detach."""
    for m in (torch, ember):
        x = m.tensor([0.3, 2.0], requires_grad=True)
        y = getattr(m.special, op)(x, 3) if op != "modified_bessel_i0" else m.special.modified_bessel_i0(x)
        assert y.requires_grad is False and y.grad_fn is None
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad") as e:
            y.sum().backward()
        if m is ember:
            assert "no derivative" in str(e.value) and "special's orthogonal polynomials" in str(e.value)


def _mm_case(m, layout, dtype):
    rng = np.random.default_rng(43)
    x = m.tensor(rng.standard_normal((4, 3)), dtype=dtype, requires_grad=True)
    w = m.tensor(rng.standard_normal((2, 3)), dtype=dtype, requires_grad=True)
    if layout == "weight_t":  # a layer written x @ w.t(): the second operand column-major
        y = x @ w.t()
    elif layout == "both_rows":
        y = m.mm(x, w.t().contiguous())
    elif layout == "input_t":  # a column-major first operand
        y = x.t().contiguous().t() @ w.t().contiguous()
    else:  # "both_t"
        y = m.matmul(x.t().contiguous().t(), w.t())
    return x, w, y


@pytest.mark.parametrize("layout", ["weight_t", "both_rows", "input_t", "both_t"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_mm_gradients_under_create_graph_record_pytorchs_formula(layout, dtype):
    """A matrix product's gradients under create_graph are PyTorch's mm_mat1_backward / mm_mat2_backward: grad.mm(
    mat2.t()) and mat1.t().mm(grad), or, for an operand laid out column-major (w.t()), the transposed product
    transposed back; their nodes (t(): TBackward0, not a transpose's or permute's) and the second derivatives."""
    grads = {}
    for m in (torch, ember):
        x, w, y = _mm_case(m, layout, getattr(m, dtype))
        loss = (y * y).real.sum() if dtype == "complex128" else y.tanh().sum()
        gx, gw = m.autograd.grad(loss, (x, w), create_graph=True)
        second = m.autograd.grad((gx.abs() ** 2).sum() + (gw.abs() ** 2).sum(), (x, w))
        grads[m] = (gx, gw, second)
    for got, want in zip(grads[ember][:2], grads[torch][:2]):
        assert node_names(got.grad_fn, 4) == node_names(want.grad_fn, 4)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    for got, want in zip(grads[ember][2], grads[torch][2]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def _linear_case(m, case):
    rng = np.random.default_rng(44)
    dtype = m.complex128 if case == "complex" else m.float64 if case == "float64" else m.float32
    x = m.tensor(rng.standard_normal((5, 3)), dtype=dtype, requires_grad=case != "data_input")
    w = m.tensor(rng.standard_normal((2, 3)), dtype=dtype, requires_grad=True)
    b = m.tensor(rng.standard_normal(2), dtype=dtype, requires_grad=True)
    if case == "transposed_weight":  # a weight stored transposed (its .t() row-major)
        w = m.tensor(rng.standard_normal((3, 2)), dtype=dtype).t().requires_grad_()
    if case == "column_major_input":
        x = m.tensor(rng.standard_normal((3, 5)), dtype=dtype).t().requires_grad_()
    if case == "one_bias":
        b = m.tensor([0.5], dtype=dtype, requires_grad=True)
    if case.startswith(("rows3d", "rows4d", "transposed3d")):  # a sequence's tokens, an image's pixels
        x = m.tensor(rng.standard_normal((2, 5, 3) if case.startswith("rows3d") else (2, 2, 4, 3)), dtype=dtype,
                     requires_grad=True)
        if case.startswith("transposed3d"):
            x = m.tensor(rng.standard_normal((5, 2, 3)), dtype=dtype).transpose(0, 1).requires_grad_()
    if case.endswith("scalar_bias"):
        b = m.tensor(0.5, dtype=dtype, requires_grad=True)
    bias = None if case.endswith("no_bias") else b
    y = m.nn.functional.linear(x, w, bias)
    loss = (y * y).real.sum() if case == "complex" else y.tanh().sum()
    wanted = [t for t in (x, w, bias) if t is not None and t.requires_grad]
    return wanted, loss


@pytest.mark.parametrize("case", ["float32", "float64", "no_bias", "data_input", "transposed_weight",
                                  "column_major_input", "scalar_bias", "one_bias", "complex", "rows3d",
                                  "rows3d_no_bias", "rows4d", "rows4d_no_bias"])
def test_linear_gradients_under_create_graph_record_pytorchs_addmm_formulas(case):
    """A 2-D input's linear is PyTorch's addmm(b, x, w.t()): under create_graph its gradients are mm's recorded
    as PyTorch's (MmBackward0 of the gradient and w.t().t(), the weight's back through TBackward0, the bias's
    summed then viewed to its shape), as a WGAN-GP's gradient penalty or a MAML inner step prints them; values and
    second derivatives against torch."""
    out = {}
    for m in (torch, ember):
        wanted, loss = _linear_case(m, case)
        grads = m.autograd.grad(loss, wanted, create_graph=True)
        second = m.autograd.grad(sum((g.abs() ** 2).sum() for g in grads), wanted)
        out[m] = (grads, second)
    for got, want in zip(out[ember][0], out[torch][0]):
        assert node_names(got.grad_fn, 3) == node_names(want.grad_fn, 3)  # (deeper: linear's own node,
        # one in ember, addmm and w.t() in PyTorch)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    for got, want in zip(out[ember][1], out[torch][1]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["transposed3d", "transposed3d_no_bias", "rows3d_scalar_bias"])
def test_linear_gradients_under_create_graph_other_inputs(case):
    """The inputs PyTorch's linear does not multiply as 2-D rows (a non-contiguous batch, a bias added after the
    product): the gradients and second derivatives against torch."""
    out = {}
    for m in (torch, ember):
        wanted, loss = _linear_case(m, case)
        grads = m.autograd.grad(loss, wanted, create_graph=True)
        out[m] = (grads, m.autograd.grad(sum((g ** 2).sum() for g in grads), wanted))
    for got, want in zip(out[ember][0] + out[ember][1], out[torch][0] + out[torch][1]):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_abs_gradient_under_create_graph_is_grad_times_sgn(dtype):
    """abs's gradient under create_graph is PyTorch's ``grad * self.sgn()``: MulBackward0 of the incoming gradient
    and SgnBackward0 of the input (an L1 penalty on a gradient prints it); values and second derivatives, with a
    zero among the inputs."""
    out = {}
    for m in (torch, ember):
        x = m.tensor(np.array([1.5, -2.0, 0.0, 0.25]), dtype=getattr(m, dtype))
        if dtype == "complex128":
            x = x * m.tensor(np.array([1 + 1j, 1 - 2j, 1, -1j]), dtype=m.complex128)
        x.requires_grad_()
        w = m.tensor(np.array([0.5, 1.0, 2.0, -1.0]), dtype=m.float64 if dtype == "complex128" else x.dtype,
                     requires_grad=True)
        g, = m.autograd.grad((x.abs() * w).sum(), x, create_graph=True)
        second = m.autograd.grad((g.abs() ** 2).sum() + (g * g).real.sum() if dtype == "complex128"
                                 else (g * g * 3).sum(), (x, w), allow_unused=True, materialize_grads=True)
        out[m] = (g, second)
    assert node_names(out[ember][0].grad_fn, 3) == node_names(out[torch][0].grad_fn, 3)
    np.testing.assert_allclose(out[ember][0].detach().numpy(), out[torch][0].detach().numpy(), rtol=1e-6)
    for got, want in zip(out[ember][1], out[torch][1]):  # (tolist: PyTorch's materialized zeros are a ZeroTensor)
        np.testing.assert_allclose(np.asarray(got.tolist()), np.asarray((want + 0).tolist()), rtol=1e-5, atol=1e-6)


def _outer_grads_through_vmapped_grad(m, case):
    """The outer gradient of a loss computed from ``vmap(grad(f))``: w requires grad outside the transforms."""
    w = m.tensor([0.7, -0.2], requires_grad=True)
    xs = m.tensor([[0.5, -1.0], [2.0, 0.3]])
    if case == "differentiated_argument":  # w is grad's argument, unbatched (in_dims None)
        out = m.func.vmap(m.func.grad(lambda w, x: (w * x).sin().sum()), in_dims=(None, 0))(w, xs)
    elif case == "maml_step":  # w is grad's argument and the adapted step's too: the gradient silently first-order
        def adapt(x):
            g = m.func.grad(lambda v: ((v * x).tanh() ** 2).sum())(w)
            return ((w - 0.1 * g) * x).sin().sum()
        out = m.func.vmap(adapt)(xs)
    else:  # "closed_over": w is read by f from outside
        def adapt(x):
            g = m.func.grad(lambda v: ((v * w).tanh() ** 2).sum())(x)
            return ((x - 0.1 * g) * w).sin().sum()
        out = m.func.vmap(adapt)(xs)
    out.pow(2).sum().backward()
    return w.grad


def test_vmap_of_grad_keeps_the_outer_graph_of_its_argument():
    """grad's argument, unbatched under vmap and requiring grad outside the transforms, stays in the caller's graph
    (it was detached: the result did not require grad)."""
    np.testing.assert_allclose(_outer_grads_through_vmapped_grad(ember, "differentiated_argument").numpy(),
                               _outer_grads_through_vmapped_grad(torch, "differentiated_argument").numpy(), rtol=1e-5)


def test_vmap_of_grad_maml_meta_gradient():
    """A MAML step under vmap(grad(f)): the meta-gradient is second-order, as PyTorch's (it was silently
    first-order)."""
    np.testing.assert_allclose(_outer_grads_through_vmapped_grad(ember, "maml_step").numpy(),
                               _outer_grads_through_vmapped_grad(torch, "maml_step").numpy(), rtol=1e-5)


def test_vmap_of_grad_outer_gradient_of_a_closed_over_tensor():
    np.testing.assert_allclose(_outer_grads_through_vmapped_grad(ember, "closed_over").numpy(),
                               _outer_grads_through_vmapped_grad(torch, "closed_over").numpy(), rtol=1e-5)


def _functional_maml_grads(m):
    rng = np.random.default_rng(7)
    net = m.nn.Sequential(m.nn.Linear(2, 8), m.nn.Tanh(), m.nn.Linear(8, 1, bias=False))
    with m.no_grad():
        for p in net.parameters():
            p.copy_(m.tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.3))
    params = dict(net.named_parameters())
    xs = m.tensor(rng.standard_normal((2, 5, 2)).astype(np.float32))
    ys = m.tensor(rng.standard_normal((2, 5, 1)).astype(np.float32))

    def loss_fn(p, x, y):
        return m.nn.functional.mse_loss(m.func.functional_call(net, p, (x,)), y)

    def adapt(x, y):
        g = m.func.grad(loss_fn)(params, x, y)
        return loss_fn({k: params[k] - 0.1 * g[k] for k in params}, x, y)

    m.func.vmap(adapt)(xs, ys).sum().backward()
    return [p.grad.numpy() for p in net.parameters()]


def test_vmap_of_grad_functional_call_maml():
    for got, want in zip(_functional_maml_grads(ember), _functional_maml_grads(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
