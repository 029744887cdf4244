"""Which classes and functions a ``weights_only=True`` load may rebuild: PyTorch's safe-globals allowlist.

A saved module or a saved reference to a function names its class or function
by path (``module.qualname``). Loading with ``weights_only=True`` (the default)
accepts only paths on the allowlist, which starts empty, as in PyTorch.
"""

from __future__ import annotations

import importlib
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._shown_name import package_name
from ._native_functions import public_path

_allowed: dict[str, Any] = {}  # path -> the object itself


def weights_only_error(what: str, path: str) -> pickle.UnpicklingError:
    """PyTorch's refusal of a global that is not allowlisted, in its words (programs test for its first words,
    "Weights only load failed"), naming the file.

    PyTorch raises ``pickle.UnpicklingError`` itself (no subclass, and no RuntimeError, which a corrupt file gives):
    a program's ``except pickle.UnpicklingError`` and ``except RuntimeError`` clauses, and the type name it prints,
    see what they see in PyTorch.
    """
    pkg = package_name()
    path = path.removeprefix("builtins.")  # PyTorch names a builtin without its module: GLOBAL frozenset
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps only "
        f"if you trust the source of the checkpoint. \n\t(1) Re-running `{pkg}.load` with `weights_only` set to "
        "`False` will likely succeed, but it can result in arbitrary code execution (the classes the file names are "
        "imported). Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
        "`weights_only=True` please check the recommended steps in the following error message.\n\t"
        f"WeightsUnpickler error: Unsupported global: GLOBAL {path} was not an allowed global by default. Please use "
        f"`{pkg}.serialization.add_safe_globals([{path}])` or the `{pkg}.serialization.safe_globals([{path}])` "
        f"context manager to allowlist this global if you trust this class/function.\n\n(loading: {what})"
    )


def build_refused(what: str, cls: type) -> pickle.UnpicklingError:
    """PyTorch's refusal to give state (BUILD) to an object whose class is not allowlisted (a NumPy dtype's class,
    ``numpy.dtypes.Float32DType``), in its words."""
    pkg = package_name()
    return pickle.UnpicklingError(
        f"Weights only load failed. Re-running `{pkg}.load` with `weights_only` set to `False` will likely succeed, "
        "but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.\n"
        "WeightsUnpickler error: \n\nCan only build Tensor, Parameter, OrderedDict or types allowlisted via "
        f"`add_safe_globals`, but got {cls}\n\n(loading: {what})"
    )


def path_of(obj: Any) -> str:
    """``module.qualname`` of a class or function, refusing what cannot be found again by that path."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname or "<lambda>" in qualname:
        raise TypeError(f"ember.save cannot store {obj!r}: it cannot be imported again by name "
                        "(define it at the top level of a module)")
    return f"{module}.{qualname}"


def add_safe_globals(safe_globals: list) -> None:
    """Allow a ``weights_only=True`` load to rebuild these classes/functions (PyTorch's spelling).

    Entries are the objects themselves, or ``(object, "module.qualname")`` to allow a path other than the
    object's own (for a class that moved).
    """
    for entry in safe_globals:
        obj, path = entry if isinstance(entry, tuple) else (entry, None)
        _allowed[path if path is not None else path_of(obj)] = obj


def get_safe_globals() -> list:
    """The allowlisted objects, as given (an object saved under another path comes back as ``(obj, path)``)."""
    return [obj if safe_path(obj) == path else (obj, path) for path, obj in _allowed.items()]


def safe_path(obj: Any) -> str | None:
    """``path_of(obj)``, or None where it has none."""
    try:
        return path_of(obj)
    except TypeError:
        return None


def allowed() -> dict[str, Any]:
    """The allowlist: path -> the object."""
    return _allowed


def clear_safe_globals() -> None:
    """Empty the allowlist."""
    _allowed.clear()


@contextmanager
def safe_globals(safe_globals: list) -> Iterator[None]:
    """Allowlist these classes/functions inside the ``with`` block only."""
    saved = dict(_allowed)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _allowed.clear()
        _allowed.update(saved)


def ember_counterpart(path: str) -> Any:
    """ember's class or function at the path of PyTorch's ``torch.X`` (ember's layout mirrors PyTorch's namespaces:
    ``torch.nn.modules.activation.ReLU`` is ``ember.nn.modules.activation.ReLU``), or None where ember has none.
    Imports only ember's own modules."""
    if not path.startswith("torch."):
        return None
    path = public_path(path)  # (a function PyTorch implements in C, by its C path: torch._C._nn.gelu)
    module, _, name = ("ember." + path.removeprefix("torch.")).rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    return obj if isinstance(obj, type) or callable(obj) else None


def resolve(path: str, weights_only: bool, what: str, fail) -> Any:
    """The class or function saved as ``path``: allowlisted (weights_only) or imported (weights_only=False)."""
    if weights_only:
        if path in _allowed:
            return _allowed[path]
        raise weights_only_error(what, path)
    module, obj = None, None
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        obj = module
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            obj = None
        break
    if obj is None:
        fail(f"cannot find {path} (the class or function the file names): is its module importable?")
    return obj
