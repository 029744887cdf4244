"""Rebinding ember's public functions for the length of a transform (vmap, fx's symbolic tracing).

Outside a transform, ``torch.sum(x)``, ``F.linear(x, w)`` and ``nn.Linear``'s call of its op are ember's plain
functions, with no extra cost. A ``Rebinding`` replaces, while it is entered, every binding of a public function
of ``ember``, ``ember.nn.functional``, ``ember.special``, ``ember.linalg`` and ``ember.fft`` (and, where asked, the
few internal ops the layers call directly, such as the convolution behind ``nn.Conv2d``) in every loaded ember
module by a stand-in its owner makes; leaving the outermost entry puts the functions back. A function imported
into a user's own module before the transform keeps the plain binding unless the owner rebinds that module's
globals too (``extra``).
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Callable

# (module, key prefix): the public namespaces whose functions are rebound; a function's key is prefix + name.
NAMESPACES = (("ember", ""), ("ember.nn.functional", "F."), ("ember.special", "special."),
              ("ember.linalg", "linalg."), ("ember.fft", "fft."))
# Ops that layers call directly rather than through torch.nn.functional: (module, name, key).
INTERNAL = (("ember.nn._ops.conv", "conv", "conv_nd"),
            ("ember.nn._ops.conv_transpose", "conv_transpose", "conv_transpose_nd"),
            ("ember.nn._ops.conv_higher_order", "conv_padded", "conv_padded"),
            ("ember.nn._ops.conv_higher_order", "conv_transpose_padded", "conv_transpose_padded"),
            ("ember.nn._ops.pooling", "max_pool", "max_pool_nd"),
            ("ember.nn._ops.pooling", "avg_pool", "avg_pool_nd"),
            ("ember.nn._ops.pooling", "adaptive_avg_pool", "adaptive_avg_pool_nd"))

_public: dict[int, tuple[object, str]] = {}  # id(function) -> (function, key), the public functions


def public_functions() -> dict[int, tuple[object, str]]:
    """{id(function): (function, key)} of the public functions of NAMESPACES (and what they wrap)."""
    if not _public:
        for module_name, prefix in NAMESPACES:
            module = importlib.import_module(module_name)
            for name, obj in list(vars(module).items()):
                if name.startswith("_") or not isinstance(obj, types.FunctionType):
                    continue
                while obj is not None:
                    _public.setdefault(id(obj), (obj, prefix + name))
                    obj = getattr(obj, "__wrapped__", None)
    return _public


class Rebinding:
    """The stand-ins ``make_stand_in(function, key)`` of the public functions (and of INTERNAL's ops if
    ``internal``), installed from the outermost ``enter()`` to its ``exit()``."""

    def __init__(self, make_stand_in: Callable[[object, str], object], internal: bool = False) -> None:
        self._make = make_stand_in
        self._internal = internal
        self._targets: dict[int, tuple[object, str]] = {}
        # id(module globals) -> (module globals, {name: original}, {name: stand-in})
        self._bindings: dict[int, tuple[dict, dict, dict]] = {}
        self._foreign: list[int] = []  # the keys of ``_bindings`` that are not ember modules' (rebound for one entry)
        self._scanned: set[str] = set()
        self._stand_ins: dict[int, object] = {}
        self._depth = 0  # entries running, in all threads (stand-ins pass other threads' plain calls through)
        self._lock = threading.Lock()
        self._modules_seen = 0  # len(sys.modules) at the last scan: nothing new to scan while it is unchanged

    def stand_in(self, original, key: str):
        """The one stand-in of ``original``."""
        found = self._stand_ins.get(id(original))
        if found is None:
            found = self._stand_ins[id(original)] = self._make(original, key)
        return found

    def _bind(self, namespace: dict) -> None:
        for name, obj in list(namespace.items()):
            hit = self._targets.get(id(obj))
            if hit is not None and hit[0] is obj:
                _, originals, stand_ins = self._bindings.setdefault(id(namespace), (namespace, {}, {}))
                originals[name] = obj
                stand_ins[name] = self.stand_in(obj, hit[1])

    def _scan(self) -> None:
        """Find the bindings of the target functions in the ember modules loaded since the last scan."""
        if len(sys.modules) == self._modules_seen:
            return
        self._modules_seen = len(sys.modules)
        if not self._targets:
            self._targets.update(public_functions())
            if self._internal:
                for module_name, name, key in INTERNAL:
                    obj = getattr(importlib.import_module(module_name), name)
                    self._targets.setdefault(id(obj), (obj, key))
        for module_name, module in list(sys.modules.items()):
            if module_name in self._scanned or not (module_name == "ember" or module_name.startswith("ember.")):
                continue
            self._scanned.add(module_name)
            if module is None or module_name.startswith(("ember.func._", "ember.fx.")):
                continue
            self._bind(vars(module))

    def enter(self, extra: tuple[dict, ...] = ()) -> None:
        """Install the stand-ins (on the outermost entry): one dict update per module. ``extra``: further module
        globals (a traced function's) whose bindings of the target functions are rebound too."""
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._scan()
            for namespace in extra:
                if id(namespace) not in self._bindings:
                    self._bind(namespace)
                    if id(namespace) in self._bindings and not str(namespace.get("__name__", "")).startswith("ember"):
                        self._foreign.append(id(namespace))
            for namespace, _, stand_ins in self._bindings.values():
                namespace.update(stand_ins)

    def refresh(self) -> bool:
        """Scan the ember modules loaded since the entry (a lazily imported submodule) and install their
        stand-ins; whether there were new ones."""
        with self._lock:
            before = sum(len(stand_ins) for _, _, stand_ins in self._bindings.values())
            self._scan()
            for namespace, _, stand_ins in self._bindings.values():
                namespace.update(stand_ins)
            return sum(len(stand_ins) for _, _, stand_ins in self._bindings.values()) > before

    def exit(self) -> None:
        """Put the functions back (on leaving the outermost entry)."""
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for namespace, originals, _ in self._bindings.values():
                    namespace.update(originals)
                # A user's module globals are rebound for one entry only: forget them (ember's stay cached).
                for key in self._foreign:
                    self._bindings.pop(key, None)
                self._foreign.clear()
