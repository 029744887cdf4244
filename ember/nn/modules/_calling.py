"""Calling a module: its forward and backward hooks (PyTorch's id-keyed dicts, the process-wide ones first), their
registration, and the errors for an argument that is not a tensor.

``Module.__call__`` (module.py) runs ``forward`` directly when no hook is registered anywhere; otherwise
``HooksMixin._call_with_hooks`` runs, in PyTorch's order: forward pre-hooks (global, then the module's), the backward
hooks' identity node around the arguments, ``forward``, forward hooks (global, then the module's), the identity node
around the output. The forward hooks registered ``always_call=True`` also run when any of that raises.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..._backend import xp
from ..._tensor import Tensor
from ..._warnings import warn_in
from ...utils import hooks as _hooks
from ...utils.hooks import RemovableHandle
from ._backward_hook import BackwardHook, warn_non_full


def add_hook(hooks: OrderedDict, hook: Callable, prepend: bool, flags: tuple = ()) -> RemovableHandle:
    """File ``hook`` in ``hooks`` under a new handle's id (first with ``prepend``); ``flags``: (dict, set?) pairs,
    the id added to each dict whose flag is true (with_kwargs, always_call), removed with the hook."""
    handle = RemovableHandle(hooks, extra_dict=[d for d, _ in flags] or None)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    for d, on in flags:
        if on:
            d[handle.id] = True
    return handle


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """``Module.register_forward_pre_hook`` for every module: ``hook(module, args)``, called before each module's
    own pre-hooks; may return new args."""
    return add_hook(_hooks.module_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``Module.register_forward_hook`` for every module, called before each module's own forward hooks."""
    return add_hook(_hooks.module_forward_hooks, hook, False,
                            ((_hooks.module_forward_hooks_with_kwargs, with_kwargs),
                             (_hooks.module_forward_hooks_always_called, always_call)))


_global_is_full_backward_hook: bool | None = None  # which kind of global backward hook was registered, once one was


def _global_backward_kind(full: bool) -> None:
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """``Module.register_full_backward_hook`` for every module: called before each module's own hooks."""
    _global_backward_kind(True)
    return RemovableHandle(_hooks.module_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """``Module.register_full_backward_pre_hook`` for every module: called before each module's own pre-hooks."""
    return RemovableHandle(_hooks.module_backward_pre_hooks, hook)


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """The deprecated ``Module.register_backward_hook`` for every module (see there)."""
    _global_backward_kind(False)
    return RemovableHandle(_hooks.module_backward_hooks, hook)


class _NotATensorError(TypeError, AttributeError):
    """A module given a NumPy array or a list: a TypeError, as PyTorch's ops refuse such an argument, and an
    AttributeError, as PyTorch's modules that read ``input.dim()`` first raise."""


def _refuse_non_tensor_input(module, args: tuple, error: AttributeError) -> None:
    """Raise, where a module's forward met a NumPy array or a list it was given where it reads a tensor's attribute,
    the error naming the module and the conversion (nothing otherwise: ``error`` propagates). Not chained to
    ``error``: the array's missing ``_data`` is ember's internals, no help to the caller."""
    obj = getattr(error, "obj", None)
    position = next((i for i, a in enumerate(args) if a is obj), None)
    if position is None or not isinstance(obj, (xp.ndarray, list, tuple)):
        return
    kind = "numpy.ndarray" if isinstance(obj, xp.ndarray) else type(obj).__name__
    raise _NotATensorError(f"{type(module).__name__}: argument {position + 1} of the call must be Tensor, not "
                           f"{kind}; convert it first with ember.from_numpy(array) or ember.as_tensor(data)") from None


class _HookedCall:
    """One module call with hooks, as far as it got: the arguments as the pre-hooks (and backward hooks) left them,
    the output so far and the ids of the ``always_call`` forward hooks run, for those hooks if the call raises."""

    __slots__ = ("args", "kwargs", "output", "called")

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.args = args
        self.kwargs = kwargs
        self.output: Any = None
        self.called: set = set()


def upgrade_hook_state(d: dict) -> None:
    """A module's ``__dict__`` just unpickled: hooks an earlier ember kept in lists become dicts (with the flag
    dicts it lacks), and handles made from now on take ids past the unpickled ones."""
    for name in ("_forward_pre_hooks", "_forward_hooks"):
        if isinstance(d.get(name), list):
            entries, d[name] = d[name], OrderedDict()
            flags = d.setdefault(name + "_with_kwargs", OrderedDict())
            for hook, with_kwargs in entries:
                handle = add_hook(d[name], hook, False)
                if with_kwargs:
                    flags[handle.id] = True
    for name in ("_backward_pre_hooks", "_backward_hooks"):
        if isinstance(d.get(name), list):
            entries, d[name] = d[name], OrderedDict()
            for hook in entries:
                add_hook(d[name], hook, False)
    for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                 "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_backward_pre_hooks",
                 "_backward_hooks"):
        d.setdefault(name, OrderedDict())
    # ids filed in another process: handles made from now on take later ones (a new hook under an unpickled
    # hook's id would replace it)
    ids = [i for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
           for i in d[name] if isinstance(i, int)]
    if ids:
        RemovableHandle.next_id = max(RemovableHandle.next_id, max(ids) + 1)


