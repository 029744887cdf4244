"""Wrapping every op's forward and backward (each Node subclass that defines them), for the profiling scripts."""

from ember.autograd.graph import Node


def wrap_node_phases(wrap) -> None:
    """Replace ``forward``/``backward`` on every Node subclass defining them with ``wrap("Name.phase", fn)``."""
    seen, todo = set(), [Node]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    for cls in seen:
        for phase in ("forward", "backward"):
            if phase in cls.__dict__:
                setattr(cls, phase, wrap(f"{cls.__name__}.{phase}", cls.__dict__[phase]))
