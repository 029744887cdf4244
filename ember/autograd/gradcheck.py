"""``torch.autograd.gradcheck``: backward's gradients against finite differences.

``gradcheck(func, inputs)`` compares, for every floating-point input that requires grad and every output,
the Jacobian built from backward (one ``autograd.grad`` per output element, for all inputs at once, run twice
to check that backward is reentrant, as PyTorch's) with the one built from central
differences ``(f(x + eps) - f(x - eps)) / (2 eps)``, element by element (``allclose`` with ``atol`` and
``rtol``), that backward gives the same result twice (``nondet_tol``), and, as PyTorch's, that zero output
gradients give zero input gradients (and, ``check_undefined_grad``, that backward takes undefined ones: zeros
here, ember having no undefined gradient). ``fast_mode=True`` compares one
random projection ``u^T J v`` instead of the whole Jacobian, as PyTorch's fast mode.

A mismatch raises ``GradcheckError`` (a RuntimeError) with PyTorch's message, or returns False with
``raise_exception=False``. As in PyTorch, inputs should be float64: float32's rounding is larger than the
tolerances (a warning says so).

``gradgradcheck(func, inputs, grad_outputs)`` is ``gradcheck`` of the first-order gradients: of the function
``(*inputs, *grad_outputs) -> autograd.grad(func(*inputs), inputs, grad_outputs, create_graph=True)``, so the
second-order gradients backward records are compared with finite differences of the first-order ones.

``check_forward_ad`` compares, as PyTorch's, the Jacobian forward-mode AD gives (one Jacobian-vector product per
input element; fast mode: one along a random direction) with the same finite differences, so gradgradcheck's
``check_fwd_over_rev`` checks forward mode over the first-order gradients. ``check_batched_grad`` compares, for
each output, ``vmap`` of backward over two stacked random grad_outputs with the two backward passes run one at a
time, as PyTorch's (a wrong batching rule, a custom Function's ``vmap``, fails it); ``check_batched_forward_grad``
(with ``check_forward_ad``) compares, for each input, ``vmap`` of forward mode over two stacked random tangents
with the two Jacobian-vector products one at a time.

Differences from PyTorch: complex inputs and outputs are not checked. gradgradcheck's random ``grad_outputs`` are
PyTorch's: uniform in [-1, 1], drawn from the global generator (as ``torch.testing.make_tensor`` draws them), so a
seeded program sees the same grad_outputs and the same random numbers after the check as under PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._backend import xp
from .._tensor import Tensor
from .._warnings import warn_in
from .grad_mode import enable_grad, no_grad


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
                # PyTorch's names its gradcheck module (issued from its own frame), at the caller's line here
                warn_in("torch.autograd.gradcheck", f"Input #{i} requires gradient and is not a double precision "
                        "floating point or complex. This check will likely fail if all the inputs are not of double "
                        "precision floating point or complex.")
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
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    inputs = _as_tuple(inputs)
    checked = _checked_inputs(inputs)
    outputs = _outputs(func, inputs)
    if check_forward_ad and not _forward_check(func, inputs, outputs, checked, eps, atol, rtol, raise_exception,
                                               fast_mode):
        return False
    if check_batched_forward_grad and not _batched_forward_grad_check(func, inputs, raise_exception):
        return False
    if not check_backward_ad:
        return True
    check = _fast_check if fast_mode else _slow_check
    if not check(func, inputs, outputs, checked, eps, atol, rtol, raise_exception, nondet_tol):
        return False
    differentiable = [o for o in outputs if o.requires_grad]
    if check_batched_grad:
        for k, out in enumerate(outputs):
            if out.requires_grad and not _batched_grad_check(out, k, inputs, checked, raise_exception):
                return False
    if not _backward_multiplied_by_grad_output(differentiable, inputs, checked, raise_exception):
        return False
    return not check_undefined_grad or _zero_output_grads_give_zero(func, inputs, checked, raise_exception)


def _jvp_columns(func: Callable, inputs: tuple, checked: list[int], i: int, tangent) -> list:
    """Forward-mode AD's derivative of every output along ``tangent`` of input ``i`` (the other checked inputs'
    tangents zero), as float64 rows concatenated over the outputs' elements (zeros where an output has none)."""
    from . import forward_ad

    with forward_ad.dual_level():
        duals = list(inputs)
        for j in checked:  # (as PyTorch's: every checked input dual, detached, requiring grad as it did)
            t = inputs[j]
            direction = tangent.reshape(t._data.shape) if j == i else xp.zeros_like(t._data)
            duals[j] = forward_ad.make_dual(t.detach(), Tensor._make(direction))
        columns = []
        for out in _outputs(func, tuple(duals)):
            derivative = forward_ad.unpack_dual(out).tangent
            columns.append(xp.zeros(out._data.size) if derivative is None
                           else derivative._data.astype(xp.float64).ravel())
    return columns


