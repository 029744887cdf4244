"""The ``Optimizer`` base: parameter groups, per-parameter state, zero_grad, state_dict.

Every built-in optimizer is a subclass that writes two short methods, side by
side (per parameter, as MLX's ``apply_single``):

    _init_state(p, state, group)      fill ``state`` the first time ``p`` is stepped
    _update(p, g, state, group)       one update of the array ``p`` from its gradient ``g``

and ``_reference_step`` calling a ``_single_tensor_*`` function, the plain statement of the
arithmetic written as PyTorch's (every built-in but LBFGS and SparseAdam).

``_update`` works on the raw arrays (``param._data``, ``param.grad._data``) and
changes them in place with ``out=`` ufuncs; its temporaries live in per-dtype
scratch buffers (``_scratch``) reused across parameters and steps, so an update
of a million-element parameter is a handful of NumPy calls and no allocation.
``step`` bumps each updated parameter's version counter, so a graph that saved
the old value notices.

Two implementations per built-in, as in PyTorch: ``foreach=False`` on a group runs the
readable per-parameter reference (``_single_tensor_*`` functions beside each optimizer, the
arithmetic of PyTorch's, called through ``_reference_step``); otherwise ``_update`` runs per
parameter, in place on the parameter's own array, split over the intra-op threads
(``ember/_parallel.py``) with scratch buffers reused across parameters and steps. Tests check
each against the other and against PyTorch. Parameters are never re-pointed to other memory:
an array taken from a parameter (``p.detach().numpy()``) keeps aliasing it, as in PyTorch.

Gradients: the optimizer gives its parameters a gradient store at construction when they do not
have one (``autograd/grad_store.py``; DistributedDataParallel, built first, gives its own), so
backward writes them end to end; the step reads each ``.grad`` where it lies.

Custom optimizers written the PyTorch way (override ``step`` and loop over
``self.param_groups``) work too.

Step hooks, as in PyTorch: ``register_step_pre_hook`` / ``register_step_post_hook`` on one
optimizer, ``register_optimizer_step_pre_hook`` / ``..._post_hook`` for every optimizer. Every
``step`` (an overriding subclass's too: ``__init__`` wraps the class's ``step`` once, as PyTorch's
does) runs them; the LR schedulers' step-order check and the training-loop diagnostics are such hooks.
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, TypeAlias

from .. import _trace, _warnings
from .._backend import quiet, xp
from .._dtype import float32, get_default_dtype, np_kind
from .._kernels import optim as compiled
from .._kernels._omp import region_threads
from .._kernels.policy import policy
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ..autograd.grad_store import build_stores, zero_grads
from ..utils import hooks as _hooks
from ..utils.hooks import RemovableHandle


class _RequiredParameter:
    """The default of an optimizer option every parameter group must give (``torch.optim.optimizer.required``:
    a custom optimizer's ``lr=required``); ``add_param_group`` refuses a group without it, as PyTorch's."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

# What an optimizer takes as ``params``: tensors, parameter groups (dicts), or (name, tensor) pairs.
ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]


StateDict: TypeAlias = dict[str, Any]  # what Optimizer.state_dict() returns, as PyTorch names its type

