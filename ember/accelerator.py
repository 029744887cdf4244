"""``ember.accelerator``: PyTorch's device-agnostic accelerator API, answered as on a machine without one.

``is_available()`` is False and ``current_accelerator()`` None, so
``device = torch.accelerator.current_accelerator() or torch.device("cpu")`` and
``if torch.accelerator.is_available(): ...`` pick the CPU. Calls that need an
accelerator raise PyTorch's RuntimeError.
"""

from __future__ import annotations

from ._missing import module_getattr


def is_available() -> bool:
    """False: ember computes on the CPU, which PyTorch does not count as an accelerator."""
    return False


def current_accelerator(check_available: bool = False):
    """None: there is no accelerator."""
    return None


def device_count() -> int:
    """0."""
    return 0


def _no_accelerator(*args, **kwargs):
    raise RuntimeError("Cannot access accelerator device when none is available.")


current_device_index = current_device_idx = set_device_index = set_device_idx = synchronize = _no_accelerator



class device_index:  # noqa: N801 (PyTorch's name)
    """Context manager switching the accelerator's device index: ``device_index(None)`` does nothing, as in
    PyTorch; an index raises PyTorch's RuntimeError on entering (there is no accelerator)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device

    def __enter__(self) -> None:
        if self.idx is not None:
            _no_accelerator()

    def __exit__(self, *exc_info: object) -> None:
        return None


__getattr__ = module_getattr(__name__)
