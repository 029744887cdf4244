"""Training-loop warnings: each fires for its mistake (naming the parameters and the fix), stays
silent for the correct loop (gradient accumulation included), is shown once, and switches off.

PyTorch is silent in all of these cases; the tests check that the mistake really is one under
torch (the update differs from the correct loop's) where that is not obvious.
"""

import gc
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
from conftest import ROOT, SEED_EXAMPLES

import ember
import ember.nn as nn
from ember.diagnostics import TrainingLoopWarning, set_warnings


@pytest.fixture(autouse=True)
def diagnostics_on():
    set_warnings(True)
    yield
    set_warnings(False, "missing_grad")
    set_warnings(True)


class caught:
    """Collect the TrainingLoopWarnings raised inside the block (every one, no filtering)."""

    def __enter__(self):
        self._cm = warnings.catch_warnings(record=True)
        self.all = self._cm.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._cm.__exit__(*exc)

    @property
    def messages(self):
        return [str(w.message) for w in self.all if issubclass(w.category, TrainingLoopWarning)]


def mlp(seed=0):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def data():
    rng = np.random.default_rng(0)
    return ember.tensor(rng.standard_normal((8, 3)).astype(np.float32)), ember.tensor(
        rng.standard_normal((8, 2)).astype(np.float32))


def loss_of(model, x, y):
    return nn.functional.mse_loss(model(x), y)


def stepped():
    """A model and its SGD after one correct backward and step."""
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    loss_of(model, x, y).backward()
    opt.step()
    return model, opt


# ----------------------------------------------------------------------------- silent for correct loops
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("set_to_none", [True, False])
def test_correct_loop_is_silent(opt_name, set_to_none):
    model, (x, y) = mlp(), data()
    opt = getattr(ember.optim, opt_name)(model.parameters(), lr=0.01)
    with caught() as w:
        for _ in range(4):
            opt.zero_grad(set_to_none=set_to_none)
            loss_of(model, x, y).backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            nn.utils.clip_grad_value_(model.parameters(), clip_value=1.0)
            opt.step()
        model.zero_grad(set_to_none=set_to_none)  # Module.zero_grad is tracked too
        loss_of(model, x, y).backward()
        opt.step()
    assert w.messages == []


def test_gradient_accumulation_is_silent():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    with caught() as w:
        opt.zero_grad()
        for i in range(8):
            (loss_of(model, x[i % 4 * 2:i % 4 * 2 + 2], y[i % 4 * 2:i % 4 * 2 + 2]) / 4).backward()
            if (i + 1) % 4 == 0:
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
                opt.step()
                opt.zero_grad()
    assert w.messages == []


