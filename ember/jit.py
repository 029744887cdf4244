"""``ember.jit``: TorchScript's names as model code uses them, on a framework without TorchScript.

Model code asks ``torch.jit.is_scripting()`` / ``is_tracing()`` (False here: ember
always runs the Python code) and decorates helpers with ``@torch.jit.script``,
``@torch.jit.ignore``, ``@torch.jit.unused`` or ``@torch.jit.export``; those
return the function unchanged, so the model computes what its Python says.
``script(model)`` and ``trace(model, example_inputs)`` likewise return the model
itself, and so does ``freeze`` (of a module in eval mode, as PyTorch's); ``optimize_for_inference`` a copy.
Saving or loading TorchScript (``save``, ``load``) raises NotImplementedError: there is no TorchScript to save.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final  # noqa: F401  (torch.jit.Final is typing.Final)

from ._missing import module_getattr


def is_scripting() -> bool:
    """False: ember never compiles TorchScript."""
    return False


def is_tracing() -> bool:
    """False: ember never traces."""
    return False


def script(obj: Any, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None) -> Any:
    """Returns ``obj`` (a function or module) unchanged: it runs as the Python it is."""
    return obj


def trace(func: Any, example_inputs=None, *args: Any, **kwargs: Any) -> Any:
    """Returns ``func`` (a function or module) unchanged; ``example_inputs`` is not run."""
    return func


class TracerWarning(Warning):
    """``torch.jit.TracerWarning``: PyTorch's warning that a traced value was turned into a constant. ember's
    ``jit.trace`` runs nothing, so ember never emits it; programs filter or catch it by this class."""

    @staticmethod
    def ignore_lib_warnings() -> None:
        """Ignore TracerWarnings raised from library code (PyTorch's helper; ember has none to ignore)."""


def script_if_tracing(fn: Callable) -> Callable:
    return fn


def _decorator(fn: Callable | None = None, **kwargs: Any):
    """``@ignore``, ``@ignore(drop=True)``: the function unchanged."""
    return fn if fn is not None else (lambda f: f)


ignore = unused = export = _decorator


def annotate(the_type: Any, the_value: Any) -> Any:
    """``the_value`` (a type hint for the TorchScript compiler, which ember does not have)."""
    return the_value


def _no_torchscript(name: str):
    def fn(*args: Any, **kwargs: Any):
        raise NotImplementedError(
            f"torch.jit.{name} is not implemented in ember: ember has no TorchScript. Save the weights with "
            "torch.save(model.state_dict(), path) and rebuild the model from its Python class."
        )

    fn.__name__ = name
    fn.__doc__ = f"Raises NotImplementedError: ember has no TorchScript to {name}."
    return fn


save = _no_torchscript("save")
load = _no_torchscript("load")


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    """``mod`` itself (a module in eval mode, as PyTorch requires), as ``script`` returns it: it computes what
    ``mod`` computes, in-place changes to its weights included, as PyTorch's frozen module, whose inlined weights
    share the model's memory. (PyTorch's frozen module lists no parameters; ``mod`` still does.)"""
    if getattr(mod, "training", False):
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() on "
                           "your module before freezing.")
    return mod


def optimize_for_inference(mod: Any, other_methods: Any = None) -> Any:
    """A copy of ``mod``, in eval mode, computing what ``mod`` computes in eval mode now: PyTorch's folds the
    weights into new constants, which later changes to the model's weights do not reach (it also fuses ops for
    speed; ember runs the same Python). A module in training mode is put in eval mode first, as PyTorch's; ``mod``
    itself is left as it is (PyTorch's changes its scripted copy's mode)."""
    import copy

    frozen = copy.deepcopy(mod)
    frozen = freeze(frozen.eval() if hasattr(frozen, "eval") else frozen)
    for p in frozen.parameters():
        p.requires_grad_(False)
    return frozen


def _overload(func: Callable) -> Callable:
    """``@torch.jit._overload``: declares a TorchScript overload signature; ember does not script, so the
    function is returned as it is (its body, ``...`` or ``pass``, is never meant to be called)."""
    return func


class ScriptModule:
    """No ember object is a ScriptModule (``isinstance(m, torch.jit.ScriptModule)`` is False)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("torch.jit.ScriptModule is not implemented in ember: ember has no TorchScript")


class ScriptFunction(ScriptModule):
    """No ember object is a ScriptFunction."""


__getattr__ = module_getattr(__name__)
