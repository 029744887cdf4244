"""Optimizers with PyTorch's API: ``ember.optim.SGD(model.parameters(), lr=0.1)``.

``ember.optim.lr_scheduler`` holds the learning-rate schedulers; ``ember.optim.swa_utils`` weight averaging (SWA, EMA).
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler", "swa_utils",
           "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS", "SparseAdam",
           "Rprop", "ASGD"]


from .._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