def test_seed_train_loop_runs_without_training_loop_warnings():
    """The seed's full training program (accumulation, clipping, StepLR) triggers no warning, even as errors."""
    path = os.path.join(SEED_EXAMPLES, "train_loop_full.py")
    if not os.path.exists(path):
        pytest.skip(f"{path} is not available")
    out = subprocess.run([sys.executable, "-W", "error::ember.diagnostics.TrainingLoopWarning", "-m", "ember.compat",
                          path], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                         timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "TrainingLoopWarning" not in out.stderr and "ember.diagnostics:" not in out.stderr
    assert "Epoch [5/5]" in out.stdout


# ----------------------------------------------------------------------------- 5. step without backward
class Lookahead(ember.optim.Optimizer):
    """A wrapper whose step runs another optimizer's step (as ZeroRedundancyOptimizer, timm's Lookahead, SAM)."""

    def __init__(self, params, inner_class, **options):
        super().__init__(params, {})
        self.inner = inner_class(self.param_groups[0]["params"], **options)

    def step(self, closure=None):
        return self.inner.step()


def test_an_optimizer_stepping_inside_another_ones_step_is_checked_once():
    model = nn.Linear(3, 2)
    optimizer = Lookahead(model.parameters(), ember.optim.AdamW, lr=0.01)
    with caught() as w:
        for _ in range(3):
            optimizer.zero_grad()
            model(ember.randn(4, 3)).sum().backward()
            optimizer.step()
    assert w.messages == []
    with caught() as w:
        optimizer.step()  # a real mistake is still reported, once, by the outer optimizer
    assert len(w.messages) == 1 and "Lookahead.step() found only gradients" in w.messages[0], w.messages


def test_step_without_backward_warns_once_naming_the_optimizer():
    model, (x, y) = mlp(), data()
    opt = ember.optim.Adam(model.parameters())
    with caught() as w:
        opt.zero_grad()
        loss_of(model, x, y)  # forward only: backward forgotten
        opt.step()
        opt.step()
    assert len(w.messages) == 1
    assert "Adam.step()" in w.messages[0] and "loss.backward()" in w.messages[0]
    assert ".grad is None for all 4 parameters" in w.messages[0]


def test_stepping_to_trace_a_learning_rate_schedule_is_silent():
    """Stepping an optimizer and its scheduler with no forward pass, to list or plot the schedule, is a correct
    program (PyTorch says nothing): no graph ever reached the parameters, so no backward was forgotten."""
    for params in (mlp().parameters(), [ember.zeros(1, requires_grad=True)]):
        opt = ember.optim.SGD(params, lr=0.1)
        sched = ember.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
        lrs = []
        with caught() as w:
            for _ in range(10):
                opt.step()
                sched.step()
                lrs.append(sched.get_last_lr()[0])
        assert w.messages == []
        topt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        tsched = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=1.0, total_steps=10)
        expected = []
        for _ in range(10):
            topt.step()
            tsched.step()
            expected.append(tsched.get_last_lr()[0])
        np.testing.assert_allclose(lrs[:-1], expected[:-1], rtol=1e-12)


def test_forward_without_backward_warns_even_when_a_scheduler_steps_too():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=1)
    with caught() as w:
        loss_of(model, x, y)  # forward only: backward forgotten
        opt.step()
        sched.step()
    assert len(w.messages) == 1 and "loss.backward()" in w.messages[0]


def test_step_reapplying_gradients_of_the_previous_step_warns():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    loss_of(model, x, y).backward()
    with caught() as w:
        opt.step()
        before = [p.detach().clone() for p in model.parameters()]
        opt.step()  # no backward since: the same gradients are applied again
    assert len(w.messages) == 1 and "already applied" in w.messages[0] and "0.weight" in w.messages[0]
    assert not all(ember.equal(a, b) for a, b in zip(before, model.parameters()))  # it did change the model


def test_zero_grad_between_backward_and_step_warns():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    loss_of(model, x, y).backward()
    with caught() as w:
        opt.zero_grad()
        opt.step()
    assert len(w.messages) == 1 and "zero_grad() between backward() and step()" in w.messages[0]


def test_step_after_clearing_fresh_gradients_on_purpose_is_silent():
    """Gradients that backward produced and someone set to None (DDP skipping a non-finite step)."""
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        loss_of(model, x, y).backward()
        for p in model.parameters():
            p.grad = None
        opt.step()
    assert w.messages == []


def test_a_step_after_only_autograd_grad_finds_no_gradient():
    """autograd.grad returns the gradients and leaves .grad alone, as PyTorch's: the parameters' watch (a tensor hook
    that runs before backward accumulates) does not run for it, so the step still finds no gradient."""
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        opt.zero_grad()
        grads = ember.autograd.grad(loss_of(model, x, y), list(model.parameters()))
        opt.step()
    assert all(p.grad is None for p in model.parameters()) and len(grads) == 4
    assert len(w.messages) == 1 and "found no gradient: .grad is None for all 4 parameters" in w.messages[0]


def test_a_gradient_penalty_by_autograd_grad_then_backward_is_silent():
    """A correct loop that differentiates twice: the input gradient's norm by autograd.grad (create_graph), then
    backward of the loss plus that penalty. Only backward's accumulation is watched."""
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(3):
            opt.zero_grad()
            xi = x.clone().requires_grad_()
            loss = loss_of(model, xi, y)
            (gx,) = ember.autograd.grad(loss, [xi], create_graph=True)
            (loss + (gx * gx).sum()).backward()
            opt.step()
    assert w.messages == []


