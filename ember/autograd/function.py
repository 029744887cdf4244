"""``ember.autograd.Function``: custom differentiable ops written with ember tensors.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

``forward`` runs without recording; ``backward`` receives and returns tensors.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

from .._size import c_type_name
from .._sparse import SparseCOO, SparseTensor
from .._tensor import Tensor
from . import forward_ad, graph
from .grad_mode import _GradState, no_grad
from .graph import Node, input_edge
from .recorded import RecordedArray


def _saved_tensor(a) -> Tensor:
    """The tensor a saved array is read back as: a sparse COO tensor's parts come back as a sparse tensor (its
    ``_indices()``, ``t()``, products), any other array as a dense tensor."""
    if type(a) is SparseCOO:
        return SparseTensor.wrap(a)
    return Tensor._make(a)


def _saved_as(t: Tensor | None, inputs: list, outputs: tuple, non_differentiable: set) -> Tensor | int | None:
    """What ``ctx.saved_tensors`` gives back for a saved tensor, as PyTorch's: an input as the caller's tensor itself
    (requiring grad, with its history), an output (its index) as a new tensor whose history is the Function's node,
    anything else (a non-differentiable output too) as a new tensor (None)."""
    if t is None:
        return None
    for i, o in enumerate(outputs):
        if t is o:
            return None if id(o) in non_differentiable else i
    return t if any(t is a for a in inputs) else None


def _custom_function_view(output: Tensor, name: str, output_nr: int) -> Tensor:
    """The result for a Function's ``output`` that is a view (of an input, or of a tensor made in ``forward``) or
    an input returned as it is: a view of the same base (the input, for an input), sharing its version counter,
    as PyTorch's; changing it in place while recording is PyTorch's error (its custom backward would be bypassed:
    ``ops/copy_slices.custom_function_view_error``)."""
    view = Tensor._make(output._data)
    view._base = output._base if output._base is not None else output
    view._vc = output._vc
    view._view_version = output._vc[0]
    view._view_creation = ("custom_function", name, output_nr)
    return view


def _unpacked(node, array, saved_as) -> Tensor:
    if saved_as is None:
        return _saved_tensor(array)
    if type(saved_as) is int:
        out = _saved_tensor(array)
        out.grad_fn, out._output_nr, out._requires_grad = node, saved_as, True
        return out
    return saved_as


class VmapInfo(NamedTuple):
    """What a Function's ``vmap`` staticmethod is told of the vmap it runs in, as PyTorch's: the batch size and the
    ``randomness`` mode."""

    batch_size: int
    randomness: str


class FunctionCtx:
    """What ``forward`` leaves for ``backward``: saved tensors and flags."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        self._to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Tensors for ``jvp`` (forward-mode AD), read there through ``saved_tensors``."""
        self._to_save_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if getattr(self, "_in_jvp", False):  # forward mode: what forward saved with save_for_forward
            return tuple(getattr(self, "_to_save_forward", ()))
        node = self._node
        if node.saved is None:
            from .graph import _RELEASED_MSG

            raise RuntimeError(_RELEASED_MSG)
        node.check_saved_versions()
        # (under create_graph, backward sees the graph's own tensors, so its result can be differentiated again;
        # else an input comes back as the caller's tensor itself, as PyTorch's: requiring grad, with its history)
        inputs = node.saved_inputs or (None,) * len(node.saved)
        return tuple(None if a is None else a.t if type(a) is RecordedArray else _unpacked(node, a, t)
                     for a, t in zip(node.saved, inputs))

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors: Tensor) -> None:
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = value


