"""Run programs written for PyTorch on ember, unmodified.

From the command line, as ``python script.py args...`` (or ``python -m module
args...``, ``python -c code args...``) would run it::

    python -m ember.compat script.py args...
    python -m ember.compat -m package.module args...
    python -m ember.compat -c "import torch; print(torch.ones(2))" args...

``sys.argv``, ``__main__`` and ``sys.path[0]`` are what Python sets for each form
(the script's directory; the current directory for ``-m``; '' for ``-c``). Inside the process ``import torch``,
``import torch.nn as nn``, ``from torch.utils.data import DataLoader``,
``import torch.distributed as dist`` ... all give the ember modules
(``torch.X.Y`` is ``ember.X.Y``: the very same module objects).

From Python, before anything imports torch::

    import ember.compat
    ember.compat.install()
    import torch          # ember

What ember lacks is reported under its PyTorch name: importing a missing
module raises ModuleNotFoundError("torch.mtia is not implemented in ember ..."),
a missing attribute of an ember package (``torch.nn``, ``torch.optim`` ...) raises AttributeError("torch.nn.X is
not implemented in ember ..."), and ``from torch.nn import X`` for a missing X
gets the same sentence appended to its ImportError (when run by ``python -m ember.compat``).
``import torchvision`` gives ``ember.vision`` (transforms, datasets, models, ops, utils) the same way.
Libraries with compiled extensions built against PyTorch's C++ core (torchaudio, xformers, ...) cannot run
on ember: importing one raises ModuleNotFoundError saying what ember offers instead. Pure-Python libraries on
the torch API (transformers, einops, ...) run on ember as far as the torch features they reach are
implemented. Printed objects read as under PyTorch (``torch.Size([2, 3])``, ``torch.float32``,
``torch.return_types.max(...)``). ``torch.__version__`` is ember's PyTorch-style version (``ember.version``),
and child processes started with multiprocessing's "spawn" method import ``torch`` as ember too. An exception
the program leaves uncaught is reported from the program's first frame on, as ``python script.py`` reports it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import runpy
import sys
from types import ModuleType

_SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_compat_shim")  # torch, torchvision for children

_ALIAS, _TARGET = "torch", "ember"
# PyTorch-world package -> the ember package that stands in for it (``torchvision.X`` is ``ember.vision.X``).
# The legacy ``functorch`` package, which PyTorch still ships (deprecated), is ember's ``torch.func`` behind PyTorch's
# deprecation warnings.
_ALIASES = {_ALIAS: _TARGET, "torchvision": "ember.vision", "functorch": "ember._functorch.legacy_package"}


def _alias_of(name: str) -> str | None:
    """The aliased package ``name`` belongs to (``torch``, ``torchvision``), or None."""
    top = name.partition(".")[0]
    return top if top in _ALIASES else None


def _ember_name(torch_name: str) -> str:
    alias = _alias_of(torch_name) or _ALIAS
    return _ALIASES[alias] + torch_name[len(alias):]


def _missing(torch_name: str) -> str:
    return f"{torch_name} is not implemented in ember (docs/api.md lists what is supported)"


_DATA = "ember.utils.data (Dataset, TensorDataset, DataLoader) over NumPy arrays"
# Libraries with compiled extensions built against PyTorch's C++ core, which ember replaces in this process, and what
# to use on ember instead. Pure-Python libraries written on the torch API (transformers, timm, lightning,
# accelerate, torchmetrics, einops, ...) are not refused: they import torch, which is ember, and a torch feature
# ember lacks is named when they reach it.
_TORCH_LIBRARIES = {
    "torchaudio": f"load audio with another library into NumPy arrays and use {_DATA}",
    "torchtext": f"tokenise in Python and use {_DATA} and ember.nn.Embedding",
    "deepspeed": "for data parallelism use ember.nn.parallel.DistributedDataParallel",
    "fairscale": "for data parallelism use ember.nn.parallel.DistributedDataParallel",
    "apex": "use torch.amp (GradScaler, autocast) instead of apex.amp",
    "torchao": "ember has no quantisation",
    "triton": "ember has no GPU kernels",
    "xformers": "ember has no GPU kernels; use torch.nn.functional.scaled_dot_product_attention",
    "flash_attn": "ember has no GPU kernels; use torch.nn.functional.scaled_dot_product_attention",
    "bitsandbytes": "ember has no quantisation",
    "torch_xla": "ember computes on the CPU",
    "torch_scatter": "use Tensor.scatter_add_ / scatter_reduce",
    "torch_sparse": "use ember's sparse COO tensors (torch.sparse_coo_tensor) or dense ops",
    "torch_cluster": "ember has no graph kernels",
    "mamba_ssm": "ember has no GPU kernels",
}


def _library_missing(name: str) -> ModuleNotFoundError:
    top = name.partition(".")[0]
    return ModuleNotFoundError(
        f"{top} cannot run on ember: it has compiled extensions built against PyTorch's C++ core, which ember "
        f"replaces in this process (python -m ember.compat). Instead: {_TORCH_LIBRARIES[top]}. docs/api.md lists what "
        "ember supports.", name=name)


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch``, ``torchvision`` and their submodules and loads them as the matching ember modules."""

    def find_spec(self, fullname: str, path=None, target=None):
        if _alias_of(fullname) is not None:
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
        # The import system returns whatever sys.modules holds after exec_module: the ember module itself.
        sys.modules[torch_name] = ember_module
        # Its submodules already loaded are registered under their torch names too, as PyTorch's are once its
        # package is imported: importing one later then finds it loaded, and the import system does not set it as
        # an attribute of its package over a function of the same name (``torch.nn.utils.weight_norm`` stays the
        # function after ``from torch.nn.utils.weight_norm import norm_except_dim``, as in PyTorch)
        prefix = target + "."
        for name, sub in list(sys.modules.items()):
            if name.startswith(prefix) and sub is not None:
                sys.modules.setdefault(torch_name + name[len(target):], sub)
        if torch_name == _ALIAS:  # torch is ember from now on: str(type(x)) prints <class 'torch.Tensor'>
            from ember._shown_name import show_pytorch_names

            show_pytorch_names()


