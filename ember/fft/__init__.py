"""``torch.fft``: discrete Fourier transforms, differentiable, on NumPy's pocketfft.

Dtypes as PyTorch: float32 and complex64 inputs give complex64 (``irfft``/``hfft``: float32),
float64/complex128 give complex128; integer inputs compute in the default float dtype. ``norm`` is
``"backward"`` (default: no scaling forward, 1/n inverse), ``"ortho"`` (1/sqrt(n) both ways) or
``"forward"`` (1/n forward). ``n`` / ``s`` zero-pad or truncate the input along the transformed dims;
``s`` entries of -1 keep the input's size. The gradient of each transform is PyTorch's (see ``_ops.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import _dtype
from .._backend import xp
from .._missing import module_getattr
from .._tensor import Tensor, _wrap_dim
from ..ops.complex import conj
from ..ops.elementwise import cast
from ..ops.movement import roll
from ._ops import _DUAL, C2C, C2R, R2C

_NORMS = ("backward", "ortho", "forward")


def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _as_complex(x: Tensor) -> Tensor:
    """``x`` in a complex dtype of its precision (a recorded cast: a real input gets the real part back)."""
    if x._data.dtype.kind == "c":
        return x
    return cast(x, _dtype.to_complex(_as_real(x, "fft").dtype))


def _as_real(x: Tensor, name: str) -> Tensor:
    """A real input of an r2c transform: floating as it is, integers in the default float dtype."""
    kind = _dtype.np_kind(x._data.dtype)
    if kind == "c":
        raise RuntimeError(f"{name} expects a real input tensor, but got {_dtype.SCALAR_TYPE_NAMES[x.dtype.name]}")
    return x if kind == "f" else cast(x, _dtype.get_default_dtype())


def _check_n(n: int) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _dims_sizes(x: Tensor, s, dim, default_dims) -> tuple[list[int], list[int]]:
    """PyTorch's reading of ``s`` and ``dim``: ``dim`` alone transforms those dims at their sizes, ``s``
    alone the last ``len(s)`` dims, neither ``default_dims`` (None: all)."""
    ndim = x._data.ndim
    if isinstance(dim, int):
        dim = (dim,)
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        dim = default_dims if s is None else range(ndim - len(s), ndim)
        if dim is None:
            dim = range(ndim)
        if s is not None and len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
    dims = [_wrap_dim(d, ndim) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    shape = x._data.shape
    sizes = [shape[d] if s is None or s[i] == -1 else _check_n(int(s[i])) for i, d in enumerate(dims)]
    return dims, sizes


def _c2c(x: Tensor, s, dim, norm, forward: bool, default_dims=None) -> Tensor:
    dims, sizes = _dims_sizes(x, s, dim, default_dims)
    z = _as_complex(x)
    if not dims:
        return z
    return C2C.apply(z, axes=tuple(dims), sizes=tuple(sizes), norm=_norm(norm), forward=forward)


def _one(n: int | None, dim: int) -> tuple[Sequence[int] | None, tuple[int]]:
    return (None if n is None else (n,)), (dim,)


# --------------------------------------------------------------------- complex-to-complex
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The 1-D discrete Fourier transform along ``dim``."""
    return _c2c(input, *_one(n, dim), norm, True)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``fft``."""
    return _c2c(input, *_one(n, dim), norm, False)


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-D transform over ``dim`` (the last two by default)."""
    return _c2c(input, s, dim, norm, True)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The inverse of ``fft2``."""
    return _c2c(input, s, dim, norm, False)


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D transform over ``dim`` (all dims by default, or the last ``len(s)``)."""
    return _c2c(input, s, dim, norm, True)


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of ``fftn``."""
    return _c2c(input, s, dim, norm, False)


# --------------------------------------------------------------------- real-to-complex and back
def _rfftn(x: Tensor, s, dim, norm, name: str, default_dims=None) -> Tensor:
    x = _as_real(x, name)
    dims, sizes = _dims_sizes(x, s, dim, default_dims)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    norm = _norm(norm)
    out = R2C.apply(x, axis=dims[-1], n=sizes[-1], norm=norm)
    if len(dims) > 1:
        out = C2C.apply(out, axes=tuple(dims[:-1]), sizes=tuple(sizes[:-1]), norm=norm, forward=True)
    return out


def _irfftn(x: Tensor, s, dim, norm, name: str, default_dims=None) -> Tensor:
    dims, sizes = _dims_sizes(x, s, dim, default_dims)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or s[-1] == -1:  # the default output length: a full Hermitian signal of the half given
        sizes[-1] = _check_n(2 * (x._data.shape[dims[-1]] - 1))
    norm = _norm(norm)
    z = _as_complex(x)
    if len(dims) > 1:
        z = C2C.apply(z, axes=tuple(dims[:-1]), sizes=tuple(sizes[:-1]), norm=norm, forward=False)
    return C2R.apply(z, axis=dims[-1], n=sizes[-1], norm=norm)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The transform of a real signal: its ``n // 2 + 1`` non-negative frequencies."""
    return _rfftn(input, *_one(n, dim), norm, "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``rfft``: ``n`` real points (default ``2 * (m - 1)`` from ``m`` frequencies)."""
    return _irfftn(input, *_one(n, dim), norm, "irfft")


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``rfftn`` over two dims (the last two by default)."""
    return _rfftn(input, s, dim, norm, "rfft2")


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The inverse of ``rfft2``."""
    return _irfftn(input, s, dim, norm, "irfft2")


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D transform of a real signal: one-sided along the last of ``dim``."""
    return _rfftn(input, s, dim, norm, "rfftn")


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of ``rfftn``."""
    return _irfftn(input, s, dim, norm, "irfftn")


# --------------------------------------------------------------------- Hermitian input
def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The transform of a Hermitian signal given by its one-sided half: ``n`` real values
    (``irfft`` of the conjugate, with the forward transform's scaling)."""
    return _irfftn(conj(input), *_one(n, dim), _DUAL[_norm(norm)], "hfft")


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``hfft``: the one-sided half of a real signal's inverse transform."""
    return conj(_rfftn(_as_real(input, "ihfft"), *_one(n, dim), _DUAL[_norm(norm)], "ihfft"))


def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``hfftn`` over two dims (the last two by default)."""
    return _irfftn(conj(input), s, dim, _DUAL[_norm(norm)], "hfft2")


def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The inverse of ``hfft2``."""
    return conj(_rfftn(_as_real(input, "ihfft2"), s, dim, _DUAL[_norm(norm)], "ihfft2"))


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-D transform of a signal Hermitian along the last of ``dim`` (given by its half)."""
    return _irfftn(conj(input), s, dim, _DUAL[_norm(norm)], "hfftn")


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of ``hfftn``."""
    return conj(_rfftn(_as_real(input, "ihfftn"), s, dim, _DUAL[_norm(norm)], "ihfftn"))


# --------------------------------------------------------------------- frequencies and shifts
def _freqs(values, dtype, requires_grad: bool) -> Tensor:
    d = dtype if dtype is not None else _dtype.get_default_dtype()
    out = Tensor._make(values.astype(_dtype.to_np(d)))
    return out.requires_grad_() if requires_grad else out


def fftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point ``fft``: ``[0, 1, ..., -(n // 2), ..., -1] / (d * n)``."""
    return _freqs(xp.fft.fftfreq(int(n), d), dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point ``rfft``: ``[0, 1, ..., n // 2] / (d * n)``."""
    return _freqs(xp.fft.rfftfreq(int(n), d), dtype, requires_grad)


def _shift(x: Tensor, dim, sign: int) -> Tensor:
    ndim = x._data.ndim
    dims = range(ndim) if dim is None else (dim,) if isinstance(dim, int) else dim
    dims = [_wrap_dim(d, ndim) for d in dims]
    if not dims:
        return x
    return roll(x, [sign * (x._data.shape[d] // 2) for d in dims], dims)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Move the zero frequency to the middle of ``dim`` (all dims by default)."""
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of ``fftshift``."""
    return _shift(input, dim, -1)


_FUNCTIONS = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
              "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift")

from .._arg_aliases import accept_torch_names as _accept_torch_names  # noqa: E402
from .._arg_aliases import name_as_native_ops as _name_as_native_ops  # noqa: E402

_accept_torch_names(globals(), "fft.")  # PyTorch's keyword names: fft.fft(input=x)
_name_as_native_ops(globals(), "fft_", _FUNCTIONS)  # fft.fft.__name__: "fft_fft"

__getattr__ = module_getattr(__name__)
