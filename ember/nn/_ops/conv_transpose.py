"""Transposed convolution (1-, 2- and 3-d): the input gradient of a convolution, run as a forward pass.

``conv_transpose(x, w)`` with w (C_in, C_out/G, *k) is the gradient with respect to its input z (N, C_out, *out) of
the convolution ``conv(z, w)`` (C_out -> C_in channels, the same stride, padding and dilation), applied to x. So
its forward is ``conv.input_grad`` (col2im, or for stride 1 a convolution with the flipped kernel), and its
backward is that convolution's forward: the column matrix of the output gradient g gives dx = W @ cols and
dW = x @ cols^T, the convolution's own weight gradient with x in the place of the output gradient. Where that
convolution is a 4x4 stride-2 one of few output positions (the input gradient of a WGAN critic's layer, in its
double backward), both are Winograd on g's phases (``conv_phases``), as the convolution's forward and weight
gradient are.

``output_padding`` adds rows at the high end of each dim that no input element reaches: the convolution's padding
there is ``padding - output_padding`` (negative: the convolution reads only a prefix of z).
"""

from __future__ import annotations

from ..._autocast import lower_precision
from ..._parallel import one_blas_thread, run_rows
from ..._tensor import Tensor
from ...autograd.graph import Node, torch_named
from ...autograd.recorded import is_recorded
from ...ops.activation import row_sums
from . import conv_phases, conv_transpose_winograd
from .conv import (
    batched,
    cast_bias,
    check_kernel_dtype,
    check_weight_dtype,
    conv_argument,
    empty_batch,
    forward_and_weight_grad,
    forward_batch_last,
    input_grad,
    strides_and_dilations,
    takes_onednn,
    takes_phases,
    weight_grad,
    zero_grads,
)
from .conv_layout import as_pytorch_lays_out, batch_last_padded, to_batch_last, to_nchw


@torch_named("ConvolutionBackward0")  # (PyTorch's: a transposed convolution is its convolution op too)
class ConvTransposeNd(Node):
    float32_compute = True

    @one_blas_thread
    def forward(self, x, w, b, stride, pads, dilation, groups, out_sp):
        if conv_transpose_winograd.applies(x, w, stride, pads, dilation, groups):
            out, tiles = conv_transpose_winograd.forward(x, w, b)
            self.saved = (x, tiles, w)  # tiles: the transformed input and weight, in xb's place
            self.meta = (stride, pads, dilation, groups, True)
            return as_pytorch_lays_out(out, x, w)
        xb = to_batch_last(x)  # (C_in, *in, N)
        out = input_grad(xb, w, out_sp, stride, pads, dilation, groups)  # (C_out, *out, N)
        self.saved = (x, xb, w)  # x itself too: backward's check that it was not modified in place since
        self.meta = (stride, pads, dilation, groups, False)
        return as_pytorch_lays_out(to_nchw(out, b), x, w)  # (N, C_out, *out), as PyTorch's

    @one_blas_thread
    def backward(self, g):
        x, xb, w = self.saved
        stride, pads, dilation, groups, winograd = self.meta
        if is_recorded(g):  # create_graph: the kernels below cannot record themselves; convolutions of g instead
            from . import conv_higher_order  # (imports this module)

            return conv_higher_order.conv_transpose_backward(g, x, w, self.needs_input_grad, stride, pads, dilation,
                                                             groups)
        zeros = zero_grads(g, x, w, self.needs_input_grad, w.shape[1] * groups)
        if zeros is not None:
            return zeros
        if winograd:
            return conv_transpose_winograd.backward(g, xb, w, self.needs_input_grad)
        nx, nw, nb = self.needs_input_grad
        gx = gw = gb = None
        cropped = any(hi < 0 for _, hi in pads)
        if (nx or nw) and not cropped and takes_phases(g, w, None, stride, pads, dilation, groups):
            # the convolution of g by Winograd on its phases, as ``ConvNd``'s forward computes it, and the weight
            # gradient from its input tiles with x in the output gradient's place, as ``ConvNd``'s backward does
            gx, tiles = conv_phases.forward(g, w, None, pads, keep_tiles=bool(nw))
            gx = gx if nx else None
            if nw:
                rows, finish = conv_phases.weight_grad_rows(tiles, xb, w.shape)
                run_rows(rows)
                gw = finish()
        elif nx or nw:
            # the convolution of g: where the padding is negative, g's last rows were never written from x (crop)
            g_read = g[(slice(None),) * 2 + tuple(slice(0, n + min(hi, 0)) for n, (_, hi) in zip(g.shape[2:], pads))]
            gpad = batch_last_padded(g_read, tuple((lo, max(hi, 0)) for lo, hi in pads))
            if nb and not cropped:  # the padded copy holds all of g (and zeros): its channel rows give the bias grad
                gb = row_sums(gpad.reshape(gpad.shape[0], -1), 1).reshape(-1)
            both = forward_and_weight_grad(gpad, w, xb, stride, dilation, groups) if nx and nw else None
            if both is not None:  # the convolution of g and the weight gradient from its columns, row by row
                gx, gw = to_nchw(both[0]), both[1]
            else:
                dxb, cols, layout = forward_batch_last(gpad, w, stride, dilation, groups, keep_tiles=bool(nw))
                if nx:
                    gx = to_nchw(dxb)
                if nw:
                    gw = weight_grad(cols, xb, w.shape, groups, layout)
        if nb and gb is None:
            gb = to_batch_last(g).reshape(g.shape[1], -1).sum(1)
        return gx, gw, gb


