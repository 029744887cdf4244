"""What a program gets when it reaches for a part of PyTorch that ember does not have.

Every public ember module that mirrors a ``torch`` module ends with
``__getattr__ = module_getattr(__name__)``: an attribute that is not there is
either a submodule not imported yet (loaded now, as ``import torch`` makes
``torch.nn.functional`` or ``torch.utils.data.distributed`` reachable), or a
missing feature, reported under its PyTorch name. ``Tensor`` does the same for
methods through its last base, ``MissingTensorMethods``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable

_SEE = "(docs/api.md lists what is supported)"


class MissingFeatureError(AttributeError):
    """``torch.X`` is not implemented in ember.

    An AttributeError, so ``hasattr(torch, "X")`` and ``getattr(torch, "X", default)``
    answer False / the default, as they would in a PyTorch build without X.
    """

    __module__ = "ember"

    def __init__(self, message: str, attr: str = "", candidates: Callable[[], Iterable[str]] | None = None,
                 if_typo: str = "") -> None:
        super().__init__(message)
        self._attr, self._candidates, self._if_typo = attr, candidates, if_typo

    def __str__(self) -> str:
        # A close public name is suggested (the name may be a typo, not a missing feature); computed only
        # when the message is shown, so hasattr() probes stay cheap.
        if not self._candidates or not self._attr:
            return self.args[0]
        import difflib

        public = sorted({c for c in self._candidates() if not c.startswith("_")})
        close = difflib.get_close_matches(self._attr, public, n=1, cutoff=0.75)
        if not close:
            return self.args[0]
        # A close name that exists makes a typo likely: say so first, without claiming PyTorch has the name.
        return f"{self._if_typo or self.args[0]}. Did you mean: '{close[0]}'?"

    # Python fills ``name``/``obj`` in and then appends its own "Did you mean: ...?", which may point
    # at ember's private modules (``torch.backends`` -> '_backend'). Keeping them out of the C fields
    # (these properties shadow them) leaves the message as written above; the values stay readable.
    @property
    def name(self):
        return self.__dict__.get("_name")

    @name.setter
    def name(self, value) -> None:
        self.__dict__["_name"] = value

    @property
    def obj(self):
        return self.__dict__.get("_obj")

    @obj.setter
    def obj(self, value) -> None:
        self.__dict__["_obj"] = value


def missing(owner: str, torch_name: str, candidates: Callable[[], Iterable[str]] | None = None
            ) -> MissingFeatureError:
    """The error for ``torch_name`` (e.g. ``torch.linalg``), looked up on ``owner`` (e.g. ``module 'ember'``);
    ``candidates()``: the names a typo may have meant."""
    attr = torch_name.rpartition(".")[2]
    return MissingFeatureError(f"{owner} has no attribute '{attr}': {torch_name} is not implemented in ember {_SEE}",
                               attr, candidates,
                               if_typo=f"{owner} has no attribute '{attr}' (if {torch_name} is PyTorch's, ember does "
                                       "not implement it; docs/api.md lists what is supported)")


def _names_in(module) -> list[str]:
    """``module``'s attributes and, for a package, its submodules (loaded or not)."""
    import pkgutil  # only when an error is shown: it is slow to import

    names = list(vars(module))
    if getattr(module, "__path__", None) is not None:
        names += [m.name for m in pkgutil.iter_modules(module.__path__)]
    return names


# PyTorch features ember leaves out on purpose, and why (docs/api.md, "Out of scope").
OUT_OF_SCOPE = {
    "torch.distributed.TCPStore": "a key-value store served over a TCP port by one process to the others, which is "
                                  "how PyTorch's ranks find one another; ember's ranks find one another through MPI "
                                  "(start them with python -m ember.distributed.run, or mpiexec) and share no "
                                  "store: call init_process_group() without store=, and exchange values with "
                                  "broadcast_object_list/all_gather_object, or use HashStore within one process",
    "torch.distributed.FileStore": "a key-value store in a file that the ranks lock and share, which is how "
                                   "PyTorch's ranks can find one another; ember's ranks find one another through MPI "
                                   "and share no store: call init_process_group() without store= (or "
                                   "init_method='file://...'), and exchange values with broadcast_object_list/"
                                   "all_gather_object, or use HashStore within one process",
    "torch._scaled_mm": "its float8 operands are dtypes ember names but does not hold (NumPy has no float8 "
                        "arithmetic); multiply in bfloat16 or float32 instead",
    "torch.nested": "nested (ragged) tensors are a tensor kind of their own, with their own kernels for each op; "
                    "pad the sequences (torch.nn.utils.rnn.pad_sequence) and pass a mask instead",
    "torch.jagged": "it is the layout of nested (ragged) tensors, which ember does not have; pad the sequences "
                    "(torch.nn.utils.rnn.pad_sequence) and pass a mask instead",
    "torch.autograd.graph.allow_mutation_on_saved_tensors": "no public program ember is measured on uses it "
                                                            "(docs/coverage/usage.tsv); clone a saved tensor before "
                                                            "changing it in place instead",
    "torch._C": "it is PyTorch's binding to its C++ core, which ember does not have (ember is NumPy underneath); "
                "use the public torch API the private name stands behind",
}


