"""Reading PyTorch's ``data.pkl`` without unpickling: an interpreter of the pickle opcodes PyTorch's files use.

It builds only what PyTorch's ``weights_only=True`` policy allows: plain
containers, ``OrderedDict``, numbers, strings, bytes, sets (a frozenset only
with ``weights_only=False`` or allowlisted, as PyTorch's), dtypes, devices and
tensors/parameters rebuilt from the archive's storages, NumPy arrays, scalars and dtypes of
numeric types rebuilt from their bytes (refused by a weights_only load unless allowlisted, as PyTorch's), and
objects pickle keeps
as their class and state (an ``argparse.Namespace``, a dataclass: NEWOBJ then
BUILD) whose class is allowlisted (``add_safe_globals``) or, with
``weights_only=False``, imported by name, as ember's own format rebuilds them.
Any other global is refused by name, and PyTorch's own classes (a whole
``torch.nn`` model) always; no function named in the file is called. Every size and offset is checked
against the storage it refers to, and storages against their zip members; nesting,
memory and where internal objects may go are bounded by ``_pickle_bounds``.
"""

from __future__ import annotations

import _compat_pickle
import builtins
import pickle
import struct
import sys
from collections import Counter, OrderedDict, defaultdict
from typing import Any

from .. import _dtype
from .._backend import xp
from .._device import device as _device_type
from .._dtype import np_kind
from .._out import overlaps_itself
from .._size import Size
from .._tensor import Tensor
from . import _globals
from ._archive import Archive, Fail, checked_count, is_plain_numeric
from ._ember_format import kept_by_state, owns
from ._pickle_bounds import POINTER, Bounds, Internal

_STORAGES = {"BoolStorage": "bool", "ByteStorage": "uint8", "CharStorage": "int8", "ShortStorage": "int16",
             "IntStorage": "int32", "LongStorage": "int64", "HalfStorage": "float16", "FloatStorage": "float32",
             "DoubleStorage": "float64", "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
             "BFloat16Storage": "bfloat16"}
STORAGE_OF = {v: k for k, v in _STORAGES.items()}
_DTYPES = {d.name for d in _dtype.ALL_DTYPES} | {"bfloat16"}
_TORCH_ONLY_DTYPES = {"complex32", "uint16", "uint32", "uint64",
                      "float8_e4m3fn", "float8_e5m2", "chalf", "qint8", "quint8", "qint32"}


def _is_module_class(obj) -> bool:
    from ..nn import Module

    return isinstance(obj, type) and issubclass(obj, Module)


class _Global(Internal):
    """A global the policy allows: a name the interpreter knows how to build, never an imported object."""

    def __init__(self, path: str) -> None:
        self.path = path


class _Class(Internal):
    """A class named by the file, which only NEWOBJ may use: ``cls`` the allowlisted object (weights_only), or
    None until NEWOBJ imports it (weights_only=False)."""

    def __init__(self, path: str, cls: Any = None) -> None:
        self.path, self.cls = path, cls


_SPARSE_MEMO_ENTRY = 128  # a dict entry, its int key, and the table's growth (old and new table during a resize)


class _Storage(Internal):
    """A storage's file dtype (its byte order the file's), key and element count; ``view``: the dtype its
    native-order elements are read as (bfloat16, stored as 16-bit words: ml_dtypes' bfloat16 has no byte order)."""

    def __init__(self, dtype, key: str, numel: int, view=None) -> None:
        self.dtype, self.key, self.numel, self.view = dtype, key, numel, view

    def native(self):
        """The dtype of the array read from the file."""
        return self.dtype.newbyteorder("=") if self.view is None else self.view


