"""numba, loaded on the first compiled kernel a program runs (never at ``import ember``: numba's import alone takes
0.1-0.2 s), and the ``kernel`` decorator that compiles a loop on its first call.

Every kernel is compiled ``nogil=True`` (ember's thread pool runs them on several cores at once) and
``cache=True``: the machine code is kept on disk and loaded by later processes in a fraction of the compile time.
Where the cache lives is numba's choice, in this order: ``NUMBA_CACHE_DIR`` when set; else ``__pycache__`` beside
``ember/_kernels``'s sources; else, when that directory is not writable (an install in a read-only location),
numba's user-wide cache directory (``~/.cache/numba`` on Linux, the platform's user cache folder elsewhere).
No ``fastmath``: the kernels round as IEEE arithmetic written in that order does, which is what lets their tests
compare bit for bit with the NumPy reference where the arithmetic is the same; ``error_model="numpy"``: a division
by zero gives inf or NaN, as in NumPy. Two exceptions, for kernels held to PyTorch's tolerance rather than compared
bit for bit: ``kernel.reduction``, a sum over one row (a separate function, so its flags stay its own), may be
reassociated, which lets LLVM add in vector lanes (measured 5-9x faster than a sequential chain over 128 floats);
``kernel.fused`` may compute a * b + c as one fused multiply-add (one rounding instead of two: GELU's polynomials
measured 20 % faster); ``kernel.reassociating`` is a whole kernel compiled as a reduction is. Either way the
arithmetic is fixed by the compiled code and a row's length, so results do not depend on how rows are split among
threads.

``kernel.parallel`` is the same kernel compiled with numba's ``parallel=True``: its ``prange`` loops (written over
rows computed independently, each row's arithmetic the serial kernel's) run on numba's OpenMP threads, where
``_omp.available()`` says they may (``_parallel.parallel_kernel`` decides). In the serial kernel and in ``kernel.py``
``prange`` is ``range``.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable

from .._warnings import keeping_registries

_numba = None
_failed: str | None = None
prange = range  # the kernels' parallel loop: numba's ``prange`` in the ``parallel=True`` compilation only


def load_numba():
    """The numba module when its compiled kernels can run, imported on the first call: None (with one warning)
    when it cannot be imported, and None (silently: the program asked for it) when numba's JIT is disabled
    (``NUMBA_DISABLE_JIT=1``): then ember's NumPy kernels run, as they do without numba, rather than the kernels'
    loops interpreted a Python operation per element."""
    numba = import_numba()
    return None if numba is None or numba.config.DISABLE_JIT else numba


def numba_loaded() -> bool:
    """Whether numba is loaded for ember's kernels already (``import_numba`` has run and succeeded): its compiler's
    target is then initialised, and a further kernel costs only its load from the cache (milliseconds), where a
    process's first costs numba's import and that initialisation (0.5-0.7 s measured; an ``import numba`` of the
    program's own does only the import)."""
    return _numba is not None


def import_numba():
    """The numba module, imported on the first call; None (with one warning) when it cannot be imported."""
    global _numba, _failed
    if _numba is None and _failed is None:
        try:
            with keeping_registries():  # (numba's first compilation imports SciPy, which adds a warning filter)
                import numba
                from numba.core.registry import cpu_target

                cpu_target.target_context.refresh()  # what that first compilation loads, here
        except Exception as exc:  # noqa: BLE001 - a broken install is as absent: the NumPy kernels run
            _failed = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"ember's compiled kernels are off: numba could not be imported ({_failed}); "
                          "the NumPy kernels run instead", RuntimeWarning, stacklevel=3)
        else:
            _numba = numba
            quiet_compiler_logs()
    return _numba


def quiet_compiler_logs() -> None:
    """numba logs each compilation step at DEBUG: a program's ``logging.basicConfig(level=logging.DEBUG)`` (its
    own training log, as under PyTorch) would fill with thousands of compiler lines. Its loggers pass warnings
    only, unless the program set their level itself."""
    import logging  # (here: numba imports it anyway, and ``import ember`` need not)

    log = logging.getLogger("numba")
    if log.level == logging.NOTSET:
        log.setLevel(logging.WARNING)


def _compiling_keeps_registries(dispatcher) -> None:
    """Each compilation of ``dispatcher`` (its first call for a signature: compiled, or loaded from the on-disk
    cache) runs within ``keeping_registries``: numba's compiler enters and leaves ``warnings.catch_warnings``, and
    each exit would make the warnings a program has already shown once per line show again (a cold cache compiles
    mid-epoch). Set on ember's dispatchers only (numba calls the instance's ``_compile_for_args`` for a signature it
    has not compiled); calls of compiled signatures do not pass here. With numba's JIT disabled ``njit`` hands back
    the Python function itself, which compiles nothing: nothing to set."""
    compile_for_args = getattr(dispatcher, "_compile_for_args", None)
    if compile_for_args is None:
        return

    def _compile_for_args(*args, **kwargs):
        with keeping_registries():
            return compile_for_args(*args, **kwargs)

    dispatcher._compile_for_args = _compile_for_args


