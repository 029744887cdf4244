"""``ember.autograd.profiler``: PyTorch's older profiler API (``record_function``, ``profile``).

Its ``profile`` is PyTorch's legacy profiler: ``enabled`` is its first positional argument
(``profile(args.enable_profiling, use_cuda=False, record_shapes=True)``, as DLRM writes it) and it takes the legacy
keywords (``use_cuda``, ``use_device``, ``use_kineto``, ``use_cpu``, ...); ``ember.profiler.profile`` takes keywords
only, as ``torch.profiler.profile`` does. Both record the same timeline. Difference from PyTorch: the device
keywords are accepted and ignored (ember runs on the CPU).
"""

from __future__ import annotations

from typing import Any

from .. import profiler as _profiler
from .._missing import module_getattr
from ..profiler import EventList, record_function


class profile(_profiler.profile):
    """PyTorch's legacy ``torch.autograd.profiler.profile``: ``enabled`` positional, the legacy keywords."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None, post_processing_timeout_s: float | None = None,
                 activity_filters: Any = None) -> None:
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules, enabled=enabled)

    def __enter__(self) -> profile | None:  # type: ignore[override]
        """The profiler, or None where it is disabled (PyTorch's legacy ``__enter__`` returns nothing then)."""
        entered = super().__enter__()
        return entered if self.enabled else None


class emit_nvtx:  # noqa: N801 (PyTorch's name)
    """Make every autograd operation emit an NVTX range for NVIDIA's profilers (``torch.autograd.profiler.emit_nvtx``).
    NVTX ranges need CUDA, which ember (CPU only) does not have: as on PyTorch's CPU build, ``enabled=False`` makes it
    a no-op and entering it enabled raises (``CudaUnavailableError``, an AssertionError as PyTorch's)."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled, self.record_shapes = enabled, record_shapes

    def __enter__(self) -> None:
        if self.enabled:
            from ..cuda import CudaUnavailableError

            raise CudaUnavailableError("Torch not compiled with CUDA enabled (torch.autograd.profiler.emit_nvtx "
                                       "emits NVTX ranges, which need CUDA; ember computes on the CPU)")

    def __exit__(self, *exc_info: Any) -> None:
        return None


__all__ = ["EventList", "emit_nvtx", "profile", "record_function"]

__getattr__ = module_getattr(__name__)
