"""Random number generation: one global generator, seeded by ``manual_seed``.

ember draws from NumPy's PCG64 bit generator, so the same seed gives the same
numbers on every run and platform. The numbers differ from PyTorch's (a
different generator); the distributions are the same.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Iterator

from ._backend import xp

# PyTorch's default CPU seed: without manual_seed, runs are still repeatable.
DEFAULT_SEED = 67280421310721
_STATE_BYTES = 64  # get_state(): PCG64's state, increment, has_uint32, uinteger, 16 bytes each


class Generator:
    """A random number generator (``ember.Generator``), usable for DataLoader shuffling."""

    def __init__(self, device: str = "cpu") -> None:
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        try:
            seed = operator.index(seed)  # (PyTorch's module-level manual_seed converts with int() first)
        except TypeError:
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}") from None
        self._seed = seed
        self.rng = xp.random.Generator(xp.random.PCG64(seed & 0xFFFF_FFFF_FFFF_FFFF))
        return self

    def seed(self) -> int:
        s = int(xp.random.SeedSequence().entropy) & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        from ._tensor import Tensor

        state = self.rng.bit_generator.state
        words = [state["state"]["state"], state["state"]["inc"], state["has_uint32"], state["uinteger"]]
        as_bytes = b"".join(int(w).to_bytes(16, "little") for w in words)
        return Tensor._make(xp.frombuffer(as_bytes, dtype=xp.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from ``get_state()``: a uint8 tensor of 64 bytes (PCG64's; PyTorch's do not fit)."""
        from ._tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a ByteTensor, but got {type(new_state).__name__}")
        if new_state._data.dtype != xp.uint8:
            raise TypeError(f"RNG state must be a ByteTensor (uint8), got {new_state.dtype}")
        if new_state._data.size != _STATE_BYTES:
            raise RuntimeError(
                f"Expected an RNG state of size {_STATE_BYTES} (ember's PCG64 state, from get_state()) but found "
                f"the input RNG state size to be {new_state._data.size}"
            )
        raw = bytes(new_state._data.tobytes())
        words = [int.from_bytes(raw[i:i + 16], "little") for i in range(0, 64, 16)]
        self.rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": words[0], "inc": words[1]},
            "has_uint32": words[2],
            "uinteger": words[3],
        }
        return self


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the global generator with ``int(seed)``; returns it."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the global generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
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


def rng_of(generator: Generator | None):
    """The NumPy generator behind ``generator`` (the global one when None)."""
    return (generator or default_generator).rng
