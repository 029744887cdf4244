"""The signatures ember's wrappers show to ``inspect.signature``, computed when first read.

ember wraps most of its public functions and Tensor methods once, as they are defined: PyTorch's keyword names
(``ember._arg_aliases``), ``out=`` (``ember._out``), the factories' ``layout=``/``pin_memory=``
(``ember._creation``), the top-level in-place spellings (``ember._inplace_functions``). Each wrapper accepts more
than the function it wraps and says so through ``__signature__`` (``help()``, IDEs and ``inspect.signature`` list
the extra keywords). Building those signatures as the wrappers are made cost ``import ember`` a tenth of its time,
for something a program rarely reads; ``on_first_read`` makes each when it is first read, then keeps it.

What ``inspect.signature`` returns is an ``inspect.Signature`` in every respect but its class, a subclass whose
parameters and return annotation are made on first access: it compares, hashes, prints, binds, replaces and
pickles as the signature it stands for.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import FunctionType

Kinds = dict[str, inspect._ParameterKind]  # a signature's parameter names, in order, and their kinds


class _OnFirstRead(inspect.Signature):
    __slots__ = ("_make", "_made", "_kinds")

    def __init__(self, make: Callable[[], inspect.Signature],  # (Signature's own slots stay unset)
                 kinds: Callable[[], Kinds] | None = None) -> None:
        self._make = make
        self._made: inspect.Signature | None = None
        self._kinds = kinds  # the names and kinds alone, cheaper than make() (None: make's)

    def _signature(self) -> inspect.Signature:
        made = self._made
        if made is None:  # (two threads may both make it: the same signature, either kept)
            made = self._made = self._make()
        return made

    # Signature's methods read these two; here they are the made signature's.
    @property
    def _parameters(self):  # type: ignore[override]
        return self._signature().parameters

    @property
    def _return_annotation(self):  # type: ignore[override]
        return self._signature().return_annotation

    def replace(self, **changes) -> inspect.Signature:  # type: ignore[override]
        return self._signature().replace(**changes)

    def __repr__(self) -> str:
        return repr(self._signature())

    def __reduce__(self):
        return self._signature().__reduce__()


def on_first_read(make: Callable[[], inspect.Signature], kinds: Callable[[], Kinds] | None = None) -> inspect.Signature:
    """A signature that is ``make()``, called when the signature is first read (for a wrapper's
    ``__signature__``); ``kinds()``, when given, is what ``parameter_kinds`` reads of it without making it."""
    return _OnFirstRead(make, kinds)


_SIGNATURE_ATTRIBUTES = frozenset({"__signature__", "_partialmethod"})


def parameter_kinds(fn: Callable) -> Kinds:
    """``{name: p.kind for name, p in inspect.signature(fn).parameters.items()}``, without building signatures where
    it need not: read from the code object of a plain Python function (through ``functools.wraps``' ``__wrapped__``
    chain, as ``inspect.signature`` follows it) and from a signature of ``on_first_read`` that says its kinds.
    Which of ember's ~1000 functions and methods need the keyword-name wrapper is decided from these at import."""
    obj, seen = fn, {id(fn)}
    while type(obj) is FunctionType and "__wrapped__" in obj.__dict__ and "__signature__" not in obj.__dict__:
        obj = obj.__wrapped__
        if id(obj) in seen:  # (a chain that comes back: inspect.signature's ValueError)
            return {name: p.kind for name, p in inspect.signature(fn).parameters.items()}
        seen.add(id(obj))
    if type(obj) is FunctionType:
        signature = obj.__dict__.get("__signature__")
        if isinstance(signature, _OnFirstRead) and signature._kinds is not None and signature._made is None:
            return signature._kinds()
        if _SIGNATURE_ATTRIBUTES.isdisjoint(obj.__dict__):
            code = obj.__code__
            names, positional, keyword_only = code.co_varnames, code.co_argcount, code.co_kwonlyargcount
            kind = inspect.Parameter
            kinds = {name: kind.POSITIONAL_ONLY if i < code.co_posonlyargcount else kind.POSITIONAL_OR_KEYWORD
                     for i, name in enumerate(names[:positional])}
            rest = positional + keyword_only
            if code.co_flags & inspect.CO_VARARGS:
                kinds[names[rest]] = kind.VAR_POSITIONAL
                rest += 1
            kinds.update(dict.fromkeys(names[positional:positional + keyword_only], kind.KEYWORD_ONLY))
            if code.co_flags & inspect.CO_VARKEYWORDS:
                kinds[names[rest]] = kind.VAR_KEYWORD
            return kinds
    return {name: p.kind for name, p in inspect.signature(fn).parameters.items()}


def with_keywords(fn: Callable, keywords: list[tuple[str, object]]) -> inspect.Signature:
    """``fn``'s signature with the keyword-only parameters ``keywords`` ((name, default) pairs) added before its
    ``**kwargs``: what a wrapper taking those keywords as well accepts. Made when first read."""

    def make() -> inspect.Signature:
        params = list(inspect.signature(fn).parameters.values())
        extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default) for name, default in keywords]
        return inspect.Signature([p for p in params if p.kind is not p.VAR_KEYWORD] + extra
                                 + [p for p in params if p.kind is p.VAR_KEYWORD])

    def kinds() -> Kinds:
        own = parameter_kinds(fn)
        listed = {name: kind for name, kind in own.items() if kind is not inspect.Parameter.VAR_KEYWORD}
        listed.update(dict.fromkeys((name for name, _ in keywords), inspect.Parameter.KEYWORD_ONLY))
        listed.update((name, kind) for name, kind in own.items() if kind is inspect.Parameter.VAR_KEYWORD)
        return listed

    return _OnFirstRead(make, kinds)
