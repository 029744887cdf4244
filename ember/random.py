"""Random number generation: one global generator, seeded by ``manual_seed``.

ember draws from NumPy's PCG64 bit generator, so the same seed gives the same
numbers on every run and platform. The numbers differ from PyTorch's (a
different generator); the distributions are the same.
"""

from __future__ import annotations

from ._backend import xp

# PyTorch's default CPU seed: without manual_seed, runs are still repeatable.
DEFAULT_SEED = 67280421310721


class Generator:
    """A random number generator (``ember.Generator``), usable for DataLoader shuffling."""

    def __init__(self, device: str = "cpu") -> None:
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
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
        raw = bytes(new_state._data.astype(xp.uint8).tobytes())
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
    """Seed the global generator; returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the global generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


def rng_of(generator: Generator | None):
    """The NumPy generator behind ``generator`` (the global one when None)."""
    return (generator or default_generator).rng