def _forward_check(func, inputs, outputs, checked, eps, atol, rtol, raise_exception, fast_mode) -> bool:
    """PyTorch's ``check_forward_ad``: forward mode's Jacobian against central differences, whole (one
    Jacobian-vector product per input element) or, in fast mode, along one random direction ``J v``."""
    rng = xp.random.default_rng(0)
    for i in checked:
        t = inputs[i]
        if fast_mode:
            v = rng.standard_normal(t._data.size)
            numerical = _numerical_column(func, inputs, t, None, v, eps)
            analytical = _jvp_columns(func, inputs, checked, i, v.astype(t._data.dtype))
            for k, (num, ana) in enumerate(zip(numerical, analytical)):
                if not xp.allclose(ana, num, rtol=rtol, atol=atol):
                    return _fail(f"Jacobian computed with forward mode mismatch for output {k:d} with respect to "
                                 f"input {i:d},\nnumerical:{Tensor._make(num)!r}\nanalytical:{Tensor._make(ana)!r}\n",
                                 raise_exception)
            continue
        if not t._data.size:
            continue
        numerical = _numerical_jacobian(func, inputs, t, eps)
        rows = []
        for e in range(t._data.size):
            basis = xp.zeros(t._data.size, t._data.dtype)
            basis[e] = 1
            rows.append(xp.concatenate(_jvp_columns(func, inputs, checked, i, basis)))
        analytical = xp.stack(rows)
        start = 0
        for k, out in enumerate(outputs):
            n = out._data.size
            num, ana = numerical[:, start:start + n], analytical[:, start:start + n]
            if not xp.allclose(ana, num, rtol=rtol, atol=atol):
                return _fail(f"Jacobian computed with forward mode mismatch for output {k:d} with respect to input "
                             f"{i:d},\nnumerical:{Tensor._make(num)!r}\nanalytical:{Tensor._make(ana)!r}\n",
                             raise_exception)
            start += n
    return True


def _workarounds(flag: str, opinfo: str) -> str:
    """The paragraph PyTorch's batched-gradient failures share: how a test turns the check off."""
    return f"""If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `{flag}=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have {opinfo}"""


_FAILED_BATCHED_GRAD = """gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

""" + _workarounds("check_batched_grad", "`check_batched_grad=False` and/or `check_batched_gradgrad=False`.") + """

If you're modifying an existing operator that supports batched grad computation,
or wish to make a new operator work with batched grad computation, please read
the following.

To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation. The most common failure case is if there is a 'vmap-incompatible
operation' in the backward pass. Please see
NOTE: [How to write vmap-compatible backward formulas]
in the codebase for an explanation of how to fix this."""


