"""``torch.fx.experimental``: only what libraries ask on their ordinary paths (``proxy_tensor.get_proxy_mode``)."""

from ..._missing import module_getattr

__getattr__ = module_getattr(__name__)
