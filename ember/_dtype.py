"""ember's dtypes and PyTorch's type-promotion rules.

A ``dtype`` wraps an array-module dtype. Promotion follows PyTorch: Python
scalars and 0-d tensors take part only by *category* (bool < integer < float <
complex), so ``float32_tensor * 2.5`` stays float32 and ``int_tensor * 2.5``
becomes the default float dtype (float32), where NumPy would pick float64; a
complex scalar or 0-d tensor keeps a floating tensor's precision
(``float64_tensor * 1j`` is complex128, ``float32_tensor * 1j`` complex64).

bfloat16 tensors hold arrays of ``ml_dtypes.bfloat16`` (NumPy has no bfloat16; the ml_dtypes package adds
one). ml_dtypes is imported the first time a bfloat16 array is needed, not with ember: its import costs
more than the rest of ``import ember``. Its NumPy dtype has kind "V", so code asks ``np_kind`` for
"f"/"i"/"c", never ``.kind`` directly.
"""

from __future__ import annotations

import functools
import inspect

from ._backend import xp
from ._shown_name import package_name


class dtype:
    """A tensor element type, e.g. ``ember.float32``."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_category")
    _c_type_name = "torch.dtype"  # (as PyTorch's argument parser names the type: ``got (Tensor, torch.dtype)``)

    def __init__(self, name: str, np_dtype, category: int) -> None:
        self.name = name
        self.np = xp.dtype(np_dtype)
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = self.np.kind in "fic"
        self.itemsize = self.np.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating, 3 complex

    def __repr__(self) -> str:
        return f"{package_name()}.{self.name}"

    def __reduce__(self):
        return "bool_" if self.name == "bool" else self.name  # the module-level name it unpickles to

    def to_real(self) -> dtype:
        """PyTorch's ``dtype.to_real()``: a complex dtype's part type (complex64 -> float32, complex32 ->
        float16); any other dtype is itself."""
        return to_real(self)

    def to_complex(self) -> dtype:
        """PyTorch's ``dtype.to_complex()``: the complex dtype of this precision (float32 and bfloat16 ->
        complex64, float64 -> complex128, float16 -> complex32); a complex dtype is itself. An integer or bool
        dtype has none: PyTorch's RuntimeError."""
        if self._category < 2:
            raise RuntimeError(f"Unknown Complex ScalarType for {SCALAR_TYPE_NAMES[self.name]}")
        return complex32 if self is float16 else to_complex(self)


bool_ = dtype("bool", xp.bool_, 0)
uint8 = dtype("uint8", xp.uint8, 1)
int8 = dtype("int8", xp.int8, 1)
int16 = dtype("int16", xp.int16, 1)
int32 = dtype("int32", xp.int32, 1)
int64 = dtype("int64", xp.int64, 1)
float16 = dtype("float16", xp.float16, 2)
float32 = dtype("float32", xp.float32, 2)
float64 = dtype("float64", xp.float64, 2)
complex64 = dtype("complex64", xp.complex64, 3)
complex128 = dtype("complex128", xp.complex128, 3)


class _LazyDtype(dtype):
    """A dtype whose array type comes from an optional package, loaded when first needed (``load`` may raise
    the TypeError that says why there is none)."""

    __slots__ = ("_load",)

    def __init__(self, name: str, itemsize: int, category: int, load) -> None:
        self.name, self.itemsize, self._category, self._load = name, itemsize, category, load
        self.is_floating_point, self.is_complex, self.is_signed = category == 2, category == 3, True

    @property
    def np(self):
        if self._load is not None:
            dtype.np.__set__(self, xp.dtype(self._load()))
            self._load = None
            _BY_NP[dtype.np.__get__(self)] = self
        return dtype.np.__get__(self)


def _load_bfloat16():
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError("ember's bfloat16 tensors need the ml_dtypes package (pip install ml_dtypes)") from None
    return ml_dtypes.bfloat16


