"""``ember.special``: the ``torch.special`` functions ember computes (each is the op of the same name,
``expit`` is ``sigmoid``); the others (Bessel, gamma-family, ...) are not implemented."""

from __future__ import annotations

from ._missing import module_getattr
from .ops.activation import log_softmax, softmax
from .ops.pointwise import erf, erfc, erfinv, exp2, expm1, logit
from .ops.reduction import logsumexp
from .ops.unary import log1p, round
from .ops.unary import sigmoid as expit

__all__ = ["erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit", "logsumexp", "round",
           "softmax"]

__getattr__ = module_getattr(__name__)
