"""Tensor creation: from data, filled, random, ranges.

Every function takes PyTorch's keyword arguments ``dtype``, ``device`` (only
the CPU is available) and ``requires_grad``.
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from . import _dtype, _warnings
from . import _random_draws as _draws
from ._arg_aliases import is_number
from ._backend import quiet, xp
from ._device import check_device, on_meta
from ._dtype import np_kind
from ._layout import strided
from ._memory_format import (
    astype_result,
    channels_last,
    channels_last_3d,
    contiguous_format,
    empty_laid_out,
    format_strides,
    half_number,
    preserve_format,
    via_float32,
)
from ._meta import is_meta, meta_array, meta_layout, record_layout, reorder_dimensions
from ._not_given import NOT_GIVEN as _NOT_GIVEN
from ._signatures import with_keywords
from ._size import c_type_name, check_nonnegative, parsed_int
from ._tensor import REFUSED_BY_FACTORY, Tensor, check_can_require_grad
from ._uninitialized import refuse_template
from .random import generator_of
from .storage import TypedStorage, UntypedStorage

_F = TypeVar("_F", bound=Callable[..., Any])


def as_array(data, dtype=None):
    """Convert Python data / arrays / tensors to an array with PyTorch's dtype inference.

    Values out of the dtype's range become inf silently, as in PyTorch."""
    with quiet():
        return _as_array(data, dtype)


def is_other_sequence(data) -> bool:
    """Whether PyTorch's constructors read ``data`` as a sequence although it is no list or tuple: its type has
    ``__len__`` and ``__getitem__`` (Python's sequence check) and is no mapping, string, array or tensor (a pandas
    Series or DataFrame, a range, a deque, an ``array.array``)."""
    cls = type(data)
    return hasattr(cls, "__len__") and hasattr(cls, "__getitem__") and not isinstance(
        data, (list, tuple, str, bytes, bytearray, xp.ndarray, xp.generic, Tensor, Mapping, TypedStorage,
               UntypedStorage))


def _read_sequence(data, infer: bool, dim: int = 0, npdt=None) -> list:
    """``data`` (see ``is_other_sequence``) as the nested lists PyTorch reads from it: the shape from ``len`` and
    ``data[0]`` (a pandas Series indexes by label: one whose labels lack 0 is PyTorch's ValueError, as a DataFrame
    without a column 0 is); where the dtype is to be inferred (``infer``), the elements from ``data[i]`` for each
    i below the length (so a Series of float64 numbers gives float64 NumPy scalars, and float64), whose errors
    are PyTorch's too, and as many elements by iterating as the length says; with a dtype given, the elements
    iterated, as PyTorch stores them (a Series iterates Python numbers)."""
    n = len(data)
    if n:
        try:
            data[0]
        except Exception:
            raise ValueError(f"could not determine the shape of object type '{type(data).__name__}'") from None
    iterated = list(data)
    if infer:
        items = [data[i] for i in builtins.range(n)]
    else:
        items = iterated
    if len(iterated) != n:
        raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(iterated)})")
    return [_read_sequence(x, infer, dim + 1, npdt) if is_other_sequence(x) else
            _read_inside(x, infer, npdt) if isinstance(x, (list, tuple)) else _leaf(x, infer, npdt) for x in items]


_PLAIN = frozenset((float, int, bool, complex))
_PLAIN_OR_NESTED = _PLAIN | {list, tuple}


# what PyTorch's constructors read as a number, an array or a tensor without asking the object (strings and bytes
# are refused further on, in PyTorch's words)
_READ_AS_IS = (bool, int, float, complex, xp.generic, xp.ndarray, Tensor, str, bytes, bytearray)


def _odd(x) -> bool:
    """Whether ``x``, no list, tuple or other sequence, is an object PyTorch reads as a scalar through Python's
    number protocols: anything but a number, a NumPy scalar or array, a tensor (an object with ``__array__`` or
    ``__array_interface__`` alone, a PIL image, a ``Fraction``, None)."""
    return not isinstance(x, _READ_AS_IS)


def _numeric_leaf(x) -> bool:
    """Whether ``x`` is a NumPy scalar or 0-d array, which PyTorch stores through Python's number protocols where a
    dtype is given (``torch.tensor([np.float32(2.5)], dtype=torch.int64)`` is its TypeError, ``operator.index``'s)."""
    # (float64 and complex128 scalars are Python floats and complex numbers to PyTorch: stored as such)
    return isinstance(x, xp.generic) and not isinstance(x, (str, bytes, float, complex)) or \
        x.__class__ is xp.ndarray and not x.ndim


def _leaf(x, infer: bool, npdt=None):
    """A leaf of the data as PyTorch stores it: a number, NumPy scalar or array, tensor as it is; any other object
    (``_odd``) refused where the dtype is to be inferred (PyTorch infers it from numbers, NumPy scalars and arrays,
    tensors and sequences only: "Could not infer dtype of A", also for an object NumPy would convert through
    ``__array__``), else read as the dtype's kind of number (``float()``, ``complex()``, ``operator.index``),
    with PyTorch's TypeError where it is none."""
    if not _odd(x) and (infer or not _numeric_leaf(x)):
        return x
    if infer:
        raise RuntimeError(f"Could not infer dtype of {c_type_name(x)}")
    kind = npdt.kind if npdt is not None else "f"
    if kind in "fc":
        try:
            return float(x) if kind == "f" else complex(x)
        except (TypeError, ValueError):
            raise TypeError(f"must be real number, not {c_type_name(x)}") from None
    if kind == "b" and isinstance(x, xp.bool_):  # (a NumPy bool into bool; into an integer dtype it is refused)
        return bool(x)
    return operator.index(x)  # (PyTorch's error: "'A' object cannot be interpreted as an integer")


def _holds_other_sequence(data, numeric: bool = False) -> bool:
    """Whether nested lists/tuples hold a sequence ``is_other_sequence`` speaks of (a list of pandas Series), or
    an object read through Python's number protocols (``_odd``).
    Every ``torch.tensor(list)`` asks this, so a list of Python numbers is told by the set of its element types
    (one pass in C) rather than element by element."""
    kinds = set(map(type, data))
    if kinds <= _PLAIN:
        return False
    if kinds <= _PLAIN_OR_NESTED:
        return any(_holds_other_sequence(x, numeric) for x in data if x.__class__ is list or x.__class__ is tuple)
    return any(_holds_other_sequence(x, numeric) if isinstance(x, (list, tuple)) else
               x.__class__ not in _PLAIN and (is_other_sequence(x) or _odd(x) or numeric and _numeric_leaf(x))
               for x in data)


def _read_inside(data, infer: bool, npdt=None) -> list:
    """Nested lists/tuples with the sequences inside them read as ``_read_sequence`` reads them."""
    return [_read_sequence(x, infer, 0, npdt) if is_other_sequence(x) else
            _read_inside(x, infer, npdt) if isinstance(x, (list, tuple)) else _leaf(x, infer, npdt) for x in data]


def _first_unsized(data) -> bool:
    """Whether the first elements of nested lists/tuples lead to a 0-d NumPy array: PyTorch reads the shape along
    them and takes an array for a sequence, whose ``len`` a 0-d one has not (``[np.array(2.0)]`` is its TypeError;
    one after a number, ``[1.0, np.array(2.0)]``, is stored as a number)."""
    x = data
    while (x.__class__ is list or x.__class__ is tuple) and x:
        x = x[0]
    return x.__class__ is xp.ndarray and not x.ndim


def refuse_unsized_first(data) -> None:
    """PyTorch's TypeError for nested lists/tuples whose first elements lead to a 0-d array (``_first_unsized``),
    before its hint about arrays in a list."""
    if (data.__class__ is list or data.__class__ is tuple) and _first_unsized(data):
        raise TypeError("len() of unsized object")


