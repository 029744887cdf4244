"""The Tensor methods, one mixin per op family (mirroring ``ember/ops/*.py``); ``Tensor`` inherits them all.

Each method calls its op, so ``x.f(...)`` and ``ember.f(x, ...)`` are one code path, and is defined (and annotated)
in a class, so type checkers see it. The mixins do not import ``ember.ops`` (it builds on ``Tensor``, so the import
graph would be a circle): ``ember.ops`` binds itself into each mixin module's ``ops`` global when it has loaded
(``bind_ops``; ``_bind.py``). A new Tensor method goes into the mixin of its op's family.
"""

from __future__ import annotations

import sys
import types

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