def test_step_on_zeros_left_by_zero_grad_is_silent():
    """zero_grad(set_to_none=False) leaves zero gradients: they exist, and PyTorch steps with them."""
    model, opt = stepped()
    with caught() as w:
        opt.zero_grad(set_to_none=False)
        opt.step()
    assert w.messages == []


def test_step_with_a_closure_is_not_checked_before_the_closure_runs():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)

    def closure():
        opt.zero_grad()
        loss = loss_of(model, x, y)
        loss.backward()
        return loss

    with caught() as w:
        for _ in range(2):
            opt.step(closure)
    assert w.messages == []


# ----------------------------------------------------------------------------- 6. clip after step
@pytest.mark.parametrize("clip", ["norm", "value"])
def test_clip_after_step_warns(clip):
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(2):
            opt.zero_grad()
            (loss_of(model, x, y) * 100).backward()
            opt.step()
            if clip == "norm":
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.1)
            else:
                nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
    assert len(w.messages) == 1
    name = "clip_grad_norm_" if clip == "norm" else "clip_grad_value_"
    assert f"{name}() clipped the gradients of 0.weight, 0.bias, 2.weight, 2.bias after optimizer.step()" \
        in w.messages[0]
    assert "Clip between loss.backward() and optimizer.step()" in w.messages[0]


def _messages_of_two_steps_clipping_after_step(clip: str, zero_grad: bool) -> list:
    """backward, step, then a clip (of max_norm 0.1, at inf, or of values), twice; zero_grad() last if asked."""
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(2):
            loss_of(model, x, y).backward()
            opt.step()
            if clip == "value":
                nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
            else:
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=float("inf") if clip == "norm_inf" else 0.1)
            if zero_grad:
                opt.zero_grad()
    return w.messages


@pytest.mark.parametrize("clip", ["norm", "value", "norm_inf"])
def test_zero_grad_forgotten_in_a_loop_that_also_clips_after_step_still_warns(clip):
    """backward, step, clip, with no zero_grad(): clipping scales the applied gradients in place (a new version)
    without clearing them, so the next backward still adds into them and the next step applies them again."""
    messages = _messages_of_two_steps_clipping_after_step(clip, zero_grad=False)
    assert [m.split(":")[0] for m in messages if "applying again" in m] == [
        "SGD.step() is applying again gradients a previous step() already applied"]
    assert len(messages) == (1 if clip == "norm_inf" else 2)  # (and the clip after step, at a finite limit)


def test_clip_after_step_then_zero_grad_is_only_the_clip():
    messages = _messages_of_two_steps_clipping_after_step("norm", zero_grad=True)
    assert len(messages) == 1 and "clipped the gradients" in messages[0]


def test_clip_inside_the_optimizers_own_step_is_silent():
    """An optimizer that clips each gradient inside step(), before applying it (BERT's BertAdam calls
    clip_grad_norm_ per parameter there), clips before the update: nothing to report."""
    class ClippingSGD(ember.optim.SGD):
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        nn.utils.clip_grad_norm_(p, 0.1)
            return super().step(closure)

    model, (x, y) = mlp(), data()
    opt = ClippingSGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(3):
            opt.zero_grad()
            (loss_of(model, x, y) * 100).backward()
            opt.step()
    assert w.messages == []


def test_clip_after_step_has_no_effect_in_torch_either():
    """What the warning says: the update with clipping after step equals the update without clipping."""
    def run(m, clip_after):
        m.manual_seed(0)
        lin = m.nn.Linear(3, 2)
        opt = m.optim.SGD(lin.parameters(), lr=0.1)
        x = m.ones(4, 3)
        (lin(x).sum() * 100).backward()
        opt.step()
        if clip_after:
            m.nn.utils.clip_grad_norm_(lin.parameters(), max_norm=0.1)
        return lin.weight.detach().numpy().copy()

    with caught():
        for m in (ember, torch):
            np.testing.assert_array_equal(run(m, True), run(m, False))