def _as_array(data, dtype=None):
    npdt = _dtype.to_np(dtype)
    refuse_unsized_first(data)
    if is_other_sequence(data):
        data = _read_sequence(data, npdt is None, 0, npdt)
    elif isinstance(data, (list, tuple)) and _holds_other_sequence(data, npdt is not None):
        data = _read_inside(data, npdt is None, npdt)
    elif (_odd(data) or npdt is not None and _numeric_leaf(data) and data.__class__ is not xp.ndarray) and \
            not isinstance(data, (list, tuple)):
        data = _leaf(data, npdt is None, npdt)  # (an object NumPy would read through __array__, a NumPy scalar)
    if isinstance(data, Tensor):
        arr = data._data
        return via_float32(arr, npdt).astype(npdt) if npdt is not None and arr.dtype != npdt else arr
    types = inferred = None  # (nested lists' leaf types, and their dtype: read once, for the tests below)
    if isinstance(data, xp.ndarray):
        arr = data
    else:
        types = _leaf_types(data) if isinstance(data, (list, tuple)) else None
        numbers = None
        # a size-0 dimension along the first elements: PyTorch stores nothing and reads no tensor (the empty tensor
        # of the ValueError path below), so `[[], tensor(2.5)]` is (2, 0) whatever the dtype
        empty = types is not None and _holds_leaf(data, Tensor, types) and \
            0 in _first_shape(data, tensors_are_numbers=True)
        if types is not None and not empty and _holds_leaf(data, Tensor, types):  # (its errors are PyTorch's)
            inferred = _promoted_leaf_dtype(data) if npdt is None else None
            numbers = _unwrap(data, _dtype.from_np(npdt) if npdt is not None else inferred)
        try:
            if empty:
                raise ValueError
            arr = xp.asarray(data) if numbers is None else xp.array(numbers)
        except ValueError:  # NumPy's "inhomogeneous shape": name the sequence as PyTorch does
            if not isinstance(data, (list, tuple)):
                raise
            shape = _first_shape(data)
            if 0 not in _first_shape(data, tensors_are_numbers=True):
                ragged = _ragged(data, shape)
                if ragged is None:
                    raise
                raise ragged from None
            # PyTorch reads the shape along the first elements and, with nothing to store, checks no more:
            # [[], [1]] is an empty (2, 0) tensor of the default float dtype (complex if a number is)
            arr = xp.empty(shape, dtype=_empty_nested_dtype(data))
    if arr.dtype.kind in "uO" and not isinstance(data, (xp.ndarray, xp.generic)) or \
            arr.dtype == xp.float64 and isinstance(data, (list, tuple)) and _int_past_int64(data):
        arr = _ints_past_int64(data, arr, npdt)
    if arr.dtype.kind == "O" or np_kind(arr.dtype) in "USV":  # (an ml_dtypes bfloat16 array is kind "V")
        if isinstance(data, xp.ndarray):
            raise TypeError(f"can't convert {type(data).__name__} of {arr.dtype} to a tensor")
        raise _not_numeric(data)
    if npdt is not None and npdt.kind in "iuf" and arr.dtype.kind == "c" and not isinstance(data, xp.ndarray):
        _refuse_complex_leaves(data, npdt)
    if npdt is not None:
        if npdt.kind in "iu" and arr.dtype != npdt and arr.dtype.kind in "iuf" and arr.size and \
                not isinstance(data, (xp.ndarray, xp.generic)):
            _check_integer_range(arr, npdt)
        return via_float32(arr, npdt).astype(npdt, copy=False)
    if isinstance(data, (list, tuple)) and _holds_leaf(data, (xp.ndarray, xp.generic, Tensor), types):
        return arr.astype(_dtype.to_np(inferred or _promoted_leaf_dtype(data)), copy=False)
    if not isinstance(data, (xp.ndarray, xp.generic)):
        if np_kind(arr.dtype) == "f":  # Python floats -> default float dtype (NumPy scalars keep theirs)
            return arr.astype(_dtype.get_default_dtype().np, copy=False)
        if arr.dtype.kind == "c":  # Python complex numbers -> the default complex dtype (complex64)
            return arr.astype(_dtype.category_dtype(3).np, copy=False)
        if arr.dtype.kind in "iu" and arr.dtype != xp.int64:
            return arr.astype(xp.int64, copy=False)
    if arr.dtype not in _dtype._BY_NP:
        _dtype.from_np(arr.dtype)
    return arr


def _refuse_complex_leaves(data, npdt) -> None:
    """PyTorch's TypeError for a complex number stored into a real tensor: a Python complex has no ``__float__``
    ("must be real number, not complex"; NumPy's complex128 has one, and is stored as its real part), no complex
    number has ``__index__`` (an integer dtype); a bool dtype takes any (its truth)."""
    for x in (_flat(data) if isinstance(data, (list, tuple)) else (data,)):
        if isinstance(x, complex):
            if npdt.kind == "f" and x.__class__ is complex:
                raise TypeError("must be real number, not complex")
            if npdt.kind in "iu":
                operator.index(x)  # (its TypeError: "'complex' object cannot be interpreted as an integer")


def _int_past_int64(data) -> bool:
    """Whether nested Python ``data`` that NumPy made float64 holds an int past int64 before any float (NumPy
    makes ``[1, 2**63]`` float64, where PyTorch reads each int as an int64). A float first decides it at once: a
    list of floats is read no further (and a float among the ints makes PyTorch read them as doubles too)."""
    for x in _flat(data):
        if isinstance(x, float):
            return False
        if x.__class__ is int and not -9223372036854775808 <= x <= 9223372036854775807:
            return True
    return False


def _ints_past_int64(data, arr, npdt):
    """``arr``, NumPy's array of Python data holding an int past int64 (NumPy's uint64, or objects): PyTorch reads
    each int as an int64 for an integer (or inferred) dtype, its ValueError past that; a floating or complex dtype
    reads it as a double. Anything else (objects that are not numbers) is returned as it is."""
    leaves = list(_flat(data)) if isinstance(data, (list, tuple)) else [data]
    if not all(isinstance(x, (int, float)) for x in leaves):
        return arr
    if npdt is not None and np_kind(npdt) in "fc" or npdt is None and any(isinstance(x, float) for x in leaves):
        return xp.asarray(data, dtype=xp.float64)  # (inferred: the default float dtype, cast below)
    raise ValueError("Overflow when unpacking long long")


def _check_integer_range(arr, npdt) -> None:
    """PyTorch's check of Python numbers stored into an integer tensor (``torch.tensor(data, dtype=...)``): a
    float must lie in the dtype's range (NaN and infinities do not), an int too, though a negative one for an
    unsigned dtype wraps (-1 is 255 for uint8) where its magnitude is within the range: c10's ``overflows``."""
    _, lowest, largest = _dtype.fill_bounds(npdt)
    if npdt.kind == "u" and arr.dtype.kind != "f":
        lowest = -largest
    if arr.size <= 32:  # (a few numbers: compared in Python, cheaper than NumPy's two reductions)
        values = arr.ravel().tolist()
        if arr.dtype.kind == "f":
            fits = all(lowest <= v <= largest for v in values)  # (False for NaN, which min and max would skip)
        else:
            fits = lowest <= min(values) and max(values) <= largest
    else:
        fits = lowest <= arr.min() and arr.max() <= largest
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {npdt.name} without overflow")


def _promoted_leaf_dtype(data) -> _dtype.dtype:
    """PyTorch's dtype for nested lists that hold NumPy arrays or scalars, or tensors: each of those counts with
    its own dtype, a Python number as a tensor made from it would get (bool, int64, the default float or
    complex dtype), an empty list or tuple as the default float dtype, and the result is their promotion. So
    ``[np.float64(0.5), 1.0]`` and a list of float64 arrays are float64, a list of int32 arrays int32 (also when
    empty), ``[[], [np.int32(1)]]`` float32."""
    result = None
    for x in _leaves_and_empty(data):
        if x is None:  # an empty sequence
            leaf = _dtype.get_default_dtype()
        elif isinstance(x, Tensor):
            leaf = x.dtype
        elif isinstance(x, (xp.ndarray, xp.generic)):
            leaf = _dtype.from_np(x.dtype)
        elif isinstance(x, bool):
            leaf = _dtype.bool_
        elif isinstance(x, int):
            leaf = _dtype.int64
        elif isinstance(x, float):
            leaf = _dtype.get_default_dtype()
        else:
            leaf = _dtype.category_dtype(3)
        result = leaf if result is None else _dtype.promote_types(result, leaf)
    return result


