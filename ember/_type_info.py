"""``finfo`` / ``iinfo``: the numerical limits of a floating or integer dtype, as PyTorch reports them."""

from __future__ import annotations

from . import _dtype
from ._backend import xp

# The floating formats that NumPy has no type for, as PyTorch reports them: bits, eps, max, smallest normal,
# decimal digits of precision (min is -max).
_FORMATS = {
    "bfloat16": (16, 2.0**-7, float.fromhex("0x1.fep127"), 2.0**-126, 2),
    "float8_e4m3fn": (8, 2.0**-3, 448.0, 2.0**-6, 0),
    "float8_e5m2": (8, 2.0**-2, 57344.0, 2.0**-14, 0),
    "float8_e4m3fnuz": (8, 2.0**-3, 240.0, 2.0**-7, 0),
    "float8_e5m2fnuz": (8, 2.0**-3, 57344.0, 2.0**-15, 0),
}


class finfo:  # noqa: N801  (PyTorch's name)
    """Limits of a floating dtype (default: the default dtype): ``bits``, ``eps``, ``max``, ``min``,
    ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name, as PyTorch gives it)."""

    def __init__(self, type: _dtype.dtype | None = None) -> None:
        d = _dtype.get_default_dtype() if type is None else type
        if isinstance(d, _dtype.dtype) and d.is_complex:  # PyTorch: the limits of its real parts
            d = _dtype.to_real(d)
        if not isinstance(d, _dtype.dtype) or not d.is_floating_point:
            raise TypeError(f"finfo() requires a floating point input type (got {d}); use iinfo for integer types")
        if d.name in _FORMATS:
            self.bits, self.eps, self.max, self.smallest_normal, precision = _FORMATS[d.name]
            self.min = -self.max
        else:
            info = xp.finfo(d.np)
            self.bits, self.eps, self.max, self.min = int(info.bits), float(info.eps), float(info.max), float(info.min)
            self.smallest_normal, precision = float(info.smallest_normal), int(info.precision)
        self.dtype, self.tiny = d.name, self.smallest_normal
        self.resolution = 10.0 ** -precision  # exactly 10^-digits, as PyTorch gives it

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801  (PyTorch's name)
    """Limits of an integer dtype: ``bits``, ``max``, ``min`` and ``dtype`` (its name)."""

    def __init__(self, type: _dtype.dtype) -> None:
        if not isinstance(type, _dtype.dtype) or type.is_floating_point or type.is_complex:
            raise TypeError(f"iinfo() requires an integer input type (got {type}); use finfo for floating types")
        info = None if type.name == "bool" else xp.iinfo(type.name)  # the name: uint16-64 hold no ember tensors
        self.bits = 8 if info is None else int(info.bits)
        self.min, self.max = (0, 1) if info is None else (int(info.min), int(info.max))
        self.dtype = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
