"""Training-loop checks: loud where PyTorch stays silent between backward() and step().

They register on public hooks (``install``); ember's core never calls in here. Each check is a
few attribute reads per parameter while nothing is wrong:

    p.register_hook (on each parameter)  -> accumulating(p, p.grad)
        adding into gradients step() already applied? (marks p tainted; reported at the step that
        would apply them again)                                             grad_not_zeroed
        (remembers p's version, marks p fresh)
    global optimizer step pre-hook       -> _check_step(optimizer) (not for one stepping inside another's step)
        tainted gradients about to be applied again?                        grad_not_zeroed
        no new gradient at all, after a forward through them?               step_without_backward
        p changed in place since its backward (not moved back after a backward
        taken at moved values, as sharpness-aware minimisation does)?       param_changed_before_step
        some params fresh, others without gradient?                         missing_grad
        (marks each grad as applied by this step)
    gradient-edit hook, before clipping  -> clipping grads a step already applied?  clip_after_step
        (they stay that step's gradients: a backward adding into them still taints)
    gradient-edit hook, after zero_grad  -> (no parameter fresh or tainted any more; zeroed grads marked)
    module parameter / module registration hooks -> names ("fc1.weight")

"Fresh" means backward accumulated into the parameter since the last step() or zero_grad().
A ``.grad`` is recognised as "the one step() applied" by its version counter: in-place edits
(zero_grad, clipping, a new backward) bump it, replacing it makes a new one. Adding into applied
gradients is a mistake only if a step then applies them: a GAN's generator loss backpropagated
through the discriminator adds into the discriminator's applied gradients, which its own
optimizer's zero_grad() clears before its next step.
"""

from __future__ import annotations

import math
import weakref

from ..utils import hooks
from . import config
from .naming import listing
from .registry import Record, _records, record

# Read by the call sites: False turns every check off (each kind also has its own switch).
on: bool = any(config.enabled.values())


def set_warnings(enabled: bool = True, *kinds: str) -> None:
    """Switch the training-loop warnings on or off: all of them, or only the named ``kinds``. Without kinds,
    "on" leaves the opt-in kinds (``missing_grad``: it fires on correct programs too) as they are; name them to
    turn them on.

    Kinds: ``step_without_backward``, ``clip_after_step``, ``grad_not_zeroed``,
    ``param_changed_before_step``, ``missing_grad``. Turning checks back on forgets what was
    recorded while they were off, so nothing stale is reported.
    """
    global on
    config.check_kinds(kinds)
    if enabled:
        install()
    was_on = on
    for kind in kinds or [k for k in config.KINDS if not (enabled and k in config.OPT_IN)]:
        config.enabled[kind] = bool(enabled)
    on = any(config.enabled.values())
    if on and not was_on:
        from .registry import all_records

        for rec in all_records():
            rec.reset()


# ----------------------------------------------------------------------------- backward
class _Watch:
    """The tensor hook diagnostics put on a parameter: it sees the ``.grad`` backward is about to add into."""

    __slots__ = ("ref", "rec")
    reads_only = True  # never keeps or replaces the gradient: backward may still build it in its store slot
    accumulation_only = True  # watches .grad: autograd.grad, which leaves .grad alone, does not run it

    def __init__(self, param, rec: Record) -> None:
        self.ref = weakref.ref(param)
        self.rec = rec  # (the record lives as long as the parameter)

    def __call__(self, grad) -> None:
        param = self.ref()
        if on and param is not None:
            accumulating(param, param._grad, self.rec)


def watch(param, rec: Record | None = None) -> Record:
    """Register the gradient hook on ``param`` (once); its record."""
    rec = rec or record(param)
    if not rec.watched and param._requires_grad and param.grad_fn is None:
        # filed in the leaf's hook list directly, never removed: register_hook's handle would take an id from
        # RemovableHandle's counter, which the program's own hooks number from 0 in PyTorch (a module's
        # _forward_pre_hooks keys, printed by the pruning tutorial)
        if param._hooks is None:
            param._hooks = []
        param._hooks.append(_Watch(param, rec))
        rec.watched = True
    return rec


