"""In-place ops on views of tensors that need a gradient, against PyTorch: values and every leaf's gradient.

PyTorch rewrites the base's history (its CopySlices node: the view's region of the base's gradient goes through
the in-place op's backward, the rest straight on) and regenerates the view's grad_fn from the base; ember does the
same (ember/ops/copy_slices.py). Each case runs on ember and on torch with the same inputs (tests/oracle.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests.oracle import assert_close, check, outcomes


def _clone(m, x):
    return x.clone() if m is torch else x * 1  # a non-leaf base


CASES = {
    # one in-place op on one view
    "basic_index_mul_": lambda m, x: (lambda y: (y[:, 0].mul_(2), y)[1])(x * 1),
    "iadd_setitem": lambda m, x, b: _iadd_setitem(x * 1, b),
    "view_add_other": lambda m, x, w: (lambda y: (y.view(4, -1).add_(w), y)[1])(x * 1),
    "t_relu_": lambda m, x: (lambda y: (y.t().relu_(), y)[1])(x * 1),
    "diagonal_zero_": lambda m, x: (lambda y: (y[:, :3].diagonal().zero_(), y)[1])(x * 1),
    "narrow_copy_": lambda m, x, z: (lambda y: (y.narrow(1, 0, 2).copy_(z), y)[1])(x * 1),
    "unsqueeze_mul_": lambda m, x: (lambda y: (y.unsqueeze(0).mul_(3), y)[1])(x * 1),
    "sub_div_pow": lambda m, x: (lambda y: (y[1:].sub_(0.5).div_(2).pow_(2), y)[1])(x * 1),
    "clamp_mul_tanh": lambda m, x: (lambda y: (y[:, 1:3].clamp_(-0.5, 0.5).mul_(3).tanh_(), y)[1])(x * 1),
    "sigmoid_": lambda m, x: (lambda y: (y[1].sigmoid_(), y)[1])(x * 1),
    "element_mul_": lambda m, x: (lambda y: (y[1, 2].mul_(3), y)[1])(x * 1),  # a 0-d view
    "elements_with_other": lambda m, x, w: (lambda y: (y[1, 2].add_(w[0]), y[0, 0].mul_(w[1]), y)[2])(x * 1),
    "gt_": lambda m, x: (lambda y: (y[0].gt_(0), y * y)[1])(x * 1),  # no gradient through the region
    "copy_constant": lambda m, x: (lambda y: (y[:, 1].copy_(m.tensor([7.0, 8.0, 9.0])), y)[1])(x * 1),
    "fill_": lambda m, x: (lambda y: (y[2].fill_(7.0), y)[1])(x * 1),
    "masked_fill_": lambda m, x: (lambda y: (y[:, 1:].masked_fill_(y[:, 1:] > 0, 0.25), y)[1])(x * 1),
    "index_fill_": lambda m, x: (lambda y: (y[1:].index_fill_(1, m.tensor([0, 2]), -1.0), y)[1])(x * 1),
    "scatter_": lambda m, x, s: (lambda y: (y[:2].scatter_(1, m.tensor([[0, 1], [2, 3]]), s), y)[1])(x * 1),
    "mul_exp_": lambda m, x: (lambda y: (y[::2].mul_(2).exp_(), y)[1])(x * 1),
    "setitem_on_view": lambda m, x, v: (lambda y: (y[1].__setitem__(slice(1, 3), v), y)[1])(x * 1),
    "setitem_mask_on_view": lambda m, x: (lambda y: (y[:, 2:].__setitem__(y[:, 2:] < 0, 0.0), y)[1])(x * 1),
    "addcmul_": lambda m, x, a, b: (lambda y: (y[0].addcmul_(a, b, value=0.5), y)[1])(x * 1),
    "F_elu_inplace": lambda m, x: (lambda y: (m.nn.functional.elu(y[:, 1:], inplace=True), y)[1])(x * 1),
    "F_leaky_relu_": lambda m, x: (lambda y: (m.nn.functional.leaky_relu_(y.t()[1:], 0.2), y)[1])(x * 1),
    "index_add_": lambda m, x, s: (lambda y: (y[1:].index_add_(1, m.tensor([0, 3]), s), y)[1])(x * 1),
    "unsqueeze__then_mul_": lambda m, x: (lambda y, v: (v.unsqueeze_(0), v.mul_(2), y)[2])(*(lambda y: (y, y[1]))(x * 1)),
    "advanced_index_iadd": lambda m, x, v: (lambda y: (y.__setitem__((slice(None), [0, 2]),
                                                                       y[:, [0, 2]] + v), y)[1])(x * 1),
    # views of views, several ops in a row, base and view both used afterwards
    "view_of_view": lambda m, x: (lambda y: (y[1:][:, 1:].t()[0].mul_(5), y)[1])(x * 1),
    "two_views_in_a_row": lambda m, x, w: _two_views(x * 1, w),
    "base_and_view_used": lambda m, x: _base_and_view(x * 1),
    "view_used_after_base_changed": lambda m, x: _view_after_base(x * 1),
    "overlapping_views": lambda m, x: _overlapping(x * 1),
    "view_made_before_another_changed": lambda m, x, w: _stale_then_inplace(x * 1, w),
    "non_contiguous_base": lambda m, x, w: (lambda y: (y[1:, ::2].mul_(w[:2]), y)[1])(x.t() * 1),
    "shape_change_keeps_memory": lambda m, x: _shape_change(x * 1),
    # the base needs no gradient; the other operand does
    "base_without_grad": lambda m, x, w: _zeros_base(m, x, w),
}


def _iadd_setitem(y, b):
    y[..., :3] += b  # getitem -> iadd (in place on the view) -> setitem of the view onto itself
    return y


def _two_views(y, w):
    y[0].mul_(2)
    y[:, 1].add_(w[:3])
    y.view(-1)[3:7].mul_(w[:4])
    return y


def _base_and_view(y):
    v = y[1]
    v.add_(1)
    return (y * y).sum() + v.sum(), v * 3


def _view_after_base(y):
    v = y[1]
    y.mul_(2)  # in place on the base: v's grad_fn is out of date
    return v * v, y


def _overlapping(y):
    a, b = y[0], y[:, 0]
    a.mul_(3)  # changes b[0] too
    return b * 1, y


def _shape_change(y):
    v = y[0]
    y.unsqueeze_(0)  # same memory, new shape: v still sees y's later writes
    y.mul_(2)
    return v * 1, y


def _stale_then_inplace(y, w):
    a, b = y[0], y[:, 1]
    a.mul_(2)  # b[0] changes; b's grad_fn is out of date
    b.add_(w[:3])
    return y, a * b[0]


def _zeros_base(m, x, w):
    out = m.zeros(3, 4)
    out[:, 0].copy_(w[:3])
    out[1].add_(x[0])
    return out


SPECS = {
    "iadd_setitem": [(3, 4), (3,)], "view_add_other": [(3, 4), (3,)], "narrow_copy_": [(3, 4), (3, 2)],
    "scatter_": [(3, 4), (2, 2)], "setitem_on_view": [(3, 4), (2,)], "addcmul_": [(3, 4), (4,), (4,)],
    "two_views_in_a_row": [(3, 4), (4,)], "index_add_": [(3, 4), (2, 2)], "elements_with_other": [(3, 4), (2,)], "view_made_before_another_changed": [(3, 4), (4,)],
    "non_contiguous_base": [(3, 4), (4,)], "advanced_index_iadd": [(3, 4), (3, 2)], "base_without_grad": [(3, 4), (4,)],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_on_view_matches_pytorch(name):
    check(CASES[name], SPECS.get(name, [(3, 4)]), dtype=np.float64)


def test_grad_fns_as_pytorch():
    """The base takes a CopySlices node; the view's grad_fn is read from the base (AsStridedBackward0)."""
    for m in (ember, torch):
        x = m.randn(3, 4, requires_grad=True)
        y = x * 1
        v = y[0]
        v.mul_(2)
        assert repr(y.grad_fn).startswith("<CopySlices object"), m
        assert repr(v.grad_fn).startswith("<AsStridedBackward0 object"), m


