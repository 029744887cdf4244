"""``nn.utils.prune``: PyTorch's pruning by masks.

Pruning ``module.weight`` keeps the parameter as ``weight_orig``, adds a ``weight_mask`` buffer (1 keep, 0 pruned)
and a forward pre-hook that sets ``module.weight = weight_mask * weight_orig`` before every forward, so gradients
reach ``weight_orig`` only where the mask is 1. Pruning the same tensor again prunes among the entries (or
channels) still kept (a ``PruningContainer``); ``remove`` makes the pruned weight a plain parameter again.
The random methods draw from ember's generator, so they choose other entries than PyTorch under the same seed.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._creation import ones_like, rand, rand_like, zeros_like
from ..._tensor import Tensor
from ...ops.sorting import topk
from ...ops.statistics import kthvalue
from ..modules.module import Module
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


def _pruning_hooks(module: Module, name: str | None = None) -> list[int]:
    """The ids in ``module``'s forward pre-hooks of its pruning methods (for tensor ``name``, if given)."""
    return [i for i, hook in module._forward_pre_hooks.items()
            if isinstance(hook, BasePruningMethod) and (name is None or hook._tensor_name == name)]


class BasePruningMethod(ABC):
    """A pruning method: ``compute_mask(t, default_mask)`` says which entries of ``t`` to keep."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t``, given the mask already applied (``default_mask``)."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig`` (differentiable in ``<name>_orig``)."""
        orig = getattr(module, self._tensor_name + "_orig")
        return getattr(module, self._tensor_name + "_mask").to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores: Tensor | None = None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, ranking entries by ``importance_scores``
        (default: the tensor itself); an earlier pruning of the same tensor is combined in a container."""
        found = _pruning_hooks(module, name)
        if len(found) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                                 f"{module}. Use a PruningContainer.")
        old_method = module._forward_pre_hooks.pop(found[0]) if found else None
        method = new = cls(*args, **kwargs)
        new._tensor_name = name
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(new)
            method = old_method
        elif old_method is not None:
            method = PruningContainer(old_method)
            method.add_pruning_method(new)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                     f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):  # leave the module as it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times this method's mask (no module involved)."""
        if importance_scores is not None and importance_scores.shape != t.shape:
            raise AssertionError(f"importance_scores should have the same shape as tensor t, got "
                                 f"{importance_scores.shape} vs {t.shape}")
        scores = t if importance_scores is None else importance_scores
        return t * self.compute_mask(scores, default_mask=ones_like(t) if default_mask is None else default_mask)

    def remove(self, module: Module) -> None:
        """Make ``<name>`` a plain parameter holding the pruned values (the ``<name>_orig`` object, so an
        optimiser holding it keeps working); drop the mask."""
        weight = self.apply_mask(module)
        if self._tensor_name in module.__dict__:
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig._data = weight.detach()._data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)



class PruningContainer(BasePruningMethod):
    """The successive pruning methods of one tensor; a new one prunes only what the earlier ones kept:
    among kept entries ("unstructured"), among kept channels ("structured"), or anywhere ("global")."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and getattr(self, "_tensor_name", None) != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{getattr(self, '_tensor_name', None)}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        n_dims = t.ndim
        if method.PRUNING_TYPE == "unstructured":
            slc = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                     "`dim` defined.")
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            index = [slice(None)] * n_dims
            index[dim] = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = tuple(index)
        elif method.PRUNING_TYPE == "global":
            slc = tuple([slice(None)] * n_dims)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        new_mask[slc] = method.compute_mask(t[slc], default_mask=default_mask[slc]).to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones): the reparametrization alone."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` entries (an int) or that fraction of them (a float in [0, 1], rounded), lowest
    ``_scores`` first."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        nparams_toprune = _compute_nparams_toprune(self.amount, t.numel())
        _validate_pruning_amount(nparams_toprune, t.numel())
        mask = default_mask.clone()
        if nparams_toprune != 0:
            mask.view(-1)[self._drop(t, nparams_toprune)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes entries chosen at random."""

    def _drop(self, t: Tensor, k: int) -> Tensor:
        return topk(rand_like(t).view(-1), k=k).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the entries of smallest absolute value."""

    def _drop(self, t: Tensor, k: int) -> Tensor:
        return topk(t.abs().reshape(-1), k=k, largest=False).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount, importance_scores: Tensor | None = None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t: Tensor, dim: int, keep) -> Tensor:
    """Ones in the channels ``keep`` (indices or a boolean mask) along ``dim``, zeros elsewhere."""
    mask = zeros_like(t)
    index = [slice(None)] * t.ndim
    index[dim] = keep
    mask[tuple(index)] = 1
    return mask


class _Structured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim`` (an int, or a fraction of them, rounded)."""

    PRUNING_TYPE = "structured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if t.ndim <= 1:
            raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                             f"shape {t.shape} with {t.ndim} dims")
        if self.dim >= t.ndim:
            raise IndexError(f"Invalid index {self.dim} for tensor of size {t.shape}")
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        return _channel_mask(t, self.dim, self._keep(t, tensor_size, nparams_toprune)) * default_mask.to(
            dtype=t.dtype)


class RandomStructured(_Structured):
    """Prunes channels chosen at random."""

    def __init__(self, amount, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount, self.dim = amount, dim

    def _keep(self, t: Tensor, nchannels: int, nprune: int) -> Tensor:
        prob = rand(nchannels)
        return prob > kthvalue(prob, k=nprune).values

    @classmethod
    def apply(cls, module: Module, name: str, amount, dim: int = -1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Prunes the channels of smallest ``n``-norm (``n`` as ``torch.norm``'s ``p``)."""

    def __init__(self, amount, n, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def _keep(self, t: Tensor, nchannels: int, nprune: int) -> Tensor:
        dim = self.dim % t.ndim
        norm = t.norm(p=self.n, dim=[d for d in range(t.ndim) if d != dim])
        return topk(norm, k=nchannels - nprune, largest=True).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount, n, dim, importance_scores: Tensor | None = None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor):
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Reparametrize ``module.<name>`` as ``<name>_orig * <name>_mask`` with a mask of ones."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Prune ``amount`` (int, or fraction) random entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` (int, or fraction) entries of ``module.<name>`` of smallest absolute value."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int, importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` channels along ``dim`` of smallest ``n``-norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type,
                        importance_scores: dict | None = None, **kwargs) -> None:
    """Prune the (module, name) tensors together: ``pruning_method(**kwargs)`` (an unstructured method such
    as ``L1Unstructured``, with ``amount`` counted over all of them) ranks their entries jointly."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, name), getattr(m, name)) for m, name in parameters])
    default_mask = parameters_to_vector([m._buffers[name + "_mask"] if name + "_mask" in m._buffers
                                         else ones_like(getattr(m, name)) for m, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores.detach(), default_mask.detach())
    pointer = 0
    for m, name in parameters:
        param = getattr(m, name)
        custom_from_mask(m, name, mask=final_mask[pointer:pointer + param.numel()].view_as(param))
        pointer += param.numel()


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent: a plain parameter holding the pruned values."""
    found = _pruning_hooks(module, name)
    if not found:
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")
    hook = module._forward_pre_hooks.pop(found[0])
    hook.remove(module)
    return module


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any submodule has a pruning hook."""
    return any(_pruning_hooks(m) for _, m in module.named_modules())


def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    return amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)