class kernel:  # noqa: N801 - used as a decorator, like numba.njit
    """A numba kernel: ``fn`` (plain Python on arrays and numbers) compiled on its first call.

    ``fn`` stays callable as ``kernel.py`` (the interpreted loop, for debugging). The caller decides whether the
    kernel runs (``policy.use_compiled()``); calling it when numba cannot be imported raises RuntimeError; with
    numba's JIT disabled (``NUMBA_DISABLE_JIT=1``, where ``use_compiled()`` is False) a kernel called all the same
    runs numba's way, as the interpreted loop.
    ``@kernel.inline`` marks a helper that kernels (and helpers) of the same module call: it is compiled into
    them. ``@kernel.reduction`` marks a helper that reduces one row to a number, compiled on its own with
    reassociation allowed (vector lanes) and called by the kernels that name it. ``@kernel.fused``: a kernel
    whose multiply-adds may be fused (its inline helpers too). ``@kernel.fma32``: a helper computing float32
    ``a * b + c`` rounded once, written as an emulation, compiled as one fused multiply-add.
    """

    def __init__(self, fn: Callable, inline: bool = False, reduction: bool = False, fused: bool = False,
                 fma32: bool = False) -> None:
        self.py = fn
        self.__name__, self.__doc__ = fn.__name__, fn.__doc__
        self._inline, self._reduction, self._fused, self._fma32 = inline, reduction, fused, fma32
        self._compiled: Callable | None = None
        self._parallel: Callable | None = None

    @classmethod
    def inline(cls, fn: Callable) -> kernel:
        return cls(fn, inline=True)

    @classmethod
    def reduction(cls, fn: Callable) -> kernel:
        return cls(fn, reduction=True)

    @classmethod
    def fused(cls, fn: Callable) -> kernel:
        return cls(fn, fused=True)

    @classmethod
    def reassociating(cls, fn: Callable) -> kernel:
        """A whole kernel compiled as a ``reduction`` is: its floating-point additions (and its inline helpers')
        may be reordered, which vectorises its sums (BatchNorm's per-channel sums: 4x a scalar chain)."""
        return cls(fn, reduction=True)

    @classmethod
    def fma32(cls, fn: Callable) -> kernel:
        """A helper ``fn(a, b, c)``: float32 ``a * b + c`` rounded once, which ``fn`` emulates (its interpreted form,
        and the reference). Compiled, it is LLVM's ``llvm.fma.f32``: the processor's fused multiply-add where it has
        one, else the C library's ``fmaf``; either rounds once, so the value is the emulation's (measured: the
        float32 normal kernel 3x faster). Its arguments must be float32 (anything else fails to compile, rather
        than round differently)."""
        return cls(fn, inline=True, fma32=True)

    def compiled(self, parallel: bool = False) -> Callable:
        """The numba dispatcher (compiled on its first call, or loaded from the cache); ``parallel``: the one
        compiled with ``parallel=True``, its ``prange`` loops on numba's threads."""
        done = self._parallel if parallel else self._compiled
        if done is not None:
            return done
        numba = import_numba()
        if numba is None:
            raise RuntimeError(f"kernel {self.__name__} needs numba, which could not be imported ({_failed})")
        if self._fma32:
            self._compiled = _fma32_intrinsic(numba)
            return self._compiled
        # the helpers it calls, as dispatchers numba can compile into it
        names = dict(self.py.__globals__)
        called = self.py.__code__.co_names
        names.update((k, v.compiled()) for k, v in names.items()
                     if isinstance(v, kernel) and (v._inline or v._reduction) and v is not self and k in called)
        fn = types.FunctionType(self.py.__code__, names, self.py.__name__, self.py.__defaults__)
        fn.__module__, fn.__qualname__, fn.__doc__ = self.py.__module__, self.py.__qualname__, self.py.__doc__
        options = {"inline": "always"} if self._inline else {"nogil": True, "cache": True}
        if self._reduction or self._fused:
            options["fastmath"] = {"reassoc"} if self._reduction else {"contract"}
        if parallel:
            names["prange"] = numba.prange
            # its own name: numba's on-disk cache is keyed by the function's name and signature, not its flags
            fn.__qualname__ += "__parallel"
            options["parallel"] = True
        # error_model "numpy": x / 0 is inf or NaN as in NumPy (no ZeroDivisionError check, which would keep
        # every loop with a division from vectorising: measured 10x slower)
        compiled = numba.njit(error_model="numpy", **options)(fn)
        _compiling_keeps_registries(compiled)
        if parallel:
            self._parallel = compiled
        else:
            self._compiled = compiled
        return compiled

    @property
    def parallel(self) -> Callable:
        """The kernel compiled with ``parallel=True`` (its ``prange`` loops on numba's threads)."""
        done = self._parallel
        return done if done is not None else self.compiled(parallel=True)

    def __call__(self, *args):
        compiled = self._compiled
        return (compiled if compiled is not None else self.compiled())(*args)


def _fma32_intrinsic(numba) -> Callable:
    """numba's intrinsic for ``llvm.fma.f32`` (``kernel.fma32``'s compiled form)."""
    from numba.extending import intrinsic

    f32 = numba.types.float32

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    @intrinsic
    def fma32(typingctx, a, b, c):
        if a != f32 or b != f32 or c != f32:
            return None
        return f32(f32, f32, f32), codegen

    return fma32


__all__ = ["kernel", "load_numba", "prange"]