def test_requires_grad_spreads_to_the_base():
    for m in (ember, torch):
        y = m.zeros(4)
        w = m.ones(2, requires_grad=True)
        y[1:3].mul_(w)
        assert y.requires_grad and not y.is_leaf, m


def test_normalizing_flow_idiom():
    """Spline flows: ``outputs[inside] = f(inputs[inside])`` into a zeros_like, ``logabsdet[mask] += ...``."""
    def flow(m, inputs, w):
        inside = (inputs > -1) & (inputs < 1)
        outputs = m.zeros_like(inputs)
        logabsdet = m.zeros_like(inputs)
        outputs[inside] = m.tanh(inputs[inside] * w[0])
        outputs[~inside] = inputs[~inside]
        logabsdet[inside] = m.log(1 - outputs[inside] ** 2 + 1e-3)
        rows = logabsdet[1:]  # a view of the non-leaf logabsdet
        rows[inside[1:]] += w[1] * inputs[1:][inside[1:]]
        logabsdet[:, 0] += w[0] ** 2
        return outputs, logabsdet.sum(-1)
    check(flow, [(4, 5), (2,)], dtype=np.float64)


def test_multihead_attention_output_relu_():
    results = {}
    for m in (ember, torch):
        m.manual_seed(0)
        mha = m.nn.MultiheadAttention(8, 2)
        with m.no_grad():
            for i, p in enumerate(mha.parameters()):
                p.copy_(m.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)) * 0.3))
        q = m.tensor(np.random.default_rng(10).standard_normal((5, 2, 8)), dtype=m.float32, requires_grad=True)
        out, _ = mha(q, q, q)
        out.relu_()
        other, _ = mha(q, q, q)
        other += q  # __iadd__ on another output
        (out * out).sum().backward()
        (other * other).sum().backward()
        results[m] = (out, q.grad, [p.grad for p in mha.parameters()])
    e, t = results[ember], results[torch]
    assert_close(e[0], t[0], atol=1e-5)
    assert_close(e[1], t[1], atol=1e-4)
    for ge, gt in zip(e[2], t[2]):
        assert_close(ge, gt, atol=1e-4)