def test_measuring_the_norm_after_step_with_inf_is_silent():
    model, _ = stepped()
    with caught() as w:
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=float("inf"))
    assert w.messages == [] and float(total) > 0


def test_clip_accepts_a_generator_once_read():
    model, (x, y) = mlp(), data()
    loss_of(model, x, y).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    nn.utils.clip_grad_value_((p for p in model.parameters()), 1e-3)
    for g, p in zip(grads, model.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), np.clip(g.numpy(), -1e-3, 1e-3))


# ----------------------------------------------------------------------------- 7. zero_grad forgotten
def test_backward_into_applied_gradients_warns_once_per_backward():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(3):
            loss_of(model, x, y).backward()  # zero_grad() forgotten
            opt.step()
    assert len(w.messages) == 1
    msg = w.messages[0]
    assert "zero_grad() forgotten" in msg
    assert all(n in msg for n in ("0.weight", "0.bias", "2.weight", "2.bias"))


def test_backward_after_manual_zeroing_through_data_is_silent():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(3):
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.data.zero_()  # old-style zeroing: the version counter does not see it
            loss_of(model, x, y).backward()
            opt.step()
    assert w.messages == []


def test_forgetting_zero_grad_changes_the_update_in_torch():
    def second_grad(m, zero):
        m.manual_seed(0)
        lin = m.nn.Linear(3, 1)
        opt = m.optim.SGD(lin.parameters(), lr=0.1)
        for _ in range(2):
            if zero:
                opt.zero_grad()
            lin(m.ones(2, 3)).sum().backward()
            opt.step()
        return lin.weight.grad.numpy().copy()

    with caught():
        for m in (ember, torch):
            assert not np.allclose(second_grad(m, True), second_grad(m, False))
        np.testing.assert_allclose(second_grad(ember, False), second_grad(torch, False), rtol=1e-6)


# ----------------------------------------------------------------------------- 8. parameter changed
def test_parameter_changed_between_backward_and_step_warns():
    """The seed's pitfall: ``model.weight *= 0.5`` under no_grad between backward and step."""
    ember.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x, y = ember.randn(10, 3), ember.randn(10, 1)
    with caught() as w:
        nn.functional.mse_loss(model(x), y).backward()
        with ember.no_grad():
            model.weight *= 0.5
        opt.step()
    assert len(w.messages) == 1
    assert w.messages[0].startswith("SGD.step(): weight changed in place after backward()")
    assert "bias" not in w.messages[0].split("changed")[0]


def test_parameter_changed_before_forward_or_after_step_is_silent():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(3):
            opt.zero_grad()
            with ember.no_grad():
                model[0].weight.clamp_(-0.5, 0.5)  # projection before forward
            loss_of(model, x, y).backward()
            opt.step()
            with ember.no_grad():
                model[2].weight.mul_(0.99)  # and after step
    assert w.messages == []


def _sam_step(model, opt, x, y, rho=0.05):
    """Sharpness-aware minimisation written out by hand: the gradient at w, a backward at w + e, w restored, step."""
    loss_of(model, x, y).backward()
    params = list(model.parameters())
    norm = ember.stack([p.grad.norm() for p in params]).norm()
    with ember.no_grad():
        moves = [p.grad * (rho / norm) for p in params]
        for p, e in zip(params, moves):
            p.add_(e)
    opt.zero_grad()
    loss_of(model, x, y).backward()  # the gradient at the moved weights ...
    with ember.no_grad():
        for p, e in zip(params, moves):
            p.sub_(e)  # ... applied to the weights moved back: what SAM means to do
    opt.step()
    opt.zero_grad()


