"""The package name that reprs print: ``torch`` where ``torch`` is ember (``python -m ember.compat``), else
``ember``.

A program run under ember.compat prints ``torch.Size([2, 3])``, ``torch.float32`` and
``torch.return_types.max(...)`` where PyTorch does, so its output reads (and diffs) as under PyTorch; imported as
``ember`` the same objects print ``ember.Size([2, 3])``. Decided at each repr, as ``ember.__version__`` is: the
compat runner installs its alias after ember's objects exist.
"""

from __future__ import annotations

import sys


def package_name() -> str:
    """``"torch"`` while ``torch`` is ember in this process, ``"ember"`` otherwise."""
    modules = sys.modules
    ember = modules.get("ember")
    return "torch" if ember is not None and modules.get("torch") is ember else "ember"
