"""``RemovableHandle``: what every ``register_*hook`` returns."""

from __future__ import annotations

from typing import Any


class RemovableHandle:
    """Removes its hook from the list it was added to when ``remove()`` is called."""

    def __init__(self, hooks: list, hook: Any) -> None:
        self._hooks: list | None = hooks
        self._hook = hook
        hooks.append(hook)

    def remove(self) -> None:
        """Remove this registration (once: a second call does nothing, as PyTorch's, even when the same function was
        registered again through another handle), and let go of the hook."""
        if self._hooks is None:
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
# ember extension (PyTorch has no equivalent), used by the training-loop diagnostics:
# hook(what, params, limit) where ``what`` names a function that edits gradients in place:
# "zero_grad" calls it after clearing the ``.grad`` of ``params`` (limit None); "clip_grad_norm_" and
# "clip_grad_value_" call it before clipping them (limit: max_norm or clip_value).
grad_edit_hooks: list = []


def run_grad_edit_hooks(what: str, params, limit=None) -> None:
    """Call every ``grad_edit_hooks`` entry (see above)."""
    for hook in tuple(grad_edit_hooks):
        hook(what, params, limit)
