"""While a vmap runs, ember's public functions dispatch on BatchedTensors.

``torch.sum(x)``, ``F.linear(x, w)``, ``nn.Linear``'s call of its op: outside vmap these are ember's plain
functions, with no extra cost. On entering the outermost vmap, every binding of a public function of ``ember``,
``ember.nn.functional``, ``ember.special``, ``ember.linalg`` and ``ember.fft`` (and the few internal ops the
layers call directly, such as the convolution behind ``nn.Conv2d``) in every loaded ember module is replaced by a
stand-in that passes plain arguments straight through and sends BatchedTensors to ``dispatch``; leaving the
outermost vmap puts the functions back. Random functions' stand-ins also apply vmap's ``randomness``.
A function imported into a user's own module before vmap keeps the plain binding: on a BatchedTensor it reads the
array, and vmap runs the whole function once per example (PyTorch's fallback, with its warning).
"""

from __future__ import annotations

import functools
import importlib
import sys
import threading
import types
from collections.abc import Callable

from ._batched import _State, dispatch, top_level

_NAMESPACES = (("ember", ""), ("ember.nn.functional", "F."), ("ember.special", "special."),
               ("ember.linalg", "linalg."), ("ember.fft", "fft."))
# Ops that layers call directly rather than through torch.nn.functional.
_INTERNAL = (("ember.nn._ops.conv", "conv", "conv_nd"), ("ember.nn._ops.pooling", "max_pool", "max_pool_nd"),
             ("ember.nn._ops.pooling", "avg_pool", "avg_pool_nd"),
             ("ember.nn._ops.pooling", "adaptive_avg_pool", "adaptive_avg_pool_nd"))

# key -> rule(name, op, level, args, kwargs, mode) for random ops (``_rules_random.py``)
RANDOM_RULES: dict[str, Callable] = {}

_targets: dict[int, tuple[object, str]] = {}  # id(function) -> (function, key)
# id(module globals) -> (module globals, {name: original}, {name: stand-in})
_bindings: dict[int, tuple[dict, dict, dict]] = {}
_scanned: set[str] = set()
_stand_ins: dict[int, object] = {}
_depth = 0  # vmaps running, in all threads (the stand-ins pass other threads' plain calls through)
_lock = threading.Lock()
_modules_seen = 0  # len(sys.modules) at the last scan: nothing new to scan while it is unchanged


def _collect_targets() -> None:
    for module_name, prefix in _NAMESPACES:
        module = importlib.import_module(module_name)
        for name, obj in list(vars(module).items()):
            if name.startswith("_") or not isinstance(obj, types.FunctionType):
                continue
            while obj is not None:
                _targets.setdefault(id(obj), (obj, prefix + name))
                obj = getattr(obj, "__wrapped__", None)
    for module_name, name, key in _INTERNAL:
        obj = getattr(importlib.import_module(module_name), name)
        _targets.setdefault(id(obj), (obj, key))


def _stand_in(original, key: str):
    found = _stand_ins.get(id(original))
    if found is not None:
        return found
    if key in RANDOM_RULES:
        from ._rules_random import random_dispatch

        def stand_in(*args, **kwargs):
            if not _State.levels:
                return original(*args, **kwargs)
            return random_dispatch(key, original, stand_in, args, kwargs)
    else:
        # The rules get the stand-in as the op: called on the batch values, which are batched tensors of the
        # levels below in nested vmaps, it dispatches again; on plain tensors it is the original.
        def stand_in(*args, **kwargs):
            level = top_level(args, kwargs)
            if level == 0:
                return original(*args, **kwargs)
            return dispatch(key, stand_in, args, kwargs, level)
    functools.update_wrapper(stand_in, original)
    _stand_ins[id(original)] = stand_in
    return stand_in


def _scan() -> None:
    """Find the bindings of the target functions in the ember modules loaded since the last scan."""
    global _modules_seen
    if len(sys.modules) == _modules_seen:
        return
    _modules_seen = len(sys.modules)
    if not _targets:
        _collect_targets()
    for module_name, module in list(sys.modules.items()):
        if module_name in _scanned or not (module_name == "ember" or module_name.startswith("ember.")):
            continue
        _scanned.add(module_name)
        if module is None or module_name.startswith("ember.func._"):
            continue
        namespace = vars(module)
        for name, obj in list(namespace.items()):
            hit = _targets.get(id(obj))
            if hit is not None and hit[0] is obj:
                _, originals, stand_ins = _bindings.setdefault(id(namespace), (namespace, {}, {}))
                originals[name] = obj
                stand_ins[name] = _stand_in(obj, hit[1])


def enter() -> None:
    """Install the stand-ins (on entering the outermost vmap): one dict update per module."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            _scan()
            for namespace, _, stand_ins in _bindings.values():
                namespace.update(stand_ins)


def refresh() -> bool:
    """Scan the ember modules loaded since vmap started (a lazily imported submodule) and install their stand-ins;
    whether there were new ones."""
    with _lock:
        before = sum(len(stand_ins) for _, _, stand_ins in _bindings.values())
        _scan()
        for namespace, _, stand_ins in _bindings.values():
            namespace.update(stand_ins)
        return sum(len(stand_ins) for _, _, stand_ins in _bindings.values()) > before


def exit() -> None:
    """Put the functions back (on leaving the outermost vmap)."""
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0:
            for namespace, originals, _ in _bindings.values():
                namespace.update(originals)
