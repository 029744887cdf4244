"""Module backward hooks (register_full_backward_hook, ..._pre_hook, the deprecated register_backward_hook and the
global ones) against PyTorch: each program runs once with ``lib = torch`` and once with ``lib = ember`` on the same
weights and inputs, and what the hooks saw (gradients, order, counts) and the gradients that came out must agree."""

import warnings

import numpy as np
import pytest
import torch
from nn_oracle import ember_state
from oracle import assert_close

import ember

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
IMG = RNG.standard_normal((2, 1, 6, 6))


def snap(value):
    """Tensors (nested in tuples/lists) as arrays, None kept, for comparing what the two frameworks gave."""
    if isinstance(value, (tuple, list)):
        return [snap(v) for v in value]
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return value.detach().numpy().copy()
    return value


def assert_same(got, want, path="result"):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{path}: got {got!r}, want an array"
        assert_close(got, want, atol=1e-10, rtol=1e-9, msg=path)
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def both(build, program):
    """``program(lib, model)`` for lib = torch then ember, the ember model holding the torch model's weights."""
    torch.manual_seed(0)
    tm = build(torch).double()
    em = build(ember).double()
    em.load_state_dict(ember_state(tm))
    want = snap(program(torch, tm))
    got = snap(program(ember, em))
    assert_same(got, want)
    return got


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Conv2d(4, 3, 3), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 2))


def recorder(log, name):
    def hook(module, grad_input, grad_output):
        log.append((name, type(module).__name__, list(grad_input), list(grad_output)))
    return hook


def test_full_hook_sees_module_input_and_output_gradients():
    def program(lib, model):
        log = []
        for name, m in model.named_modules():
            m.register_full_backward_hook(recorder(log, name or "top"))
        x = lib.tensor(X, requires_grad=True)
        (model(x) ** 2).sum().backward()
        return log, x.grad, model[0].weight.grad

    log, *_ = both(mlp, program)
    assert [entry[0] for entry in log] == ["2", "1", "0", "top"]  # innermost last layer first, the container last


def test_input_without_grad_gives_none_and_warns_as_pytorch():
    def program(lib, model):
        log = []
        model.register_full_backward_hook(recorder(log, "top"))
        model[0].register_full_backward_hook(recorder(log, "first"))
        with pytest.warns(UserWarning, match="no inputs require gradients") as record:
            model(lib.tensor(X)).sum().backward()
        # attributed to the user's backward() line, as PyTorch's (so warning filters by module/line apply)
        assert {w.filename for w in record} == {__file__}, [w.filename for w in record]
        return log, model[0].weight.grad

    log, _ = both(mlp, program)
    assert log[0][2] == [None] and log[1][2] == [None]


class TwoInputs:
    """forward(a, k, b, *, c): positional tensors, a non-tensor and a keyword tensor (which hooks do not see)."""

    @staticmethod
    def build(lib):
        class Mixer(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, a, k, b, c=None):
                return self.lin(a) * k + b.tanh() + c

        return Mixer()


@pytest.mark.parametrize("b_requires_grad", [True, False])
def test_non_tensor_and_keyword_arguments(b_requires_grad):
    def program(lib, model):
        log = []
        model.register_full_backward_hook(recorder(log, "m"))
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X[::-1].copy(), requires_grad=b_requires_grad)
        c = lib.tensor(X * 2, requires_grad=True)
        model(a, 3.0, b, c=c).pow(2).sum().backward()
        return log, a.grad, b.grad, c.grad

    log, *_ = both(TwoInputs.build, program)
    grad_input = log[0][2]
    assert len(grad_input) == 3 and grad_input[1] is None  # one entry per positional argument
    if not b_requires_grad:  # PyTorch gives zeros for a tensor argument that needs no gradient
        assert np.all(grad_input[2] == 0)


def tuple_module(lib):
    class Split(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 4)

        def forward(self, x, y):
            h = self.lin(x)
            return h * 2, h.sum(1) + y.sum()

    return Split()


@pytest.mark.parametrize("use", ["first", "second", "both"])
def test_tuple_outputs_and_an_unused_input(use):
    def program(lib, model):
        log, pre = [], []
        model.register_full_backward_hook(recorder(log, "m"))
        model.register_full_backward_pre_hook(lambda m, go: pre.append(list(go)))
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(X[:2], requires_grad=True)
        o1, o2 = model(x, y)
        loss = {"first": o1.sum(), "second": (o2 ** 2).sum(), "both": o1.sum() + o2.sum()}[use]
        loss.backward()
        return log, pre, x.grad, y.grad, model.lin.weight.grad

    log, pre, *_ = both(tuple_module, program)
    assert (log[0][3][1] is None) == (use == "first") and (pre[0][0] is None) == (use == "second")


