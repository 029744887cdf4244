"""``nn.utils.spectral_norm`` / ``remove_spectral_norm``: PyTorch's hook-based spectral normalization.

``spectral_norm(module)`` keeps the raw parameter as ``weight_orig`` and two buffers ``weight_u``/``weight_v``
(the singular-vector estimates); before every forward a pre-hook runs ``n_power_iterations`` power iterations
(in training mode only, updating the buffers in place) and sets ``module.weight = weight_orig / sigma`` with
``sigma = u . (W v)``, differentiated through ``weight_orig`` only, as in PyTorch. As PyTorch's, it also registers
a state_dict hook that records its version in the state dict's metadata (``spectral_norm``: ``weight.version``)
and a load pre-hook that reads a state dict saved without it (before version 1: ``weight`` itself saved, no
``weight_v``), solving for ``weight_v``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..._tensor import Tensor
from ...autograd import no_grad
from ...ops.linalg import dot, mv
from .. import functional as F
from ..modules.module import Module
from ..parameter import Parameter
from .weight_norm import _find_hook, _remove_hook

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook", "spectral_norm",
           "remove_spectral_norm"]

T_module = TypeVar("T_module", bound=Module)


class SpectralNorm:
    """The forward pre-hook ``spectral_norm`` registers (PyTorch's ``SpectralNorm``)."""

    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """``weight`` with ``dim`` moved first, flattened to (size(dim), -1)."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):  # the buffers are updated in place, as PyTorch's out=
                    v.copy_(F.normalize(mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(mv(weight_mat, v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()  # later in-place updates must not change what backward saved
        sigma = dot(u, mv(weight_mat, v))
        return weight / sigma

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma: Tensor) -> Tensor:
        """A ``v`` with ``u = normalize(W @ v)`` and ``u @ W @ v = target_sigma`` (a pseudo-inverse: W^T W may be
        singular), as PyTorch's."""
        v = weight_mat.t().mm(weight_mat).pinverse().mm(weight_mat.t()).mm(u.unsqueeze(1)).squeeze(1)
        return v.mul_(target_sigma / dot(u, mv(weight_mat, v)))

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        if _find_hook(module, SpectralNorm, name) is not None:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())  # a plain attribute until the first forward
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Reads a state dict saved before ``spectral_norm``'s version 1 (PyTorch's hook): it holds ``weight``
    (``weight_orig / sigma``) and no usable ``weight_v``. Assuming it went through a training forward,
    ``u = normalize(W_orig @ v)`` and ``sigma = u @ W_orig @ v``, so ``v`` solves ``W_orig @ x = u``, rescaled."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if (version is None and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))
                and weight_key not in state_dict):
            return  # a current state dict without its metadata (one built by hand): taken as current
        missing = [weight_key + s for s in ("_orig", "", "_u") if weight_key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, state_dict[weight_key + "_u"], sigma)


class SpectralNormStateDictHook:
    """Records ``spectral_norm``'s version in the module's state dict metadata (PyTorch's hook), which
    ``SpectralNormLoadStateDictPreHook`` reads back."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict, prefix, local_metadata) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def _default_dim(module: Module) -> int:
    """The dimension of the output channels: 1 for ConvTranspose layers (weight (in, out, ...)), else 0."""
    from ..modules.conv import _ConvTransposeNd

    return 1 if isinstance(module, _ConvTransposeNd) else 0


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> T_module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration (PyTorch's
    ``torch.nn.utils.spectral_norm``). ``dim`` defaults to 1 for ConvTranspose layers, else 0. The random
    start vectors ``<name>_u``/``<name>_v`` come from ember's generator (load a state_dict to match PyTorch's).
    """
    SpectralNorm.apply(module, name, n_power_iterations, _default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``spectral_norm``: ``<name>`` becomes a Parameter holding ``<name>_orig / sigma`` (no iteration); its
    state_dict hooks go too."""
    _remove_hook(module, SpectralNorm, name, "spectral_norm")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for key, hook in hooks.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[key]
                break
    return module
