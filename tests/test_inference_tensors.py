"""Inference tensors against PyTorch: which tensors are (made under inference_mode, views of them, .data,
detach), which are not (out-of-place results outside, clones, views of normal tensors, inference_mode(False)),
and PyTorch's errors outside inference mode: in-place changes (raised by the version bump, after the op has
written, so that the op's own errors come first: an expanded tensor's overlap, a shape mismatch), saving one
for backward, requires_grad, the version counter."""

import operator
import threading

import numpy as np
import pytest
import torch

import ember


def _make(m):
    n = m.ones(3)
    with m.inference_mode():
        x = m.ones(3)
        state = {
            "made inside": x.is_inference(),
            "view of normal inside": n[:2].is_inference(),
            "result of normal inside": (n * 2).is_inference(),
            "mode on": m.is_inference_mode_enabled(),
            "grad on": m.is_grad_enabled(),
        }
        with m.inference_mode(False):
            state["made under mode=False"] = m.ones(1).is_inference()
            state["mode=False: grad on"] = m.is_grad_enabled()
        with m.no_grad():
            state["made under no_grad inside"] = m.ones(1).is_inference()
        x.add_(1)  # allowed inside
        n.add_(1)
    state.update({
        "view outside": x[:2].is_inference(),
        "detach": x.detach().is_inference(),
        "data": x.data.is_inference(),
        "result outside": (x * 2).is_inference(),
        "clone": x.clone().is_inference(),
        "torch.is_inference": m.is_inference(x),
        "normal": m.is_inference(n),
        "mode off": m.is_inference_mode_enabled(),
        "value": x.tolist(),
    })
    return state


def test_which_tensors_are_inference_tensors():
    assert _make(ember) == _make(torch)


def _error(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 (the type and message are compared)
        return type(e), str(e)
    return None


INPLACE = {
    "add_": lambda m, x: x.add_(1), "mul_": lambda m, x: x.mul_(2), "zero_": lambda m, x: x.zero_(),
    "copy_": lambda m, x: x.copy_(m.full((2, 3), 5.0)), "clamp_": lambda m, x: x.clamp_(0, 2.5),
    "exp_": lambda m, x: x.exp_(), "setitem": lambda m, x: x.__setitem__((0, 0), 3.0),
    "masked setitem": lambda m, x: x.__setitem__(x > 0, 3.0),
    "index_add_": lambda m, x: x.index_add_(0, m.tensor([0]), m.ones(1, 3)),
    "scatter_": lambda m, x: x.scatter_(0, m.tensor([[0, 0, 0]]), 9.0),
    "masked_fill_": lambda m, x: x.masked_fill_(m.ones(2, 3, dtype=m.bool), 4.0),
    "normal_": lambda m, x: x.normal_(), "uniform_": lambda m, x: x.uniform_(),
    "transpose_": lambda m, x: x.transpose_(0, 1), "unsqueeze_": lambda m, x: x.unsqueeze_(0),
    "resize_": lambda m, x: x.resize_(1), "view's mul_": lambda m, x: x[0].mul_(2),
    "relu inplace": lambda m, x: m.nn.functional.relu(x, inplace=True),
    "elu inplace": lambda m, x: m.nn.functional.elu(x, inplace=True),
    "fill_diagonal_": lambda m, x: x.fill_diagonal_(0.0), "renorm_": lambda m, x: x.renorm_(1, 0, 0.1),
}


@pytest.mark.parametrize("name", list(INPLACE))
@pytest.mark.parametrize("grad_mode", [True, False])
def test_inplace_outside_inference_mode_is_refused(name, grad_mode):
    errors, after = [], []
    for m in (ember, torch):
        with m.inference_mode():
            x = m.arange(6.0).reshape(2, 3) + 1
        with m.set_grad_enabled(grad_mode):
            errors.append(_error(INPLACE[name], m, x))
        after.append(x.numpy())  # PyTorch's op has written (its version bump refuses after it)
    assert errors[0] == errors[1]
    if name not in ("normal_", "uniform_"):
        np.testing.assert_allclose(after[0], after[1], rtol=1e-6)
    assert errors[0][0] is RuntimeError and "Inplace update to inference tensor" in errors[0][1]


SAVED = {
    "w * x": lambda m, w, x: w * x, "x * w": lambda m, w, x: x * w, "w @ x": lambda m, w, x: w @ x,
    "w.mul(view of x)": lambda m, w, x: w[:2] * x[:2], "w + x (nothing saved)": lambda m, w, x: w + x,
    "softplus(w) + x": lambda m, w, x: m.nn.functional.softplus(w) + x,
    "linear": lambda m, w, x: m.nn.functional.linear(x.reshape(1, 3), w.reshape(1, 3)),
    "no_grad w * x": lambda m, w, x: m.no_grad()(lambda: w * x)(),
}


@pytest.mark.parametrize("name", list(SAVED))
def test_saved_for_backward_outside_inference_mode(name):
    results = []
    for m in (ember, torch):
        w = m.ones(3, requires_grad=True)
        with m.inference_mode():
            x = m.full((3,), 2.0)
        err = _error(SAVED[name], m, w, x)
        results.append(err if err else SAVED[name](m, w, x).tolist())
    if all(isinstance(r, list) for r in results):  # (softplus(1) lies a hair from a float32 tie: an ulp either way)
        np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
    else:
        assert results[0] == results[1]


def test_saved_for_backward_under_inference_mode_false():
    for m in (ember, torch):
        w = m.ones(3, requires_grad=True)
        with m.inference_mode():
            x = m.ones(3)
            with m.inference_mode(False):
                assert _error(operator.mul, w, x)[1].startswith("Inference tensors cannot be saved for backward.")



@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["mul", "div"])
@pytest.mark.parametrize("which", ["first", "second"])
def test_an_inference_tensor_that_requires_grad_saved_beside_a_normal_one(which, op, dtype):
    """An inference tensor made to require grad inside inference_mode, then an operand of a product or quotient
    (which saves both operands) outside it beside a tensor that requires grad, of one shape and dtype (ember's
    two-operand fast path, ``apply_same``): PyTorch's error whichever operand it is, where the fast path would
    record it unchecked (no error, a gradient for each)."""
    results = []
    for m in (ember, torch):
        with m.inference_mode():
            x = m.full((2, 3), 2.0, dtype=getattr(m, dtype), requires_grad=True)
        w = m.ones(2, 3, dtype=getattr(m, dtype), requires_grad=True)
        a, b = (x, w) if which == "first" else (w, x)
        results.append(_error(getattr(operator, "truediv" if op == "div" else op), a, b))
    assert results[0] == results[1]
    assert results[0][1].startswith("Inference tensors cannot be saved for backward.")