def _batched_grad_check(output: Tensor, k: int, inputs: tuple, checked: list[int], raise_exception: bool) -> bool:
    """PyTorch's ``check_batched_grad`` for output ``k``: ``vmap`` of backward over two stacked random
    grad_outputs against the two backward passes one at a time (PyTorch's messages)."""
    import warnings

    from .._creation import randn_like
    from ..ops.shape import stack
    from . import grad as autograd_grad

    diff_inputs = [inputs[i] for i in checked]

    def vjp(v):
        grads = autograd_grad(output, diff_inputs, v, retain_graph=True, allow_unused=True)
        return tuple(Tensor._make(xp.zeros(t._data.shape, t._data.dtype)) if g is None else g
                     for g, t in zip(grads, diff_inputs))

    grad_outputs = [randn_like(output) for _ in range(2)]
    expected = [stack(shards) for shards in zip(*(vjp(g) for g in grad_outputs))]
    with warnings.catch_warnings():  # (an op's per-example fallback's warning, as PyTorch's check silences it)
        warnings.filterwarnings("ignore", message="There is a performance drop")
        try:  # (vmap of backward: the batched walk, every formula on the batch of cotangents at once)
            batched = autograd_grad(output, diff_inputs, stack(grad_outputs), retain_graph=True, allow_unused=True,
                                    is_grads_batched=True)
            result = [stack([Tensor._make(xp.zeros(t._data.shape, t._data.dtype))] * 2) if g is None else g
                      for g, t in zip(batched, diff_inputs)]
        except RuntimeError as e:
            if not raise_exception:
                return False
            raise GradcheckError(f"While computing batched gradients, got: {e}\n\n{_FAILED_BATCHED_GRAD}") from e
    for j, (res, exp) in enumerate(zip(result, expected)):
        if not xp.allclose(res._data, exp._data):
            return _fail(f"For output {k} and input {j}:\n\n{_FAILED_BATCHED_GRAD}\n\nGot:\n{res!r}\n\n"
                         f"Expected:\n{exp!r}", raise_exception)
    return True


_FAILED_BATCHED_FORWARD_GRAD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled automatically when both `check_batched_grad=True`
and `check_forward_ad=True`, but can be disabled in the following ways
dependong on how the test was invoked (via a test that calls gradcheck
directly or via an autogenerated test).

