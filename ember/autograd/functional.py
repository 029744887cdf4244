"""``torch.autograd.functional``: Jacobians, Hessians and their products for a function of tensors.

Each function takes ``func`` and ``inputs`` (a tensor or a tuple of tensors; ``func(*inputs)`` returns a tensor
or a tuple of tensors) and returns results shaped as PyTorch's: a single tensor where input and output are single
tensors, tuples where they were tuples (the Jacobian of output ``i`` with respect to input ``j`` is
``result[i][j]``, of shape ``output_i.shape + input_j.shape``). As PyTorch's:

- ``create_graph=False`` (the default) returns results detached (but for ``jacobian``'s forward mode, whose
  columns are the tangents as computed: with grad enabled, differentiable with respect to the inputs and the
  tensors ``func`` captures that require grad); ``True`` records the computation so the results can be
  differentiated again (with respect to ``inputs`` that require grad and to tensors ``func`` captures).
- ``strict=True`` raises where a result would be all zeros because an output does not depend on an input (with
  PyTorch's messages); ``strict=False`` returns the zeros.
- ``hvp`` uses the double-backward trick (PyTorch's does too), so it needs ``func`` twice differentiable; so does
  ``jvp`` with ``create_graph`` or ``strict`` (otherwise it runs ``func`` on forward-mode dual inputs).

``vectorize=True`` computes the reverse-mode Jacobian from one backward pass over the whole standard basis of the
outputs, as PyTorch's vmap does (``autograd.grad``'s ``is_grads_batched``; one pass per row where a backward formula
cannot run batched); ``vectorize=False`` one backward pass per output element. ``strategy="forward-mode"`` (as
PyTorch, it needs ``vectorize=True``) gets all the columns from one forward-mode run of ``func`` under vmap over
the whole basis, as PyTorch's (random operations refused, as PyTorch's); where that cannot apply (a forward-mode
level entered already, an op without a batching rule or without a forward-mode rule of its batched form, such as
the reverse-mode Jacobian inside ``hessian(..., outer_jacobian_strategy="forward-mode")``), columns come one at a
time by the double-backward trick (``ember/autograd/_jvp.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ._jvp import forward_mode_applies, forward_products, graph_duals, tangent_of
from ._rows import basis, basis_row, stack_rows
from .function import NoVmapSupport
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(inp, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """(whether ``inp`` was a tuple, ``inp`` as a tuple of tensors), with PyTorch's TypeError otherwise."""
    is_tuple = isinstance(inp, tuple)
    inp = inp if is_tuple else (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_tuple, inp


def _unpack(res, to_unpack):
    """Undo ``_as_tuple`` on a result: ``to_unpack`` is one flag, or (outer flag, inner flag) for nested tuples."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        to_unpack = to_unpack[0]
    return res if to_unpack else res[0]


def _preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for ``inputs``: a differentiable alias where the caller's graph must reach them
    (``create_graph`` and the input requires grad), else detached (requiring grad if ``need_graph``). A new object
    always, so the inputs are told apart from the same tensors captured by ``func``."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad else inp.detach().requires_grad_(need_graph)
                 for inp in inputs)


def _postprocess(res, create_graph: bool):
    """Results without history unless ``create_graph`` (nested tuples allowed)."""
    if isinstance(res, Tensor):
        return res if create_graph else res.detach()
    return tuple(_postprocess(r, create_graph) for r in res)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_INDEPENDENT = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect "
                "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                "would be violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
               "in a differentiable manner from the input when running in strict mode.",
}


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """Under ``strict``, PyTorch's error for the first of ``tensors`` missing (None) or not requiring grad."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_INDEPENDENT[kind].format(i=i))


def _grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph: bool = False,
          retain_graph: bool | None = None, is_grads_batched: bool = False) -> tuple:
    """``autograd.grad`` skipping outputs that do not require grad (None for every input if none does)."""
    from . import grad

    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True, create_graph=create_graph,
                retain_graph=retain_graph, is_grads_batched=is_grads_batched)