def _no_array(name: str):
    """The loader of a dtype ember names but cannot store (complex32: NumPy has no half-precision complex), so
    that programs which only mention it (``torch.chalf`` in a table of dtypes) run."""
    def load():
        raise TypeError(f"ember has no {name} tensors (NumPy has no {name} type); use ember.complex64")

    return load


class _NoArrayDtype(dtype):
    """A dtype PyTorch has whose tensors ember cannot hold; it exists so that programs which only mention it
    (a table of dtypes, a safetensors header) run. Making a tensor of it is a TypeError saying what to use."""

    __slots__ = ()

    def __init__(self, name: str, itemsize: int, category: int, signed: bool = True) -> None:
        self.name, self.itemsize, self._category = name, itemsize, category
        self.is_floating_point, self.is_complex, self.is_signed = category == 2, category == 3, signed

    @property
    def np(self):
        if self._category == 1:  # PyTorch's unsigned types beyond uint8, which its own ops barely support
            raise TypeError(f"ember has no {self.name} tensors (PyTorch supports few operations on them); "
                            "use ember.int64")
        raise TypeError(
            f"ember has no {self.name} tensors (NumPy has no {self.name} type); use "
            f"ember.{'complex64' if self.is_complex else 'float32'} "
            "(ember computes in single precision where PyTorch would use a lower precision)"
        )


class _QuantizedDtype(_NoArrayDtype):
    """A quantized dtype of PyTorch (``torch.qint8``): named, so that programs that mention it (a quantization
    config, a dtype table) run; ember has no quantized tensors."""

    __slots__ = ()

    def __init__(self, name: str, itemsize: int) -> None:
        self.name, self.itemsize, self._category = name, itemsize, 1
        self.is_floating_point = self.is_complex = False

    @property
    def is_signed(self) -> bool:
        raise RuntimeError("isSignedType not supported for quantized types")

    @property
    def np(self):
        raise TypeError(f"ember has no {self.name} tensors (ember has no quantized tensors; PyTorch deprecates "
                        "creating them); keep the float32 tensor, or use ember.int8 for its integer values")


bfloat16 = _LazyDtype("bfloat16", 2, 2, _load_bfloat16)
complex32 = _LazyDtype("complex32", 4, 3, _no_array("complex32"))
# 8-bit floats (weight formats of quantised checkpoints) and the wide unsigned integers (safetensors' U16/U32/U64)
float8_e4m3fn = _NoArrayDtype("float8_e4m3fn", 1, 2)
float8_e5m2 = _NoArrayDtype("float8_e5m2", 1, 2)
float8_e4m3fnuz = _NoArrayDtype("float8_e4m3fnuz", 1, 2)
float8_e5m2fnuz = _NoArrayDtype("float8_e5m2fnuz", 1, 2)
uint16 = _NoArrayDtype("uint16", 2, 1, signed=False)
uint32 = _NoArrayDtype("uint32", 4, 1, signed=False)
uint64 = _NoArrayDtype("uint64", 8, 1, signed=False)
qint8, quint8, qint32 = _QuantizedDtype("qint8", 1), _QuantizedDtype("quint8", 1), _QuantizedDtype("qint32", 4)
quint4x2, quint2x4 = _QuantizedDtype("quint4x2", 1), _QuantizedDtype("quint2x4", 1)

# PyTorch's aliases
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble, chalf = complex64, complex128, complex32

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
_BY_NP = {d.np: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in (*ALL_DTYPES, bfloat16)}

_default_float = float32

# PyTorch's names of the scalar types, as its error messages give them
SCALAR_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                     "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                     "complex64": "ComplexFloat",
                     "complex128": "ComplexDouble"}
