"""Convolution gradients as convolutions: the backward of ``conv`` and ``conv_transpose`` under create_graph.

The kernels behind ``ConvNd`` and ``ConvTransposeNd`` (im2col, col2im, Winograd, threads writing into
preallocated buffers) run on plain arrays only, so their backward formulas cannot record themselves (see
``ember/autograd/recorded.py``). Under ``create_graph`` the same gradients are instead expressed by ember's own
convolution nodes, which are differentiable, to any order (their backward comes back here):

- the input gradient of ``conv(x, w)`` is ``conv_transpose(g, w)``, same stride, padding, dilation and groups;
- its weight gradient is a convolution of x with g: batch and channels swapped (x becomes C/G images of G * N
  channels, g the weight of O filters over N channels, groups G), stride and dilation swapped, cropped to the
  kernel (``weight_grad``);
- the input gradient of ``conv_transpose(x, w)`` is ``conv(g, w)``, and its weight gradient is the
  convolution's weight gradient with g as the input and x as the output gradient.

This is how PyTorch's ``convolution_backward`` is differentiated too (its double backward is convolutions).

The convolutions go through ``conv_padded`` and ``conv_transpose_padded``, module functions that vmap rebinds
(``_rebind.INTERNAL``) to their batching rule: a batched backward walk (``jacrev``, ``is_grads_batched``, under
``vmap``) runs each formula's convolution once on the whole batch of cotangents.
"""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.recorded import RecordedArray
from .conv import ConvNd
from .conv_transpose import ConvTransposeNd


def _t(a) -> Tensor:
    """A formula operand as a tensor: the recorded one, or a constant."""
    return a.t if type(a) is RecordedArray else Tensor._make(a)


def conv_padded(input: Tensor, weight: Tensor, stride, pads, dilation, groups: int) -> Tensor:
    """The convolution node of (N, C, *in) with (O, C/G, *k) at per-dim (lo, hi) padding, no bias."""
    return ConvNd.apply(input, weight, None, stride=stride, pads=pads, dilation=dilation, groups=groups)


def conv_transpose_padded(input: Tensor, weight: Tensor, stride, pads, dilation, groups: int, out_sp) -> Tensor:
    """The transposed-convolution node of (N, C, *in) with (C, O/G, *k) to (N, O, *out_sp) at per-dim (lo, hi)
    padding of the convolution it transposes, no bias."""
    return ConvTransposeNd.apply(input, weight, None, stride=stride, pads=pads, dilation=dilation, groups=groups,
                                 out_sp=tuple(out_sp))


def _bias_grad(g: Tensor) -> Tensor:
    return g.sum(dim=(0, *range(2, g.ndim)))


def weight_grad(x: Tensor, g: Tensor, kernel, stride, pads, dilation, groups: int) -> Tensor:
    """d<g, conv(x, w)>/dw for x (N, C, *in) and g (N, O, *out): (O, C/G, *kernel)."""
    n, c, sp = x.shape[0], x.shape[1], tuple(x.shape[2:])
    nd = len(sp)
    # images (C/G, G * N, *in): xi[cg, gi * N + n] = x[n, gi * C/G + cg]; filters (O, N, *out): g's batch and channels
    xi = x.reshape(n, groups, c // groups, *sp).permute(2, 1, 0, *range(3, 3 + nd)).reshape(c // groups, -1, *sp)
    out = conv_padded(xi, g.transpose(0, 1), dilation, pads, stride, groups)
    # out[cg, o, k] reads x at k * dilation + p * stride: the weight gradient, for k up to the kernel's extent
    return out[(slice(None), slice(None)) + tuple(slice(0, k) for k in kernel)].transpose(0, 1)


def _conv_cropped(g: Tensor, w: Tensor, stride, pads, dilation, groups: int):
    """``conv(g, w)`` where a negative high padding (conv_transpose's output_padding) reads only a prefix of g:
    (the convolution, the cropped g, its non-negative padding)."""
    g = g[(slice(None),) * 2 + tuple(slice(0, n + min(hi, 0)) for n, (_, hi) in zip(g.shape[2:], pads))]
    pads = tuple((lo, max(hi, 0)) for lo, hi in pads)
    return conv_padded(g, w, stride, pads, dilation, groups), g, pads


def conv_backward(g, x, w, needs, stride, pads, dilation, groups: int) -> tuple:
    """``ConvNd``'s (gx, gw, gb) for output gradient g, as recorded convolutions."""
    g, x, w = _t(g), _t(x), _t(w)
    nx, nw, nb = needs
    gx = gw = gb = None
    if nx:
        gx = conv_transpose_padded(g, w, stride, pads, dilation, groups, tuple(x.shape[2:]))
    if nw:
        gw = weight_grad(x, g, tuple(w.shape[2:]), stride, pads, dilation, groups)
    if nb:
        gb = _bias_grad(g)
    return tuple(None if t is None else RecordedArray(t) for t in (gx, gw, gb))


def conv_transpose_backward(g, x, w, needs, stride, pads, dilation, groups: int) -> tuple:
    """``ConvTransposeNd``'s (gx, gw, gb) for output gradient g, as recorded convolutions."""
    g, x, w = _t(g), _t(x), _t(w)
    nx, nw, nb = needs
    gx = gw = gb = None
    if nx or nw:
        gx, g_read, g_pads = _conv_cropped(g, w, stride, pads, dilation, groups)
        if nw:
            gw = weight_grad(g_read, x, tuple(w.shape[2:]), stride, g_pads, dilation, groups)
        gx = gx if nx else None
    if nb:
        gb = _bias_grad(g)
    return tuple(None if t is None else RecordedArray(t) for t in (gx, gw, gb))
