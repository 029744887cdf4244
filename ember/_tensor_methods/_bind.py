"""How Tensor's methods reach ``ember.ops`` without importing it.

``ember/ops`` builds on ``Tensor`` (its ops take and return tensors), so the class that defines the methods cannot
import the ops: the import graph would be a circle. Instead each mixin module holds a module global ``ops`` that
``ember.ops`` binds to itself once it has loaded (``ember._tensor_methods.bind_ops``); a method call then costs the
same global and attribute lookups as an imported module, and no import. Until then ``ops`` is this stand-in, which
finds the package in ``sys.modules`` (an op run while ``ember.ops`` is still loading sees it as an import would).
"""

from __future__ import annotations

import sys


class _OpsNotYetBound:
    __slots__ = ()

    def __getattr__(self, name: str):
        package = sys.modules.get("ember.ops")
        if package is None:
            raise RuntimeError("ember's ops are not loaded: import ember before using its tensors")
        return getattr(package, name)


ops = _OpsNotYetBound()
