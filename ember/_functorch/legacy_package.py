"""The legacy ``functorch`` package (``import functorch`` under ``python -m ember.compat``), which PyTorch still
ships: its transforms and stateless modules with PyTorch's deprecation warnings (``deprecated.py``), on
``torch.func``. Not here: ``functionalize`` and ``make_fx`` (ember traces no graphs)."""

from __future__ import annotations

from .. import version as _version
from .._missing import module_getattr
from .deprecated import (
    combine_state_for_ensemble,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    make_functional,
    make_functional_with_buffers,
    vjp,
    vmap,
)
from .make_functional import FunctionalModule, FunctionalModuleWithBuffers

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "make_functional", "make_functional_with_buffers", "vjp", "vmap"]

__version__ = _version.__version__

__getattr__ = module_getattr(__name__)
