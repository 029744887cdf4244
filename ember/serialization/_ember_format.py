"""ember's own checkpoint format: an uncompressed zip of a JSON manifest and one ``.npy`` per array.

``ember.json``
    ``{"format": "ember.save", "version": 1, "root": NODE, "arrays": [ENTRY, ...]}``.
    A NODE is a JSON ``null``/bool/int/float/string for the same Python value, or
    a one-key object: ``{"list": [NODE...]}``, ``{"tuple": [NODE...]}``, ``{"size": [INT...]}`` (an ``ember.Size``),
    ``{"dict": [[KEY_NODE, NODE]...]}``, ``{"odict": [[KEY_NODE, NODE]...]}``
    (an ``OrderedDict``), ``{"defaultdict": [FACTORY_NODE, [[KEY_NODE, NODE]...]]}`` (a ``defaultdict``, its
    factory None or a global), ``{"set": [NODE...]}``, ``{"frozenset": [NODE...]}``,
    ``{"array": i}`` (payload i), ``{"dtype": "float32"}``, ``{"device": "cpu"}``,
    ``{"global": "module.qualname"}`` (a class or function, by reference),
    ``{"npscalar": i}`` (a NumPy scalar, payload i holding it as a 0-d array),
    ``{"method": [NODE, NAME]}`` (a bound method: its object, by the NODE rules, and its name, as pickle keeps
    one: a custom Function's ``apply``, a module's own method held as an attribute) or
    ``{"module": {"class": PATH, "training": bool, "parameters": PAIRS,
    "buffers": PAIRS, "non_persistent": [NAME...], "modules": PAIRS, "attrs": PAIRS}}``
    (an ``nn.Module``; PAIRS is ``[[NAME, NODE]...]``) or ``{"object": {"class": PATH, "attrs": PAIRS}}``
    (an object pickle keeps as its class and a dict of its state: an ``argparse.Namespace``'s ``__dict__``, an
    optimizer's ``__getstate__()``) or
    ``{"module_ref": k}`` (the k-th module or object stored, again: shared ones stay shared). ENTRY i is
    ``{"kind": "tensor" | "parameter" | "ndarray", "requires_grad": bool}``, with ``"dtype": "bfloat16"``
    for a bfloat16 tensor (its payload holds the bits as uint16: ``.npy`` has no bfloat16).
``arrays/<i>.npy``
    payload i in NumPy's ``.npy`` format (dtype, shape, order, raw bytes).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import types
import zipfile
from collections import OrderedDict, defaultdict
from typing import Any

from .. import _dtype
from .._backend import xp
from .._device import device as _device_type
from .._shown_name import package_name
from .._size import Size
from .._sparse import save_error
from .._tensor import Tensor
from . import _globals
from ._archive import MAX_DEPTH, Archive, Fail, is_plain_numeric, too_deep

FORMAT, VERSION = "ember.save", 1
MANIFEST = "ember.json"
KINDS = ("tensor", "parameter", "ndarray")
# the nodes that count as a level of nesting
_CONTAINERS = ("list", "tuple", "dict", "odict", "defaultdict", "set", "frozenset", "module", "object")
# The JSON levels one level of nesting takes at most: {"module": {"modules": [[NAME, NODE]]}}
_JSON_PER_LEVEL = 4
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


# ---------------------------------------------------------------------------------- save
def _type_name(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _fields_hint(obj: Any) -> str:
    """For a plain object holding settings (an argparse.Namespace, a dataclass, a config class), which PyTorch
    pickles whole and ember's pickle-free formats cannot: how to store what it holds."""
    if isinstance(obj, type) or not hasattr(obj, "__dict__") or callable(obj):
        return ""
    how = "dataclasses.asdict(obj)" if dataclasses.is_dataclass(obj) else "vars(obj)"
    return (f"; to keep what a {type(obj).__name__} holds, store its fields as a dict ({how}) and rebuild it "
            "after loading")