class HooksMixin:
    """``Module``'s hook methods: registration, and a call with hooks (see the module docstring)."""

    # (no __slots__: Module's layout stays a plain class's, which a class made at run time from Module and another
    # plain class, as fully_shard's FSDP<Name>, needs for ``__class__`` assignment)

    def _call_with_hooks(self, call: _HookedCall):
        args, kwargs = call.args, call.kwargs
        global_pre = _hooks.module_forward_pre_hooks
        for hook_id, hook in (*global_pre.items(), *self._forward_pre_hooks.items()) if global_pre \
                else tuple(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got {result}."
                        )
                    args, kwargs = call.args, call.kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = call.args = result if isinstance(result, tuple) else (result,)
        backward_hook: BackwardHook | None = None
        legacy: list = []
        if self._backward_hooks or self._backward_pre_hooks or _hooks.module_backward_hooks \
                or _hooks.module_backward_pre_hooks:
            full, legacy = self._backward_hooks_by_kind()
            pre = _hooks.module_backward_pre_hooks + list(self._backward_pre_hooks.values())
            if full or pre:  # (the hooks as they are now: removing one later does not change this call's)
                backward_hook = BackwardHook(self, full, pre)
                args = call.args = backward_hook.setup_input_hook(args)
        try:
            output = call.output = self.forward(*args, **kwargs)
        except AttributeError as e:
            _refuse_non_tensor_input(self, args, e)
            raise
        for hook_id, hook, with_kwargs in self._forward_hooks_now():
            if hook_id in self._forward_hooks_always_called or hook_id in _hooks.module_forward_hooks_always_called:
                call.called.add(hook_id)
            result = hook(self, args, kwargs, output) if with_kwargs else hook(self, args, output)
            if result is not None:
                output = call.output = result
        if backward_hook is not None:
            if not isinstance(output, (Tensor, tuple)):
                warn_in("torch.nn.modules.module", "For backward hooks to be called, module output should be a "
                        f"Tensor or a tuple of Tensors but received {type(output)}")
            output = backward_hook.setup_output_hook(output)
        if legacy:
            self._attach_legacy_hooks(legacy, args, output)
        return output

    def _forward_hooks_now(self) -> list:
        """(id, hook, with_kwargs) of every forward hook to run now: the global ones first, as PyTorch."""
        return [*((i, h, i in _hooks.module_forward_hooks_with_kwargs) for i, h in _hooks.module_forward_hooks.items()),
                *((i, h, i in self._forward_hooks_with_kwargs) for i, h in self._forward_hooks.items())]

    def _run_always_called_hooks(self, call: _HookedCall) -> None:
        """After forward (or a hook) raised: the forward hooks registered with ``always_call=True`` that have not run,
        as PyTorch: with the arguments as the pre-hooks left them and the output so far (None when forward raised);
        an exception in one is a warning (the first error propagates)."""
        always = (_hooks.module_forward_hooks_always_called, self._forward_hooks_always_called)
        args, kwargs, output = call.args, call.kwargs, call.output
        for hook_id, hook, with_kwargs in self._forward_hooks_now():
            if hook_id in call.called or not any(hook_id in a for a in always):
                continue
            try:
                result = hook(self, args, kwargs, output) if with_kwargs else hook(self, args, output)
                if result is not None:
                    output = result
            except Exception as e:  # noqa: BLE001 - the forward's error is the one raised
                kind = "global module" if hook_id in _hooks.module_forward_hooks else "module"
                warn_in("torch.nn.modules.module", f"{kind} forward hook with ``always_call=True`` raised an exception "
                        f"that was silenced as another error was raised in forward: {e}")

    _add_hook = staticmethod(add_hook)

    def _backward_hooks_by_kind(self) -> tuple[list, list]:
        """(full backward hooks, deprecated ones) for a call: the global ones first, as PyTorch."""
        full: list = []
        legacy: list = []
        (full if _global_is_full_backward_hook else legacy).extend(_hooks.module_backward_hooks)
        (full if self._is_full_backward_hook else legacy).extend(self._backward_hooks.values())
        return full, legacy

    def _attach_legacy_hooks(self, hooks: list, args: tuple, output) -> None:
        """The deprecated hooks become post-hooks of the node that made the first tensor of the output."""
        var = output
        while not isinstance(var, Tensor):
            var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
        if var.grad_fn is None:
            return
        for hook in hooks:
            var.grad_fn.register_hook(functools.partial(hook, self))
        warn_non_full(args, output, var.grad_fn)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` once per backward through each call of this module.

        ``grad_input`` has one entry per positional argument of the call: the gradient w.r.t. it, or None (an
        argument that is not a tensor or does not require grad; keyword arguments are not seen); ``grad_output``
        one per output (one tensor or a tuple). A returned tuple of the same length replaces ``grad_input``.
        As PyTorch, the hooked call passes its tensor arguments and outputs through an identity node
        (``BackwardHookFunctionBackward``): modifying one of them in place while recording (an in-place ReLU
        right after, or first in, the module) is a RuntimeError; when no input requires grad the hook fires with
        the output gradients (grad_input all None) and warns.
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = True
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients w.r.t. this module's outputs are computed, before
        they flow into it; a returned tuple of the same length replaces ``grad_output`` (for the module and its
        full backward hooks)."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated (use ``register_full_backward_hook``): ``hook(module, grad_input, grad_output)`` with the
        gradients of the last op of forward (the node that made the output's first tensor): its inputs' and
        outputs' gradients, not necessarily the module's. A returned tuple replaces that op's input gradients.
        ember's ops are not always PyTorch's (its ``Linear`` is one op of input, weight and bias, PyTorch's an
        addmm of bias, input and the weight's transpose); PyTorch warns (FutureWarning) wherever that op's
        inputs are not the module's, and so does ember."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = False
        return self._add_hook(self._backward_hooks, hook, False)

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) before forward; may return new args (with
        kwargs: None or a tuple ``(new_args, new_kwargs)``). Filed in ``self._forward_pre_hooks`` under the handle's
        id, as PyTorch's."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend,
                              ((self._forward_pre_hooks_with_kwargs, with_kwargs),))

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (or with kwargs before output) after forward; may return a new output.
        ``always_call``: also called when forward (or a hook) raises, with the output so far (None when forward
        raised); an exception it raises then is a warning."""
        return self._add_hook(self._forward_hooks, hook, prepend,
                              ((self._forward_hooks_with_kwargs, with_kwargs),
                               (self._forward_hooks_always_called, always_call)))
