"""``vmap`` given one of torch's functions or Tensor methods itself (``vmap(torch.dot)``, PyTorch's documented
batched dot product; ``vmap(torch.Tensor.sum)``): batched by the function's rule, with no performance warning, as
PyTorch's; a call the function refuses is its own TypeError. Compared with PyTorch."""

import warnings

import numpy as np
import pytest
import torch

import ember

CASES = {
    "dot": (lambda m: m.dot, 2),
    "sin": (lambda m: m.sin, 1),
    "sum": (lambda m: m.sum, 1),
    "outer": (lambda m: m.outer, 2),
    "matmul": (lambda m: m.matmul, 2),
    "softmax": (lambda m: m.nn.functional.softmax, 1),
    "Tensor.sum": (lambda m: m.Tensor.sum, 1),
    "Tensor.mean": (lambda m: m.Tensor.mean, 1),
    "Tensor.amax": (lambda m: m.Tensor.amax, 1),
    "Tensor.logsumexp_last": (lambda m: lambda t: m.Tensor.logsumexp(t, -1), 1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_vmap_of_a_torch_function_itself_uses_its_batching_rule(case):
    make, arity = CASES[case]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((3, 5)) for _ in range(arity)]
    results = []
    for m in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (ember's per-example fallback warns of a performance drop)
            kwargs = {"dim": -1} if case == "softmax" else {}
            out = m.vmap(make(m), **({} if not kwargs else {}))(*[m.tensor(a) for a in arrays], **kwargs)
        results.append(out.numpy())
    assert results[1].shape == results[0].shape
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_a_call_the_function_refuses_is_its_own_type_error():
    for m in (torch, ember):
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            m.vmap(m.mv)(m.randn(3, 4, 5))


@pytest.mark.parametrize("call", ["t.sum(())", "t.sum(dim=[])", "t.mean(())", "t.amax(())", "t.amin(dim=())",
                                  "t.std(())", "t.var(())", "t.nansum(())", "torch_.count_nonzero(t, ())",
                                  "t.all(())", "t.any(dim=())", "t.logsumexp(())", "torch_.logsumexp(t, [])",
                                  "torch_.special.logsumexp(t, ())", "t.logsumexp((), keepdim=True)",
                                  "t.norm(dim=())", "t.norm(1, dim=(), keepdim=True)", "torch_.norm(t, dim=())",
                                  "torch_.linalg.vector_norm(t, dim=())", "torch_.linalg.vector_norm(t, 3, (), True)"])
def test_an_empty_dim_list_under_vmap_reduces_the_example_not_the_batch(call):
    """PyTorch's vmap reads ``dim=()`` as every dim of each example, so the batch dim stays."""
    a = np.random.default_rng(1).standard_normal((3, 4, 2))
    results = []
    for m in (torch, ember):
        fn = eval("lambda t: " + call, {"torch_": m})  # noqa: S307  (the call's text, for its id)
        x = m.tensor(a) if "all" not in call and "any" not in call else m.tensor(a) > 0
        results.append(m.vmap(fn)(x).numpy())
    assert results[1].shape == results[0].shape
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
