"""``ember.jit``: TorchScript's names as model code uses them, on a framework without TorchScript.

Model code asks ``torch.jit.is_scripting()`` / ``is_tracing()`` (False here: ember
always runs the Python code) and decorates helpers with ``@torch.jit.script``,
``@torch.jit.ignore``, ``@torch.jit.unused`` or ``@torch.jit.export``; those
return the function unchanged, so the model computes what its Python says.
``script(model)`` and ``trace(model, example_inputs)`` likewise return the model
itself (a subclass of ``ScriptModule`` is an ``nn.Module`` run the same way), and so does ``freeze`` (of a
module in eval mode, as PyTorch's); ``optimize_for_inference`` a copy.
``save`` writes the module as ``ember.save`` writes one (its class's import path and its state, no code) and ``load``
rebuilds it from its class; a TorchScript archive written by PyTorch holds TorchScript code, which ember cannot run,
and loading one is a RuntimeError that says how to load its weights instead.
"""

# (no ``from __future__ import annotations``: it would bind the name ``annotations`` over the submodule
# torch.jit.annotations)
import sys
from collections.abc import Callable
from typing import Any, Final  # noqa: F401  (torch.jit.Final is typing.Final)

from .._missing import module_getattr
from .._warnings import warn_in
from ..nn.modules.module import Module


def _deprecated(name: str, module: str, alternative: str = "`torch.compile` or `torch.export`") -> None:
    """PyTorch's DeprecationWarning for ``torch.jit.<name>`` at the caller's line, naming PyTorch's module
    ``torch.jit.<module>`` that issues it (``warn_in``): hidden by default, silenced by filters for PyTorch's
    warnings."""
    if sys.version_info >= (3, 14):
        message = f"`torch.jit.{name}` is not supported in Python 3.14+ and may break. Please switch to {alternative}."
    else:
        message = f"`torch.jit.{name}` is deprecated. Please switch to {alternative}."
    warn_in(f"torch.jit.{module}", message, DeprecationWarning)


def is_scripting() -> bool:
    """False: ember never compiles TorchScript."""
    return False


def is_tracing() -> bool:
    """False: ember never traces."""
    return False


def script(obj: Any, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None) -> Any:
    """Returns ``obj`` (a function or module) unchanged: it runs as the Python it is. PyTorch's DeprecationWarning,
    as PyTorch's other TorchScript entry points here (``trace``, ``freeze``, ``save``, ...)."""
    _deprecated("script", "_script")
    return obj


def script_method(fn: Callable) -> Callable:
    """Returns ``fn`` unchanged: a ``ScriptModule``'s method runs as the Python it is (PyTorch's
    DeprecationWarning, as ``script``)."""
    _deprecated("script_method", "_script")
    return fn


def trace(func: Any, example_inputs=None, *args: Any, **kwargs: Any) -> Any:
    """Returns ``func`` (a function or module) unchanged; ``example_inputs`` is not run."""
    _deprecated("trace", "_trace")
    if hasattr(func, "forward") and hasattr(func, "named_parameters"):  # (PyTorch traces a module's forward method)
        _deprecated("trace_method", "_trace")
    return func


class TracerWarning(Warning):
    """``torch.jit.TracerWarning``: PyTorch's warning that a traced value was turned into a constant. ember's
    ``jit.trace`` runs nothing, so ember emits it only where ``SummaryWriter.add_graph`` meets a list of outputs, as
    PyTorch's trace does; programs filter or catch it by this class."""

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


def save(m: Any, f: Any, _extra_files: dict | None = None) -> None:
    """Write ``m`` (a scripted or traced module, which in ember is the module itself) to ``f`` as ``ember.save``
    writes a module: its class's import path, parameters, buffers and attributes.

    Differences from PyTorch: the file holds no code, so ``jit.load`` rebuilds the module from its Python class, which
    must be importable where the file is loaded (in the program that saved it, a class defined in ``__main__`` is);
    the file is ember's, not a TorchScript archive PyTorch can load; a scripted function (not a module) and
    ``_extra_files`` are refused (TypeError, NotImplementedError) rather than dropped.
    """
    from ..nn import Module
    from ..serialization import save as save_object

    _deprecated("save", "_serialization", "`torch.export`")
    if not isinstance(m, Module):
        raise TypeError(f"jit.save expects a scripted or traced module, got {type(m).__name__}: ember saves modules "
                        "(their class and state); a function is its Python code and needs no saving")
    if _extra_files:
        raise NotImplementedError("jit.save(_extra_files=...): ember's saved modules hold no extra files; save "
                                  "them beside the module")
    save_object(m, f)


def load(f: Any, map_location: Any = None, _extra_files: dict | None = None, _restore_shapes: bool = False) -> Any:
    """Read a module written by ``jit.save``: rebuilt from its class (which the file names and must be importable),
    with its parameters, buffers, attributes and training mode; ``map_location`` as ``ember.load``'s.

    A TorchScript archive written by PyTorch is a RuntimeError: its module is TorchScript code, which ember cannot
    run (build the model from its Python class and load the archive's weights instead). Loading imports the modules
    the file names, as ``ember.load(f, weights_only=False)``: load only files you trust (as with PyTorch's
    ``jit.load``, which runs the archive's code).
    """
    from ..nn import Module
    from ..serialization import load as load_object

    _deprecated("load", "_serialization", "`torch.export`")
    if _extra_files:
        raise NotImplementedError("jit.load(_extra_files=...): ember's saved modules hold no extra files")
    m = load_object(f, map_location=map_location, weights_only=False)
    if not isinstance(m, Module):
        raise RuntimeError(f"jit.load({f!r}): the file holds a {type(m).__name__}, not a module written by "
                           "jit.save; read it with ember.load")
    return m


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    """``mod`` itself (a module in eval mode, as PyTorch requires), as ``script`` returns it: it computes what
    ``mod`` computes, in-place changes to its weights included, as PyTorch's frozen module, whose inlined weights
    share the model's memory. (PyTorch's frozen module lists no parameters; ``mod`` still does.)"""
    warn_in("torch.jit._freeze", "`torch.jit.freeze` is deprecated. Please use `torch.compile` instead.",
            DeprecationWarning)
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

    warn_in("torch.jit._freeze", "`torch.jit.optimize_for_inference` is deprecated. Please use `torch.compile` "
            "instead.", DeprecationWarning)
    frozen = copy.deepcopy(mod)
    frozen = freeze(frozen.eval() if hasattr(frozen, "eval") else frozen)
    for p in frozen.parameters():
        p.requires_grad_(False)
    return frozen


def _overload(func: Callable) -> Callable:
    """``@torch.jit._overload``: declares a TorchScript overload signature; ember does not script, so the
    function is returned as it is (its body, ``...`` or ``pass``, is never meant to be called)."""
    return func


class ScriptModule(Module):
    """TorchScript's module class, as model code subclasses it: an ``nn.Module`` whose methods, the
    ``@script_method`` ones included, run as the Python they are (the rule of ``script``: ember has no TorchScript,
    so nothing is compiled and control flow on ``self.training`` or tensors stays Python's). Only instances of such
    subclasses are ScriptModules; ``script(model)`` returns ``model`` itself, not a ScriptModule. PyTorch's
    compiled-program members (``code``, ``graph``, ``define``) are missing."""


class ScriptFunction:
    """No ember object is a ScriptFunction: PyTorch's is built only by its compiler, and calling the class is
    PyTorch's TypeError (its binding defines no constructor)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"{type(self).__name__}: No constructor defined!")


__getattr__ = module_getattr(__name__)
