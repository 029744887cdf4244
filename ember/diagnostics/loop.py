"""Training-loop checks: loud where PyTorch stays silent between backward() and step().

The autograd engine, the optimizer and gradient clipping call in here; each check is a few
attribute reads per parameter while nothing is wrong:

    AccumulateGrad(p) -> accumulating(p, grad)  adding into a grad step() already applied?  grad_not_zeroed
                                                 (remembers p's version, marks p fresh)
    optimizer.step()  -> run_step(...)          no new gradient at all?                     step_without_backward
                                                 p changed in place since its backward?      param_changed_before_step
                                                 some params fresh, others without gradient? missing_grad
                                                 (marks each grad as applied by this step)
    clip_grad_*_()    -> @clips                 clipping grads a step already applied?      clip_after_step
    zero_grad()       -> @clears_grads          (no parameter fresh any more; zeroed grads marked)

"Fresh" means backward accumulated into the parameter since the last step() or zero_grad().
A ``.grad`` is recognised as "the one step() applied" by its version counter: in-place edits
(zero_grad, clipping, a new backward) bump it, replacing it makes a new one.
"""

from __future__ import annotations

import functools
import math

from .._tensor import Tensor
from . import config, trace
from .naming import listing
from .registry import Record, _records, record

# Read by the call sites: False turns every check off (each kind also has its own switch).
on: bool = any(config.enabled.values())


def set_warnings(enabled: bool = True, *kinds: str) -> None:
    """Switch the training-loop warnings on or off: all of them, or only the named ``kinds``.

    Kinds: ``step_without_backward``, ``clip_after_step``, ``grad_not_zeroed``,
    ``param_changed_before_step``, ``missing_grad``. Turning checks back on forgets what was
    recorded while they were off, so nothing stale is reported.
    """
    global on
    config.check_kinds(kinds)
    was_on = on
    for kind in kinds or config.KINDS:
        config.enabled[kind] = bool(enabled)
    on = any(config.enabled.values())
    if on and not was_on:
        from .registry import all_records

        for rec in all_records():
            rec.reset()


# ----------------------------------------------------------------------------- backward
_not_zeroed: list = []  # parameters found adding into applied gradients during this backward


def accumulating(param, grad) -> None:
    """AccumulateGrad is about to add into ``param.grad`` (``grad``; None when there is none yet)."""
    rec = record(param)
    if grad is not None and rec.held_by_step and rec.holds(grad) and config.enabled["grad_not_zeroed"]:
        _found_not_zeroed(param, grad)
    rec.version = param._vc[0]
    rec.fresh = True


def _found_not_zeroed(param, grad) -> None:
    if not grad._data.any():  # zeroed behind the version counter's back (p.grad.data.zero_()): harmless
        return
    from ..autograd.engine import queue_callback

    first = not _not_zeroed
    _not_zeroed.append(param)
    if first:
        try:  # one warning naming every such parameter, once this backward is done
            queue_callback(_warn_not_zeroed)
        except RuntimeError:  # accumulating outside a running backward (backward(inputs=...))
            _warn_not_zeroed()


def _warn_not_zeroed() -> None:
    params = _not_zeroed[:]
    _not_zeroed.clear()
    config.warn_once("grad_not_zeroed", params, lambda: (
        f"backward() added new gradients into the .grad of {listing(params)}, which still held the "
        "gradients the last optimizer.step() already applied: was optimizer.zero_grad() forgotten? "
        "Gradients add up across backward() calls until cleared; call zero_grad() once per step "
        "(before backward() or after step()). Accumulating over several backward() calls before "
        "one step() is fine and not reported."
    ))


# ----------------------------------------------------------------------------- step
class _Stepping:
    depth = 0  # > 0 inside a step (an overriding step calling super().step() is checked once)


