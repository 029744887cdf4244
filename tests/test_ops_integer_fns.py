"""torch.gcd / torch.lcm, their in-place forms (Tensor.gcd_ / lcm_, torch.gcd_ / lcm_) and out=, against PyTorch:
values with signs, zeros and the wrap-around on overflow, dtype promotion, broadcasting, and the errors for
floating, bool and number operands."""

import numpy as np
import pytest
from test_ops_float_parts import each, same

import ember

A = [12, -18, 0, 0, 7, -7, 100, 35]
B = [8, 12, 0, -5, 0, 21, 3, -49]


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int8", "int8"), ("int8", "int64"), ("uint8", "int8"),
                                    ("int16", "int32"), ("uint8", "uint8")])
def test_values_and_dtypes_as_pytorch(name, dtypes):
    def fn(fw):
        a = fw.tensor(np.array(A).astype(dtypes[0]))
        b = fw.tensor(np.array(B).astype(dtypes[1]))
        return getattr(fw, name)(a, b)

    same(*each(fn))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_broadcasting_and_zero_dim_as_pytorch(name):
    same(*each(lambda fw: getattr(fw, name)(fw.tensor([[12], [-9]]), fw.tensor([8, 6, 0]))))
    # a 0-d operand takes the other's dtype (300 wraps to 44 in int8)
    same(*each(lambda fw: getattr(fw, name)(fw.tensor([12, 5], dtype=fw.int8), fw.tensor(300))))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_overflow_wraps_as_pytorch(name):
    same(*each(lambda fw: getattr(fw, name)(fw.tensor([-128, 100, 127], dtype=fw.int8),
                                            fw.tensor([0, 3, -126], dtype=fw.int8))))
    same(*each(lambda fw: getattr(fw, name)(fw.tensor([-2 ** 63, 2 ** 62 + 1]), fw.tensor([0, 6]))))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("case", ["float", "bool", "mixed_float", "number"])
def test_errors_as_pytorch(name, case):
    def fn(fw):
        a, b = {"float": (fw.tensor([12.0]), fw.tensor([8.0])), "bool": (fw.tensor([True]), fw.tensor([False])),
                "mixed_float": (fw.tensor([12]), fw.tensor([8.0])), "number": (fw.tensor([12]), 8)}[case]
        return getattr(fw, name)(a, b)

    got, want = each(fn)
    assert isinstance(want, tuple) and got == want


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_in_place_forms_as_pytorch(name):
    for method in (True, False):
        def fn(fw, method=method):
            x = fw.tensor([12, 18, -4], dtype=fw.int8)
            r = getattr(x, name + "_")(fw.tensor([8])) if method else getattr(fw, name + "_")(x, fw.tensor([8]))
            assert r is x
            return x

        same(*each(fn))
    got, want = each(lambda fw: getattr(fw.tensor([12], dtype=fw.int8), name + "_")(fw.tensor([8.0])))
    assert isinstance(want, tuple) and got == want
    assert ember.tensor([12, 18]).gcd(ember.tensor([8])).tolist() == [4, 2]


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_out_as_pytorch(name):
    for out_dtype in ("int8", "int64", "float32"):
        def fn(fw, out_dtype=out_dtype):
            out = fw.empty(0, dtype=getattr(fw, out_dtype))
            r = getattr(fw, name)(fw.tensor([12, 9]), fw.tensor([8, 6]), out=out)
            assert r is out
            return out

        same(*each(fn))