_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros shaped as ``refs`` where ``grads`` has None; under ``strict``, PyTorch's error instead."""
    from .. import zeros_like

    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare_v(v, inputs: tuple, is_inputs_tuple: bool, create_graph: bool, fn_name: str, against: str
               ) -> tuple | None:
    """``v`` as a detached tuple matching ``inputs``; None stays None (``autograd.grad``'s implicit ones), allowed
    only for one single-element tensor in ``inputs``."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
        return v
    if len(inputs) != 1 or inputs[0].nelement() != 1:
        if against == "outputs":
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")
    return None


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), v^T J)``: the vector-Jacobian product, one result per input. ``v`` (one tensor per output)
    may be None only when ``func`` returns a single one-element tensor."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp", "outputs")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        products = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(products, create_graph), is_inputs_tuple))


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), J v)``: the Jacobian-vector product, one result per output. ``v`` (one tensor per input)
    may be None only for a single one-element input. PyTorch's uses the double-backward trick; ember runs ``func``
    on forward-mode dual inputs whose tangents follow the recorded graph (same results: nothing done under
    no_grad enters the product; no backward pass), and uses the trick where the results must be
    differentiable (``create_graph``) and under ``strict`` (whose errors name its stages)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        if not (create_graph or strict) and forward_mode_applies(inputs):
            return _forward_mode_jvp(func, inputs, v, is_inputs_tuple)
        inputs = _preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", "inputs")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        forward = forward_products(outputs, inputs)
        _check_requires_grad(forward.vjps, "grad_inputs", strict)
    tangents = v if v is not None else tuple(i.new_ones(i.shape) for i in inputs)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_in_zeros(forward.push(tangents, create_graph=create_graph), outputs, strict,
                                  create_graph, "back_trick")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(products, create_graph), is_outputs_tuple))


def _forward_mode_jvp(func: Callable, inputs: tuple, v, is_inputs_tuple: bool) -> tuple[Any, Any]:
    """``jvp`` by forward-mode AD (see ``jvp``)."""
    # requiring grad, as PyTorch's inputs to func: func may differentiate inside (the jvp of a gradient)
    inputs = _preprocess(inputs, create_graph=False, need_graph=True)
    v = _prepare_v(v, inputs, is_inputs_tuple, False, "jvp", "inputs")
    tangents = v if v is not None else tuple(i.new_ones(i.shape) for i in inputs)
    with graph_duals(inputs, tangents):
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        products = _fill_in_zeros(tuple(tangent_of(o) for o in outputs), outputs, False, False, "back_trick")
    return (_unpack(_postprocess(outputs, False), is_outputs_tuple),
            _unpack(_postprocess(products, False), is_outputs_tuple))


def _jacobian_forward(func: Callable, inputs, strict: bool, vectorize: bool, records_graph: bool = False):
    """The Jacobian column by column from Jacobian-vector products (``strategy="forward-mode"``): all columns from
    one forward-mode run over the whole basis where it applies (``ember/func/_basis.py``), else one column at a
    time by the double-backward trick. ``records_graph``: ``func`` records a graph of its own (a Hessian's inner
    reverse-mode Jacobian, ``create_graph=True``), so PyTorch's columns, its tangents, have history whatever the
    inputs and grad mode: the columns come one at a time, recorded (one call of ``func``)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                           'not supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    from ..func._basis import Unbatched, forward_columns

    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    # PyTorch's columns are func's tangents as computed: with grad enabled, differentiable with respect to the
    # inputs that require grad (a Hessian's forward-mode outer Jacobian too), which the batched run's are not
    # (its duals stand apart from the inputs' graph): then one column at a time, recorded
    grad_mode = is_grad_enabled()
    differentiable = records_graph or grad_mode and any(inp.requires_grad for inp in inputs)

    unbatched_function = []

    def call(flat: list) -> tuple[list, bool, None]:
        try:
            is_outputs_tuple, outputs = _as_tuple(func(*flat), "outputs of the user-provided function", "jacobian")
        except NoVmapSupport as refused:  # a custom Function that cannot run batched: PyTorch's legacy vmap runs it
            unbatched_function.append(refused)  # (its forward and jvp) as it is: here one column at a time
            raise Unbatched from refused
        return list(outputs), is_outputs_tuple, None

    with set_grad_enabled(True if differentiable else is_grad_enabled()):
        # (differentiable where grad is enabled: columns that depend on a tensor ``func`` captures, which requires
        # grad, keep that history, as PyTorch's tangents do)
        batched = forward_columns(call, inputs, "error", differentiable=grad_mode) \
            if forward_mode_applies(inputs) and not differentiable else None
        if batched is not None:
            columns, is_outputs_tuple = batched.tangents, batched.out_spec
            differentiable = any(col.requires_grad for col in columns)
        elif unbatched_function:
            columns, is_outputs_tuple = _forward_columns_one_by_one(func, inputs)
        else:
            columns, is_outputs_tuple = _columns_one_by_one(func, inputs, differentiable)
        numels = [inp.nelement() for inp in inputs]
        jac = [[_postprocess(part.movedim(0, -1).reshape(col.shape[1:] + inp.shape), differentiable)
                for part, inp in zip(col.split(numels, dim=0), inputs)] for col in columns]
    if records_graph and not grad_mode:  # PyTorch's blocks are then views made under no_grad of its recorded
        with set_grad_enabled(False):    # tangents: they require grad, without a grad_fn
            jac = [[block.view_as(block) for block in row] for row in jac]
    # Lists, not tuples, where outputs or inputs are tuples: PyTorch's forward-mode path returns lists.
    return _unpack(jac, (is_outputs_tuple, is_inputs_tuple))


def _refuse_create_graph_forward(create_graph: bool) -> None:
    """PyTorch's error for a forward-mode Jacobian asked to be differentiable."""
    if create_graph:
        raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                  '`strategy="forward-mode"` are not supported together (yet). Please either '
                                  'set `create_graph=False` or `strategy="reverse-mode"`.')