""" + _workarounds("check_batched_forward_grad", "`check_batched_forward_grad=False`") + "\n"


def _batched_forward_grad_check(func: Callable, inputs: tuple, raise_exception: bool) -> bool:
    """PyTorch's ``check_batched_forward_grad``: for each floating input that requires grad, forward mode along two
    stacked random tangents run once under ``vmap`` (the input a dual whose primal is expanded, without a copy, to
    the two examples and whose tangent is the stack; the other inputs detached) against the two Jacobian-vector
    products one at a time (an output without a tangent: zeros), with PyTorch's messages (its mismatch message
    names the output's index as both output and input, as PyTorch's does)."""
    import warnings

    from .._creation import randn_like, zeros
    from ..func._vmap import internal_vmap
    from ..ops.shape import stack
    from . import forward_ad

    def derivatives(outputs) -> tuple:
        found = []
        for out in _as_tuple(outputs):
            if out is not None:
                primal, derivative = forward_ad.unpack_dual(out)
                found.append(zeros((), dtype=primal.dtype).expand(primal.shape) if derivative is None else derivative)
        return tuple(found)

    for i, current in enumerate(inputs):
        if not (isinstance(current, Tensor) and current.requires_grad and current._data.dtype.kind in "fc"):
            continue
        others = tuple(a.detach() if isinstance(a, Tensor) else a for a in inputs)

        def call(dual: Tensor, i: int = i, others: tuple = others):
            return func(*others[:i], dual, *others[i + 1:])

        tangents = [randn_like(current) for _ in range(2)]
        expected = []
        for tangent in tangents:
            with forward_ad.dual_level():
                expected.append(derivatives(call(forward_ad.make_dual(current.detach(), tangent))))
        expected = [stack(shards) for shards in zip(*expected)]
        with warnings.catch_warnings():  # (an op's per-example fallback's warning, as PyTorch's check silences it)
            warnings.filterwarnings("ignore", message="There is a performance drop")
            try:
                with forward_ad.dual_level():
                    batch = forward_ad.make_dual(current.detach().unsqueeze(0).expand(2, *current.shape),
                                                 stack(tangents))
                    # (the outputs' tangents read off the batched outputs, as ``func._basis`` reads a Jacobian's)
                    result = derivatives(internal_vmap(call)(batch))
            except RuntimeError as e:
                if not raise_exception:
                    return False
                raise GradcheckError(f"While computing batched gradients, got: {e}\n\n{_FAILED_BATCHED_FORWARD_GRAD}"
                                     ) from e
        for k, (res, exp) in enumerate(zip(result, expected)):
            if not xp.allclose(res._data, exp._data):
                return _fail(f"For output {k} and input {k}:\n\n{_FAILED_BATCHED_FORWARD_GRAD}\n\nGot:\n{res!r}\n\n"
                             f"Expected:\n{exp!r}".strip(), raise_exception)
    return True


def _backward_multiplied_by_grad_output(outputs: list[Tensor], inputs: tuple, checked: list[int],
                                        raise_exception: bool) -> bool:
    """PyTorch's check that backward multiplies by grad_output: zero output gradients give every checked input a
    zero gradient, then of its dtype and size. An input the outputs do not use (its gradient None) passes, as in
    PyTorch: nothing flows to it, so there is nothing to multiply."""
    from . import grad as autograd_grad

    grads = autograd_grad(outputs, [inputs[i] for i in checked], [Tensor._make(xp.zeros_like(o._data))
                                                                  for o in outputs], allow_unused=True)
    for g, i in zip(grads, checked):
        if g is None:
            continue
        problem = "backward not multiplied by grad_output" if xp.any(g._data != 0) else \
            "grad is incorrect type" if g.dtype != inputs[i].dtype else \
            "grad is incorrect size" if g.shape != inputs[i].shape else None
        if problem is not None:
            return _fail(problem, raise_exception)
    return True


def _zero_output_grads_give_zero(func: Callable, inputs: tuple, checked: list[int], raise_exception: bool) -> bool:
    """PyTorch's ``check_undefined_grad``: backward runs when its outputs' gradients are undefined (all at once,
    then, for several outputs, one at a time) and gives inputs' gradients that are None or zero. ember has no
    undefined gradient: zeros stand for them, which is what a custom Function's backward receives in PyTorch too
    (``ctx.set_materialize_grads``' default)."""
    from . import grad as autograd_grad

    n_outputs = len([o for o in _outputs(func, inputs) if o.requires_grad])
    for _ in range(1 + (n_outputs if n_outputs > 1 else 0)):  # (PyTorch's cases; each one a new forward)
        with enable_grad():
            outs = [o for o in _outputs(func, inputs) if o.requires_grad]
        try:
            grads = autograd_grad(outs, [inputs[i] for i in checked], [Tensor._make(xp.zeros_like(o._data))
                                                                       for o in outs], allow_unused=True)
        except RuntimeError as e:
            if not raise_exception:
                return False
            raise GradcheckError("Expected backward function to handle undefined output grads. Please look at "
                                 '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"') from e
        if any(g is not None and xp.any(g._data != 0) for g in grads):
            return _fail("Expected all input grads to be undefined or zero when all output grads are undefined or "
                         'zero. Please look at "Notes about undefined output gradients" in '
                         '"tools/autograd/derivatives.yaml"', raise_exception)
    return True


def _slow_check(func, inputs, outputs, checked, eps, atol, rtol, raise_exception, nondet_tol) -> bool:
    """The whole Jacobians compared element by element."""
    # As PyTorch's: the numerical Jacobians first, then per output its analytical one (one backward per output
    # element, for every checked input at once, run twice for the reentrancy check) compared input by input.
    numerical = [_numerical_jacobian(func, inputs, inputs[i], eps) for i in checked]
    start = 0
    for k, out in enumerate(outputs):
        n = out._data.size
        if out.requires_grad:
            columns = []
            for e in range(n):
                seed = xp.zeros(n, out._data.dtype)
                seed[e] = 1
                columns.append(_reentrant_vjp(outputs, k, seed, inputs, checked, nondet_tol, raise_exception))
                if columns[-1] is None:
                    return False
            analytical = [xp.stack([c[j] for c in columns], axis=1) if n else xp.zeros((inputs[i]._data.size, 0))
                          for j, i in enumerate(checked)]
        else:
            analytical = [xp.zeros((inputs[i]._data.size, n)) for i in checked]
        for j in range(len(checked)):
            if numerical[j] is None:
                continue
            num, ana = numerical[j][:, start:start + n], analytical[j]
            if not xp.allclose(ana, num, rtol=rtol, atol=atol):  # (the input counted among the checked, as PyTorch's)
                return _fail(f"Jacobian mismatch for output {k:d} with respect to input {j:d},\n"
                             f"numerical:{Tensor._make(num)!r}\nanalytical:{Tensor._make(ana)!r}\n", raise_exception)
        start += n
    return True


def _numerical_jacobian(func: Callable, inputs: tuple, t: Tensor, eps: float):
    """d outputs / d ``t`` by central differences: one row per element of ``t``, the outputs' elements along it
    (None for an empty ``t``)."""
    if not t._data.size:
        return None
    return xp.stack([xp.concatenate(_numerical_column(func, inputs, t, e, None, eps)) for e in range(t._data.size)])


def _reentrant_vjp(outputs: list[Tensor], k: int, seed, inputs: tuple, checked: list[int], nondet_tol: float,
                   raise_exception: bool) -> list | None:
    """``_vjp`` run twice, as PyTorch's check that backward gives the same result with the same grad_output: its
    result, or PyTorch's error (None with ``raise_exception=False``) where the two differ by more than
    ``nondet_tol``."""
    first = _vjp(outputs, k, seed, inputs, checked)
    again = _vjp(outputs, k, seed, inputs, checked)
    if any(xp.abs(a - b).max(initial=0.0) > nondet_tol for a, b in zip(first, again)):
        _fail("Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
              "gives different values, although analytical gradient matches numerical gradient.The tolerance for "
              f"nondeterminism was {nondet_tol}.\n", raise_exception)
        return None
    return first


def _fast_check(func, inputs, outputs, checked, eps, atol, rtol, raise_exception, nondet_tol) -> bool:
    """PyTorch's fast mode: one projection ``v^T J u`` per (input, output) pair, from one finite difference per input
    along ``u`` and one backward per output with grad_output ``v`` (twice, for the reentrancy check), compared input
    by input, output by output within (the first mismatch in that order is the one named), with atol scaled by
    ``sum(u) sum(v)``, as PyTorch's. ``u`` and ``v`` are PyTorch's: uniform draws of a fresh generator (its default
    seed; the global one untouched), first one per input then one per output, each of unit norm."""
    from ..random import Generator

    generator = Generator()
    directions = [_unit_vector(inputs[i], generator) for i in checked]
    projections = [_unit_vector(out, generator) for out in outputs]
    numerical = [_numerical_column(func, inputs, inputs[i], None, u, eps) for i, u in zip(checked, directions)]
    vjps = []
    for k, (out, v) in enumerate(zip(outputs, projections)):
        vjps.append(_reentrant_vjp(outputs, k, v, inputs, checked, nondet_tol, raise_exception)
                    if out.requires_grad else [xp.zeros(inputs[i]._data.size) for i in checked])
        if vjps[-1] is None:
            return False
    for j, u in enumerate(directions):
        for k, v in enumerate(projections):
            num = float((v.astype(xp.float64) * numerical[j][k]).sum())
            ana = float((vjps[k][j] * u).sum())
            scaled_atol = atol * float(u.sum()) * float(v.sum())
            if not abs(ana - num) <= scaled_atol + rtol * abs(num):
                return _fail(f"Jacobian mismatch for output {k:d} with respect to input {j:d},\n"
                             f"numerical:{num}\nanalytical:{ana}\n"
                             + _slow_mode_report(func, inputs, outputs, checked, j, k, eps, atol, rtol),
                             raise_exception)
    return True


def _unit_vector(t: Tensor, generator):
    """PyTorch's fast-mode direction for ``t``: ``t.numel()`` uniform float32 draws of ``generator`` in ``t``'s
    dtype, divided by their norm."""
    from .._creation import rand

    vec = rand(t._data.size, generator=generator)._data.astype(t._data.dtype)
    return vec / xp.linalg.norm(vec)


# PyTorch's words where a fast-mode mismatch is within tolerance element by element
_FAST_FAIL_SLOW_OK = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


def _slow_mode_report(func, inputs, outputs, checked, j, k, eps, atol, rtol) -> str:
    """What PyTorch's fast-mode failure adds: the Jacobian of output ``k`` with respect to checked input ``j``
    computed in slow mode, numerical and analytical, their largest difference, and whether slow mode would pass."""
    start = sum(o._data.size for o in outputs[:k])
    n = outputs[k]._data.size
    t = inputs[checked[j]]
    numerical = _numerical_jacobian(func, inputs, t, eps)
    numerical = xp.zeros((t._data.size, n)) if numerical is None else numerical[:, start:start + n]
    analytical = xp.zeros((t._data.size, n))
    if outputs[k].requires_grad:
        for e in range(n):
            seed = xp.zeros(n, outputs[k]._data.dtype)
            seed[e] = 1
            analytical[:, e] = _vjp(outputs, k, seed, inputs, checked)[j]
    dtype = t._data.dtype
    num, ana = Tensor._make(numerical.astype(dtype)), Tensor._make(analytical.astype(dtype))
    difference = Tensor._make(xp.abs(numerical - analytical).max(initial=0.0).astype(dtype))
    report = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
              "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
              "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
              f"Numerical:\n {num}\nAnalytical:\n{ana}\n\n"
              f"The max per-element difference (slow mode) is: {difference}.\n")
    if xp.allclose(analytical, numerical, rtol=rtol, atol=atol):
        report += _FAST_FAIL_SLOW_OK
    return report


