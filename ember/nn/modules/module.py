"""``Module``: the base class of every layer — registration, traversal, state_dict, modes (hooks: _calling.py).

Registration works as in PyTorch: assigning a ``Parameter``, a ``Module`` or
(after ``register_buffer``) a tensor to an attribute files it in
``_parameters``, ``_modules`` or ``_buffers``. Those three dicts are reached
through ``__getattr__``, which Python only calls when normal lookup fails, so
plain attributes (``self.training``, hyper-parameters) cost nothing extra.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from typing import Any

from ... import _dtype, _trace
from ..._backend import xp
from ..._device import check_device, on_meta
from ..._dtype import float16, float32, float64, np_kind
from ..._memory_format import has_format_strides, laid_out, preserve_format
from ..._meta import is_meta, meta_array
from ..._shown_name import package_name
from ..._tensor import Tensor
from ..._to_args import parse_to
from ..._warnings import warn_once
from ...autograd.grad_mode import no_grad
from ...autograd.grad_store import zero_grads
from ...utils import hooks as _hooks
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter, is_lazy
from ._calling import (  # noqa: F401 (the process-wide hooks' registration, at PyTorch's path)
    HooksMixin,
    _HookedCall,
    _refuse_non_tensor_input,
    register_module_backward_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    upgrade_hook_state,
)

# The process-wide module-call hooks (ember.utils.hooks owns them; mutated there, never rebound) under module globals:
# PyTorch's names for the forward ones, which are its id-keyed dicts, and a plain global load each on the fast path of
# ``Module.__call__`` (an attribute of ``_hooks`` costs one more lookup per check per call).
_global_forward_pre_hooks = _hooks.module_forward_pre_hooks
_global_forward_hooks = _hooks.module_forward_hooks
_global_forward_hooks_with_kwargs = _hooks.module_forward_hooks_with_kwargs
_global_forward_hooks_always_called = _hooks.module_forward_hooks_always_called
_module_backward_hooks = _hooks.module_backward_hooks  # lists in ember
_module_backward_pre_hooks = _hooks.module_backward_pre_hooks


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, name, param)`` whenever any module registers a parameter; a returned
    parameter is registered instead."""
    return RemovableHandle(_hooks.module_parameter_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, name, submodule)`` whenever any module registers a child module; a returned
    module is registered instead."""
    return RemovableHandle(_hooks.module_module_registration_hooks, hook)


def _registered(hooks: list, module, name: str, value):
    for hook in tuple(hooks):
        result = hook(module, name, value)
        if result is not None:
            value = result
    return value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: keys the model lacked in the checkpoint, and extra keys."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first (how a child's repr nests inside its parent's)."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    pad = " " * spaces
    return first + "\n" + "\n".join(pad + line for line in rest)


def _check_name(kind: str, self: Module, name, store: str) -> None:
    """PyTorch's checks on a name passed to register_parameter/register_buffer/add_module."""
    if store not in self.__dict__:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(self, name) and name not in self.__dict__[store]:
        raise KeyError(f"attribute '{name}' already exists")


class _HookStore:
    """One of a module's state-dict hook stores, PyTorch's OrderedDict from a handle's id to the hook, made when the
    attribute is first read (most modules never have a hook, so ``__init__`` makes none): the module's own dict
    from then on, which public code edits (``m._state_dict_hooks[k] = hook``, ``.clear()``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, module, owner=None):
        if module is None:
            return self
        hooks = module.__dict__[self.name] = OrderedDict()  # (the instance's entry answers every later read)
        return hooks


# PyTorch's warning when a module is cast to a complex dtype
_COMPLEX_MODULE_WARNING = (
    "Complex modules are a new feature under active development whose design may change, and some modules might "
    "not work as expected when using complex tensors as parameters or buffers. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a complex module does not work as "
    "expected.")


def _class_repr(cls: type) -> str:
    """``repr(cls)`` with ember's classes under the package name programs import (``<class
    'torch.nn.modules.linear.Linear'>`` where ``torch`` is ember), as PyTorch's messages show a class."""
    module = cls.__module__
    if module == "ember" or module.startswith("ember."):
        return f"<class '{package_name()}{module[len('ember'):]}.{cls.__qualname__}'>"
    return repr(cls)