# NumPy's arrays, scalars and dtypes as pickle writes them (numpy.core: NumPy 1's module, in older files), built by
# the interpreter from their bytes (bool, integer, float and complex only), never by calling NumPy's functions
_RECONSTRUCT = {"numpy._core.multiarray._reconstruct", "numpy.core.multiarray._reconstruct"}
_SCALAR = {"numpy._core.multiarray.scalar", "numpy.core.multiarray.scalar"}
_NUMPY = {*_RECONSTRUCT, *_SCALAR, "numpy.ndarray", "numpy.dtype", "builtins.bytes"}
_ALLOWED = {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor",
            "torch._utils._rebuild_parameter",
            "torch.device", "torch.Size", "builtins.set", "builtins.frozenset", "_codecs.encode", *_NUMPY,
            "collections.defaultdict", "builtins.complex", "collections.Counter",
            *(f"torch.{name}" for name in _STORAGES), *(f"torch.{name}" for name in _DTYPES)}

# the classes PyTorch's weights-only loader allows by default that a file keeps only as values (never built from
# it here: NEWOBJ and REDUCE refuse them)
_VALUE_ONLY = {"builtins.bytearray", "torch.Tensor", "torch.nn.parameter.Parameter"}


def _value_classes() -> dict:
    """The classes a file may keep as values, by the path it names them by: those PyTorch's weights-only loader
    allows by default (``collections.OrderedDict``, ``builtins.set``, ``torch.Size``, ``torch.Tensor`` ...), and
    the other containers ember's reader builds (``frozenset``, ``defaultdict``: refused by a weights-only load
    unless allowlisted, as PyTorch's), as ember's (``ember.Size`` for ``torch.Size``)."""
    from ..nn.parameter import Parameter

    return {"collections.OrderedDict": OrderedDict, "collections.Counter": Counter, "builtins.set": set,
            "builtins.frozenset": frozenset, "builtins.bytearray": bytearray, "builtins.complex": complex,
            "collections.defaultdict": defaultdict, "torch.Size": Size, "torch.device": _device_type,
            "torch.Tensor": Tensor, "torch.nn.parameter.Parameter": Parameter}


# built, but refused by a weights_only load unless allowlisted, as PyTorch's weights-only loader refuses them
_NOT_WEIGHTS_ONLY = {"builtins.frozenset", "collections.defaultdict", *_NUMPY}
# a dtype's state as NumPy pickles a bool, integer, float or complex one: all but its byte order fixed
_DTYPE_STATE = (3, None, None, None, None, -1, -1, 0)