def test_hook_replaces_grad_input_and_it_flows_on():
    def program(lib, model):
        model[2].register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,))
        model[1].register_full_backward_hook(lambda m, gi, go: (gi[0].clamp(min=0.05),))
        x = lib.tensor(X, requires_grad=True)
        model(x).sum().backward()
        return x.grad, model[0].weight.grad, model[0].bias.grad, model[2].weight.grad

    both(mlp, program)


def test_pre_hook_replaces_grad_output_for_module_and_hooks():
    def program(lib, model):
        log = []
        model[0].register_full_backward_pre_hook(lambda m, go: (go[0] * 0.5,))
        model[0].register_full_backward_pre_hook(lambda m, go: log.append(("pre2", list(go))))
        model[0].register_full_backward_hook(recorder(log, "full"))
        x = lib.tensor(X, requires_grad=True)
        model(x).sum().backward()
        return log, x.grad, model[0].weight.grad, model[2].weight.grad

    both(mlp, program)


def test_pre_hook_dropping_every_grad_output():
    """No gradient flows into the module, yet its input hooks fire, with zeros, as PyTorch's engine runs them."""
    def program(lib, model):
        log = []
        model[0].register_full_backward_pre_hook(lambda m, go: (None,))
        model[0].register_full_backward_hook(recorder(log, "first"))
        x = lib.tensor(X, requires_grad=True)
        model(x).sum().backward()
        return log, x.grad, model[0].weight.grad, model[2].weight.grad

    log, x_grad, weight_grad, _ = both(mlp, program)
    assert np.all(x_grad == 0) and weight_grad is None and log[0][3] == [None]


def test_prepend_and_removal():
    def program(lib, model):
        order = []
        h1 = model.register_full_backward_hook(lambda m, gi, go: order.append("a"))
        model.register_full_backward_hook(lambda m, gi, go: order.append("b"), prepend=True)
        p1 = model.register_full_backward_pre_hook(lambda m, go: order.append("pa"))
        model.register_full_backward_pre_hook(lambda m, go: order.append("pb"), prepend=True)
        x = lib.tensor(X, requires_grad=True)
        model(x).sum().backward()
        h1.remove()
        p1.remove()
        model(x).sum().backward()
        out = model(x)  # hooks removed after the call still fire for it, as PyTorch (they were taken at the call)
        model.register_full_backward_hook(lambda m, gi, go: order.append("late"))
        out.sum().backward()
        return order

    order = both(mlp, program)
    assert order == ["pb", "pa", "b", "a", "pb", "b", "pb", "b"]


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_errors_as_pytorch(lib):
    lin = lib.nn.Linear(3, 2).double()
    x = lib.tensor(X, requires_grad=True)
    h = lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but "
                                           "expected 1"):
        lin(x).sum().backward()
    h.remove()
    h = lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of grad_output, got 2"):
        lin(x).sum().backward()
    h.remove()
    h = lin.register_full_backward_hook(lambda m, gi, go: (lib.ones(2, 2, dtype=lib.float64),))
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        lin(x).sum().backward()
    h.remove()
    h = lin.register_full_backward_hook(lambda m, gi, go: (lib.ones(4, 3, dtype=lib.float64),))
    with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            lin(lib.tensor(X)).sum().backward()
    h.remove()
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks on "
                                           "a single Module"):
        lin.register_backward_hook(lambda m, gi, go: None)
    relu = lib.nn.ReLU()
    relu.register_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        relu.register_full_backward_hook(lambda m, gi, go: None)


@pytest.mark.parametrize("where", ["output", "first layer", "after hooked layer"])
@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_in_place_change_of_a_hooked_tensor_is_pytorchs_error(lib, where):
    nn = lib.nn
    x = lib.tensor(X, requires_grad=True) * 1
    if where == "output":
        lin = nn.Linear(3, 2).double()
        lin.register_full_backward_hook(lambda m, gi, go: None)
        run = lambda: lin(x).relu_()  # noqa: E731
    elif where == "first layer":
        seq = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(3, 2)).double()
        seq.register_full_backward_hook(lambda m, gi, go: None)
        run = lambda: seq(x)  # noqa: E731
    else:
        seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True)).double()
        seq[0].register_full_backward_hook(lambda m, gi, go: None)
        run = lambda: seq(x)  # noqa: E731
    with pytest.raises(RuntimeError, match="Output 0 of BackwardHookFunction is a view and is being modified "
                                           "inplace"):
        run()


