"""The Tensor methods, one mixin per op family (mirroring ``ember/ops/*.py``); ``Tensor`` inherits them all.

Each method calls its op, so ``x.f(...)`` and ``ember.f(x, ...)`` are one code path, and is defined (and annotated)
in a class, so type checkers see it. The mixins do not import ``ember.ops`` (it builds on ``Tensor``, so the import
graph would be a circle): ``ember.ops`` binds itself into each mixin module's ``ops`` global when it has loaded
(``bind_ops``; ``_bind.py``). A new Tensor method goes into the mixin of its op's family.
"""

from __future__ import annotations

import sys
import types
from typing import TypeVar

from . import elementwise
from .activation import ActivationMethods
from .complex import ComplexMethods
from .conversion import ConversionMethods
from .cumulative import CumulativeMethods
from .distance import DistanceMethods
from .elementwise import ElementwiseMethods
from .gamma_fns import GammaMethods
from .index_update import IndexUpdateMethods
from .indexing import IndexingMethods
from .inplace import InplaceMethods
from .linalg import LinalgMethods
from .linalg_compat import LinalgCompatMethods
from .lookup import LookupMethods
from .matrix import MatrixMethods
from .memory import MemoryMethods
from .movement import MovementMethods
from .pointwise import PointwiseMethods
from .reduction import ReductionMethods
from .sampling import SamplingMethods
from .shape import ShapeMethods
from .sorting import SortingMethods
from .special_fns import SpecialMethods
from .statistics import StatisticsMethods
from .unary import UnaryMethods
from .view_inplace import ViewInplaceMethods

__all__ = [
    "ActivationMethods", "ComplexMethods", "ConversionMethods", "CumulativeMethods", "DistanceMethods",
    "ElementwiseMethods", "GammaMethods", "IndexUpdateMethods", "IndexingMethods", "InplaceMethods",
    "LinalgCompatMethods", "LinalgMethods", "LookupMethods", "MatrixMethods",
    "MemoryMethods", "MovementMethods", "PointwiseMethods", "ReductionMethods", "SamplingMethods", "ShapeMethods",
    "SortingMethods", "SpecialMethods", "StatisticsMethods", "UnaryMethods", "ViewInplaceMethods",
]

MIXINS = (
    ActivationMethods, ComplexMethods, ConversionMethods, CumulativeMethods, DistanceMethods, ElementwiseMethods,
    GammaMethods, IndexUpdateMethods, IndexingMethods, InplaceMethods, LinalgCompatMethods, LinalgMethods,
    LookupMethods, MatrixMethods, MemoryMethods, MovementMethods, PointwiseMethods, ReductionMethods, SamplingMethods,
    ShapeMethods, SortingMethods, SpecialMethods, StatisticsMethods, UnaryMethods, ViewInplaceMethods,
)


def bind_ops(ops_package: types.ModuleType) -> None:
    """Point every mixin module's ``ops`` at the ``ember.ops`` package (called once, by ``ember/ops/__init__.py``)."""
    for mixin in MIXINS:
        sys.modules[mixin.__module__].ops = ops_package  # type: ignore[attr-defined]
    elementwise.bind_fast_paths(ops_package)


_Class = TypeVar("_Class", bound=type)  # (the decorated class as it is, for type checkers)


def named_as_tensor_methods(tensor_class: _Class) -> _Class:
    """Class decorator: each mixin's method, reached through ``tensor_class``, is named as ``tensor_class``'s
    (``Tensor.sum``, not ``ReductionMethods.sum``), where it is defined and where a wrapper installed in its place
    calls it. Python names a function by its ``__qualname__`` in a call's TypeError, so ``x.sum(foo=1)`` says
    ``Tensor.sum() got an unexpected keyword argument 'foo'`` (PyTorch's names ``sum()``; its Python-defined methods
    say ``Tensor.backward()``), and a bare ``Tensor.sum`` pickles by that path. Set on the functions themselves,
    once, at class creation: no wrapper on the call path. An alias (``abs = __abs__``) takes its public name."""
    for mixin in MIXINS:
        for name, function in mixin.__dict__.items():
            if not isinstance(function, types.FunctionType) or function.__qualname__ != f"{mixin.__name__}.{name}":
                continue  # (not defined in this mixin's body under this name)
            public = next((alias for alias, f in mixin.__dict__.items()
                           if f is function and not alias.startswith("__")), name) if name.startswith("__") else name
            installed = next(klass.__dict__[public] for klass in tensor_class.__mro__ if public in klass.__dict__)
            while installed is not function and hasattr(installed, "__wrapped__"):
                installed = installed.__wrapped__
            if installed is not function:  # (one that another mixin overrides keeps its own name)
                continue
            defined_as = function.__qualname__
            while isinstance(function, types.FunctionType) and function.__qualname__ == defined_as:
                # (and the function a decorator of the mixin's wraps, which raises the error)
                function.__module__ = tensor_class.__module__
                function.__qualname__ = f"{tensor_class.__qualname__}.{public}"
                function = getattr(function, "__wrapped__", None)
    return tensor_class