def install() -> None:
    """Make ``torch`` and its submodules resolve to ember, ``torchvision`` to ``ember.vision`` (idempotent).

    Also makes libraries with compiled PyTorch extensions (torchaudio, xformers, ...) absent; the runner's
    error for importing one says what to use instead. Nothing of ember is changed: ``torch.__version__`` reads
    as PyTorch's (``ember.version.__version__``) because ``ember/__init__.py`` says so where ``torch`` is ember,
    and ember's packages name missing torch features with their own static ``__getattr__``.
    Raises RuntimeError if the real PyTorch is already imported: the two cannot share the name.
    """
    loaded = sys.modules.get(_ALIAS)
    if loaded is not None and loaded is not sys.modules.get(_TARGET) and not _is_shim(loaded):
        raise RuntimeError(
            "ember.compat.install(): the real torch is already imported in this process; "
            "call install() before anything imports torch"
        )
    if not is_active():
        sys.meta_path.insert(0, _TorchAlias())
    # Libraries with compiled torch extensions are absent here: ``import`` raises ModuleNotFoundError (its message
    # completed by the runner, ``_named_import_errors``) and ``importlib.util.find_spec`` answers None, so the
    # availability probes of libraries such as transformers say "not installed" instead of failing.
    for library in _TORCH_LIBRARIES:
        if library not in sys.modules:
            sys.modules[library] = None


def is_active() -> bool:
    """Whether ``torch`` resolves to ember in this process (``install()`` has run: the compat runner)."""
    return any(isinstance(finder, _TorchAlias) for finder in sys.meta_path)