def test_parameters_moved_back_after_a_backward_at_moved_values_are_silent():
    """SAM's loop (and adversarial weight perturbation's) changes the parameters after the backward whose gradient
    the step applies, on purpose: that backward was taken at moved values, and the change moves them back. A plain
    change after a backward, before or after such steps, still warns."""
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(3):
            _sam_step(model, opt, x, y)
    assert w.messages == []
    with caught() as w:
        loss_of(model, x, y).backward()
        with ember.no_grad():
            model[0].weight.mul_(0.5)
        opt.step()
    assert len(w.messages) == 1 and w.messages[0].startswith("SGD.step(): 0.weight changed in place after backward()")
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        loss_of(model, x, y).backward()  # two backwards at the same values (accumulation), then a change
        loss_of(model, x, y).backward()
        with ember.no_grad():
            model[2].bias.add_(1.0)
        opt.step()
        _sam_step(model, opt, x, y)
    assert len(w.messages) == 1 and w.messages[0].startswith("SGD.step(): 2.bias changed in place after backward()")


# ----------------------------------------------------------------------------- 9. no gradient for some
def test_parameters_cut_off_by_detach_are_named():
    set_warnings(True, "missing_grad")  # opt-in
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    with caught() as w:
        for _ in range(2):
            opt.zero_grad()
            hidden = model[1](model[0](x)).detach()  # cuts the graph: layer 0 gets no gradient
            nn.functional.mse_loss(model[2](hidden), y).backward()
            opt.step()
    assert len(w.messages) == 1
    assert w.messages[0].startswith("SGD.step(): 0.weight, 0.bias received no gradient")
    assert "2 other parameter(s) did" in w.messages[0]


def test_unused_branch_is_named_with_zeroed_gradients_too():
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(3, 4)
            self.head_a = nn.Linear(4, 2)
            self.head_b = nn.Linear(4, 2)

        def forward(self, x):
            return self.head_a(self.body(x))  # head_b never used

    model, (x, y) = TwoHeads(), data()
    opt = ember.optim.Adam(model.parameters())
    with caught() as w:
        for _ in range(2):
            opt.zero_grad(set_to_none=False)
            loss_of(model, x, y).backward()
            opt.step()
    assert w.messages == []  # opt-in: an unused layer is as often intended (a WaveNet's last residual projection)
    set_warnings(True, "missing_grad")
    with caught() as w:
        for _ in range(2):
            opt.zero_grad(set_to_none=False)
            loss_of(model, x, y).backward()
            opt.step()
    assert len(w.messages) == 1 and "head_b.weight, head_b.bias received no gradient" in w.messages[0]
    set_warnings(True)  # without kinds: the opt-in kind stays as named
    assert ember.diagnostics.warnings_enabled("missing_grad")


def test_frozen_parameters_are_never_reported():
    model, (x, y) = mlp(), data()
    for p in model[0].parameters():
        p.requires_grad_(False)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)  # frozen ones included, as people often do
    with caught() as w:
        for _ in range(2):
            opt.zero_grad()
            loss_of(model, x, y).backward()
            opt.step()
    assert w.messages == []


# ----------------------------------------------------------------------------- names, once, switches
def test_names_follow_the_module_tree_and_fall_back_to_the_optimizer():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(3, 3))
            self.decoder = nn.Linear(3, 2)

        def forward(self, x):
            return self.decoder(self.encoder(x))

    from ember.diagnostics.naming import names

    net = Net()
    assert names(list(net.parameters())) == [n for n, _ in net.named_parameters()]
    loose = ember.zeros(2, requires_grad=True)
    opt = ember.optim.SGD([{"params": [loose]}], lr=0.1)
    assert names([loose], opt) == ["parameter #0 of param_groups[0] with shape [2]"]
    named = ember.optim.SGD([("mine", loose)], lr=0.1)
    assert names([loose], named) == ["mine"]
    assert names([loose]) == ["a parameter with shape [2]"]


def test_each_kind_once_per_parameter_set_then_again_for_new_parameters():
    x, y = data()
    with caught() as w:
        for seed in (0, 0, 1):
            model = mlp(seed) if seed else mlp()
            opt = ember.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(3):
                loss_of(model, x, y)
                opt.step()  # without backward, every time
    assert len(w.messages) == 3  # one per model: parameters differ


def test_warning_points_at_the_users_line():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    loss_of(model, x, y)
    with caught() as w:
        opt.step()
    assert w.all[0].filename == __file__


