"""Run programs written for PyTorch on ember, unmodified.

From the command line, as ``python script.py args...`` would run it::

    python -m ember.compat script.py args...

``sys.argv`` is ``[script.py, args...]``, the script runs as ``__main__`` and its
directory comes first on ``sys.path``. Inside the process ``import torch``,
``import torch.nn as nn``, ``from torch.utils.data import DataLoader``,
``import torch.distributed as dist`` ... all give the ember modules
(``torch.X.Y`` is ``ember.X.Y``: the very same module objects).

From Python, before anything imports torch::

    import ember.compat
    ember.compat.install()
    import torch          # ember

What ember lacks is reported under its PyTorch name: importing a missing
module raises ModuleNotFoundError("torch.fft is not implemented in ember ..."),
a missing attribute of an aliased module raises AttributeError("torch.nn.X is
not implemented in ember ..."), and ``from torch.nn import X`` for a missing X
gets the same sentence appended to its ImportError (when run by ``python -m ember.compat``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import re
import runpy
import sys
from types import ModuleType

_ALIAS, _TARGET = "torch", "ember"


def _ember_name(torch_name: str) -> str:
    return _TARGET + torch_name[len(_ALIAS):]


def _missing(torch_name: str) -> str:
    return f"{torch_name} is not implemented in ember (docs/api.md lists what is supported)"


def _attribute_fallback(torch_name: str):
    """A module ``__getattr__`` that names the missing PyTorch feature."""

    def __getattr__(name: str):
        if name.startswith("__"):  # protocol probes (``__path__``, ``__wrapped__``): the usual error
            raise AttributeError(f"module '{_ember_name(torch_name)}' has no attribute '{name}'")
        raise AttributeError(_missing(f"{torch_name}.{name}"))

    return __getattr__


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch`` and ``torch.*`` and loads them as the matching ember modules."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname == _ALIAS or fullname.startswith(_ALIAS + "."):
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        return None  # a placeholder; exec_module swaps the ember module in

    def exec_module(self, module: ModuleType) -> None:
        torch_name = module.__name__
        target = _ember_name(torch_name)
        try:
            ember_module = importlib.import_module(target)
        except ModuleNotFoundError as e:
            # Only "ember has no such module" is a missing feature; a missing dependency is the real error.
            if e.name and (target == e.name or target.startswith(e.name + ".")):
                raise ModuleNotFoundError(_missing(torch_name), name=torch_name) from None
            raise
        if "__getattr__" not in vars(ember_module):
            ember_module.__getattr__ = _attribute_fallback(torch_name)
        # The import system returns whatever sys.modules holds after exec_module: the ember module itself.
        sys.modules[torch_name] = ember_module


def install() -> None:
    """Make ``torch`` and its submodules resolve to ember in this process (idempotent).

    Raises RuntimeError if the real PyTorch is already imported: the two cannot share the name.
    """
    loaded = sys.modules.get(_ALIAS)
    if loaded is not None and loaded is not sys.modules.get(_TARGET):
        raise RuntimeError(
            "ember.compat.install(): the real torch is already imported in this process; "
            "call install() before anything imports torch"
        )
    if not any(isinstance(finder, _TorchAlias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _TorchAlias())
    import ember
    import ember.version

    # ``torch`` is ember itself, so its __version__ must read as PyTorch's: the API level ember implements.
    ember.__version__ = ember.version.__version__


_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '([^']+)'")


def run(script: str, args: list[str]) -> None:
    """Run ``script`` as ``python script args...`` would, with ember standing in for torch."""
    install()
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except ImportError as e:
        found = _CANNOT_IMPORT.search(str(e))
        if found and found.group(2).split(".")[0] == _TARGET:
            # Python names the ember module; say which torch feature is missing (msg is what str() shows).
            e.msg = f"{e.msg}: {_missing(_ALIAS + found.group(2)[len(_TARGET):] + '.' + found.group(1))}"
        raise


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m ember.compat script.py [args...]\n"
              "Runs a PyTorch script unmodified with ember standing in for torch.", file=sys.stderr)
        return 0 if argv else 2
    if not os.path.isfile(argv[0]):
        print(f"ember.compat: can't open file {argv[0]!r}: no such file", file=sys.stderr)
        return 2
    run(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
