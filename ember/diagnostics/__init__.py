"""ember.diagnostics: seeing what happens between backward() and step().

- Training-loop warnings (``TrainingLoopWarning``), each shown once: ``optimizer.step()`` with no new
  gradient, clipping after ``step()``, ``backward()`` into gradients a step already applied
  (``zero_grad()`` forgotten), parameters changed in place between ``backward()`` and ``step()``,
  parameters that got no gradient while others did. Off until enabled, before the model is built:
  ``enable()`` in the program, ``EMBER_DIAGNOSTICS=1`` in the environment (``import ember`` then calls
  ``enable()``), or running under ``python -m ember.compat`` (which enables them unless
  ``EMBER_DIAGNOSTICS=0``). ``set_warnings(False)`` / ``set_warnings(False, "clip_after_step")``
  switch them off again, all or one kind.
- ``grad_report(model)`` / ``print_grad_report(model)`` / ``plot_grad_norms(model, path)``.
- ``trace``: a Chrome-trace timeline of forward, backward nodes, hooks, DDP all-reduces and
  optimizer calls, with ``trace.render_png`` and ``trace.merge`` for per-rank files.
- Anomaly mode (the op whose backward made NaN/inf) is ``ember.autograd.detect_anomaly()``.

See docs/diagnostics.md.
"""

from .. import _trace
from . import naming, trace
from .config import KINDS, TrainingLoopWarning, forget_shown
from .loop import set_warnings
from .naming import module_label
from .report import GradStats, grad_report, plot_grad_norms, print_grad_report

# Names and checks attach to ember's public hooks (the checks when enabled); ember's core never imports this
# package. Names are recorded from here on: for messages, reports and trace spans ("encoder.fc1 (Linear)").
naming.install()
_trace.module_label = module_label


def enable() -> None:
    """Turn the training-loop warnings on (all but the opt-in ``missing_grad``): register the checks on ember's
    public hooks (once per process).

    Call it before the model is built: the checks name parameters and watch their gradients from the
    moment a module registers them. ``EMBER_DIAGNOSTICS=1`` makes ``import ember`` call it, and
    ``python -m ember.compat`` calls it unless ``EMBER_DIAGNOSTICS=0``.
    """
    set_warnings(True)


def warnings_enabled(kind: str | None = None) -> bool:
    """Whether the training-loop warning ``kind`` (or, without a kind, any of them) is on."""
    from . import config

    if kind is None:
        return any(config.enabled.values())
    config.check_kinds([kind])
    return config.enabled[kind]


__all__ = ["trace", "TrainingLoopWarning", "KINDS", "enable", "set_warnings", "warnings_enabled", "forget_shown",
           "GradStats", "grad_report", "print_grad_report", "plot_grad_norms"]