def python3_path(module: str, name: str) -> str:
    """The ``module.name`` of a global as Python 3's unpickler (and PyTorch's weights-only one) reads it: protocol 2
    spells some in Python 2's names (``__builtin__ xrange`` is ``builtins.range``, ``copy_reg`` is ``copyreg``)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[module, name]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return f"{module}.{name}"


class Unpickler:
    """Interpreter of the pickle opcodes PyTorch's files use; the stack only ever holds allowed values."""

    def __init__(self, data: bytes, archive: Archive, prefix: str, big_endian: bool, fail: Fail,
                 weights_only: bool, what: str):
        self.data, self.pos = data, 0
        self.weights_only = weights_only
        self.built: dict[int, Any] = {}  # id -> an object NEWOBJ built, which BUILD may fill
        self.numpy: dict[int, Any] = {}  # id -> a NumPy array or dtype made empty, which BUILD fills once
        self.archive, self.prefix, self.big_endian = archive, prefix, big_endian
        self.fail, self.what = fail, what
        self.stack: list = []
        self.marks: list[list] = []
        self.memo: list = []  # entries 0, 1, 2, ... as picklers number them: a pointer each
        self.sparse_memo: dict[int, Any] = {}  # any other numbering (legal, never written by PyTorch)
        self.storages: dict[str, Any] = {}
        self.bounds = Bounds(len(data), fail)

    def memo_put(self, key: int, value) -> None:
        if key < len(self.memo):
            self.memo[key] = value
        elif key == len(self.memo) and not self.sparse_memo:
            self.bounds.charge(POINTER)
            self.memo.append(value)
        else:
            self.bounds.charge(_SPARSE_MEMO_ENTRY)
            self.sparse_memo[key] = value

    def memo_get(self, key: int):
        if key < len(self.memo):
            return self.memo[key]
        if key not in self.sparse_memo:
            self.fail(f"data.pkl refers to memo entry {key}, which does not exist")
        return self.sparse_memo[key]

    def push(self, value) -> None:
        """Push a value built by the current opcode, paying for its memory."""
        self.stack.append(self.bounds.new(value))

    def push_ref(self, value) -> None:
        """Push another reference to an existing object (a constant, a memo entry, a call's result)."""
        self.bounds.charge(POINTER)
        self.stack.append(value)

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            self.fail("data.pkl is truncated")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def line(self) -> str:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            self.fail("data.pkl is truncated")
        out = self.data[self.pos:end].decode("utf-8")
        self.pos = end + 1
        return out

    def pop(self):
        if not self.stack:
            self.fail("data.pkl is malformed (stack underflow)")
        return self.stack.pop()

    def pop_mark(self) -> list:
        if not self.marks:
            self.fail("data.pkl is malformed (no mark)")
        items, self.stack = self.stack, self.marks.pop()
        return items

    def top(self, kind):
        if not self.stack or not isinstance(self.stack[-1], kind):
            self.fail(f"data.pkl is malformed (expected a {kind})")
        return self.stack[-1]

    def run(self) -> Any:
        while True:
            op = self.take(1)
            handler = _OPS.get(op)
            if handler is None:
                self.fail(f"data.pkl uses pickle opcode {op!r}, which a weights-only file does not need")
            if handler(self):
                if len(self.stack) != 1 or self.marks:
                    self.fail("data.pkl is malformed (stack not empty at STOP)")
                self.stack[0] = self.value(self.stack[0])
                self.bounds.plain(self.stack[0], "the result")
                return self.stack[0]

    # --- globals and calls
    def global_(self, module: str, name: str) -> None:
        path = python3_path(module, name)
        if path not in _ALLOWED and module == "torch" and (name.endswith("Storage") or name in _TORCH_ONLY_DTYPES):
            self.fail(f"the file holds {name} data, a dtype ember does not have (ember has "
                      f"{', '.join(sorted(_DTYPES))}); convert those tensors in PyTorch before saving")
        if path in _NOT_WEIGHTS_ONLY and self.weights_only and path not in _globals.allowed():
            raise _globals.weights_only_error(self.what, path)
        if path not in _ALLOWED and path in _VALUE_ONLY:  # (a class PyTorch allows as a value: torch.Tensor)
            self.push(_Class(path, _value_classes()[path]))
            return
        if path not in _ALLOWED:
            ours = None
            if module == "torch" or module.startswith("torch.") or module == "__torch__":
                ours = _globals.ember_counterpart(path)  # (ember's class or function at PyTorch's path, if any)
                if ours is None:
                    self.refuse(path)  # a name ember lacks: never built from a file
            allowed = _globals.allowed()
            if self.weights_only and path not in allowed and (ours is None or _globals.safe_path(ours) not in allowed):
                error = _globals.weights_only_error(self.what, path)  # where and how PyTorch's loader refuses it
                if _is_module_class(ours):  # (the class of a whole model, or a class kept as a value)
                    error.args = (error.args[0] + f"\n({path} is a torch.nn class: a file that holds a whole model "
                                  "of it, rather than the class as a value, ember refuses even with "
                                  "weights_only=False, never building PyTorch's own classes; load it in PyTorch and "
                                  "save its state_dict())",)
                raise error
            # imported (weights_only=False) only when NEWOBJ builds an object of it or the file keeps it as a value
            # (a class or function in a dict: ``value``); a call (REDUCE) is refused whatever weights_only says
            self.push(_Class(path, ours if ours is not None else allowed.get(path) if self.weights_only else None))
            return
        dtype_name = path.removeprefix("torch.")
        if dtype_name in _DTYPES:
            self.push_ref(getattr(_dtype, dtype_name))
        else:
            self.push(_Global(path))

    def _refusal(self, path: str) -> str:
        return (f"{self.what}: the file's pickle names {path}, which ember's reader of PyTorch files does not build, "
                "even with weights_only=False (it reads tensors, storages, OrderedDict, dtypes, devices, plain "
                "containers, objects kept as their class and attributes, and classes and functions kept as values; "
                "it never calls a function named in the file nor builds PyTorch's own classes). Load it in PyTorch "
                "and save its state_dict() (for a whole model saved by torch.save(model, f))")

    def refuse(self, path: str):
        """The error for a global ember never builds from a PyTorch file, whatever ``weights_only`` says."""
        why = self._refusal(path)
        if self.weights_only:  # PyTorch's weights-only loader refuses it too: its type, and its first words
            raise pickle.UnpicklingError(f"Weights only load failed. {why}")
        self.fail(why.removeprefix(f"{self.what}: "))

    def value(self, item):
        """``item`` where the file keeps it as a value (in a container, as a result): a class or function it names
        (``{"act": nn.ReLU}``), imported now (weights_only=False) or allowlisted, as PyTorch's loader gives it back;
        one of the classes PyTorch's weights-only loader allows by default (``{"od": OrderedDict}``), ember's
        counterpart (``_value_classes``); never called. Anything else as it is."""
        if item.__class__ is _Global:
            cls = _value_classes().get(item.path)
            return item if cls is None else cls
        if item.__class__ is not _Class:
            return item
        if item.cls is None:
            item.cls = _globals.resolve(item.path, self.weights_only, self.what, self.fail)
        return item.cls

    def values(self, items: list) -> list:
        for i, item in enumerate(items):
            if item.__class__ is _Class or item.__class__ is _Global:
                items[i] = self.value(item)
        return items

    def newobj(self) -> None:
        """``cls.__new__(cls)`` of a class pickle keeps instances of by their state (filled by BUILD)."""
        args, cls = self.pop(), self.pop()
        if not isinstance(cls, _Class) or args != ():
            self.fail("data.pkl is malformed (NEWOBJ of something that is not a class, or with arguments)")
        if cls.path.startswith(("torch.", "__torch__.")):
            self.refuse(cls.path)  # (PyTorch's own objects: ember's counterparts keep another state)
        if cls.cls is None:
            cls.cls = _globals.resolve(cls.path, self.weights_only, self.what, self.fail)
        if _is_module_class(cls.cls):
            self.refuse(cls.path)
        if not (isinstance(cls.cls, type) and kept_by_state(cls.cls)):
            self.fail(f"{cls.path} is not a class whose instances are saved by their attributes")
        obj = cls.cls.__new__(cls.cls)
        self.built[id(obj)] = obj
        self.push(obj)

    def reduce(self) -> None:
        args, fn = self.pop(), self.pop()
        if isinstance(fn, _Class):
            self.refuse(fn.path)
        if not isinstance(fn, _Global) or not isinstance(args, tuple):
            self.fail("data.pkl is malformed (REDUCE on something that is not an allowed global)")
        self.push_ref(self.call(fn.path, args))

    def call(self, path: str, args: tuple):
        """What calling the allowed global ``path`` builds, paid for (the caller pushes it)."""
        if path in ("collections.OrderedDict", "collections.Counter") and len(args) <= 1:
            if not all(isinstance(a, (list, tuple, dict)) for a in args):
                return self.bad(path)
            for a in args:
                self.bounds.plain(a, "an OrderedDict" if path == "collections.OrderedDict" else "a Counter")
            out = OrderedDict(*args) if path == "collections.OrderedDict" else Counter(*args)
            return self.bounds.made(out, [*out.keys(), *out.values()])
        if path in ("builtins.set", "builtins.frozenset") and len(args) <= 1:
            items = list(args[0]) if args and isinstance(args[0], (list, tuple)) else []
            self.bounds.made([], items)  # depth and internal objects checked before anything is hashed
            return self.bounds.made(set(items) if path == "builtins.set" else frozenset(items), items)
        if path == "collections.defaultdict" and len(args) <= 1:  # its items come by SETITEMS, as a dict's
            return self.bounds.new(defaultdict(self.factory(args[0]) if args and args[0] is not None else None))
        if path == "collections.defaultdict" and len(args) == 2:  # defaultdict(factory, items), as Python takes it
            if not isinstance(args[1], (list, tuple, dict)):
                return self.bad(path)
            self.bounds.plain(args[1], "a defaultdict")
            out = defaultdict(self.factory(args[0]) if args[0] is not None else None, args[1])
            return self.bounds.made(out, [*out.keys(), *out.values()])
        if path == "builtins.complex" and 1 <= len(args) <= 2 and all(type(a) in (int, float) for a in args):
            return self.bounds.new(complex(*args))  # (a Python complex number: pickle reduces it to its parts)
        if path == "torch.Size" and len(args) == 1 and isinstance(args[0], tuple):
            return self.bounds.new(Size(args[0]))  # torch.load gives a torch.Size, not the plain tuple
        if path == "torch.device" and 1 <= len(args) <= 2 and isinstance(args[0], str):
            return self.bounds.new(_device_type(args[0] if len(args) == 1 else f"{args[0]}:{args[1]}"))
        if path == "_codecs.encode" and len(args) == 2 and args[1] == "latin1" and isinstance(args[0], str):
            return self.bounds.new(args[0].encode("latin1"))
        if path == "builtins.bytes" and args == ():  # protocol 2's empty bytes (an empty array's)
            return self.bounds.new(b"")
        if path in _RECONSTRUCT and len(args) == 3 and getattr(args[0], "path", None) == "numpy.ndarray" \
                and args[1:] == ((0,), b"b"):
            return self.numpy_empty(xp.ndarray.__new__(xp.ndarray, (0,), "b"))
        if path == "numpy.dtype" and len(args) == 3 and isinstance(args[0], str) and args[1:] == (False, True):
            try:
                dtype = xp.dtype(args[0], False, True)  # a copy, which BUILD may give its byte order
            except TypeError:
                return self.bad(path)
            if not is_plain_numeric(dtype):
                self.fail(f"data.pkl holds a NumPy dtype {args[0]!r}: ember reads NumPy arrays and scalars of "
                          "bool, integer, float and complex dtypes")
            return self.numpy_empty(dtype)
        if path in _SCALAR and len(args) == 2 and isinstance(args[1], bytes) and self.finished_dtype(args[0]) \
                and len(args[1]) == args[0].itemsize:
            return self.bounds.new(xp.frombuffer(args[1], dtype=args[0])[0])
        if path == "torch._utils._rebuild_tensor_v2" and 6 <= len(args) <= 7:
            return self.tensor(*args[:5])
        if path == "torch._utils._rebuild_tensor" and len(args) == 4:  # (PyTorch 0.3's: no requires_grad)
            return self.tensor(*args, False)
        if path == "torch._utils._rebuild_parameter" and len(args) == 3 and isinstance(args[0], Tensor):
            from ..nn import Parameter

            return self.bounds.new(Parameter(args[0], requires_grad=bool(args[1])))
        return self.bad(path)

    def factory(self, value):
        """A defaultdict's factory, named by the file: a builtin type (``set``, ``list``) or a class or function
        imported by name (weights_only=False, or allowlisted); kept, never called here."""
        if isinstance(value, _Global) and value.path.startswith("builtins.") and \
                isinstance(getattr(builtins, value.path.removeprefix("builtins."), None), type):
            return getattr(builtins, value.path.removeprefix("builtins."))
        if not isinstance(value, Internal) and callable(value):  # (a class or function the file named: ``value``)
            return value
        return self.bad("collections.defaultdict")

    def numpy_empty(self, obj):
        self.numpy[id(obj)] = obj
        return self.bounds.new(obj)

    def finished_dtype(self, value) -> bool:
        """Whether ``value`` is a NumPy dtype this file built and gave its state (its byte order)."""
        return isinstance(value, xp.dtype) and id(value) not in self.numpy

    def numpy_state(self, target, state) -> None:
        """BUILD of a NumPy array or dtype the file made: its state checked, then set as NumPy's unpickling sets it.
        A weights_only load refuses a dtype whose class is not allowlisted, as PyTorch's weights-only loader does."""
        del self.numpy[id(target)]
        if isinstance(target, xp.dtype):
            if self.weights_only and _globals.path_of(type(target)) not in _globals.allowed():
                raise _globals.build_refused(self.what, type(target))
            if not (isinstance(state, tuple) and len(state) == len(_DTYPE_STATE) and state[1] in ("<", ">", "|", "=")
                    and all(a == b and type(a) is type(b) for i, (a, b) in enumerate(zip(state, _DTYPE_STATE))
                            if i != 1)):
                self.fail(f"data.pkl sets a NumPy dtype's state to {str(state)[:80]}")
            target.__setstate__(state)
            return
        if not (isinstance(state, tuple) and len(state) == 5 and state[0] == 1 and isinstance(state[1], tuple)
                and self.finished_dtype(state[2]) and type(state[3]) is bool and isinstance(state[4], bytes)):
            self.fail(f"data.pkl sets a NumPy array's state to {str(state)[:80]}")
        count = checked_count(state[1], "a NumPy array", self.fail)
        if len(state[4]) != count * state[2].itemsize:
            self.fail(f"a NumPy array of shape {state[1]} and dtype {state[2]} has {len(state[4])} bytes")
        target.__setstate__(state)
        self.bounds.charge(target.nbytes)

    def bad(self, path: str):
        self.fail(f"data.pkl calls {path} with unexpected arguments")

    def persistent_load(self, pid) -> _Storage:
        # (the legacy format's ids have a sixth item, the view metadata of PyTorch 0.3's storage views: None since)
        if not (isinstance(pid, tuple) and (len(pid) == 5 or (len(pid) == 6 and pid[5] is None))
                and pid[0] == "storage" and isinstance(pid[1], _Global)
                and pid[1].path.removeprefix("torch.") in _STORAGES and isinstance(pid[2], str)
                and type(pid[4]) is int and pid[4] >= 0):
            self.fail(f"data.pkl has an unsupported persistent id {str(pid)[:80]}")
        dtype = _dtype.to_np(_STORAGES[pid[1].path.removeprefix("torch.")])
        if self.big_endian and dtype.name == "bfloat16":  # swapped as 16-bit words, then read as bfloat16
            return _Storage(xp.dtype(">u2"), pid[2], pid[4], view=dtype)
        return _Storage(dtype.newbyteorder(">") if self.big_endian else dtype, pid[2], pid[4])

    def storage_array(self, s: _Storage):
        if s.key not in self.storages:
            name = f"{self.prefix}data/{s.key}"
            info = self.archive.infos.get(name)
            if info is None or info.file_size != s.numel * s.dtype.itemsize:
                self.fail(f"storage {name!r} is missing or not {s.numel} elements of {s.dtype}")
            out = xp.empty(s.numel, dtype=s.dtype)
            self.archive.read_into(name, out)
            if not s.dtype.isnative:
                out = out.astype(s.dtype.newbyteorder("="))
            self.storages[s.key] = out if s.view is None else out.view(s.view)
        array = self.storages[s.key]
        if array.dtype != s.native():
            self.fail(f"storage {s.key!r} is used with two dtypes")
        return array

    def tensor(self, storage, offset, size, stride, requires_grad) -> Tensor:
        if not (isinstance(storage, _Storage) and type(offset) is int and isinstance(size, tuple)
                and isinstance(stride, tuple) and len(size) == len(stride)
                and all(type(n) is int and n >= 0 for n in stride)):
            self.fail("data.pkl rebuilds a tensor from malformed arguments")
        count = checked_count(size, f"storage {storage.key}", self.fail)
        base = self.storage_array(storage)
        last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if count else offset
        if offset < 0 or (count and last >= base.size):
            self.fail(f"a tensor of size {size} and stride {stride} at offset {offset} reaches outside its "
                      f"storage of {base.size} elements")
        if count == 0:
            array = xp.empty(size, dtype=base.dtype)
        else:
            # a view of the storage's array (its base: the storage offset reads as PyTorch's); an expanded tensor
            # (a dim of stride 0: elements repeat) is a read-only view, as ember's own expand() makes; any other
            # strides (size-1 dims', strides that do not nest) are a writable view, as ember's own as_strided()
            array = xp.ndarray(size, base.dtype, buffer=base, offset=offset * base.itemsize,
                               strides=[s * base.itemsize for s in stride])
            if overlaps_itself(array):
                array.flags.writeable = False
        t = Tensor._make(array)
        self.bounds.charge(sys.getsizeof(t) + sys.getsizeof(array))
        if requires_grad:
            if np_kind(array.dtype) not in "fc":
                self.fail(f"a tensor of dtype {array.dtype} cannot require grad")
            t.requires_grad_(True)
        return t


