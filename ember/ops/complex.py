"""Complex tensors: their parts as views (real, imag, view_as_real, view_as_complex), building them
(complex, polar), and conj / angle.

Gradients follow PyTorch's convention: for a real loss L of z = x + iy, ``z.grad`` is
dL/dx + i dL/dy; an op whose output is real passes back a complex gradient to a complex input
(``real``: g + 0i, ``imag``: 0 + ig), and one whose input is real keeps the real part.

Differs from PyTorch: ``conj()`` of a complex tensor is a new tensor holding the conjugate (PyTorch returns
a view with a conjugate bit set, resolved lazily); ``is_conj()`` is therefore always False and
``resolve_conj()`` returns the tensor itself.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._backend import xp
from .._meta import iterator_layout
from .._size import c_type_name
from .._tensor import Tensor
from ..autograd.graph import Node, shown_as, torch_named
from ..autograd.recorded import RecordedArray, is_recorded
from ..autograd.saved_attributes import saved_tensor
from .elementwise import cast, is_inexact

_SCALAR_TYPE = _dtype.SCALAR_TYPE_NAMES


def real_view(z):
    """A real view of complex array ``z`` with a last dimension of 2 (real, imaginary), any strides (a recorded
    array under create_graph: ``view_as_real``, recorded)."""
    if is_recorded(z):
        return RecordedArray(view_as_real(z.t))
    part = _PART_DTYPES.get(z.dtype)
    if part is not None and type(z) is xp.ndarray:
        # (a size-1 last axis takes the dtype of half the itemsize whatever the other strides: the view
        # ``as_strided`` makes below, without its Python-level cost, a few µs a call)
        return z[..., None].view(part)
    re = z.real
    return xp.lib.stride_tricks.as_strided(re, z.shape + (2,), re.strides + (re.itemsize,))


_PART_DTYPES = {xp.dtype(xp.complex64): xp.dtype(xp.float32), xp.dtype(xp.complex128): xp.dtype(xp.float64)}


def complex_view(a):
    """A complex view of real array ``a`` whose last dimension (2, stride 1) is (real, imaginary) (a recorded
    array under create_graph: ``view_as_complex`` of a contiguous copy, recorded)."""
    if is_recorded(a):
        return RecordedArray(view_as_complex(a.t.contiguous()))
    return a.view(xp.complex64 if a.dtype == xp.float32 else xp.complex128)[..., 0]


class Real(Node):
    is_view = True

    def forward(self, z):
        self.dtype = z.dtype
        return z.real

    def backward(self, g):  # dL/dRe z = g: the gradient is g + 0i
        return (g.astype(self.dtype),)


class Imag(Node):
    is_view = True

    def forward(self, z):
        self.dtype = z.dtype
        return z.imag

    def backward(self, g):  # dL/dIm z = g: the gradient is 0 + ig
        if is_recorded(g):  # create_graph: the same, recorded
            return (RecordedArray(complex(xp.zeros_like(g).t, g.t)),)
        out = xp.zeros(g.shape, dtype=self.dtype)
        out.imag = g
        return (out,)


@torch_named("ViewAsRealBackward0")
class ViewAsReal(Node):
    is_view = True

    def forward(self, z):
        return real_view(z)

    def backward(self, g):
        return (complex_view(g if is_recorded(g) else xp.ascontiguousarray(g)),)  # (not a NumPy protocol)


@torch_named("ViewAsComplexBackward0")
class ViewAsComplex(Node):
    is_view = True

    def forward(self, a):
        return complex_view(a)

    def backward(self, g):
        return (real_view(g),)


class Complex(Node):
    def forward(self, re, im):
        out = xp.empty(xp.broadcast_shapes(re.shape, im.shape), dtype=xp.result_type(re, im, xp.complex64))
        out.real, out.imag = re, im
        return iterator_layout(out, (re, im))  # (laid out by both operands, as PyTorch's)

    def backward(self, g):
        return g.real, g.imag


class Polar(Node):
    _saved_result, _raw_saved_result = saved_tensor(0)

    def forward(self, r, theta):
        out = xp.empty(xp.broadcast_shapes(r.shape, theta.shape), dtype=xp.result_type(r, theta, xp.complex64))
        out.real, out.imag = r * xp.cos(theta), r * xp.sin(theta)
        out = iterator_layout(out, (r, theta))  # (as Complex's)
        self.saved = (out,)
        return out

    def backward(self, g):  # PyTorch's: grad_abs = Re(conj(g) sgn(out)), grad_angle = Re(conj(g) i out)
        from .unary import sgn_array

        (out,) = self.saved
        gc = g.conj()
        na, nt = self.needs_input_grad
        return ((gc * sgn_array(out)).real if na else None), ((gc * out * 1j).real if nt else None)


class Conj(Node):
    def forward(self, z):
        return z.conj()

    def backward(self, g):
        return (g.conj(),)


class Angle(Node):
    _saved_self, _raw_saved_self = saved_tensor(0)

    def forward(self, z):
        self.saved = (z,)
        if z.dtype.kind == "c":
            return xp.angle(z)
        return xp.where(z < 0, z.dtype.type(math.pi), xp.where(xp.isnan(z), z, 0)).astype(z.dtype)

    def backward(self, g):  # d angle: i z / |z|^2 (0 at 0); a real input's angle is piecewise constant
        (z,) = self.saved
        if z.dtype.kind != "c":
            return (xp.zeros_like(g),)
        with xp.errstate(invalid="ignore", divide="ignore"):
            d = xp.where(z == 0, 0, g * z * 1j / (z.real * z.real + z.imag * z.imag))
        return (d.astype(z.dtype),)


# --------------------------------------------------------------------- public functions
def is_complex(input: Tensor) -> bool:
    """True for complex64 / complex128 tensors."""
    return input._data.dtype.kind == "c"


def real(input: Tensor) -> Tensor:
    """The real parts, as a view (a real tensor: the tensor itself). PyTorch's ``view_as_real(z).select(-1, 0)``,
    so that its history reads as PyTorch's (SelectBackward0 over ViewAsRealBackward0)."""
    if input._data.dtype.kind != "c":
        return input
    return _part(input, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary parts, as a view; a RuntimeError for a real tensor, as PyTorch (``view_as_real(z).select(-1,
    1)``, as ``real``)."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part(input, 1)


def _part(z: Tensor, k: int) -> Tensor:
    """Part ``k`` (0 real, 1 imaginary) of complex ``z``: one node without grad (nothing to show), else PyTorch's
    two."""
    if not z.requires_grad:
        return (Real if k == 0 else Imag).apply(z)
    # (the last dim by its index: PyTorch's SelectBackward0 shows the dim wrapped, ``_saved_dim`` 2 of a 2-d z)
    return view_as_real(z).select(z._data.ndim, k)


def view_as_real(input: Tensor) -> Tensor:
    """A real view of a complex tensor with one more dimension of size 2: (real, imaginary)."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a float32/float64 tensor whose last dimension (size 2, stride 1) holds (real, imaginary)."""
    a = input._data
    if a.dtype not in (xp.float32, xp.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {_SCALAR_TYPE[input.dtype.name]} (ember has no complex32 for half)")
    if a.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = a.itemsize
    if a.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * item) for s, n in zip(a.strides[:-1], a.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    from ..storage import storage_offset

    if storage_offset(input) % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return ViewAsComplex.apply(input)


def _parts_operands(name: str, a: Tensor, b: Tensor, first: str, second: str):
    """PyTorch's checks of ``complex(real, imag)`` / ``polar(abs, angle)``: tensors of one float dtype."""
    for t, what in ((a, first), (b, second)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {c_type_name(t)}")
    if a._data.dtype not in (xp.float32, xp.float64) or b._data.dtype not in (xp.float32, xp.float64):
        raise RuntimeError(f"{name}(): expected both inputs to be Float or Double tensors but got "
                           f"{_SCALAR_TYPE[a.dtype.name]} and {_SCALAR_TYPE[b.dtype.name]}")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{name}(): expected {first} and {second} to have the same dtype, but got: "
                           f"{_SCALAR_TYPE[a.dtype.name]} and {_SCALAR_TYPE[b.dtype.name]}")


def complex(real: Tensor, imag: Tensor) -> Tensor:
    """The complex tensor ``real + i imag`` (broadcast; float32 -> complex64, float64 -> complex128)."""
    _parts_operands("complex", real, imag, "real", "imag")
    return Complex.apply(real, imag)


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    _parts_operands("polar", abs, angle, "abs", "angle")
    return Polar.apply(abs, angle)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (a real tensor: the tensor itself). ember computes it now: see the module's note."""
    return Conj.apply(input) if input._data.dtype.kind == "c" else input


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, always a new tensor for complex input (a real tensor: itself, as PyTorch)."""
    return shown_as(conj(input), "ConjPhysicalBackward0") if input._data.dtype.kind == "c" else input


def resolve_conj(input: Tensor) -> Tensor:
    """The tensor itself: ember has no lazy conjugate bit to resolve."""
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """The tensor itself: ember has no lazy negation bit to resolve."""
    return input


def is_conj(input: Tensor) -> bool:
    """Always False: ember's ``conj()`` holds the conjugate values themselves."""
    return False


def is_neg(input: Tensor) -> bool:
    """Always False: ember has no lazy negation bit."""
    return False


def angle(input: Tensor) -> Tensor:
    """The argument of each element in (-pi, pi] (real input: pi for negatives, 0 otherwise; integers
    compute in the default float dtype)."""
    if not is_inexact(input):
        input = cast(input, _dtype.get_default_dtype())
    return Angle.apply(input)


def sgn(input: Tensor) -> Tensor:
    """``z / |z|`` (0 at 0) for complex tensors, ``sign`` for real ones."""
    if input._data.dtype.kind != "c":
        from ..autograd.graph import version_checked
        from .unary import sign

        out = sign(input)
        # (PyTorch's sgn, unlike sign, saves its input and result; its node is SgnBackward0)
        return shown_as(version_checked(out, input, out), "SgnBackward0")
    return Sgn.apply(input)


@torch_named("SgnBackward0")
class Sgn(Node):
    """The complex sign ``z / |z|`` (0 at 0). Its gradient is PyTorch's, ``(g - sgn(z)^2 conj(g)) / (2 |z|)``
    masked to 0 where ``z`` is 0 (the quotient's own derivative there would pass ``g`` through); differentiated
    again, the masked 0 / 0 makes NaN there, as PyTorch's."""

    def forward(self, z):
        from .unary import sgn_array

        out = sgn_array(z)
        self.saved = (z, out)
        return out

    def backward(self, g):
        z, out = self.saved
        r = xp.abs(z)
        with xp.errstate(divide="ignore", invalid="ignore"):
            return (xp.where(r == 0, 0, (g - out * out * g.conj()) / (r * 2)),)


def conj_transpose(input: Tensor, name: str) -> Tensor:
    """The conjugate transpose of the last two dimensions, checked as PyTorch's ``name`` (mH, H, adjoint())
    checks it (on 0-D input, deprecated: ``conj``)."""
    from .shape import matrices_only, transpose

    if not matrices_only(input, name, "Consider using x.conj()."):
        return conj(input)
    return transpose(conj(input), -2, -1)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (``mH``)."""
    return conj_transpose(input, "adjoint()")


def H(input: Tensor) -> Tensor:
    """``Tensor.H``: the conjugate transpose of a matrix (of 2-D input only; 0-D input, deprecated: ``conj``)."""
    if input._data.ndim not in (0, 2):
        batches = " For batches of matrices, consider using tensor.mH" if input._data.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {input._data.ndim}-D tensor."
                           + batches)
    return conj_transpose(input, "H")


def set_real(x: Tensor, value) -> None:
    """``x.real = value``: copies ``value`` into the real parts (into ``x`` itself when it is real)."""
    from .inplace import copy_

    copy_(real(x), value)


def set_imag(x: Tensor, value) -> None:
    """``x.imag = value``: copies ``value`` into the imaginary parts."""
    from .inplace import copy_

    copy_(imag(x), value)