def torch_means_ember() -> bool:
    """Whether the program imported ``torch`` and got ember. Not so for a program written for ember (``import
    ember as torch``) that the runner happens to run, as the launcher runs every rank's script where PyTorch is
    not installed: such a program should behave as it does when started with ``python script.py``."""
    return is_active() and sys.modules.get("torch") is sys.modules.get("ember")


def _is_shim(module) -> bool:
    return os.path.dirname(os.path.dirname(getattr(module, "__file__", None) or "")) == _SHIM


def _install_for_children() -> None:
    """Let the program's child processes import torch as ember: those multiprocessing starts with "spawn" copy
    ``sys.path``; Python processes it starts itself (``subprocess`` with ``sys.executable``: launchers that run the
    script again once per rank, as Lightning's DDP does) read ``PYTHONPATH``, which gets the stand-in in front and
    the folder this ember is imported from after the program's own entries (for a pip install that folder is
    site-packages: put first, its modules would shadow those the user put on ``PYTHONPATH``)."""
    if _SHIM not in sys.path:
        sys.path.insert(1, _SHIM)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    given = os.environ.get("PYTHONPATH", "")
    paths = given.split(os.pathsep) if given else []  # (an empty entry is kept: it puts the child's folder on its path)
    kept = [p for p in paths if p != _SHIM]
    os.environ["PYTHONPATH"] = os.pathsep.join([_SHIM, *kept, *([] if root in kept else [root])])


def is_runner_file(filename: str, runner_files: tuple[str, ...] = ()) -> bool:
    """Whether a frame of ``filename`` is the runner's (this file, runpy, or ``runner_files``), not the program's."""
    # runpy's frames by its file's name (or the frozen module's), not by "runpy" in a path: a program may live in
    # a folder named so
    return filename in (os.path.abspath(__file__), runpy.__file__, "<frozen runpy>", *runner_files)


def program_frames(tb, runner_files: tuple[str, ...] = ()):
    """``tb`` from the program's first frame on. The frames before it are the runner's (``is_runner_file``),
    not the program's; a traceback with no other frame is kept whole."""
    start = tb
    while tb is not None:
        if not is_runner_file(tb.tb_frame.f_code.co_filename, runner_files):
            return tb
        tb = tb.tb_next
    return start