def _leaves_and_empty(data):
    """``_flat``'s leaves, with None in the place of each empty list or tuple."""
    for x in data:
        if isinstance(x, (list, tuple)):
            if x:
                yield from _leaves_and_empty(x)
            else:
                yield None
        else:
            yield x


def _is_sequence(x) -> bool:
    return isinstance(x, (list, tuple, Tensor, xp.ndarray)) and getattr(x, "ndim", 1) > 0


def _first_shape(data, tensors_are_numbers: bool = False) -> list[int]:
    """The shape of nested sequences as PyTorch reads it: along the first elements. ``tensors_are_numbers``: a
    tensor among them ends the walk, as PyTorch's sizes stop at one (``[tensor([])]`` is of shape (1,), its one
    element then refused by ``_unwrap``)."""
    shape, x = [], data
    while _is_sequence(x) and not (tensors_are_numbers and isinstance(x, Tensor)):
        shape.append(len(x))
        if not len(x):
            break
        x = x[0]
    return shape


def _empty_nested_dtype(data):
    """The dtype of an empty tensor from ragged nested sequences (PyTorch's inference over every element, an empty
    sequence counting as a float): float64 or complex128, narrowed to the default dtypes by ``as_array``."""
    leaves = list(_flat(data))
    odd = [x for x in leaves if not isinstance(x, (bool, int, float, complex, Tensor, xp.generic, xp.ndarray))]
    if odd and isinstance(odd[0], (str, bytes)):
        raise TypeError(f"new(): invalid data type '{c_type_name(odd[0])}'")
    if odd:
        raise _not_numeric(data)
    def is_complex(x) -> bool:
        if isinstance(x, Tensor):
            return x.dtype.is_complex
        return x.dtype.kind == "c" if isinstance(x, xp.ndarray) else isinstance(x, (complex, xp.complexfloating))

    return xp.complex128 if any(is_complex(x) for x in leaves) else xp.float64


def _ragged(data, shape: list[int]) -> Exception | None:
    """PyTorch's error for nested sequences that are not rectangular: the shape is read along the first
    elements (``_first_shape``), then every sequence is checked against it, depth first (None where nothing is
    ragged)."""
    x = data
    for _ in shape:
        if not _is_sequence(x) or not len(x):
            break
        x = x[0]
    floating = isinstance(x, (float, complex)) or isinstance(x, Tensor) and (x.is_floating_point() or x.is_complex())
    scalar_error = "must be real number, not {}" if floating else "'{}' object cannot be interpreted as an integer"

    def walk(seq, dim: int) -> Exception | None:
        if dim == len(shape):
            if _is_sequence(seq):  # a sequence where the first elements had a number
                return TypeError(scalar_error.format(type(seq).__name__) +
                                 f" (a sequence at dim {dim}, where the first elements have a number: nested "
                                 "lists must be rectangular)")
            return None
        if not _is_sequence(seq):
            return TypeError(f"not a sequence (got {type(seq).__name__} at dim {dim}, where a sequence of length "
                             f"{shape[dim]} was expected: nested lists must be rectangular)")
        if len(seq) != shape[dim]:
            return ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(seq)})")
        return next((e for e in (walk(item, dim + 1) for item in seq) if e is not None), None)

    return walk(data, 0)


def _not_numeric(data) -> Exception:
    """PyTorch's error for Python data that holds something other than numbers."""
    leaves = list(_flat(data)) if isinstance(data, (list, tuple)) else [data]
    if isinstance(data, (list, tuple)) and leaves and isinstance(leaves[0], str):
        return ValueError("too many dimensions 'str'")  # a string where a number was expected first
    for leaf in leaves:
        if isinstance(leaf, (str, bytes)):
            return TypeError(f"new(): invalid data type '{c_type_name(leaf)}'")
    numeric = (bool, int, float, complex, Tensor, xp.generic, xp.ndarray)
    odd = next((x for x in leaves if not isinstance(x, numeric)), data)
    return RuntimeError(f"Could not infer dtype of {c_type_name(odd)}")


def _allocating(fn: _F) -> _F:
    """A factory: PyTorch's RuntimeError, naming the size, where NumPy raises MemoryError or "array is too
    big"; and PyTorch's factory keywords ``layout`` (only ``torch.strided``) and ``pin_memory`` (no effect:
    ember's memory is the CPU's, as ``Tensor.pin_memory()`` returns the tensor itself)."""
    @functools.wraps(fn)
    def wrapper(*args, layout=None, pin_memory: bool = False, **kwargs):
        if layout is not None and layout is not strided:
            raise NotImplementedError(f"{fn.__name__}(layout={layout}): ember creates only strided tensors")
        if args:  # (a *_like factory's template: an uninitialised one refused, as PyTorch's)
            refuse_template(args[0], fn.__name__)
        try:
            return fn(*args, **kwargs)
        except TypeError as e:  # (full(fill_value=t): no position, as PyTorch's)
            error = _dtype.unpositioned_by_keyword(e, kwargs)
            if error is e:
                raise
            raise error from None
        except MemoryError as e:
            raise RuntimeError(f"{fn.__name__}: can't allocate memory: {e}") from None
        except ValueError as e:
            if "too big" not in str(e) and "maximum allowed size" not in str(e).lower():
                raise
            raise RuntimeError(f"{fn.__name__}: storage size calculation overflowed ({e})") from None

    wrapper.__signature__ = with_keywords(fn, [("layout", None), ("pin_memory", False)])
    return wrapper  # type: ignore[return-value]


def _leaf_types(data) -> set:
    """The types of the leaves of nested lists/tuples ``data`` (``_flat``'s, as a set): one ``set(map(type, ...))``
    per list, in C, where a test of each leaf in Python would cost as much as NumPy's whole conversion."""
    kinds = set(map(type, data))
    if kinds <= _PLAIN:  # (the innermost lists of numbers: nothing to look into)
        return kinds
    inner = [k for k in kinds if issubclass(k, (list, tuple))]
    if not inner:
        return kinds
    out = kinds.difference(inner)
    for x in data:
        if isinstance(x, (list, tuple)):
            out |= _leaf_types(x)
    return out


def _holds_leaf(data, classes, types: set | None = None) -> bool:
    """Whether nested lists/tuples ``data`` hold a leaf that is an instance of ``classes`` (``types``: their
    ``_leaf_types``, where known)."""
    return any(issubclass(k, classes) for k in (_leaf_types(data) if types is None else types))


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


_ARRAYS_IN_LIST_WARNING = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting the list to a "
    "single numpy.ndarray with numpy.array() before converting to a tensor."
)


def warn_if_arrays_inside(data) -> None:
    """PyTorch's once-per-process hint when the nested lists/tuples given to a tensor constructor hold NumPy
    arrays (at any depth, 0-d ones too), which it converts one by one."""
    if isinstance(data, (list, tuple)) and _holds_leaf(data, xp.ndarray):
        _warnings.warn_once(_ARRAYS_IN_LIST_WARNING)


_READ_ONLY_ARRAY_WARNING = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means writing "
    "to this tensor will result in undefined behavior. You may want to copy the array to protect its data or make "
    "it writable before converting it to a tensor. This type of warning will be suppressed for the rest of this "
    "program."
)


def warn_if_read_only(data) -> None:
    """PyTorch's once-per-process warning when a tensor is made over a read-only NumPy array (``from_numpy``,
    ``as_tensor``, ``Tensor(array)``; ``torch.tensor`` copies and does not warn): a replay buffer's or an
    environment's frozen observation written through the tensor would change under its owner."""
    if isinstance(data, xp.ndarray) and not data.flags.writeable:
        _warnings.warn_once(_READ_ONLY_ARRAY_WARNING)


