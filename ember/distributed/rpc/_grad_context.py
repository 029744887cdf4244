"""Distributed autograd's bookkeeping: one context per ``dist_autograd.context()``, on every worker it reaches.

A tensor that requires grad and is sent by RPC inside a context is recorded on the sending worker under a send id
(``record_send``: it keeps the tensor and so the graph that made it). The receiving worker gets a new tensor whose
``grad_fn`` is a ``RecvRpcBackward`` holding (sender, send id): the end of its local graph. ``dist_autograd.backward``
runs the local graph down to the leaves and to those nodes, then sends each node's gradient to its sender, which
continues from the recorded tensor (``ember/distributed/autograd``). Leaf gradients collect in the context, never in
``.grad``, as PyTorch's.

The current context is per thread; a call served for another worker runs in the caller's context (its id travels
with the message), so replies and nested calls are recorded there too.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..._tensor import Tensor
from ...autograd.graph import Node


class RecvRpcBackward(Node):
    """Where a received tensor's gradient leaves this worker: to ``sender``'s tensor ``send_id``."""

    def __init__(self, sender: int, send_id: int) -> None:
        self.saved = ()
        self.next_edges = ()
        self.input_shapes = ()
        self.needs_input_grad = ()
        self._saved_versions = ()
        self.seq = sys.maxsize  # no inputs: nothing depends on when it runs
        self.sender = sender
        self.send_id = send_id

    def name(self) -> str:
        return "RecvRpcBackward"

    def backward(self, grad):
        return ()  # the gradient is captured by the distributed backward and sent on


class DistAutogradContext:
    """One distributed backward's state on one worker (``context_id`` is the same on every worker)."""

    def __init__(self, context_id: int) -> None:
        self.id = context_id
        self.grads: dict[Tensor, Tensor] = {}  # leaf -> its gradient summed over this context's backward passes
        self.sends: dict[int, Tensor] = {}  # send id -> the tensor sent (the backward pass continues from it)
        self.workers: set[int] = set()  # the workers messages of this context went to or came from
        self.lock = threading.Lock()
        self._send_ids = itertools.count()

    def record_send(self, tensor: Tensor, dst: int) -> int:
        with self.lock:
            send_id = next(self._send_ids)
            self.sends[send_id] = tensor
            self.workers.add(dst)
        return send_id

    def accumulate(self, leaf: Tensor, grad) -> None:
        with self.lock:
            old = self.grads.get(leaf)
            self.grads[leaf] = Tensor._make(grad.copy() if old is None else old._data + grad)


_contexts: dict[int, DistAutogradContext] = {}
_lock = threading.Lock()
_counter = itertools.count()


class _Current(threading.local):
    id: int | None = None


_current = _Current()


def current() -> DistAutogradContext | None:
    """This thread's context, or None outside ``dist_autograd.context()``."""
    return None if _current.id is None else _contexts.get(_current.id)


def current_id() -> int | None:
    return _current.id


def new_id(worker_id: int) -> int:
    """A context id unique in the job: the worker's id in the high 16 bits, as PyTorch's."""
    return (worker_id << 48) + next(_counter)


def get_or_create(context_id: int) -> DistAutogradContext:
    with _lock:
        ctx = _contexts.get(context_id)
        if ctx is None:
            ctx = _contexts[context_id] = DistAutogradContext(context_id)
        return ctx


def retrieve(context_id: int) -> DistAutogradContext:
    ctx = _contexts.get(context_id)
    if ctx is None:
        raise RuntimeError(f"Could not find autograd context with id: {context_id}")
    return ctx


def release(context_id: int) -> DistAutogradContext | None:
    """Forget the context (its recorded graphs and gradients); the context, or None if it was not known here."""
    with _lock:
        return _contexts.pop(context_id, None)


def clear() -> None:
    with _lock:
        _contexts.clear()


@contextmanager
def entered(context_id: int | None) -> Iterator[DistAutogradContext | None]:
    """Make ``context_id`` (None: no context) this thread's current context for the block."""
    prev = _current.id
    _current.id = context_id
    try:
        yield None if context_id is None else get_or_create(context_id)
    finally:
        _current.id = prev


def received(tensor: Tensor, context_id: int, sender: int, send_id: int) -> Tensor:
    """A tensor that required grad, sent in a context: its values, with a ``RecvRpcBackward`` leading back."""
    ctx = get_or_create(context_id)
    with ctx.lock:
        ctx.workers.add(sender)
    return Tensor._make(tensor._data, grad_fn=RecvRpcBackward(sender, send_id))