# The state-dict hooks' tables, by PyTorch's attribute names (library code such as DistributedShampoo reads them).
_STATE_DICT_HOOKS = ("_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (parameter groups,
            each with a ``'params'`` entry and any option overriding ``defaults``).
        defaults: the default value of every option, used where a group does not set it.

    Attributes: ``defaults``, ``param_groups`` (list of dicts), ``state`` (``defaultdict(dict)``
    keyed by parameter). ``state_dict()`` has PyTorch's layout.
    """

    # Whether every non-scalar state tensor has its parameter's shape (checked when a state dict is loaded).
    # False for optimizers whose state spans all parameters at once (LBFGS).
    _state_shaped_like_params = True
    # Sparse gradients (Embedding(sparse=True)): optimizers with a sparse path set this and write
    # ``_update_sparse``; the others raise PyTorch's error, ``_sparse_error`` when set.
    _sparse_grads = False
    _sparse_error: str | None = None
    # The options PyTorch's ``__setstate__`` gives, at these values, to a group of a state dict saved by an older
    # PyTorch that lacks them (``_fill_in_older_state``); ``_forced_options`` overwrite (AdamW's
    # ``decoupled_weight_decay``).
    _older_options: dict[str, Any] = {}
    _forced_options: dict[str, Any] = {}
    # What PyTorch's step asserts to be on a device with capturable kernels (CUDA and the like, never ember's CPU)
    # when a group is ``capturable``, and whether XLA is one of those devices for this optimizer
    _capturable_operands = "params and state_steps"
    _capturable_on_xla = True
    # Whether PyTorch's step refuses a ``state['step']`` that is not a tensor (a number written by code from before
    # PyTorch 1.12, A3C's SharedAdam: its "API has changed" RuntimeError); the optimizers whose step counts so.
    _tensor_steps_required = False

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {params.type()}"  # (PyTorch's legacy type name: torch.FloatTensor)
            )
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        self._scratch_bufs: dict = {}
        self._step_pre_hooks: list = []
        self._step_post_hooks: list = []
        self._init_state_dict_hooks()
        _patch_step_function(type(self))
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)
        self._build_grad_store([p for group in self.param_groups for p in group["params"]])
        self._constructed = True  # a later add_param_group builds its parameters' store itself

    def __repr__(self) -> str:
        out = f"{type(self).__name__} ("
        for i, group in enumerate(self.param_groups):
            options = "".join(f"    {k}: {group[k]}\n" for k in sorted(group) if k != "params")
            out += f"\nParameter Group {i}\n{options}"
        return out + ")"

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_scratch_bufs", {})
        self.__dict__.setdefault("_step_pre_hooks", [])
        self.__dict__.setdefault("_step_post_hooks", [])
        for name in _STATE_DICT_HOOKS:
            self.__dict__.setdefault(name, OrderedDict())
        if isinstance(self.__dict__.get("defaults"), dict):  # (PyTorch's base class does this for every optimizer)
            self.defaults.setdefault("differentiable", False)
        _fill_in_older_state(self)

    # ----------------------------------------------------------------- hooks
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; it may return ``(new_args, new_kwargs)``.

        As in PyTorch, ``args`` are the step's positional arguments *including the optimizer* first.

        Runs after the hooks registered for every optimizer (``register_optimizer_step_pre_hook``).
        """
        return RemovableHandle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step`` (before the global post hooks)."""
        return RemovableHandle(self._step_post_hooks, hook)

    def _init_state_dict_hooks(self) -> None:
        # PyTorch's attribute names: {handle id: hook}, in calling order
        for name in _STATE_DICT_HOOKS:
            setattr(self, name, OrderedDict())

    def _register_ordered(self, hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` at the start of each ``state_dict()`` (before the others if ``prepend``)."""
        return self._register_ordered(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` on the dict ``state_dict()`` built; a dict it returns replaces it."""
        return self._register_ordered(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` before ``load_state_dict`` reads its argument (a shallow copy of it,
        as in PyTorch); a dict it returns is loaded instead."""
        return self._register_ordered(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` after ``load_state_dict`` has loaded the state."""
        return self._register_ordered(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ----------------------------------------------------------------- groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing ones come from ``defaults``).

        Raises ValueError when a parameter is already in another group.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of "
                "tensors in sets will change between runs. Please use a list instead."
            )
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
            params = [p[1] for p in params]
        param_group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                from .. import typename  # (ember's top level imports optim: imported when refusing)

                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {typename(p)}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(set(params)) != len(params):
            _warnings.warn_in("torch._compile", "optimizer contains a parameter group with duplicate parameters; "
                              "in future, this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                              "more information")  # (PyTorch's add_param_group is wrapped there: once per process)
        for group in self.param_groups:  # (PyTorch's check, before the overlap's)
            if ("param_names" in param_group) != ("param_names" in group):
                raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                                 f"{'with' if 'param_names' in param_group else 'without'} names to the optimizer")
        seen = {p for group in self.param_groups for p in group["params"]}
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
        if self.__dict__.get("_constructed"):
            self._build_grad_store(params)

    def _build_grad_store(self, params: list) -> None:
        """Give ``params`` that have no gradient store one (in this order; DistributedDataParallel, built
        first, has built its own), so backward writes their gradients end to end (autograd/grad_store.py)."""
        free = [p for p in dict.fromkeys(params) if p._grad_slot is None and p._requires_grad
                and np_kind(p._data.dtype) == "f" and not p.is_sparse]
        if free:
            build_stores(free)

    # ----------------------------------------------------------------- gradients and steps
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: set ``.grad`` to None (default), or fill it with zeros in place.

        With ``set_to_none=True`` the next ``step`` skips parameters that get no new gradient;
        with zeros it updates them with a zero gradient (momentum and weight decay still act).
        """
        started = _trace.start()
        params = [p for group in self.param_groups for p in group["params"]]
        zero_grads(params, set_to_none)
        if _hooks.grad_edit_hooks:
            _hooks.run_grad_edit_hooks("zero_grad", params)
        _trace.finish(f"{type(self).__name__}.zero_grad", "optim", started)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; ``closure`` (run with grad enabled) re-evaluates
        the model and returns the loss, which ``step`` returns."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            sparse = [p for p in group["params"] if p._grad is not None and p._grad.is_sparse]
            if sparse:  # stepped on their own; the group's dense gradients as usual
                self._step_sparse(sparse, group)
            params = [p for p in group["params"] if p._grad is not None and not p._grad.is_sparse]
            if not params:
                continue
            states = [self._state_of(p, group) for p in params]
            if self._tensor_steps_required and not all(isinstance(s.get("step"), Tensor) for s in states):
                raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
            if group.get("capturable"):
                self._refuse_capturable(params, states)
            arrays, grads = [p._data for p in params], [p._grad._data for p in params]
            # complex parameters take the fast path, which updates their real views as PyTorch does
            reference = group.get("foreach") is False and not any(p.dtype.kind == "c" for p in arrays)
            if not (reference and self._reference_step(arrays, grads, states, group)):
                for p, g, state in zip(arrays, grads, states):
                    if p.dtype.kind == "c":
                        _update_as_real(self, p, g, state, group)
                    else:
                        self._update(p, g, state, group)
            for p, state in zip(params, states):
                if state:  # (a parameter whose update keeps nothing, SGD's without momentum, has no entry)
                    self.state.setdefault(p, state)
                p._bump_version()
        return loss

    def _refuse_capturable(self, params: list, states: list) -> None:
        """PyTorch's AssertionError for a ``capturable`` group stepped on the CPU, raised where PyTorch's step
        raises it: once the parameters' state is made and entered (a capturable step is CUDA-graph code)."""
        for p, state in zip(params, states):
            self.state.setdefault(p, state)
        devices = _get_capturable_supported_devices(self._capturable_on_xla)
        raise AssertionError(f"If capturable=True, {self._capturable_operands} must be on supported devices: "
                             f"{devices}.")

    def _state_of(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """Parameter ``p``'s state, initialised before its first update; a new one is not entered in ``self.state``
        until the update has put something in it, so that ``state_dict()["state"]`` lists the parameters that have
        state, as PyTorch's does."""
        state = self.state.get(p)
        if state is None:
            state = {}
        if not state:
            self._init_state(p._data, state, group)
        return state

    def _step_sparse(self, params: list, group: dict[str, Any]) -> None:
        """``_update_sparse`` on each of ``params`` (their gradients are sparse COO: ``ember._sparse``), or
        PyTorch's error for an optimizer without a sparse path."""
        if not self._sparse_grads:
            raise RuntimeError(self._sparse_error or f"{type(self).__name__} does not support sparse gradients")
        for p in params:
            state = self._state_of(p, group)
            self._update_sparse(p._data, p._grad._data, state, group)
            if state:
                self.state.setdefault(p, state)
            p._bump_version()

    def _update_sparse(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One update of the array ``p`` from its sparse gradient ``g`` (a ``SparseCOO``); where ``_sparse_grads``."""
        raise NotImplementedError(f"{type(self).__name__} sets _sparse_grads but has no _update_sparse")

    def _init_state(self, p, state: dict[str, Any], group: dict[str, Any]) -> None:
        """Fill ``state`` for parameter array ``p`` before its first update (default: nothing)."""

    def _reference_step(self, params: list, grads: list, states: list, group: dict[str, Any]) -> bool:
        """``foreach=False``: the readable per-parameter reference (a ``_single_tensor_*`` function) on the
        arrays of ``params`` and ``grads``; False where an optimizer has none (``_update`` then runs)."""
        return False

    def _update(self, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise NotImplementedError(
            f"{type(self).__name__} must implement _update(p, g, state, group) or override step()"
        )

    # ----------------------------------------------------------------- helpers for _update
    def _scratch(self, like, slot: int = 0):
        """A reusable array shaped and typed like ``like`` (one buffer per dtype and slot)."""
        key = (like.dtype, slot)
        buf = self._scratch_bufs.get(key)
        if buf is None or buf.size < like.size:
            buf = self._scratch_bufs[key] = xp.empty(like.size, like.dtype)
        return buf[: like.size].reshape(like.shape)

    def _decayed_grad(self, p, g, weight_decay: float, maximize: bool):
        """The gradient the update follows: ``-g`` when maximizing, plus ``weight_decay * p`` (L2 penalty).

        Returns ``g`` itself when neither applies, else scratch slot 1.
        """
        if not weight_decay and not maximize:
            return g
        return decayed_grad_into(p, g, weight_decay, maximize, self._scratch(g, 1))

    def _adam_family_grad(self, p, g, group: dict[str, Any]):
        """``_decayed_grad`` for the Adam family, whose ``decoupled_weight_decay=True`` shrinks the parameter itself
        (``p *= 1 - lr * weight_decay``, AdamW's rule) instead of adding the L2 term to the gradient."""
        shrink, weight_decay = adam_family_decay(group)
        if shrink is not None:
            p *= shrink
        return self._decayed_grad(p, g, weight_decay, group["maximize"])

    # ----------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state in PyTorch's layout.

        ``{'state': {index: {...}}, 'param_groups': [{option: value, ..., 'params': [index, ...]}]}``,
        where parameters are numbered in group order. State tensors are returned by reference,
        as in PyTorch (save them, or copy, before stepping again). The hooks of
        ``register_state_dict_pre_hook`` run first, those of ``register_state_dict_post_hook`` on the result.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)] if isinstance(p, Tensor) else p: s for p, s in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()``: the groups must have the same sizes, matched in order.

        As PyTorch's, a floating parameter's state tensors take its dtype (``step`` keeps its own) and
        are not copied where they have it already: the loaded optimizer updates the dict's tensors in place
        (``load_state_dict(other.state_dict())`` makes the two share buffers; ``deepcopy`` the dict to keep it).
        Lists, tuples and dicts in a state are rebuilt with their tensors cast. Subclasses' ``__setstate__``
        receives the new ``state`` and ``param_groups`` (where optimizers fill in options an older dict lacks;
        ember's own, as PyTorch's, also turn a step saved as a number into a tensor).
        The hooks of ``register_load_state_dict_pre_hook`` see (and may replace) a shallow copy of ``state_dict``
        first; those of ``register_load_state_dict_post_hook`` run at the end.
        """
        state_dict = state_dict.copy()  # (what the pre hooks may edit: the caller's dict stays as it was)
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has a different number of parameter groups ({len(saved_groups)}) "
                f"than the optimizer ({len(self.param_groups)})"
            )
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                    f"group: group {i} has {len(saved['params'])} saved parameters, the optimizer has "
                    f"{len(group['params'])}"
                )
        params = {i: p for saved, group in zip(saved_groups, self.param_groups)
                  for i, p in zip(saved["params"], group["params"])}
        names = {i: n for saved in saved_groups for i, n in zip(saved["params"], saved.get("param_names", ()))}
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            p = params.get(key)
            if p is None:
                state[key] = value
            else:
                where = f"{key} ({names[key]!r})" if key in names else key
                saved_group = next((g for g in saved_groups if key in g["params"]), {})
                state[p] = {k: _cast_state_value(v, p, k, saved_group, where, self._state_shaped_like_params)
                            for k, v in value.items()}
        new_groups = []
        for group, saved in zip(self.param_groups, deepcopy(saved_groups)):  # (the caller's groups stay theirs)
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    @staticmethod
    def _group_tensors_by_device_and_dtype(tensorlistlist: list, with_indices: bool = False) -> dict:
        """PyTorch's grouping for foreach updates: {(device, dtype) of the first list's tensor: (the lists'
        entries at those positions, the positions if ``with_indices``)}; optimizers written for PyTorch's
        foreach path (timm's) call it."""
        groups: dict = {}
        for i, t in enumerate(tensorlistlist[0]):
            lists, indices = groups.setdefault((t.device, t.dtype), ([[] for _ in tensorlistlist], []))
            for out, source in zip(lists, tensorlistlist):
                out.append(source[i])
            if with_indices:
                indices.append(i)
        return groups


def _get_capturable_supported_devices(supports_xla: bool = True) -> list[str]:
    """PyTorch's list of the device types whose optimizers may be ``capturable`` (CUDA graphs and the like), which
    optimizer code reads to check a ``capturable=True`` parameter's device: none of them is ember's CPU."""
    devices = ["cuda", "xpu", "hpu", "privateuseone"]  # (PyTorch's privateuse1 backend under its default name)
    if supports_xla:
        devices.append("xla")
    return devices


# PyTorch's device types with fused optimizer kernels (ember's CPU among them) and with foreach kernels (not the CPU)
_FUSED_DEVICES = ("mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone")
_FOREACH_DEVICES = ("cuda", "xpu", "mtia", "privateuseone")


def _default_to_fused_or_foreach(params: list, differentiable: bool, use_fused: bool = False) -> tuple[bool, bool]:
    """PyTorch's choice of an optimizer's implementation when the user chose none, (fused, foreach), which custom
    optimizers call: fused when asked (``use_fused``) and every parameter (None aside) is a plain floating tensor or
    Parameter on a device with fused kernels; else foreach where every one is on a device with foreach kernels
    (not the CPU: on ember's, False); neither for a ``differentiable`` optimizer."""
    if differentiable:
        return False, False
    from ..nn.parameter import Parameter  # (optim sits below nn: imported when called)

    plain = (Tensor, Parameter)  # (PyTorch's foreach-supported types: subclasses are not)
    fused = use_fused and all(p is None or (type(p) in plain and p.device.type in _FUSED_DEVICES
                                            and p.is_floating_point()) for p in params)
    foreach = not fused and all(p is None or (type(p) in plain and p.device.type in _FOREACH_DEVICES) for p in params)
    return fused, foreach


def _use_grad_for_differentiable(func: Callable) -> Callable:
    """Decorator for an optimizer's ``step``, as PyTorch's: within it, gradient recording is on exactly when the
    optimizer was made ``differentiable`` (``self.defaults["differentiable"]``), and as it was after it."""
    from ..autograd.grad_mode import is_grad_enabled, set_grad_enabled

    def _use_grad(*args: Any, **kwargs: Any) -> Any:
        previous = is_grad_enabled()
        try:
            set_grad_enabled(args[0].defaults["differentiable"])
            return func(*args, **kwargs)
        finally:
            set_grad_enabled(previous)

    functools.update_wrapper(_use_grad, func)
    return _use_grad


def _patch_step_function(cls: type) -> None:
    """Make ``cls.step`` run the step hooks, once per class, as PyTorch's ``Optimizer.__init__`` does
    (``_patch_step_function``): a custom optimizer that overrides ``step`` runs them too."""
    step = cls.__dict__.get("step") or cls.step
    if getattr(step, "_hooked", False):
        return
    cls.step = _hooked_step(step)


def _hooked_step(step: Callable) -> Callable:
    """``step`` wrapped as PyTorch wraps it: global then per-optimizer pre hooks, the step (a trace span, NumPy's
    floating-point errors ignored), per-optimizer then global post hooks. A step that calls ``super().step()``
    runs the hooks once."""

    @functools.wraps(step)
    def hooked_step(self, *args, **kwargs):
        if self.__dict__.get("_stepping"):
            return step(self, *args, **kwargs)
        args = (self, *args)  # as in PyTorch, the hooks' args start with the optimizer
        for hook in (*_hooks.optimizer_step_pre_hooks, *self._step_pre_hooks):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        started = _trace.start()
        self._stepping = True
        try:
            with quiet():  # inf/nan silently, as PyTorch (ember._backend)
                out = step(*args, **kwargs)
        finally:
            self._stepping = False
            _trace.finish(f"{type(self).__name__}.step", "optim", started)
        for hook in (*self._step_post_hooks, *_hooks.optimizer_step_post_hooks):
            hook(self, args, kwargs)
        return out

    hooked_step._hooked = True  # type: ignore[attr-defined]
    return hooked_step


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return
    ``(new_args, new_kwargs)``. Runs before each optimizer's own pre hooks."""
    return RemovableHandle(_hooks.optimizer_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after every optimizer's ``step`` (after its own post hooks)."""
    return RemovableHandle(_hooks.optimizer_step_post_hooks, hook)


def _cast_state_value(value, param: Tensor, key, group: dict[str, Any], index=None, shaped_like_param: bool = False):
    """PyTorch's cast of one loaded state entry: with a floating parameter a tensor takes its dtype (the same
    tensor where it has it already), except ``step`` (float32 where the group is ``fused`` or ``capturable``);
    lists, tuples and dicts are rebuilt around their cast entries (their tensors keyed None, as PyTorch's).

    A top-level state tensor of another shape than its parameter (a state dict from another model) is a
    RuntimeError naming the parameter here, rather than a broadcasting error inside a later ``step()``.
    """
    if isinstance(value, Tensor):
        if shaped_like_param and key != "step" and value.ndim and tuple(value.shape) != tuple(param.shape):
            raise RuntimeError(
                f"loaded state dict: state {key!r} of parameter {index} has shape {list(value.shape)}, but the "
                f"parameter has shape {list(param.shape)} (is the state dict from another model?)"
            )
        if key == "step":
            return value.to(dtype=float32) if group.get("fused") or group.get("capturable") else value
        return value.to(dtype=param.dtype) if param.is_floating_point() else value
    if isinstance(value, dict):
        return {k: _cast_state_value(v, param, k, group) for k, v in value.items()}
    if isinstance(value, (list, tuple)):  # (PyTorch rebuilds any iterable; a string it garbles, so only these)
        return type(value)(_cast_state_value(v, param, None, group) for v in value)
    return value


def _update_as_real(opt: Optimizer, p, g, state: dict[str, Any], group: dict[str, Any]) -> None:
    """A complex parameter's update, as PyTorch's: ``_update`` on the real views (``view_as_real``) of the
    parameter, its gradient and its complex state, so real and imaginary parts are separate elements (Adam's
    second moment holds Re(g)^2 and Im(g)^2, not g^2). The state stays complex, as the parameter."""
    from ..ops.complex import complex_view, real_view

    real = {k: Tensor._make(real_view(v._data)) if isinstance(v, Tensor) and v._data.dtype.kind == "c" else v
            for k, v in state.items()}
    opt._update(real_view(p), real_view(g), real, group)
    for k, v in real.items():
        if k not in state:  # made by the update (SGD's momentum buffer): complex, as the parameter
            state[k] = Tensor._make(complex_view(xp.ascontiguousarray(v._data))) if isinstance(v, Tensor) else v


def state_arrays(states: list, key: str) -> list:
    """``[state[key]]``'s arrays, one per parameter (None where a state lacks ``key``), for the references."""
    return [s[key]._data if key in s else None for s in states]


# A state's numbers that PyTorch's optimizers hold as 0-d tensors, which a state dict from before PyTorch 1.12 holds
# as Python numbers (ASGD's eta and mu, NAdam's mu_product too)
_SCALAR_STATE = ("step", "eta", "mu", "mu_product")


def _fill_in_older_state(opt: Optimizer) -> None:
    """What PyTorch's optimizers' ``__setstate__`` do for a state dict saved by an older PyTorch (after
    ``load_state_dict`` and unpickling): each group takes the options its class's ``_older_options`` names, where
    it lacks them, at PyTorch's values for them (SGD's ``fused`` False, Adam's None; SparseAdam and LBFGS fill in
    nothing), AdamW's groups all get ``decoupled_weight_decay=True``; and a step kept as a number becomes a 0-d
    tensor (float32 for a fused group, else the default float dtype). Only ember's own optimizers and their
    subclasses, as PyTorch's base ``Optimizer`` does neither."""
    own = next((c for c in type(opt).__mro__ if c is not Optimizer and "__init__" in vars(c)
                and c.__module__.startswith("ember.optim.")), None)
    if own is None or "param_groups" not in opt.__dict__:
        return
    for group in opt.param_groups:
        for name, value in opt._older_options.items():
            group.setdefault(name, value)
        group.update(opt._forced_options)
        dtype = float32.np if group.get("fused") else get_default_dtype().np
        for p in group["params"]:
            state = opt.state.get(p) or {}
            for key in _SCALAR_STATE:
                if key in state and not isinstance(state[key], Tensor):
                    state[key] = Tensor._make(xp.asarray(float(state[key]), dtype=dtype))


def step_counter() -> Tensor:
    """A fresh ``state['step']``: a 0-d tensor of the default float dtype, as PyTorch stores it."""
    return Tensor._make(xp.zeros((), dtype=get_default_dtype().np))


def decayed_grad_into(p, g, weight_decay: float, maximize: bool, out):
    """``out = (-g if maximize else g) + weight_decay * p``, returned (see ``Optimizer._decayed_grad``)."""
    if weight_decay:
        xp.multiply(p, weight_decay, out=out)
        (xp.subtract if maximize else xp.add)(out, g, out=out)
    elif maximize:
        xp.negative(g, out=out)
    else:
        out[...] = g
    return out


def adam_family_decay(group: dict[str, Any]) -> tuple[float | None, float]:
    """(factor the parameter is multiplied by first or None, L2 weight decay added to the gradient): AdamW's
    decoupled rule shrinks the parameter (``1 - lr * weight_decay``), Adam's adds ``weight_decay * p``."""
    weight_decay = group["weight_decay"]
    if group["decoupled_weight_decay"]:
        return (1 - group["lr"] * weight_decay if weight_decay else None), 0
    return None, weight_decay


def add_scaled(y, x, alpha: float, tmp) -> None:
    """``y += alpha * x`` in place; ``tmp`` (same shape, may be ``x`` when x is scratch) holds the product (on the
    NumPy path; the compiled kernel makes one pass, with the same bits)."""
    if alpha == 1:
        y += x
    elif (y.dtype in (xp.float32, xp.float64) and x.dtype == y.dtype and x.shape == y.shape and y.flags.c_contiguous
          and x.flags.c_contiguous and policy.compiles(y.size, policy.min_compiled_elements)):
        kern = compiled.add_scaled.parallel if region_threads(y.size, y.size) else compiled.add_scaled  # policy.omp
        kern(y.reshape(-1), x.reshape(-1), y.dtype.type(alpha))
    else:
        xp.multiply(x, alpha, out=tmp)
        y += tmp


def check_nonneg(**values: float) -> None:
    """Raise PyTorch's ``ValueError("Invalid <name> value: v")`` for a negative option."""
    for name, v in values.items():
        if not 0.0 <= v:
            raise ValueError(f"Invalid {_LABELS.get(name, name + ' value')}: {v}")


_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def compat_options(**defaults: Any) -> dict[str, Any]:
    """An optimizer's defaults, in the order given: PyTorch's order, so that a printed or diffed
    ``state_dict()["param_groups"]`` reads as PyTorch's.

    They keep PyTorch's implementation switches: ``foreach=False`` selects the readable per-parameter reference
    (``_single_tensor_*``) where an optimizer has one (all but LBFGS and SparseAdam), otherwise the threaded
    in-place update runs; ``fused`` changes nothing, ``capturable=True`` is refused at the first step (PyTorch's
    AssertionError on the CPU); ``differentiable=True`` (backpropagating through ``step``) is not supported.
    """
    if defaults["differentiable"]:
        raise NotImplementedError("differentiable=True is not supported by ember's optimizers")
    return {**defaults, "differentiable": False}
