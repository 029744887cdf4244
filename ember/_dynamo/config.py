"""``torch._dynamo.config``: the graph compiler's flags programs set (``recompile_limit``, ...), kept with
PyTorch's defaults and no effect (ember compiles nothing; see ``ember/_config_module.py``)."""

from __future__ import annotations

from typing import Any

from .._config_module import install
from .._config_module import patch as _patch

install(__name__, "torch._dynamo.config", {
    "recompile_limit": 8, "accumulated_recompile_limit": 256, "compiled_autograd": False, "suppress_errors": False,
    "verbose": False, "optimize_ddp": True, "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True, "assume_static_by_default": True,
    "error_on_recompile": False, "force_parameter_static_shapes": True, "specialize_int": False,
    "specialize_float": False, "skip_nnmodule_hook_guards": True, "guard_nn_modules": True, "allow_rnn": False,
}, aliases={"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit"})


def patch(arg: Any = None, value: Any = None, **changes: Any) -> Any:
    """The flags set for a ``with`` block or a decorated function (``config.patch(suppress_errors=True)``)."""
    return _patch(__name__, arg, value, **changes)
