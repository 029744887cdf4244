"""Module backward hooks: ``register_full_backward_hook`` / ``..._pre_hook`` and the deprecated
``register_backward_hook`` (called from ``Module.__call__``).

Full hooks work as PyTorch's: a module call with such hooks passes its positional tensor arguments, and then its
outputs, through an identity node (``BackwardHookFunction``). In backward the outputs' node receives the
gradients w.r.t. the module's outputs (``grad_output``; pre-hooks may replace them), the inputs' node the
gradients w.r.t. its inputs (``grad_input``); each hook is called once there, ``hook(module, grad_input,
grad_output)``, and what it returns flows on instead. The identity's outputs share their inputs' storage and
version counter (as PyTorch's views of them); changing one in place while recording is PyTorch's error
(``Node.returns_inputs``, checked by ``check_inplace``).

The deprecated hooks are PyTorch's too: a post-hook on the node that made the module's (first) output, so they
see that last op's gradients; ``warn_non_full`` warns where PyTorch does that they miss some.
"""

from __future__ import annotations

from ... import _warnings
from ..._backend import xp
from ..._tensor import Tensor
from ...autograd import forward_ad
from ...autograd.grad_mode import _GradState
from ...autograd.graph import Node
from ...autograd.recorded import RecordedArray, check_hook_value, hook_argument
from ...return_types import rebuilt


class BackwardHookFunction(Node):
    """Identity on a module's tensor arguments (or outputs); its backward calls ``on_backward(grads)``: one
    gradient per tensor (None where none arrived), giving the gradients to pass on."""

    returns_inputs = True

    def name(self) -> str:
        return "BackwardHookFunctionBackward"

    def backward(self, *grads):
        if self.materialize:  # a tensor that got no gradient (or needs none): zeros, as PyTorch's Functions
            grads = [xp.zeros(s, dtype=d) if g is None else g for g, (s, d) in zip(grads, self.metas)]
        return self.on_backward(grads)

    @classmethod
    def wrap(cls, tensors: list, on_backward, materialize: bool) -> list:
        """``tensors`` with those that require grad replaced by outputs of one new node (sharing storage and
        version counter); the others unchanged, as PyTorch's non-differentiable outputs."""
        node = cls()
        node.on_backward = on_backward
        node.materialize = node.runs_without_gradient = materialize
        node.num_outputs = len(tensors)
        needs = tuple(t._requires_grad for t in tensors)
        node.needs_input_grad = needs
        node.metas = [(t._data.shape, t._data.dtype) for t in tensors]
        outs = []
        for i, t in enumerate(tensors):
            if not needs[i]:
                outs.append(t)
                continue
            out = Tensor._make(t._data, node, i)
            out._vc = t._vc
            if forward_ad.has_tangent(t):
                forward_ad.share_tangent(t, out)
            outs.append(out)
        node._link(tensors, needs, [o for o, n in zip(outs, needs) if n])
        return outs


def _tensor(grad):
    return None if grad is None else hook_argument(grad)


def _passed_on(value):
    """A hook's gradient (a tensor) in the form the backward walk carries (recorded under create_graph)."""
    if value is None:
        return None
    return RecordedArray(value) if _GradState.higher_order else value._data


def _packed(indices: list, values, size: int) -> tuple:
    """A tuple of ``size`` Nones with ``values`` at ``indices`` (non-tensor arguments get None)."""
    res = [None] * size
    for i, v in zip(indices, values):
        res[i] = v
    return tuple(res)


def _check_returned(hook, kind: str, out, expected: tuple, what: str) -> tuple:
    if len(out) != len(expected):
        raise RuntimeError(f"Backward {kind} returned an invalid number of {what}, got {len(out)}, but expected "
                           f"{len(expected)}")
    for i, (new, old) in enumerate(zip(out, expected)):
        if isinstance(new, Tensor) and old is not None and new.shape != old.shape:
            name = getattr(hook, "__name__", type(hook).__name__)
            raise RuntimeError(f"hook '{name}' has changed the size of value: it returned {what}[{i}] of shape "
                               f"{list(new.shape)} where the gradient has shape {list(old.shape)}")
        if isinstance(new, Tensor) and old is not None:
            check_hook_value(hook, old, new)
    return tuple(out)


