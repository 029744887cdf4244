"""The training-loop warnings: their category, their kinds, the switches, and show-once.

They are off until enabled (``ember.diagnostics.enable()``, ``python -m ember.compat``, or
``EMBER_DIAGNOSTICS=1``); then every kind but the opt-in ones (``OPT_IN``) is on, and each is shown once per
process for a given set of parameters. ``set_warnings`` (in ``ember.diagnostics``) switches all or some of them at
run time.
Filter them like any warning: ``warnings.simplefilter("ignore", ember.diagnostics.TrainingLoopWarning)``.
"""

from __future__ import annotations

from collections.abc import Callable

from .._warnings import warn
from . import registry


class TrainingLoopWarning(UserWarning):
    """A training-loop mistake that PyTorch lets pass silently (step without backward, ...)."""


# kind -> what it catches (the names ``set_warnings`` accepts)
KINDS = {
    "step_without_backward": "optimizer.step() with no new gradient",
    "clip_after_step": "clipping gradients that step() already applied",
    "grad_not_zeroed": "backward() adding into gradients that step() already applied",
    "param_changed_before_step": "parameters changed in place between backward() and step()",
    "missing_grad": "some parameters got no gradient while others did",
}
_BIT = {kind: 1 << i for i, kind in enumerate(KINDS)}
# Kinds that ``enable()`` (and ``set_warnings(True)`` without kinds) leaves off: they fire on correct programs
# as often as on mistakes (a WaveNet's last residual projection that nothing reads, experts a router did not pick,
# a pretrained head kept but unused), so they are on only when named: ``set_warnings(True, "missing_grad")``.
OPT_IN = frozenset({"missing_grad"})

enabled: dict[str, bool] = dict.fromkeys(KINDS, False)  # until enable() / set_warnings(True)


def check_kinds(kinds) -> None:
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown diagnostics kind(s) {unknown}; expected some of {list(KINDS)}")


def warn_once(kind: str, params, message: Callable[[], str]) -> None:
    """Warn ``message()`` unless every one of ``params`` was already reported for ``kind``; then mark them all.

    The message is built only when shown: a mistake repeated every step costs a few bit tests.
    """
    bit = _BIT[kind]
    recs = [registry.record(p) for p in params]
    if recs and all(r.reported & bit for r in recs):
        return
    for r in recs:
        r.reported |= bit
    warn(f"{message()} [ember.diagnostics: {kind}]", TrainingLoopWarning)


def forget_shown() -> None:
    """Let every warning be shown again."""
    for rec in registry.all_records():
        rec.reported = 0

