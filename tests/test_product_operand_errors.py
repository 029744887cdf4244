"""The matrix and vector products given an operand that is not a tensor (a list, a number), as functions and as
methods: PyTorch's TypeError, word for word (ember's code met it as an AttributeError of ``x._data``)."""

import pytest
import torch

import ember

T, V, B = (2, 2), (2,), (2, 2, 2)

# (call, the shapes of its tensor arguments): each case is called with a module (torch or ember) and its tensors
CASES = {
    "mm": (lambda m, a: m.mm(a, [[1.0, 2.0], [3.0, 4.0]]), [T]),
    "mm_method": (lambda m, a: a.mm(3), [T]),
    "bmm": (lambda m, a: m.bmm(a, 2), [B]),
    "bmm_method": (lambda m, a: a.bmm([1.0]), [B]),
    "mv": (lambda m, a: m.mv(a, [1.0, 2.0]), [T]),
    "mv_method": (lambda m, a: a.mv([1.0, 2.0]), [T]),
    "dot": (lambda m, a: m.dot(a, [1.0, 2.0]), [V]),
    "dot_method": (lambda m, a: a.dot(2.0), [V]),
    "outer": (lambda m, a: m.outer(a, 3), [V]),
    "outer_method": (lambda m, a: a.outer([1.0]), [V]),
    "inner": (lambda m, a: m.inner(a, [1.0, 2.0]), [V]),
    "inner_method": (lambda m, a: a.inner([1.0, 2.0]), [V]),
    "vdot": (lambda m, a: m.vdot(a, 3), [V]),
    "addmm": (lambda m, a, b: m.addmm(a, b, 2), [T, T]),
    "addmm_mat1": (lambda m, a, b: m.addmm(a, [[1.0]], b), [T, T]),
    "addmm_method": (lambda m, a, b: a.addmm(b, 2), [T, T]),
    "addmm_": (lambda m, a, b: a.addmm_(b, 3), [T, T]),
    "baddbmm": (lambda m, a, b: m.baddbmm(a, b, 2), [B, B]),
    "baddbmm_": (lambda m, a, b: a.baddbmm_(b, 2), [B, B]),
    "addbmm": (lambda m, a, b: m.addbmm(a, b, 3), [T, B]),
    "addbmm_method": (lambda m, a, b: a.addbmm([1.0], b), [T, B]),
    "addmv": (lambda m, a, b: m.addmv(a, b, [1.0, 2.0]), [V, T]),
    "addmv_": (lambda m, a, b: a.addmv_(b, [1.0, 2.0]), [V, T]),
    "addr": (lambda m, a, b: m.addr(a, b, 3), [T, V]),
    "addr_method": (lambda m, a, b: a.addr([1.0, 2.0], b), [T, V]),
}


@pytest.mark.parametrize("case", CASES)
def test_a_non_tensor_operand_is_pytorchs_type_error(case):
    call, shapes = CASES[case]
    messages = []
    for m in (torch, ember):
        with pytest.raises(TypeError) as caught:
            call(m, *[m.ones(s) for s in shapes])
        messages.append(str(caught.value))
    assert messages[1] == messages[0]
