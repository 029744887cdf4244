"""``torchvision`` for child processes of a program run by ``python -m ember.compat``.

A "spawn" child whose first import is ``torchvision`` (before ``torch``) lands here: importing ``torch`` first
(the shim beside this one) makes ember stand in for both, then ``torchvision`` is ember.vision, as in the parent.
"""

import sys

import torch  # noqa: F401  (the shim: ember.compat.install())

import ember.vision

sys.modules["torchvision"] = ember.vision  # the import statement returns what sys.modules holds
