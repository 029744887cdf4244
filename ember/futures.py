"""``ember.futures``: PyTorch's ``torch.futures.Future`` — a value that becomes available later.

A Future is completed either by ``set_result`` or by the operation it was made for (``Work.get_future()``).
``then(callback)`` returns a new Future for ``callback(this_future)``; an exception in the callback is
raised as a RuntimeError where that future is waited for, as in PyTorch. Difference from PyTorch: callbacks run when
someone waits (``wait()``/``value()``) or when this future is completed by ``set_result``, never on a background
thread. That keeps the order in which chained callbacks issue collectives the same on every rank (DDP waits for
its buckets' futures in bucket order), which a thread firing callbacks as messages arrive could not promise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_PENDING = object()


class Future:
    """A result that may not be ready yet (``torch.futures.Future``)."""

    def __init__(self, *, devices=None) -> None:
        self._value: Any = _PENDING
        self._exception: BaseException | None = None
        self._work = None  # an ember.distributed Work whose result completes this future
        self._parent: Future | None = None  # for then(): the future whose value feeds _callback
        self._callback: Callable[[Future], Any] | None = None
        self._done_callbacks: list[Callable[[Future], None]] = []

    @classmethod
    def _of_work(cls, work) -> Future:
        fut = cls()
        fut._work = work
        return fut

    def done(self) -> bool:
        """True when the value (or an exception) is set; polls the underlying operation without waiting."""
        if self._value is _PENDING and self._exception is None and self._work is not None \
                and self._work.is_completed():
            self._resolve_work()
        return self._value is not _PENDING or self._exception is not None

    def _resolve_work(self) -> None:
        try:
            self._work.wait()
            result = self._work.result()
        except Exception as e:  # noqa: BLE001  (a failed operation, e.g. an RPC: raised to whoever waits)
            self.set_exception(e)
        else:
            self._finish(result)

    def wait(self) -> Any:
        """Block until the value is available and return it (re-raises the exception of a failed callback)."""
        if self._value is _PENDING and self._exception is None:
            if self._work is not None:
                self._resolve_work()
            elif self._parent is not None:
                parent = self._parent
                try:
                    parent.wait()
                    result = self._callback(parent)
                except Exception as e:  # noqa: BLE001  kept, raised to whoever waits, as PyTorch does
                    error = RuntimeError(f"the callback given to Future.then() raised {type(e).__name__}: {e}")
                    error.__cause__ = e
                    self.set_exception(error)
                else:
                    self._finish(result)
            else:
                raise RuntimeError("Future.wait(): nothing will complete this future (no set_result and no "
                                   "operation behind it)")
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self) -> Any:
        """The value (waiting for it if needed)."""
        return self.wait()

    def then(self, callback: Callable[[Future], Any]) -> Future:
        """A future for ``callback(self)``, computed once this one is complete."""
        child = Future()
        child._parent, child._callback = self, callback
        return child

    def add_done_callback(self, callback: Callable[[Future], None]) -> None:
        """Run ``callback(self)`` once this future is complete (at once if it already is)."""
        if self.done():
            callback(self)
        else:
            self._done_callbacks.append(callback)

    def set_result(self, result: Any) -> None:
        if self.done():
            raise RuntimeError("Future.set_result: this future is already completed")
        self._finish(result)

    def set_exception(self, result: BaseException) -> None:
        self._exception = result
        self._run_done_callbacks()

    def _finish(self, result: Any) -> None:
        self._value = result
        self._run_done_callbacks()

    def _run_done_callbacks(self) -> None:
        callbacks, self._done_callbacks = self._done_callbacks, []
        for cb in callbacks:
            cb(self)


def collect_all(futures: list[Future]) -> Future:
    """A future whose value is the list of ``futures``, once all are complete."""
    out = Future()
    out._parent, out._callback = _AllOf(futures), lambda _: list(futures)
    return out


def wait_all(futures: list[Future]) -> list[Any]:
    """Wait for every future, in order, and return their values."""
    return [f.wait() for f in futures]


class _AllOf(Future):
    def __init__(self, futures: list[Future]) -> None:
        super().__init__()
        self._futures = futures

    def wait(self) -> Any:
        return wait_all(self._futures)


__all__ = ["Future", "collect_all", "wait_all"]