def kept_by_state(cls: type) -> bool:
    """Whether pickle stores an instance of ``cls`` as its class and a dict of its state (an argparse.Namespace,
    a dataclass, a plain config class: its ``__dict__``; an optimizer: its ``__getstate__()``): built by
    ``object.__new__``, no ``__reduce__`` of its own and no ``__slots__``. Such an object is rebuilt from those
    two alone: ``cls.__new__(cls)``, then its ``__setstate__(state)`` or its ``__dict__`` filled, as pickle does."""
    return (cls.__new__ is object.__new__ and cls.__reduce_ex__ is object.__reduce_ex__
            and cls.__reduce__ is object.__reduce__ and not any("__slots__" in vars(c) for c in cls.__mro__))


def state_of(obj: Any) -> dict:
    """The state pickle keeps of an object kept by state: its ``__getstate__()`` or its ``__dict__``, which must be a
    dict of attribute names."""
    state = obj.__getstate__() if owns(type(obj), "__getstate__") else vars(obj)
    if not (isinstance(state, dict) and all(isinstance(k, str) for k in state)):
        raise TypeError(f"ember.save cannot store a {_type_name(obj)}: its __getstate__() is not a dict of "
                        "attribute names")
    return state


def owns(cls: type, name: str) -> bool:
    """Whether ``cls`` defines the pickling method ``name`` (``__getstate__``, ``__setstate__``) itself."""
    return getattr(cls, name, None) is not getattr(object, name, None)


def module_class():
    """nn.Module when ember.nn is loaded (a module can only exist then), else None."""
    module = sys.modules.get("ember.nn.modules.module")
    return module.Module if module is not None else None


