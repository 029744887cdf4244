"""``torch.fx.experimental.proxy_tensor``: PyTorch's ``make_fx`` traces a function by running it under a proxy
dispatch mode; ember has no dispatch modes (``torch.fx.symbolic_trace`` traces with proxies instead), so no such
mode is ever active. kornia asks ``get_proxy_mode()`` before taking a data-dependent path."""

from __future__ import annotations

from ..._missing import module_getattr


def get_proxy_mode() -> None:
    """The proxy mode ``make_fx`` is tracing under, or None, as PyTorch's outside ``make_fx``: always None here."""
    return None


__getattr__ = module_getattr(__name__)