def gradgradcheck(func: Callable, inputs, grad_outputs: Sequence | None = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """True when the second-order gradients of ``func(*inputs)`` match finite differences of its first-order
    gradients (see the module docstring). ``grad_outputs`` (one per output that requires grad) default to random
    tensors that require grad, so that the gradients' dependence on them is checked too."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        from .._creation import empty
        from .._dtype import float64

        # From the global generator, one output after another, as PyTorch's make_tensor(low=-1, high=1) draws them
        # (a seeded program's later random numbers depend on it).
        outputs = [o for o in _outputs(func, inputs) if o.requires_grad]
        grad_outputs = tuple(
            empty(tuple(o.shape), dtype=o.dtype if o.dtype.is_floating_point or o.dtype.is_complex
                  else float64).uniform_(-1, 1)
            .requires_grad_()
            for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_inputs = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    diff_args = {i for i, t in enumerate(inputs + grad_outputs) if isinstance(t, Tensor) and t.requires_grad}

    def first_order(*args):
        from . import grad as autograd_grad

        with enable_grad():  # (gradcheck's finite differences run the function under no_grad)
            # (forward mode's check gives detached dual tensors: requiring grad again, as PyTorch's)
            args = tuple(a.requires_grad_() if k in diff_args and not a.requires_grad else a
                         for k, a in enumerate(args))
            ins = args[:len(args) - n_out]
            outs = [o for o in _outputs(func, ins) if o.requires_grad]
            grads = autograd_grad(outs, [ins[i] for i in diff_inputs], list(args[len(args) - n_out:]),
                                  create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_backward_ad=check_rev_over_rev, fast_mode=fast_mode,
                     masked=masked, check_batched_grad=check_batched_grad, check_forward_ad=check_fwd_over_rev)