# and their C++ names, as PyTorch's typed checks print them (the matrix products' and histograms' dtype errors, out='s
# dtype errors, random_'s range errors; NumPy's wider unsigned types by their names there, for random_)
CPP_TYPE_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
                  "int64": "long int", "uint16": "short unsigned int", "uint32": "unsigned int",
                  "uint64": "long unsigned int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                  "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
                  "complex128": "c10::complex<double>"}


def not_implemented_for(op: str, d: dtype, error: type[Exception] = NotImplementedError) -> Exception:
    """PyTorch's error for a kernel that has no version for dtype ``d``: ``"op" not implemented for 'Long'``."""
    return error(f"\"{op}\" not implemented for '{SCALAR_TYPE_NAMES[d.name]}'")


def get_default_dtype() -> dtype:
    """The dtype of floating tensors created from Python floats (float32)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64)."""
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def from_np(np_dtype) -> dtype:
    """The ember dtype of an array-module dtype; rejects unsupported ones."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        d = xp.dtype(np_dtype)
        if d in _BY_NP:
            return _BY_NP[d]
        if d.kind == "V" and d.name == "bfloat16" and bfloat16.np == d:  # made before ember loaded ml_dtypes
            return bfloat16
        raise TypeError(
            f"ember has no dtype for array dtype {d}; supported: "
            + ", ".join(x.name for x in ALL_DTYPES)
        ) from None


def np_kind(d) -> str:
    """``d.kind`` of an array-module dtype, with bfloat16 (kind "V" in ml_dtypes) as "f"."""
    k = d.kind
    return "f" if k == "V" and d.name == "bfloat16" else k


def can_cast_result(src, dst) -> bool:
    """Whether an op's result of array dtype ``src`` may be written into a tensor of array dtype ``dst`` (in-place
    ops, ``out=``): PyTorch's rule, which refuses only complex into real, floating into integral or bool, and
    anything but bool into bool. Integer narrowing (int64 into uint8) is allowed, as PyTorch does; NumPy's
    "same_kind" would refuse it."""
    src_kind, dst_kind = np_kind(xp.dtype(src)), np_kind(xp.dtype(dst))
    if src_kind == "c":
        return dst_kind == "c"
    if src_kind == "f":
        return dst_kind in "fc"
    return dst_kind != "b" or src_kind == "b"


# the C++ names PyTorch's scalar conversion error gives its integer types
C_INTEGER_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                    "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t"}


def integer_scalar(value: int, np_dtype):
    """A Python int as a scalar of the integer NumPy dtype ``np_dtype``, PyTorch's way: a negative value wraps
    into an unsigned type (-1 -> 255) as long as its magnitude fits, anything else that does not fit is
    PyTorch's RuntimeError (NumPy raises OverflowError for both)."""
    info = xp.iinfo(np_dtype)
    if value > info.max or (value < info.min if info.min < 0 else -value > info.max):
        raise _overflow(np_dtype)
    return xp.asarray(value).astype(np_dtype)[()]


_FILL_BOUNDS: dict = {}  # NumPy dtype -> (its kind, its lowest and largest finite values as floats): read once


def fill_bounds(np_dtype) -> tuple:
    bounds = _FILL_BOUNDS.get(np_dtype)
    if bounds is None:
        kind = np_kind(xp.dtype(np_dtype))
        info = xp.finfo(np_dtype) if kind in "fc" else xp.iinfo(np_dtype) if kind in "iu" else None
        bounds = _FILL_BOUNDS[np_dtype] = (kind, None, None) if info is None else (
            kind, _builtins.float(info.min), _builtins.float(info.max))
    return bounds


