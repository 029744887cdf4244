"""``torch.distributed.HashStore``: PyTorch's key-value store held in this process's memory, and ``PrefixStore``,
which keeps its keys under a prefix in another store.

PyTorch's stores are how ranks find one another (``init_process_group(store=...)``); ember's ranks find one
another through MPI and take ``store=`` only for compatibility, so the one store here is the in-process one
that single-process programs and tests build (``HashStore()``, ``world_size=1``), with the ``PrefixStore`` that
libraries wrap around a store to give each user its own keys. PyTorch's stores shared between processes
(``TCPStore``, a server on a TCP port; ``FileStore``, a locked file) are not ember's: its ranks share nothing but
MPI. Its values are bytes; a
``get`` or ``wait`` for a key no thread has set waits up to the store's timeout (five minutes by default, as
PyTorch's), then raises ``DistStoreError``. Threads of the process may share one store.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from datetime import timedelta

__all__ = ["DistError", "DistStoreError", "HashStore", "PrefixStore"]


class DistError(RuntimeError):
    """``torch.distributed.DistError``: an error of the distributed package."""


class DistStoreError(DistError):
    """``torch.distributed.DistStoreError``: a store's wait ran out of time."""


# std::stoll's reading: C whitespace, an optional sign, decimal digits; anything after them ignored
_STOLL_PREFIX = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _stoll(value: bytes) -> int:
    """The integer a counter's value holds as PyTorch's store reads it with ``std::stoll``: its leading decimal
    number ("3x" is 3, " -7" is -7; Python's int refuses the first and takes "1_000" whole); none is its
    ValueError, one beyond int64 its IndexError (std::out_of_range), each worded "stoll"."""
    match = _STOLL_PREFIX.match(value)
    if match is None:
        raise ValueError("stoll")
    number = int(match.group(1))
    if not -2**63 <= number < 2**63:
        raise IndexError("stoll")
    return number


def _as_bytes(value: str | bytes, method: str) -> bytes:
    """A value as the store holds it: a str encoded as UTF-8, bytes as they are; anything else (an int, which
    ``bytes()`` would turn into that many zero bytes) is PyTorch's TypeError."""
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    raise TypeError(f"{method}(): incompatible function arguments: a value must be str or bytes, not "
                    f"{type(value).__name__}")


class HashStore:
    """An in-process key-value store, as PyTorch's ``HashStore``."""

    def __init__(self) -> None:
        self._values: dict[str, bytes] = {}
        self._changed = threading.Condition()
        self._timeout = timedelta(minutes=5)

    @property
    def timeout(self) -> timedelta:
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._timeout = timeout

    def set(self, key: str, value: str | bytes) -> None:
        with self._changed:
            self._values[key] = _as_bytes(value, "set")
            self._changed.notify_all()

    def get(self, key: str) -> bytes:
        """The value of ``key``, once it is set (DistStoreError after the timeout)."""
        self.wait([key])
        with self._changed:
            return self._values[key]

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer ``key`` holds (0 if unset or empty) and return the sum, an int64 that
        wraps around, as PyTorch's; the value is read as C++'s ``std::stoll`` reads it (``_stoll``)."""
        with self._changed:
            current = self._values.get(key, b"")
            total = amount + _stoll(current) if current else amount
            total = (total + 2**63) % 2**64 - 2**63
            self._values[key] = str(total).encode()
            self._changed.notify_all()
            return total

    def compare_set(self, key: str, expected_value: str | bytes, desired_value: str | bytes) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is unset and ``expected_value`` is
        empty); return the value it holds afterwards (an unset key, not set: ``expected_value``)."""
        expected, desired = _as_bytes(expected_value, "compare_set"), _as_bytes(desired_value, "compare_set")
        with self._changed:
            current = self._values.get(key)
            if current is None and expected:
                return expected
            if current is None or current == expected:
                self._values[key] = desired
                self._changed.notify_all()
                return desired
            return current

    def check(self, keys: Sequence[str]) -> bool:
        """Whether every key of ``keys`` is set (without waiting)."""
        with self._changed:
            return all(k in self._values for k in keys)

    def wait(self, keys: Sequence[str], timeout: timedelta | None = None) -> None:
        """Wait until every key of ``keys`` is set; DistStoreError after ``timeout`` (default: the store's)."""
        deadline = time.monotonic() + (timeout or self._timeout).total_seconds()
        with self._changed:
            while not all(k in self._values for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DistStoreError("Wait timeout")
                self._changed.wait(left)

    def delete_key(self, key: str) -> bool:
        """Remove ``key``; whether it was set."""
        with self._changed:
            return self._values.pop(key, None) is not None

    def num_keys(self) -> int:
        with self._changed:
            return len(self._values)


class PrefixStore:
    """``torch.distributed.PrefixStore(prefix, store)``: ``store`` (a HashStore or another PrefixStore), each key
    read and written as ``"<prefix>/<key>"``; ``num_keys`` counts the whole underlying store's, as PyTorch's."""

    def __init__(self, prefix: str, store: HashStore | PrefixStore) -> None:
        if not isinstance(prefix, str) or not isinstance(store, (HashStore, PrefixStore)):
            raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                            "supported: PrefixStore(prefix: str, store: Store); invoked with: "
                            f"{type(prefix).__name__}, {type(store).__name__}")
        self._prefix = prefix
        self._store = store

    def _key(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    @property
    def underlying_store(self) -> HashStore | PrefixStore:
        return self._store

    @property
    def timeout(self) -> timedelta:
        return self._store.timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._store.set_timeout(timeout)

    def set(self, key: str, value: str | bytes) -> None:
        self._store.set(self._key(key), value)

    def get(self, key: str) -> bytes:
        return self._store.get(self._key(key))

    def add(self, key: str, amount: int) -> int:
        return self._store.add(self._key(key), amount)

    def compare_set(self, key: str, expected_value: str | bytes, desired_value: str | bytes) -> bytes:
        return self._store.compare_set(self._key(key), expected_value, desired_value)

    def check(self, keys: Sequence[str]) -> bool:
        return self._store.check([self._key(k) for k in keys])

    def wait(self, keys: Sequence[str], timeout: timedelta | None = None) -> None:
        self._store.wait([self._key(k) for k in keys], timeout)

    def delete_key(self, key: str) -> bool:
        return self._store.delete_key(self._key(key))

    def num_keys(self) -> int:
        return self._store.num_keys()