class _FunctionNode(Node):
    """The graph node of one custom Function call."""

    def name(self) -> str:
        return f"{self.fn_class.__name__}Backward"

    def __repr__(self) -> str:  # (PyTorch's: a Python class of torch.autograd.function, the default repr)
        from .._shown_name import package_name

        return f"<{package_name()}.autograd.function.{self.name()} object at {hex(id(self))}>"

    saved_inputs: tuple = ()  # per saved tensor (_saved_as): the input it is, the index of the output it is, or None

    def release(self) -> None:
        super().release()
        self.saved_inputs = ()

    def backward(self, *grads):
        from .._backend import xp

        ctx = self.ctx
        recorded = _GradState.higher_order  # create_graph: the user's backward runs in grad mode, on graph tensors
        if getattr(ctx, "_materialize", True):
            grads = [xp.zeros(s, dtype=d) if g is None else g for g, (s, d) in zip(grads, self.output_meta)]
        grads = [None if g is None else g.t if type(g) is RecordedArray else Tensor._make(g) for g in grads]
        user_backward = self.fn_class._user_backward()
        if recorded:
            result = user_backward(ctx, *grads)
        else:
            with no_grad():
                result = user_backward(ctx, *grads)
        result = self._validated(result if isinstance(result, tuple) else (result,))
        if recorded:
            return tuple(None if r is None else RecordedArray(r) for r in result)
        return tuple(None if r is None else r._data for r in result)

    def _validated(self, result: tuple) -> list:
        """PyTorch's checks on what the user's backward returned: one gradient per forward input (extra ones only
        None), a tensor or None each, None for an input that is not a tensor; a gradient of an input that needs
        one must have the input's shape or one it broadcasts to (summed down by the engine), and is cast to the
        input's dtype (a complex gradient for a real input is an error). Gradients of inputs that need none are
        dropped unchecked."""
        n = len(self.next_edges)
        if len(result) < n or (len(result) > n and any(r is not None for r in result[n:])):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        out = []
        index = 0  # (PyTorch's index: among the tensor inputs)
        for i, (r, is_tensor, edge) in enumerate(zip(result, self.tensor_inputs, self.next_edges)):
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {c_type_name(r)})")
            if r is not None and not is_tensor:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
            if r is None or edge is None:
                out.append(None)
                index += is_tensor
                continue
            shape, dtype = self.input_shapes[i], self.input_dtypes[i]
            got = tuple(r.shape)  # (not the array's: a batch of cotangents under vmap has a batch dim more)
            lead = len(got) - len(shape)
            if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, got[lead:])):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index {index} - got "
                                   f"{list(got)} but expected shape compatible with {list(shape)}")
            if r.dtype != dtype:
                if r.is_complex() and not dtype.is_complex:
                    raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index {index} - "
                                       f"a complex gradient ({r.dtype}) for a real input")
                r = r.to(dtype)
            out.append(r)
            index += 1
        return out


@functools.lru_cache(maxsize=256)
def _forward_signature(forward: Callable) -> inspect.Signature:
    return inspect.signature(forward)


