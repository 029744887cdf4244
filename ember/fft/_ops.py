"""The three recorded transforms behind ``ember.fft``: complex-to-complex over several dims (C2C),
real-to-complex one-sided on one dim (R2C, ``rfft``) and complex-to-real on one dim (C2R, ``irfft``).
The other functions compose them (``rfftn`` is R2C on the last dim, then C2C on the rest).

Each transform first resizes its input along the transformed dims to the requested length (zero
padding or truncation, NumPy's and PyTorch's ``n`` / ``s``); backward undoes that resize on the
gradient (truncates what was padded, pads what was truncated).

Gradients, in PyTorch's convention (the adjoint of the linear map): the adjoint of a forward
transform with norm ``m`` is the inverse transform with the dual norm (``"backward"`` <->
``"forward"``, ``"ortho"`` itself). R2C's adjoint zero-fills the discarded half, transforms back and
keeps the real part; C2R's is R2C of the gradient with the bins that stand for two (1 .. n - n//2 - 1)
doubled, as PyTorch's ``fft_c2r_backward``.
"""

from __future__ import annotations

from .._backend import xp
from ..autograd.graph import Node

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _resize(a, axes, sizes):
    """``a`` with each axis in ``axes`` cut or zero-padded to the matching size in ``sizes``."""
    cut = [slice(None)] * a.ndim
    pad = [(0, 0)] * a.ndim
    for ax, n in zip(axes, sizes):
        if a.shape[ax] > n:
            cut[ax] = slice(0, n)
        elif a.shape[ax] < n:
            pad[ax] = (0, n - a.shape[ax])
    a = a[tuple(cut)]
    return xp.pad(a, pad) if any(p[1] for p in pad) else a


class C2C(Node):
    """``fftn`` (``forward``) or ``ifftn`` of a complex array over ``axes``, each resized to ``sizes``."""

    def forward(self, z, axes, sizes, norm, forward):
        self.axes, self.norm, self.fwd = axes, norm, forward
        self.in_sizes = [z.shape[a] for a in axes]
        return (xp.fft.fftn if forward else xp.fft.ifftn)(z, s=sizes, axes=axes, norm=norm)

    def backward(self, g):
        back = (xp.fft.ifftn if self.fwd else xp.fft.fftn)(g, axes=self.axes, norm=_DUAL[self.norm])
        return (_resize(back, self.axes, self.in_sizes),)


class R2C(Node):
    """``rfft`` of a real array along ``axis``, resized to ``n``: the ``n // 2 + 1`` non-negative frequencies."""

    def forward(self, x, axis, n, norm):
        self.axis, self.n, self.norm, self.in_size = axis, n, norm, x.shape[axis]
        return xp.fft.rfft(x, n=n, axis=axis, norm=norm)

    def backward(self, g):
        full = _resize(g, (self.axis,), (self.n,))  # the negative frequencies were dropped: zeros
        back = xp.fft.ifft(full, axis=self.axis, norm=_DUAL[self.norm]).real
        return (_resize(back, (self.axis,), (self.in_size,)),)


class C2R(Node):
    """``irfft`` along ``axis`` to ``n`` real points, from the first ``n // 2 + 1`` of a Hermitian half."""

    def forward(self, z, axis, n, norm):
        self.axis, self.n, self.norm, self.in_size = axis, n, norm, z.shape[axis]
        return xp.fft.irfft(z, n=n, axis=axis, norm=norm)

    def backward(self, g):
        gz = xp.fft.rfft(g, axis=self.axis, norm=_DUAL[self.norm])
        doubled = self.n - (self.n // 2 + 1)  # the bins whose conjugates the half stands for
        if doubled > 0:
            idx = [slice(None)] * gz.ndim
            idx[self.axis] = slice(1, 1 + doubled)
            gz[tuple(idx)] *= 2
        return (_resize(gz, (self.axis,), (self.in_size,)),)
