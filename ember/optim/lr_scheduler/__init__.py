"""Learning-rate schedulers with PyTorch's API (``ember.optim.lr_scheduler.StepLR(optimizer, 30)``).

Call ``scheduler.step()`` once per epoch (``OneCycleLR``: once per batch) after ``optimizer.step()``;
``ReduceLROnPlateau.step(metric)`` takes the monitored value.
"""

from .base import LRScheduler
from .composite import ChainedScheduler, SequentialLR
from .cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts, OneCycleLR
from .cyclic import CyclicLR
from .decay import ConstantLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR, StepLR
from .plateau import ReduceLROnPlateau

_LRScheduler = LRScheduler  # the pre-2.0 name, still used by older code

__all__ = [
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR", "PolynomialLR",
]


from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