def _op_proto(u):
    u.take(1)


def _op_frame(u):
    u.take(8)


def _push(value):
    return lambda u: u.push_ref(value)


def _push_new(make):
    return lambda u: u.push(make())


def _unpacked(fmt: str):
    size = struct.calcsize(fmt)
    return lambda u: u.push(struct.unpack(fmt, u.take(size))[0])


def _op_long(fmt: str):
    size = struct.calcsize(fmt)
    return lambda u: u.push(int.from_bytes(u.take(struct.unpack(fmt, u.take(size))[0]), "little", signed=True))


def _int_text(u, op: str, text: str) -> int:
    """The integer written as text by INT or LONG (protocols 0 and 1), read as pickle reads it: Python's literal of
    any base (``int(text, 0)``)."""
    try:
        return int(text, 0)
    except ValueError:
        u.fail(f"data.pkl is malformed ({op} of {text[:40]!r}, which is no integer)")


def _op_int_text(u):
    # a bool is INT of 01 or 00 in protocols 0 and 1 (NEWTRUE and NEWFALSE came with protocol 2)
    text = u.line()
    if text in ("00", "01"):
        u.push_ref(text == "01")
    else:
        u.push(_int_text(u, "I", text))


def _op_long_text(u):
    text = u.line()
    u.push(_int_text(u, "L", text.removesuffix("L")))


