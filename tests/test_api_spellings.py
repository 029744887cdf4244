"""Names and keyword spellings PyTorch accepts that public code uses (found by tools/api_coverage.py):
constants, C-type casts, ``to_sparse``, sizes given as a keyword, NumPy's ``axis=``/``keepdims=``."""

import math

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember

A = np.array([[0.5, -1.0, 0.0], [2.0, 0.0, -3.5]], dtype=np.float32)


@pytest.mark.parametrize("name", ["pi", "e", "inf", "nan", "newaxis"])
def test_constants(name):
    got, want = getattr(ember, name), getattr(torch, name)
    assert type(got) is type(want)
    assert got is None if want is None else (got == want or math.isnan(got) and math.isnan(want))


def test_newaxis_indexes_as_none():
    assert_close(ember.tensor(A)[:, ember.newaxis], torch.tensor(A)[:, torch.newaxis])


@pytest.mark.parametrize("method", ["byte", "char", "short"])
def test_c_type_casts_wrap_out_of_range_values_as_pytorch(method):
    values = np.array([1.5, -2.7, 300.0, 0.0], dtype=np.float32)
    assert_close(getattr(ember.tensor(values), method)(), getattr(torch.tensor(values), method)())


@pytest.mark.parametrize("shape, sparse_dim", [((2, 3), None), ((2, 3, 2), 2), ((2, 3, 2), 1), ((), None)])
def test_to_sparse(shape, sparse_dim):
    a = np.zeros(shape, dtype=np.float32)
    if a.ndim:
        a[1, 2] = 5.0
        a[0, 0] = -1.0
    else:
        a = np.array(3.0, dtype=np.float32)
    args = () if sparse_dim is None else (sparse_dim,)
    e, t = ember.tensor(a).to_sparse(*args), torch.tensor(a).to_sparse(*args)
    assert e.is_sparse and e.is_coalesced() == t.is_coalesced()
    assert_close(e._indices(), t._indices())
    assert_close(e._values(), t._values())
    assert_close(e.to_dense(), t.to_dense())


def test_to_sparse_refuses_a_tensor_that_requires_grad():
    with pytest.raises(NotImplementedError, match="detach"):
        ember.ones(2, requires_grad=True).to_sparse()


@pytest.mark.parametrize("call", [
    lambda m: m.zeros(size=(2, 3)), lambda m: m.ones(size=[2]), lambda m: m.empty(size=(0, 2)).shape,
    lambda m: m.rand(size=(2, 1)).shape, lambda m: m.randn(size=(3,)).shape,
    lambda m: m.tensor(A).reshape(shape=(3, 2)), lambda m: m.reshape(m.tensor(A), shape=(-1,)),
    lambda m: m.tensor(A).view(size=(6,)), lambda m: m.tensor(A).permute(dims=(1, 0)),
    lambda m: m.permute(m.tensor(A), dims=(1, 0)), lambda m: m.tensor(A).expand(size=(2, 2, 3)),
    lambda m: m.tensor(A).repeat(repeats=(1, 2)), lambda m: m.tensor(A).new_zeros(size=(2,)),
    lambda m: m.tensor(A).new_ones(size=(1, 2)),
])
def test_sizes_as_a_keyword(call):
    e, t = call(ember), call(torch)
    if isinstance(t, torch.Size):
        assert tuple(e) == tuple(t)
    else:
        assert_close(e, t)


def test_sizes_both_positional_and_keyword_is_a_type_error():
    for m in (ember, torch):
        with pytest.raises(TypeError):
            m.zeros(2, size=(2,))


NUMPY_SPELLINGS = [
    lambda m, x: x.sum(axis=0, keepdims=True), lambda m, x: m.sum(x, axis=1), lambda m, x: x.mean(axis=1),
    lambda m, x: m.cumprod(x, axis=1), lambda m, x: x.cumsum(axis=0), lambda m, x: m.cat([x, x], axis=0),
    lambda m, x: m.stack([x, x], axis=1), lambda m, x: x.max(axis=1, keepdims=True)[0],
    lambda m, x: x.argmax(axis=1), lambda m, x: m.softmax(x, axis=1), lambda m, x: x.logsumexp(axis=0),
    lambda m, x: x.std(axis=1), lambda m, x: x.var(axis=0, keepdims=True), lambda m, x: x.amax(axis=0),
    lambda m, x: x.unsqueeze(axis=0), lambda m, x: x.any(axis=1), lambda m, x: m.prod(x, axis=1),
    lambda m, x: x.sort(axis=1)[0], lambda m, x: x.topk(2, axis=1)[0], lambda m, x: m.flatten(x, 0),
    lambda m, x: x.index_select(axis=1, index=m.tensor([0, 2])), lambda m, x: x.chunk(3, axis=1)[0],
]


