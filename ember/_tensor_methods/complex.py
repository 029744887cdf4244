"""Tensor methods and properties for complex numbers (``ember/ops/complex.py``): ``real``/``imag`` (settable),
``H``/``mH``, conjugation, the complex dtype conversions, and ``stft``/``istft`` (``ember/fft/_stft.py``)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from .. import _dtype

if TYPE_CHECKING:
    from .. import ops
    from .._tensor import Tensor
else:
    from ._bind import ops  # ember.ops binds itself here once loaded (_bind.py: why it is not imported)


class ComplexMethods:
    __slots__ = ()

    @property
    def real(self) -> Tensor:
        return ops.complex.real(self)

    @real.setter
    def real(self, value) -> None:
        ops.complex.set_real(self, value)

    @property
    def imag(self) -> Tensor:
        return ops.complex.imag(self)

    @imag.setter
    def imag(self, value) -> None:
        ops.complex.set_imag(self, value)

    @property
    def mH(self) -> Tensor:
        return ops.complex.conj_transpose(self, "mH")

    @property
    def H(self) -> Tensor:
        return ops.complex.H(self)

    def adjoint(self) -> Tensor:
        return ops.complex.adjoint(self)

    def conj(self) -> Tensor:
        return ops.complex.conj(self)

    def conj_physical(self) -> Tensor:
        return ops.complex.conj_physical(self)

    def resolve_conj(self) -> Tensor:
        return ops.complex.resolve_conj(self)

    def resolve_neg(self) -> Tensor:
        return ops.complex.resolve_neg(self)

    def is_conj(self) -> builtins.bool:
        return ops.complex.is_conj(self)

    def is_neg(self) -> builtins.bool:
        return ops.complex.is_neg(self)

    def angle(self) -> Tensor:
        return ops.complex.angle(self)

    def __complex__(self) -> builtins.complex:
        self._warn_scalar_of_grad_tensor()  # type: ignore[attr-defined]
        return builtins.complex(self._python_number())  # type: ignore[attr-defined]

    def cfloat(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.complex64)

    def cdouble(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.complex128)

    def chalf(self, memory_format=None) -> Tensor:
        return ops.elementwise.cast(self, _dtype.complex32)

    def stft(self, n_fft: builtins.int, hop_length: builtins.int | None = None,
             win_length: builtins.int | None = None, window: Tensor | None = None, center: builtins.bool = True,
             pad_mode: str = "reflect", normalized: builtins.bool = False, onesided: builtins.bool | None = None,
             return_complex: builtins.bool | None = None, align_to_window: builtins.bool | None = None) -> Tensor:
        from ..fft import _stft  # ember.fft loads on first use

        return _stft.stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                          return_complex, align_to_window)

    def istft(self, n_fft: builtins.int, hop_length: builtins.int | None = None,
              win_length: builtins.int | None = None, window: Tensor | None = None, center: builtins.bool = True,
              normalized: builtins.bool = False, onesided: builtins.bool | None = None,
              length: builtins.int | None = None, return_complex: builtins.bool = False) -> Tensor:
        from ..fft import _stft

        return _stft.istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                           return_complex)