def test_in_place_relu_inside_a_hooked_module():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Linear(3, 5), nn.ReLU(inplace=True), nn.Linear(5, 2), nn.LeakyReLU(0.1, inplace=True))

    def program(lib, model):
        log = []
        model.register_full_backward_hook(recorder(log, "seq"))
        x = lib.tensor(X, requires_grad=True)
        (model(x) ** 2).sum().backward()
        return log, x.grad, model[0].weight.grad

    both(build, program)


@pytest.fixture
def global_hook_kind(monkeypatch):
    """Which kind of global backward hook was registered is process state in both frameworks (it stays once
    set): each test that registers one starts from none and leaves it as it was."""
    for module in (torch.nn.modules.module, ember.nn.modules._calling):
        monkeypatch.setattr(module, "_global_is_full_backward_hook", None)


def test_global_hooks_run_before_the_modules_own(global_hook_kind):
    def program(lib, model):
        module = lib.nn.modules.module
        log = []
        handles = [module.register_module_full_backward_hook(recorder(log, "global")),
                   module.register_module_full_backward_pre_hook(lambda m, go: log.append(("gpre", type(m).__name__)))]
        model[0].register_full_backward_hook(recorder(log, "own"))
        try:
            x = lib.tensor(X, requires_grad=True)
            model(x).sum().backward()
            with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks "
                                                   "as a global Module hook"):
                module.register_module_backward_hook(lambda m, gi, go: None)
        finally:
            for h in handles:
                h.remove()
        model(x).sum().backward()  # removed: nothing more
        return log

    log = both(mlp, program)
    assert [e[0] for e in log][:3] == ["gpre", "gpre", "global"]


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_no_hooks_under_no_grad(lib):
    lin = lib.nn.Linear(3, 2).double()
    calls = []
    lin.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    x = lib.tensor(X, requires_grad=True)
    with lib.no_grad():
        y = lin(x)
    assert not y.requires_grad and calls == []


def test_second_order_gradients_through_hooks():
    def program(lib, model):
        log = []
        model[0].register_full_backward_hook(lambda m, gi, go: log.append(
            ([g.grad_fn is not None for g in gi], [g.grad_fn is not None for g in go], list(gi))))
        x = lib.tensor(X, requires_grad=True)
        (g,) = lib.autograd.grad((model(x) ** 2).sum(), x, create_graph=True)
        (g ** 2).sum().backward()
        return log, g, x.grad, model[0].weight.grad, model[2].weight.grad

    def smooth(lib):
        return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))

    log, *_ = both(smooth, program)
    assert log[0][:2] == [[True], [True]] and len(log) == 2  # the second backward passes the module's output too


