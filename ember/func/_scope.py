"""What the ``torch.func`` transforms share: one transform's own differentiable inputs, ``argnums``, PyTorch's checks.

PyTorch's ``grad``/``vjp``/``jacrev`` lift their inputs to a new autograd *level*, so a transform differentiates
only with respect to its own inputs and its results stay differentiable, at the levels outside, with respect to
whatever they depend on there (``grad(grad(f))``, ``jacrev(jacrev(f))``, a loss of ``grad(f)(x)`` backpropagated
to ``x`` or to weights ``f`` captures). ember has one autograd graph and gets the same results with a ``Scope``:
each input becomes a new tensor (a differentiable alias where the caller's graph must reach it, else a detached
leaf that requires grad), the function runs with grad enabled, and gradients are taken with ``create_graph=True``
only when the output reaches something outside the scope that requires grad. Results that reach nothing outside
are returned detached, as PyTorch's are. A leaf made to require grad while the function runs is the scope's own
too (PyTorch makes it at the transform's level): ``Tensor.requires_grad``'s setter tells the innermost scope
(``ember/_transform_scopes.py``).
"""

from __future__ import annotations

import threading
from typing import Any

from .._tensor import Tensor
from .._transform_scopes import scopes
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.graph import AccumulateGrad
from ..utils._pytree import tree_flatten, tree_leaves, tree_map

ArgNums = int | tuple[int, ...]

class _Active(threading.local):
    """How many torch.func transforms are running on this thread (a Scope entered, a vmap'd function called):
    PyTorch's ``_are_functorch_transforms_active``, which refuses custom autograd Functions without
    ``setup_context`` there. Per thread, as PyTorch's interpreter stack: another thread's transform leaves this
    thread's plain autograd alone."""

    count = 0


_active = _Active()


def transforms_active() -> bool:
    """Whether a ``torch.func`` transform (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap) is running on this
    thread."""
    return _active.count > 0


class transform_running:
    """Context manager: a ``torch.func`` transform runs inside it (``transforms_active``)."""

    def __enter__(self) -> None:
        _active.count += 1

    def __exit__(self, *exc) -> None:
        _active.count -= 1


def _under_vmap() -> bool:
    """Whether a vmap is running (then gradients are taken per example, as PyTorch's grad inside vmap)."""
    from ._batched import visible_levels

    return bool(visible_levels())


def _detached(t: Tensor) -> Tensor:
    """``t.detach()`` keeping a forward-mode tangent (an enclosing ``jacfwd``'s), also under vmap."""
    from ..autograd.forward_ad import detached
    from ._batched_grad import _rewrap, _unwrap_all

    core, levels = _unwrap_all(t)
    return _rewrap(detached(core), levels)