def _op_text(fmt: str):
    size = struct.calcsize(fmt)
    # surrogatepass: Python's pickle (and so PyTorch) writes a lone surrogate in a string that way, and reads it
    return lambda u: u.push(u.take(struct.unpack(fmt, u.take(size))[0]).decode("utf-8", "surrogatepass"))


def _op_bytes(fmt: str):
    size = struct.calcsize(fmt)
    return lambda u: u.push(u.take(struct.unpack(fmt, u.take(size))[0]))


def _op_mark(u):
    u.bounds.charge(sys.getsizeof([]) + POINTER)
    u.marks.append(u.stack)
    u.stack = []


def _op_tuple(u):
    items = u.values(u.pop_mark())  # before reading u.stack: popping the mark replaces it
    u.stack.append(u.bounds.made(tuple(items), items))


def _op_tuple_n(n: int):
    def op(u):
        if len(u.stack) < n:
            u.fail("data.pkl is malformed (stack underflow)")
        items = u.values(u.stack[len(u.stack) - n:])
        del u.stack[len(u.stack) - n:]
        u.stack.append(u.bounds.made(tuple(items), items))
    return op


def _op_list(u):
    items = u.values(u.pop_mark())
    u.stack.append(u.bounds.made(items, items))


def _op_dict(u):
    items = u.pop_mark()
    u.push({})
    _set_items(u, items)


