"""PyTorch's ``torch.save`` zip format, read and written without PyTorch and without unpickling.

A ``torch.save`` file is a zip whose ``<prefix>/data.pkl`` is a pickle (protocol 2)
and whose ``<prefix>/data/<key>`` members are raw storages. Reading runs the
opcode interpreter of ``_torch_unpickle`` (only PyTorch's ``weights_only=True``
types, nothing imported or called). Writing emits the same opcodes, so
``torch.load(path, weights_only=True)`` reads ember's file. An object pickle keeps as its class and state (an
``argparse.Namespace``, a dataclass of the program's) is written as PyTorch's pickle writes it, by reference to its
class: ``torch.load(weights_only=False)`` rebuilds it, and a ``weights_only=True`` load refuses it unless the class
is allowlisted, in PyTorch and in ember alike. NumPy arrays and scalars are written as NumPy's ``__reduce__`` gives
them (``_reconstruct``, ``scalar``, ``dtype``), which a ``weights_only=True`` load refuses unless allowlisted.
"""

from __future__ import annotations

import _compat_pickle
import pickletools
import struct
import sys
from collections import OrderedDict, defaultdict
from types import BuiltinFunctionType, FunctionType
from typing import Any

from .. import _dtype
from .._backend import xp
from .._device import device as _device_type
from .._size import Size
from .._sparse import save_error
from .._tensor import Tensor
from ..storage import data_ptr, storage_key, storage_root
from . import _torch_zip
from ._archive import MAX_DEPTH, Archive, Fail, is_plain_numeric, too_deep
from ._ember_format import kept_by_state, module_class, state_of
from ._globals import path_of
from ._native_functions import pickled_global
from ._torch_unpickle import _ALLOWED, _NOT_WEIGHTS_ONLY, _TORCH_ONLY_DTYPES, STORAGE_OF, Unpickler, python3_path


def is_torch_archive(names: list[str]) -> bool:
    return any(n == "data.pkl" or n.endswith("/data.pkl") for n in names)


def read(archive: Archive, fail: Fail, weights_only: bool, what: str) -> Any:
    pkl = next(n for n in archive.names() if n == "data.pkl" or n.endswith("/data.pkl"))
    prefix = pkl[:-len("data.pkl")]
    order = archive.read(prefix + "byteorder", limit=16) if prefix + "byteorder" in archive.infos else b"little"
    if order not in (b"little", b"big"):
        fail(f"unknown byte order {order[:16]!r}")
    return Unpickler(archive.read(pkl), archive, prefix, order == b"big", fail, weights_only, what).run()


def globals_in(archive: Archive) -> set[str]:
    """The ``module.name`` of every GLOBAL in ``data.pkl`` (Python 2's names as Python 3's: ``python3_path``), found
    by reading its opcodes, nothing built, as PyTorch's ``get_unsafe_globals_in_checkpoint`` finds them."""
    pkl = next(n for n in archive.names() if n == "data.pkl" or n.endswith("/data.pkl"))
    return {python3_path(*arg.split(" ", 1)) for op, arg, _ in pickletools.genops(archive.read(pkl))
            if op.name == "GLOBAL"}


# What PyTorch's weights-only loader allows by default beyond what ember's reader builds: tensors of other layouts
# and dtypes and their rebuild functions (ember refuses those naming what it lacks, not as unsafe)
_ALSO_SAFE_IN_PYTORCH = {"builtins.bytearray", "builtins.complex", "collections.Counter",
                         "torch.nn.parameter.Parameter", "torch.storage.UntypedStorage",
                         "torch.serialization._get_layout", "torch._tensor._rebuild_from_type_v2"}


def is_safe_by_default(path: str) -> bool:
    """Whether PyTorch's weights-only loader allows the global ``path`` without an allowlist."""
    module, _, name = path.rpartition(".")
    return ((path in _ALLOWED and path not in _NOT_WEIGHTS_ONLY) or path in _ALSO_SAFE_IN_PYTORCH
            or (module == "torch._utils" and name.startswith("_rebuild_"))
            or (module in ("torch", "torch.cuda", "torch.sparse", "torch.cuda.sparse")
                and name.endswith(("Tensor", "Storage")))
            or (module == "torch" and name in _TORCH_ONLY_DTYPES))