_version = operator.attrgetter("_version")


def test_requires_grad_version_and_parameter():
    for m in (ember, torch):
        with m.inference_mode():
            x = m.ones(3)
            assert _error(_version, x) == (RuntimeError, "Inference tensors do not track version counter.")
        msg = (RuntimeError, "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        assert _error(x.requires_grad_) == msg
        assert _error(m.nn.Parameter, x) == msg
        x.requires_grad = False  # allowed
        assert _error(_version, x) == (RuntimeError, "Inference tensors do not track version counter.")
        assert _error(m.is_inference, 1) == (
            TypeError, "is_inference(): argument 'input' (position 1) must be Tensor, not int")
        with m.inference_mode():
            y = m.ones(2)
            y.requires_grad_()  # allowed inside
        assert y.requires_grad and y.is_leaf


def test_decorators_and_threads():
    @ember.inference_mode
    def bare():
        return ember.ones(1).is_inference(), ember.is_grad_enabled()

    @ember.inference_mode(False)
    def off():
        return ember.ones(1).is_inference(), ember.is_grad_enabled()

    assert bare() == (True, False)
    with ember.inference_mode():
        assert off() == (False, True)
        seen = []
        t = threading.Thread(target=lambda: seen.append((ember.ones(1).is_inference(),
                                                          ember.is_inference_mode_enabled())))
        t.start()
        t.join()
        assert seen == [(False, False)]  # per thread, as PyTorch's
    assert not ember.ones(1).is_inference() and not ember.is_inference_mode_enabled()


def test_model_inference_then_training_on_fresh_tensors():
    """The common pattern: evaluate under inference_mode, then train on normal tensors; and an inference
    tensor used as an input of a model in training is PyTorch's error."""
    ember.manual_seed(0)
    model = ember.nn.Linear(3, 2)
    with ember.inference_mode():
        batch = ember.randn(4, 3)
        out = model(batch)
    assert out.is_inference() and not out.requires_grad
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        model(batch)
    model(batch.clone()).sum().backward()
    assert model.weight.grad is not None


INFERENCE_VIEWS = {
    "slice": lambda x: x[0], "view": lambda x: x.view(6), "t": lambda x: x.t(), "unsqueeze": lambda x: x.unsqueeze(0),
    "diagonal": lambda x: x.diagonal(), "unbind": lambda x: x.unbind(0)[0], "split": lambda x: x.split(1)[0],
    "reshape": lambda x: x.reshape(3, 2), "view of a view": lambda x: x[0][1:],
}


@pytest.mark.parametrize("inside", [True, False], ids=["inside", "outside"])
@pytest.mark.parametrize("name", sorted(INFERENCE_VIEWS))
def test_views_of_an_inference_tensor_keep_no_view_metadata(name, inside):
    """A view of an inference tensor, taken in inference mode or outside it, has no ``_base`` and is no view to
    ``_is_view()``, as PyTorch's; it is an inference tensor, refused in place outside inference mode."""
    outcomes = []
    for m in (torch, ember):
        with m.inference_mode():
            x = m.arange(6.0).reshape(2, 3)
            v = INFERENCE_VIEWS[name](x) if inside else None
        v = INFERENCE_VIEWS[name](x) if v is None else v
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
            v.mul_(1)
        outcomes.append((v._base is None, v._is_view(), v.is_inference(), v.requires_grad))
    assert outcomes[1] == outcomes[0] == (True, False, True, False)


def test_views_of_a_normal_tensor_keep_their_base():
    for m in (torch, ember):
        x = m.zeros(2, 3)
        with m.inference_mode():
            inside = x[0]
        assert inside._base is x and inside._is_view() and x[0]._base is x and not x._is_view()


@pytest.mark.parametrize("how", ["view", "view of a view", "unbind"])
def test_view_made_in_inference_mode_changed_in_place_outside(how):
    """A view of a normal tensor that requires grad, made in inference mode: changed in place outside it is
    PyTorch's error naming inference mode (not no_grad)."""
    messages = []
    for m in (torch, ember):
        x = m.ones(2, 3, requires_grad=True) * 1
        with m.inference_mode():
            v = x.unbind(0)[0] if how == "unbind" else x[0]
        with pytest.raises(RuntimeError) as info:
            (v[0:1] if how == "view of a view" else v).add_(1)
        messages.append(str(info.value))
    assert messages[1] == messages[0]
    assert "inference mode" in messages[0]


EXPANDED_INPLACE = {
    "add_": lambda m, x: x.add_(1), "mul_": lambda m, x: x.mul_(2), "copy_": lambda m, x: x.copy_(m.ones(2, 3)),
    "exp_": lambda m, x: x.exp_(), "clamp_": lambda m, x: x.clamp_(0, 1), "index_add_":
    lambda m, x: x.index_add_(0, m.tensor([0]), m.ones(1, 3)), "uniform_": lambda m, x: x.uniform_(),
    "fill_": lambda m, x: x.fill_(5), "zero_": lambda m, x: x.zero_(),
    "t_": lambda m, x: x.t_(), "unsqueeze_": lambda m, x: x.unsqueeze_(0), "mul_ of another shape":
    lambda m, x: x.mul_(m.ones(4)), "resize_": lambda m, x: x.resize_(3), "set_": lambda m, x: x.set_(m.zeros(4)),
    "set_()": lambda m, x: x.set_(), "resize_ to its shape": lambda m, x: x.resize_(2, 3),
}


@pytest.mark.parametrize("where", ["outside", "no_grad", "inside"])
@pytest.mark.parametrize("name", list(EXPANDED_INPLACE))
def test_the_ops_own_errors_come_before_the_inference_tensor_refusal(name, where):
    # PyTorch refuses an in-place change of an inference tensor outside inference mode at its version bump, after
    # the op: an expanded tensor's overlap error (written-to elements sharing memory), a shape mismatch, come first;
    # ops that write no overlapping elements (fill_, t_, resize_) change the tensor, then it is refused. ember
    # refused first, before the op's own checks
    outcomes = []
    for m in (torch, ember):
        with m.inference_mode():
            x = m.arange(3.0).expand(2, 3)
        mode = m.inference_mode() if where == "inside" else m.no_grad() if where == "no_grad" else m.enable_grad()
        with mode:
            error = _error(EXPANDED_INPLACE[name], m, x)
        outcomes.append((error and (error[0], error[1][:60]), tuple(x.shape), x.is_inference()))
    assert outcomes[1] == outcomes[0]