def _set_items(u, items: list) -> None:
    target = u.top(dict)
    items = u.values(items)
    if len(items) % 2:
        u.fail("data.pkl is malformed (odd number of dict items)")

    def insert():
        for k, v in zip(items[::2], items[1::2]):
            try:
                target[k] = v
            except TypeError:
                u.fail(f"data.pkl uses an unhashable {type(k).__name__} as a dict key")
    u.bounds.add(target, items, insert)


def _op_setitem(u):
    v, k = u.pop(), u.pop()
    _set_items(u, [k, v])


def _op_setitems(u):
    _set_items(u, u.pop_mark())


def _op_append(u):
    items = u.values([u.pop()])
    target = u.top(list)
    u.bounds.add(target, items, lambda: target.extend(items))


def _op_appends(u):
    items = u.values(u.pop_mark())
    target = u.top(list)
    u.bounds.add(target, items, lambda: target.extend(items))


def _op_additems(u):
    items = u.values(u.pop_mark())
    target = u.top(set)

    def insert():
        try:
            target.update(items)
        except TypeError:
            u.fail("data.pkl adds an unhashable item to a set")
    u.bounds.add(target, items, insert)


def _op_put(fmt: str):
    size = struct.calcsize(fmt)

    def op(u):
        if not u.stack:
            u.fail("data.pkl is malformed (stack underflow)")
        u.memo_put(struct.unpack(fmt, u.take(size))[0], u.stack[-1])
    return op