def _check_positive(name: str, values, minimum: int) -> None:
    if any(v < minimum for v in values):
        raise RuntimeError(f"{'non-positive' if minimum else 'negative'} {name} is not supported")


@lower_precision
def conv_transpose(input: Tensor, weight: Tensor, bias, stride, padding, output_padding, groups: int, dilation,
                   nd: int) -> Tensor:
    """Shared body of conv_transpose1d/2d/3d: validate as PyTorch does, add the batch dim if missing, run the node."""
    name = f"conv_transpose{nd}d"
    input, unbatched = batched(input, weight, nd, name, {"stride": stride, "padding": padding,
                                                         "output_padding": output_padding, "dilation": dilation})
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    stride, dilation = strides_and_dilations(stride, dilation, nd)
    padding, output_padding = conv_argument(padding, nd, "padding"), conv_argument(output_padding, nd,
                                                                                    "output_padding")
    _check_positive("stride", stride, 1)
    _check_positive("dilation", dilation, 1)
    _check_positive("padding", padding, 0)
    _check_positive("output_padding", output_padding, 0)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got output_padding "
                           f"{list(output_padding)}, stride {list(stride)}, dilation {list(dilation)}")
    w_shape, in_shape = weight._data.shape, input._data.shape
    if groups <= 0 or w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {list(w_shape)} instead")
    if in_shape[1] != w_shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(w_shape)}, expected input{list(in_shape)} to "
                           f"have {w_shape[0]} channels, but got {in_shape[1]} channels instead")
    if bias is not None and bias._data.shape != (w_shape[1] * groups,):
        raise RuntimeError(f"Given transposed=1, weight of size {list(w_shape)}, expected bias to be 1-dimensional "
                           f"with {w_shape[1] * groups} elements, but got bias of size {list(bias.shape)} instead")
    kernel = w_shape[2:]
    out_sp = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1
                   for n, s, p, d, k, op in zip(in_shape[2:], stride, padding, dilation, kernel, output_padding))
    if any(n < 1 for n in out_sp):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, in_shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, out_sp))}). Output size is too small")
    check_weight_dtype(name, input, weight, bias,
                       lambda: takes_onednn(input, weight, stride, dilation, groups, output_padding))
    check_kernel_dtype(input, nd, transposed=True)
    bias = cast_bias(input, bias)
    pads = tuple((p, p - op) for p, op in zip(padding, output_padding))
    def run(x: Tensor) -> Tensor:
        return ConvTransposeNd.apply(x, weight, bias, stride=stride, pads=pads, dilation=dilation, groups=groups,
                                     out_sp=out_sp)

    out = empty_batch(run, input) if input._data.shape[0] == 0 else run(input)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """1-d transposed convolution of (N, C_in, L) with weight (C_in, C_out/groups, k): the gradient of conv1d."""
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """2-d transposed convolution of (N, C_in, H, W) with weight (C_in, C_out/groups, kh, kw): output size per dim
    (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1."""
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """3-d transposed convolution of (N, C_in, D, H, W) with weight (C_in, C_out/groups, kd, kh, kw)."""
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)