def run_step(optimizer, step, args: tuple, kwargs: dict):
    """Run ``step(optimizer, *args, **kwargs)``: checks first (unless a closure computes the
    gradients inside the step), as a trace span."""
    if on and not _Stepping.depth and not args and kwargs.get("closure") is None:
        _check_step(optimizer)
    started = trace.start()
    _Stepping.depth += 1
    try:
        return step(optimizer, *args, **kwargs)
    finally:
        _Stepping.depth -= 1
        if started is not None:
            trace.finish(f"{type(optimizer).__name__}.step", "optim", started)


def _check_step(optimizer) -> None:
    """Check every parameter before the update, then mark each gradient as applied."""
    trainable = got = zeroed = fresh_any = 0
    spent, changed, lacking = [], [], []  # stay empty (and cheap) while nothing is off
    get = _records.get
    for group in optimizer.param_groups:
        for p in group["params"]:
            rec = get(id(p)) or Record(p)
            g = p._grad
            fresh = rec.fresh
            rec.fresh = False
            fresh_any += fresh
            if not p._requires_grad:
                continue
            trainable += 1
            if g is None:
                lacking.append(p)
                continue
            vc = g._vc
            if fresh or vc is not rec.held_vc or vc[0] != rec.held_version:  # from backward, or set by other means
                got += 1
                if fresh and p._vc[0] != rec.version:
                    changed.append(p)
            else:  # unchanged since the last step applied it, or since zero_grad zeroed it
                lacking.append(p)
                if rec.held_by_step:
                    spent.append(p)
                else:
                    zeroed += 1
            rec.held_vc, rec.held_version, rec.held_by_step = g._vc, g._vc[0], True
    name = type(optimizer).__name__
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
def clips(clip):
    """Decorate a ``clip_grad_*_(parameters, limit, ...)`` function: warn when it clips gradients a
    step already applied, and time it as a trace span."""

    @functools.wraps(clip)
    def checked(parameters, *args, **kwargs):
        single = isinstance(parameters, Tensor)
        if not single:
            parameters = list(parameters)  # read here and by the clip: a generator would be empty the second time
        if on and config.enabled["clip_after_step"]:
            limit = args[0] if args else kwargs.get("max_norm", kwargs.get("clip_value"))
            _check_clip(clip.__name__, [parameters] if single else parameters, limit)
        started = trace.start()
        out = clip(parameters, *args, **kwargs)
        if started is not None:
            trace.finish(clip.__name__, "optim", started)
        return out

    return checked


def _check_clip(fname: str, params: list, limit) -> None:
    if isinstance(limit, (int, float)) and math.isinf(limit):  # clipping at inf only measures the norm
        return
    spent = []
    for p in params:
        g = p._grad
        if g is not None:
            rec = record(p)
            if rec.held_by_step and rec.holds(g):
                spent.append(p)
    if spent:
        config.warn_once("clip_after_step", spent, lambda: (
            f"{fname}() clipped the gradients of {listing(spent)} after optimizer.step() had already applied "
            "them (no backward() since): clipping now has no effect on that update. Clip between "
            "loss.backward() and optimizer.step()."
        ))


def clears_grads(zero_grad):
    """Decorate a ``zero_grad(self, set_to_none=True)`` method (Optimizer's or Module's): afterwards
    no parameter is fresh and zeroed gradients are marked; timed as a trace span."""

    @functools.wraps(zero_grad)
    def clearing(self, *args, **kwargs):
        started = trace.start()
        zero_grad(self, *args, **kwargs)
        if on:
            groups = getattr(self, "param_groups", None)
            _cleared(self.parameters() if groups is None else [p for group in groups for p in group["params"]])
        if started is not None:
            trace.finish(f"{type(self).__name__}.zero_grad", "optim", started)

    return clearing


def _cleared(params) -> None:
    get = _records.get
    for p in params:
        rec = get(id(p)) or Record(p)
        rec.fresh = False
        g = p._grad
        if g is not None:
            rec.held_vc, rec.held_version, rec.held_by_step = g._vc, g._vc[0], False
