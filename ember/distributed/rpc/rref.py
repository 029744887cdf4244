"""``RRef``: a reference to a value that lives on one worker (its owner), usable from any worker.

``rpc.remote(to, func)`` returns at once an RRef to ``func``'s result on ``to``; ``RRef(value)`` makes one owned
here. The owner keeps the value in its agent (``Agent.owned``); other workers read it with ``to_here()`` or call
its methods there through ``rref.rpc_sync().method(...)``, ``rpc_async()`` and ``remote()``. An RRef passed as an
argument of a call (or returned) travels as (owner, id) and refers to the same value on the other side.

Difference from PyTorch: an owner keeps every value it owns until ``rpc.shutdown()``; PyTorch counts the RRefs
alive on every worker and frees a value when the last one is deleted.
"""

from __future__ import annotations

import itertools
from typing import Any, Generic, TypeVar

from ...futures import Future
from . import api
from .constants import UNSET_RPC_TIMEOUT

T = TypeVar("T")
_local_ids = itertools.count()


def _unique_id(worker_id: int) -> tuple[int, int]:
    return worker_id, next(_local_ids)


class RRef(Generic[T]):
    """A remote reference (``torch.distributed.rpc.RRef``); ``RRef(value)`` owns ``value`` on this worker."""

    def __init__(self, value: Any = None, type_hint: type | None = None) -> None:
        agent = api.current_agent()
        self._owner = agent.id
        self._id = _unique_id(agent.id)
        self._created = None  # the remote() call that makes the value, on a user RRef made by remote()
        agent.slot(self._id).set_result(value)

    @classmethod
    def _of(cls, owner: int, rref_id: tuple[int, int], created=None) -> RRef:
        rref = cls.__new__(cls)
        rref._owner, rref._id, rref._created = owner, rref_id, created
        return rref

    def __reduce__(self):
        return RRef._of, (self._owner, self._id)

    def is_owner(self) -> bool:
        return self._owner == api.current_agent().id

    def owner(self):
        """The owner's ``WorkerInfo``."""
        return api.current_agent().workers[self._owner]

    def owner_name(self) -> str:
        return self.owner().name

    def confirmed_by_owner(self) -> bool:
        return self._created is None or self._created.is_completed()

    def local_value(self) -> T:
        """The value, on its owner (waits for a ``remote()`` call still making it; raises its exception)."""
        if not self.is_owner():
            raise RuntimeError(f"For {self!r}, can't call localValue() on user {api.current_agent().info}. "
                               f"Call it on owner {self.owner()}")
        return api.current_agent().slot(self._id).result()

    def to_here(self, timeout: float = UNSET_RPC_TIMEOUT) -> T:
        """A copy of the value (the value itself on the owner); the exception of a ``remote()`` call that failed."""
        if self.is_owner():
            return self.local_value()
        return api.rpc_sync(self._owner, _value_of, args=(self,), timeout=timeout)

    def _get_future(self):
        """The future of the ``remote()`` call that made this RRef (None for one made by ``RRef(value)``)."""
        return None if self._created is None else Future._of_work(self._created)

    def rpc_sync(self, timeout: float = UNSET_RPC_TIMEOUT) -> _Proxy:
        """``rref.rpc_sync().method(*args)`` runs ``value.method(*args)`` on the owner and returns its result."""
        return _Proxy(self, api.rpc_sync, timeout)

    def rpc_async(self, timeout: float = UNSET_RPC_TIMEOUT) -> _Proxy:
        """As ``rpc_sync()``, returning a Future."""
        return _Proxy(self, api.rpc_async, timeout)

    def remote(self, timeout: float = UNSET_RPC_TIMEOUT) -> _Proxy:
        """As ``rpc_sync()``, returning an RRef to the result (kept on the owner)."""
        return _Proxy(self, remote, timeout)

    def __repr__(self) -> str:
        kind = "OwnerRRef" if self.is_owner() else "UserRRef"
        return f"{kind}(RRefId = GloballyUniqueId(created_on={self._id[0]}, local_id={self._id[1]}))"


class _Proxy:
    """``rref.rpc_sync()`` and friends: each attribute is a method of the referenced value, called on its owner."""

    def __init__(self, rref: RRef, invoke, timeout: float) -> None:
        self._rref, self._invoke, self._timeout = rref, invoke, timeout

    def __getattr__(self, name: str):
        def method(*args, **kwargs):
            return self._invoke(self._rref._owner, _call_method, args=(name, self._rref, *args), kwargs=kwargs,
                                timeout=self._timeout)

        return method


def _value_of(rref: RRef):
    return rref.local_value()


def _call_method(name: str, rref: RRef, *args, **kwargs):
    return getattr(rref.local_value(), name)(*args, **kwargs)


def remote(to, func, args: tuple | None = None, kwargs: dict | None = None,
           timeout: float = UNSET_RPC_TIMEOUT) -> RRef:
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return at once an ``RRef`` to the result, kept there.

    Errors of the call surface where the value is used (``to_here()``, ``local_value()``) and through
    ``rref._get_future()``.
    """
    agent, dst, args, kwargs, timeout = api.prepare(to, func, args, kwargs, timeout)
    rref_id = _unique_id(agent.id)
    call = agent.call(dst, func, args, kwargs, timeout, rref_id=rref_id)
    return RRef._of(dst, rref_id, call)
