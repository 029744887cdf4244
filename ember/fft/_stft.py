"""``torch.stft`` / ``torch.istft``: the short-time Fourier transform and its inverse, composed of recorded ops
(padding, ``unfold``, the window product, ``rfft``/``fft``; ``irfft``/``ifft``, ``index_add`` overlap-add), so
both are differentiable as PyTorch's are.

As PyTorch: ``hop_length`` defaults to ``n_fft // 4``, ``win_length`` to ``n_fft``; a window shorter than
``n_fft`` is zero-padded on both sides to the centre; ``center=True`` pads the signal by ``n_fft // 2`` on both
sides (``pad_mode``, default ``"reflect"``); ``normalized=True`` scales by ``n_fft ** -0.5``; ``onesided``
defaults to True for a real signal and window. The output is (batch?, frequencies, frames).
"""

from __future__ import annotations

from .. import _dtype
from .._backend import xp
from .._creation import ones
from .._dtype import np_kind
from .._tensor import Tensor
from .._warnings import warn, warn_once
from ..nn._ops.padding import pad as _pad
from ..ops.complex import view_as_real
from ..ops.elementwise import cast, div, mul
from ..ops.index_update import index_add
from ..ops.shape import reshape, transpose
from ..ops.strided import unfold
from . import fft, ifft, irfft, rfft

# stft's once-per-process warnings come from PyTorch's C++ core called by its Python wrapper, whose module they name
_WRAPPER = "torch.functional"


def _window(window: Tensor | None, n_fft: int, win_length: int, dtype, name: str) -> Tensor:
    """The window, zero-padded on both sides to ``n_fft`` (a rectangle when None)."""
    if window is None:
        window = ones(win_length, dtype=dtype)
    if window._data.ndim != 1 or window._data.shape[0] != win_length:
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _pad(window, (left, n_fft - win_length - left))
    return window


def _lengths(name: str, n_fft: int, hop_length, win_length) -> tuple[int, int]:
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if hop <= 0:
        raise RuntimeError(f"{name}: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got win_length={win}")
    return hop, win


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None, align_to_window: bool | None = None
         ) -> Tensor:
    """The short-time Fourier transform of a 1-D signal or a (batch, time) batch: (batch?, n_freq, n_frames)."""
    if window is None:  # (PyTorch warns first, once per process)
        warn_once("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
                  "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to "
                  "reduce spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
                  "`window=torch.ones(n_fft, device=<device>)`.", module=_WRAPPER)
    complex_input = input._data.dtype.kind == "c" or window is not None and window._data.dtype.kind == "c"
    if return_complex is None and not complex_input:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if input._data.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input._data.ndim}D")
    batched = input._data.ndim == 2
    x = input if batched else reshape(input, (1, -1))
    if np_kind(x._data.dtype) not in "fc":
        x = cast(x, _dtype.get_default_dtype())
    if center:
        half = n_fft // 2
        x = reshape(_pad(reshape(x, (x._data.shape[0], 1, -1)), (half, half), mode=pad_mode), (x._data.shape[0], -1))
    length = x._data.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    hop, win = _lengths("stft", n_fft, hop_length, win_length)
    w = _window(window, n_fft, win, _dtype.to_real(x.dtype), "stft")
    frames = mul(unfold(x, -1, n_fft, hop), w)  # (batch, n_frames, n_fft)
    onesided = not complex_input if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    if onesided:
        if complex_input:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spec = rfft(frames, dim=-1, norm=norm)
    else:
        spec = fft(frames, dim=-1, norm=norm)
    out = transpose(spec, 1, 2)
    if not batched:
        out = reshape(out, out._data.shape[1:])
    if not return_complex:
        warn_once("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                  "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still "
                  "call torch.view_as_real on the complex output to recover the old return format.", module=_WRAPPER)
        return view_as_real(out)
    return out


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool | None = None,
          length: int | None = None, return_complex: bool = False) -> Tensor:
    """The inverse of ``stft`` by windowed overlap-add, divided by the overlapped squared window (which must not
    vanish anywhere: PyTorch's "window overlap add min" error)."""
    if window is None:
        warn_once("A window was not provided. A rectangular window will be applied.Please provide the same window "
                  "used by stft to make the inversion lossless.To suppress this warning and use a rectangular window, "
                  "explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    if input._data.dtype.kind != "c":
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if input._data.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex dtype, but got "
                           f"{input._data.ndim}D")
    hop, win = _lengths("istft", n_fft, hop_length, win_length)
    batched = input._data.ndim == 3
    spec = input if batched else reshape(input, (1,) + input._data.shape)
    n_freq, n_frames = spec._data.shape[1:]
    onesided = n_freq != n_fft if onesided is None else onesided
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {n_freq}")
    if not onesided and n_freq != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension of the input tensor to match n_fft={n_fft} "
                           f"when onesided=False, but got {n_freq}")
    w = _window(window, n_fft, win, _dtype.to_real(spec.dtype), "istft")
    norm = "ortho" if normalized else "backward"
    frames = transpose(spec, 1, 2)
    if return_complex:
        if onesided:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = ifft(frames, n=n_fft, dim=-1, norm=norm)
    else:  # a real signal: its one-sided half (of a two-sided input, the first n_fft // 2 + 1 bins, as PyTorch)
        frames = irfft(frames if onesided else frames[..., :n_fft // 2 + 1], n=n_fft, dim=-1, norm=norm)
    frames = mul(frames, w)  # (batch, n_frames, n_fft)
    total = n_fft + hop * (n_frames - 1)
    positions = Tensor._make((xp.arange(n_frames)[:, None] * hop + xp.arange(n_fft)[None, :]).reshape(-1))
    y = index_add(Tensor._make(xp.zeros((frames._data.shape[0], total), dtype=frames._data.dtype)), 1, positions,
                  reshape(frames, (frames._data.shape[0], -1)))
    envelope = xp.zeros(total, dtype=w._data.dtype)
    xp.add.at(envelope, positions._data, xp.tile(w._data * w._data, n_frames))
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y, envelope = y[:, start:min(end, total)], envelope[start:min(end, total)]
    if envelope.size and xp.abs(envelope).min() < 1e-11:
        raise RuntimeError("istft: window overlap add min: the squared window overlap-added is (near) zero "
                           "somewhere; use a window and hop_length that overlap (NOLA)")
    y = div(y, Tensor._make(envelope))
    if end > total:
        warn("The length of signal is shorter than the length parameter. Result is being padded with zeros in the "
             "tail. Please check your center and hop_length settings.", UserWarning)
        y = _pad(y, (0, end - total))
    return y if batched else reshape(y, (-1,))