def test_switching_off_all_or_one_kind():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    set_warnings(False)
    with caught() as w:
        opt.step()
        loss_of(model, x, y).backward()
        opt.step()
        nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    assert w.messages == [] and not ember.diagnostics.warnings_enabled()
    set_warnings(True)
    set_warnings(False, "step_without_backward")
    assert not ember.diagnostics.warnings_enabled("step_without_backward")
    assert ember.diagnostics.warnings_enabled("clip_after_step")
    with caught() as w:
        opt.step()  # gradients the last step applied: off
        nn.utils.clip_grad_norm_(model.parameters(), 0.1)  # still on
    assert len(w.messages) == 1 and "clip_grad_norm_" in w.messages[0]
    with pytest.raises(ValueError, match="unknown diagnostics kind"):
        set_warnings(False, "no_such_kind")


def test_turning_back_on_reports_nothing_stale():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    loss_of(model, x, y).backward()
    set_warnings(False)
    with ember.no_grad():
        model[0].weight.mul_(2.0)  # unseen while off
    opt.zero_grad()
    set_warnings(True)
    with caught() as w:
        loss_of(model, x, y).backward()
        opt.step()
    assert w.messages == []


def test_warnings_filter_like_any_other():
    model, (x, y) = mlp(), data()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    loss_of(model, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrainingLoopWarning)
        with pytest.raises(TrainingLoopWarning, match=r"Was loss.backward\(\) called"):
            opt.step()


_STEP_WITHOUT_BACKWARD = ("import sys, warnings, ember, ember.nn as nn; warnings.simplefilter('error'); "
                          "model = nn.Linear(2, 1); model(ember.ones(1, 2)).sum().backward(); "
                          "opt = ember.optim.SGD(model.parameters(), lr=0.1); opt.step(); opt.zero_grad(); opt.step(); "
                          "print('ember.diagnostics' in sys.modules)")


@pytest.mark.parametrize("env, runner, warned", [
    ({}, [], False),  # plain ``import ember``: off, and the package is not even imported
    ({"EMBER_DIAGNOSTICS": "1"}, [], True),  # the environment variable enables them at import
    ({}, ["-m", "ember.compat"], True),  # PyTorch programs run by ember.compat get them by default
    ({"EMBER_DIAGNOSTICS": "0"}, ["-m", "ember.compat"], False),  # ... unless switched off
])
def test_who_turns_the_warnings_on(env, runner, warned):
    base = {k: v for k, v in os.environ.items() if k != "EMBER_DIAGNOSTICS"}
    out = subprocess.run([sys.executable, *runner, "-c", _STEP_WITHOUT_BACKWARD], capture_output=True, text=True,
                         cwd=ROOT, env=dict(base, PYTHONPATH=ROOT, **env), timeout=60)
    if warned:
        assert out.returncode == 1 and "TrainingLoopWarning" in out.stderr, out.stderr
    else:
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "False"


def test_enable_in_the_program():
    code = _STEP_WITHOUT_BACKWARD.replace("warnings.simplefilter('error'); ",
                                          "warnings.simplefilter('error'); import ember.diagnostics; "
                                          "ember.diagnostics.enable(); ")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
    assert out.returncode == 1 and "Was loss.backward() called" in out.stderr, out.stderr


# ----------------------------------------------------------------------------- several optimizers
def gan(seed=0):
    ember.manual_seed(seed)
    G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
    D = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    return G, D, ember.optim.Adam(G.parameters(), lr=1e-3), ember.optim.Adam(D.parameters(), lr=1e-3)


