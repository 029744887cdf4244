"""``RemovableHandle``: what every ``register_*hook`` returns."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_UNSET = object()


def _ref(d: Any) -> Callable[[], Any]:
    """A weak reference to ``d`` where it takes one (an OrderedDict), else a strong one (a plain dict)."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d


class RemovableHandle:
    """What every ``register_*hook`` returns: ``remove()`` (or leaving a ``with`` block) unregisters the hook.

    PyTorch's form: ``RemovableHandle(hooks_dict, *, extra_dict=None)`` takes the next ``id``; the caller files its
    hook as ``hooks_dict[handle.id]`` (a module's ``_forward_hooks`` and the like are such dicts), and ``remove()``
    deletes that key from ``hooks_dict`` and from each ``extra_dict`` (one dict or a list of them: flags such as
    "called with kwargs"). The handle refers to the dicts weakly, as PyTorch's, where they allow it (OrderedDicts).
    ember's own hook lists (a tensor's, a node's, an optimizer's) use ``RemovableHandle(hooks_list, hook)``, which
    appends ``hook`` and removes that entry. Either way a second ``remove()`` does nothing.
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks: Any, hook: Any = _UNSET, *, extra_dict: Any = None) -> None:
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(hooks, list):
            if hook is _UNSET:
                raise TypeError("RemovableHandle(list) needs the hook to add to it")
            self._hooks: list | None = hooks
            self._hook = hook
            hooks.append(hook)
            return
        if hook is not _UNSET:
            raise TypeError("RemovableHandle(hooks_dict) takes no hook: file it as hooks_dict[handle.id]")
        self._hooks = None
        self.hooks_dict_ref = _ref(hooks)
        extras = [] if extra_dict is None else extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(_ref(d) for d in extras)

    def remove(self) -> None:
        """Remove this registration (once: a second call does nothing, as PyTorch's, even when the same function was
        registered again through another handle), and let go of the hook."""
        if self._hooks is None:  # PyTorch's form (or a list entry already removed)
            for ref in (getattr(self, "hooks_dict_ref", None), *getattr(self, "extra_dict_ref", ())):
                d = ref() if ref is not None else None
                if d is not None:
                    d.pop(self.id, None)
            return
        hooks, hook, self._hooks, self._hook = self._hooks, self._hook, None, None
        for i, h in enumerate(hooks):
            if h is hook:
                del hooks[i]
                return
        try:  # a list that wraps its hooks (an equal entry, not the same object)
            hooks.remove(hook)
        except ValueError:
            pass

    def __getstate__(self) -> dict:
        """Pickled (or deep-copied) with the dicts it removes from, as PyTorch's: a module copied together with
        its handle (``copy.deepcopy((module, handle))``) gets a handle that removes the copy's hook."""
        state = dict(self.__dict__)
        if "hooks_dict_ref" in state:
            state["hooks_dict_ref"] = self.hooks_dict_ref()
            state["extra_dict_ref"] = tuple(ref() for ref in self.extra_dict_ref)
        return state

    def __setstate__(self, state: dict) -> None:
        if "hooks_dict_ref" in state:
            hooks = state["hooks_dict_ref"]
            # a dict already gone when pickled: a dead reference, as PyTorch's
            state["hooks_dict_ref"] = _ref(OrderedDict() if hooks is None else hooks)
            state["extra_dict_ref"] = tuple(_ref(d) for d in state["extra_dict_ref"] if d is not None)
        self.__dict__.update(state)
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)  # new handles do not reuse its id

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


# ----------------------------------------------------------------------------- process-wide hooks
# Kept here, not in the modules that call them, so they can be registered before ``ember.nn`` or
# ``ember.optim`` is imported (both load lazily). The public registration functions are PyTorch's:
# ``ember.optim.optimizer.register_optimizer_step_pre_hook`` / ``..._post_hook`` and
# ``ember.nn.modules.module.register_module_parameter_registration_hook`` / ``..._module_registration_hook``.
optimizer_step_pre_hooks: list = []   # hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)
optimizer_step_post_hooks: list = []  # hook(optimizer, args, kwargs)
module_parameter_registration_hooks: list = []  # hook(module, name, param) -> None | new param
module_module_registration_hooks: list = []  # hook(module, name, submodule) -> None | new submodule
# ``register_module_full_backward_hook`` (or the deprecated ``register_module_backward_hook``; one kind only) and
# ``register_module_full_backward_pre_hook``: hook(module, grad_input, grad_output) / hook(module, grad_output)
module_backward_hooks: list = []
module_backward_pre_hooks: list = []
# ``register_module_forward_pre_hook`` / ``register_module_forward_hook``: as PyTorch's globals, dicts from a
# handle's id to hook(module, args) / hook(module, args, output) (or with kwargs before output), called before each
# module's own; the extra dicts hold the ids registered ``with_kwargs`` and ``always_call``.
module_forward_pre_hooks: OrderedDict = OrderedDict()
module_forward_hooks: OrderedDict = OrderedDict()
module_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
module_forward_hooks_always_called: OrderedDict = OrderedDict()
# ember extension (PyTorch has no equivalent), used by the training-loop diagnostics:
# hook(what, params, limit) where ``what`` names a function that edits gradients in place:
# "zero_grad" calls it after clearing the ``.grad`` of ``params`` (limit None); "clip_grad_norm_" and
# "clip_grad_value_" call it before clipping them (limit: max_norm or clip_value).
grad_edit_hooks: list = []


def run_grad_edit_hooks(what: str, params, limit=None) -> None:
    """Call every ``grad_edit_hooks`` entry (see above)."""
    for hook in tuple(grad_edit_hooks):
        hook(what, params, limit)


# ember extension: optimizer steps ember takes on the program's behalf (a joined rank's ZeroRedundancyOptimizer step
# under ``Join`` reapplies its last gradients, as PyTorch's join hook does, by design). Hooks that check the
# program's own steps (the training-loop diagnostics) ask ``stepping_on_programs_behalf()`` and leave those alone.
_steps_on_programs_behalf = 0


@contextmanager
def step_on_programs_behalf() -> Iterator[None]:
    """The optimizer steps inside the block are ember's, taken for the program (``stepping_on_programs_behalf``)."""
    global _steps_on_programs_behalf
    _steps_on_programs_behalf += 1
    try:
        yield
    finally:
        _steps_on_programs_behalf -= 1


def stepping_on_programs_behalf() -> bool:
    """Whether an optimizer step now running is one ember takes on the program's behalf (see above)."""
    return _steps_on_programs_behalf > 0
