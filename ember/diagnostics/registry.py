"""What diagnostics remember about each parameter and module, dropped when the object is freed.

Tensors have no ``__dict__`` and ``==`` compares them elementwise, so a ``WeakKeyDictionary``
cannot hold them. Records live in plain dicts keyed by ``id(obj)``; a weak reference whose
callback removes the entry runs when the object is freed, before its id can be reused.
"""

from __future__ import annotations

import weakref


class Record:
    """One parameter's bookkeeping.

    ``owner``/``attr``: the module (weak) and attribute it was registered under (for names).
    ``version``: the parameter's version when backward last accumulated into its ``.grad`` (-1: no backward did
    since the last ``step()``).
    ``fresh``: backward accumulated into it since the last ``step()`` / ``zero_grad()``.
    ``held_vc``/``held_version``/``held_by_step``: the ``.grad`` (its version counter and version)
    that the last ``step()`` applied or ``zero_grad()`` zeroed; the same counter at the same
    version means the gradient has not changed since.
    ``tainted``: a backward added into gradients the last step had applied, and nothing cleared them
    since: the next ``step()`` that updates this parameter would apply them again.
    ``scaled_after_step``: the gradient the last step applied was since clipped in place (a new version of the
    same counter): still that step's gradient, not cleared.
    ``perturbed``: the last backward into ``.grad`` saw other values of the parameter than the backward before it,
    with no ``step()`` between: the parameter was moved to take a gradient elsewhere (sharpness-aware
    minimisation's ascent step, adversarial weight perturbation), so changing it after that backward is moving it
    back, not a mistake.
    ``reported``: bit mask of the warning kinds already shown for this parameter.
    ``watched``: the diagnostics' gradient hook is registered on the parameter.
    """

    __slots__ = ("ref", "owner", "attr", "version", "fresh", "held_vc", "held_version", "held_by_step", "tainted",
                 "scaled_after_step", "perturbed", "reported", "watched")

    def __init__(self, param) -> None:
        key = id(param)
        # (the callback holds the dict itself: a parameter freed at interpreter exit, after this module's globals
        # were cleared to None, would otherwise print an ignored AttributeError)
        self.ref = weakref.ref(param, lambda _, key=key, records=_records: records.pop(key, None))
        self.owner = None
        self.attr = ""
        self.reset()
        self.reported = 0
        self.watched = False
        _records[key] = self

    def reset(self) -> None:
        """Forget what training-loop checks recorded (names and shown warnings stay)."""
        self.version = -1
        self.fresh = False
        self.held_vc = None
        self.held_version = -1
        self.held_by_step = False
        self.tainted = False
        self.scaled_after_step = False
        self.perturbed = False

    def holds(self, grad) -> bool:
        """Whether ``grad`` is unchanged since ``step()`` applied it or ``zero_grad()`` zeroed it."""
        return grad._vc is self.held_vc and grad._vc[0] == self.held_version


_records: dict[int, Record] = {}
# id(module) -> (weak child, weak parent, attribute name in the parent)
_parents: dict[int, tuple] = {}


def record(param) -> Record:
    """The record of ``param``, created on first use."""
    rec = _records.get(id(param))
    return Record(param) if rec is None else rec


def all_records():
    return list(_records.values())


def set_parent(child, parent, attr: str) -> None:
    key = id(child)
    _parents[key] = (weakref.ref(child, lambda _, key=key, parents=_parents: parents.pop(key, None)),
                     weakref.ref(parent), attr)


def parent_of(module) -> tuple | None:
    """(parent module, attribute) under which ``module`` was last registered, if the parent lives."""
    entry = _parents.get(id(module))
    if entry is None or entry[0]() is not module:
        return None
    parent = entry[1]()
    return None if parent is None else (parent, entry[2])
