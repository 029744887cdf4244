"""``torch.utils.checkpoint``: activation checkpointing, memory traded for a second forward.

``checkpoint(function, *args, use_reentrant=...)`` runs ``function`` without keeping what its ops save for
backward; backward runs ``function`` again to get it back. The random state (dropout) is restored for the
second run, so both runs draw the same numbers (``preserve_rng_state=True``, the default).

- ``use_reentrant=False`` (PyTorch's recommendation): the ops record as usual, but what they save goes
  through saved-tensor hooks (``ember.autograd.graph.saved_tensors_hooks``) that keep only an index; the
  first backward that needs one of them reruns ``function`` once and hands out its saved tensors in the same
  order. Gradients reach everything ``function`` used (parameters included) whether or not the inputs
  require grad, and ``autograd.grad`` works through it.
- ``use_reentrant=True``: ``function`` runs under ``no_grad`` inside one custom autograd Function; its
  backward reruns ``function`` with grad and calls ``backward`` on that (a backward inside backward).
  Gradients flow only if some input requires grad (PyTorch warns otherwise, and so does ember).

Not passing ``use_reentrant`` warns as PyTorch 2.13 does and means ``True``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _warnings
from .. import random as _random
from .._device import check_device
from .._device import device as _device
from .._missing import module_getattr
from .._tensor import Tensor
from ..autograd import backward as _backward
from ..autograd.engine import inputs_given
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..autograd.saved_hooks import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "get_device_states", "set_device_states"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)


class _RngReplay:
    """The global generator's state when the checkpointed forward began, replayed around its second run."""

    def __init__(self, preserve: bool) -> None:
        self.state = _random.get_rng_state() if preserve else None

    def __enter__(self) -> None:
        if self.state is not None:
            self.now = _random.get_rng_state()
            _random.set_rng_state(self.state)

    def __exit__(self, *exc: Any) -> None:
        if self.state is not None:
            _random.set_rng_state(self.now)


# ---------------------------------------------------------------------------------------- use_reentrant=False
class _Recomputation:
    """One checkpointed call: the saved tensors of its first run are replaced by their indices; the second
    run, made the first time backward asks for one, provides them all."""

    def __init__(self, function: Callable, args: tuple, kwargs: dict, preserve: bool) -> None:
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng = _RngReplay(preserve)
        self.count = 0
        self.saved: list[Tensor] | None = None

    def pack(self, tensor: Tensor) -> int:
        self.count += 1
        return self.count - 1

    def unpack(self, index: int) -> Tensor:
        if self.saved is None:
            saved: list[Tensor] = []
            with self.rng, enable_grad(), saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
                self.function(*self.args, **self.kwargs)
            if len(saved) != self.count:
                raise RuntimeError(
                    "torch.utils.checkpoint: the recomputed forward saved a different number of tensors for "
                    f"backward ({len(saved)}) than the original forward ({self.count}): the function must run the "
                    "same ops both times (no data-dependent control flow on values that differ)."
                )
            self.saved = saved
        return self.saved[index]


# ---------------------------------------------------------------------------------------- use_reentrant=True
class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve, *args):
        ctx.run_function, ctx.rng = run_function, _RngReplay(preserve)
        ctx.inputs = args
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if inputs_given():  # (PyTorch's refusal: its rerun's own backward would fill every leaf's .grad)
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
                "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
                ".backward() without passing the `inputs` argument.")
        saved = iter(ctx.saved_tensors)
        inputs = []
        for a in ctx.inputs:
            if isinstance(a, Tensor):
                original = a
                a = next(saved).detach()
                a.requires_grad_(original.requires_grad)
            inputs.append(a)
        with ctx.rng, enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *[a.grad if isinstance(a, Tensor) else None for a in inputs])


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn: Callable | None = None,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, keeping none of what its ops save for backward (see the module docstring).

    ``preserve_rng_state`` (keyword, default True) restores the random state for the second run.
    ``context_fn``, ``determinism_check``, ``debug`` and ``early_stop`` are accepted as PyTorch's; ember's
    recomputation always runs the whole function once (``early_stop`` has nothing to stop).
    """
    if use_reentrant is None:
        # PyTorch's checkpoint is wrapped by its dynamo-disabling decorator, whose frame its warning names
        _warnings.warn_in("torch._dynamo.eval_frame", _USE_REENTRANT_WARNING)  # (so once per process)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not None or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            _warnings.warn_in("torch.utils.checkpoint", "None of the inputs have requires_grad=True. Gradients "
                              "will be None")  # (from its CheckpointFunction.forward: once per process)
        return CheckpointFunction.apply(function, preserve, *args)
    recomputation = _Recomputation(function, args, kwargs, preserve)
    forward_context, recompute_context = context_fn() if context_fn is not None else (None, None)
    if recompute_context is not None:
        inner = recomputation.function
        recomputation.function = lambda *a, **k: _within(recompute_context, inner, a, k)
    with saved_tensors_hooks(recomputation.pack, recomputation.unpack):
        return _within(forward_context, function, args, kwargs)


def _within(context, function: Callable, args: tuple, kwargs: dict):
    if context is None:
        return function(*args, **kwargs)
    with context:
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments: int, input: Tensor, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Tensor:
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules/functions) in ``segments`` pieces, each but the
    last checkpointed, as PyTorch's."""
    if use_reentrant is None:
        _warnings.warn(_USE_REENTRANT_WARNING.replace("checkpoint:", "checkpoint.checkpoint_sequential:"))
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start: int, end: int) -> Callable:
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


def get_device_states(*args) -> tuple[list[int], list[Tensor]]:
    """The random states of the accelerators that ``args``' tensors are on, as ``(device ids, states)`` for
    ``set_device_states`` (reversible layers save them to replay dropout in backward). Every ember tensor is on
    the CPU, whose state ``ember.get_rng_state`` holds and which PyTorch leaves out too, so both lists are empty."""
    return [], []


def set_device_states(devices, states, *, device_type: str | None = None) -> None:
    """Restore the states ``get_device_states`` returned: nothing for its empty lists. A device id names an
    accelerator ember lacks, refused as a CUDA device is (PyTorch's CPU build fails there as well, with an
    AttributeError of its own); ``device_type="meta"`` does nothing, as in PyTorch."""
    if device_type == "meta":
        return
    for index, _state in zip(devices, states, strict=False):
        check_device(_device(device_type or "cuda", index))


__getattr__ = module_getattr(__name__)