class BackwardHook:
    """One module call's full backward hooks: wraps its arguments and outputs, and links the gradient of its
    outputs (seen first in backward) with that of its inputs (seen last), where the hooks are called."""

    def __init__(self, module, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = self.n_outputs = -1
        self.input_index: list | None = None
        self.output_index: list | None = None

    @staticmethod
    def _wrap(args, on_backward, materialize: bool):
        """(args with their top-level tensors wrapped, the tensors' positions), or (args, None) when none
        requires grad or grad mode is off (nothing to hook)."""
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (_GradState.enabled and any(args[i]._requires_grad for i in index)):
            return args, None
        wrapped = BackwardHookFunction.wrap([args[i] for i in index], on_backward, materialize)
        items = list(args)
        for i, t in zip(index, wrapped):
            items[i] = t
        return (tuple(items) if type(args) is tuple else rebuilt(type(args), items)), index

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, self.input_index = self._wrap(args, self._input_backward, True)
        return args

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        self.n_outputs = len(outs)
        outs, self.output_index = self._wrap(outs, self._output_backward, False)
        return outs[0] if single else outs

    def _output_backward(self, grads) -> tuple:
        """The outputs' gradients arrive: pre-hooks may replace them; kept for the hooks (called at the inputs'
        node), or the hooks called now when no input requires grad."""
        grad_outputs = _packed(self.output_index, [_tensor(g) for g in grads], self.n_outputs)
        for hook in self.pre_hooks:
            out = hook(self.module, grad_outputs)
            if out is not None:
                grad_outputs = _check_returned(hook, "pre hook", out, grad_outputs, "grad_output")
        self.grad_outputs = grad_outputs
        if self.input_index is None:
            _warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                           "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                           "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                           "details.")
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(_passed_on(grad_outputs[i]) for i in self.output_index)

    def _input_backward(self, grads) -> tuple:
        """The inputs' gradients arrive: each hook is called and may replace them."""
        if self.grad_outputs is None:  # reached without passing the outputs (a second-order backward): no hooks
            return tuple(grads)
        grad_inputs = _packed(self.input_index, [_tensor(g) for g in grads], self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, grad_inputs, self.grad_outputs)
            if out is not None:
                grad_inputs = _check_returned(hook, "hook", out, grad_inputs, "grad_input")
        self.grad_outputs = None
        return tuple(_passed_on(grad_inputs[i]) for i in self.input_index)


# PyTorch issues the deprecated hooks' warnings from Module's own frame (its ``_call_impl``), one line for every
# module and caller: Python's default filter shows each once per process, not once per line of the program
_MODULE = "torch.nn.modules.module"


def warn_non_full(inputs: tuple, result, grad_fn: Node) -> None:
    """PyTorch's FutureWarnings for a deprecated backward hook whose gradients miss some of the module's: the
    output is not one tensor or a tuple of tensors, nor are the inputs; the outputs come from several nodes (or
    none of them from ``grad_fn``); or ``grad_fn``'s inputs are not the module's inputs (several ops ran)."""
    hint = "Please use register_full_backward_hook to get the documented behavior."
    outputs = (result,) if isinstance(result, Tensor) else result
    if not (isinstance(outputs, tuple) and all(isinstance(r, Tensor) for r in outputs)):
        _warnings.warn_in(
            _MODULE, "Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                     "Tensors is deprecated and will be removed in future versions. This hook will be missing some "
                     f"of the grad_output. {hint}", FutureWarning)
        return
    if not all(isinstance(i, Tensor) for i in inputs):
        _warnings.warn_in(
            _MODULE, "Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                     "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                     f"missing some of the grad_input. {hint}", FutureWarning)
        return
    out_fns = {r.grad_fn for r in outputs if r.grad_fn is not None}
    if len(out_fns) == 0 or (len(out_fns) == 1 and grad_fn not in out_fns):
        _warnings.warn_in(
            _MODULE, "Using a non-full backward hook when outputs are nested in python data structure is "
                     "deprecated and will be removed in future versions. This hook will be missing some "
                     "grad_output.", FutureWarning)
    elif len(out_fns) > 1:
        _warnings.warn_in(
            _MODULE, "Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                     "deprecated and will be removed in future versions. This hook will be missing some "
                     f"grad_output. {hint}", FutureWarning)
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {fn for fn, _ in grad_fn.next_functions}:
        _warnings.warn_in(
            _MODULE, "Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                     "deprecated and will be removed in future versions. This hook will be missing some "
                     f"grad_input. {hint}", FutureWarning)