def _keywords_as_inputs(forward: Callable, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A ``forward(ctx, ...)`` given keyword arguments: as PyTorch's, those naming its parameters become inputs in
    the signature's order (so a tensor passed by keyword gets a gradient), up to the last one given, defaults not
    filled in; a parameter before it that is given neither way is PyTorch's TypeError."""
    names = [p.name for p in list(_forward_signature(forward).parameters.values())[1:]
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    kwargs = dict(kwargs)
    given = [i for i, name in enumerate(names) if i >= len(args) and name in kwargs]
    if not given:
        return args, kwargs
    inputs = list(args)
    for i in range(len(args), given[-1] + 1):
        if names[i] not in kwargs:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
        inputs.append(kwargs.pop(names[i]))
    return tuple(inputs), kwargs


class Function:
    """Base class for custom autograd ops; subclass and define static ``forward``/``backward``. Each subclass's
    graph nodes are of its own class ``<Name>Backward`` (``_backward_cls``), as PyTorch's."""

    _backward_cls: type = _FunctionNode

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (_FunctionNode,), {"__module__": __name__})

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("subclasses of Function must implement forward(ctx, ...)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("subclasses of Function must implement backward(ctx, ...)")

    # PyTorch's alias: a subclass may define its backward under the name ``vjp`` instead.
    vjp = backward

    @classmethod
    def _user_backward(cls) -> Any:
        """The backward the subclass defined, as ``backward`` or as ``vjp`` (both: PyTorch's RuntimeError)."""
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                               "should only implement one of them.")
        return cls.vjp if cls.vjp is not Function.vjp else cls.backward

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> Any:
        """Optional (PyTorch 2's style): defined, ``forward`` takes no ``ctx`` and this fills it from the
        inputs and the output, both under no_grad as ``forward``."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Any) -> Any:
        """Forward mode: the outputs' tangents from the inputs' (one per input, zeros where an input has none)."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # the methods are static: PyTorch warns, from the line that instantiates one, that this will become an error
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself. Instantiating an autograd function will raise "
                      "an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # PyTorch before 0.4 called an instance (``MyFunction()(x)``, a non-static forward); PyTorch now refuses it
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        from ..func import _batched
        from ..func._scope import transforms_active

        ctx_style = cls.setup_context is Function.setup_context
        if ctx_style and transforms_active():
            raise NoVmapSupport("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
                               "jacrev, ...), it must override the setup_context staticmethod. For more details, "
                               "please see https://pytorch.org/docs/main/notes/extending.func.html")
        level = _batched.top_level(args, kwargs)
        if level:  # inside vmap, an input batched
            return cls._vmapped(level, args, kwargs)
        if not ctx_style:  # PyTorch 2's style: the inputs setup_context sees are forward's, defaults filled in
            signature = _forward_signature(cls.forward)
            if kwargs or len(args) < len(signature.parameters):  # (else the arguments are forward's already)
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                args, kwargs = bound.args, bound.kwargs
        elif kwargs:
            args, kwargs = _keywords_as_inputs(cls.forward, args, kwargs)
        ctx = FunctionCtx()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = needs
        record = _GradState.enabled and any(needs)
        dual = forward_ad.has_tangent(*tensor_args)
        if dual and cls.jvp is Function.jvp:
            raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                      "with forward mode AD.")
        with no_grad(), forward_ad.suspended():  # (forward mode: the Function's jvp gives the tangents)
            if ctx_style:
                outputs = cls.forward(ctx, *args, **kwargs)
            else:  # forward without ctx, then setup_context(ctx, inputs, output)
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if not record:
            if dual:
                forward_ad.function_jvp(cls, ctx, args, outs)
            return outputs
        node = cls._backward_cls()
        node.ctx, node.fn_class = ctx, cls
        ctx._node = node
        node.num_outputs = len(outs)
        to_save = getattr(ctx, "_to_save", ())
        node.saved = tuple(None if t is None else t._data for t in to_save)
        non_diff = getattr(ctx, "_non_differentiable", set())
        dirty = {id(t) for t in getattr(ctx, "_dirty", ())}
        if len(dirty) > len(dirty & {id(o) for o in outs}):
            raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                               "The inputs that are modified inplace must all be outputs of the Function.")
        for o in outs:  # (as an in-place op on it, PyTorch's error)
            if isinstance(o, Tensor) and id(o) in dirty and o.is_leaf and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        # the inputs' edges before an output takes this node as its history: an input modified in place
        # (mark_dirty) and returned is both, and its gradient goes on to the history it had
        edges = [input_edge(a) if n else None for a, n in zip(args, needs)]
        shapes = [a._data.shape if n else None for a, n in zip(args, needs)]
        node.input_dtypes = [a.dtype if n else None for a, n in zip(args, needs)]
        node.tensor_inputs = [isinstance(a, Tensor) for a in args]
        results, dirty_views = [], []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor) or id(o) in non_diff:
                results.append(o)
                continue
            if id(o) in dirty and o._base is not None:  # a view modified in place: its base takes the change
                o._bump_version()
                res = Tensor._make(o._data)
                dirty_views.append((i, o, res))
            elif id(o) in dirty:  # modified in place: the same tensor object gets new history
                o._bump_version()
                res = o
            elif o._base is not None or any(o is a for a in tensor_args):
                res = _custom_function_view(o, cls.__name__, i)
            else:
                res = o if (o.grad_fn is None and not o._requires_grad) else Tensor._make(o._data)
            res.grad_fn, res._output_nr, res._requires_grad = node, i, True
            results.append(res)
        node._record(args, needs, [r for r in results if isinstance(r, Tensor)], edges, shapes)
        # every output by number (what _record keeps of the tensor ones, with the others' stand-ins): backward
        # makes zeros of it for an output that received no gradient
        node.output_meta = [(o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None) for o in outs]
        if not node._packed:  # (through saved-tensor hooks, what the unpack hook gives)
            node.saved_inputs = tuple(_saved_as(t, tensor_args, outs, non_diff) for t in to_save)
        for i, view, res in dirty_views:  # (as an in-place op on a view: CopySlices on the base, the view read from it)
            graph.take_history(view, res, absorb=False)
            results[i] = view
        if dual:
            forward_ad.function_jvp(cls, ctx, args, results)
        return results[0] if single else tuple(results)

    @classmethod
    def _vmapped(cls, level: int, args: tuple, kwargs: dict) -> Any:
        """``apply`` on inputs batched at vmap level ``level``. With ``generate_vmap_rule``, PyTorch's generated
        rule: forward (and so backward) of each example, as the Function defines them for one; ember runs the
        Function once per example (each call records its own graph) and stacks the results, without the
        fallback's warning, as PyTorch's rule has none. A ``vmap`` staticmethod of its own is called as PyTorch
        calls it, ``vmap(info, in_dims, *inputs)`` (a batched input's batch dim where vmap's caller had it, its
        in_dim, for an input of vmap itself; 0 for a tensor an op inside made), returning the
        outputs and their batch dims (one for all, or one each, None: not batched). Neither is PyTorch's
        error."""
        from ..func import _batched

        if getattr(cls, "generate_vmap_rule", False):
            return _batched.at_level(level, _batched.per_example, cls.__name__, cls.apply, level, args, kwargs)
        if callable(getattr(cls, "vmap", None)):
            values, in_dims = zip(*(_batched.peel_as_given(a, level) for a in args)) if args else ((), ())
            info = VmapInfo(_batched.batch_size(level), _batched.randomness(level))
            outputs, out_dims = _batched.at_level(level, cls.vmap, info, in_dims, *values, **kwargs)
            single = not isinstance(outputs, tuple)
            outs = (outputs,) if single else outputs
            dims = (out_dims,) * len(outs) if not isinstance(out_dims, tuple) else out_dims
            results = tuple(o if d is None else _batched.wrap(o.movedim(d, 0) if d else o, level)
                            for o, d in zip(outs, dims))
            return results[0] if single else results
        raise NoVmapSupport(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                           "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
                           "details, please see https://pytorch.org/docs/main/notes/extending.func.html")