def _op_memoize(u):
    if not u.stack:
        u.fail("data.pkl is malformed (stack underflow)")
    u.memo_put(len(u.memo) + len(u.sparse_memo), u.stack[-1])


def _op_get(fmt: str):
    size = struct.calcsize(fmt)
    return lambda u: u.push_ref(u.memo_get(struct.unpack(fmt, u.take(size))[0]))


def _op_global(u):
    module, name = u.line(), u.line()
    u.global_(module, name)


def _op_stack_global(u):
    name, module = u.pop(), u.pop()
    if not (isinstance(module, str) and isinstance(name, str)):
        u.fail("data.pkl is malformed (STACK_GLOBAL needs two strings)")
    u.global_(module, name)


def _op_build(u):
    """The state of an object NEWOBJ built, or attributes set on an OrderedDict (a state_dict's ``_metadata``)."""
    state = u.pop()
    if u.stack and id(u.stack[-1]) in u.numpy:
        u.numpy_state(u.stack[-1], state)
        return
    if u.stack and id(u.stack[-1]) in u.built:
        target = u.stack[-1]
        if not (isinstance(state, dict) and all(isinstance(k, str) for k in state)):
            u.fail(f"data.pkl sets a {type(target).__name__}'s state to something other than a dict of attributes")
        u.bounds.plain(state, f"a {type(target).__name__}'s attributes")
        if owns(type(target), "__setstate__"):
            target.__setstate__(state)
        else:
            target.__dict__.update(state)
        return
    target = u.top(OrderedDict)
    if not (isinstance(state, dict) and all(isinstance(k, str) and not k.startswith("__") for k in state)):
        u.fail("data.pkl sets unsupported attributes on an OrderedDict")
    u.bounds.plain(state, "an OrderedDict's attributes")
    for k, v in state.items():
        setattr(target, k, v)