def checked_fill(value, np_dtype):
    """A number given as a fill value (``full``, ``fill_``, ``masked_fill``, ``clamp``'s bounds) for a tensor of
    NumPy dtype ``np_dtype``, checked as PyTorch converts it (c10's ``overflows``, compared as doubles): a finite
    number beyond a floating (or complex) dtype's largest value is PyTorch's RuntimeError ("value cannot be
    converted to type c10::Half without overflow"), where NumPy's cast warns and gives inf (infinities and NaN
    pass); so is a float outside an integer dtype's range, an infinity or NaN (NumPy's cast wrapped it or warned),
    and a complex number with an imaginary part for a real dtype (one without is its real part; a bool takes it);
    an int for an integer dtype is converted by ``integer_scalar`` (-1 -> 255, 300 for int8 the same error). A
    NumPy scalar is read as the Python number it holds, as PyTorch's argument parser does. Anything else is
    returned as it is."""
    if value.__class__ is not _builtins.int and value.__class__ is not _builtins.float:
        if isinstance(value, (xp.integer, xp.floating)) or isinstance(value, _builtins.complex):
            # (a NumPy scalar: its Python number; a complex128 is a Python complex, as PyTorch's parser reads it;
            # a complex64 is not, and NumPy's cast of it warns, as under PyTorch)
            value = value.item() if isinstance(value, xp.generic) else value
        if value.__class__ is _builtins.complex and fill_bounds(np_dtype)[0] in "iuf":
            if value.imag != 0:  # (c10's overflows: a complex number for a real type must be real)
                raise _overflow(np_dtype)
            value = value.real
        elif value.__class__ is not _builtins.int and value.__class__ is not _builtins.float:
            return value
    kind, lowest, largest = fill_bounds(np_dtype)
    if value.__class__ is _builtins.int:
        scalar_int(value)
        if kind in "iu":
            return integer_scalar(value, np_dtype)
        if kind == "b":  # (any int in the uint64 range is a bool; NumPy cannot hold one past int64)
            return value != 0
        if kind in "fc" and abs(value) > largest:
            raise _overflow(np_dtype)
    elif kind in "fc":  # (a complex dtype: its parts' range)
        if abs(value) > largest and value - value == 0:  # (finite)
            raise _overflow(np_dtype)
    elif kind in "iu" and not lowest <= value <= largest:  # (NaN too)
        raise _overflow(np_dtype)
    return value


def opmath_scalar(value, d: dtype):
    """A Python number given to a kernel that computes in ``d``'s opmath type (``addcmul``'s and ``addcdiv``'s
    ``value``, ``lerp``'s weight: float for the half precision dtypes, else ``d``), converted as PyTorch's
    ``Scalar.to`` converts it (``checked_fill``): a finite float beyond that type's range, or a complex number
    with an imaginary part for a real one, is its RuntimeError ("value cannot be converted to type float without
    overflow"). Returns the number as ``checked_fill`` does (a real complex number: its real part)."""
    return checked_fill(value, xp.dtype(xp.float32) if d.is_floating_point and d.itemsize == 2 else to_np(d))


def scalar_int(value: int) -> int:
    """A Python int given where PyTorch takes a Scalar (a fill value, ``alpha``, ``lerp``'s weight, an activation's
    parameter), as its argument parser reads it: an int64, a uint64 from 2**63 on, its OverflowError beyond that
    (before any other check of the call)."""
    if not -9223372036854775808 <= value <= 18446744073709551615:
        raise OverflowError("int too big to convert" if value > 0 else "can't convert negative int to unsigned")
    return value


def scalar_tensor_number(value, op: str, argument: str, expected: str = "Number", position: int | None = None):
    """A tensor given where PyTorch takes a Scalar (``alpha=``, ``value=``; ``expected="float"``: a double,
    ``isclose``'s ``rtol``), as its argument parser reads it: a 0-d tensor that does not require grad is its Python
    number (so no gradient reaches it); any other tensor is its TypeError, which names the argument's ``position``
    (counted from 1) as PyTorch's does for an argument that has one (``full(): argument 'fill_value' (position 2)
    must be Number``; a keyword-only one, ``alpha=``, has none)."""
    if not value._data.ndim and not value.requires_grad:
        return value.item()
    raise scalar_argument_error(op, argument, expected, "Tensor", position)