def test_second_derivative_through_copy_slices():
    """create_graph through CopySlices and the regenerated view: the gradient is itself differentiable."""
    out = []
    for m in (ember, torch):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], dtype=m.float64, requires_grad=True)
        y = x * x
        y[0].mul_(x[1])
        y[:, 2].pow_(2)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        out.append((g, gg))
    assert_close(out[0][0], out[1][0])
    assert_close(out[0][1], out[1][1])


def test_forward_mode_through_view_inplace():
    import torch.autograd.forward_ad as tfwd

    import ember.autograd.forward_ad as efwd

    res = []
    for m, fwd in ((ember, efwd), (torch, tfwd)):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64)
        t = m.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=m.float64)
        with fwd.dual_level():
            y = fwd.make_dual(x, t) * 1
            y[0].mul_(y[1])
            y.t()[1].exp_()
            res.append((fwd.unpack_dual(y).primal.clone(), fwd.unpack_dual(y).tangent.clone()))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


def test_forward_mode_tangent_written_into_a_base_without_one():
    import torch.autograd.forward_ad as tfwd

    import ember.autograd.forward_ad as efwd

    res = []
    for m, fwd in ((ember, efwd), (torch, tfwd)):
        with fwd.dual_level():
            d = fwd.make_dual(m.tensor([1.0, 2.0]), m.tensor([0.5, -1.0]))
            y = m.zeros(3, 2)
            y[1].copy_(d)
            y.t()[0].mul_(d[1])
            y[2] += d
            res.append(tuple(t.clone() for t in fwd.unpack_dual(y)))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


def _same_error(fn):
    (e, _), (t, _) = outcomes(fn)
    assert isinstance(t, RuntimeError) and type(e) is type(t), (e, t)
    assert str(e) == str(t), (str(e), str(t))


def test_view_created_in_no_grad_mode_is_pytorchs_error():
    def fn(m):
        y = m.randn(3, 4, requires_grad=True) * 1
        with m.no_grad():
            v = y[0]
        v.mul_(2)
    _same_error(fn)

    def other(m):
        z = m.zeros(3)
        with m.no_grad():
            v = z[:2]
        v.copy_(m.ones(2, requires_grad=True))
    _same_error(other)


@pytest.mark.parametrize("split", ["unbind", "split", "split_sizes", "chunk"])
def test_multiple_output_views_are_pytorchs_error(split):
    def fn(m):
        y = m.randn(4, 4, requires_grad=True) * 1
        parts = {"unbind": lambda: y.unbind(1), "split": lambda: y.split(2), "split_sizes": lambda: y.split([1, 3]),
                 "chunk": lambda: y.chunk(2)}[split]()
        parts[1].add_(1)
    _same_error(fn)