# ---------------------------------------------------------------------------------- write
_BATCH = 1000  # pickle's BATCHSIZE: items per APPENDS / SETITEMS


class _Pickler:
    """Python object -> the protocol-2 pickle ``torch.save`` writes for it, byte for byte.

    The opcodes and the memo are those of CPython's C pickler (the ``pickle.Pickler`` PyTorch uses): every string,
    list, dict, non-empty tuple, global and reduced object takes the next memo index when written (BINPUT) and is
    referred to by it when met again (BINGET); numbers, None and bools are written every time. The objects pickled
    are those PyTorch's ``__reduce_ex__`` gives, with the same identities: a tensor is ``_rebuild_tensor_v2`` of
    fresh argument tuples around a persistent id ``("storage", type, key, "cpu", numel)`` whose key string is one
    per storage and whose ``"storage"`` and ``"cpu"`` are the interned constants (so a second tensor refers to
    them, and to a user's own interned ``"cpu"``), a device's type is a fresh string, and so on."""

    def __init__(self) -> None:
        self.out = bytearray(b"\x80\x02")
        self.storages: list = []
        self.depth = 0  # containers open around the object being written
        self.memo: dict[Any, tuple[int, Any]] = {}  # id(object), or a global's (module, name) -> (index, object)
        self.puts = 0  # memo indices given out (also to fresh objects never referred to again)
        self.open: set[int] = set()  # ids of the objects being written (cycle check)
        self.roots: dict[tuple, str] = {}  # storage_key of a storage -> its key: views and tied tensors share one

    def dump(self, obj: Any) -> bytes:
        self.save(obj)
        self.out += b"."
        return bytes(self.out)

    # --- the memo
    def put(self, obj: Any = None, key: Any = None) -> None:
        """BINPUT of the object just written: the next index, kept under ``id(obj)`` (or ``key``) for later
        references; a fresh object (an argument tuple PyTorch builds anew each time) takes an index all the same."""
        index, self.puts = self.puts, self.puts + 1
        if key is not None or obj is not None:
            self.memo[key if key is not None else id(obj)] = (index, obj)
        self.out += (b"q" + struct.pack("<B", index)) if index < 256 else (b"r" + struct.pack("<I", index))

    def get(self, key: Any) -> bool:
        """Whether the object under ``key`` was written before: then BINGET of it."""
        if key not in self.memo:
            return False
        index = self.memo[key][0]
        self.out += (b"h" + struct.pack("<B", index)) if index < 256 else (b"j" + struct.pack("<I", index))
        return True

    # --- atoms and the containers pickle writes itself
    def glob(self, module: str, name: str) -> None:
        """GLOBAL, memoized as pickle memoizes the class or function it names."""
        if not self.get((module, name)):
            self.out += b"c" + f"{module}\n{name}\n".encode()
            self.put(key=(module, name))

    def text(self, s: str, fresh: bool = False) -> None:
        """A string (memoized by identity; ``fresh``: one PyTorch makes anew, never met again)."""
        if fresh or not self.get(id(s)):
            raw = s.encode("utf-8", "surrogatepass")
            self.out += b"X" + struct.pack("<I", len(raw)) + raw
            self.put(None if fresh else s)

    def number(self, obj: int | float) -> None:
        out = self.out
        if isinstance(obj, float):
            out += b"G" + struct.pack(">d", obj)
        elif 0 <= obj < 256:
            out += b"K" + struct.pack("<B", obj)
        elif 0 <= obj < 65536:
            out += b"M" + struct.pack("<H", obj)
        elif -(2**31) <= obj < 2**31:
            out += b"J" + struct.pack("<i", obj)
        else:  # pickle's encode_long: the fewest two's-complement bytes
            raw = obj.to_bytes((obj.bit_length() >> 3) + 1, "little", signed=True)
            if obj < 0 and len(raw) > 1 and raw[-1] == 0xFF and raw[-2] & 0x80:
                raw = raw[:-1]
            out += (b"\x8a" + struct.pack("<B", len(raw))) if len(raw) < 256 else (
                b"\x8b" + struct.pack("<i", len(raw)))
            out += raw

    def tuple_of(self, items: tuple, save, obj: Any = None) -> None:
        """A tuple as protocol 2 writes one: EMPTY_TUPLE (never memoized), TUPLE1-3 after up to three items, or MARK,
        the items, TUPLE; memoized under ``obj`` (None: a fresh tuple)."""
        if not items:
            self.out += b")"
            return
        if len(items) > 3:
            self.out += b"("
        for x in items:
            save(x)
        self.out += b"t" if len(items) > 3 else b"\x85\x86\x87"[len(items) - 1:len(items)]
        self.put(obj)

    def appends(self, items: list) -> None:
        """A list's items as the C pickler writes an exact list's: APPEND for one, else batches of MARK...APPENDS."""
        if len(items) == 1:
            self.save(items[0])
            self.out += b"a"
            return
        for i in range(0, len(items), _BATCH):
            self.out += b"("
            for x in items[i:i + _BATCH]:
                self.save(x)
            self.out += b"e"

    def setitems(self, obj: dict, exact: bool) -> None:
        """A dict's items as the C pickler writes them: for an exact dict SETITEM for one item, else batches of
        MARK...SETITEMS; for the items a ``__reduce__`` gives (an OrderedDict's, a defaultdict's) likewise, but a
        last batch of one item is a SETITEM."""
        items = list(obj.items())
        if exact and len(items) == 1:
            items, single = [], items[0]
        elif not exact and len(items) % _BATCH == 1:
            items, single = items[:-1], items[-1]
        else:
            single = None
        for i in range(0, len(items), _BATCH):
            self.out += b"("
            for k, v in items[i:i + _BATCH]:
                self.save(k)
                self.save(v)
            self.out += b"u"
        if single is not None:
            self.save(single[0])
            self.save(single[1])
            self.out += b"s"

    def nested(self) -> None:
        if self.depth == MAX_DEPTH:
            raise too_deep("ember.save(format='torch')")
        self.depth += 1

    # --- any value
    def save(self, obj: Any) -> None:
        if obj is None:
            self.out += b"N"
        elif obj is True or obj is False:
            self.out += b"\x88" if obj else b"\x89"
        elif type(obj) in (int, float) or (isinstance(obj, (int, float)) and not isinstance(obj, xp.generic)):
            self.number(obj)
        elif self.get(id(obj)):
            pass
        elif (type(obj) is xp.ndarray or isinstance(obj, xp.generic)) and is_plain_numeric(obj.dtype):
            self.reduced(obj)
        elif isinstance(obj, str):
            self.text(obj)
        elif isinstance(obj, Tensor):
            if obj.is_sparse:
                raise save_error()
            self.tensor(obj)
        elif isinstance(obj, _dtype.dtype):
            self.glob("torch", obj.name)
        elif isinstance(obj, _device_type):  # torch.device.__reduce__: (device, (type,)) or (device, (type, index))
            self.glob("torch", "device")
            self.text(obj.type, fresh=True)
            if obj.index is not None:
                self.number(obj.index)
            self.out += b"\x86" if obj.index is not None else b"\x85"
            self.put()
            self.out += b"R"
            self.put(obj)
        elif isinstance(obj, Size):  # torch.Size.__reduce__: (Size, (tuple(self),)): torch.load gives a Size back
            self.glob("torch", "Size")
            self.tuple_of(tuple(int(n) for n in obj), self.number)
            self.out += b"\x85"
            self.put()
            self.out += b"R"
            self.put(obj)
        elif type(obj) in (set, frozenset):
            # protocol 2's reduction of one: (set, (list(self),)) (PyTorch's weights-only loader takes a set and
            # refuses a frozenset, ember's reader too)
            self.nested()
            self.glob("__builtin__", type(obj).__name__)
            self.out += b"]"
            self.put()
            if obj:
                self.appends(list(obj))
            self.out += b"\x85"
            self.put()
            self.out += b"R"
            self.put(obj)
            self.depth -= 1
        elif isinstance(obj, defaultdict):  # (defaultdict, (factory,) or ()), then its items
            self.nested()
            self.glob("collections", "defaultdict")
            if obj.default_factory is None:
                self.out += b")"
            else:
                self.reference(obj.default_factory)
                self.out += b"\x85"
                self.put()
            self.out += b"R"
            self.put(obj)
            self.setitems(obj, exact=False)
            self.depth -= 1
        elif isinstance(obj, (tuple, list, dict)) or _by_reference(obj):
            self.nested()
            if isinstance(obj, tuple):
                self.tuple_of(obj, self.save, obj)
            elif isinstance(obj, list):
                self.out += b"]"
                self.put(obj)
                if obj:
                    self.appends(obj)
            elif isinstance(obj, OrderedDict):  # (OrderedDict, (), its attributes or None, None, its items)
                self.glob("collections", "OrderedDict")
                self.out += b")R"
                self.put(obj)
                self.setitems(obj, exact=False)
                if vars(obj):  # a state_dict's _metadata
                    self.save(vars(obj))
                    self.out += b"b"
            elif isinstance(obj, dict):
                self.out += b"}"
                self.put(obj)
                if obj:
                    self.setitems(obj, exact=True)
            else:
                self.object(obj)
            self.depth -= 1
        elif isinstance(obj, (type, FunctionType, BuiltinFunctionType)):  # a class or function kept as a value
            self.reference(obj)
        else:
            raise TypeError(f"ember.save(format='torch') cannot store an object of type "
                            f"{type(obj).__module__}.{type(obj).__qualname__}: {_why_not(obj)}")

    def reference(self, fn: Any) -> None:
        """A class or function by name (a value, a defaultdict's factory): GLOBAL in protocol 2's spelling of it
        (``__builtin__`` for ``builtins``, ``long`` for ``int``), as pickle writes it. ember's own public ones are
        written as PyTorch's, whose namespaces ember's mirror (``ember.nn.modules.activation.ReLU`` as
        ``torch.nn.modules.activation.ReLU``, which ``torch.load`` imports; a function PyTorch implements in C by
        the path pickle gives it, ``torch._C._nn.gelu`` for ``F.gelu``: ``_native_functions``). Refused: one that
        cannot be imported again by its name (a lambda, a local function), a nested class (protocol 2 names it
        through a call of ``getattr``), and one from ember's private modules, which PyTorch has no counterpart of."""
        module, _, name = path_of(fn).rpartition(".")  # (TypeError for a lambda or a local function)
        if "." in name:
            raise TypeError(f"ember.save(format='torch') cannot store a reference to the nested {module}.{name}: "
                            "protocol 2 names it through a call of getattr, which a weights-only load refuses")
        if module.partition(".")[0] == "ember":
            if any(part.startswith("_") for part in module.split(".")):
                raise TypeError(f"ember.save(format='torch') cannot store a reference to {module}.{name}: it is "
                                "ember's own, from a module PyTorch has no counterpart of")
            module = "torch" + module.removeprefix("ember")
            module, name = pickled_global(module, name)  # (F.gelu: PyTorch's C function, torch._C._nn.gelu)
        if (module, name) in _compat_pickle.REVERSE_NAME_MAPPING:
            module, name = _compat_pickle.REVERSE_NAME_MAPPING[module, name]
        elif module in _compat_pickle.REVERSE_IMPORT_MAPPING:
            module = _compat_pickle.REVERSE_IMPORT_MAPPING[module]
        self.glob(module, name)

    def reduced(self, obj: Any) -> None:
        """A NumPy array, scalar or dtype as pickle writes it, from NumPy's own ``__reduce__`` (its very objects,
        memoized as pickle memoizes them): the array as ``_reconstruct(ndarray, (0,), b"b")`` then BUILD of (1,
        shape, dtype, fortran order, its bytes), a scalar as ``scalar(dtype, its bytes)``, a dtype as ``dtype("f4",
        False, True)`` then BUILD of its byte order: the globals PyTorch's weights-only loader refuses unless
        allowlisted, as it refuses PyTorch's own file."""
        fn, args, *state = obj.__reduce__()
        self.glob(fn.__module__, fn.__qualname__)
        self.numpy_part(args)
        self.out += b"R"
        self.put(obj)
        if state:
            self.numpy_part(state[0])
            self.out += b"b"

    def numpy_part(self, x: Any) -> None:
        """A piece of a NumPy object's reduction: classes by name, bytes as protocol 2 writes them."""
        if isinstance(x, (bytes, type, tuple, xp.dtype)) and self.get(id(x)):
            return
        if isinstance(x, bytes):  # protocol 2 has no bytes opcode: _codecs.encode(text, "latin1"), or bytes()
            if x:
                self.glob("_codecs", "encode")
                self.tuple_of((x.decode("latin1"), "latin1"), self.save)
            else:
                self.glob("__builtin__", "bytes")
                self.out += b")"
            self.out += b"R"
            self.put(x)
        elif isinstance(x, type):
            self.glob(x.__module__, x.__qualname__)
        elif isinstance(x, (xp.ndarray, xp.generic, xp.dtype)):
            self.reduced(x)
        elif isinstance(x, tuple):
            self.tuple_of(x, self.numpy_part, x)
        else:  # ints, strings, bools, None
            self.save(x)

    def object(self, obj: Any) -> None:
        """``copyreg.__newobj__``: ``cls.__new__(cls)`` then its state, as pickle's protocol 2 writes an object
        (GLOBAL, EMPTY_TUPLE, NEWOBJ, BUILD of its state unless that is empty)."""
        if id(obj) in self.open:
            raise ValueError(f"ember.save: the object contains a reference cycle through a {type(obj).__name__}")
        state = state_of(obj)
        module, _, name = path_of(type(obj)).rpartition(".")
        self.glob(module, name)
        self.out += b")\x81"
        self.put(obj)
        if state:
            self.open.add(id(obj))
            self.save(state)
            self.open.discard(id(obj))
            self.out += b"b"

    def tensor(self, t: Tensor) -> None:
        """``Tensor.__reduce_ex__``: ``_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``; a
        parameter's: ``_rebuild_parameter(its .data, requires_grad, hooks)``, ``.data`` a fresh tensor."""
        from ._ember_format import _is_parameter

        parameter = _is_parameter(t)
        depth, self.depth = self.depth, 0  # the tuples of its arguments are no nesting: a tensor loads as a leaf
        if parameter:
            self.glob("torch._utils", "_rebuild_parameter")
        key, storage, offset, strides = self.storage(t._data)
        self.glob("torch._utils", "_rebuild_tensor_v2")
        self.out += b"(("  # the arguments, then the persistent id
        self.text("storage")
        self.glob("torch", STORAGE_OF[storage.dtype.name])
        self.text(key)
        self.text("cpu")
        self.number(storage.size)
        self.out += b"t"
        self.put()
        self.out += b"Q"
        self.number(offset)
        self.tuple_of(tuple(t._data.shape), self.number)
        self.tuple_of(strides, self.number)
        self.save(t.requires_grad and not parameter)
        self.empty_hooks()
        self.out += b"t"
        self.put()
        self.out += b"R"
        if parameter:
            self.put()  # (.data)
            self.save(t.requires_grad)
            self.empty_hooks()
            self.out += b"\x87"
            self.put()
            self.out += b"R"
        self.put(t)  # the same tensor saved twice loads as one, as PyTorch's
        self.depth = depth

    def empty_hooks(self) -> None:
        """The backward hooks PyTorch saves with a tensor: a fresh ``OrderedDict()``."""
        self.glob("collections", "OrderedDict")
        self.out += b")R"
        self.put()

    def storage(self, array) -> tuple[str, Any, int, tuple]:
        """The key of ``array``'s storage (written once), the storage, and ``array``'s element offset and strides in
        it. Arrays viewing one NumPy buffer share its storage, as PyTorch saves one storage for its views (a model's
        tied weights load tied); an array that is no such view (negative strides, another dtype than its buffer's)
        is saved as a copy of its own. The key is one string per storage, as PyTorch's."""
        root = storage_root(array)  # (a .grad in a gradient store: its own piece, as PyTorch's own storage)
        item = array.itemsize
        shared = (array.size and type(root) is xp.ndarray and root.flags.c_contiguous and root.dtype == array.dtype
                  and all(s >= 0 and s % item == 0 for s in array.strides)
                  and (data_ptr(array) - data_ptr(root)) % item == 0)
        if not shared:
            own = array if array.flags.c_contiguous else array.copy()  # (keeps 0-d arrays 0-d)
            self.storages.append(own)
            return (str(len(self.storages) - 1), own, 0,
                    tuple(s // item for s in own.strides) if own.size else tuple(_c_strides(own.shape)))
        key = self.roots.get(storage_key(root))
        if key is None:
            key = self.roots[storage_key(root)] = str(len(self.storages))
            self.storages.append(root)  # (kept alive, so its id stays its own while writing)
        return (key, root, (data_ptr(array) - data_ptr(root)) // item, tuple(s // item for s in array.strides))


def _by_reference(obj: Any) -> bool:
    """Whether PyTorch's pickle keeps ``obj`` as its class (by name) and its state, and PyTorch can find that class:
    the program's own or the standard library's, not one of ember's (a module, an optimizer), which PyTorch's
    ``torch.load`` would rebuild as ember's object, if at all."""
    cls, module = type(obj), module_class()
    return (hasattr(obj, "__dict__") and not isinstance(obj, type) and kept_by_state(cls)
            and not (module is not None and isinstance(obj, module))
            and cls.__module__.partition(".")[0] != "ember")


def _why_not(obj: Any) -> str:
    """Why PyTorch's format, as ember writes it, cannot hold ``obj``."""
    module = module_class()
    if module is not None and isinstance(obj, module):
        return ("PyTorch pickles a model saved whole as its torch.nn classes, which torch.load imports to rebuild "
                "it, and ember's nn classes are not PyTorch's")
    if type(obj).__module__.partition(".")[0] == "ember":
        return "it is one of ember's own classes, which PyTorch's torch.load cannot rebuild"
    return ("it stores tensors, NumPy arrays and scalars (bool, integer, float, complex), numbers, strings, None, "
            "dtypes, devices, classes and functions (by name), objects pickle keeps as their class and state (an "
            "argparse.Namespace, a dataclass) and lists/tuples/dicts/sets of them")


def _c_strides(shape: tuple) -> list[int]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return out[::-1]


def writer(obj: Any, archive: str = "archive"):
    """Encode ``obj`` now (TypeError if it cannot be stored); returns the function writing the zip, its records
    those of ``torch.save``, in its order, under the folder ``archive`` (PyTorch names it after the file)."""
    pickler = _Pickler()
    data = pickler.dump(obj)

    def write_to(out) -> None:
        storages = ((f"data/{i}", memoryview(a.reshape(-1).view(xp.uint8)) if a.size else b"")
                    for i, a in enumerate(pickler.storages))
        _torch_zip.write(out, archive, [("data.pkl", data), (".format_version", b"1"),
                                        (".storage_alignment", str(_torch_zip.ALIGNMENT).encode()),
                                        ("byteorder", sys.byteorder.encode()), *storages, ("version", b"3\n")])

    return write_to


def archive_name(path: str) -> str:
    """The folder PyTorch's writer puts a file's records in: the file's name without its extension ("archive" for
    a file object, or a path PyTorch opens through Python: one not ASCII); RuntimeError where that is empty, as
    PyTorch's "invalid file name"."""
    if not path.isascii():
        return "archive"
    name = path.replace("\\", "/").rpartition("/")[2]
    stem = name.rpartition(".")[0] if "." in name else name
    if not stem:
        raise RuntimeError(f"invalid file name: {path}")
    return stem
