"""The Tensor methods, one mixin per op family (mirroring ``ember/ops/*.py``); ``Tensor`` inherits them all.

Each method calls its op, so ``x.f(...)`` and ``ember.f(x, ...)`` are one code path, and is defined (and annotated)
in a class, so type checkers see it. A mixin module looks ``ops`` up when a method runs: ``ember/ops`` imports
``Tensor``, so it cannot be imported before this class exists (``ember/__init__.py`` imports ``ops`` first).
A new Tensor method goes into the mixin of its op's family.
"""

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
from .statistics import StatisticsMethods
from .unary import UnaryMethods
from .view_inplace import ViewInplaceMethods

__all__ = [
    "ActivationMethods", "ComplexMethods", "ConversionMethods", "CumulativeMethods", "DistanceMethods",
    "ElementwiseMethods", "GammaMethods", "IndexUpdateMethods", "IndexingMethods", "InplaceMethods",
    "LinalgCompatMethods", "LinalgMethods", "LookupMethods", "MatrixMethods",
    "MemoryMethods", "MovementMethods", "PointwiseMethods", "ReductionMethods", "SamplingMethods", "ShapeMethods",
    "SortingMethods", "StatisticsMethods", "UnaryMethods", "ViewInplaceMethods",
]