class Scope:
    """One application of a transform: its fresh inputs and whether gradients must be recorded for outer use."""

    def __init__(self) -> None:
        self.outer_grad = is_grad_enabled()  # under no_grad, results never join the caller's graph (PyTorch's)
        self._own: dict[int, Tensor] = {}  # id -> leaf made here (kept alive so ids stay unique)
        # nodes a walk found reaching nothing outside: still true later (a node's edges never change, and leaves
        # only become the scope's own), so a second walk (the value's, after the gradient's) stops at them
        self._inner: set = set()
        self._grad_mode = enable_grad()

    def __enter__(self) -> Scope:
        self._grad_mode.__enter__()
        _active.count += 1
        scopes.stack.append(self)  # (a leaf made to require grad inside is the scope's own: ``own_new_leaf``)
        return self

    def __exit__(self, *exc) -> None:
        scopes.stack.pop()
        _active.count -= 1
        self._grad_mode.__exit__(*exc)

    def own(self, leaves) -> None:
        """Count ``leaves`` (tensors this transform made) as the scope's own."""
        for t in leaves:
            self._own[id(t)] = t

    def differentiable(self, x: Any) -> Tensor:
        """``x`` as a new tensor the transform differentiates with respect to."""
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if _under_vmap():  # per-example gradients: a leaf batched at every vmap level (func/_batched_grad.py)
            from ._batched_grad import _unwrap_all, grad_leaf

            connected = self.outer_grad and _unwrap_all(x)[0].requires_grad
            t = grad_leaf(x, connected)
            if not connected:
                self.own([t, _unwrap_all(t)[0]])  # (the wrapper and the plain leaf under it are both this scope's)
            return t
        if self.outer_grad and x.requires_grad:
            return x.view_as(x)
        t = x.detach().requires_grad_()
        self.own([t])
        return t

    def reaches_outer(self, tensors) -> bool:
        """Whether any of ``tensors`` depends, through the recorded graph, on a tensor that requires grad and is not
        one of this scope's own leaves (a caller's input, a captured weight, an enclosing transform's input)."""
        if not self.outer_grad:
            return False
        own, inner = self._own, self._inner
        stack: list = []
        seen: set = set()
        for t in tensors:
            if not isinstance(t, Tensor) or not t.requires_grad:
                continue
            if t.grad_fn is None:
                if id(t) not in own:
                    return True
            else:
                stack.append(t.grad_fn)
        while stack:
            node = stack.pop()
            if node in seen or node in inner:
                continue
            seen.add(node)
            for edge in node.next_edges:
                nxt = None if edge is None else edge[0]
                if nxt is None:
                    continue
                if type(nxt) is AccumulateGrad:
                    # (an accumulator holds its leaf weakly: one no longer alive was a caller's, say a weight the
                    # function captured and the caller let go of; the scope's own leaves are kept alive in _own)
                    leaf = nxt.variable
                    if leaf is None or id(leaf) not in own:
                        return True
                else:
                    stack.append(nxt)
        inner |= seen
        return False

    def unwrap(self, tree: Any) -> Any:
        """``tree`` with each tensor detached unless it reaches outside the scope (see ``reaches_outer``)."""
        return tree_map(lambda t: t if isinstance(t, Tensor) and self.reaches_outer([t]) else
                        _detached(t) if isinstance(t, Tensor) else t, tree)

    def grad(self, outputs: list, inputs: list, cotangents: list | None = None, *, retain_graph: bool | None = None,
             create_graph: bool | None = None, is_grads_batched: bool = False) -> tuple:
        """d(outputs)/d(inputs), zeros for an input the outputs do not reach (PyTorch's transforms never give
        None). ``create_graph=None``: record only if the outputs or cotangents reach outside the scope.
        ``retain_graph=None``: keep the graph only when recording (``autograd.grad``'s rule); an explicit False frees
        it even then, as PyTorch's ``vjp_fn(..., retain_graph=False)``. ``is_grads_batched``: the cotangents hold a
        batch of ``n`` along their first dim, and each gradient has it (``autograd.grad``'s, one backward pass over
        the whole batch)."""
        from .. import zeros
        from ..autograd import grad

        cotangents = [None] * len(outputs) if cotangents is None else list(cotangents)
        lead = (cotangents[0].shape[0],) if is_grads_batched else ()
        pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
        if pairs:
            if create_graph is None:
                create_graph = self.reaches_outer([o for o, _ in pairs] + [c for _, c in pairs])
            if _under_vmap():  # one backward for the whole batch, each example's gradient its own slice
                from ._batched_grad import autograd_grad as grad
            grads = grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=retain_graph,
                         create_graph=create_graph, allow_unused=True, is_grads_batched=is_grads_batched)
        else:
            grads = (None,) * len(inputs)
        return tuple(zeros((*lead, *i.shape), dtype=i.dtype) if g is None else g for g, i in zip(grads, inputs))


def _wrap_argnum(argnum: Any, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def wrap_argnums(argnums: ArgNums, num_args: int) -> ArgNums:
    """``argnums`` checked (PyTorch's errors) and made non-negative."""
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    argnums = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums


def slice_argnums(args: tuple, argnums: ArgNums) -> Any:
    """The argument ``argnums`` names, or a tuple of the arguments ``argnums`` names."""
    argnums = wrap_argnums(argnums, len(args))
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def replace_argnums(args: tuple, argnums: ArgNums, new: Any) -> tuple:
    """``args`` with the argument(s) ``argnums`` names replaced by ``new`` (one value, or a tuple of values)."""
    argnums = wrap_argnums(argnums, len(args))
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


def error_if_complex(func_name: str, tree: Any, is_input: bool) -> None:
    for idx, leaf in enumerate(tree_leaves(tree)):
        if isinstance(leaf, Tensor) and leaf.is_complex():
            which = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{func_name}: Expected all {which} to be real but received complex tensor at "
                               f"flattened input idx: {idx}")


def tensor_outputs(output: Any, api: str) -> tuple[list, Any]:
    """``output`` flattened (leaves, structure); PyTorch's error unless it is a non-empty tree of tensors."""
    flat, spec = tree_flatten(output)
    if not flat or (len(flat) == 1 and flat[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat})")
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")
    return flat, spec


def split_aux(output: Any, api: str) -> tuple[Any, Any]:
    """``(output, aux)`` of a ``has_aux`` function, with PyTorch's errors when it did not return a pair or ``aux``
    holds anything but tensors (a number, None, a string: PyTorch's transforms unwrap each leaf as a tensor)."""
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    for leaf in tree_leaves(output[1]):
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return output