class Module(HooksMixin):
    """Base class for all layers and models; subclasses define ``forward``.

    ``module(x)`` runs forward pre-hooks, ``forward``, then forward hooks.
    """

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments {args} {kwargs}: "
                "Module.__init__ takes none"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        # Hooks as PyTorch keeps them (code that reads or edits them, such as ``_forward_pre_hooks.items()``, runs
        # unchanged): dicts from a handle's id to the hook, with the ids registered ``with_kwargs`` / ``always_call``.
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None  # which kind of backward hook was registered, once one was

    def __setstate__(self, state: dict) -> None:
        """Unpickling (``copy.deepcopy``, ``pickle``): the state as saved; a module pickled by an earlier ember, which
        kept its hooks in lists, gets them as dicts (and the flag dicts it lacks)."""
        self.__dict__.update(state)
        upgrade_hook_state(self.__dict__)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------ calling
    def __call__(self, *args: Any, **kwargs: Any) -> Tensor:
        # Typed as returning a Tensor, what nearly every module returns; the few whose forward returns a tuple
        # (RNN, LSTM, GRU, LSTMCell, MultiheadAttention) declare their own __call__ for type checkers.
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_pre_hooks or _global_forward_hooks or _module_backward_hooks
                or _module_backward_pre_hooks or _trace.State.active):
            try:
                return self.forward(*args, **kwargs)
            except AttributeError as e:
                _refuse_non_tensor_input(self, args, e)
                raise
        started = _trace.start()  # a forward span, while a trace is recording
        call = _HookedCall(args, kwargs)
        try:
            output = self._call_with_hooks(call)
        except Exception:
            self._run_always_called_hooks(call)
            raise
        if started is not None:
            _trace.finish(_trace.module_label(self), "forward", started)
        return output

    # ------------------------------------------------------------------ registration
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder) under ``name``."""
        _check_name("parameter", self, name, "_parameters")
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(
                    f"cannot assign '{type(param).__module__}.{type(param).__name__}' object to parameter "
                    f"'{name}' (ember.nn.Parameter or None required)"
                )
            if param.grad_fn is not None:
                raise ValueError(
                    f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                    f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                    "the forward() method."
                )
        if param is not None and _hooks.module_parameter_registration_hooks:
            param = _registered(_hooks.module_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running stats); ``persistent`` puts it in state_dict."""
        _check_name("buffer", self, name, "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (ember Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (also what ``self.name = module`` does)."""
        if module is not None and not isinstance(module, Module):
            if isinstance(module, type) and issubclass(module, Module):  # nn.ReLU where nn.ReLU() was meant
                raise TypeError(f"{module.__module__}.{module.__qualname__} is not a Module subclass: it is the "
                                f"class; pass an instance, {module.__name__}(...)")
            raise TypeError(f"{type(module).__module__}.{type(module).__name__} is not a Module subclass")
        _check_name("module", self, name, "_modules")
        if module is not None and _hooks.module_module_registration_hooks:
            module = _registered(_hooks.module_module_registration_hooks, self, name, module)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, "_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(ember.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Buffer):  # nn.Buffer(t, persistent=...): register_buffer, as PyTorch
            if "_buffers" not in d:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._forget(name, "_buffers")
            self.register_buffer(name, value, value.persistent)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, "_modules")
            if _hooks.module_module_registration_hooks:
                value = _registered(_hooks.module_module_registration_hooks, self, name, value)
            d["_modules"][name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(ember.nn.Module or None expected)"
                )
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' (ember.Tensor or None expected)"
                )
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Drop ``name`` from every store but ``keep``, where it is registered next: a child, parameter or buffer
        assigned again keeps its place (``model.conv1 = nn.Conv2d(...)`` stays first in ``children()``)."""
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                d[store].pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name: str) -> Tensor | Module:  # PyTorch's type: a misspelt method call is an error
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        from ..._torch_names import MODULE

        if name in MODULE:  # a torch.nn.Module method ember lacks: name the missing feature
            from ..._missing import missing

            raise missing(f"'{type(self).__name__}' object", f"torch.nn.Module.{name}")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'", name=name, obj=self)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if name in d.get(store, ()):
                del d[store][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    # ------------------------------------------------------------------ traversal
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every descendant, depth first, each once (unless ``remove_duplicate=False``)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, child in self._modules.items():
            if child is not None and child not in seen:
                seen.add(child)
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, value in mod.__dict__[store].items():
                if value is None or (remove_duplicate and value in seen):
                    continue
                seen.add(value)
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs in registration order, shared parameters once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path ``target`` ("" is this module)."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def _get_member(self, target: str, cls, what: str):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        value = getattr(mod, name)
        if not isinstance(value, cls) or (cls is Tensor and name not in mod._buffers):
            raise AttributeError(f"`{name}` is not {what}")
        return value

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` (e.g. ``"fc1.weight"``)."""
        return self._get_member(target, Parameter, "an nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        return self._get_member(target, Tensor, "a buffer")

    # ------------------------------------------------------------------ modes and conversion
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and its descendants (Dropout, BatchNorm behave differently). As in
        PyTorch, each child's own ``train(mode)`` is called, so a subclass overriding ``train`` (LoRA layers that
        merge their factors on ``eval()``) sees a parent's ``eval()``/``train()``."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to None (default) or to zeros."""
        started = _trace.start()
        params = list(self.parameters())
        zero_grads(params, set_to_none)
        if _hooks.grad_edit_hooks:
            _hooks.run_grad_edit_hooks("zero_grad", params)
        _trace.finish(f"{type(self).__name__}.zero_grad", "optim", started)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every child (recursively), then on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def _apply_to_tensors(self, convert: Callable[[Tensor], Any], moves: Callable[[Any], bool] | None = None
                          ) -> Module:
        """Replace the storage of every parameter, gradient and buffer by ``convert(array)``, in place; or, where
        ``moves(array)`` (the tensor changes device: the CPU to the meta device or back), replace the parameter or
        buffer by a new one, as PyTorch's ``_apply`` does when the storage cannot be swapped in: the old tensor
        keeps its data (an optimizer holding it holds it still), and a parameter two modules share becomes two
        (weights tied before ``to("meta")`` or ``to_empty`` are tied again by the program, as in PyTorch). A
        buffer is a new tensor wherever ``convert`` gives a new array, as PyTorch's (``buf.to(...)`` assigned
        back: the same tensor only where nothing changes)."""
        for m in self.modules():
            for name, t in m._parameters.items():
                if t is None:
                    continue
                if moves is not None and moves(t._data):
                    m._parameters[name] = _moved(t, convert)
                    continue
                t._data = convert(t._data)
                if t._grad is not None:
                    t._grad._data = convert(t._grad._data)
            for name, t in m._buffers.items():
                converted = None if t is None else convert(t._data)
                if converted is not None and converted is not t._data:
                    if is_lazy(t):  # (still to be initialised at the first forward, as PyTorch's: its class kept)
                        t._data = converted
                    else:
                        m._buffers[name] = Tensor._make(converted)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move to a device (the CPU, or the meta device: every parameter, gradient and buffer then keeps its shape
        and dtype and drops its values) and/or cast floating and complex parameters and buffers to a floating or
        complex dtype (with PyTorch's UserWarning for a complex one); ``memory_format=`` lays out the 4-d and 5-d
        ones (and their gradients) so, as PyTorch's (``channels_last``: a 5-d one is its RuntimeError)."""
        device, dtype, _, fmt = parse_to(*args, **kwargs)  # (PyTorch's overloads and errors; a tensor's device too)
        fmt = None if fmt is preserve_format else fmt
        check_device(device, allow_meta=True)
        to_meta = device is not None and on_meta(device)
        if device is not None and not to_meta and any(is_meta(t._data)
                                                      for t in (*self.parameters(), *self.buffers())):
            raise NotImplementedError(
                "Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of "
                "torch.nn.Module.to() when moving module from meta to a different device.")
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")
        if dtype is not None and dtype.is_complex:
            warnings.warn(_COMPLEX_MODULE_WARNING, UserWarning, stacklevel=2)
        if dtype is None and not to_meta and fmt is None:
            return self
        return self._cast(dtype, ("f", "c"), to_meta, fmt)

    def _cast(self, dtype, kinds: tuple[str, ...], to_meta: bool = False, fmt=None) -> Module:
        """Cast the parameters, gradients and buffers whose array kind is in ``kinds`` to ``dtype`` (None: keep),
        to the meta device too where ``to_meta``, laid out in ``fmt`` where given. ``to`` casts floating and
        complex tensors (a complex one cast to a real dtype keeps its real part, with PyTorch's warning);
        ``float()``, ``double()``, ``half()`` and ``bfloat16()`` cast floating ones only, as PyTorch's; integral
        and bool tensors keep their dtype under both."""
        target = None if dtype is None else dtype.np
        to_real = target is not None and np_kind(target) != "c"
        if to_real and "c" in kinds and any(t._data.dtype.kind == "c"
                                            for t in (*self.parameters(), *self.buffers())):
            from ...ops.elementwise import COMPLEX_TO_REAL_WARNING

            warn_once(COMPLEX_TO_REAL_WARNING, UserWarning)

        def convert(a):  # (to the meta device: every tensor keeps its shape and drops its values)
            cast = target is not None and np_kind(a.dtype) in kinds
            dt = target if cast else a.dtype
            if is_meta(a) and dt == a.dtype:  # (nothing changes: PyTorch's ``to`` returns the tensor itself)
                return a
            if to_meta or is_meta(a):
                return meta_array(a.shape, dt)
            if cast and to_real and a.dtype.kind == "c":
                a = a.real
            if fmt is not None and a.ndim in (4, 5) and not has_format_strides(a, fmt):
                return laid_out(a.astype(dt, copy=False), fmt)
            return a.astype(dt, copy=False)

        return self._apply_to_tensors(convert, (lambda a: not is_meta(a)) if to_meta else None)

    def float(self) -> Module:
        return self._cast(float32, ("f",))

    def double(self) -> Module:
        return self._cast(float64, ("f",))

    def half(self) -> Module:
        return self._cast(float16, ("f",))

    def bfloat16(self) -> Module:
        return self._cast(_dtype.bfloat16, ("f",))

    def cpu(self) -> Module:
        return self

    def share_memory(self) -> Module:
        """Move every parameter, gradient and buffer into shared memory (``Tensor.share_memory_``), in place:
        processes forked afterwards, or sent the module, update the same weights (Hogwild training)."""
        from ..._shared_memory import share_memory_

        tensors = []
        for m in self.modules():
            for t in list(m._parameters.values()) + list(m._buffers.values()):
                if is_lazy(t):
                    t.share_memory_()  # (PyTorch's refusal, before anything moves)
                if t is not None:
                    tensors += [t] if t._grad is None else [t, t._grad]
        share_memory_(tensors)
        return self

    def type(self, dst_type) -> Module:
        """Every parameter and buffer (integer buffers too) cast to ``dst_type``: a dtype, a legacy tensor type
        (``torch.DoubleTensor``) or its name, as PyTorch."""
        from ..._legacy import type_

        target = type_(Tensor._make(xp.zeros(0, xp.float32)), dst_type)._data.dtype  # checks dst_type
        if np_kind(target) != "f" and any(True for _ in self.parameters()):
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        return self._apply_to_tensors(lambda a: a.astype(target, copy=False))

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Every parameter and buffer replaced by uninitialised memory of its shape and dtype on ``device`` (a
        required keyword, as PyTorch's; None: each on its own): PyTorch's way to materialise a module built on the
        meta device, before initialising it or loading its weights."""
        check_device(device, allow_meta=True)

        def fresh(a):
            if is_meta(a) if device is None else on_meta(device):
                return meta_array(a.shape, a.dtype)
            return xp.empty(a.shape, a.dtype) if is_meta(a) else xp.empty_like(a)

        return self._apply_to_tensors(fresh, None if device is None else lambda a: is_meta(a) != on_meta(device))

    def compile(self, *args, **kwargs) -> None:
        """``torch.compile`` this module's forward in place: as ``ember.compile``, nothing is compiled and
        the module runs as written (same results)."""

    def cuda(self, device=None) -> Module:
        check_device("cuda" if device is None else device if not isinstance(device, int) else f"cuda:{device}")
        return self

    # ------------------------------------------------------------------ state_dict
    # PyTorch's state-dict hook stores (OrderedDicts from a handle's id to the hook), each made on first use
    # (``_HookStore``); state_dict and load_state_dict read them without making them (``_hooks_in``).
    _state_dict_pre_hooks = _HookStore()
    _state_dict_hooks = _HookStore()
    _load_state_dict_pre_hooks = _HookStore()
    _load_state_dict_post_hooks = _HookStore()

    def _hooks_in(self, store: str):
        """The hooks in ``store`` (none where the module never made it), without making it."""
        hooks = self.__dict__.get(store)
        return hooks.values() if hooks else ()

    def _file_hook(self, store: str, hook: Callable) -> RemovableHandle:
        hooks = getattr(self, store)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` collects this module's entries."""
        return self._file_hook("_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after this module's entries (its children's
        included) are in ``state_dict``; it edits the dict in place and returns None."""
        return self._file_hook("_state_dict_hooks", _PublicStateDictHook(hook))

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """PyTorch's older form of ``register_state_dict_post_hook``: a value the hook returns replaces the dict."""
        return self._file_hook("_state_dict_hooks", hook)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False) -> RemovableHandle:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`` before
        ``load_state_dict`` reads this module's entries (the module first with ``with_module``); the hook may edit
        the dict (a copy of the caller's), e.g. to rename or merge old checkpoints' keys."""
        return self._file_hook("_load_state_dict_pre_hooks", functools.partial(hook, self) if with_module else hook)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` after loading, before the strict check: removing keys from
        ``incompatible_keys.missing_keys`` / ``unexpected_keys`` keeps them from being errors."""
        return self._file_hook("_load_state_dict_post_hooks", hook)

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers by dotted name, in PyTorch's order (each module: params, buffers)."""
        if args:  # PyTorch's deprecated positional form state_dict(destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # each module's version by prefix, as PyTorch's
        for hook in self._hooks_in("_state_dict_pre_hooks"):
            hook(self, prefix, keep_vars)
        local_metadata = {"version": self._version}
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:  # (what load_state_dict reads to tell old layouts apart: _BatchNorm's)
            metadata[prefix[:-1]] = local_metadata
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        for hook in self._hooks_in("_state_dict_hooks"):
            result = hook(self, destination, prefix, local_metadata)
            if isinstance(hook, _PublicStateDictHook):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` (values cast to each parameter's dtype).

        ``strict`` (default) raises RuntimeError listing missing and unexpected keys; otherwise they
        are returned. Shape mismatches always raise. ``assign=True`` replaces the tensors instead of copying.
        Load pre-hooks run before each module's entries are read (parents first), post-hooks after all are.
        """
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {_class_repr(type(state_dict))}.")
        missing, errors = [], []
        modules = list(self.named_modules(remove_duplicate=False))
        hooked = any(m._hooks_in("_load_state_dict_pre_hooks") or m._hooks_in("_load_state_dict_post_hooks")
                     for _, m in modules)
        # Hooks and modules' own ``_load_from_state_dict`` edit (pop entries of) a copy, as PyTorch's, never the
        # caller's dict
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata
        unexpected: list = []
        expected = set()
        with no_grad():
            for mod_prefix, mod in modules:
                pre = mod_prefix + "." if mod_prefix else ""
                local_metadata = dict((metadata or {}).get(pre[:-1], {}))
                if assign:
                    local_metadata["assign_to_params_buffers"] = True  # (where PyTorch passes it)
                mod._load_from_state_dict(state_dict, pre, local_metadata, True, missing, unexpected, errors)
                expected.update(pre + name for name, _, _ in mod._local_entries())
        unexpected += _unexpected_in_module_order(state_dict, expected, unexpected, [p for p, _ in modules])
        if hooked:
            keys = _IncompatibleKeys(missing, unexpected)
            for _, mod in reversed(modules):  # children before their parents, as PyTorch's
                for hook in mod._hooks_in("_load_state_dict_post_hooks"):
                    if hook(mod, keys) is not None:
                        raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                             "expected to return new values, if incompatible_keys need to be "
                                             "modified, it should be done inplace.")
        if strict:
            quoted = lambda keys: ", ".join(f'"{k}"' for k in keys)  # noqa: E731
            if unexpected:
                errors.insert(0, f"Unexpected key(s) in state_dict: {quoted(unexpected)}. ")
            if missing:
                errors.insert(0, f"Missing key(s) in state_dict: {quoted(missing)}. ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    def _local_entries(self) -> list[tuple[str, Tensor, bool]]:
        """(name, tensor, is_parameter) of what ``state_dict`` holds of this module itself: its parameters and
        persistent buffers, None ones left out."""
        local = [(n, p, True) for n, p in self._parameters.items() if p is not None]
        return local + [(n, b, False) for n, b in self._buffers.items()
                        if b is not None and n not in self._non_persistent_buffers_set]

    def _load_from_state_dict(self, state_dict, prefix: str, local_metadata: dict, strict: bool, missing_keys: list,
                              unexpected_keys: list, error_msgs: list) -> None:
        """``load_state_dict``'s step for this module alone, as PyTorch's: run its load pre-hooks, then copy its
        parameters and persistent buffers from the entries ``prefix + name`` (``local_metadata``: this module's
        ``_metadata`` entry, with ``assign_to_params_buffers``), appending to ``missing_keys`` and ``error_msgs``.
        Libraries override it to read entries of their own (torchmetrics' metric states), popping them from
        ``state_dict`` (a copy of the caller's) before calling this; an entry left in it that no module holds is
        unexpected."""
        for hook in self._hooks_in("_load_state_dict_pre_hooks"):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        self._load_local(state_dict, prefix, local_metadata.get("assign_to_params_buffers", False), missing_keys,
                         error_msgs)

    def _load_local(self, state_dict, prefix: str, assign: bool, missing: list, errors: list) -> None:
        for name, current, is_param in self._local_entries():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected ember.Tensor from checkpoint '
                              f"but received {type(value).__name__}")
                continue
            if not is_lazy(current) and value.shape != current.shape:  # (an uninitialised value: PyTorch's error)
                errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                              f"the shape in current model is {current.shape}.")
                continue
            if assign:
                if is_param and not isinstance(value, Parameter):
                    value = Parameter(value, requires_grad=current.requires_grad)
                setattr(self, name, value)
            elif not (is_lazy(current) and is_lazy(value)):  # (an uninitialised one into another: nothing to copy)
                current.copy_(value)

    # ------------------------------------------------------------------ repr
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The layer's own settings, shown inside its repr; subclasses override."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(child), 2) for name, child in self._modules.items()]
        lines = extra_lines + child_lines
        if not lines:
            return self._get_name() + "()"
        if len(extra_lines) == 1 and not child_lines:
            return f"{self._get_name()}({extra_lines[0]})"
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def _unexpected_in_module_order(state_dict, expected: set, reported: list, prefixes: list) -> list:
    """The keys of ``state_dict`` no module expects, in PyTorch's order: each is reported by the deepest module on
    its dotted path (PyTorch's load visits the modules parents first, each scanning the keys under its prefix in the
    dict's order), so the keys are ordered by that module's place, then by their place in the dict."""
    rank = {}
    for i, name in enumerate(prefixes):
        rank.setdefault(name, i)
    def owner(key: str) -> int:
        parts = key.split(".")[:-1]
        for depth in range(len(parts), 0, -1):
            if (name := ".".join(parts[:depth])) in rank:
                return rank[name]
        return 0
    keys = [k for k in state_dict.keys() if k not in expected and k not in reported]
    return sorted(keys, key=owner)  # (stable: the dict's order within a module)


class _PublicStateDictHook:
    """A hook filed by ``register_state_dict_post_hook``, which must return None (the private form may return a
    new dict): PyTorch marks the hook itself; a wrapper marks bound methods and builtins too."""

    __slots__ = ("hook",)

    def __init__(self, hook: Callable) -> None:
        self.hook = hook

    def __call__(self, *args):
        return self.hook(*args)


def _moved(t: Tensor, convert: Callable[[Any], Any]) -> Tensor:
    """A new parameter holding ``convert`` of ``t``'s storage, and of its gradient as its gradient."""
    new = Parameter(Tensor._make(convert(t._data)), requires_grad=t.requires_grad)
    if t._grad is not None:
        new.grad = Tensor._make(convert(t._grad._data))
    return new
