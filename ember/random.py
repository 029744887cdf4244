"""Random number generation: PyTorch's CPU generator, so that the same seed gives PyTorch's numbers.

A ``Generator`` is PyTorch's ``CPUGeneratorImpl``: a Mersenne Twister (mt19937, NumPy's ``MT19937`` seeded as
PyTorch seeds it: with the seed's low 32 bits; the 64-bit seed is kept for ``initial_seed``) and the cached second
sample of the double-precision Box-Muller pair. ``torch.manual_seed(s); torch.randn(3)`` and ``ember.manual_seed(s);
ember.randn(3)`` print the same numbers; the draws that follow PyTorch 2.13's CPU streams bit for bit, and those
that keep a stream of their own, are listed in docs/api.md ("Random numbers"). ``get_rng_state`` /
``set_rng_state`` use PyTorch's 5056-byte state, so a state saved by either loads in the other. The draws
themselves (uniform, normal, integers, permutations...) are ``ember._random_draws``; the float arithmetic they need
to match PyTorch's rounding is ``ember._random_math``.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from ._device import check_device
from ._device import device as _device_type
from ._kernels.policy import policy as _policy
from ._shown_name import package_name

# A new torch.Generator's seed. ember's global generator starts from it too (PyTorch seeds its global generator
# from the operating system instead), so that runs without manual_seed are repeatable.
DEFAULT_SEED = 67280421310721
STATE_BYTES = 5056  # PyTorch's CPUGeneratorImplState (x86-64 layout), see get_state
_OLD_PCG64_STATE_BYTES = 64  # what ember's get_rng_state returned before it used PyTorch's generator
_MT_WORDS = 624


def _to_seed(seed) -> int:
    """``Generator.manual_seed``'s argument rule, PyTorch's: a Python int only (not a bool, a NumPy integer, a float
    or a tensor: the module-level ``manual_seed`` converts with ``int()`` first), in [-2**63, 2**64), kept as an
    unsigned 64-bit number."""
    if isinstance(seed, np.integer):  # (PyTorch's C check lets NumPy integers through, then fails to read them)
        raise TypeError("an integer is required")
    if not isinstance(seed, int) or isinstance(seed, bool):
        kind = type(seed)  # (named as PyTorch's C type names it: numpy.float64, Tensor, str)
        name = f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__
        raise RuntimeError(f"manual_seed expected a long, but got {name}")
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed + (1 << 64) if seed < 0 else seed  # PyTorch keeps the seed as an unsigned 64-bit number


def compiles_draw(n: int) -> bool:
    """Whether a draw of ``n`` values runs the compiled kernels (``ember._kernels.mt19937``): from the kernel
    policy's ``min_compiled_draw`` on, where reading and writing NumPy's mt19937 state (~0.2 ms) is paid back;
    below it, and with compiled kernels off, the NumPy code beside each kernel's call runs (the kernels' reference)."""
    return int(n) >= _policy.min_compiled_draw and _policy.use_compiled()  # (policy.compiles, one call less)


def filled(out: np.ndarray | None, values: np.ndarray) -> np.ndarray:
    """``values``, or ``out`` holding them when given (a draw asked to write into an array of its caller's)."""
    if out is None:
        return values
    out[...] = values
    return out


class Generator:
    """A random number generator (``ember.Generator``): PyTorch's CPU generator, for every ``generator=``
    argument (draws, DataLoader shuffling, ``random_split``). A new one is seeded with PyTorch's default seed."""

    _mt: np.random.MT19937  # (an annotation only: the instance makes it on first use)

    def __init__(self, device: str | _device_type = "cpu") -> None:
        where = device if isinstance(device, _device_type) else _device_type(device)
        if where.type == "meta":  # (PyTorch's: a generator is the CPU's or an accelerator's)
            raise RuntimeError("META device type not an accelerator.")
        check_device(where)  # (any other device: ember has none but the CPU)
        self.device = _device_type("cpu")
        self._numpy: np.random.Generator | None = None
        # Held by every draw (ember._random_draws.holding_lock), seeding and the state's reads and writes, as
        # PyTorch's generator mutex: threads drawing at once see one draw after the other.
        self.lock = threading.RLock()
        self.manual_seed(DEFAULT_SEED)  # the mt19937 itself is made on first use (``__getattr__``)

    if not TYPE_CHECKING:  # a type checker then flags a misspelt attribute instead of typing it Any
        def __getattr__(self, name: str):
            # Only reached while ``_mt`` is not made yet: a generator (the global one among them) makes its mt19937,
            # seeded as ``manual_seed`` left it, on its first draw or state read, because NumPy's random module costs
            # ``import ember`` more than a tenth of its time and a program that draws nothing never needs it.
            if name != "_mt" or "lock" not in self.__dict__:
                raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
            with self.lock:
                if "_mt" not in self.__dict__:
                    mt = np.random.MT19937(0)
                    mt._legacy_seeding(self._seed & 0xFFFF_FFFF)
                    self._mt = mt
                return self.__dict__["_mt"]

    def __getstate__(self) -> dict:
        self._mt  # noqa: B018  (made if it is not yet: the pickle holds the mt19937 whatever the generator's age)
        state = self.__dict__.copy()  # pickled (as torch.Generator is) without its lock
        del state["lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.device = _device_type("cpu")  # (a generator pickled before it kept its device)
        self.__dict__.update(state)
        self.lock = threading.RLock()

    def manual_seed(self, seed: int, /) -> Generator:
        """Seed with ``seed``, a Python int (positional only, as PyTorch's: see ``_to_seed``); returns the
        generator."""
        seed = _to_seed(seed)
        with self.lock:
            self._seed = seed
            if "_mt" in self.__dict__:  # (else it is made seeded with _seed)
                self._mt._legacy_seeding(seed & 0xFFFF_FFFF)
            self._fresh = True               # PyTorch writes next=0 into the state until the first draw
            self._next_double: float | None = None  # the cached second Box-Muller sample (double)
            self._next_float: float | None = None   # its float twin: kept in the state, never drawn on the CPU
        return self

    def seed(self) -> int:
        """Seed from OS entropy (a non-deterministic 64-bit seed); returns it."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def clone_state(self) -> Generator:
        """A new generator in this one's state: the two then draw the same numbers, independently."""
        clone = Generator()
        clone.set_state(self.get_state())
        return clone

    def graphsafe_get_state(self) -> Generator:
        """PyTorch's CUDA-graph state capture, which its CPU generator does not support either."""
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state: Generator) -> Generator:
        """PyTorch's CUDA-graph state restore, which its CPU generator does not support either."""
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def __repr__(self) -> str:
        # PyTorch's class is torch._C.Generator, the object's default repr: <torch._C.Generator object at 0x...>
        return f"<{package_name()}._C.Generator object at {id(self):#x}>"

    # -- the raw streams -------------------------------------------------------------------------------------------
    def u32(self, n: int) -> np.ndarray:
        """``n`` draws of PyTorch's ``random()`` (32-bit words of the mt19937), as uint64."""
        n = int(n)
        if compiles_draw(n):
            from ._kernels import mt19937

            return self.compiled_draw(mt19937.words, np.empty(n, np.uint64))
        return self._numpy_words(n)

    def _numpy_words(self, n: int) -> np.ndarray:
        """``u32``'s NumPy path: NumPy's ``random_raw``."""
        with self.lock:  # (NumPy's own lock on the mt19937 does not keep out a compiled draw, which holds this one)
            if n:
                self._fresh = False
            return self._mt.random_raw(n)

    def compiled_draw(self, kernel, out: np.ndarray, *args) -> np.ndarray:
        """``out`` filled by ``kernel(key, pos, out, *args)`` (``ember._kernels.mt19937``) from this generator's
        mt19937 words, the state moved on past them as the NumPy path moves it; returns ``out``."""
        with self.lock:
            state = self._mt.state["state"]
            key = state["key"]  # (a copy, which the kernel advances)
            pos = kernel(key, int(state["pos"]), out, *args)
            self._mt.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
            if out.size:
                self._fresh = False
        return out

    def u64(self, n: int) -> np.ndarray:
        """``n`` draws of PyTorch's ``random64()``: two words, the first one high."""
        r = self.u32(2 * int(n))
        hi = r[0::2]
        hi <<= np.uint64(32)
        hi |= r[1::2]
        return hi

    def unit32(self, n: int, out: np.ndarray | None = None) -> np.ndarray:
        """``n`` float32 uniforms on [0, 1) as PyTorch draws them: 24 bits of one word (into ``out``, a flat
        float32 array of n elements, when given; returned)."""
        if compiles_draw(n):
            from ._kernels import mt19937

            out = np.empty(int(n), np.float32) if out is None else out
            return self.compiled_draw(mt19937.uniform32, out, np.float32(0), np.float32(1))
        r = self._numpy_words(int(n))  # (u32, its size check made)
        r &= np.uint64(0xFFFFFF)
        values = r.astype(np.float32)
        values *= np.float32(2.0**-24)
        return filled(out, values)

    def unit64(self, n: int, out: np.ndarray | None = None) -> np.ndarray:
        """``n`` float64 uniforms on [0, 1) as PyTorch draws them: 53 bits of one ``random64()`` (into ``out``, a
        flat float64 array of n elements, when given; returned)."""
        if compiles_draw(n):
            from ._kernels import mt19937

            return self.compiled_draw(mt19937.unit64, np.empty(int(n), np.float64) if out is None else out)
        r = self.u64(n)
        r &= np.uint64((1 << 53) - 1)
        values = r.astype(np.float64)
        values *= 2.0**-53
        return filled(out, values)

    def numpy_draw(self, method: str, *args, **kwargs) -> np.ndarray:
        """``numpy.random.Generator.<method>(*args, **kwargs)`` on this generator's mt19937, for the draws that keep
        ember's own algorithm (binomial, multinomial, the distributions' Poisson): they advance the same state
        (saved by ``get_state``) but not as PyTorch's do. Holds the generator's lock as every other draw: NumPy's
        own lock on the mt19937 alone would let such a draw run inside a compiled draw (between its read of the
        state and its write of the state moved on), which would then hand out the same words again."""
        with self.lock:
            if self._numpy is None:
                self._numpy = np.random.Generator(self._mt)
            self._fresh = False
            return getattr(self._numpy, method)(*args, **kwargs)

    # -- state -----------------------------------------------------------------------------------------------------
    def get_state(self):
        """PyTorch's 5056-byte state (a uint8 tensor): ``torch.Generator.set_state`` loads it, and the reverse.

        Layout (little-endian): u64 seed; i32 left; i32 seeded; u64 next; 624 u64 mt words; f64 normal_x,
        normal_y (the cached double normal), normal_rho; i32 its valid flag; 4 pad; f32 the cached float normal;
        u8 its valid flag; 3 pad."""
        from ._tensor import Tensor

        with self.lock:
            st = self._mt.state["state"]
            seed, fresh, nd, nf = self._seed, self._fresh, self._next_double, self._next_float
        pos = int(st["pos"])
        b = bytearray(STATE_BYTES)
        struct.pack_into("<QiiQ", b, 0, seed, _MT_WORDS + 1 - pos, 1, 0 if fresh else pos)
        np.frombuffer(b, np.uint64, _MT_WORDS, 24)[:] = st["key"]
        struct.pack_into("<dddi", b, 5016, 0.0, 0.0 if nd is None else nd, 0.0, nd is not None)
        struct.pack_into("<f?", b, 5048, 0.0 if nf is None else nf, nf is not None)
        return Tensor._make(np.frombuffer(bytes(b), dtype=np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from ``get_state()`` or from PyTorch's ``get_rng_state()`` (5056 bytes)."""
        from ._tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a {package_name()}.ByteTensor, but got {type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError(f"RNG state must be a {package_name()}.ByteTensor")
        size = new_state._data.size
        if size == _OLD_PCG64_STATE_BYTES:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG state size to be "
                f"{size}: this is the NumPy PCG64 state that ember saved before its generator became PyTorch's "
                f"mt19937, and it cannot be continued. Seed instead (ember.manual_seed), or load a state saved "
                f"by this ember or by PyTorch (torch.get_rng_state(), {STATE_BYTES} bytes)")
        if size != STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG "
                               f"state size to be {size}")
        b = bytes(new_state._data.tobytes())
        seed, left, seeded, nxt = struct.unpack_from("<QiiQ", b, 0)
        key = np.frombuffer(b, np.uint64, _MT_WORDS, 24)
        if not (seeded == 1 and 0 < left <= _MT_WORDS and nxt <= _MT_WORDS) or (key >> np.uint64(32)).any():
            raise RuntimeError("Invalid mt19937 state")
        _, nd, _, nd_valid = struct.unpack_from("<dddi", b, 5016)
        nf, nf_valid = struct.unpack_from("<f?", b, 5048)
        with self.lock:
            self._mt.state = {"bit_generator": "MT19937",
                              "state": {"key": key.astype(np.uint32), "pos": _MT_WORDS + 1 - left}}
            self._seed = seed
            self._fresh = left == 1 and nxt == 0
            self._next_double = nd if nd_valid else None
            self._next_float = nf if nf_valid else None
        return self


default_generator = Generator()


def generator_of(generator: Generator | None) -> Generator:
    """``generator``, or the global one when None."""
    return default_generator if generator is None else generator


def manual_seed(seed: int) -> Generator:
    """Seed the global generator with ``int(seed)`` (as PyTorch: the same seed gives PyTorch's numbers); returns
    it."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the global generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """The global generator's state: PyTorch's 5056 bytes (``torch.set_rng_state`` loads it)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the global generator from ``get_rng_state()``'s bytes, ember's or PyTorch's."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:
    """Restore the global generator's state on leaving: random draws inside do not change the numbers drawn
    after, as PyTorch's. ``enabled=False`` does nothing. ember has only the CPU: ``devices`` must be None or
    empty (PyTorch forks the accelerators' generators too)."""
    if not enabled:
        yield
        return
    if devices is not None and list(devices):
        raise RuntimeError(f"{_caller}: ember has only the CPU, whose generator is always forked; pass "
                           f"{_devices_kw}=[] or leave it None (got {list(devices)})")
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def swap_states(a: Generator, b: Generator) -> None:
    """Exchange two generators' whole states (mt19937, seed, cached normals) in place, each object staying the
    one its holders know: how a DataLoader worker's generator takes the global one's place while the worker's code
    runs, without a round trip through the 5056 bytes."""
    with a.lock, b.lock:
        for name in ("_mt", "_numpy", "_seed", "_fresh", "_next_double", "_next_float"):
            value = getattr(a, name)
            setattr(a, name, getattr(b, name))
            setattr(b, name, value)
