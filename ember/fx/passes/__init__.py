"""``torch.fx.passes``: analyses over a GraphModule (``shape_prop.ShapeProp``)."""

from ..._missing import module_getattr
from . import shape_prop  # noqa: F401  (torch.fx.passes.shape_prop is reachable after ``import torch.fx``)

__getattr__ = module_getattr(__name__)