def test_hooks_doubling_gradients_under_create_graph():
    def program(lib, model):
        model.register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))
        x = lib.tensor(X, requires_grad=True)
        (g,) = lib.autograd.grad(model(x).pow(3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    both(lambda lib: lib.nn.Linear(3, 2), program)


def test_forward_hook_output_is_what_the_backward_hooks_see():
    def program(lib, model):
        log = []
        model[0].register_forward_hook(lambda m, args, out: out * 10)
        model[0].register_forward_pre_hook(lambda m, args: (args[0] + 1,))
        model[0].register_full_backward_hook(recorder(log, "first"))
        x = lib.tensor(X, requires_grad=True)
        (model(x) ** 2).sum().backward()
        return log, x.grad, model[0].weight.grad

    both(mlp, program)


@pytest.mark.parametrize("reentrant", [True, False])
def test_composes_with_checkpoint(reentrant):
    def program(lib, model):
        log = []
        model[0].register_full_backward_hook(recorder(log, "first"))
        model[2].register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
        x = lib.tensor(X, requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=reentrant)
        (y ** 2).sum().backward()
        return log, x.grad, model[0].weight.grad, model[2].bias.grad

    log, *_ = both(mlp, program)
    assert len(log) == 1


def test_grad_cam_on_a_small_cnn():
    """The Grad-CAM idiom: a forward hook keeps the last convolution's activations, a full backward hook their
    gradients; the map is the ReLU of the gradient-weighted channel sum."""
    def program(lib, model):
        saved = {}
        target = model[2]
        target.register_forward_hook(lambda m, args, out: saved.__setitem__("act", out))
        target.register_full_backward_hook(lambda m, gi, go: saved.__setitem__("grad", go[0]))
        x = lib.tensor(IMG, requires_grad=True)
        scores = model(x)
        model.zero_grad()
        scores[:, 1].sum().backward()
        weights = saved["grad"].mean(dim=(2, 3), keepdim=True)
        cam = lib.relu((weights * saved["act"]).sum(dim=1))
        cam = cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-8)
        return cam, saved["grad"], x.grad

    both(cnn, program)


def test_deprecated_hook_on_an_activation_matches_pytorch():
    """Guided backpropagation, as written with the deprecated hook on every ReLU (in place ones included)."""
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Linear(3, 5), nn.ReLU(inplace=True), nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 2))

    def program(lib, model):
        log = []
        for m in model:
            if isinstance(m, lib.nn.ReLU):
                m.register_backward_hook(lambda m, gi, go: log.append(list(gi)) or (gi[0].clamp(min=0),))
        x = lib.tensor(X, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = model(x)
        y.sum().backward()
        return log, x.grad, model[0].weight.grad, sorted(str(w.message) for w in caught)

    both(build, program)


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_deprecated_hook_warns_where_pytorch_does(lib):
    lin = lib.nn.Linear(3, 2).double()
    lin.register_backward_hook(lambda m, gi, go: None)
    with pytest.warns(FutureWarning, match="the forward contains multiple autograd Nodes"):
        lin(lib.tensor(X, requires_grad=True))

    class Pair(lib.nn.Module):
        def forward(self, a):
            return a * 2, a + 1

    pair = Pair()
    pair.register_backward_hook(lambda m, gi, go: None)
    with pytest.warns(FutureWarning, match="outputs are generated by different autograd Nodes"):
        pair(lib.tensor(X, requires_grad=True))


def test_global_deprecated_hook(global_hook_kind):
    def program(lib, model):
        module = lib.nn.modules.module
        log = []
        x = lib.tensor(X, requires_grad=True)
        handle = module.register_module_backward_hook(lambda m, gi, go: log.append((type(m).__name__, list(go))))
        try:
            model[1](x * 1).sum().backward()
        finally:
            handle.remove()
        return log, x.grad

    both(mlp, program)


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_dict_output_warns_and_calls_no_hook(lib):
    class D(lib.nn.Module):
        def forward(self, a):
            return {"a": a * 2}

    calls = []
    d = D()
    d.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple of Tensors"):
        out = d(lib.tensor(X, requires_grad=True))
    out["a"].sum().backward()
    assert calls == []


def test_node_register_hook():
    def program(lib, model):
        log = []
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X + 1, requires_grad=True)
        y = a * b
        y.grad_fn.register_hook(lambda gi, go: log.append((list(gi), list(go))) or (gi[0] * 2, None))
        (y ** 2).sum().backward()
        return log, a.grad, b.grad

    both(lambda lib: lib.nn.Identity(), program)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "matmul"])
@pytest.mark.parametrize("needs", [(True, False), (False, True)])
def test_node_register_hook_with_one_input_needing_no_gradient(op, needs):
    """grad_inputs holds None for the input that needs no gradient (whatever the formula computed for it) and
    the gradient, summed to its shape, for the other, as PyTorch's."""
    def program(lib, model):
        log = []
        a = lib.tensor(X, requires_grad=needs[0])
        b = lib.tensor(X[:1] + 1, requires_grad=needs[1])  # (broadcast: the gradient is summed to b's shape)
        y = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
             "matmul": lambda: a @ b.mT}[op]()
        y.grad_fn.register_hook(lambda gi, go: log.append((list(gi), list(go))))
        (y ** 2).sum().backward()
        return log, a.grad, b.grad

    both(lambda lib: lib.nn.Identity(), program)


def test_a_module_with_backward_hooks_cannot_be_saved(tmp_path):
    lin = ember.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(TypeError, match="_backward_hooks"):
        ember.save(lin, str(tmp_path / "m.pt"))