def _unwrap(data, dtype: _dtype.dtype):
    """Nested lists with the tensors in them read as PyTorch stores them into a tensor of ``dtype``. The shape
    comes from the lists' first elements (a tensor there is not looked into), so a tensor where that shape has a
    number is read as one: by ``operator.index`` for an integer or bool dtype (only a one-element integer or bool
    tensor, PyTorch's TypeError otherwise), by ``float`` for a real floating one (a complex tensor's real part where
    its imaginary part is 0, PyTorch's RuntimeError otherwise), by ``complex`` for a complex one; ``float`` and
    ``complex`` give their once-per-process warning for a tensor that requires grad (``torch.tensor([loss_a,
    loss_b])`` takes the numbers out of the graph). A tensor where the shape has a sequence is iterated, as a list
    would be (``[[1, 2], torch.tensor([3, 4])]``)."""
    read = complex if dtype.is_complex else float if dtype.is_floating_point else operator.index
    same_kind = "fc" if dtype.is_complex else "f" if dtype.is_floating_point else "iub"

    def number(x: Tensor):
        a = x._data
        if a.size == 1 and not x._requires_grad and np_kind(a.dtype) in same_kind:
            return a.reshape(())  # (what ``read`` gives, without a Python number per element)
        return read(x)
    depth, x = 0, data
    while x.__class__ is list or x.__class__ is tuple or isinstance(x, (list, tuple, xp.ndarray)):
        depth += 1  # (an empty sequence is a dimension of size 0, and the last)
        if not len(x):
            break
        x = x[0]

    def walk(x, dim: int):
        if dim == depth:
            return number(x) if isinstance(x, Tensor) else x
        if isinstance(x, Tensor):
            if not x._data.ndim:  # (PyTorch's TypeError, as for a number there: ``_ragged``)
                raise TypeError(f"not a sequence (got a 0-d tensor at dim {dim}, where a sequence was expected: "
                                "nested lists must be rectangular)")
            x = list(x)
        if isinstance(x, (list, tuple)):
            return [walk(v, dim + 1) for v in x]
        return x  # (a number where a sequence belongs: NumPy's ragged error, which _ragged words as PyTorch)

    return walk(data, 0)


def _finish(array, requires_grad: bool, device=None) -> Tensor:
    check_device(device, allow_meta=True)
    if on_meta(device) and not is_meta(array):  # (the meta device, given or the default: the shape, dtype and
        array = meta_like(array, array.dtype)  # layout, no data)
    t = Tensor._make(array)
    if requires_grad:
        check_can_require_grad(t, REFUSED_BY_FACTORY)
        t.requires_grad = True
    return t


_COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than {}(sourceTensor)."
)


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a tensor: copied, with PyTorch's warning to use clone)."""
    if isinstance(data, Tensor):
        _warnings.warn(_COPY_CONSTRUCT_WARNING.format("torch.tensor"))
    refuse_unsized_first(data)
    warn_if_arrays_inside(data)
    array = as_array(data, dtype)  # (a copy: an expanded tensor's laid out contiguously, as PyTorch's)
    return _numpy_strides(_finish(astype_result(array, array.dtype) if type(array) is xp.ndarray else
                                  xp.array(array, copy=True), requires_grad, device), data)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """A tensor sharing memory with ``data`` when possible."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        check_device(device)
        return data
    refuse_unsized_first(data)
    warn_if_arrays_inside(data)
    warn_if_read_only(data)
    return _numpy_strides(_finish(as_array(data, dtype), False, device), data)


def _as_tensor_fullprec(t) -> Tensor:
    """PyTorch's ``as_tensor`` that keeps a Python number in full precision (a float as float64, an int as int64,
    on the CPU whatever the default device), anything else as ``as_tensor`` reads it."""
    if t.__class__ is float:
        return as_tensor(t, dtype=_dtype.float64, device="cpu")
    if t.__class__ is int:
        return as_tensor(t, dtype=_dtype.int64, device="cpu")
    return as_tensor(t)


_ASARRAY_REQUIRES_GRAD_WARNING = (
    "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of False. "
    "Pass requires_grad=False explicitly to get the old behavior and silence this warning."
)


def asarray(obj, *, dtype=None, device=None, copy: bool | None = None, requires_grad: bool | None = None) -> Tensor:
    """``obj`` (a tensor, a NumPy array or scalar, Python data) as a tensor, sharing its memory when it can.

    As PyTorch's: a tensor of the asked dtype is returned itself (``copy=True`` clones it, differentiably; another
    dtype is a differentiable conversion); a NumPy array of that dtype shares its memory; ``copy=False`` where a
    copy is needed raises ValueError (RuntimeError for a NumPy scalar). ``requires_grad`` unspecified follows a
    tensor's own, with PyTorch's warning (once); given, it is set on the tensor returned: on ``obj`` itself when
    ``obj`` is a leaf returned as is, on a detached alias of a non-leaf.
    """
    if isinstance(obj, Tensor):
        if requires_grad is None and obj.requires_grad:
            _warnings.warn_once(_ASARRAY_REQUIRES_GRAD_WARNING)
        check_device(device)
        wrong_dtype = dtype is not None and obj.dtype is not dtype
        if copy is False and wrong_dtype:
            raise ValueError(f"can't alias tensor with dtype '{_dtype.SCALAR_TYPE_NAMES[obj.dtype.name]}' into dtype "
                             f"'{_dtype.SCALAR_TYPE_NAMES[dtype.name]}'.")
        if not (copy or wrong_dtype):
            if requires_grad is not None and obj.requires_grad != requires_grad:
                if obj.is_leaf:
                    if requires_grad:
                        check_can_require_grad(obj, REFUSED_BY_FACTORY)
                    obj.requires_grad_(requires_grad)
                else:
                    obj = obj.detach()
            return obj
        out = obj.to(dtype) if wrong_dtype else obj.clone()
        if requires_grad is False and out.requires_grad:
            out = out.detach()
        elif requires_grad and not out.requires_grad:
            check_can_require_grad(out, REFUSED_BY_FACTORY)
            out.requires_grad_(True)
        return out
    if copy is False:
        if isinstance(obj, xp.generic):
            raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. ")
        if not isinstance(obj, xp.ndarray):
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        if dtype is not None and obj.dtype != _dtype.to_np(dtype):
            names = _dtype.SCALAR_TYPE_NAMES
            raise ValueError(f"can't alias tensor with dtype '{names[_dtype.from_np(obj.dtype).name]}' into dtype "
                             f"'{names[dtype.name]}'.")
    out = tensor(obj, dtype=dtype, device=device) if copy else as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        check_can_require_grad(out, REFUSED_BY_FACTORY)
        out.requires_grad_(True)
    return out


def from_numpy(array) -> Tensor:
    """A tensor sharing memory with a NumPy array."""
    if not isinstance(array, xp.ndarray):
        raise TypeError(f"expected np.ndarray (got {c_type_name(array)})")
    _dtype.from_np(array.dtype)
    warn_if_read_only(array)
    return _numpy_strides(Tensor._make(array), array)


def _numpy_strides(t: Tensor, source) -> Tensor:
    """``t``, made from ``source``, with a NumPy array's strides when it has no elements, as PyTorch keeps them
    (``np.empty((0, 3))`` has (0, 0)), where ember's other empty tensors take contiguous ones (``Tensor._make``)."""
    if source.__class__ is xp.ndarray and not source.size and source.ndim and not is_meta(t._data):
        a = t._data
        t._data = xp.lib.stride_tricks.as_strided(
            a, strides=tuple(s // source.itemsize * a.itemsize for s in source.strides), writeable=a.flags.writeable)
    return t


def _size(size, keyword=None, op: str | None = None) -> tuple:
    """The sizes of ``zeros(2, 3)``, ``zeros((2, 3))`` or, as PyTorch also accepts, ``zeros(size=(2, 3))``. With
    ``op``, no sizes at all is PyTorch's TypeError naming it (``zeros(())`` is the 0-d tensor; ``zeros()`` is
    refused)."""
    if op is not None and not size and keyword is None:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"')
    if keyword is not None:
        if size:
            raise TypeError("got the sizes both as positional arguments and as the keyword 'size'")
        size = (keyword,)
    whole = len(size) == 1 and not isinstance(size[0], (tuple, list))  # (one argument: not a sequence)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        out = tuple(s if s.__class__ is int else parsed_int(s, bool_ok=pos > 0) for pos, s in enumerate(size))
    except TypeError:  # (a float, a bool or a string size: PyTorch's TypeError, in its parser's words)
        from .ops.shape import index_sizes

        index_sizes(size, "size", op, position=1 if op is not None else None, whole=whole)
        raise
    check_nonnegative(out)
    return out


def _dt(dtype, default=None):
    if dtype is None:
        return (default or _dtype.get_default_dtype()).np
    return _dtype.to_np(dtype)


@_allocating
def zeros(*sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _finish(xp.zeros(_size(sizes, size, "zeros"), dtype=_dt(dtype)), requires_grad, device)


@_allocating
def ones(*sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _finish(xp.ones(_size(sizes, size, "ones"), dtype=_dt(dtype)), requires_grad, device)


@_allocating
def empty(*sizes, size=None, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return _finish(empty_laid_out(_size(sizes, size, "empty"), _dt(dtype), memory_format), requires_grad, device)


@_allocating
def empty_strided(size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` whose elements step ``stride`` (in elements) along each dimension, on
    storage just large enough for them, as PyTorch's (a stride of 0 repeats an element, as ``expand`` does)."""
    return _finish(strided_array(size, stride, _dt(dtype), on_meta(device)), requires_grad, device)


def strided_array(size, stride, npdt, meta: bool = False):
    """``empty_strided``'s array (``meta``: a meta array reporting those strides), with PyTorch's checks."""
    for name, value in (("size", size), ("stride", stride)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"empty_strided(): argument '{name}' (position {1 + (name == 'stride')}) must be tuple "
                            f"of ints, not {type(value).__name__}")
    shape, steps = _size((size,)), _size_like(stride)
    if len(shape) != len(steps):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
                           f"({len(steps)})")
    if any(s < 0 for s in steps):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and strides={list(steps)}")
    if meta:
        out = meta_array(shape, npdt)
        record_layout(out, steps, 0)
        return out
    count = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, steps))
    itemsize = xp.dtype(npdt).itemsize
    return xp.lib.stride_tricks.as_strided(xp.empty(count, npdt), shape, [s * itemsize for s in steps])


def _size_like(values) -> tuple:
    try:
        return tuple(operator.index(s) for s in values)
    except TypeError:
        raise TypeError(f"the strides must be a tuple of ints, got {tuple(values)!r}") from None


def scalar_number(value, op: str, argument: str = "fill_value", position: int | None = 2):
    """A NumPy scalar or tensor given as a Scalar, read as PyTorch's argument parser reads it: a NumPy integer as
    an int, a float64 or complex128 (Python float and complex subclasses) as its number, any other (a bool_,
    float16, float32, complex64: through ``float()``, as PyTorch) as a float; a tensor as
    ``_dtype.scalar_tensor_number`` (its TypeError naming the argument's ``position``). Other values pass."""
    if isinstance(value, Tensor):
        return _dtype.scalar_tensor_number(value, op, argument, position=position)
    if not isinstance(value, xp.generic):
        return value
    if isinstance(value, xp.integer):
        return int(value)
    if isinstance(value, (float, complex)):
        return value.item()
    return float(value)


@_allocating
def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    fill_value = scalar_number(fill_value, "full")
    if dtype is None:
        cat = _dtype.scalar_category(fill_value)
        dtype = _dtype.category_dtype(cat)
    npdt, shape = _dt(dtype), _size((size,))
    fill_value = _dtype.fill_number(fill_value, npdt, math.prod(shape))
    return _finish(xp.full(shape, half_number(fill_value, npdt), dtype=npdt), requires_grad, device)


@_allocating
def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s`` (a 0-d tensor's value too), in the default dtype unless ``dtype`` is
    given: an int or bool gives a floating tensor, unlike ``tensor``. A complex ``s`` for a real dtype, or a
    number past the dtype's range, is PyTorch's RuntimeError."""
    s = scalar_number(s, "scalar_tensor", "s", 1)  # (a 0-d tensor is a number; any other tensor is refused)
    if not isinstance(s, (bool, int, float, complex)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}")
    npdt = _dt(dtype)
    if isinstance(s, complex) and np_kind(npdt) != "c":
        raise RuntimeError(f"value cannot be converted to type {_dtype.CPP_TYPE_NAMES[npdt.name]} without overflow")
    s = _dtype.checked_scalar(s, npdt)
    with quiet():  # (PyTorch's half scalar_tensor checks nothing: past the range it is inf)
        return _finish(xp.asarray(half_number(s, npdt), dtype=npdt), requires_grad, device)


def _like(t: Tensor, dtype):
    return t._data.shape, _dt(dtype, t.dtype)


def _like_device(t: Tensor, device):
    """A ``*_like`` factory's device: the given one, else t's (a meta tensor's is meta), never the default device
    (PyTorch's ``*_like`` factories ignore ``torch.set_default_device`` and ``with torch.device(...)``)."""
    return t.device if device is None else device


def _preserved_strides(shape: tuple, strides: list[int]) -> list[int]:
    """The element strides PyTorch's ``empty_like(preserve_format)`` gives a tensor of ``shape`` and ``strides``:
    the same ones when they are non-overlapping and dense (a permuted contiguous layout), else dense ones in the
    order of ``strides`` (``infer_dense_strides``: a stride of 0, as an expanded dimension's, leaves the order
    there as it is)."""
    dims = sorted((d for d in builtins.range(len(shape)) if shape[d] != 1), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            break
        expected *= shape[d]
    else:
        return strides
    perm = reorder_dimensions(shape, [strides])  # (PyTorch's insertion sort, with its ambiguous comparisons)
    out, step = [0] * len(shape), 1
    for d in perm:
        out[d] = step
        step *= shape[d] if shape[d] > 1 else 1
    return out


def _row_major(a) -> bool:
    """Whether ``a``'s strides are the row-major ones, a size-1 dimension's too (NumPy's C-contiguity ignores
    those; PyTorch's *_like keeps them as a dense input's)."""
    step = a.itemsize
    for n, s in zip(reversed(a.shape), reversed(a.strides)):
        if s != step:
            return False
        step *= n
    return True


def _empty_preserving(t: Tensor, dt, memory_format=None):
    """An uninitialised array of t's shape and dtype ``dt`` laid out as PyTorch's ``empty_like(t)`` lays it: with
    ``preserve_format`` (the default), t's strides when t is dense, else dense ones in t's dimension order
    (``torch.empty_like(x.t())`` is transposed too); another format, row-major."""
    a = t._data
    if memory_format not in (None, preserve_format):  # (channels_last: channels fastest, as PyTorch's)
        return empty_laid_out(a.shape, dt, memory_format)
    if (not isinstance(a, xp.ndarray) or a.ndim < 2 or a.flags.c_contiguous and a.size and _row_major(a)):
        return xp.empty(a.shape, dt)  # (a sparse tensor's *_like: dense, as before)
    itemsize = xp.dtype(dt).itemsize
    if not a.size:  # (no elements: dense to PyTorch, whose *_like keeps the strides as they are)
        return xp.lib.stride_tricks.as_strided(xp.empty(0, dt), a.shape, [s // a.itemsize * itemsize
                                                                         for s in a.strides])
    strides = _preserved_strides(a.shape, [s // a.itemsize for s in a.strides])
    return xp.lib.stride_tricks.as_strided(xp.empty(a.size, dt), a.shape, [s * itemsize for s in strides])


def laid_out_empty(a, dt):
    """An uninitialised array of ``a``'s shape and dtype ``dt`` laid out as PyTorch's ``empty_like(a)`` lays an op's
    result out (``_empty_preserving``); None where ``a`` is row-major (or meta, or no NumPy array): a row-major
    result is then that layout already."""
    if a.__class__ is not xp.ndarray or a.flags.c_contiguous and (1 not in a.shape or _row_major(a)):
        return None  # (a size-1 dimension's odd stride is kept below, as PyTorch's empty_like keeps it)
    shape, strides = a.shape, a.strides
    if a.size and min(strides) > 0 and len(set(strides)) == a.ndim:  # (never a meta array: its strides are 0)
        # Distinct positive strides: each dimension's place is its stride's rank, with no tie for PyTorch's sort
        # (``infer_dense_strides``) to break, so the dimensions in that order (slowest first), allocated row-major
        # and transposed back, are its layout, a size-1 dimension's stride included; a dense ``a`` keeps its own
        # strides, which differ from those only at a size-1 dimension (the general path below). An attention
        # output over a (1, T, H, E) projection's heads: 2 us here, 23 us there.
        order = sorted(builtins.range(a.ndim), key=strides.__getitem__, reverse=True)
        dense = 1 in shape
        step = a.itemsize
        for d in reversed(order):
            if shape[d] != 1:
                if strides[d] != step:
                    dense = False
                    break
                step *= shape[d]
        if not dense:
            back = [0] * a.ndim
            for place, d in enumerate(order):
                back[d] = place
            return xp.empty([shape[d] for d in order], dt).transpose(back)
    return None if is_meta(a) else _empty_preserving(Tensor._make(a), dt)


def laid_out_like(a, values):
    """``values`` (an array of ``a``'s shape) laid out as PyTorch's ``empty_like(a)`` lays an op's result out: what
    sort, argsort and flip give (``laid_out_empty``). A row-major (or meta) ``a`` takes ``values`` as they are."""
    out = laid_out_empty(a, values.dtype)
    if out is None:
        return values
    out[...] = values
    return out


def meta_like(a, dt, memory_format=None):
    """A meta array (no memory) of array ``a``'s shape and dtype ``dt``, reporting the strides PyTorch's
    ``empty_like(a, memory_format=...)`` gives (``preserve_format``: a meta ``a``'s recorded layout kept as
    ``_empty_preserving`` keeps a CPU one's)."""
    out = meta_array(a.shape, dt)
    if memory_format in (None, preserve_format):
        if a.ndim < 2:
            return out
        if is_meta(a):
            strides = meta_layout(a)[0]
        elif a.size or any(a.strides):
            strides = [s // a.itemsize for s in a.strides]
        else:  # (a new empty array: NumPy gives it no strides, PyTorch row-major ones)
            strides = format_strides(a.shape, contiguous_format)
        strides = list(strides) if not a.size else _preserved_strides(a.shape, list(strides))
    else:
        strides = format_strides(a.shape, memory_format)
    record_layout(out, strides, 0)
    return out


def _empty_like_array(t: Tensor, dtype, memory_format, device):
    """The array of a ``*_like`` factory: ``_empty_preserving``'s, or a meta array (no memory) when the result is
    on the meta device."""
    dt = _like(t, dtype)[1]
    if on_meta(_like_device(t, device)):
        return meta_like(t._data, dt, memory_format)
    return _empty_preserving(t, dt, memory_format)


@_allocating
def zeros_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    out = _empty_like_array(t, dtype, memory_format, device)
    out[...] = 0
    return _finish(out, requires_grad, _like_device(t, device))


@_allocating
def ones_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    out = _empty_like_array(t, dtype, memory_format, device)
    out[...] = 1
    return _finish(out, requires_grad, _like_device(t, device))


@_allocating
def empty_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return _finish(_empty_like_array(t, dtype, memory_format, device), requires_grad, _like_device(t, device))


@_allocating
def full_like(t: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    fill_value = scalar_number(fill_value, "full_like")
    out = _empty_like_array(t, dtype, memory_format, device)
    fill_value = _dtype.fill_number(fill_value, out.dtype, out.size)
    out[...] = half_number(fill_value, out.dtype)
    return _finish(out, requires_grad, _like_device(t, device))


def _drawn(shape: tuple, dt, device, draw) -> Tensor:
    """``draw()``'s array, or, on the meta device, a meta array of ``shape`` and ``dt``: PyTorch's meta kernels draw
    nothing, so the generator's state is left as it was (and a meta tensor of any size takes no memory)."""
    return meta_array(shape, dt) if on_meta(device) else draw()


def _float_dt(dtype, kernel: str):
    """The array dtype of a random floating-point draw; another dtype is PyTorch's error naming its ``kernel``."""
    dt = _dt(dtype)
    if np_kind(xp.dtype(dt)) not in "fc":
        raise _dtype.not_implemented_for(kernel, _dtype.from_np(xp.dtype(dt)))
    return dt


_FACTORY_KEYWORDS = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = "
                     "None, bool pin_memory = False, bool requires_grad = False")


def _called_bare(op: str, first: str) -> TypeError:
    """PyTorch's TypeError for a random factory called with no argument at all (given a keyword, its error is
    ``_size``'s "missing ... size"): its two forms, with and without a generator."""
    return TypeError(f"{op}() received an invalid combination of arguments - got (), but expected one of:\n"
                     f" * ({first}, *, torch.Generator generator, {_FACTORY_KEYWORDS})\n"
                     f" * ({first}, *, {_FACTORY_KEYWORDS})\n")


@_allocating
def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples: PyTorch's numbers for the same seed (float32/float64). A complex dtype draws real
    and imaginary parts each of variance 1/2 (so that E|z|^2 = 1), as PyTorch."""
    if not sizes and size is None and generator is None and dtype is None and device is None and not requires_grad:
        raise _called_bare("randn", "tuple of ints size")
    dt, shape = _float_dt(dtype, "normal_kernel_cpu"), _size(sizes, size, "randn")
    g, std = generator_of(generator), _draws.part_std(1.0, dt)
    arr = _drawn(shape, dt, device, lambda: _draws.floating(lambda n, real: _draws.normal(g, n, 0.0, std, real),
                                                            shape, dt))
    return _finish(arr, requires_grad, device)


@_allocating
def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1) (for a complex dtype, real and imaginary parts each, as PyTorch): PyTorch's
    numbers for the same seed."""
    if not sizes and size is None and generator is None and dtype is None and device is None and not requires_grad:
        raise _called_bare("rand", "tuple of ints size")
    dt, shape, g = _float_dt(dtype, "check_uniform_bounds"), _size(sizes, size, "rand"), generator_of(generator)
    arr = _drawn(shape, dt, device, lambda: _draws.floating(lambda n, real: _draws.uniform(g, n, 0.0, 1.0, real),
                                                            shape, dt))
    return _finish(arr, requires_grad, device)


def _high_required(fn: _F) -> _F:
    """``randint`` refusing ``low=`` by keyword without ``high``, as PyTorch's argument parser: its one-bound
    overload is ``randint(high, size)``, so a lone number is the high bound only when given by position."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not args and "low" in kwargs and "high" not in kwargs:
            raise TypeError('randint() missing 2 required positional argument: "high", "size"')
        return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


@_high_required
@_allocating
def randint(low=None, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high): PyTorch's numbers for the same seed. ``low`` defaults to 0, given as
    ``randint(high, size)`` or ``randint(high=..., size=...)``."""
    if low is None:  # (PyTorch's randint(high, size) overload, spelt with keywords)
        if high is None or size is None:
            raise TypeError("randint() received an invalid combination of arguments: it takes (high, size) or "
                            "(low, high, size)")
        low = 0
    if size is None:  # randint(high, size)
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        if not isinstance(high, (tuple, list)):  # randint(10, 5): PyTorch wants the size as a tuple
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(high).__name__}; write randint({low}, ({high},))")
        low, high, size = 0, low, high
        high = _int_bound(high, "high", 1)
    elif high is None:
        low, high = 0, _int_bound(low, "high", 1)
    elif not isinstance(size, (tuple, list)):  # randint(0, 10, 5)
        raise TypeError(f"randint(): argument 'size' (position 3) must be tuple of ints, not {type(size).__name__}; "
                        f"write randint({low}, {high}, ({size},))")
    else:
        low, high = (_int_bound(v, "", 0, (low, high, size)) for v in (low, high))
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    shape, dt = _size((size,)), _dt(dtype, _dtype.int64)
    from .ops.sampling import random_range  # (PyTorch's randint is random_(low, high): its checks of the bounds)

    random_range(Tensor._make(xp.empty(0, dt)), (low, high), low, high)

    def draw():
        arr = xp.empty(shape, dt)  # first: an impossible size fails before any draw
        arr.reshape(-1)[...] = _draws.random_from_to(generator_of(generator), arr.size, low, high)
        return arr
    return _finish(_drawn(shape, dt, device, draw), requires_grad, device)


def _int_bound(value, name: str, position: int, given: tuple = ()):
    """A bound of ``randint`` as PyTorch's argument parser reads an int: an integer tensor of one element (of any
    shape: ``randint(torch.tensor([9]), (3,))``) is its value; another tensor is PyTorch's TypeError, naming the
    argument in the (high, size) form, the combination ``given`` in the (low, high, size) one. (``random_``'s parser
    takes 0-d tensors only: ``ops.sampling``.)"""
    if not isinstance(value, Tensor):
        return value
    if value._data.size != 1 or value._data.dtype.kind not in "iu":
        if given:
            got = ", ".join(type(a).__name__ for a in given)
            raise TypeError(f"randint() received an invalid combination of arguments - got ({got}), but expected one "
                            "of: (int high, tuple of ints size, ...), (int low, int high, tuple of ints size, ...)")
        raise TypeError(f"randint(): argument '{name}' (position {position}) must be int, not Tensor")
    return int(value._data.reshape(()))


def _no_bool(kernel: str, np_dtype) -> None:
    """PyTorch's error for a bool ``dtype=`` of a factory whose kernel has no bool version."""
    if xp.dtype(np_dtype) == xp.bool_:
        raise _dtype.not_implemented_for(kernel, _dtype.bool_)


@_allocating
def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0..n-1: PyTorch's for the same seed."""
    n, dt = int(n), _dt(dtype, _dtype.int64)
    _no_bool("randperm", dt)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    arr = _drawn((n,), dt, device, lambda: _draws.randperm(generator_of(generator), n).astype(dt))
    return _finish(arr, requires_grad, device)


def _drawn_like(t: Tensor, dt, memory_format, device, fill) -> Tensor:
    """A new tensor of t's shape filled by the in-place draw ``fill``, laid out as PyTorch's ``empty_like`` lays it
    (``preserve_format``: t's dimension order, so that a transposed t gets the draws in its memory order and, being
    then non-contiguous, normals from the scalar path; ``contiguous_format``: row-major; ``channels_last(_3d)``:
    channels fastest). On the meta device (``device``, else t's) ``fill`` gets a meta tensor, into which the in-place
    draws draw nothing."""
    a = t._data
    if on_meta(_like_device(t, device)):
        return fill(Tensor._make(meta_array(a.shape, dt)))
    if memory_format is preserve_format:
        return fill(Tensor._make(_empty_preserving(t, dt)))
    order = list(xp.arange(a.ndim))  # (this module's ``range`` is torch.range)
    if memory_format in (channels_last, channels_last_3d):
        rank = 4 if memory_format is channels_last else 5
        if a.ndim != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {memory_format.name} format")
        order = [0, *order[2:], 1]
    return fill(Tensor._make(xp.empty([a.shape[d] for d in order], dt).transpose(xp.argsort(order))))


@_allocating
def randn_like(t: Tensor, *, generator=None, dtype=None, device=None, requires_grad: bool = False,
               memory_format=preserve_format) -> Tensor:
    """``randn`` of t's shape (dtype: t's by default), drawn in the memory order of t's layout as PyTorch's."""
    from .ops.inplace import normal_

    dt = _float_dt(dtype or t.dtype, "normal_kernel_cpu")
    out = _drawn_like(t, dt, memory_format, device, lambda x: normal_(x, generator=generator))
    return _finish(out._data, requires_grad, _like_device(t, device))


@_allocating
def rand_like(t: Tensor, *, generator=None, dtype=None, device=None, requires_grad: bool = False,
              memory_format=preserve_format) -> Tensor:
    """``rand`` of t's shape (dtype: t's by default), drawn in the memory order of t's layout as PyTorch's."""
    from .ops.inplace import uniform_

    dt = _float_dt(dtype or t.dtype, "check_uniform_bounds")
    out = _drawn_like(t, dt, memory_format, device, lambda x: uniform_(x, generator=generator))
    return _finish(out._data, requires_grad, _like_device(t, device))


@_allocating
def randint_like(t: Tensor, low=None, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad: bool = False, memory_format=preserve_format) -> Tensor:
    """``randint(low, high)`` of t's shape (``randint_like(t, high)`` or ``randint_like(t, high=...)``: from 0;
    dtype: t's by default), drawn in the memory order of t's layout as PyTorch's."""
    from .ops.inplace import random_

    if high is None:
        if low is None:
            raise TypeError("randint_like() received an invalid combination of arguments: it takes (input, high) "
                            "or (input, low, high)")
        low, high = 0, low
    elif low is None:  # (PyTorch's randint_like(input, high) overload, high given by keyword)
        low = 0
    out = _drawn_like(t, _dt(dtype, t.dtype), memory_format, device,
                      lambda x: random_(x, low, high, generator=generator))
    return _finish(out._data, requires_grad, _like_device(t, device))


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Draws of N(mean, std^2): ``mean``/``std`` numbers (then ``size`` is the shape, ``dtype``, ``device`` and
    ``requires_grad`` the factory's) or tensors (broadcast); a negative std is PyTorch's RuntimeError. On the meta
    device (a meta ``mean``/``std``, or ``device="meta"``) nothing is drawn, as PyTorch's meta kernels."""
    from .ops.inplace import check_normal_std

    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if len(tensors) == 2 and mean.device != std.device:  # PyTorch's check: mean on std's device
        raise RuntimeError(f"Tensor on device {mean.device} is not on the expected device {std.device}!")
    meta = any(is_meta(t._data) for t in tensors)
    if not (meta and isinstance(std, Tensor)):  # (a meta std has no values to check)
        check_normal_std(std)
    g = generator_of(generator)
    if tensors:  # PyTorch: normal_(0, std or 1), then * std, + mean
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        shape = tuple(xp.broadcast_shapes(xp.shape(m), xp.shape(s)))
        dt = tensors[0]._data.dtype
        if meta:
            return Tensor._make(meta_array(shape, dt))
        scale = _draws.part_std(1.0 if isinstance(std, Tensor) else float(std), dt)
        out = _draws.floating(lambda n, real: _draws.normal(g, n, 0.0, scale, real), shape, dt)
        if isinstance(std, Tensor):
            out = out * s.astype(dt, copy=False)
        return Tensor._make((out + xp.asarray(m).astype(dt, copy=False)).astype(dt, copy=False))
    shape, dt = _size((size,)), _dt(dtype)
    std = _draws.part_std(std, dt)
    out = _drawn(shape, dt, device, lambda: _draws.floating(lambda n, real: _draws.normal(g, n, mean, std, real),
                                                            shape, dt))
    return _finish(out, requires_grad, device)


_ARANGE_POSITIONS = {1: ("end",), 2: ("start", "end"), 3: ("start", "end", "step")}
_EXACT_INT = 1 << 53  # the ints the general path's float arithmetic (ceil of (end - start) / step) keeps exact


def _arange_combination_error(args: tuple, given: dict) -> TypeError:
    shown = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in given.items()]
    return TypeError(f"arange() received an invalid combination of arguments - got ({', '.join(shown)}), but "
                     "expected one of: (Number end), (Number start, Number end), (Number start, Number end, Number "
                     "step), each with the keywords dtype, device, requires_grad, out")


@_allocating
def arange(*args, start=_NOT_GIVEN, end=_NOT_GIVEN, step=_NOT_GIVEN, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """``arange(end)``, ``arange(start, end[, step])``, each argument positional or keyword: PyTorch's three
    overloads, so ``arange(end=n)`` starts at 0 and ``step`` needs ``start`` (``arange(5, step=2)`` and
    ``arange(start=5)`` are TypeErrors, as PyTorch's)."""
    if (len(args) == 1 and args[0].__class__ is int and 0 <= args[0] <= _EXACT_INT and dtype is None
            and start is _NOT_GIVEN and end is _NOT_GIVEN and step is _NOT_GIVEN):
        # arange(n) (a position index, every step of a GPT): the int64 values 0..n-1 the general path below
        # computes (0 + arange(n) * 1 as int64), without its table of the arguments (about 5 of its 7 µs)
        return _finish(xp.arange(args[0], dtype=xp.int64), requires_grad, device)
    keywords = {k: v for k, v in (("start", start), ("end", end), ("step", step)) if v is not _NOT_GIVEN}
    # one positional argument is end, or start where end is a keyword (arange(0, end=5))
    names = ("start",) if len(args) == 1 and "end" in keywords else _ARANGE_POSITIONS.get(len(args), ())
    if len(args) > 3 or any(name in keywords for name in names) or (names == ("end",) and keywords):
        raise _arange_combination_error(args, keywords)
    values = dict(zip(names, args), **keywords)
    if "end" not in values:
        if values:
            raise TypeError('arange() missing 1 required positional arguments: "end"')
        raise _arange_combination_error(args, keywords)
    if "step" in values and "start" not in values:
        raise _arange_combination_error(args, keywords)
    for name, v in values.items():
        number = is_number(v)  # (not a Fraction or a Decimal: PyTorch's parser refuses them)
        if len(values) > 1 and (not number and not isinstance(v, Tensor) or isinstance(v, Tensor) and (
                v._data.ndim or v.requires_grad)):
            raise _arange_combination_error(args, keywords)  # (PyTorch's parser then matches no overload)
        if not number and not isinstance(v, Tensor):  # (arange(end) alone: "(position 1)" when given by position)
            raise TypeError(f"arange(): {_dtype.described_argument(name, 1 if args else None)} must be Number, "
                            f"not {c_type_name(v)}")
    # (a NumPy scalar or a 0-d tensor read as PyTorch's Scalar: np.float32(0.5) and np.bool_ are floats here; a
    # tensor with dimensions or one that requires grad is refused: arange(t) by position, arange(end=t) not)
    first, last, by = (scalar_number(values.get(name, default), "arange", name, 1 if args else None)
                       for name, default in (("start", 0), ("end", None), ("step", 1)))
    _dtype.scalar_ints((first, last, by))  # (an int past uint64: PyTorch's OverflowError)
    if not (math.isfinite(first) and math.isfinite(last)):
        raise RuntimeError(f"unsupported range: {first} -> {last}")
    if by == 0:
        raise RuntimeError("step must be nonzero")
    if (last - first) * by < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = _dtype.get_default_dtype() if any(isinstance(v, float) for v in (first, last, by)) else _dtype.int64
    if xp.dtype(_dt(dtype)) == xp.bool_ or np_kind(xp.dtype(_dt(dtype))) == "c":
        raise _dtype.not_implemented_for("arange_cpu", _dtype.from_np(xp.dtype(_dt(dtype))))
    if np_kind(xp.dtype(_dt(dtype))) in "iu" and max(first, last, by) > 9223372036854775807:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")  # (its int64 kernel's)
    n = max(math.ceil((last - first) / by), 0)
    if np_kind(xp.dtype(_dt(dtype))) in "iu" and float in (first.__class__, last.__class__, by.__class__):
        # an integer dtype takes the bounds and the step as integers, truncated, as PyTorch's kernel; its int64
        # kernel counts the values from those too (arange(0.5, 3.7, dtype=int64) is 0, 1, 2; a step of 0.5 is 0,
        # its ValueError), the others from the numbers given (arange(-0.5, 3.7, 1.2, dtype=int32) is 0, 1, 2, 3)
        first, last, by = int(first), int(last), int(by)
        if xp.dtype(_dt(dtype)) == xp.int64:
            if by == 0:
                raise ValueError("step must be nonzero")
            n = max((last - first + by - (1 if by > 0 else -1)) // by, 0)
    arr = (first + xp.arange(n, dtype=xp.float64 if np_kind(xp.dtype(_dt(dtype))) == "f" else xp.int64) * by)
    return _finish(arr.astype(_dt(dtype)), requires_grad, device)


@_allocating
def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """start, start + step, ... up to and including ``end`` (PyTorch's deprecated ``torch.range``, with its
    warning): ``floor((end - start) / step) + 1`` values, of the default float dtype unless ``dtype`` is given."""
    from ._warnings import warn

    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warn("torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
         "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).")
    _no_bool("range_cpu", _dt(dtype))
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int((end - start) / step) + 1  # (computed in double, as PyTorch's)
    dt = xp.dtype(_dt(dtype))
    arr = start + xp.arange(n, dtype=xp.float64 if np_kind(dt) in "fc" else xp.int64) * step
    return _finish(arr.astype(dt), requires_grad, device)


def _fused_multiply_add(a, b, c):
    """``a * b + c`` with one rounding, on float64 arrays (the exact product and sum by Dekker's and Knuth's
    error-free transformations: NumPy has no fused multiply-add)."""
    p = a * b
    split = 134217729.0  # 2**27 + 1: each factor as a high and a low half whose products are exact
    ah = split * a - (split * a - a)
    bh = split * b - (split * b - b)
    product_error = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    s = p + c
    back = s - p
    sum_error = (p - (s - back)) + (c - back)
    return s + (product_error + sum_error)


def linspace_values(start, end, steps: int, np_dtype):
    """PyTorch's CPU linspace, value for value: ``step = (end - start) / (steps - 1)`` in the result's precision
    (double for integers), the first ``steps // 2`` values counted up from ``start`` and the rest down from
    ``end``, each by one fused multiply-add, as its kernel is compiled (NumPy's linspace rounds otherwise: one
    unit in the last place apart in about half the values, which moves a sampling grid across pixel edges)."""
    dt = xp.dtype(np_dtype)
    if steps == 1:
        return xp.full(1, start, dtype=dt)
    if dt.kind == "c":
        return xp.linspace(start, end, steps, dtype=dt)
    if dt.itemsize == 2 and dt.kind != "i":  # float16 / bfloat16
        return _linspace_half(start, end, steps, dt)
    work = xp.float64 if dt == xp.float64 or dt.kind in "iub" else xp.float32
    # the ends in the result's dtype first (an integer result truncates them), the step then in ``work``
    first, last = (float(xp.asarray(v, dtype=dt if dt.kind in "iu" else work)) for v in (start, end))
    step = float(xp.asarray((xp.asarray(last, work) - xp.asarray(first, work)) / work(steps - 1), dtype=work))
    i = xp.arange(steps, dtype=xp.float64)
    up = i < steps // 2
    counts = xp.where(up, i, steps - 1 - i)
    if work is xp.float32:  # the float32 product is exact in float64: one rounding of the sum, then to float32
        values = xp.where(up, first + step * counts, last - step * counts)
    else:
        values = xp.where(up, _fused_multiply_add(xp.full(steps, step), counts, xp.full(steps, first)),
                          _fused_multiply_add(xp.full(steps, -step), counts, xp.full(steps, last)))
    with quiet():
        return values.astype(work).astype(dt)


def _linspace_half(start, end, steps: int, dt):
    """linspace_values for float16 / bfloat16: PyTorch's half-precision arithmetic rounds after each operation
    (no fused multiply-add), and the count multiplying the step is itself rounded to the dtype first."""
    def rounded(v):
        return xp.asarray(v, dtype=xp.float32).astype(dt).astype(xp.float32)

    first, last = rounded(start), rounded(end)
    step = rounded(rounded(last - first) / xp.float32(steps - 1))
    i = xp.arange(steps)
    up = i < steps // 2
    product = rounded(step * rounded(xp.where(up, i, steps - 1 - i)))
    return xp.where(up, rounded(first + product), rounded(last - product)).astype(dt)


@_allocating
def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    if int(steps) < 0:
        raise RuntimeError(f"number of steps must be non-negative, got {steps}")
    _no_bool("linspace_cpu", _dt(dtype))
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    arr = linspace_values(start, end, int(steps), _dt(dtype)) if int(steps) else xp.zeros(0, _dt(dtype))
    return _finish(arr, requires_grad, device)


@_allocating
def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None) -> Tensor:
    _no_bool("logspace_cpu", _dt(dtype))
    arr = xp.logspace(float(start), float(end), int(steps), base=base).astype(_dt(dtype))
    return _finish(arr, False, device)


@_allocating
def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _finish(xp.eye(n, m, dtype=_dt(dtype)), requires_grad, device)


@_allocating
def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    """The first ``size`` elements of ``dtype`` (default: the default dtype) stored in the binary file
    ``filename``, as ``torch.from_file``: with ``shared=True`` the tensor is the file's memory (writes go to
    the file), else a copy."""
    dt = xp.dtype(_dt(dtype))
    needed = int(size) * dt.itemsize
    have = os.path.getsize(filename)
    if have < needed:
        raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required mapping size <{needed}>")
    if shared and size:
        array = xp.memmap(filename, dtype=dt, mode="r+", shape=(int(size),))
    else:
        array = xp.fromfile(filename, dtype=dt, count=int(size))
    return _finish(array, requires_grad, device)
