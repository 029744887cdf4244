"""``ember.special``: the ``torch.special`` functions ember computes (each is the op of the same name; ``expit`` is
``sigmoid``, ``psi`` ``digamma``, ``gammaln`` ``lgamma``, ``multigammaln`` ``mvlgamma``), the orthogonal polynomials
among them and the Bessel functions (J, Y, I, K and Airy's), which take no gradient, as PyTorch's."""

from __future__ import annotations

import math

from ._missing import module_getattr
from ._tensor import Tensor
from .ops.activation import log_softmax, softmax
from .ops.bessel_fns import modified_bessel_i0, modified_bessel_i1, spherical_bessel_j0
from .ops.bessel_jyk import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
)
from .ops.gamma_fns import digamma, polygamma, xlog1py, xlogy
from .ops.gamma_fns import digamma as psi
from .ops.gamma_fns import igamma as gammainc
from .ops.gamma_fns import igammac as gammaincc
from .ops.gamma_fns import lgamma as gammaln
from .ops.gamma_fns import mvlgamma as multigammaln
from .ops.orthogonal_polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from .ops.pointwise import erf, erfc, erfinv, exp2, expm1, logit
from .ops.reduction import logsumexp
from .ops.special_fns import entr, erfcx, i0, i0e, i1, i1e, log_ndtr, ndtri, sinc
from .ops.unary import log1p
from .ops.unary import round as _round
from .ops.unary import sigmoid as expit
from .ops.zeta import zeta


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """``torch.round``'s ``decimals`` overload, the only one ``special.round`` has: an integer tensor is refused
    also without ``decimals``."""
    return _round(input, decimals=decimals)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal distribution's CDF, erfc(-x / sqrt(2)) / 2."""
    return erfc(input * -math.sqrt(0.5)) * 0.5


__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
           "gammaln", "i0", "i0e",
           "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0",
           "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai"]
# functions whose results take no gradient: out= is not refused under autograd
_NO_GRADIENT = [name for name in __all__ if "_polynomial_" in name
                or name.startswith(("modified_", "spherical_", "bessel_", "scaled_", "airy_"))]

from ._arg_aliases import accept_torch_names as _accept_torch_names  # noqa: E402
from ._arg_aliases import name_as_native_ops as _name_as_native_ops  # noqa: E402

_accept_torch_names(globals(), "special.")  # PyTorch's keyword names: special.logit(input=x)

# out=, which each function but softmax and log_softmax takes: under the name of the op PyTorch runs (its
# rules for out's dtype, its words when the op is refused under autograd); ndtr, composite in PyTorch, is not refused
_OUT_OPS = {"digamma": "digamma", "entr": "special_entr", "erf": "erf", "erfc": "erfc", "erfcx": "special_erfcx",
            "erfinv": "erfinv", "exp2": "exp2", "expit": "sigmoid", "expm1": "expm1", "gammainc": "igamma",
            "gammaincc": "igammac", "gammaln": "lgamma", "i0": "i0", "i0e": "special_i0e", "i1": "special_i1",
            "i1e": "special_i1e", "log1p": "log1p", "log_ndtr": "special_log_ndtr", "logit": "logit",
            "logsumexp": "logsumexp", "multigammaln": "mvlgamma", "ndtr": "special_ndtr", "ndtri": "special_ndtri",
            "polygamma": "polygamma", "psi": "digamma", "round": "round", "sinc": "sinc",
            "xlog1py": "special_xlog1py", "xlogy": "xlogy", "zeta": "special_zeta",
            **{name: f"special_{name}" for name in _NO_GRADIENT}}


def _add_out() -> None:
    from ._out import with_out

    for name, op in _OUT_OPS.items():
        # (not refused under autograd: ndtr, composite in PyTorch; the functions whose results take no gradient)
        globals()[name] = with_out(op, globals()[name], parsed=f"special_{name}",
                                   differentiable=name == "ndtr" or name in _NO_GRADIENT)


_add_out()
_name_as_native_ops(globals(), "special_", __all__)  # special.erf.__name__: "special_erf"

__getattr__ = module_getattr(__name__)
