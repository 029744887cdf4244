"""addcmul and addcdiv of floating tensors record one node each, as PyTorch's (AddcmulBackward0, AddcdivBackward0,
edges to the three inputs, promoted ones included), computing in its kernel's order ((value * t1) * t2 + input)
with its gradient formulas, differentiable twice."""

import numpy as np
import pytest
import torch

import ember


def _names(fn) -> list:
    return [fn.name()] + [None if f is None else f.name().split("::")[-1] for f, _ in fn.next_functions]


CASES = {
    "same shape": ((3,), (3,), (3,), "float32", "float32", 0.5),
    "broadcast": ((2, 1), (1, 3), (3,), "float64", "float64", 1),
    "value int": ((3,), (3,), (3,), "float32", "float32", 3),
    "mixed dtypes": ((3,), (3,), (3,), "float32", "float64", -0.25),
    "float16": ((4,), (4,), (4,), "float16", "float16", 0.7),
    "bfloat16 with float32": ((4,), (4,), (4,), "bfloat16", "float32", 2.5),
    "complex": ((3,), (3,), (3,), "complex64", "complex64", 0.5),
}


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("case", list(CASES))
def test_one_node_with_pytorchs_values_and_gradients(op, case):
    s0, s1, s2, d0, d1, value = CASES[case]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) + 2.0 for s in (s0, s1, s2)]
    if "complex" in d0:
        arrays = [a + 0.5j * a[::-1] for a in arrays]
    seen = []
    for m in (torch, ember):
        x = m.tensor(arrays[0], dtype=getattr(m, d0), requires_grad=True)
        t1 = m.tensor(arrays[1], dtype=getattr(m, d1), requires_grad=True)
        t2 = m.tensor(arrays[2], dtype=getattr(m, d0), requires_grad=True)
        out = getattr(m, op)(x, t1, t2, value=value)
        loss = (out * out.conj()).real.sum() if out.is_complex() else (out * out).sum()
        grads = m.autograd.grad(loss, (x, t1, t2), create_graph=True)
        again = m.autograd.grad(sum((g.abs() if g.is_complex() else g).sum() for g in grads), (x, t1, t2),
                                allow_unused=True)
        seen.append((_names(out.grad_fn), out.detach(), grads, again))
    (tn, to, tg, ta), (en, eo, eg, ea) = seen
    assert en == tn
    half = "16" in d0
    tol = dict(rtol=2e-2, atol=2e-2) if half else dict(rtol=1e-6, atol=1e-6)
    assert str(eo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
    if not half:  # (PyTorch's kernel order: the same bits)
        np.testing.assert_array_equal(eo.numpy(), to.numpy())
    for e, t in zip([*eg, *ea], [*tg, *ta]):
        assert (e is None) == (t is None)
        if t is not None:
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            np.testing.assert_allclose(e.detach().cpu().to(ember.complex128 if e.is_complex() else ember.float64).numpy(),
                                       t.detach().to(torch.complex128 if t.is_complex() else torch.float64).numpy(),
                                       **tol)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_gradients_are_pytorchs_bits(op, dtype):
    # PyTorch's formulas (grad * (t2 * value), -grad * (value * t1 / (t2 * t2)), ...) run op by op in the half dtype,
    # each step rounded; the forward's one rounding (its fused kernel) must not carry over to them
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(2000).astype(np.float32) for _ in range(4)]
    arrays[2] += 3.0  # (a divisor away from 0)
    seen = []
    for m in (torch, ember):
        x, t1, t2 = (m.tensor(a).to(getattr(m, dtype)).requires_grad_() for a in arrays[:3])
        out = getattr(m, op)(x, t1, t2, value=0.7)
        out.backward(m.tensor(arrays[3]).to(getattr(m, dtype)))
        seen.append([t.detach().float().numpy() for t in (out, x.grad, t1.grad, t2.grad)])
    for e, t in zip(*seen[::-1]):
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("op", ["addcmul_", "addcdiv_"])
@pytest.mark.parametrize("who", ["x", "tensor1", "all"])
def test_the_in_place_forms_record_the_same_one_node(op, who):
    # (x.addcmul_(t1, t2) was recorded as add_ of a product: AddBackward0 over MulBackward0; also when only an
    # operand requires grad, PyTorch records AddcmulBackward0 on a tensor that did not require grad)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(3) + 2.0 for _ in range(3)]
    seen = []
    for m in (torch, ember):
        leaf = m.tensor(arrays[0], requires_grad=who in ("x", "all"))
        t1 = m.tensor(arrays[1], requires_grad=who in ("tensor1", "all"))
        t2 = m.tensor(arrays[2], requires_grad=who == "all")
        x = leaf * 1
        out = getattr(x, op)(t1, t2, value=0.5)
        (out * out).sum().backward()
        grads = [t.grad.tolist() for t in (leaf, t1, t2) if t.requires_grad]
        seen.append((out is x, x._version, _names(out.grad_fn), out.tolist(), grads))
    assert seen[0][:3] == seen[1][:3]
    np.testing.assert_allclose(seen[1][3], seen[0][3], rtol=1e-12)
    for got, want in zip(seen[1][4], seen[0][4]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_index_update_nodes_read_as_pytorchs():
    # (x[idx] read AdvancedIndexBackward0; scatter and masked_scatter IndexPutBackward0; type names ember's classes)
    seen = []
    for m in (torch, ember):
        x = m.tensor([0.5, 1.5, 2.5], requires_grad=True)
        o = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        outs = [x[m.tensor([0, 2])], x[m.tensor([True, False, True])], m.scatter(x, 0, m.tensor([1]), o[:1]),
                m.scatter(x, 0, m.tensor([1]), 2.0), x.masked_scatter(m.tensor([True, False, True]), o),
                x.index_add(0, m.tensor([1]), o[:1]), x.index_copy(0, m.tensor([1]), o[:1]),
                x.index_fill(0, m.tensor([1]), 2.0), x.scatter_add(0, m.tensor([1]), o[:1]),
                x.scatter_reduce(0, m.tensor([1]), o[:1], "amax"), x.index_put((m.tensor([0]),), o[:1])]
        seen.append([(r.grad_fn.name(), type(r.grad_fn).__name__) for r in outs])
    assert seen[1] == seen[0]


_BITS_DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64"]


def _in_place_bits(lib, op, dtype, value, mixed=False):
    g = np.random.default_rng(0)
    x, t1, t2 = (g.standard_normal(20000).astype(np.float32) for _ in range(3))
    t2 = np.where(np.abs(t2) < 0.05, 0.5, t2).astype(np.float32)  # (no quotient near overflow)

    def make(a, dt):
        t = lib.tensor(a.astype(np.complex64) * (1 + 0.5j) if dt == "complex64" else a)
        return t.to(getattr(lib, dt))

    out = make(x, dtype)
    getattr(out, op)(make(t1, "float64" if mixed else dtype), make(t2, dtype), value=value)
    return out.to(lib.complex128 if dtype == "complex64" else lib.float64).numpy()


@pytest.mark.parametrize("value", [0.1, -0.7])
@pytest.mark.parametrize("dtype", _BITS_DTYPES)
@pytest.mark.parametrize("op", ["addcmul_", "addcdiv_"])
def test_the_in_place_forms_without_a_gradient_round_as_pytorchs_kernel(op, dtype, value):
    # without a gradient they were an add_ of t1 * t2 (or t1 / t2) scaled by value: three roundings in another order
    # than PyTorch's (value * t1) * t2 (or / t2) + input; 10 to 35% of the elements differed in their last bit.
    # Now addcdiv_ is PyTorch's order (its bits), and addcmul_ too where PyTorch's kernel rounds once in float32 (half
    # precision, computed as the out-of-place node does); float32/float64 addcmul_ rounds the product before the sum,
    # where PyTorch's kernel fuses them: most elements, not all, match
    got, want = _in_place_bits(ember, op, dtype, value), _in_place_bits(torch, op, dtype, value)
    np.testing.assert_allclose(got, want, rtol=1e-2 if dtype in ("float16", "bfloat16") else 1e-5, atol=1e-5)
    same = np.mean(got == want)
    if op == "addcmul_" and dtype in ("float32", "float64", "complex64"):
        assert same > 0.75
    else:
        assert same == 1.0
    if dtype == "float32":  # a float64 tensor1: computed in float64, as the out-of-place node does, then stored
        assert np.array_equal(_in_place_bits(ember, op, dtype, value, mixed=True),
                              _in_place_bits(torch, op, dtype, value, mixed=True))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64"])
def test_out_keyword_is_pytorchs(op, out_dtype):
    # (a TensorIterator op: out may be of a dtype the result casts to; an integer one is PyTorch's error)
    outcomes = []
    for m in (torch, ember):
        a, b, c = m.tensor([1.0, 2.0, 3.0]), m.tensor([2.0, 3.0, 4.0]), m.tensor([4.0, 5.0, 6.0])
        out = m.zeros(3, dtype=getattr(m, out_dtype))
        try:
            result = getattr(m, op)(a, b, c, value=2, out=out)
            outcomes.append((result is out, str(out.dtype).split(".")[-1], out.tolist()))
        except RuntimeError as err:
            outcomes.append(str(err))
    assert outcomes[1] == outcomes[0]
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        getattr(ember, op)(ember.ones(3, requires_grad=True), ember.ones(3), ember.ones(3), out=ember.empty(3))
