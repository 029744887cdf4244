"""``ember.testing._comparison``: ``assert_close`` and its default tolerances, as ``torch.testing._comparison``.

Compares tensors (NumPy arrays too), Python numbers, and sequences and mappings of them, element by
element: ``|actual - expected| <= atol + rtol * |expected|``, with PyTorch's default tolerances for the
dtype when none are given, and PyTorch's messages on a mismatch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import _dtype
from .._backend import xp
from .._dtype import np_kind
from .._missing import module_getattr
from .._tensor import Tensor

__all__ = ["assert_close", "assert_allclose", "default_tolerances"]

# dtype -> (rtol, atol), PyTorch's defaults; every other dtype compares exactly
_DTYPE_PRECISIONS = {
    _dtype.float16: (0.001, 1e-5), _dtype.bfloat16: (0.016, 1e-5), _dtype.float32: (1.3e-6, 1e-5),
    _dtype.float64: (1e-7, 1e-7), _dtype.complex32: (0.001, 1e-5), _dtype.complex64: (1.3e-6, 1e-5),
    _dtype.complex128: (1e-7, 1e-7),
}
# quantized dtypes (named only in ember) take float32's, as PyTorch compares their dequantized values
_DTYPE_PRECISIONS.update({d: _DTYPE_PRECISIONS[_dtype.float32] for d in (
    _dtype.quint8, _dtype.quint2x4, _dtype.quint4x2, _dtype.qint8, _dtype.qint32)})
_BY_NAME = {d.name: tolerances for d, tolerances in _DTYPE_PRECISIONS.items()}


def default_tolerances(*inputs: Tensor | _dtype.dtype,
                       dtype_precisions: dict[_dtype.dtype, tuple[float, float]] | None = None) -> tuple[float, float]:
    """The loosest ``(rtol, atol)`` of the inputs' dtypes (tensors or dtypes), from ``dtype_precisions``
    (default: ``assert_close``'s table; a dtype it lacks counts as ``(0.0, 0.0)``), as PyTorch's."""
    dtypes = []
    for x in inputs:
        if isinstance(x, Tensor):
            dtypes.append(x.dtype)
        elif isinstance(x, _dtype.dtype):
            dtypes.append(x)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(x)} instead.")
    precisions = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[precisions.get(d, (0.0, 0.0)) for d in dtypes], strict=True)
    return max(rtols), max(atols)


def _tolerances(*dtypes) -> tuple[float, float]:
    """``default_tolerances`` of NumPy dtypes (the arrays compared)."""
    pairs = [_BY_NAME.get(xp.dtype(d).name, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _number(v, dtype) -> Any:
    return bool(v) if dtype.kind == "b" else int(v) if dtype.kind in "iu" else complex(v) if dtype.kind == "c" \
        else float(v)


def _where(path: list) -> str:
    return "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in path) if path else ""


def _fail(text: str, msg: str | Callable[[str], str] | None, path: list):
    text += _where(path)
    raise AssertionError(msg(text) if callable(msg) else msg if msg is not None else text)


def _element_strides(x) -> tuple:
    """A tensor's ``stride()``, or an array's strides in elements (PyTorch compares arrays as ``from_numpy``)."""
    return x.stride() if isinstance(x, Tensor) else tuple(s // x.itemsize for s in x.strides)


def _compare_arrays(a, e, scalar: bool, path: list, rtol, atol, equal_nan: bool, check_dtype: bool, msg,
                    strides: tuple | None = None) -> None:
    """``strides``: the (actual, expected) strides when ``check_stride`` asks for them to be compared."""
    if a.shape != e.shape:
        from .._size import Size

        _fail(f"The values for attribute 'shape' do not match: {Size(a.shape)!r} != {Size(e.shape)!r}.", msg, path)
    if strides is not None and strides[0] != strides[1]:
        _fail(f"The values for attribute 'stride()' do not match: {strides[0]} != {strides[1]}.", msg, path)
    if check_dtype and a.dtype != e.dtype:
        from .._dtype import from_np

        _fail(f"The values for attribute 'dtype' do not match: {from_np(a.dtype)!r} != {from_np(e.dtype)!r}.",
              msg, path)
    if rtol is None:
        rtol, atol = _tolerances(a.dtype, e.dtype)
    both = xp.promote_types(a.dtype, e.dtype)  # integers and bools compare in the default float dtype, as PyTorch
    if both.kind == "c":  # complex values compare by the modulus of their difference, as PyTorch's isclose
        work = xp.complex128 if scalar else xp.promote_types(both, xp.complex64)
    else:
        work = xp.float64 if scalar else xp.promote_types(both, xp.float32) if np_kind(both) == "f" else xp.float32
    af, ef = a.astype(work), e.astype(work)
    with xp.errstate(invalid="ignore", over="ignore"):  # inf - inf is NaN (told apart below), not a warning
        diff = xp.abs(af - ef)
        ok = diff <= atol + rtol * xp.abs(ef)
    ok |= (af == ef)  # infinities of the same sign
    if equal_nan:
        ok |= xp.isnan(af) & xp.isnan(ef)
    if ok.all():
        return
    close = "close" if (rtol or atol) else "equal"
    with xp.errstate(divide="ignore", invalid="ignore"):
        rel = diff / xp.abs(ef)
    exact = both if both.kind != "c" else xp.dtype(xp.float64)  # the differences of complex values are real
    if scalar:
        rel_v = float(rel.reshape(-1)[0])
        abs_v = _number(diff.reshape(-1)[0], exact if exact.kind != "b" else xp.dtype(int))
        lines = [f"Scalars are not {close}!", "", f"Expected {_number(e.reshape(-1)[0], e.dtype)} but got "
                 f"{_number(a.reshape(-1)[0], a.dtype)}.", f"Absolute difference: {abs_v}"
                 + (f" (up to {atol} allowed)" if close == "close" else ""),
                 f"Relative difference: {rel_v}" + (f" (up to {rtol} allowed)" if close == "close" else "")]
        _fail("\n".join(lines), msg, path)
    bad = int((~ok).sum())

    def greatest(values, limit, what):
        flat = values.reshape(-1)
        nan = xp.isnan(flat)
        i = int(xp.argmax(nan)) if nan.any() else int(xp.argmax(flat))
        v = flat[i]
        shown = _number(v, exact) if what == "absolute" and exact.kind in "iu" else float(v)
        return (f"Greatest {what} difference: {shown} at index {tuple(int(j) for j in xp.unravel_index(i, a.shape))}"
                + (f" (up to {limit} allowed)" if close == "close" else ""))

    lines = [f"Tensor-likes are not {close}!", "", f"Mismatched elements: {bad} / {a.size} "
             f"({100 * bad / a.size:.1f}%)", greatest(diff, atol, "absolute"), greatest(rel, rtol, "relative")]
    _fail("\n".join(lines), msg, path)


def _compare(actual, expected, path: list, **options) -> None:
    tensor_like = (Tensor, xp.ndarray)
    number = (bool, int, float, complex)
    if isinstance(actual, tensor_like) and isinstance(expected, tensor_like):
        a = actual._data if isinstance(actual, Tensor) else actual
        e = expected._data if isinstance(expected, Tensor) else expected
        a, e = xp.asarray(a), xp.asarray(e)
        check_stride = options.pop("check_stride", False)
        strides = (_element_strides(actual), _element_strides(expected)) if check_stride else None
        _compare_arrays(a, e, a.ndim == 0, path, **options, strides=strides)
    elif isinstance(actual, number) and isinstance(expected, number):
        a, e = xp.asarray(actual), xp.asarray(expected)
        options.pop("check_stride", None)  # (a number has no strides)
        _compare_arrays(a, e, True, path, **{**options, "check_dtype": False})
    elif isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                  f"{sorted(set(expected) - set(actual), key=repr)}\nAdditional keys in the actual mapping: "
                  f"{sorted(set(actual) - set(expected), key=repr)}", options["msg"], path)
        for k in expected:
            _compare(actual[k], expected[k], [*path, k], **options)
    elif (isinstance(actual, Sequence) and isinstance(expected, Sequence)
          and not isinstance(actual, str) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", options["msg"], path)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, [*path, i], **options)
    elif actual.__class__ is expected.__class__ and actual == expected:
        return
    else:
        raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``:
    same shapes (and dtypes, unless ``check_dtype=False``), every element within ``atol + rtol * |expected|``
    (default tolerances by dtype, ``default_tolerances``: float32 and complex64 1.3e-6 / 1e-5, float64 and
    complex128 1e-7 / 1e-7, float16 1e-3 / 1e-5, bfloat16 1.6e-2 / 1e-5, exact otherwise; complex values by
    the modulus of their difference); NaNs equal only with ``equal_nan``. Sequences and mappings compare item
    by item.
    ``check_stride=True`` also requires equal ``stride()`` (checked after the shape, before the dtype, as
    PyTorch). Tensors are all on the CPU, so ``check_device`` and ``check_layout`` have nothing to check.
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'atol' if atol is None else 'rtol'}.")
    _compare(actual, expected, [], rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype,
             check_stride=check_stride, msg=msg)


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """PyTorch's deprecated form: ``assert_close`` without the dtype check, NaNs equal by default."""
    if not isinstance(actual, (Tensor, xp.ndarray)):
        from .._creation import tensor

        actual = tensor(actual)
    if not isinstance(expected, (Tensor, xp.ndarray)):
        from .._creation import tensor

        expected = tensor(expected, dtype=actual.dtype if isinstance(actual, Tensor) else None)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None)


__getattr__ = module_getattr(__name__)
