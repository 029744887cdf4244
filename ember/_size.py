"""``ember.Size``: a tuple of dimensions, as ``torch.Size``."""

from __future__ import annotations

import math
import numbers
import operator
from typing import SupportsIndex, overload

from ._shown_name import package_name


class Size(tuple[int, ...]):
    """The shape of a tensor; a tuple of ints. As ``torch.Size``'s, the items are integers (``size_item``: an
    integer 0-d tensor read as its int), anything else is PyTorch's TypeError (``Size([2.0])``). ember's own
    shapes, tuples of ints already, are made with ``tuple.__new__(Size, shape)``."""

    def __new__(cls, sizes=()):
        items = tuple(sizes)
        for n in items:
            if n.__class__ is not int:
                items = tuple(size_item(i, n) for i, n in enumerate(items))
                break
        return tuple.__new__(cls, items)

    def __repr__(self) -> str:
        return f"{package_name()}.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)

    @overload
    def __getitem__(self, item: SupportsIndex) -> int: ...

    @overload
    def __getitem__(self, item: slice) -> Size: ...

    def __getitem__(self, item: SupportsIndex | slice) -> int | Size:
        out = tuple.__getitem__(self, item)
        return tuple.__new__(Size, out) if isinstance(item, slice) else out

    def __add__(self, other: tuple[int, ...]) -> Size:  # type: ignore[override]
        return Size(tuple.__add__(self, tuple(other)))


def parsed_int(value, bool_ok: bool = False) -> int:
    """An ``int`` argument (a size, a dim) as PyTorch's argument parser reads it: an int, a NumPy integer or anything
    with ``__index__`` (an integer 0-d tensor) as its int; a bool (an int to Python) is its TypeError, as a float, a
    Decimal or a string are (``operator.index``'s TypeError, which callers word as PyTorch's). ``bool_ok``: a Python
    bool read as 0 or 1, as PyTorch's parser reads the sizes after the first of a list (only the first decides
    which overload the list matches); a NumPy bool never."""
    cls = value.__class__
    if cls is int:
        return value
    if cls is bool and not bool_ok or cls.__name__ == "bool" and cls.__module__ == "numpy":
        raise TypeError(f"'{c_type_name(value)}' object is not an int here")
    return operator.index(value)


def int_argument(value, op: str, name: str, array_ok: bool = True, position: int | None = None) -> int:
    """An ``int`` argument of ``op`` other than a size or a dim (``tril``'s ``diagonal``, ``chunk``'s ``chunks``,
    ``narrow``'s ``start``) as PyTorch's parser reads it (``parsed_int``): a float, a Decimal or a bool is its
    TypeError, never truncated. ``array_ok``: a 0-d NumPy integer array (which has ``__index__``) read as its int,
    as PyTorch reads one for some int arguments (``kthvalue``'s and ``topk``'s ``k``); not for others, whose
    TypeError it is (``chunk``'s ``chunks``, ``split``'s ``split_size``). ``position``: the argument's place in
    PyTorch's signature, which its message names ("argument 'n' (position 1)"), given or by keyword."""
    if value.__class__ is int:
        return value
    try:
        if not array_ok and value.__class__.__name__ == "ndarray" and value.__class__.__module__ == "numpy":
            raise TypeError
        return parsed_int(value)
    except TypeError:
        where = "" if position is None else f" (position {position})"
        raise TypeError(f"{op}(): argument '{name}'{where} must be int, not {c_type_name(value)}") from None


def size_item(i: int, n) -> int:
    """Item ``i`` of a ``torch.Size`` as PyTorch reads it: an integer as it is (a NumPy one too; a bool as 0 or 1),
    anything else with ``__index__`` (an integer 0-d tensor) as its int; else PyTorch's TypeError, naming the type as
    Python's C API does (a class defined in Python by its name, a C type by its full name: ``numpy.float64``)."""
    if isinstance(n, numbers.Integral):
        return int(n) if n.__class__ is bool else n
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"{package_name()}.Size() takes an iterable of 'int' (item {i} is '{c_type_name(n)}')") \
            from None


def c_type_name(value) -> str:
    """The name PyTorch's C++ messages give ``value``'s type (CPython's ``tp_name``): a class defined in Python
    by its bare name (``int``, ``MyModule``), an extension type by its dotted name (``numpy.ndarray``); a class
    that stands for another under PyTorch names it in ``_c_type_name`` (vmap's examples: PyTorch's are Tensors)."""
    cls = type(value)
    shown = cls.__dict__.get("_c_type_name")
    if shown is not None:
        return shown
    if cls.__flags__ & _HEAP_TYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


_HEAP_TYPE = 1 << 9  # (Py_TPFLAGS_HEAPTYPE: a class defined in Python, whose C name is its bare name)


def check_nonnegative(shape) -> None:
    """PyTorch's error for a tensor of ``shape`` (a sequence of ints) with a negative dimension: it names the first
    negative one (``[2, -2, -6]``: -2)."""
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")


def leading_ones(shape) -> int:
    """How many leading dimensions of size 1 ``shape`` has (all of them where every size is 1): what PyTorch's
    setitem views a value without (``slicePrefix1sSize``)."""
    return next((k for k, n in enumerate(shape) if n != 1), len(shape))


def inplace_broadcast_mismatch(out_shape, other_shape) -> str | None:
    """PyTorch's message when ``other_shape`` cannot be written into ``out_shape`` (an in-place op's or ``copy_``'s
    operand): the pair cannot broadcast, or broadcasts to a shape other than ``out_shape``; None if it can."""
    mismatch = broadcast_mismatch((tuple(out_shape), tuple(other_shape)))
    if mismatch is not None:
        return mismatch
    nd = max(len(out_shape), len(other_shape))
    a = (1,) * (nd - len(out_shape)) + tuple(out_shape)
    b = (1,) * (nd - len(other_shape)) + tuple(other_shape)
    grown = [x if y == 1 else y for x, y in zip(a, b)]
    if grown != list(out_shape):
        return f"output with shape {list(out_shape)} doesn't match the broadcast shape {grown}"
    return None


def broadcast_mismatch(shapes) -> str | None:
    """PyTorch's message for the first pair of ``shapes`` that cannot broadcast, or None if they all can.

    Shapes broadcast left to right, as PyTorch's ``infer_size`` does: "tensor a" is the shape
    broadcast so far, "tensor b" the next one; the dimension is counted in the broadcast result.
    """
    acc = tuple(shapes[0])
    for shape in shapes[1:]:  # the common case, shapes all equal, without the loops below
        if shape != acc:
            break
    else:
        return None
    for shape in shapes[1:]:
        nd = max(len(acc), len(shape))
        a = (1,) * (nd - len(acc)) + acc
        b = (1,) * (nd - len(shape)) + tuple(shape)
        for i in range(nd - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return (f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) "
                        f"at non-singleton dimension {i}")
        acc = tuple(x if y == 1 else y for x, y in zip(a, b))
    return None
