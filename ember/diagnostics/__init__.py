"""ember.diagnostics: seeing what happens between backward() and step().

- Training-loop warnings (``TrainingLoopWarning``), on by default, each shown once: ``optimizer.step()``
  with no new gradient, clipping after ``step()``, ``backward()`` into gradients a step already
  applied (``zero_grad()`` forgotten), parameters changed in place between ``backward()`` and
  ``step()``, parameters that got no gradient while others did. Switch them with
  ``set_warnings(False)`` / ``set_warnings(False, "clip_after_step")`` or ``EMBER_DIAGNOSTICS=0``.
- ``grad_report(model)`` / ``print_grad_report(model)`` / ``plot_grad_norms(model, path)``.
- ``trace``: a Chrome-trace timeline of forward, backward nodes, hooks, DDP all-reduces and
  optimizer calls, with ``trace.render_png`` and ``trace.merge`` for per-rank files.
- Anomaly mode (the op whose backward made NaN/inf) is ``ember.autograd.detect_anomaly()``.

See docs/diagnostics.md.
"""

from .. import _trace
from . import loop, trace
from .config import KINDS, TrainingLoopWarning, forget_shown
from .loop import set_warnings
from .naming import module_label
from .report import GradStats, grad_report, plot_grad_norms, print_grad_report

# The checks and names attach to ember's public hooks; ember itself never imports this package
# (``import ember`` does, last, so the checks are on by default).
loop.install()
_trace.module_label = module_label  # forward spans named by the module's path ("encoder.fc1 (Linear)")


def warnings_enabled(kind: str | None = None) -> bool:
    """Whether the training-loop warning ``kind`` (or, without a kind, any of them) is on."""
    from . import config

    if kind is None:
        return any(config.enabled.values())
    config.check_kinds([kind])
    return config.enabled[kind]


__all__ = ["trace", "TrainingLoopWarning", "KINDS", "set_warnings", "warnings_enabled", "forget_shown",
           "GradStats", "grad_report", "print_grad_report", "plot_grad_norms"]