def _columns_one_by_one(func: Callable, inputs: tuple, differentiable: bool) -> tuple[list, bool]:
    """The forward-mode Jacobian's columns by the double-backward trick, one per input element: per output, a
    tensor ``(n, *output.shape)``; and whether the outputs were a tuple. ``differentiable``: recorded, connected
    to the inputs that require grad."""
    with enable_grad():
        inputs = _preprocess(inputs, create_graph=differentiable, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        push = forward_products(outputs, inputs).push
        total = sum(i.nelement() for i in inputs)
        columns = [_fill_in_zeros(push(basis_row(inputs, k), differentiable), outputs, False, False, "back_trick")
                   for k in range(total)]
    return [stack_rows([c[i] for c in columns], out) for i, out in enumerate(outputs)], is_outputs_tuple


def _forward_columns_one_by_one(func: Callable, inputs: tuple) -> tuple[list, bool]:
    """The forward-mode Jacobian's columns by forward-mode AD, one run of ``func`` per input element (a custom
    Function's ``jvp`` computes its part, as PyTorch's): as ``_columns_one_by_one`` returns them."""
    inputs = _preprocess(inputs, create_graph=False, need_graph=True)
    columns = []
    for k in range(sum(i.nelement() for i in inputs)):
        with graph_duals(inputs, basis_row(inputs, k)):
            is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
            columns.append(_fill_in_zeros(tuple(tangent_of(o) for o in outputs), outputs, False, False, "back_trick"))
    return [stack_rows([c[i] for c in columns], out) for i, out in enumerate(outputs)], is_outputs_tuple


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``result[i][j]`` of shape ``output_i.shape + input_j.shape`` (one
    tensor, or tuples, following the structure of outputs and inputs, as PyTorch's).

    ``strategy="reverse-mode"`` computes one row per output element (a backward pass each), ``"forward-mode"`` one
    column per input element; ``vectorize`` gives the same results either way (see the module docstring).
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        _refuse_create_graph_forward(create_graph)
        return _jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = _jacobian_vectorized(outputs, inputs, create_graph) if vectorize else \
            [_jacobian_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs)]
        return _unpack(_postprocess(tuple(jac), create_graph), (is_outputs_tuple, is_inputs_tuple))


def _jacobian_rows(i: int, out: Tensor, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """Output ``i``'s blocks of the reverse-mode Jacobian (a tuple over the inputs), one backward pass per element
    of ``out`` (``vectorize=False``), with PyTorch's ``strict`` errors."""
    rows: list[list] = [[] for _ in inputs]
    for k in range(out.nelement()):  # row k: the gradient of element k (a one-hot cotangent)
        grads = _grad((out,), inputs, tuple(basis_row((out,), k)), retain_graph=True, create_graph=create_graph)
        for j, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                       "This is not allowed in strict mode.")
                g = inp.new_zeros(inp.shape)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            rows[j].append(g)
    return tuple(stack_rows(r, inp).view(out.shape + inp.shape) for r, inp in zip(rows, inputs))


def _jacobian_vectorized(outputs: tuple, inputs: tuple, create_graph: bool) -> list:
    """The reverse-mode Jacobian's blocks (per output, a tuple over the inputs) from one backward pass over the
    whole standard basis of the outputs (``autograd.grad``'s ``is_grads_batched``), as PyTorch's ``vectorize``."""
    grads = _grad(outputs, inputs, basis(outputs), create_graph=create_graph, retain_graph=True,
                  is_grads_batched=True)
    numels = [out.nelement() for out in outputs]
    total = sum(numels)
    per_input = [(g if g is not None else inp.new_zeros((total, *inp.shape))).split(numels)
                 for g, inp in zip(grads, inputs)]
    return [tuple(rows[i].view(out.shape + inp.shape) for rows, inp in zip(per_input, inputs))
            for i, out in enumerate(outputs)]


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs``: ``result[i][j]`` of shape
    ``input_i.shape + input_j.shape`` (one tensor for a single input), as PyTorch's: the Jacobian of the gradient.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    if outer_jacobian_strategy == "forward-mode":
        _refuse_create_graph_forward(create_graph)
        res = _jacobian_forward(jac_func, inputs, strict, vectorize, records_graph=True)
    else:
        res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize)
    return _unpack(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_gradient(func: Callable, inputs, v, fn_name: str, strict: bool, create_graph: bool):
    """The common start of ``vhp``/``hvp``: (input flags, inputs, v, outputs flags, outputs, recorded gradient)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, fn_name, "inputs")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
        _check_requires_grad(outputs, "outputs", strict)
        if is_outputs_tuple or not isinstance(outputs[0], Tensor):
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if outputs[0].nelement() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                               "element")
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), v^T H)``: the vector-Hessian product of a function returning one one-element tensor."""
    is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_function_gradient(
        func, inputs, v, "vhp", strict, create_graph)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_in_zeros(_grad(jac, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                                  "double_back")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(products, create_graph), is_inputs_tuple))


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), H v)``: the Hessian-vector product of a function returning one one-element tensor, by the
    double-backward trick (as PyTorch's)."""
    from .. import zeros_like

    is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_function_gradient(
        func, inputs, v, "hvp", strict, create_graph)
    with enable_grad():
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_in_zeros(_grad(double_back, grad_jac, v, create_graph=create_graph), inputs, strict,
                                  create_graph, "double_back_trick")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(products, create_graph), is_inputs_tuple))
