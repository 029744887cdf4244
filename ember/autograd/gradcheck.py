"""``torch.autograd.gradcheck``: backward's gradients against finite differences.

``gradcheck(func, inputs)`` compares, for every floating-point input that requires grad and every output,
the Jacobian built from backward (one ``autograd.grad`` per output element) with the one built from central
differences ``(f(x + eps) - f(x - eps)) / (2 eps)``, element by element (``allclose`` with ``atol`` and
``rtol``), and that backward gives the same result twice (``nondet_tol``). ``fast_mode=True`` compares one
random projection ``u^T J v`` instead of the whole Jacobian, as PyTorch's fast mode.

A mismatch raises ``GradcheckError`` (a RuntimeError) with PyTorch's message, or returns False with
``raise_exception=False``. As in PyTorch, inputs should be float64: float32's rounding is larger than the
tolerances (a warning says so).

Differences from PyTorch: complex inputs and outputs are not checked; ``gradgradcheck``, and the checks that
need forward-mode AD or ``vmap`` (``check_forward_ad``, ``check_batched_grad``, ``check_batched_forward_grad``),
need gradients of gradients, which ember does not compute yet: they raise NotImplementedError.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

from .._backend import xp
from .._tensor import Tensor
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    """Error raised by ``gradcheck`` (PyTorch's type)."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(func: Callable, inputs: tuple) -> list[Tensor]:
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]


def _checked_inputs(inputs: tuple) -> list[int]:
    """Indices of the inputs gradcheck differentiates (floating point, requires_grad), warning for non-float64."""
    checked = []
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad:
            if t._data.dtype.kind == "c":
                raise NotImplementedError("gradcheck of complex inputs is not implemented in ember")
            if t.dtype.name != "float64":
                warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex.", stacklevel=3)
            checked.append(i)
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    return checked


def _numerical_column(func: Callable, inputs: tuple, t: Tensor, flat_index, direction, eps: float) -> list:
    """d outputs / d input along ``direction`` (one element when ``flat_index`` is given), by central differences."""
    data = t._data.reshape(-1) if t._data.flags.c_contiguous else None
    if data is None:
        raise ValueError("gradcheck needs contiguous input tensors")
    original = data.copy()
    step = xp.zeros_like(data)
    if flat_index is not None:
        step[flat_index] = eps
    else:
        step[...] = eps * direction
    with no_grad():
        data[...] = original + step
        plus = [o._data.astype(xp.float64).ravel() for o in _outputs(func, inputs)]
        data[...] = original - step
        minus = [o._data.astype(xp.float64).ravel() for o in _outputs(func, inputs)]
        data[...] = original
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _vjp(outputs: list[Tensor], k: int, seed, inputs: tuple, checked: list[int]):
    """The gradients of ``sum(seed * outputs[k])`` with respect to the checked inputs (zeros where unused)."""
    from . import grad as autograd_grad

    out = outputs[k]
    grads = autograd_grad(out, [inputs[i] for i in checked], grad_outputs=Tensor._make(seed.reshape(out.shape)),
                          retain_graph=True, allow_unused=True)
    return [xp.zeros(inputs[i]._data.size) if g is None else g._data.astype(xp.float64).ravel()
            for i, g in zip(checked, grads)]


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True when backward's gradients of ``func(*inputs)`` match finite differences (see the module docstring)."""
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck's check_forward_ad, check_batched_grad and check_batched_forward_grad "
                                  "need forward-mode AD and vmap, which ember does not have")
    inputs = _as_tuple(inputs)
    checked = _checked_inputs(inputs)
    outputs = _outputs(func, inputs)
    if not check_backward_ad:
        return True
    if fast_mode:
        return _fast_check(func, inputs, outputs, checked, eps, atol, rtol, raise_exception)
    for j, i in enumerate(checked):
        t = inputs[i]
        numerical = xp.stack([xp.concatenate(_numerical_column(func, inputs, t, e, None, eps))
                              for e in range(t._data.size)]) if t._data.size else None
        analytical_rows = []
        for k, out in enumerate(outputs):
            if not out.requires_grad:
                analytical_rows.append(xp.zeros((t._data.size, out._data.size)))
                continue
            rows = []
            for e in range(out._data.size):
                seed = xp.zeros(out._data.size, out._data.dtype)
                seed[e] = 1
                first = _vjp(outputs, k, seed, inputs, checked)[j]
                again = _vjp(outputs, k, seed, inputs, checked)[j]
                if xp.abs(first - again).max(initial=0.0) > nondet_tol:
                    return _fail("Backward is not reentrant, i.e., running backward with same input and "
                                 "grad_output multiple times gives different values, although analytical "
                                 "gradient matches numerical gradient.The tolerance for nondeterminism was "
                                 f"{nondet_tol}.\n", raise_exception)
                rows.append(first)
            analytical_rows.append(xp.stack(rows, axis=1) if rows else xp.zeros((t._data.size, 0)))
        if numerical is None:
            continue
        start = 0
        for k, out in enumerate(outputs):
            n = out._data.size
            num, ana = numerical[:, start:start + n], analytical_rows[k]
            start += n
            if not xp.allclose(ana, num, rtol=rtol, atol=atol):
                return _fail(f"Jacobian mismatch for output {k:d} with respect to input {i:d},\n"
                             f"numerical:{Tensor._make(num)!r}\nanalytical:{Tensor._make(ana)!r}\n", raise_exception)
    return True


def _fast_check(func, inputs, outputs, checked, eps, atol, rtol, raise_exception) -> bool:
    """PyTorch's fast mode: one random projection ``u^T J v`` per (input, output) pair."""
    rng = xp.random.default_rng(0)
    for j, i in enumerate(checked):
        t = inputs[i]
        v = rng.standard_normal(t._data.size)
        numerical = _numerical_column(func, inputs, t, None, v, eps)
        for k, out in enumerate(outputs):
            u = rng.standard_normal(out._data.size).astype(out._data.dtype)
            num = float(u.astype(xp.float64) @ numerical[k])
            ana = float(_vjp(outputs, k, u, inputs, checked)[j] @ v) if out.requires_grad else 0.0
            if not abs(ana - num) <= atol + rtol * abs(num):
                return _fail(f"Jacobian mismatch for output {k:d} with respect to input {i:d},\n"
                             f"numerical:{num}\nanalytical:{ana}\n\nThe above quantities relating the numerical "
                             "and analytical jacobians are computed in fast mode. See: "
                             "https://github.com/pytorch/pytorch/issues/53876 for more background about fast mode.",
                             raise_exception)
    return True


def gradgradcheck(func: Callable, inputs, grad_outputs: Sequence | None = None, **kwargs) -> bool:
    """Checks gradients of gradients: needs ``create_graph=True``, which ember does not support yet."""
    raise NotImplementedError("torch.autograd.gradgradcheck is not implemented in ember: it differentiates "
                              "gradients (create_graph=True), which ember does not compute yet")