# PyTorch's modules that import ``torch`` itself, so that ``torch.sparse.torch`` is ``torch`` (capsule-network code
# writes ``torch.sparse.torch.eye(n)`` for one-hot rows; kornia annotates with ``torch.torch.Tensor``)
IMPORT_TORCH = frozenset({"torch", "torch.sparse", "torch.nn.functional", "torch.fft", "torch.special",
                          "torch.autograd"})


def module_getattr(module_name: str, torch_name: str | None = None):
    """A module-level ``__getattr__`` for ``module_name``: lazy submodules, else ``torch.X`` is not implemented.

    ``torch_name`` is the PyTorch module this one stands for (default: ``ember`` replaced by ``torch``).
    """
    torch_name = torch_name or "torch" + module_name[len("ember"):]

    def __getattr__(name: str):
        if f"{torch_name}.{name}" in OUT_OF_SCOPE:
            raise MissingFeatureError(f"{torch_name}.{name} is not implemented in ember: "
                                      f"{OUT_OF_SCOPE[f'{torch_name}.{name}']}")
        if name.startswith("_"):  # private names and protocol probes (__path__, __wrapped__): the usual error
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        if name == "torch" and torch_name in IMPORT_TORCH:
            return sys.modules[module_name.partition(".")[0]]
        module = sys.modules.get(module_name)
        if getattr(module, "__path__", None) is not None and importlib.util.find_spec(f"{module_name}.{name}"):
            return importlib.import_module(f"{module_name}.{name}")
        raise missing(f"module '{module_name}'", f"{torch_name}.{name}", lambda: _names_in(module) if module else ())

    return __getattr__


# The public names of ``torch.Tensor`` (PyTorch 2.13.0) that ember's Tensor lacks. tests/test_compat_missing.py checks
# that each such name is here; one ember has since defined is harmless (its own definition comes first).
TENSOR_LACKS = frozenset("""
absolute_ as_strided_ as_strided_scatter as_subclass conj_physical_ const_data_ptr cumprod_ cumsum_ dense_dim diagflat
diagonal_scatter dim_order eig geqrf get_device grad_dtype hash_tensor igamma_ igammac_ index int_repr ipu
is_distributed is_same_size is_set_to is_signed lstsq map2_ map_ module_load mtia name narrow_copy nonzero_static
orgqr ormqr q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point qscheme resize
resize_as resize_as_sparse_ select_scatter slice_inverse slice_scatter smm solve sparse_dim sspaddmm storage_type
sum_to_size symeig to_mkldnn to_padded_tensor to_sparse_bsc to_sparse_bsr unsafe_chunk unsafe_split
unsafe_split_with_sizes xpu
""".split())


class _LackedTensorAttribute:
    """A name ``torch.Tensor`` has and ember's lacks. Read on a tensor it raises ``MissingFeatureError`` naming
    ``torch.Tensor.<name>`` (an AttributeError: ``hasattr(x, name)`` is False); read on the class, Python's own
    AttributeError (``hasattr(ember.Tensor, name)`` is False too). No ``__set__``: an attribute a program sets on a
    tensor under that name is kept and read back, as before (PyTorch refuses the write where its attribute is a
    read-only property, ``name``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            raise AttributeError(f"type object '{owner.__name__}' has no attribute '{self.name}'")
        raise missing(f"'{type(obj).__name__}' object", f"torch.Tensor.{self.name}")


class MissingTensorMethods:
    """Tensor's last base: ``TENSOR_LACKS``' names as ``_LackedTensorAttribute``s, so that ``x.geqrf()`` names the
    missing PyTorch feature while any other missing name (a typo, a protocol probe such as NumPy's
    ``__array_interface__``) gets Python's own AttributeError and suggestion. Not ``Tensor.__getattr__``: CPython
    reads every attribute of an instance of a class with ``__getattr__`` by its general path (no specialised
    ``LOAD_ATTR`` / ``LOAD_METHOD``), about 20 ns more a read and 0.3 µs of a recorded ``x + y``'s 2. ``dir()``
    lists these names, as ``dir(torch.Tensor)`` does."""

    __slots__ = ()


for _name in TENSOR_LACKS:
    setattr(MissingTensorMethods, _name, _LackedTensorAttribute(_name))
del _name