def scalar_argument_error(op: str, argument: str, expected: str, shown: str, position: int | None) -> TypeError:
    """PyTorch's TypeError for a Scalar argument given a ``shown`` (its type's name as PyTorch's C++ names it): with
    its ``position``, which ``keyword_scalars`` drops where the argument was given by keyword."""
    error = TypeError(f"{op}(): {described_argument(argument, position)} must be {expected}, not {shown}")
    # (for keyword_scalars, which drops the position, and method_scalars, which counts it as a method's)
    error.scalar_argument = (op, argument, expected, shown, position)
    return error


def keyword_scalars(fn):
    """``fn``, whose TypeError for a tensor given as a Scalar argument (``scalar_tensor_number``) names no position
    for an argument given by keyword, as PyTorch's parser (``full((2,), t)``: "argument 'fill_value' (position
    2)"; ``full((2,), fill_value=t)``: "argument 'fill_value'"), which the op's own code cannot see. The wrapper
    costs one call; a wrapper of its own (``_creation._allocating``) can instead call ``unpositioned_by_keyword``
    in its ``except``."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            error = unpositioned_by_keyword(e, kwargs)
            if error is e:
                raise
            raise error from None

    return run


def unpositioned_by_keyword(error: TypeError, kwargs: dict) -> TypeError:
    """``error`` without its position when it is ``scalar_tensor_number``'s for an argument among the call's
    ``kwargs``; else ``error`` itself."""
    op, argument, expected, shown, _ = getattr(error, "scalar_argument", (None,) * 5)
    if argument not in kwargs:
        return error
    return TypeError(f"{op}(): {described_argument(argument)} must be {expected}, not {shown}")


def method_scalars(method):
    """A Tensor ``method`` that calls its function's implementation (``x.isclose(y, t)`` is ``isclose(x, y, t)``):
    a Scalar argument's TypeError (``scalar_argument_error``) names its position as PyTorch's parser counts a
    method's, the input not among them (``x.isclose(y, t)``: "argument 'rtol' (position 2)", where the function's
    is position 3), and none for an argument given by keyword."""

    @functools.wraps(method)
    def run(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except TypeError as e:
            if not hasattr(e, "scalar_argument"):
                raise
            op, argument, expected, shown, position = e.scalar_argument
            by_keyword = argument in kwargs or position is None
            raise scalar_argument_error(op, argument, expected, shown, None if by_keyword else position - 1) \
                from None

    return run


def number_parameters(shown_as: dict[str, str] | None = None, **expected: str):
    """A Tensor method whose parameters named in ``expected`` PyTorch's argument parser reads as numbers (their
    kinds as its messages name them: ``"Number"``, ``"float"``, ``"int"``): a tensor given for one is
    ``scalar_tensor_number``'s (a 0-d one that needs no gradient: its Python number; any other: PyTorch's
    TypeError, ``x.renorm(t, 0, 1.0)``: "renorm(): argument 'p' (position 1) must be Number, not Tensor", the
    position counted as a method's, the input not among them, and none for an argument given by keyword), before
    the method reads it. Anything else that is not a number of that kind (a string, a ``Fraction``, a complex for
    a ``"float"``, None where the parameter's annotation does not admit it) is PyTorch's TypeError ("normal_():
    argument 'mean' (position 1) must be float, not str"); NumPy scalars pass, as PyTorch's parser reads them.
    Plain numbers pass with one look at their class. ``shown_as``: PyTorch's names of parameters that Python cannot
    spell (``uniform_``'s ``from``), for its messages."""
    shown = shown_as or {}

    def decorate(method):
        op = method.__name__
        signature = inspect.signature(method)
        parameters = list(signature.parameters)[1:]  # (after self: position 1 is the first)
        positions = {name: parameters.index(name) for name in expected}
        optional = {name for name in expected if "None" in str(signature.parameters[name].annotation)}

        def checked(name: str, value, position: int | None):
            if value.__class__ in _PLAIN and (value is not None or name in optional):
                return value
            if _is_tensor(value):
                return scalar_tensor_number(value, op, shown.get(name, name), expected[name], position)
            if isinstance(value, xp.generic) or (expected[name] == "Number" and isinstance(value, _builtins.complex)):
                return value
            from ._size import c_type_name  # (ember._size imports this module)

            raise TypeError(f"{op}(): {described_argument(shown.get(name, name), position)} must be "
                            f"{expected[name]}, not {c_type_name(value)}")

        @functools.wraps(method)
        def run(self, *args, **kwargs):
            if args:
                for name, i in positions.items():
                    if i < len(args) and (args[i].__class__ not in _PLAIN or args[i] is None):
                        args = (*args[:i], checked(name, args[i], i + 1), *args[i + 1:])
            if kwargs:
                for name in expected:
                    if name in kwargs:
                        kwargs[name] = checked(name, kwargs[name], None)
            return method(self, *args, **kwargs)

        return run

    return decorate


def _is_tensor(value) -> bool:
    from ._tensor import Tensor  # (ember._tensor imports this module)

    return isinstance(value, Tensor)


def described_argument(argument: str, position: int | None = None) -> str:
    """An argument as PyTorch's argument parser names it in a TypeError: ``argument 'p' (position 3)``, or
    ``argument 'alpha'`` for a keyword-only one (``position`` None)."""
    return f"argument '{argument}'" if position is None else f"argument '{argument}' (position {position})"


def scalar_ints(values) -> None:
    """``scalar_int`` of each Python int (not bool) among ``values``; other values pass."""
    for v in values:
        if v.__class__ is _builtins.int:
            scalar_int(v)


def checked_scalar(value, np_dtype):
    """``value`` as PyTorch's ``scalar_tensor`` of NumPy dtype ``np_dtype`` converts it (``x[i] = value`` makes one
    too): checked as ``checked_fill``, except that a half precision dtype checks nothing (past its range: inf)."""
    if xp.dtype(np_dtype).itemsize == 2 and fill_bounds(np_dtype)[0] == "f":
        return value
    return checked_fill(value, np_dtype)


def fill_number(value, np_dtype, numel: int):
    """A number filling a tensor of NumPy dtype ``np_dtype`` and ``numel`` elements (``fill_``, ``full``,
    ``full_like``, ``new_full``, ``nn.init.constant_``): checked as ``checked_fill``, except that PyTorch fills a
    one-element tensor another way, which converts to a half precision dtype unchecked: 1e5 into float16 is inf
    (returned so converted, through float32 as PyTorch rounds a number for those dtypes)."""
    if numel == 1 and (value.__class__ is _builtins.float or value.__class__ is _builtins.int) \
            and xp.dtype(np_dtype).itemsize == 2 and fill_bounds(np_dtype)[0] == "f":
        if value.__class__ is _builtins.int:
            scalar_int(value)
        with xp.errstate(over="ignore"):  # (past the range: inf, as PyTorch's, without NumPy's warning)
            return xp.asarray(xp.float32(value), dtype=np_dtype)[()]
    return checked_fill(value, np_dtype)


def _overflow(np_dtype) -> RuntimeError:
    """PyTorch's error for a value that does not fit ``np_dtype`` (its C type named as c10 does: int8_t)."""
    name = xp.dtype(np_dtype).name
    return RuntimeError(f"value cannot be converted to type {C_INTEGER_NAMES.get(name) or CPP_TYPE_NAMES[name]} "
                        "without overflow")


def to_np(d):
    """Array-module dtype for an ember dtype (also accepts NumPy dtypes, names and Python types)."""
    if isinstance(d, dtype):
        return d.np
    if d is None:
        return None
    if d in PYTHON_TYPES:
        return PYTHON_TYPES[d].np
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d].np
    return from_np(xp.dtype(d)).np


def parsed_number(value: xp.generic) -> int | float | complex:
    """A NumPy scalar as PyTorch's argument parser reads it where a number (a Scalar, or a Tensor given a number)
    is expected: an integer one an int, a ``complex128`` (a Python complex) a complex, and any other a float
    (``np.bool_``, ``np.float32``; ``np.complex64``'s real part, with NumPy's ComplexWarning, as ``float()`` reads
    it). So ``int_tensor.add_(np.float32(1.5))`` and ``int_tensor + np.bool_(True)`` are a float's."""
    if value.dtype.kind in "iu":
        return _builtins.int(value)
    if isinstance(value, _builtins.complex):
        return _builtins.complex(value)
    return _builtins.float(value)


def scalar_category(value) -> int:
    """Category (0 bool, 1 integer, 2 float, 3 complex) of a Python/NumPy scalar."""
    if isinstance(value, (builtins_bool, xp.bool_)):
        return 0
    if isinstance(value, (builtins_int, xp.integer)):
        return 1
    if isinstance(value, (builtins_float, xp.floating)) or np_kind(getattr(value, "dtype", xp.dtype(object))) == "f":
        return 2
    if isinstance(value, (builtins_complex, xp.complexfloating)):
        return 3
    raise TypeError(f"expected a number, got {type(value).__name__}")


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's ``promote_types`` for two tensor dtypes.

    Across categories the higher category's dtype wins (int64 with float32 is float32, where
    NumPy would widen to float64), except that floating with complex keeps the wider precision
    (float64 with complex64 is complex128); within a category NumPy's rule is PyTorch's.
    """
    if a is b:
        return a
    if a._category != b._category and a._category + b._category != 5:
        return a if a._category > b._category else b
    return from_np(xp.promote_types(a.np, b.np))


def combine_categories(higher: dtype, lower: dtype) -> dtype:
    """PyTorch's result of a dimensioned operand of dtype ``higher`` with a 0-d tensor or scalar of
    dtype ``lower``: the higher category wins, and a complex ``lower`` with a floating ``higher``
    keeps ``higher``'s precision (float64 tensor + complex64 scalar is complex128)."""
    if lower._category <= higher._category:
        return higher
    if lower._category == 3 and higher._category == 2:
        return to_complex(higher)
    return lower


def to_complex(d: dtype) -> dtype:
    """The complex dtype with ``d``'s precision (float64 -> complex128; float16/float32 -> complex64)."""
    if d._category == 3:
        return d
    return complex128 if d is float64 else complex64


def to_real(d: dtype) -> dtype:
    """The real dtype of a complex dtype's parts (complex64 -> float32, complex32 -> float16); other dtypes
    unchanged."""
    if d._category != 3:
        return d
    return float32 if d is complex64 else float16 if d is complex32 else float64


def category_dtype(category: int) -> dtype:
    """The dtype a lone scalar of this category gets (bool, int64, default float, default complex)."""
    return (bool_, int64, _default_float, to_complex(_default_float))[category]


import builtins as _builtins  # noqa: E402  (kept at the end: names above shadow builtins)

# the numbers number_parameters passes with one look (None: a parameter's default)
_PLAIN = (_builtins.int, _builtins.float, _builtins.bool, type(None))

builtins_float, builtins_int, builtins_bool = _builtins.float, _builtins.int, _builtins.bool
builtins_complex = _builtins.complex
PYTHON_TYPES = {builtins_float: float64, builtins_int: int64, builtins_bool: bool_, builtins_complex: complex128}


def from_python_type(d):
    """PyTorch's dtype for a Python type given as one (``dtype=float`` is float64 and ``complex`` complex128, whatever
    the default dtype; ``int`` int64; ``bool`` bool); any other ``d`` as it is."""
    return PYTHON_TYPES.get(d, d) if d.__class__ is type else d
