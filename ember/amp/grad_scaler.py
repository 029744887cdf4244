"""``GradScaler``: PyTorch's dynamic loss scaling, with PyTorch's CPU semantics.

``scaler.scale(loss).backward()`` makes every gradient ``scale`` times larger;
``scaler.step(optimizer)`` divides them back (``unscale_``), skips the step if
any is inf or NaN, and ``scaler.update()`` halves the scale after a skipped step
or doubles it after ``growth_interval`` clean ones. The scale is a float32
number, as PyTorch keeps it.

On the default ``device="cuda"`` the scaler is disabled, as PyTorch disables it
when no GPU is present (without PyTorch's warning): ``scale`` returns its input,
``step`` calls ``optimizer.step()``, ``update`` does nothing and ``state_dict()``
is empty. ``GradScaler("cpu")`` scales.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .. import _warnings
from .._backend import xp
from .._dtype import SCALAR_TYPE_NAMES
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"
_FIX = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."


def _f32(x: float) -> float:
    """``x`` rounded to float32, the precision PyTorch stores the scale in: past float32's range it is inf, as in
    PyTorch, without NumPy's overflow warning."""
    with xp.errstate(over="ignore"):
        return float(xp.float32(x))


class GradScaler:
    """Dynamic loss scaling (see the module docstring). Arguments and defaults are PyTorch's."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = bool(enabled) and device != "cuda"  # ember has no GPU: PyTorch disables it then
        if enabled and device == "cuda":
            _warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                           through={"ember.cuda": "torch.cuda.amp.grad_scaler"})  # from its deprecated subclass
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: float | None = None  # set by the first scale(), as PyTorch does lazily
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker: int | None = None
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    # ----------------------------------------------------------------- the training-step calls
    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples/iterables of tensors) times the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale, self._growth_tracker = _f32(self._init_scale), self._init_growth_tracker
        factor = Tensor._make(xp.asarray(self._scale, dtype=xp.float32))

        def apply(value):
            if isinstance(value, Tensor):
                return value * factor
            if isinstance(value, Iterable):
                scaled = map(apply, value)
                return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place and note whether any is inf or NaN."""
        if not self._enabled:
            return
        self._check_scaled("unscale_")
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = _f32(1.0 / self._scale)
        state["found_inf"] = self._unscale_grads(optimizer, inv_scale)
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args: Any, **kwargs: Any):
        """``unscale_`` (unless already done), then ``optimizer.step(*args, **kwargs)`` unless a gradient is
        inf or NaN; returns what ``optimizer.step`` returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scaled("step")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = optimizer.step(*args, **kwargs) if not state["found_inf"] else None
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back off after a skipped step, grow after ``growth_interval`` clean ones; or set ``new_scale``."""
        if not self._enabled:
            return
        self._check_scaled("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale = _f32(new_scale)
            else:
                if not (isinstance(new_scale, Tensor) and new_scale.numel() == 1 and not new_scale.requires_grad):
                    raise AssertionError("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                                         "torch.FloatTensor with requires_grad=False.")
                self._scale = _f32(new_scale.item())
        else:
            checks = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not checks:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(checks):
                self._scale, self._growth_tracker = _f32(self._scale * self._backoff_factor), 0
            elif self._growth_tracker + 1 == self._growth_interval:
                grown = _f32(self._scale * self._growth_factor)
                self._scale = grown if math.isfinite(grown) else self._scale
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
        self._per_optimizer = {}

    # ----------------------------------------------------------------- settings and state
    def get_scale(self) -> float:
        """The current scale (the initial one before the first ``scale()``); 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        return self._enabled

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's five entries (``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval``,
        ``_growth_tracker``); empty when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a ``state_dict()``; a no-op when disabled."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = _f32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]

    # ----------------------------------------------------------------- internals
    def _state(self, optimizer) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def _check_scaled(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _FIX)

    @staticmethod
    def _unscale_grads(optimizer, inv_scale: float) -> bool | None:
        """Multiply every gradient by ``inv_scale``; True if any was inf/NaN, None if there were none."""
        found = None
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.dtype.name == "float16":
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    found = _unscale_(p.grad, inv_scale) or bool(found)
        return found


def _unscale_(grad: Tensor, inv_scale: float) -> bool:
    """Multiply ``grad`` by ``inv_scale`` in place (by 1: left as it is); whether it held an inf or a NaN before
    (checked on a sparse gradient's stored entries)."""
    values = grad._data.values if grad.is_sparse else grad._data
    found = not bool(xp.isfinite(values).all())
    if inv_scale != 1.0:
        grad.mul_(inv_scale)
    return found


def _amp_foreach_non_finite_check_and_unscale_(self: list[Tensor], found_inf: Tensor, inv_scale: Tensor) -> None:
    """``torch._amp_foreach_non_finite_check_and_unscale_``, the kernel of PyTorch's GradScaler that custom scalers
    call: each tensor of ``self`` multiplied in place by ``inv_scale`` (a one-element float tensor), and
    ``found_inf`` (a one-element float tensor) set to 1 when any of them held an inf or a NaN (left as it was
    otherwise). PyTorch's errors: a ``found_inf`` or ``inv_scale`` of another size or not float32, a non-Tensor
    ``inv_scale`` (TypeError), an integer tensor or a sparse one (NotImplementedError)."""
    for name, value in (("found_inf", found_inf), ("inv_scale", inv_scale)):
        if not isinstance(value, Tensor):
            raise TypeError(f"_amp_foreach_non_finite_check_and_unscale_(): argument '{name}' must be Tensor, "
                            f"not {type(value).__name__}")
        if value.numel() != 1:
            raise RuntimeError(f"{name} must be a 1-element tensor.")
    if inv_scale.dtype.name != "float32":
        raise RuntimeError("inv_scale must be a float tensor.")
    if found_inf.dtype.name != "float32":
        raise RuntimeError("found_inf must be a float tensor.")
    for t in self:
        if t.is_sparse:
            raise NotImplementedError("Could not run 'aten::_amp_foreach_non_finite_check_and_unscale_' with "
                                      "arguments from the 'SparseCPU' backend.")
        if not t.is_floating_point():
            raise NotImplementedError(f"\"_amp_foreach_non_finite_check_and_unscale_cpu\" not implemented for "
                                      f"'{SCALAR_TYPE_NAMES[t.dtype.name]}'")
    factor = float(inv_scale.item())
    with no_grad():
        found = [_unscale_(t, factor) for t in self]
        if any(found):
            found_inf.fill_(1.0)
