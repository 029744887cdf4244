"""``torch`` for child processes of a program run by ``python -m ember.compat``.

multiprocessing's "spawn" children start a fresh interpreter with the parent's
``sys.path``, to which ``ember.compat`` added this directory; their first
``import torch`` lands here and makes ember stand in for torch, as in the parent.
"""

import sys

import ember
import ember._shown_name
import ember.compat

ember.compat.install()
sys.modules["torch"] = ember  # the import statement returns what sys.modules holds: ember itself
ember._shown_name.show_pytorch_names()  # str(type(x)) prints <class 'torch.Tensor'>, as in the parent