def test_views_of_such_views_are_pytorchs_error():
    """A view of an unbind output, or of a view made in no_grad mode: PyTorch names the later view's op (its own
    name, Slice), then says the same."""
    def of_unbind(m):
        (m.randn(3, 4, requires_grad=True) * 1).unbind(0)[0][1:].mul_(2)

    def of_no_grad(m):
        y = m.randn(3, 4, requires_grad=True) * 1
        with m.no_grad():
            v = y[0]
        v[1:].mul_(2)
    for fn in (of_unbind, of_no_grad):
        (e, _), (t, _) = outcomes(fn)
        assert isinstance(e, RuntimeError) and isinstance(t, RuntimeError), (e, t)
        assert str(e) == str(t)


def test_view_of_a_leaf_still_refused():
    for m in (ember, torch):
        x = m.randn(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
            x[:2].mul_(2)


def test_saved_tensor_changed_through_a_view_is_detected():
    for m in (ember, torch):
        x = m.randn(3, 4, requires_grad=True)
        y = x * 1
        z = y.sigmoid()  # saves its output
        z[0].mul_(2)  # fine: sigmoid's output changed through a view
        w = y * y  # saves y
        y[1].add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            (w.sum() + z.sum()).backward()


def test_an_element_is_a_view():
    """``y[i, j]`` shares y's memory, as PyTorch's (NumPy's own answer is a copied scalar)."""
    for m in (ember, torch):
        y = m.zeros(2, 3)
        y[1, 2].add_(5)
        v = y[0, 0]
        v.fill_(2)
        assert y.tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, 5.0]], m


def test_no_grad_writes_through_views_stay_untracked():
    for m in (ember, torch):
        x = m.randn(3, 4, requires_grad=True)
        y = x * 1
        with m.no_grad():
            y[0].mul_(0)
        y.sum().backward()
        assert_close(x.grad, torch.ones(3, 4), msg=str(m))


def test_view_grad_fn_follows_the_base_after_the_base_changes():
    """A view made before an in-place op on its base reads the base's new history, as PyTorch regenerates it."""
    grads = []
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[1:]
        y.mul_(x)
        (v * 2).sum().backward()
        grads.append(x.grad)
    assert_close(grads[0], grads[1])


_VIEWS = [lambda y, r: y[r % 3], lambda y, r: y[:, r % 4], lambda y, r: y.t(), lambda y, r: y.view(-1)[r % 5:r % 5 + 4],
          lambda y, r: y[1:, 1:3], lambda y, r: y.diagonal(), lambda y, r: y.unsqueeze(0)[0, :2],
          lambda y, r: y.narrow(1, 1, 2).t()]
_OPS = [lambda v, w: v.mul_(w[:v.shape[-1]] if v.dim() else w[0]),
        lambda v, w: v.add_(0.5),
        lambda v, w: v.copy_(w[:v.shape[-1]] if v.dim() else w[1]),
        lambda v, w: v.zero_(),
        lambda v, w: v.__iadd__(w[:v.shape[-1]] * 2 if v.dim() else w[2]),
        lambda v, w: v.__setitem__(..., w[3] * 2)]


@pytest.mark.parametrize("seed", range(40))
def test_random_sequences_of_views_changed_in_place(seed):
    """Five in-place ops, each through a random view of the same base, some views kept and used at the end, the base
    itself sometimes changed in between: the loss and both leaves' gradients as PyTorch's."""
    def program(m, x, w):
        rnd = __import__("random").Random(seed)
        y, kept = x * 1, []
        for _ in range(5):
            v = _VIEWS[rnd.randrange(len(_VIEWS))](y, rnd.randrange(10))
            if rnd.random() < 0.3:
                kept.append(v)
            _OPS[rnd.randrange(len(_OPS))](v, w)
            if rnd.random() < 0.2:
                y.mul_(1.5)
        return (y * y).sum() + sum((k * k).sum() for k in kept)
    check(program, [(3, 4), (4,)], dtype=np.float64, seed=seed)