def accumulating(param, grad, rec: Record | None = None) -> None:
    """Backward is about to add into ``param.grad`` (``grad``; None when there is none yet)."""
    rec = rec or record(param)
    if grad is None:
        rec.tainted = False
    elif rec.held_by_step and (rec.holds(grad) or (rec.scaled_after_step and grad._vc is rec.held_vc)):
        # zeroed behind the version counter's back (p.grad.data.zero_()) is harmless; clipped after the step (a
        # new version, the same values scaled) is still the applied gradient
        rec.tainted = rec.tainted or bool(grad._data.any())
    elif rec.tainted and not grad._data.any():
        rec.tainted = False  # zeroed in place since
    rec.perturbed = rec.version != -1 and rec.version != param._vc[0]  # (moved since this step's earlier backward)
    rec.version = param._vc[0]
    rec.fresh = True


def _warn_not_zeroed(optimizer, params: list) -> None:
    config.warn_once("grad_not_zeroed", params, lambda: (
        f"{type(optimizer).__name__}.step() is applying again gradients a previous step() already applied: "
        f"backward() added new gradients into the .grad of {listing(params, optimizer)}, which still held them. "
        "Was zero_grad() forgotten? Gradients add up across backward() calls until cleared; call zero_grad() "
        "once per step (before backward() or after step()). Accumulating over several backward() calls before "
        "one step() is fine and not reported."
    ))


# ----------------------------------------------------------------------------- step
_outer_step: list = [None]  # a weak reference to the optimizer whose step the checks last saw begin


def _step_pre_hook(optimizer, args: tuple, kwargs: dict) -> None:
    """Global optimizer step pre-hook: the checks, unless a closure computes the gradients inside the step, or
    this optimizer steps inside another one's step (ZeroRedundancyOptimizer's shard, a Lookahead's or SAM's base
    optimizer): the outer step was checked, and its gradients marked applied, a moment ago."""
    outer = _outer_step[0]() if _outer_step[0] is not None else None
    if outer is not None and outer is not optimizer and outer.__dict__.get("_stepping"):
        return
    _outer_step[0] = weakref.ref(optimizer)
    if hooks.stepping_on_programs_behalf():  # (a joined rank's ZeroRedundancyOptimizer step: by design)
        return
    if on and (len(args) < 2 or args[1] is None) and kwargs.get("closure") is None:  # args[0]: the optimizer
        _check_step(optimizer)


def _check_step(optimizer) -> None:
    """Check every parameter before the update, then mark each gradient as applied."""
    trainable = got = zeroed = fresh_any = 0
    spent, changed, lacking, tainted = [], [], [], []  # stay empty (and cheap) while nothing is off
    get = _records.get
    for group in optimizer.param_groups:
        for p in group["params"]:
            rec = get(id(p)) or watch(p)
            if not rec.watched:
                watch(p, rec)
            g = p._grad
            fresh, version, perturbed = rec.fresh, rec.version, rec.perturbed
            rec.fresh, rec.version, rec.perturbed = False, -1, False
            fresh_any += fresh
            if not p._requires_grad:
                continue
            trainable += 1
            if g is None:
                lacking.append(p)
                continue
            if rec.tainted:
                rec.tainted = False
                tainted.append(p)
            vc = g._vc
            if fresh or vc is not rec.held_vc or vc[0] != rec.held_version:  # from backward, or set by other means
                got += 1
                if fresh and p._vc[0] != version and not perturbed:  # (perturbed: moved back, as SAM does)
                    changed.append(p)
            else:  # unchanged since the last step applied it, or since zero_grad zeroed it
                lacking.append(p)
                if rec.held_by_step:
                    spent.append(p)
                else:
                    zeroed += 1
            rec.held_vc, rec.held_version, rec.held_by_step = g._vc, g._vc[0], True
            rec.scaled_after_step = False
    name = type(optimizer).__name__
    if tainted and config.enabled["grad_not_zeroed"]:
        _warn_not_zeroed(optimizer, tainted)
    if trainable and not got and not zeroed and not fresh_any:  # fresh yet None: cleared on purpose (DDP skip)
        _warn_no_gradient(optimizer, name, spent)
    elif lacking and got and config.enabled["missing_grad"]:
        config.warn_once("missing_grad", lacking, lambda: (
            f"{name}.step(): {listing(lacking, optimizer)} received no gradient since the last step, while "
            f"{got} other parameter(s) did: the graph to them is cut (.detach(), no_grad(), a non-differentiable "
            "op) or their layer was not used in forward(). This step leaves them unchanged (or moves them by "
            "momentum/weight decay alone). If that is intended, set requires_grad=False on them."
        ))
    if changed and config.enabled["param_changed_before_step"]:
        config.warn_once("param_changed_before_step", changed, lambda: (
            f"{name}.step(): {listing(changed, optimizer)} changed in place after backward() computed their "
            "gradients and before this step: the update applies gradients of the old values to the new ones. "
            "Change parameters before the forward pass or after step(), or recompute the loss after the change."
        ))


