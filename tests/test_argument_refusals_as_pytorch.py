"""Arguments PyTorch refuses or converts, refused and converted as PyTorch's (the same error types and messages),
and pointwise results' memory layout on permuted inputs of every dtype."""

import warnings

import numpy as np
import pytest
import torch

import ember


def outcome(fn):
    """("ok", result) or (error type name, message)."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 (the outcome is what is compared)
        return type(e).__name__, str(e)


def same_outcome(call):
    """``call(lib)`` fails as PyTorch's does, same type and message, or succeeds in both."""
    got, expected = outcome(lambda: call(ember)), outcome(lambda: call(torch))
    assert got[0] == expected[0], (got, expected)
    if got[0] != "ok":
        assert got[1] == expected[1]
    return got[1], expected[1]


@pytest.mark.parametrize("call", [
    lambda m: m.arange(6.).reshape(2, 3).prod(dim=()),
    lambda m: m.arange(6.).reshape(2, 3).prod(dim=(0,)),
    lambda m: m.arange(6.).reshape(2, 3).prod(dim=[0]),
    lambda m: m.prod(m.arange(6.).reshape(2, 3), dim=()),
    lambda m: m.prod(m.arange(6.).reshape(2, 3), dim=(0, 1), keepdim=True),
    lambda m: m.arange(6.).reshape(2, 3).prod(dim=None),
], ids=["method_empty", "method_tuple", "method_list", "function_empty", "function_keepdim", "dim_none"])
def test_prod_takes_one_int_dim(call):
    same_outcome(call)


def test_prod_positional_tuple_is_refused():
    # (PyTorch words a positional tuple "got (tuple)"; ember's message reads as the keyword's, the same TypeError)
    for m in (ember, torch):
        with pytest.raises(TypeError, match="invalid combination of arguments.*tuple"):
            m.arange(6.).reshape(2, 3).prod(())
        with pytest.raises(TypeError, match="argument 'dim'.* must be int, not tuple"):
            m.arange(6.).reshape(2, 3).prod((0,), True)


@pytest.mark.parametrize("dim", [(), [], (0, 1, 1), (0, 1, 2)])
def test_linalg_norm_dim_of_length_one_or_two(dim):
    same_outcome(lambda m: m.linalg.norm(m.ones(2, 3, 4), dim=dim))
    same_outcome(lambda m: m.linalg.norm(m.ones(2, 3, 4), ord=2, dim=dim))


def test_vector_norm_over_no_dims_is_all_of_them():
    got, expected = same_outcome(lambda m: m.linalg.vector_norm(m.arange(6.).reshape(2, 3), dim=()))
    assert float(got) == pytest.approx(float(expected))


@pytest.mark.parametrize("dst,src", [((2, 3), (4,)), ((2, 3), (3, 3)), ((4, 2, 3), (5, 3)), ((2, 0), (3,)),
                                     ((2, 3), (2, 2, 3)), ((2, 3), (2, 1, 3)), ((1, 3), (2, 3)), ((2, 3), (1, 2, 3)),
                                     ((), (2,)), ((2, 3), (3,)), ((2, 3), (2, 1))])
def test_copy_from_a_source_that_does_not_broadcast_to_the_destination(dst, src):
    same_outcome(lambda m: m.zeros(dst).copy_(m.ones(src)).sum())


def permuted(m, dtype):
    return m.ones(2, 3, 4).to(dtype).permute(2, 0, 1)


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "isnan", "signbit", "logical_not", "sign", "sgn", "isinf"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_pointwise_results_keep_the_inputs_memory_order(name, dtype):
    got, expected = same_outcome(lambda m: getattr(m, name)(permuted(m, getattr(m, dtype))))
    if not isinstance(expected, str):
        assert got.stride() == expected.stride()
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("call", [
    lambda m: m.addmm(input=2.0, mat1=m.ones(2, 2), mat2=m.ones(2, 2), out=m.empty(2, 2)),
    lambda m: m.addmm(input=2.0, mat1=m.ones(2, 2), mat2=m.ones(2, 2)),
    lambda m: m.addmm(2.0, m.ones(2, 2), m.ones(2, 2), out=m.empty(2, 2)),
], ids=["keyword_out", "keyword", "positional_out"])
def test_addmm_refuses_a_number_input_with_or_without_out(call):
    # (PyTorch lists its overloads where ember names the argument: the same TypeError)
    for m in (ember, torch):
        with pytest.raises(TypeError, match="addmm()"):
            call(m)
    with pytest.raises(TypeError, match="addmm\\(\\): argument 'input' (\\(position 1\\) )?must be Tensor, not float"):
        call(ember)


@pytest.mark.parametrize("call", [
    lambda m: m.empty(3).uniform_(from_=0.0, to=1.0),
    lambda m: m.empty(3).uniform_(from_=0.0),
], ids=["from_to", "from"])
def test_uniform_keyword_is_from_not_from_(call):
    same_outcome(call)
    for m in (ember, torch):
        m.manual_seed(0)
    assert ember.empty(3).uniform_(**{"from": 2.0, "to": 3.0}).tolist() == \
        torch.empty(3).uniform_(**{"from": 2.0, "to": 3.0}).tolist()


def test_random_refuses_from_underscore():
    for m in (ember, torch):
        with pytest.raises(TypeError, match="random_()"):
            m.empty(3).random_(from_=2, to=5)


COMPLEX = np.complex128(1 + 2j)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.leaky_relu(m.ones(2), COMPLEX),
    lambda m: m.nn.functional.elu(m.ones(2), alpha=COMPLEX),
    lambda m: m.lerp(m.ones(2), m.zeros(2), COMPLEX),
    lambda m: m.ones(2).fill_(COMPLEX),
    lambda m: m.full((2,), 1.0).clamp(min=COMPLEX),
    lambda m: m.ones(2, dtype=m.float64).fill_(COMPLEX),
    lambda m: m.ones(2).fill_(np.complex64(3 + 0j)),
    lambda m: m.ones(2).fill_(np.complex128(3 + 0j)),
    lambda m: m.nn.functional.leaky_relu(m.ones(2), np.complex128(0.5 + 0j)),
    lambda m: m.nn.functional.leaky_relu(m.ones(2), np.complex64(0.5 + 1j)),
], ids=["leaky_relu", "elu", "lerp", "fill_", "clamp", "fill_float64", "fill_complex64", "fill_real_complex128",
        "leaky_real_complex128", "leaky_complex64"])
def test_numpy_complex_scalar_for_a_real_parameter(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (NumPy's ComplexWarning, where PyTorch raises, fails the test)
        got, expected = same_outcome(call)
    if not isinstance(expected, str):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
