"""``torch._functorch.deprecated``: the legacy ``functorch`` package's functions, each ``torch.func``'s own (or
``make_functional.py``'s) after PyTorch's deprecation warning (a FutureWarning naming what replaces it)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .. import func as _func
from . import make_functional as _nn_impl


def get_warning(api: str, new_api: str | None = None) -> str:
    """PyTorch's deprecation message for ``functorch.<api>`` (on one line, as it warns)."""
    new_api = new_api or f"torch.func.{api}"
    return (f"We've integrated functorch into PyTorch. As the final step of the integration, `functorch.{api}` is "
            "deprecated as of PyTorch 2.0 and will be deleted in a future version of PyTorch >= 2.3. Please use "
            f"`{new_api}` instead; see the PyTorch 2.0 release notes and/or the `torch.func` migration guide for "
            "more details https://pytorch.org/docs/main/func.migrating.html")


def _deprecated(impl: Callable, new_api: str | None = None) -> Callable:
    """``impl`` warning PyTorch's FutureWarning for ``functorch.<its name>`` at each call (at the caller's line)."""
    message = get_warning(impl.__name__, new_api)

    @functools.wraps(impl)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(message, FutureWarning, stacklevel=2)
        return impl(*args, **kwargs)

    return wrapper


vmap = _deprecated(_func.vmap, "torch.vmap")
grad = _deprecated(_func.grad)
grad_and_value = _deprecated(_func.grad_and_value)
vjp = _deprecated(_func.vjp)
jvp = _deprecated(_func.jvp)
jacrev = _deprecated(_func.jacrev)
jacfwd = _deprecated(_func.jacfwd)
hessian = _deprecated(_func.hessian)
make_functional = _deprecated(_nn_impl.make_functional, "torch.func.functional_call")
make_functional_with_buffers = _deprecated(_nn_impl.make_functional_with_buffers, "torch.func.functional_call")
combine_state_for_ensemble = _deprecated(_nn_impl.combine_state_for_ensemble, "torch.func.stack_module_state")