class InplaceFunction(Function):
    """PyTorch's legacy base class, kept for old code (quantisation layers of the BinaryNet era subclass it and call
    ``apply``): a ``Function`` whose instance has an ``inplace`` attribute. Instantiating it gives ``Function``'s
    DeprecationWarning, as PyTorch's."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class NoVmapSupport(RuntimeError):
    """PyTorch's error for vmap over a ``Function`` with neither a ``vmap`` staticmethod nor ``generate_vmap_rule``,
    or for any function transform over one without ``setup_context`` (a RuntimeError, as PyTorch's);
    ``autograd.functional``'s forward-mode Jacobian, whose batching PyTorch runs through its legacy vmap that takes
    every Function, computes the columns one at a time instead."""


class _DelayedError(Function):
    """Passes its inputs through; its backward raises: the second derivative of a ``once_differentiable``
    backward."""

    @staticmethod
    def forward(ctx: FunctionCtx, *outputs: Any) -> Any:
        return outputs[0] if len(outputs) == 1 else outputs

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


def once_differentiable(fn: Callable) -> Callable:
    """Mark a ``Function``'s ``backward`` as not differentiable, as PyTorch's: it runs under ``no_grad``, and
    under ``create_graph`` its results (when an input requires grad) raise RuntimeError if differentiated."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not _GradState.enabled or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        aliases = [None if o is None else o.detach().requires_grad_(True)
                   for o in (outputs if isinstance(outputs, tuple) else (outputs,))]
        return _DelayedError.apply(*aliases)

    return wrapper
