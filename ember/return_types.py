"""``torch.return_types``: the named tuples PyTorch's ops return (``torch.max(x, 0)`` is a ``return_types.max``
of ``values`` and ``indices``; ``torch.linalg.svd`` a ``return_types.linalg_svd`` of ``U``, ``S``, ``Vh``).

Each is a named tuple class registered here under its PyTorch name (so it pickles by reference, as PyTorch's do),
and prints as PyTorch's: ``torch.return_types.max(\\nvalues=tensor(...),\\nindices=tensor(...))`` (``ember.`` in
place of ``torch.`` where ember is imported by its own name; see ``_shown_name``).
"""

from __future__ import annotations

import builtins
from collections import namedtuple

from ._shown_name import package_name, shown_as_pytorchs


def _repr(self) -> str:
    fields = ",\n".join(f"{name}={value!r}" for name, value in builtins.zip(self._fields, self))
    return f"{package_name()}.return_types.{type(self).__name__}(\n{fields})"


def _new(cls, *args, **kwargs):
    """PyTorch's constructor, a structseq's: one sequence of the fields' values (and an optional dict, for fields
    beyond the sequence, of which these classes have none): ``return_types.max((values, indices))``; the values one
    by one (``return_types.max(values, indices)``) are its TypeError, as PyTorch's. ember builds them with the named
    tuple's ``_make`` (``result``), and rebuilds a named tuple of any kind with ``rebuilt``."""
    if len(args) + len(kwargs) > 2:
        raise TypeError(f"structseq() takes at most 2 arguments ({len(args) + len(kwargs)} given)")
    parsed = dict(zip(("sequence", "dict"), args))
    if "sequence" not in parsed and "sequence" not in kwargs:  # (CPython's parser: the required one first)
        raise TypeError("structseq() missing required argument 'sequence' (pos 1)")
    for name, value in kwargs.items():
        if name not in ("sequence", "dict") or name in parsed:
            raise TypeError(f"structseq() got an unexpected keyword argument '{name}'" if name not in parsed
                            else f"argument for structseq() given by name ('{name}') and position")
        parsed[name] = value
    if "dict" in parsed and not isinstance(parsed["dict"], dict):
        raise TypeError(f"{package_name()}.return_types.{cls.__name__}() takes a dict as second arg, if any")
    try:
        values = tuple(parsed["sequence"])
    except TypeError:
        raise TypeError("constructor requires a sequence") from None
    if len(values) != len(cls._fields):
        raise TypeError(f"{package_name()}.return_types.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                        f"({len(values)}-sequence given)")
    return tuple.__new__(cls, values)


def rebuilt(cls: type, values) -> tuple:
    """A tuple of class ``cls`` holding ``values``, as PyTorch's pytree rebuilds one: one of these classes (a
    structseq in PyTorch) from the one sequence its constructor takes, any other named tuple from the values one by
    one, any other tuple class from the sequence."""
    if hasattr(cls, "_fields") and globals().get(cls.__name__) is not cls:
        return cls(*values)
    return cls(tuple(values))


def _getnewargs(self) -> tuple:
    return (tuple(self),)


def _setattr(self, name: str, value) -> None:
    """A field is PyTorch's structseq member, read-only (``readonly attribute``); any other name has no slot."""
    if name in type(self)._fields:
        raise AttributeError("readonly attribute")
    object.__setattr__(self, name, value)


def _delattr(self, name: str) -> None:
    if name in type(self)._fields:
        raise AttributeError("readonly attribute")
    object.__delattr__(self, name)


def structseq(name: str, fields: tuple[str, ...]) -> type:
    """The named tuple class PyTorch returns as ``torch.return_types.<name>`` with ``fields``; one per name.

    Difference from PyTorch: PyTorch's is a structseq (as ``os.stat_result``), a tuple with named fields but no
    ``_fields``; ember's is a named tuple (``_fields``, ``_asdict``, ``_replace``), which ember's pytree, collate,
    ``vmap`` and ``fx`` rebuild as such, returning the same type as PyTorch's do. It takes a structseq's constructor
    (one sequence) beside the named tuple's, and has its ``n_fields``, ``n_sequence_fields``, ``n_unnamed_fields``;
    setting or deleting a field is its ``readonly attribute`` error."""
    cls = globals().get(name)
    if cls is None:
        # type(torch.max(x, 0)) prints <class 'torch.return_types.max'> where torch is ember, as PyTorch's does
        cls = shown_as_pytorchs("torch.return_types")(namedtuple(name, fields, module=__name__))
        cls.__repr__ = _repr
        cls.__setattr__, cls.__delattr__ = _setattr, _delattr
        cls.__getnewargs__ = _getnewargs  # (pickle and copy rebuild through the one-sequence constructor)
        cls.__new__ = _new
        cls.n_fields = cls.n_sequence_fields = len(fields)
        cls.n_unnamed_fields = 0
        globals()[name] = cls
    elif cls._fields != tuple(fields):
        raise ValueError(f"return_types.{name} has fields {cls._fields}, not {tuple(fields)}")
    return cls


def result(name: str, fields: tuple[str, ...], values):
    """``values`` as PyTorch's ``torch.return_types.<name>`` of ``fields``."""
    return structseq(name, fields)._make(values)


_VALUES_INDICES = ("values", "indices")
max = structseq("max", _VALUES_INDICES)
min = structseq("min", _VALUES_INDICES)
sort = structseq("sort", _VALUES_INDICES)
topk = structseq("topk", _VALUES_INDICES)
median = structseq("median", _VALUES_INDICES)
nanmedian = structseq("nanmedian", _VALUES_INDICES)
kthvalue = structseq("kthvalue", _VALUES_INDICES)
mode = structseq("mode", _VALUES_INDICES)
cummax = structseq("cummax", _VALUES_INDICES)
cummin = structseq("cummin", _VALUES_INDICES)
aminmax = structseq("aminmax", ("min", "max"))
histogram = structseq("histogram", ("hist", "bin_edges"))
frexp = structseq("frexp", ("mantissa", "exponent"))
