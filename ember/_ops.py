"""``torch._ops``: the module where PyTorch defines ``torch.ops``; programs import it from here
(``from torch._ops import ops``). ember's ``torch.ops`` is the ``ember.ops`` package: its attributes are the
namespaces of the operators ``torch.library.custom_op`` made, and ``aten``'s ``_foreach_*`` operators."""

from . import ops
from ._missing import module_getattr

__all__ = ["ops"]

__getattr__ = module_getattr(__name__)
