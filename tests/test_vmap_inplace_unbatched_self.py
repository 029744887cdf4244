"""vmap of an in-place op of a tensor that is not batched with a batched argument: PyTorch's error, whose wording
names what refuses it (its in-place arithmetic batching rule, the fallback's ATen op, or the kernel's shape check)."""

import warnings

import pytest
import torch

import ember

OPS = {
    "add_": lambda s, b: s.add_(b),
    "sub_": lambda s, b: s.sub_(b, alpha=2),
    "mul_": lambda s, b: s.mul_(b),
    "div_": lambda s, b: s.div_(b),
    "copy_": lambda s, b: s.copy_(b),
    "clamp_min_": lambda s, b: s.clamp_min_(b),
    "pow_": lambda s, b: s.pow_(b),
    "clamp_": lambda s, b: s.clamp_(min=b),
    "lerp_": lambda s, b: s.lerp_(b, 0.5),
    "addcmul_": lambda s, b: s.addcmul_(b, b),
    "fmod_": lambda s, b: s.fmod_(b),
    "atan2_": lambda s, b: s.atan2_(b),
    "index_add_": lambda s, b: s.index_add_(0, s.new_tensor([0, 1, 2]).long(), b),
    "iadd": lambda s, b: s.__iadd__(b),
    "imul": lambda s, b: s.__imul__(b),
    "ifloordiv": lambda s, b: s.__ifloordiv__(b),
    "imod": lambda s, b: s.__imod__(b),
    "ipow": lambda s, b: s.__ipow__(b),
    "ior": lambda s, b: s.__ior__(b),
    # a batched mask: masked_fill_ with a number has PyTorch's arithmetic rule, with a tensor value the fallback
    "masked_fill_": lambda s, b: s.masked_fill_(b > 0, 2.0),
    "masked_fill_tensor_value": lambda s, b: s.masked_fill_(b > 0, s.new_tensor(2.0)),
    "masked_fill_value_keyword": lambda s, b: s.masked_fill_(b > 0, value=s.new_tensor(2.0)),
    "masked_scatter_": lambda s, b: s.masked_scatter_(b > 0, s.new_ones(3)),
    "masked_fill_batched_value": lambda s, b: s.masked_fill_(s > 0, b.sum()),  # (a 0-d value per example)
}


def _message(m, name):
    dtype = m.int64 if name == "ior" else m.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's fallback's performance warning)
        with pytest.raises(RuntimeError) as info:
            m.func.vmap(lambda b: OPS[name](m.ones(3, dtype=dtype), b))(m.ones(2, 3, dtype=dtype))
    return str(info.value)


@pytest.mark.parametrize("name", sorted(OPS))
def test_inplace_op_of_an_unbatched_tensor_is_pytorchs_error(name):
    assert _message(ember, name) == _message(torch, name)


@pytest.mark.parametrize("name", ["add_", "atan2_", "iadd", "ior"])
@pytest.mark.parametrize("self_shape,batched_shape", [
    ((3,), (2, 4)),  # sizes that do not broadcast: the kernel's RuntimeError, not NumPy's ValueError
    ((4, 3), (2, 3)),  # an example of fewer dims than self: its batch dim first, then 1s (broadcast shape [2, 4, 3])
    ((4, 1, 3), (2, 5, 1)),
])
def test_inplace_shape_check_of_an_unbatched_tensor_is_pytorchs_error(name, self_shape, batched_shape):
    def message(m):
        dtype = m.int64 if name == "ior" else m.float32
        with pytest.raises(RuntimeError) as info:
            m.func.vmap(lambda b: OPS[name](m.ones(self_shape, dtype=dtype), b))(m.ones(batched_shape, dtype=dtype))
        return str(info.value)

    assert message(ember) == message(torch)
