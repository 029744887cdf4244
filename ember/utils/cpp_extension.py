"""``torch.utils.cpp_extension``: building C++/CUDA extensions against PyTorch's libraries.

ember has no C++ library to build against (it is NumPy underneath), so it answers as a CPU-only PyTorch does
where it can — ``CUDA_HOME``, ``ROCM_HOME`` and ``HIP_HOME`` are None (no toolkit found) — and refuses to
build: ``load``, ``load_inline``, ``CppExtension``, ``CUDAExtension`` and ``BuildExtension`` raise ember's
MissingFeatureError naming the function. Programs that fall back to a Python implementation when the
extension fails to build (``except Exception``) do so under ember.
"""

from __future__ import annotations

from typing import Any

from .._missing import MissingFeatureError, module_getattr

__all__ = ["BuildExtension", "CUDAExtension", "CUDA_HOME", "CppExtension", "HIP_HOME", "ROCM_HOME", "load",
           "load_inline"]

CUDA_HOME: str | None = None
ROCM_HOME: str | None = None
HIP_HOME: str | None = None


def _refused(name: str) -> MissingFeatureError:
    return MissingFeatureError(
        f"torch.utils.cpp_extension.{name} is not implemented in ember: ember runs on NumPy and has no C++ "
        "library for an extension to build against; use the operation's Python implementation instead")


def load(name: str, sources: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Raises MissingFeatureError: ember cannot compile or load a C++/CUDA extension."""
    raise _refused("load")


def load_inline(name: str, cpp_sources: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Raises MissingFeatureError: ember cannot compile or load a C++/CUDA extension."""
    raise _refused("load_inline")


def CppExtension(name: str, sources: Any = None, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (PyTorch's name)
    """Raises MissingFeatureError: there is no library for a C++ extension to link against."""
    raise _refused("CppExtension")


def CUDAExtension(name: str, sources: Any = None, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (PyTorch's name)
    """Raises MissingFeatureError: there is no library (nor GPU) for a CUDA extension."""
    raise _refused("CUDAExtension")


class BuildExtension:
    """setuptools' ``build_ext`` command in PyTorch; here naming it works (``cmdclass={"build_ext": ...}``,
    ``BuildExtension.with_options(...)``), running it raises MissingFeatureError."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _refused("BuildExtension")

    @classmethod
    def with_options(cls, **options: Any) -> type[BuildExtension]:
        return cls


__getattr__ = module_getattr(__name__)
