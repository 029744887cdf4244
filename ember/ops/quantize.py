"""Fake quantization for quantization-aware training: values rounded onto an affine integer grid and mapped back
(``fake_quantize_per_tensor_affine``, ``fake_quantize_per_channel_affine``), the gradient passed straight through
where the rounded value lies inside [quant_min, quant_max] and zero outside, as PyTorch's cachemask kernels.

The arithmetic is PyTorch's CPU kernels': x * (1 / scale) rounded half to even, with 1 / scale a float32, the
product in the input's precision (half and bfloat16 through float32); per-tensor quantization then scales the
grid value back in float32 (a float64 input's result is that float32 value), per-channel in the input's
precision. Where the rounded value is NaN
or past int64's range, per-tensor quantization saturates (NaN to quant_min, the infinities to their end) and
per-channel quantization takes quant_min, as PyTorch's int64 conversion on x86-64 does.
"""

from __future__ import annotations

from .. import _dtype
from .._backend import xp
from .._size import c_type_name
from .._tensor import Tensor
from ..autograd.graph import Node

_INT64_EDGE = 2.0**63


class _FakeQuantize(Node):
    """``forward(x, q, zero_point, scale, ...)``: out = (clamp(q, quant_min, quant_max) - zero_point) * scale, the
    rounded grid values ``q`` computed by the caller; backward keeps the gradient where q is in range."""

    diagonal_jacobian = True

    def forward(self, x, q=None, zero_point=0, scale=1.0, quant_min=0, quant_max=0, compute=None):
        self.saved = ((q >= quant_min) & (q <= quant_max),)
        out = (xp.clip(q, quant_min, quant_max) - zero_point).astype(compute) * scale.astype(compute)
        return out.astype(x.dtype, copy=False)

    def backward(self, g):
        return (g * self.saved[0],)


class FakeQuantizePerTensorAffineCachemaskBackward0(_FakeQuantize):
    pass


class FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0(_FakeQuantize):
    pass


class FakeQuantizePerChannelAffineCachemaskBackward0(_FakeQuantize):
    pass


def _check_input(input: Tensor, kernel: str) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"argument 'input' (position 1) must be Tensor, not {c_type_name(input)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_dtype.SCALAR_TYPE_NAMES[input.dtype.name]}'")


def _check_range(quant_min: int, quant_max: int) -> None:
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def _one_value(t, name: str):
    if isinstance(t, Tensor):
        if t.numel() != 1:
            raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted to Scalar")
        return t.item()
    return t


def fake_quantize_per_tensor_affine(input: Tensor, scale: float | Tensor, zero_point: int | Tensor,
                                    quant_min: int, quant_max: int) -> Tensor:
    """``(clamp(round(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``, rounding half
    to even; the gradient passes straight through where the rounded value lies in [quant_min, quant_max] and is
    zero elsewhere. ``scale`` and ``zero_point`` are numbers, or one-element tensors (PyTorch's tensor-qparams
    overload, a different grad_fn); no gradient flows to them, as in PyTorch."""
    _check_input(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    tensor_qparams = isinstance(scale, Tensor) or isinstance(zero_point, Tensor)
    if tensor_qparams:
        if isinstance(scale, Tensor) and scale.requires_grad:
            raise RuntimeError("The function '_fake_quantize_per_tensor_affine_cachemask_tensor_qparams' is not "
                               "differentiable with respect to argument 'scale'. This input cannot have requires_grad "
                               "True.")
        scale, zero_point = _one_value(scale, "scale"), _one_value(zero_point, "zero_point")
    if isinstance(zero_point, float) or isinstance(scale, bool):
        raise TypeError(f"fake_quantize_per_tensor_affine() received an invalid combination of arguments - got "
                        f"(Tensor, {c_type_name(scale)}, {c_type_name(zero_point)}, int, int), but expected "
                        "(Tensor input, float scale, int zero_point, int quant_min, int quant_max) or (Tensor input, "
                        "Tensor scale, Tensor zero_point, int quant_min, int quant_max)")
    zero_point, quant_min, quant_max = int(zero_point), int(quant_min), int(quant_max)
    _check_range(quant_min, quant_max)
    if not tensor_qparams and not quant_min <= zero_point <= quant_max:  # (the tensor overload does not check)
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    product = xp.float64 if input.dtype == _dtype.float64 else xp.float32
    x = input._data.astype(product, copy=False)
    s = xp.float32(scale)
    with xp.errstate(all="ignore"):
        q = xp.rint(x * product(xp.float32(1) / s)).astype(xp.float64) + zero_point
    q = xp.where(xp.isnan(q), -xp.inf, q)  # saturating: NaN to quant_min, the infinities to their end
    node = (FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0 if tensor_qparams
            else FakeQuantizePerTensorAffineCachemaskBackward0)
    return node.apply(input, q=q, zero_point=zero_point, scale=xp.asarray(s), quant_min=quant_min,
                      quant_max=quant_max, compute=xp.float32)


def fake_quantize_per_channel_affine(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int, quant_min: int,
                                     quant_max: int) -> Tensor:
    """Fake quantization with one ``scale`` (float32) and ``zero_point`` (int32, float32 or float16) per slice of
    ``input`` along ``axis``: ``(clamp(round(x / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``
    for integer zero points, ``(clamp(round(x / scale + zero_point), ...) - zero_point) * scale`` for floating
    ones, rounding half to even. The gradient passes straight through where the rounded value lies in
    [quant_min, quant_max] and is zero elsewhere; none flows to ``scale`` or ``zero_point``."""
    _check_input(input, "fake_quantize_channel_cachemask_cpu_type_handling")
    names = _dtype.SCALAR_TYPE_NAMES
    if scale.dtype not in (_dtype.float32, _dtype.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {names[scale.dtype.name]}")
    if zero_point.dtype not in (_dtype.int32, _dtype.float32, _dtype.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found {names[zero_point.dtype.name]}")
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != input.size(axis):
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    _check_range(quant_min, quant_max)
    integer_zp = zero_point.dtype == _dtype.int32
    zp = zero_point._data
    if integer_zp and zp.size and not (int(zp.min()) >= quant_min and int(zp.max()) <= quant_max):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    if not 0 <= axis <= input.dim():
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    compute = xp.float64 if input.dtype == _dtype.float64 else xp.float32
    shape = [1] * input.dim()
    shape[axis] = -1
    x = input._data.astype(compute, copy=False)
    s = scale._data.astype(xp.float32).reshape(shape)
    inv = (xp.float32(1) / s).astype(compute)
    z = zp.reshape(shape).astype(xp.float64 if integer_zp else compute)
    with xp.errstate(all="ignore"):
        q = xp.rint(x * inv).astype(xp.float64) + z if integer_zp else xp.rint(x * inv + z).astype(xp.float64)
    q = xp.where(xp.isnan(q) | (xp.abs(q) >= _INT64_EDGE), -xp.inf, q)  # x86-64's int64 conversion: INT64_MIN
    return FakeQuantizePerChannelAffineCachemaskBackward0.apply(
        input, q=q, zero_point=z.astype(xp.float64), scale=s, quant_min=quant_min, quant_max=quant_max,
        compute=compute)
