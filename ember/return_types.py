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


def structseq(name: str, fields: tuple[str, ...]) -> type:
    """The named tuple class PyTorch returns as ``torch.return_types.<name>`` with ``fields``; one per name."""
    cls = globals().get(name)
    if cls is None:
        # type(torch.max(x, 0)) prints <class 'torch.return_types.max'> where torch is ember, as PyTorch's does
        cls = shown_as_pytorchs("torch.return_types")(namedtuple(name, fields, module=__name__))
        cls.__repr__ = _repr
        globals()[name] = cls
    elif cls._fields != tuple(fields):
        raise ValueError(f"return_types.{name} has fields {cls._fields}, not {tuple(fields)}")
    return cls


def result(name: str, fields: tuple[str, ...], values):
    """``values`` as PyTorch's ``torch.return_types.<name>`` of ``fields``."""
    return structseq(name, fields)(*values)


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