class Encoder:
    """Python object -> JSON node, collecting array payloads (each tensor object once)."""

    def __init__(self) -> None:
        self.arrays: list = []
        self.entries: list[dict] = []
        self._index: dict[int, int] = {}  # id(tensor or ndarray) -> payload index
        self._open: set[int] = set()  # ids of the containers being encoded (cycle check)
        self._modules: dict[int, int] = {}  # id(module or object) -> its number: one used twice is stored once
        self._depth = 0  # containers and modules open around the object being encoded

    def encode(self, obj: Any):
        if isinstance(obj, xp.generic) and is_plain_numeric(obj.dtype):
            # a NumPy scalar (np.int64 sizes from a dataset, np.float64 metrics, a float subclass), which pickle keeps
            # as one: stored as a 0-d array (exact for every dtype), the array object kept alive in self.arrays
            return {"npscalar": self._payload(xp.asarray(obj))}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, (Tensor, xp.ndarray)):
            return {"array": self._payload(obj)}
        if isinstance(obj, _dtype.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, _device_type):  # a model holding its device (n-beats' NBeatsNet.device)
            return {"device": str(obj)}
        if isinstance(obj, Size):  # a tensor's shape stays a Size, as torch.save keeps torch.Size
            return {"size": [int(n) for n in obj]}
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            return {"global": _globals.path_of(obj)}
        if isinstance(obj, types.MethodType):
            # pickle keeps a bound method as getattr(its object, its name), so torch.save stores a module holding
            # `self.round = RoundFunction.apply` (a classmethod bound to the class) or one of its own methods
            return {"method": [self.encode(obj.__self__), obj.__name__]}
        module = module_class()
        is_module = module is not None and isinstance(obj, module)
        if not (isinstance(obj, (list, tuple, dict, set, frozenset)) or is_module
                or (hasattr(obj, "__dict__") and kept_by_state(type(obj)))):
            raise TypeError(
                f"{package_name()}.save cannot store an object of type {_type_name(obj)}: it stores tensors, NumPy "
                "arrays, numbers, strings, None, dtypes, devices, nn.Modules, objects pickle keeps as their class and "
                "state, classes and functions (by name), methods bound to those and lists/tuples/dicts/sets of "
                f"them{_fields_hint(obj)}"
            )
        if id(obj) in self._modules:  # modules and objects: one used twice is stored once, as pickle's memo does
            return {"module_ref": self._modules[id(obj)]}
        if id(obj) in self._open:
            raise ValueError(f"ember.save: the object contains a reference cycle through a {type(obj).__name__}")
        if self._depth == MAX_DEPTH:
            raise too_deep("ember.save")
        self._open.add(id(obj))
        self._depth += 1
        if isinstance(obj, defaultdict):  # keeps its factory, as pickle does (GraphSAGE's adjacency lists)
            factory = None if obj.default_factory is None else self.encode(obj.default_factory)
            node = {"defaultdict": [factory, [[self.encode(k), self.encode(v)] for k, v in obj.items()]]}
        elif isinstance(obj, dict):
            tag = "odict" if isinstance(obj, OrderedDict) else "dict"
            node = {tag: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        elif isinstance(obj, (set, frozenset)):
            node = {"frozenset" if isinstance(obj, frozenset) else "set": [self.encode(x) for x in obj]}
        elif isinstance(obj, (list, tuple)):
            node = {"tuple" if isinstance(obj, tuple) else "list": [self.encode(x) for x in obj]}
        elif is_module:
            node = {"module": self._module(obj)}
        else:
            node = {"object": self._object(obj)}
        self._open.discard(id(obj))
        self._depth -= 1
        return node

    def _module(self, m) -> dict:
        d = dict(m.__dict__)
        hooks = [k for k in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
                 if d.pop(k, None)]
        for k in ("_is_full_backward_hook", "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                  "_forward_hooks_always_called"):
            d.pop(k, None)
        if hooks:
            raise TypeError(f"ember.save cannot store a {_type_name(m)} with {' and '.join(hooks)} registered: "
                            "hooks are code; remove them, or save the module's state_dict()")
        self._modules[id(m)] = len(self._modules)
        node = {"class": _globals.path_of(type(m)), "training": bool(d.pop("training", True))}
        for key, store in (("parameters", "_parameters"), ("buffers", "_buffers"), ("modules", "_modules")):
            node[key] = [[name, self.encode(v)] for name, v in d.pop(store, {}).items()]
        node["non_persistent"] = sorted(d.pop("_non_persistent_buffers_set", ()))
        attrs = []
        for name, value in d.items():
            try:
                attrs.append([name, self.encode(value)])
            except TypeError as e:
                raise TypeError(f"{e} (attribute {name!r} of a {_type_name(m)})") from None
        node["attrs"] = attrs
        return node

    def _object(self, obj) -> dict:
        self._modules[id(obj)] = len(self._modules)
        state = state_of(obj)
        attrs = []
        for name, value in state.items():
            try:
                attrs.append([name, self.encode(value)])
            except TypeError as e:
                raise TypeError(f"{e} (attribute {name!r} of a {_type_name(obj)})") from None
        return {"class": _globals.path_of(type(obj)), "attrs": attrs}

    def _payload(self, obj) -> int:
        if id(obj) not in self._index:
            self._index[id(obj)] = len(self.arrays)
            if isinstance(obj, Tensor):
                if obj.is_sparse:
                    raise save_error()
                kind = "parameter" if _is_parameter(obj) else "tensor"
                self.entries.append({"kind": kind, "requires_grad": obj.requires_grad})
                a = obj._data
                if a.dtype.name == "bfloat16":  # .npy has no bfloat16: its bits as uint16, the dtype in the entry
                    self.entries[-1]["dtype"], a = "bfloat16", a.view(xp.uint16)
                self.arrays.append(a)
            else:
                if not is_plain_numeric(obj.dtype):  # object/string/structured arrays would need pickle
                    raise TypeError(f"ember.save cannot store a NumPy array of dtype {obj.dtype}: it stores "
                                    "bool, integer, float and complex arrays")
                self.entries.append({"kind": "ndarray", "requires_grad": False})
                self.arrays.append(obj)
        return self._index[id(obj)]


def _is_parameter(t: Tensor) -> bool:
    # A Parameter exists only once ember.nn is loaded: no need to import it here.
    module = sys.modules.get("ember.nn.parameter")
    return module is not None and isinstance(t, module.Parameter)


def writer(obj: Any):
    """Encode ``obj`` now (a TypeError before anything is written if it cannot be stored); returns the function
    that writes the archive to a binary file."""
    enc = Encoder()
    root = enc.encode(obj)
    manifest = json.dumps({"format": FORMAT, "version": VERSION, "root": root, "arrays": enc.entries})

    def write_to(out) -> None:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
            zf.writestr(MANIFEST, manifest)
            for i, a in enumerate(enc.arrays):
                with zf.open(f"arrays/{i}.npy", "w", force_zip64=a.nbytes > 2**30) as member:
                    xp.lib.format.write_array(member, a, allow_pickle=False)

    return write_to


# ---------------------------------------------------------------------------------- load
class Decoder:
    """JSON node -> Python object, reading each payload once (a shared tensor loads as one object)."""

    def __init__(self, archive: Archive, entries: list, fail: Fail, weights_only: bool, what: str) -> None:
        self.archive, self.entries, self.fail = archive, entries, fail
        self.weights_only, self.what = weights_only, what
        self._loaded: dict[int, Any] = {}
        self._modules: list = []  # rebuilt modules and objects, in the order they were first saved
        self._depth = 0
        if not isinstance(entries, list):
            fail(f"{MANIFEST} has no list of arrays")

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not (isinstance(node, dict) and len(node) == 1):
            self.fail(f"unexpected entry {str(node)[:80]!r} in {MANIFEST}")
        tag, value = next(iter(node.items()))
        if tag not in _CONTAINERS:  # a tensor, dtype or global is no level of nesting, as in PyTorch's pickle
            return self._decode(tag, value)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self.fail(f"{MANIFEST} nests deeper than {MAX_DEPTH} levels")
        try:
            return self._decode(tag, value)
        finally:
            self._depth -= 1

    def _decode(self, tag: str, value):
        if tag in ("list", "tuple") and isinstance(value, list):
            items = [self.decode(x) for x in value]
            return items if tag == "list" else tuple(items)
        if tag in ("dict", "odict") and isinstance(value, list):
            pairs = ((self.decode(k), self.decode(v)) for k, v in self._pairs(value))
            return dict(pairs) if tag == "dict" else OrderedDict(pairs)
        if tag in ("defaultdict", "frozenset") and self.weights_only:  # PyTorch's weights-only loader refuses them
            raise _globals.weights_only_error(self.what, "collections.defaultdict" if tag == "defaultdict"
                                              else "builtins.frozenset")
        if tag == "defaultdict" and isinstance(value, list) and len(value) == 2 and isinstance(value[1], list):
            factory = self.decode(value[0])
            if not (factory is None or callable(factory)):
                self.fail(f"a defaultdict's factory in {MANIFEST} is a {type(factory).__name__}")
            return defaultdict(factory, ((self.decode(k), self.decode(v)) for k, v in self._pairs(value[1])))
        if tag in ("set", "frozenset") and isinstance(value, list):
            items = [self.decode(x) for x in value]
            try:
                return set(items) if tag == "set" else frozenset(items)
            except TypeError:
                self.fail(f"a {tag} in {MANIFEST} holds an unhashable entry")
        if tag == "array" and type(value) is int and 0 <= value < len(self.entries):
            if value not in self._loaded:
                self._loaded[value] = self._array(value)
            return self._loaded[value]
        if tag == "size" and isinstance(value, list) and all(type(n) is int and n >= 0 for n in value):
            return Size(value)
        if tag == "dtype" and isinstance(value, str) and isinstance(getattr(_dtype, value, None), _dtype.dtype):
            return getattr(_dtype, value)
        if tag == "device" and isinstance(value, str):
            try:
                return _device_type(value)
            except (RuntimeError, ValueError):
                self.fail(f"unexpected device {value[:40]!r} in {MANIFEST}")
        if tag == "global" and isinstance(value, str):
            return _globals.resolve(value, self.weights_only, self.what, self.fail)
        if tag == "module" and isinstance(value, dict):
            return self._module(value)
        if tag == "object" and isinstance(value, dict):
            return self._object(value)
        if tag == "module_ref" and type(value) is int and 0 <= value < len(self._modules):
            return self._modules[value]
        if tag == "npscalar" and type(value) is int and 0 <= value < len(self.entries):
            return self._npscalar(value)
        if tag == "method" and isinstance(value, list) and len(value) == 2 and isinstance(value[1], str):
            return self._method(*value)
        self.fail(f"unexpected entry {str({tag: value})[:80]!r} in {MANIFEST}")

    def _pairs(self, value) -> list:
        if not all(isinstance(p, list) and len(p) == 2 for p in value):
            self.fail(f"malformed key/value pairs {str(value)[:80]!r} in {MANIFEST}")
        return value

    def _module(self, node: dict):
        from ..nn import Module, Parameter

        path = node.get("class")
        if not isinstance(path, str):
            self.fail(f"a module entry in {MANIFEST} has no class path")
        cls = _globals.resolve(path, self.weights_only, self.what, self.fail)
        if not (isinstance(cls, type) and issubclass(cls, Module)):
            self.fail(f"{path} is not an nn.Module subclass")
        m = cls.__new__(cls)
        Module.__init__(m)  # the base class's empty stores; the subclass's __init__ is never called
        self._modules.append(m)
        d = m.__dict__
        d["training"] = node.get("training") is not False
        for key, store, kind in (("parameters", "_parameters", Parameter), ("buffers", "_buffers", Tensor),
                                 ("modules", "_modules", Module)):
            for name, value in self._pairs(node.get(key, [])):
                value = self.decode(value)
                if not isinstance(name, str) or not (value is None or isinstance(value, kind)):
                    self.fail(f"{path}: {key[:-1]} {str(name)[:40]!r} is a {type(value).__name__}")
                d[store][name] = value
        names = node.get("non_persistent", [])
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            self.fail(f"{path}: malformed list of non-persistent buffers")
        d["_non_persistent_buffers_set"] = set(names)
        for name, value in self._pairs(node.get("attrs", [])):
            if not isinstance(name, str) or name in d:
                self.fail(f"{path}: invalid attribute name {str(name)[:40]!r}")
            d[name] = self.decode(value)
        return m

    def _object(self, node: dict):
        # rebuilt as pickle rebuilds it (cls.__new__(cls), then its __dict__ filled), its class resolved under the
        # same rule as a module's: refused by a weights_only load unless allowlisted, as PyTorch refuses the global
        from ..nn import Module

        path = node.get("class")
        if not isinstance(path, str):
            self.fail(f"an object entry in {MANIFEST} has no class path")
        cls = _globals.resolve(path, self.weights_only, self.what, self.fail)
        if not (isinstance(cls, type) and not issubclass(cls, Module) and kept_by_state(cls)):
            self.fail(f"{path} is not a class whose instances are saved by their attributes")
        obj = cls.__new__(cls)
        self._modules.append(obj)  # numbered with the modules, as the encoder numbers them
        state = {}
        for name, value in self._pairs(node.get("attrs", [])):
            if not isinstance(name, str) or name in state:
                self.fail(f"{path}: invalid attribute name {str(name)[:40]!r}")
            state[name] = self.decode(value)
        if owns(cls, "__setstate__"):
            obj.__setstate__(state)
        else:
            obj.__dict__.update(state)
        return obj

    def _npscalar(self, i: int):
        # PyTorch's pickle rebuilds a NumPy scalar with numpy._core.multiarray.scalar and numpy.dtype, which a
        # weights_only load refuses unless allowlisted: the same rule here
        a = self._read_array(i)
        if not (isinstance(a, xp.ndarray) and a.ndim == 0):
            self.fail(f"arrays/{i}.npy does not hold a NumPy scalar")
        self._numpy_allowed(NPSCALAR_GLOBALS, a.dtype)
        return a[()]

    def _numpy_allowed(self, paths: tuple[str, ...], dtype) -> None:
        """A weights_only load's refusal of a NumPy array or scalar, as PyTorch's of its pickle: each global
        (``paths``, in the pickle's order) unless allowlisted, then its dtype's class (``numpy.dtypes.Float32DType``),
        to which the pickle gives state, unless allowlisted too."""
        if not self.weights_only:
            return
        for path in paths:
            _globals.resolve(path, True, self.what, self.fail)
        if type(dtype) not in _globals.allowed().values():
            raise _globals.build_refused(self.what, type(dtype))

    def _method(self, owner_node, name: str):
        # PyTorch's pickle rebuilds a bound method by calling builtins.getattr, a global that a weights_only load
        # refuses unless it is allowlisted: the same rule, and the same error, here
        getter = _globals.resolve("builtins.getattr", self.weights_only, self.what, self.fail)
        method = getter(self.decode(owner_node), name)
        if not callable(method):
            self.fail(f"{name!r} of a saved object is not a method")
        return method

    def _array(self, i: int):
        a = self._read_array(i)
        if self.entries[i]["kind"] == "ndarray":
            self._numpy_allowed(NDARRAY_GLOBALS, a.dtype)
        return a

    def _read_array(self, i: int):
        entry = self.entries[i]
        if not (isinstance(entry, dict) and entry.get("kind") in KINDS
                and isinstance(entry.get("requires_grad"), bool)):
            self.fail(f"malformed description {str(entry)[:80]!r} of arrays/{i}.npy in {MANIFEST}")
        a = self.archive.read_npy(f"arrays/{i}.npy", tensor=entry["kind"] != "ndarray" and "dtype" not in entry)
        if entry["kind"] == "ndarray":
            return a
        if entry.get("dtype") is not None:  # bfloat16, stored as its bits
            if entry["dtype"] != "bfloat16" or a.dtype != xp.uint16:
                self.fail(f"malformed description {str(entry)[:80]!r} of arrays/{i}.npy in {MANIFEST}")
            a = a.view(_dtype.bfloat16.np)
        t = Tensor._make(a)
        if entry["kind"] == "parameter":
            from ..nn import Parameter

            return Parameter(t, requires_grad=entry["requires_grad"])
        return t.requires_grad_(True) if entry["requires_grad"] else t


def _json_depth(raw: bytes) -> int:
    """The deepest nesting of JSON arrays/objects in ``raw`` (strings skipped), found without parsing."""
    depth = deepest = 0
    for b in _STRING.sub(b'""', raw).translate(None, _NOT_BRACKETS):
        depth += 1 if b in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


# the globals PyTorch's pickle names for a NumPy array and a NumPy scalar, in the order its unpickler meets them
NDARRAY_GLOBALS = ("numpy._core.multiarray._reconstruct", "numpy.ndarray", "numpy.dtype")
NPSCALAR_GLOBALS = ("numpy._core.multiarray.scalar", "numpy.dtype")


def globals_in(archive: Archive) -> set[str]:
    """The classes and functions the manifest names, as the globals PyTorch's pickle would name for the same
    objects (a NumPy scalar's ``numpy._core.multiarray.scalar`` and ``numpy.dtype``, a bound method's
    ``builtins.getattr``)."""
    found: set[str] = set()
    meta = json.loads(archive.read(MANIFEST))
    entries = meta.get("arrays") if isinstance(meta.get("arrays"), list) else []
    todo = [meta.get("root")]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict) and len(node) == 1:
            (tag, value), = node.items()
            if tag == "global" and isinstance(value, str):
                found.add(value)
            elif tag in ("module", "object") and isinstance(value, dict):
                if isinstance(value.get("class"), str):
                    found.add(value["class"])
                todo.extend(v for k, v in value.items() if k != "class")
            elif tag == "npscalar":
                found.update(NPSCALAR_GLOBALS)
            elif tag == "array" and type(value) is int and 0 <= value < len(entries) and \
                    isinstance(entries[value], dict) and entries[value].get("kind") == "ndarray":
                found.update(NDARRAY_GLOBALS)
            elif tag == "method":
                found.add("builtins.getattr")
                todo.append(value)
            elif tag not in ("array", "dtype", "device", "size", "module_ref"):
                todo.append(value)
    return found


def read(archive: Archive, fail: Fail, weights_only: bool, what: str) -> Any:
    raw = archive.read(MANIFEST)
    if _json_depth(raw) > _JSON_PER_LEVEL * MAX_DEPTH + 2:  # + the manifest's own object and a leaf's node
        fail(f"{MANIFEST} nests deeper than {MAX_DEPTH} levels")  # (before the JSON parser recurses into it)
    meta = json.loads(raw)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        fail(f"{MANIFEST} does not describe an {FORMAT} file")
    if meta.get("version") != VERSION:
        fail(f"format version {meta.get('version')!r} is not supported (this ember reads version {VERSION})")
    if "root" not in meta:
        fail(f"{MANIFEST} has no root object")
    return Decoder(archive, meta.get("arrays"), fail, weights_only, what).decode(meta.get("root"))
