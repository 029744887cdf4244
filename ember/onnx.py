"""``ember.onnx``: ember cannot export ONNX models.

``is_in_onnx_export()`` is False (model code asks it to take export-only
branches); ``export`` raises NotImplementedError naming what to do instead.
"""

from __future__ import annotations

import enum

from ._missing import module_getattr


class TrainingMode(enum.IntEnum):
    """``torch.onnx.TrainingMode``: which mode an export records (named for export code; ember does not export)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export() -> bool:
    """False: no export is ever running."""
    return False


def export(model, args=(), f=None, **kwargs):
    """Raises NotImplementedError: ember has no tracer or ONNX writer."""
    raise NotImplementedError(
        "torch.onnx.export is not implemented in ember: ember cannot trace a model into an ONNX graph. "
        "Export the model from PyTorch; ember's weights carry over as NumPy arrays "
        "({name: t.numpy() for name, t in model.state_dict().items()})."
    )


__getattr__ = module_getattr(__name__)