def _warn_no_gradient(optimizer, name: str, spent) -> None:
    if not config.enabled["step_without_backward"]:
        return
    params = [p for group in optimizer.param_groups for p in group["params"]]
    if not any(p._grad_accumulator is not None for p in params):
        # No graph was ever recorded through these parameters (a leaf gets its accumulator on its first op
        # that records one), so no backward can have been forgotten: stepping an optimizer and its scheduler
        # with no forward pass is how programs list or plot a learning-rate schedule.
        return

    def message() -> str:
        if spent:
            what = (f"only gradients the previous step() already applied ({listing(spent, optimizer)}), "
                    "so it applies them a second time")
        else:
            what = f"no gradient: .grad is None for all {len(params)} parameters, so it changes nothing"
        return (f"{name}.step() found {what}. Was loss.backward() called since the last step? The order is "
                "zero_grad(), forward, loss.backward(), [clip], step(); zero_grad() between backward() and step() "
                "discards the gradients.")

    config.warn_once("step_without_backward", params, message)


# ----------------------------------------------------------------------------- clip and zero_grad
def _grad_edit_hook(what: str, params, limit) -> None:
    """Gradient-edit hook: ``zero_grad`` just cleared ``params``' gradients, or a clip is about to edit them."""
    if not on:
        return
    if what == "zero_grad":
        _cleared(params)
    elif not _inside_a_step():
        _check_clip(what, params, limit)


def _inside_a_step() -> bool:
    """Whether an optimizer's step() is running: a clip there is the step's own, before its update (BERT's
    BertAdam clips each gradient inside step(), just before applying it), not a clip of applied gradients."""
    outer = _outer_step[0]() if _outer_step[0] is not None else None
    return outer is not None and bool(outer.__dict__.get("_stepping"))


def _check_clip(fname: str, params: list, limit) -> None:
    """A clip is about to scale ``params``' gradients in place: those a step already applied stay that step's
    (``scaled_after_step``: a backward adding into them then is still the forgotten ``zero_grad()``), and
    clipping them is reported, unless the limit is inf (clipping at inf only measures the norm)."""
    spent = []
    for p in params:
        g = p._grad
        if g is not None:
            rec = record(p)
            if rec.held_by_step and (rec.holds(g) or (rec.scaled_after_step and g._vc is rec.held_vc)):
                rec.scaled_after_step = True
                spent.append(p)
    if isinstance(limit, (int, float)) and math.isinf(limit):
        return
    if spent and config.enabled["clip_after_step"]:
        config.warn_once("clip_after_step", spent, lambda: (
            f"{fname}() clipped the gradients of {listing(spent)} after optimizer.step() had already applied "
            "them (no backward() since): clipping now has no effect on that update. Clip between "
            "loss.backward() and optimizer.step()."
        ))


def _cleared(params) -> None:
    get = _records.get
    for p in params:
        rec = get(id(p)) or Record(p)
        rec.fresh = rec.tainted = rec.scaled_after_step = False
        g = p._grad
        if g is not None:
            rec.held_vc, rec.held_version, rec.held_by_step = g._vc, g._vc[0], False


# ----------------------------------------------------------------------------- wiring
def _on_parameter(module, name: str, param) -> None:
    watch(param)  # (naming.install records its name, so messages can say "fc1.weight")


_installed = False


def install() -> None:
    """Register the checks on ember's public hooks (once per process)."""
    global _installed
    if _installed:
        return
    hooks.optimizer_step_pre_hooks.append(_step_pre_hook)
    hooks.grad_edit_hooks.append(_grad_edit_hook)
    hooks.module_parameter_registration_hooks.append(_on_parameter)
    _installed = True