def gan_steps(G, D, optG, optD, steps=3, zero_d=True, set_to_none=True, module_zero=True):
    """The DCGAN order: D on real and detached fake, D step; G through D, G step."""
    rng = np.random.default_rng(1)
    bce = nn.BCEWithLogitsLoss()
    for _ in range(steps):
        real = ember.tensor(rng.standard_normal((8, 3)).astype(np.float32))
        noise = ember.tensor(rng.standard_normal((8, 2)).astype(np.float32))
        if zero_d:
            (D.zero_grad if module_zero else optD.zero_grad)(set_to_none=set_to_none)
        bce(D(real), ember.ones(8, 1)).backward()
        fake = G(noise)
        bce(D(fake.detach()), ember.zeros(8, 1)).backward()
        optD.step()
        (G.zero_grad if module_zero else optG.zero_grad)(set_to_none=set_to_none)
        bce(D(fake), ember.ones(8, 1)).backward()  # also adds into D's gradients, which D clears itself
        optG.step()


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("module_zero", [True, False])
def test_gan_with_two_optimizers_is_silent(set_to_none, module_zero):
    with caught() as w:
        gan_steps(*gan(), set_to_none=set_to_none, module_zero=module_zero)
    assert w.messages == []


def test_gan_forgetting_the_discriminators_zero_grad_still_warns_naming_it():
    G, D, optG, optD = gan()
    with caught() as w:
        gan_steps(G, D, optG, optD, zero_d=False)
    assert len(w.messages) == 1 and "zero_grad() forgotten" in w.messages[0]
    assert w.messages[0].startswith("Adam.step()") and "0.weight" in w.messages[0]
    assert w.all[0].filename == __file__  # the user's optD.step() line


def test_actor_critic_and_ddpg_style_updates_are_silent():
    """The actor's loss runs through the critic (as in DDPG); each network has its own optimizer."""
    ember.manual_seed(0)
    actor, critic = nn.Linear(3, 2), nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 1))
    opt_a, opt_c = ember.optim.SGD(actor.parameters(), lr=0.01), ember.optim.Adam(critic.parameters(), lr=0.01)
    rng = np.random.default_rng(2)
    with caught() as w:
        for _ in range(3):
            s = ember.tensor(rng.standard_normal((6, 3)).astype(np.float32))
            a = ember.tensor(rng.standard_normal((6, 2)).astype(np.float32))
            target = ember.tensor(rng.standard_normal((6, 1)).astype(np.float32))
            opt_c.zero_grad()
            nn.functional.mse_loss(critic(ember.cat([s, a], 1)), target).backward()
            opt_c.step()
            opt_a.zero_grad()
            (-critic(ember.cat([s, actor(s)], 1)).mean()).backward()
            opt_a.step()
    assert w.messages == []


def test_per_module_optimizers_and_accumulation_are_silent():
    model, (x, y) = mlp(), data()
    opts = [ember.optim.SGD(model[0].parameters(), lr=0.1), ember.optim.Adam(model[2].parameters(), lr=0.01)]
    with caught() as w:
        for _ in range(4):
            for opt in opts:
                opt.zero_grad()
            for half in (slice(0, 4), slice(4, 8)):  # two backward calls, one step
                (loss_of(model, x[half], y[half]) / 2).backward()
            for opt in opts:
                opt.step()
    assert w.messages == []


def test_per_module_optimizers_forgetting_one_zero_grad_warns_for_that_one():
    model, (x, y) = mlp(), data()
    first, second = ember.optim.SGD(model[0].parameters(), lr=0.1), ember.optim.SGD(model[2].parameters(), lr=0.1)
    with caught() as w:
        for _ in range(2):
            first.zero_grad()  # second.zero_grad() forgotten
            loss_of(model, x, y).backward()
            first.step()
            second.step()
    assert len(w.messages) == 1 and "2.weight" in w.messages[0] and "0.weight" not in w.messages[0]


@pytest.mark.parametrize("table", ["_records", "_parents"])
def test_a_parameter_freed_after_interpreter_exit_cleared_the_registry_is_no_error(monkeypatch, table):
    # At exit Python sets a module's globals to None before freeing what other modules still hold
    # (a script's model, kept alive through its module by a library such as dill); PyTorch prints nothing then.
    from ember.diagnostics import registry
    model = nn.Sequential(nn.Linear(2, 2))
    for p in model.parameters():
        registry.record(p)
    registry.set_parent(model[0], model, "0")
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    monkeypatch.setattr(registry, table, None)
    del model, p
    gc.collect()
    assert [str(u.exc_value) for u in unraisable] == []
