"""PyTorch still accepts the deprecated number-first overloads (``x.add_(alpha, other)``, ``x.sub(alpha, other)``,
``torch.add(x, alpha, other)``, ``x.addcmul_(value, t1, t2)``, ``x.addmm(beta, alpha, mat1, mat2)``,
``torch.addmm(beta, input, alpha, mat1, mat2)``...), warning once
per process; old custom optimizers and samplers call them (rosinality/igebm-pytorch's Langevin step:
``neg_img.data.add_(-step_size, neg_img.grad.data)``). ember computes them as PyTorch does, with its warning.
Also the in-place products ``addmv_``, ``addr_``, ``baddbmm_``, ``addbmm_``."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember import _deprecated_overloads

V3 = [0.5, -1.0, 2.0]
W3 = [1.5, 2.0, -0.25]
U3 = [4.0, -2.0, 0.5]

CALLS = {
    "x.add(2, a)": lambda m, x, a, b: x.add(2, a),
    "x.add_(2, a)": lambda m, x, a, b: x.clone().add_(2, a),
    "x.add(-0.5, a)": lambda m, x, a, b: x.add(-0.5, a),
    "x.add(0-d, a)": lambda m, x, a, b: x.add(m.tensor(3.0), a),
    "x.add(np.float32, a)": lambda m, x, a, b: x.add(np.float32(2.5), a),
    "x.add(2, 3)": lambda m, x, a, b: x.add(2, 3),
    "x.sub(2, a)": lambda m, x, a, b: x.sub(2, a),
    "x.sub_(2, a)": lambda m, x, a, b: x.clone().sub_(2, a),
    "torch.add(x, 2, a)": lambda m, x, a, b: m.add(x, 2, a),
    "torch.sub(x, 2, a)": lambda m, x, a, b: m.sub(x, 2, a),
    "torch.add(x, 2, a, out=)": lambda m, x, a, b: m.add(x, 2, a, out=m.empty(3)),
    "x.addcmul(2, a, b)": lambda m, x, a, b: x.addcmul(2, a, b),
    "x.addcmul_(2, a, b)": lambda m, x, a, b: x.clone().addcmul_(2, a, b),
    "x.addcdiv(2, a, b)": lambda m, x, a, b: x.addcdiv(2, a, b),
    "x.addcdiv_(-0.5, a, b)": lambda m, x, a, b: x.clone().addcdiv_(-0.5, a, b),
    "torch.addcmul(x, 2, a, b)": lambda m, x, a, b: m.addcmul(x, 2, a, b),
    "torch.addcdiv(x, 2, a, b)": lambda m, x, a, b: m.addcdiv(x, 2, a, b),
    "x.addr(2, a, b)": lambda m, x, a, b: m.ones(3, 3).addr(2, a, b),
    "x.addr_(2, 3, a, b)": lambda m, x, a, b: m.ones(3, 3).addr_(2, 3, a, b),
    "x.addmv(2, M, a)": lambda m, x, a, b: x.addmv(2, m.outer(a, b), a),
    "x.addmv_(2, 0.5, M, a)": lambda m, x, a, b: x.clone().addmv_(2, 0.5, m.outer(a, b), a),
    "x.addmm(2, M, M)": lambda m, x, a, b: m.ones(3, 3).addmm(2, m.outer(a, b), m.outer(b, a)),
    "x.addmm(2, 3, M, M)": lambda m, x, a, b: m.ones(3, 3).addmm(2, 3, m.outer(a, b), m.outer(b, a)),
    "x.addmm_(2, M, M)": lambda m, x, a, b: m.ones(3, 3).addmm_(2, m.outer(a, b), m.outer(b, a)),
    "x.baddbmm(2, B, B)": lambda m, x, a, b: m.ones(3, 3).baddbmm(2, m.outer(a, b)[None], m.outer(b, a)[None]),
    "x.addbmm_(2, 3, B, B)": lambda m, x, a, b: m.ones(3, 3).addbmm_(2, 3, m.outer(a, b)[None].repeat(2, 1, 1),
                                                                     m.outer(b, a)[None].repeat(2, 1, 1)),
    "x.addmm(0-d, 0-d, M, M)": lambda m, x, a, b: m.ones(3, 3).addmm(m.tensor(2), m.tensor(0.5), m.outer(a, b),
                                                                     m.outer(b, a)),
    # the functions of the addmm family: beta first, then the input (PyTorch's deprecated.yaml)
    "torch.addmm(2, X, M, M)": lambda m, x, a, b: m.addmm(2, m.ones(3, 3), m.outer(a, b), m.outer(b, a)),
    "torch.addmm(2, X, 3, M, M)": lambda m, x, a, b: m.addmm(2, m.ones(3, 3), 3, m.outer(a, b), m.outer(b, a)),
    "torch.addmm(0-d, X, M, M)": lambda m, x, a, b: m.addmm(m.tensor(2.0), m.ones(3, 3), m.outer(a, b), m.outer(b, a)),
    "torch.addmm(2, X, M, M, out=)": lambda m, x, a, b: m.addmm(2, m.ones(3, 3), m.outer(a, b), m.outer(b, a),
                                                                out=m.empty(3, 3)),
    "torch.addmv(2, x, M, a)": lambda m, x, a, b: m.addmv(2, x, m.outer(a, b), a),
    "torch.addmv(2, x, 3, M, a)": lambda m, x, a, b: m.addmv(2, x, 3, m.outer(a, b), a),
    "torch.addmv_(2, x, M, a)": lambda m, x, a, b: m.addmv_(2, x.clone(), m.outer(a, b), a),
    "torch.addmv_(2, x, 3, M, a)": lambda m, x, a, b: m.addmv_(2, x.clone(), 3, m.outer(a, b), a),
    "torch.addr(2, X, a, b)": lambda m, x, a, b: m.addr(2, m.ones(3, 3), a, b),
    "torch.addr(2, X, 3, a, b)": lambda m, x, a, b: m.addr(2, m.ones(3, 3), 3, a, b),
    "torch.baddbmm(2, X, B, B)": lambda m, x, a, b: m.baddbmm(2, m.ones(1, 3, 3), m.outer(a, b)[None],
                                                              m.outer(b, a)[None]),
    "torch.addbmm(2, X, 3, B, B)": lambda m, x, a, b: m.addbmm(2, m.ones(3, 3), 3, m.outer(a, b)[None].repeat(2, 1, 1),
                                                               m.outer(b, a)[None].repeat(2, 1, 1)),
}


def _inputs(m):
    return m.tensor(V3), m.tensor(W3), m.tensor(U3)


@pytest.mark.parametrize("call", list(CALLS))
def test_deprecated_number_first_overloads_compute_as_pytorch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = [CALLS[call](m, *_inputs(m)).tolist() for m in (ember, torch)]
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6)


def test_the_deprecated_add_gradient_is_pytorchs():
    grads = []
    for m in (ember, torch):
        x, a, _ = _inputs(m)
        x.requires_grad_(), a.requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x.add(-0.5, a) * m.tensor(U3)).sum().backward()
        grads.append((x.grad.tolist(), a.grad.tolist()))
    assert grads[0] == grads[1]


@pytest.mark.parametrize("call, message", [
    (lambda m, x, a, b: x.add_(2, a),
     "This overload of add_ is deprecated:\n\tadd_(Number alpha, Tensor other)\nConsider using one of the following "
     "signatures instead:\n\tadd_(Tensor other, *, Number alpha = 1)"),
    (lambda m, x, a, b: m.add(x, 2, a),
     "This overload of add is deprecated:\n\tadd(Tensor input, Number alpha, Tensor other, *, Tensor out = None)\n"
     "Consider using one of the following signatures instead:\n\tadd(Tensor input, Tensor other, *, Number alpha = 1, "
     "Tensor out = None)"),
    (lambda m, x, a, b: m.sub(x, 2, a),
     "This overload of sub is deprecated:\n\tsub(Tensor input, Number alpha, Tensor other, *, Tensor out = None)\n"
     "Consider using one of the following signatures instead:\n\tsub(Tensor input, Tensor other, *, Number alpha = 1, "
     "Tensor out = None)"),
    (lambda m, x, a, b: x.sub(2, a),
     "This overload of sub is deprecated:\n\tsub(Number alpha, Tensor other)\nConsider using one of the following "
     "signatures instead:\n\tsub(Tensor other, *, Number alpha = 1)"),
    (lambda m, x, a, b: m.addcmul(x, 2, a, b),
     "This overload of addcmul is deprecated:\n\taddcmul(Tensor input, Number value, Tensor tensor1, Tensor tensor2, "
     "*, Tensor out = None)\nConsider using one of the following signatures instead:\n\taddcmul(Tensor input, Tensor "
     "tensor1, Tensor tensor2, *, Number value = 1, Tensor out = None)"),
    (lambda m, x, a, b: m.ones(3, 3).addr_(2, 3, a, b),
     "This overload of addr_ is deprecated:\n\taddr_(Number beta, Number alpha, Tensor vec1, Tensor vec2)\nConsider "
     "using one of the following signatures instead:\n\taddr_(Tensor vec1, Tensor vec2, *, Number beta = 1, Number "
     "alpha = 1)"),
    (lambda m, x, a, b: m.addmm(2, m.ones(3, 3), 3, m.ones(3, 3), m.ones(3, 3)),
     "This overload of addmm is deprecated:\n\taddmm(Number beta, Tensor input, Number alpha, Tensor mat1, Tensor "
     "mat2, *, Tensor out = None)\nConsider using one of the following signatures instead:\n\taddmm(Tensor input, "
     "Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, Tensor out = None)\n\taddmm(Tensor input, "
     "Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, Number alpha = 1, Tensor out = None)"),
    (lambda m, x, a, b: m.addr(2, m.ones(3, 3), a, b),
     "This overload of addr is deprecated:\n\taddr(Number beta, Tensor input, Tensor vec1, Tensor vec2, *, Tensor out "
     "= None)\nConsider using one of the following signatures instead:\n\taddr(Tensor input, Tensor vec1, Tensor "
     "vec2, *, Number beta = 1, Number alpha = 1, Tensor out = None)"),
    (lambda m, x, a, b: m.addmv_(2, x, m.ones(3, 3), a),
     "This overload of addmv_ is deprecated:\n\taddmv_(Number beta, Tensor input, Tensor mat, Tensor vec)\nConsider "
     "using one of the following signatures instead:\n\taddmv_(Tensor input, Tensor mat, Tensor vec, *, Number beta "
     "= 1, Number alpha = 1)"),
])
def test_the_warning_is_pytorchs_once_per_process_at_the_callers_line(monkeypatch, call, message):
    monkeypatch.setattr(_deprecated_overloads, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(ember, *_inputs(ember))
        call(ember, *_inputs(ember))  # (once per process, as PyTorch's: the second call is silent)
    assert [(str(w.message), w.category, w.filename) for w in caught] == [(message, UserWarning, __file__)]
    # PyTorch's own text, less its "(Triggered internally at ...)" suffix: the same as the first call in a process
    # would give (PyTorch's flag cannot be reset, so compared by the text ember keeps)
    assert message.startswith(f"This overload of {message.split()[3]} is deprecated")


@pytest.mark.parametrize("call", [
    lambda m, x, a, b: x.add(a, a),  # alpha given positionally after other: not a number first
    lambda m, x, a, b: x.add(2, a, alpha=2),
    lambda m, x, a, b: x.addcmul_(2, a, b, value=3),
    lambda m, x, a, b: m.ones(3, 3).addmm(2, 3, m.ones(3, 3)),
    lambda m, x, a, b: x.add(2, a, b),
    lambda m, x, a, b: m.ones(3, 3).addmm(2, m.ones(3, 3), m.ones(3, 3), alpha=3),  # (no keyword with them)
    lambda m, x, a, b: m.addmm(2, m.ones(3, 3), m.ones(3, 3), m.ones(3, 3), alpha=3),
    lambda m, x, a, b: m.addmm(2, m.ones(3, 3), 3, m.ones(3, 3), m.ones(3, 3), beta=3),
    lambda m, x, a, b: m.addmm(m.ones(3, 3), 2, m.ones(3, 3), m.ones(3, 3)),  # (the method's order)
    lambda m, x, a, b: m.addmm(m.ones(3, 3), m.ones(3, 3), m.ones(3, 3), 2),
    lambda m, x, a, b: m.addmv_(x, 2, m.ones(3, 3), a),
    lambda m, x, a, b: m.addr(2, 3, a, b),
])
def test_misplaced_scales_are_type_errors_as_pytorchs(call):
    for m in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError):
                call(m, *_inputs(m))


@pytest.mark.parametrize("name, shapes", [
    ("addr_", ((2, 3), (2,), (3,))),
    ("addmv_", ((2,), (2, 3), (3,))),
    ("baddbmm_", ((2, 2, 3), (2, 2, 4), (2, 4, 3))),
    ("addbmm_", ((2, 3), (5, 2, 4), (5, 4, 3))),
    ("addmm_", ((2, 3), (2, 4), (4, 3))),
])
@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_in_place_products_are_pytorchs(name, shapes, x_requires_grad):
    # (x_requires_grad False: only the operands require grad; PyTorch records the node all the same)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    seen = []
    for m in (ember, torch):
        leaf = m.tensor(arrays[0], requires_grad=x_requires_grad)
        ops = [m.tensor(a, requires_grad=True) for a in arrays[1:]]
        x = leaf * 1
        out = getattr(x, name)(*ops, beta=0.5, alpha=2)
        out.pow(2).sum().backward()
        seen.append((out is x, x._version, type(x.grad_fn).__name__, x.detach().numpy().copy(),
                     [t.grad.numpy().copy() for t in (leaf, *ops) if t.requires_grad]))
    assert seen[0][:3] == seen[1][:3]
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=1e-12)
    assert len(seen[0][4]) == len(seen[1][4])
    for got, want in zip(seen[0][4], seen[1][4]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_in_place_products_refuse_a_broadcast_result():
    # (PyTorch's addbmm_ of a (3,) tensor and a (1, 3) product resizes the tensor instead: ember refuses that too)
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="Bad in-place call"):
            m.ones(1, 3).baddbmm_(m.ones(2, 1, 2), m.ones(2, 2, 3))
        with pytest.raises(RuntimeError):
            m.ones(3, 1).addmv_(m.ones(3, 2), m.ones(2))


@pytest.mark.parametrize("call", [
    lambda m, x, a, b: x.add(a, alpha=m.tensor(2.0, requires_grad=True)),
    lambda m, x, a, b: x.clone().sub_(a, alpha=m.tensor(2.0, requires_grad=True)),
    lambda m, x, a, b: m.sub(x, a, alpha=m.tensor([2.0])),
    lambda m, x, a, b: x.addcmul(a, b, value=m.tensor(2.0, requires_grad=True)),
    lambda m, x, a, b: m.addcdiv(x, a, b, value=m.tensor([2.0])),
    lambda m, x, a, b: x.add(m.tensor(2.0, requires_grad=True), a),  # (then not a number: no deprecated form)
    lambda m, x, a, b: x.addcmul(m.tensor(2.0, requires_grad=True), a, b),
    lambda m, x, a, b: m.ones(3, 3).addmm(m.ones(3, 3), m.ones(3, 3), beta=m.tensor(2.0, requires_grad=True)),
])
def test_a_scale_tensor_that_requires_grad_or_has_dimensions_is_no_number(call):
    # PyTorch's argument parser reads a Scalar from a 0-d tensor that does not require grad only: ember took any
    # tensor as an operand, and its gradient flowed into the scale
    for m in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError):
                call(m, *_inputs(m))


@pytest.mark.parametrize("call", [
    lambda m, x, a, b: x.add(a, alpha=m.tensor(2.5)),
    lambda m, x, a, b: x.add(m.tensor(2.5), a),
    lambda m, x, a, b: x.addcmul(a, b, value=m.tensor(2)),
    lambda m, x, a, b: m.rsub(x, a, alpha=m.tensor(3)),
])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_a_0d_scale_tensor_is_its_number(call, dtype):
    # (its value, checked as a number: a float alpha for integer tensors is PyTorch's error)
    outcomes = []
    for m in (torch, ember):
        x, a, b = (t.to(getattr(m, dtype)) for t in _inputs(m))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = call(m, x, a, b)
                outcomes.append((str(out.dtype).split(".")[-1], out.tolist(), out.requires_grad))
            except RuntimeError as err:
                outcomes.append(str(err))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("alpha", ["tensor(2.)", "tensor(2., requires_grad=True)", "tensor([2.])"])
def test_index_add_alpha_tensor_as_pytorchs_scalar(alpha):
    # (the same Scalar rule as add's alpha: ember refused a 0-d tensor, its int check reading it as an array)
    outcomes = []
    for m in (torch, ember):
        a = eval(alpha, {"tensor": m.tensor})
        try:
            outcomes.append(m.zeros(3).index_add(0, m.tensor([0, 0]), m.ones(2), alpha=a).tolist())
        except TypeError as err:
            outcomes.append(str(err))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("call", [
    lambda m, o: m.addmm(o(2, 2), o(2, 3), o(3, 2), 2),  # beta after the operands: no signature takes it
    lambda m, o: m.addmm(o(2, 2), o(2, 3), o(3, 2), 2, 3),
    lambda m, o: m.addmm(o(2, 2), o(2, 3), o(3, 2), "x"),
    lambda m, o: m.baddbmm(o(1, 2, 2), o(1, 2, 3), o(1, 3, 2), 2),
    lambda m, o: o(2, 2).addmm(o(2, 3), o(3, 2), 2),
    lambda m, o: o(2, 2).addmm_(o(2, 3), o(3, 2), 2),
    lambda m, o: m.addmv(o(2), o(2, 3), o(3), 2),
    lambda m, o: o(2).addmv(o(2, 3), o(3), 2),
    lambda m, o: m.addr(o(2, 3), o(2), o(3), 2),
    lambda m, o: m.addbmm(o(2, 2), o(1, 2, 3), o(1, 3, 2), 2),
])
def test_a_scale_after_the_operands_is_pytorchs_type_error_word_for_word(call):
    """The functions with a second visible signature (addmm's and baddbmm's out_dtype) list the call's argument
    types and both signatures; the others count the positional arguments, as PyTorch's parser does."""
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as caught:
            call(m, m.ones)
        messages.append(str(caught.value))
    assert messages[1] == messages[0]
