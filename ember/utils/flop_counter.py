"""``torch.utils.flop_counter``: ``FlopCounterMode``, the context manager that counts the floating-point operations
run inside it.

PyTorch counts them by intercepting every ATen operator (a dispatch mode) and applying a formula per operator
(matrix products, convolutions, attention). ember's operators do not go through such a dispatcher, so ember cannot
count them: a ``FlopCounterMode`` can be built and read (a counter never entered holds no counts, as PyTorch's:
``get_total_flops()`` is 0 and ``get_flop_counts()`` is ``{"Global": {}}``), but entering one raises
NotImplementedError naming the feature, rather than report zero for work it did not see.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._missing import module_getattr

__all__ = ["FlopCounterMode"]


class FlopCounterMode:
    """Counts of the floating-point operations run inside the context, per module and operator
    (``torch.utils.flop_counter.FlopCounterMode``). Difference from PyTorch: entering it raises NotImplementedError
    (ember has no operator dispatcher to count through), so the counts stay empty."""

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Any] | None = None) -> None:
        self.depth, self.display = depth, display
        self.flop_counts: dict[str, dict[Any, int]] = {"Global": {}}
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """The counts, by module name ("Global": all of them), then by operator."""
        return {name: dict(counts) for name, counts in self.flop_counts.items()}

    def __enter__(self) -> FlopCounterMode:
        raise NotImplementedError(
            "torch.utils.flop_counter.FlopCounterMode cannot count in ember: PyTorch counts the operations by "
            "intercepting its ATen operators, and ember's operators do not go through such a dispatcher")

    def __exit__(self, *exc_info: Any) -> None:
        return None


__getattr__ = module_getattr(__name__)
