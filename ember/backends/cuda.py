"""``ember.backends.cuda``: CUDA's matmul and attention switches, kept and never used (ember has no GPU).

``matmul.allow_tf32`` (default False, as PyTorch) and the scaled-dot-product
attention switches read back what was set.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .._missing import module_getattr
from .._warnings import warn_in
from ._precision import checked_fp32_precision


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: cuBLAS precision flags with PyTorch's defaults."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self._fp32_precision = "none"

    @property
    def fp32_precision(self) -> str:
        """PyTorch 2.9's TF32 switch: "tf32", "ieee" or "none" (the default), read back as set; any other value is
        PyTorch's error (``checked_fp32_precision``)."""
        return self._fp32_precision

    @fp32_precision.setter
    def fp32_precision(self, value: str) -> None:
        self._fp32_precision = checked_fp32_precision("cuda", "matmul", value)

    def __repr__(self) -> str:
        return f"<torch.backends.cuda.matmul (ember: no effect) allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """False: ember is not built with CUDA."""
    return False


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def _sdp_switches(values: dict) -> Iterator[None]:
    """The attention switches set to ``values`` ({"flash": bool, ...}) for a ``with`` block, then restored."""
    saved = dict(_sdp)
    _sdp.update(values)
    try:
        yield
    finally:
        _sdp.update(saved)


def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> contextlib.AbstractContextManager[dict]:
    """The attention switches for a ``with`` block (PyTorch's deprecated form of ``nn.attention.sdpa_kernel``).

    PyTorch's FutureWarning comes at the call, from its deprecation wrapper that contextlib's context manager
    calls: it names the module ``contextlib``, as PyTorch's does."""
    warn_in("contextlib", "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
            "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with "
            "updated signature.", FutureWarning)
    return _sdp_kernel({"flash": bool(enable_flash), "math": bool(enable_math),
                        "mem_efficient": bool(enable_mem_efficient), "cudnn": bool(enable_cudnn)})


@contextlib.contextmanager
def _sdp_kernel(values: dict) -> Iterator[dict]:
    with _sdp_switches(values):
        yield {}


__getattr__ = module_getattr(__name__)
