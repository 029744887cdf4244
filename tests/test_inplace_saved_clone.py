"""An in-place op whose formula reads its input saves PyTorch's ``self.clone()`` (``ember/ops/inplace.py``'s
``_saved_as_clone``): its ``_saved_self`` is that clone, whose grad_fn is a ``CloneBackward0`` pointing at the
input's previous node, while the op's own node points there directly, as PyTorch's; the values, the gradients and
the "modified by an inplace operation" errors are unchanged."""

import pytest
import torch

import ember


def _ops(m):
    w = m.tensor([2.0, 3.0, 4.0], requires_grad=True)
    return {
        "sin_": lambda y: y.sin_(),
        "cos_": lambda y: y.cos_(),
        "abs_": lambda y: y.abs_(),
        "log_": lambda y: y.log_(),
        "square_": lambda y: y.square_(),
        "pow_number": lambda y: y.pow_(3),
        "pow_tensor": lambda y: y.pow_(w),
        "clamp_": lambda y: y.clamp_(0.3, 0.6),
        "mul_tensor": lambda y: y.mul_(w),
        "div_tensor": lambda y: y.div_(w),
        "hardtanh_": lambda y: m.nn.functional.hardtanh(y, 0.3, 0.6, inplace=True),
    }


def _run(m, op):
    a = m.tensor([0.25, 0.5, 0.75], requires_grad=True)
    y = a * 2
    _ops(m)[op](y)
    return a, y


def _identity(t):
    """The saved clone as a program sees it: its node's name, its next node's name, whether that is the op's own
    next node, and whether the op's node points at the input's previous node (``MulBackward0``) itself."""
    node = t.grad_fn
    saved = node._saved_self
    before = node.next_functions[0][0]
    return (type(saved.grad_fn).__name__, type(saved.grad_fn.next_functions[0][0]).__name__,
            saved.grad_fn.next_functions[0][0] is before, type(before).__name__, saved.requires_grad,
            saved.is_leaf, saved._version, saved.detach().tolist())


@pytest.mark.parametrize("op", sorted(_ops(torch)))
def test_saved_self_is_a_clone_of_the_input_as_pytorchs(op):
    (_, ty), (_, ey) = _run(torch, op), _run(ember, op)
    want = _identity(ty)
    assert want[:4] == ("CloneBackward0", "MulBackward0", True, "MulBackward0")  # (PyTorch's, as documented)
    got = _identity(ey)
    assert got[:7] == want[:7]
    assert got[7] == pytest.approx(want[7])


@pytest.mark.parametrize("op", sorted(_ops(torch)))
def test_gradients_through_the_op_and_through_its_saved_clone_as_pytorchs(op):
    grads = {}
    for m in (torch, ember):
        a, y = _run(m, op)
        saved = y.grad_fn._saved_self
        (through_clone,) = m.autograd.grad((saved * saved).sum(), a, retain_graph=True)  # (the clone's edge)
        (first,) = m.autograd.grad(y.sum(), a, create_graph=True)
        second = m.autograd.grad(first.sum(), a, allow_unused=True)[0] if first.requires_grad else None
        grads[m.__name__] = [through_clone.tolist(), first.detach().tolist(),
                             None if second is None else (second + 0).tolist()]  # (abs's: PyTorch's zeros
        # without storage, which tolist refuses)
    for got, want in zip(grads["ember"], grads["torch"]):
        assert (got is None) == (want is None)
        if want is not None:
            assert got == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_changing_the_saved_clone_or_a_saved_input_is_pytorchs_error(m):
    a = m.tensor([0.25, 0.5, 0.75], requires_grad=True)
    y = a * 2
    y.cos_()
    y.grad_fn._saved_self.mul_(2)  # (the clone, changed: its version is checked)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\], which is output 0 of Mul, is at version 1; "
                                           r"expected version 0 instead"):
        y.sum().backward()
    y = a * 2
    z = y.sin()
    y.cos_()  # (sin's saved input, changed; cos_'s clone of it is another tensor)
    with pytest.raises(RuntimeError, match=r"which is output 0 of Cos, is at version 1; expected version 0"):
        z.sum().backward()
    y = a * 2
    y.cos_()
    y.mul_(3)  # (the input written again after cos_ saved its clone: no error, as PyTorch's)
    y.sum().backward()
    assert a.grad.tolist() == pytest.approx((-6 * torch.sin(torch.tensor([0.5, 1.0, 1.5]))).tolist())
