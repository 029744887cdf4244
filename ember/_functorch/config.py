"""``torch._functorch.config``: the flags of the compiler's autograd tracing and partitioner that programs set
(``enable_autograd_cache``, ``activation_memory_budget``, ``donated_buffer``, ...), kept with PyTorch's defaults
and no effect (ember compiles nothing; see ``ember/_config_module.py``)."""

from __future__ import annotations

from typing import Any

from .._config_module import install
from .._config_module import patch as _patch

install(__name__, "torch._functorch.config", {
    "enable_autograd_cache": True, "strict_autograd_cache": False, "bundled_autograd_cache": False,
    "enable_remote_autograd_cache": None, "autograd_cache_allow_custom_autograd_functions": False,
    "activation_memory_budget": 1.0, "activation_memory_budget_runtime_estimator": "flops",
    "activation_memory_budget_solver": "dp", "visualize_memory_budget_pareto": False, "donated_buffer": True,
    "functionalize_rng_ops": False, "graphsafe_rng_functionalization": True, "debug_partitioner": False,
    "fake_tensor_allow_unsafe_data_ptr_access": True, "fake_tensor_propagate_real_tensors": False,
    "fake_tensor_crossref": False, "unlift_effect_tokens": False, "cse": True, "view_replay_for_aliased_outputs": True,
    "ban_recompute_reductions": True, "ban_recompute_not_in_allowlist": True, "ban_recompute_used_far_apart": True,
    "ban_recompute_long_fusible_chains": True, "ban_recompute_materialized_backward": True,
    "aggressive_recomputation": False, "recompute_views": False, "treat_parameters_as_free_to_save": True,
    "max_dist_from_bw": 1000, "static_weight_shapes": True, "guess_tangent_strides_as_outputs": True,
    "joint_custom_pass": None,
})


def patch(arg: Any = None, value: Any = None, **changes: Any) -> Any:
    """The flags set for a ``with`` block or a decorated function (``config.patch(donated_buffer=False)``)."""
    return _patch(__name__, arg, value, **changes)
