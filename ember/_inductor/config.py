"""``torch._inductor.config``: the compiler backend's flags programs set (``coordinate_descent_tuning``,
``max_autotune``, ``triton.cudagraphs``, ...), kept with PyTorch's defaults and no effect (ember compiles
nothing; see ``ember/_config_module.py``)."""

from __future__ import annotations

from typing import Any

from .._config_module import install
from .._config_module import patch as _patch

install(__name__, "torch._inductor.config", {
    "coordinate_descent_tuning": False, "coordinate_descent_check_all_directions": False, "max_autotune": False,
    "max_autotune_gemm": False, "max_autotune_pointwise": False, "epilogue_fusion": True, "freezing": False,
    "fx_graph_cache": True, "cpp_wrapper": False, "benchmark_kernel": False, "aggressive_fusion": False,
    "conv_1x1_as_mm": False, "shape_padding": True, "size_asserts": True, "debug": False,
    "force_fuse_int_mm_with_mul": False, "use_mixed_mm": True, "fallback_random": False,
    "emulate_precision_casts": False, "autotune_local_cache": True, "reorder_for_compute_comm_overlap": False,
    "triton": {"cudagraphs": False, "cudagraph_trees": True, "unique_kernel_names": True},
})


def patch(arg: Any = None, value: Any = None, **changes: Any) -> Any:
    """The flags set for a ``with`` block or a decorated function (``config.patch(max_autotune=True)``)."""
    return _patch(__name__, arg, value, **changes)