def test_retained_gradient_follows_the_tensor_changed_in_place():
    """``retain_grad`` keeps the gradient of the tensor's value now: after an in-place op (on it, or through its
    view, or on the view itself) that of the new value, as PyTorch's."""
    grads = []
    for m in (ember, torch):
        x = m.ones(2, 3, requires_grad=True)
        y = x * 1
        y.retain_grad()
        y[0].mul_(2)
        (y * y).sum().backward()
        z = x * 1
        z.retain_grad()
        z.mul_(2)
        (z * z).sum().backward()
        u = x * 1
        v = u[1]
        v.retain_grad()
        v.mul_(3)
        (v * u).sum().backward()
        grads.append((y.grad, z.grad, v.grad))
    for e, t in zip(*grads):
        assert_close(e, t)


@pytest.mark.parametrize("case", ["expand_after_mul_", "expand_after_setitem", "as_strided_overlap"])
def test_overlapping_view_after_its_base_changed_sums_its_gradients(case):
    """A view holding one base element at several positions (expand, an overlapping as_strided), read after its
    base changed in place: its regenerated history sums the gradients of the repeated positions, as PyTorch's."""
    grads = []
    for m in (torch, ember):
        if case == "expand_after_mul_":
            w = m.ones(1, 3, requires_grad=True)
            b = w * 1
            v = b.expand(4, 3)
            b.mul_(2)
        elif case == "expand_after_setitem":
            w = m.arange(4.0, requires_grad=True)
            b = w * 1
            v = b[None].expand(2, 4)
            b[0] = 5.0
        else:
            w = m.arange(3.0, requires_grad=True)
            b = w * 1
            v = b.as_strided((2, 2), (1, 1))
            b.mul_(3)
        (v * m.arange(1.0, v.numel() + 1).reshape(v.shape)).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def test_rows_written_into_a_buffer_through_views_match_pytorch():
    """A (T, N) buffer filled row by row through views (``h[i].copy_(...)``): every row's gradient reaches its source."""
    results = []
    for m in (torch, ember):
        w = m.from_numpy(np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)).requires_grad_()
        h = m.zeros(5, 4, 6)
        for i in range(5):
            h[i].copy_(w * i)
        h[1:3, :, 2].mul_(w[:, 0])
        (h * h).sum().backward()
        results.append((h.detach().numpy(), w.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)


SETITEM_INDICES = [0, (0, 1), None, True, slice(1, None), (slice(None), 1), (Ellipsis, 1), (0, [0]),
                   slice(None), Ellipsis, slice(0, 3), slice(0, 5), [0], (slice(None), [0]), "mask", "int0d", "bool0d",
                   ([0], slice(1, None)), (Ellipsis, slice(1, None)), ([0], Ellipsis, slice(1, None)),
                   (slice(1, None), Ellipsis), (Ellipsis, [0], slice(0, 3)), ([0], slice(0, 3)), ("row", slice(0, 2)),
                   ("row", slice(0, 3))]


@pytest.mark.parametrize("idx", SETITEM_INDICES, ids=repr)
def test_writing_into_a_leaf_by_indexing_names_the_view_as_pytorch_does(idx):
    """``w[idx] = v`` on a leaf that requires grad: PyTorch writes a number, None, a bool or a narrower slice
    through a view (\"a view of a leaf Variable\"), whole slices and index tensors into the leaf itself."""
    def attempt(m):
        x = m.ones(3, 3, requires_grad=True)
        if isinstance(idx, str):
            i = {"mask": x > 0, "int0d": m.tensor(0), "bool0d": m.tensor(True)}[idx]
        elif isinstance(idx, tuple) and idx[0] == "row":  # a 1-d boolean mask, then a slice
            i = (m.tensor([True, False, True]), *idx[1:])
        elif isinstance(idx, tuple) and isinstance(idx[-1], list):
            i = (*idx[:-1], m.tensor(idx[-1]))
        else:
            i = idx
        with pytest.raises(RuntimeError) as e:
            x[i] = 2.0
        return str(e.value)

    want, got = attempt(torch), attempt(ember)
    assert got == want


def test_a_squeezed_view_of_an_unbind_output_is_named_as_pytorch():
    def fn(m):
        (m.randn(3, 4, requires_grad=True) * 1).unbind(0)[0].unsqueeze(0).squeeze(0).mul_(2)
    (e, _), (t, _) = outcomes(fn)
    assert isinstance(e, RuntimeError) and str(e) == str(t) and "Output 0 of Squeeze1 is a view" in str(t)