def _install_program_traceback_hook() -> None:
    """An exception the program leaves uncaught is reported from the program's first frame on, as
    ``python script.py`` reports it, not from the runner's frames above it. Only for the process the runner
    starts as a whole: a hook the program installs replaces this one, and the launcher's ranks report their
    own failures (``ember.distributed._errors``)."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        tb = program_frames(tb)
        # Python prints the exception's own __traceback__ rather than the one it is given
        previous(exc_type, exc.with_traceback(tb) if isinstance(exc, BaseException) else exc, tb)

    sys.excepthook = hook


_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '([^']+)'")


def _named_import_errors(run_program) -> None:
    """Run ``run_program()``; an ImportError that names an ember module gets the missing torch feature added."""
    try:
        run_program()
    except ImportError as e:
        if isinstance(e, ModuleNotFoundError) and (e.name or "").partition(".")[0] in _TORCH_LIBRARIES:
            # with the import's own traceback, so that the report points at the program's import line
            raise _library_missing(e.name).with_traceback(e.__traceback__) from None
        found = _CANNOT_IMPORT.search(str(e))
        if found and found.group(2).split(".")[0] == _TARGET:
            # Python names the ember module; say which torch feature is missing (msg is what str() shows).
            e.msg = f"{e.msg}: {_missing(_torch_name(found.group(2)) + '.' + found.group(1))}"
        raise


def _torch_name(ember_name: str) -> str:
    """The PyTorch-world name of an ember module (``ember.vision.models`` -> ``torchvision.models``)."""
    for alias, target in sorted(_ALIASES.items(), key=lambda item: -len(item[1])):
        if ember_name == target or ember_name.startswith(target + "."):
            return alias + ember_name[len(target):]
    return ember_name


def _prepare() -> None:
    """What every form of ``python -m ember.compat`` does first: ``torch`` is ember, here and in spawned children;
    the training-loop warnings (``ember.diagnostics``) are on unless ``EMBER_DIAGNOSTICS=0`` (children inherit
    ``EMBER_DIAGNOSTICS=1``, with which ``import ember`` enables them)."""
    install()
    _install_for_children()
    _install_program_traceback_hook()
    if os.environ.get("EMBER_DIAGNOSTICS", "1") != "0":
        os.environ["EMBER_DIAGNOSTICS"] = "1"
        import ember.diagnostics

        ember.diagnostics.enable()


def run(script: str, args: list[str]) -> None:
    """Run ``script`` as ``python script args...`` would, with ember standing in for torch."""
    _prepare()
    sys.argv = [script, *args]
    # Python names the script by its absolute path in __main__.__file__ (so in tracebacks and warnings) while
    # sys.argv[0] stays as typed; runpy.run_path would set both to the path it is given.
    path = os.path.abspath(script)
    sys.path.insert(0, os.path.dirname(path))
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    main = ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __builtins__=__builtins__,
                         __loader__=importlib.machinery.SourceFileLoader("__main__", path))
    sys.modules["__main__"] = main
    _named_import_errors(lambda: exec(code, main.__dict__))


def run_module(module: str, args: list[str]) -> None:
    """Run ``module`` as ``python -m module args...`` would, with ember standing in for torch.

    A ``torch.*`` module runs as its ember counterpart (``-m torch.distributed.run`` is ember's launcher); one
    ember does not have stops with the missing feature named."""
    _prepare()
    if _alias_of(module) is not None:
        target = _ember_name(module)
        try:
            found = importlib.util.find_spec(target) is not None
        except ModuleNotFoundError:  # a parent package is missing
            found = False
        if not found:
            raise SystemExit(f"ember.compat: {_missing(module)}")
        module = target
    sys.argv = [module, *args]  # runpy puts the module's file in argv[0], as Python does
    sys.path.insert(0, os.getcwd())
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        found = False
    if not found:  # Python's one line for `python -m nosuch`, not a traceback through the runner
        raise SystemExit(f"{sys.executable}: No module named {module}")
    _named_import_errors(lambda: runpy.run_module(module, run_name="__main__", alter_sys=True))


def run_code(code: str, args: list[str]) -> None:
    """Run ``code`` as ``python -c code args...`` would, with ember standing in for torch."""
    _prepare()
    sys.argv = ["-c", *args]
    sys.path.insert(0, "")
    main = ModuleType("__main__")
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    _named_import_errors(lambda: exec(compile(code, "<string>", "exec"), main.__dict__))


_USAGE = ("usage: python -m ember.compat script.py [args...]\n"
          "       python -m ember.compat -m module [args...]\n"
          "       python -m ember.compat -c code [args...]\n"
          "Runs a PyTorch program unmodified with ember standing in for torch.")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr)
        return 0 if argv else 2
    if argv[0] in ("-m", "-c"):
        if len(argv) < 2:
            print(f"ember.compat: argument expected for the {argv[0]} option\n{_USAGE}", file=sys.stderr)
            return 2
        (run_module if argv[0] == "-m" else run_code)(argv[1], argv[2:])
        return 0
    if not os.path.isfile(argv[0]):
        print(f"ember.compat: can't open file {argv[0]!r}: no such file", file=sys.stderr)
        return 2
    run(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    # ``python -m ember.compat`` runs this file as ``__main__``; the runner's state (the torch finder) belongs to
    # the importable ``ember.compat``, which the rest of ember asks (``is_active``).
    from ember.compat import main as _main

    sys.exit(_main(sys.argv[1:]))
