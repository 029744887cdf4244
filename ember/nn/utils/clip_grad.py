"""Gradient clipping by total norm or by value, in place on ``.grad``.

The total norm is computed per gradient with one BLAS dot (2-norm) or one
reduction (other norms), then combined; no work per element happens in Python.
"""

from __future__ import annotations

import math
import types
from collections.abc import Iterable

from ... import _trace, _warnings
from ..._backend import quiet, xp
from ..._tensor import Tensor
from ...autograd.grad_store import flat_grads
from ...utils import hooks as _hooks

_Params = Tensor | Iterable[Tensor]


def _grads(parameters: _Params, what: str = "") -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    # a DTensor parameter's gradient as a DTensor, whose norm is its global value's (_global_norm)
    grads = [(p.grad if _global_norm(p) else p._grad) for p in parameters if p._grad is not None]
    if what and any(g.is_sparse for g in grads):
        shapes = [list(g.shape) for g in grads if g.is_sparse]
        raise NotImplementedError(f"{what}: the gradients of the parameters of shape {shapes} are sparse "
                                  f"(Embedding(sparse=True)); PyTorch's {what} does not support sparse gradients "
                                  "either. Use sparse=False, or clip grad.coalesce().values() yourself")
    return grads


def _global_norm(t: Tensor):
    """A DTensor's ``_global_norm(norm_type, norm_of)`` (ember.distributed.tensor), else None."""
    return getattr(type(t), "_global_norm", None)


def _norm_of(a, norm_type: float):
    """The ``norm_type``-norm of one array, in its own dtype (a complex one's: in its real dtype)."""
    flat = a.reshape(-1)
    if norm_type == 2:  # (a complex array: sum |z|^2, as vdot conjugates its first argument; real dtype)
        return xp.sqrt(xp.vdot(flat, flat).real if flat.dtype.kind == "c" else xp.dot(flat, flat))
    if math.isinf(norm_type):
        return xp.abs(flat).max() if norm_type > 0 else xp.abs(flat).min()
    if norm_type == 1:
        return xp.abs(flat).sum()
    if norm_type == 0:  # the number of nonzero elements, in the norm's dtype, as PyTorch's vector_norm(ord=0)
        return xp.count_nonzero(flat).astype(xp.abs(flat[:0]).dtype)
    return (xp.abs(flat) ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors: _Params, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The norm of the norms of ``tensors`` (the norm of all their elements together), as a 0-d tensor."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    norm_type = float(norm_type)
    # a DTensor's norm is its global value's: every rank takes part, whatever its piece holds
    with quiet():  # an infinite or NaN gradient makes the norm inf or NaN, silently as in PyTorch
        norms = [t._global_norm(norm_type, _norm_of) if _global_norm(t) else _norm_of(t._data, norm_type)
                 for t in tensors if t is not None and (t._data.size or _global_norm(t))]
        if not norms:
            return Tensor._make(xp.asarray(0.0, dtype=xp.float32))
        total = xp.asarray(_norm_of(xp.stack(norms), norm_type))
    if error_if_nonfinite and not xp.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return Tensor._make(total)


def clip_grads_with_norm_(parameters: _Params, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale gradients by min(1, max_norm / (total_norm + 1e-6)), in place."""
    if not isinstance(parameters, Tensor):
        parameters = list(parameters)  # read twice below
    grads = _grads(parameters)
    if not grads:
        return
    # a NaN/inf total norm propagates into the gradients, as in PyTorch (min() would drop a NaN)
    coef = float(xp.minimum(1.0, float(max_norm) / (float(total_norm) + 1e-6)))
    if coef == 1.0:  # multiplying by 1 would change nothing but the version counters
        return
    flat = _flat(parameters)
    with quiet():  # an infinite gradient times a zero coefficient is NaN, silently as in PyTorch
        for a in [flat] if flat is not None else (g._data for g in grads):
            a *= a.dtype.type(coef)
    for g in grads:
        g._bump_version()


def _flat(parameters: _Params):
    """The one array the gradients of ``parameters`` are consecutive views of (their gradient store, see
    autograd/grad_store.py), so one NumPy call covers them all; else None."""
    return flat_grads(parameters) if not isinstance(parameters, Tensor) else None


def _listed(parameters: _Params, what: str, limit) -> _Params:
    """``parameters`` as a list (a generator such as ``model.parameters()`` is read more than once), after
    telling the gradient-edit hooks (the training-loop diagnostics) what is about to be clipped."""
    if not isinstance(parameters, Tensor):
        parameters = list(parameters)
    if _hooks.grad_edit_hooks:
        _hooks.run_grad_edit_hooks(what, [parameters] if isinstance(parameters, Tensor) else parameters, limit)
    return parameters


def clip_grad_norm_(parameters: _Params, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Rescale the gradients of ``parameters`` so their total ``norm_type``-norm is at most ``max_norm``.

    Returns the total norm before clipping (a 0-d tensor). ``foreach`` is accepted for
    compatibility; the computation is already vectorised per gradient, and is one NumPy call
    for all of them when they are one gradient store's, in order. An empty generator (``model.parameters()``
    read once already, by an optimizer's constructor) warns, as PyTorch's, that nothing will be clipped; an empty
    list or other iterator does not.
    """
    started = _trace.start()
    generator = isinstance(parameters, types.GeneratorType)
    parameters = _listed(parameters, "clip_grad_norm_", max_norm)
    if generator and not parameters:
        _warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.")
    grads = _grads(parameters, "clip_grad_norm_")
    flat = _flat(parameters) if not any(_global_norm(g) for g in grads) else None
    total = get_total_norm([Tensor._make(flat)] if flat is not None else grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    _trace.finish("clip_grad_norm_", "optim", started)
    return total


def clip_grad_norm(parameters: _Params, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The deprecated spelling of ``clip_grad_norm_`` (the same in-place clipping), with PyTorch's FutureWarning."""
    _warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                   FutureWarning)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _Params, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value], in place. No gradient at all (no parameters,
    none with a ``.grad``) is PyTorch's RuntimeError, whatever ``foreach`` (its kernels take no empty list),
    where ``clip_grad_norm_`` returns a zero norm."""
    started = _trace.start()
    parameters = _listed(parameters, "clip_grad_value_", clip_value)
    clip_value = float(clip_value)
    grads = _grads(parameters, "clip_grad_value_")
    if not grads:
        raise RuntimeError("Expected !nested_tensorlist[0].empty() to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    for g in grads:
        xp.clip(g._data, -clip_value, clip_value, out=g._data)
        g._bump_version()
    _trace.finish("clip_grad_value_", "optim", started)