@pytest.mark.parametrize("fn", NUMPY_SPELLINGS)
def test_numpy_keyword_spellings(fn):
    assert_close(fn(ember, ember.tensor(A)), fn(torch, torch.tensor(A)))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.norm(x, axis=0), lambda m, x: x.split(1, axis=0), lambda m, x: m.unique(x, axis=0),
    lambda m, x: x.sum(dim=0, axis=0),
])
def test_numpy_spellings_refused_where_pytorch_refuses(fn):
    for m in (ember, torch):
        with pytest.raises(TypeError):
            fn(m, m.tensor(A))


def test_every_native_op_with_a_dim_takes_axis():
    # Where PyTorch's op is native (its argument parser maps axis=), ember's takes axis= too.
    import inspect

    for owner, t_owner in ((ember, torch), (ember.Tensor, torch.Tensor)):
        for name in dir(owner):
            fn = getattr(owner, name, None)
            if name.startswith("_") or not callable(fn) or isinstance(fn, type):
                continue
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):
                continue
            native = type(getattr(t_owner, name, None)).__name__ in ("builtin_function_or_method", "method_descriptor")
            if "dim" in params and native:
                # the PyTorch-names wrapper (NumPy spellings too), possibly under out='s (ember/_out.py) or an
                # in-place method's refusal of NumPy arrays (ember/_arg_aliases.py)
                wrappers = []
                while fn is not None:
                    wrappers.append(getattr(getattr(fn, "__code__", None), "co_name", None))
                    outer = wrappers[-1] in ("writing_out", "refusing_numpy_arrays")
                    fn = getattr(fn, "__wrapped__", None) if outer else None
                assert "accepting_torch_names" in wrappers, f"{owner.__name__}.{name}"


def test_sdpa_kernel_sets_the_switches_for_the_block_as_pytorch():
    from torch.nn.attention import SDPBackend as TB
    from torch.nn.attention import sdpa_kernel as t_kernel

    from ember.nn.attention import SDPBackend as EB
    from ember.nn.attention import sdpa_kernel as e_kernel

    assert {n: int(v) for n, v in EB.__members__.items()} == {n: int(v) for n, v in TB.__members__.items()}
    assert str(EB.MATH) == str(TB.MATH)

    def switches(m):
        b = m.backends.cuda
        return b.flash_sdp_enabled(), b.math_sdp_enabled(), b.mem_efficient_sdp_enabled(), b.cudnn_sdp_enabled()

    for chosen in (["MATH"], ["FLASH_ATTENTION", "EFFICIENT_ATTENTION"], []):
        with e_kernel([getattr(EB, n) for n in chosen]), t_kernel([getattr(TB, n) for n in chosen]):
            assert switches(ember) == switches(torch)
        assert switches(ember) == switches(torch) == (True, True, True, True)
    with e_kernel(EB.MATH):  # one backend, not a list; the attention itself computes as before
        q = ember.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 8)).astype(np.float32))
        out = ember.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    tq = torch.tensor(q.numpy())
    assert_close(out, torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, is_causal=True))
    for kernel in (e_kernel, t_kernel):
        with pytest.raises(AssertionError, match="must be an instance of SDPBackend"):
            with kernel("math"):
                pass


def test_backends_cuda_sdp_kernel_as_pytorch():
    for m in (ember, torch):
        with pytest.warns(FutureWarning, match="sdpa_kernel"):
            with m.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True) as ctx:
                assert ctx == {} and not m.backends.cuda.flash_sdp_enabled() and m.backends.cuda.math_sdp_enabled()
        assert m.backends.cuda.flash_sdp_enabled()