def _op_binpersid(u):
    u.push(u.persistent_load(u.pop()))


def _op_stop(u):
    return True


_OPS = {
    b"\x80": _op_proto, b"\x95": _op_frame, b".": _op_stop, b"(": _op_mark,
    b"N": _push(None), b"\x88": _push(True), b"\x89": _push(False),
    b"J": _unpacked("<i"), b"K": _unpacked("<B"), b"M": _unpacked("<H"), b"G": _unpacked(">d"),
    b"\x8a": _op_long("<B"), b"\x8b": _op_long("<i"), b"I": _op_int_text, b"L": _op_long_text,
    b"X": _op_text("<I"), b"\x8c": _op_text("<B"), b"\x8d": _op_text("<Q"),
    b"B": _op_bytes("<I"), b"C": _op_bytes("<B"), b"\x8e": _op_bytes("<Q"),
    b")": _push(()), b"t": _op_tuple,
    b"\x85": _op_tuple_n(1), b"\x86": _op_tuple_n(2), b"\x87": _op_tuple_n(3),
    b"]": _push_new(list), b"l": _op_list, b"a": _op_append, b"e": _op_appends,
    b"}": _push_new(dict), b"d": _op_dict, b"s": _op_setitem, b"u": _op_setitems,
    b"\x8f": _push_new(set), b"\x90": _op_additems,
    b"q": _op_put("<B"), b"r": _op_put("<I"), b"\x94": _op_memoize,
    b"h": _op_get("<B"), b"j": _op_get("<I"),
    b"c": _op_global, b"\x93": _op_stack_global, b"R": lambda u: u.reduce(), b"Q": _op_binpersid,
    b"b": _op_build, b"\x81": lambda u: u.newobj(),
}

