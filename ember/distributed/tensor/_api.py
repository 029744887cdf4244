"""``DTensor``: a tensor spread over a DeviceMesh, and the differentiable moves between layouts.

A DTensor is an ember Tensor whose storage is this rank's piece (its *local* tensor) and whose ``shape`` is the
global one; ``placements`` say how the pieces make the global value (``placement_types.py``). The optimizers
update parameters through their storage, so a DTensor parameter is trained shard by shard as in PyTorch.

Operations on a DTensor follow PyTorch's sharding rules where ``_ops.py`` has one (elementwise arithmetic,
matmul, transpose, sum, ...): the inputs are redistributed as the rule asks, the op runs on the local pieces,
and the result is a DTensor. Any other op — a Tensor method, an operator, or a function such as
``torch.exp(dt)`` — raises NotImplementedError naming the op and the placements instead of computing on the
local piece alone; ``full_tensor()`` or ``to_local()`` leave the DTensor world explicitly.

Gradients flow through ``from_local``, ``to_local``, ``redistribute`` and ``full_tensor`` with the adjoint
collectives (an all-gather's adjoint takes this rank's chunk, a chunk's adjoint all-gathers); the gradient of
a Partial value is held like a Replicate one, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._backend import xp
from ..._size import Size
from ..._tensor import Tensor
from ...autograd import graph
from ...autograd.function import Function
from ...nn.parameter import Parameter
from ..device_mesh import DeviceMesh, current_mesh
from ._redistribute import Spec, broadcast_from, normalize, redistribute_array
from .placement_types import Placement, Replicate, Shard


def _dispatch(op_class, inputs, params):
    """The hook in ember's op recorder: None when no input is a DTensor; otherwise the op's result by its
    sharding rule (``_ops.FUNCTIONS``), or NotImplementedError naming the op and the placements."""
    for t in inputs:
        if isinstance(t, DTensor):
            break
    else:
        return None
    # (by ember's class names: __name__ is PyTorch's node name, AddBackward0; a node's variants are subclasses)
    own = next((c.__qualname__ for c in op_class.__mro__ if c.__qualname__ in _FUNCTIONS), op_class.__qualname__)
    rule = _FUNCTIONS.get(own)
    if rule is None or params:
        raise NotImplementedError(unsupported(own.lower(), inputs))
    return rule(*inputs)


_FUNCTIONS: dict = {}  # op class name -> the DTensor function for its inputs (filled by _methods.install)


def unsupported(op: str, args) -> str:
    layouts = ", ".join(f"DTensor{tuple(t.shape)} {t.placements}" if isinstance(t, DTensor)
                        else f"Tensor{tuple(t.shape)}" for t in args if isinstance(t, Tensor))
    return (f"DTensor: ember has no sharding rule for {op} on {layouts}; call .full_tensor() (the global value) "
            "or .to_local() (this rank's piece) first, or use an op listed in docs/api.md's DTensor section")


class DTensor(Tensor):
    """A tensor over a DeviceMesh (``torch.distributed.tensor.DTensor``); make one with ``distribute_tensor``,
    ``DTensor.from_local`` or the factories (``zeros(..., device_mesh=, placements=)``)."""

    __slots__ = ("_spec", "_grad_view")

    @classmethod
    def _wrap(cls, local: Tensor, spec: Spec) -> DTensor:
        """A DTensor over ``local``'s storage and graph position (``local`` is an op's result)."""
        if local._data.shape != spec.local_shape():
            raise RuntimeError(f"DTensor: the local piece has shape {list(local._data.shape)}, but placements "
                               f"{spec.placements} of a global {list(spec.shape)} give this rank "
                               f"{list(spec.local_shape())}")
        if graph._dtensor_dispatch is None:
            graph._dtensor_dispatch = _dispatch
        out = cls._make(local._data, local.grad_fn, local._output_nr)
        out._requires_grad = local._requires_grad
        out._spec = spec
        out._grad_view = None
        return out

    # ------------------------------------------------------------------ layout
    @property
    def placements(self) -> tuple[Placement, ...]:
        return self._spec.placements

    @property
    def device_mesh(self) -> DeviceMesh:
        return self._spec.mesh

    @property
    def shape(self) -> Size:
        return Size(self._spec.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self._spec.shape[dim]

    @property
    def ndim(self) -> int:
        return len(self._spec.shape)

    def dim(self) -> int:
        return len(self._spec.shape)

    def numel(self) -> int:
        return int(xp.prod(self._spec.shape, dtype=xp.int64))

    # ------------------------------------------------------------------ conversions
    @staticmethod
    def from_local(local_tensor: Tensor, device_mesh: DeviceMesh | None = None,
                   placements: Sequence[Placement] | None = None, *, run_check: bool = False,
                   shape=None, stride=None) -> DTensor:
        """A DTensor whose piece on this rank is ``local_tensor`` (same storage; differentiable).

        ``placements`` default to Replicate on every mesh dimension. The global shape is ``shape`` if given,
        otherwise computed as if every Shard were even (``local size x ranks``), as PyTorch does.
        ``run_check=True`` broadcasts the Replicate pieces from the first rank of each mesh dimension."""
        mesh = device_mesh if device_mesh is not None else current_mesh("DTensor.from_local")
        if not isinstance(local_tensor, Tensor) or isinstance(local_tensor, DTensor):
            raise TypeError(f"DTensor.from_local: local_tensor must be a plain Tensor, got "
                            f"{type(local_tensor).__name__}")
        placements = tuple(placements) if placements is not None else (Replicate(),) * mesh.ndim
        placements = normalize(placements, local_tensor.ndim, mesh, "DTensor.from_local")
        if shape is None:
            dims = list(local_tensor._data.shape)
            for d, p in enumerate(placements):
                if isinstance(p, Shard):
                    dims[p.dim] *= mesh.size(d)
            shape = tuple(dims)
        spec = Spec(mesh, placements, tuple(int(s) for s in shape))
        if run_check:  # the Replicate pieces are made equal: the first rank's along each such mesh dimension
            dims = [d for d, p in enumerate(placements) if p.is_replicate()]
            local_tensor._data[...] = broadcast_from(local_tensor._data, mesh, 0, dims)
        return DTensor._wrap(_FromLocal.apply(local_tensor), spec)

    def to_local(self, *, grad_placements: Sequence[Placement] | None = None) -> Tensor:
        """This rank's piece, same storage (differentiable: its gradient becomes this DTensor's gradient,
        laid out as ``grad_placements``, by default as this tensor's placements)."""
        grad_spec = self._spec.grad_spec() if grad_placements is None else self._spec.with_placements(
            normalize(grad_placements, self.ndim, self.device_mesh, "DTensor.to_local"))
        return _ToLocal.apply(self, self._spec, grad_spec)

    def redistribute(self, device_mesh: DeviceMesh | None = None, placements: Sequence[Placement] | None = None,
                     *, async_op: bool = False, forward_dtype=None, backward_dtype=None) -> DTensor:
        """The same global value with other placements (collectives along the mesh dimensions that change)."""
        if device_mesh is not None and device_mesh != self.device_mesh:
            raise NotImplementedError("DTensor.redistribute: moving to another device mesh is not supported")
        if placements is None:
            raise ValueError("DTensor.redistribute: placements must be given")
        target = normalize(placements, self.ndim, self.device_mesh, "DTensor.redistribute")
        for p, q in zip(self.placements, target):
            if q.is_partial() and p != q:
                raise RuntimeError(f"Can not redistribute from {p} to {q}, redistributing to Partial is for "
                                   "internal use only!")
        return self._redistribute(target)

    def _redistribute(self, target) -> DTensor:
        """``redistribute`` for the sharding rules, which may also make Partial terms (v / n for a sum)."""
        target = tuple(target)
        if target == self.placements:
            return self
        return DTensor._wrap(_Redistribute.apply(self, self._spec, target), self._spec.with_placements(target))

    def full_tensor(self, *, grad_placements: Sequence[Placement] | None = None) -> Tensor:
        """The global value on every rank, as a plain Tensor (differentiable)."""
        return self.redistribute(placements=(Replicate(),) * self.device_mesh.ndim).to_local(
            grad_placements=grad_placements)

    # ------------------------------------------------------------------ autograd
    @property
    def grad(self) -> DTensor | None:
        """The gradient as a DTensor laid out like this tensor (a Partial dimension's gradient is Replicate)."""
        g = self._grad
        if g is None or isinstance(g, DTensor):
            return g
        view = self._grad_view
        if view is None or view._data is not g._data:
            view = self._grad_view = DTensor._wrap(Tensor._make(g._data), self._spec.grad_spec())
        return view

    @grad.setter
    def grad(self, value) -> None:
        if value is not None and not isinstance(value, DTensor):
            raise RuntimeError("DTensor: the gradient of a DTensor must be a DTensor (use DTensor.from_local)")
        Tensor.grad.fset(self, value)

    def detach(self) -> DTensor:
        return DTensor._wrap(Tensor._make(self._data), self._spec)

    @property
    def data(self) -> DTensor:
        return self.detach()

    def __repr__(self) -> str:
        return (f"DTensor(local_tensor={Tensor._make(self._data)!r}, device_mesh={self.device_mesh}, "
                f"placements={self.placements})")

    def _global_norm(self, norm_type: float, norm_of):
        """The ``norm_type``-norm of the global value (for ``clip_grad_norm_``): the norm of the pieces' norms
        over the Shard mesh dimensions (collective; an empty piece counts as 0)."""
        value = xp.asarray(norm_of(self._data, norm_type) if self._data.size else 0.0)
        for d, p in enumerate(self.placements):
            if isinstance(p, Shard):
                group = self.device_mesh.get_group(d)
                norms = xp.empty(group.size(), dtype=value.dtype)
                group.comm.allgather(xp.ascontiguousarray(value.reshape(1)), norms)
                value = xp.asarray(norm_of(norms, norm_type))
        return value

    def _as_parameter(self) -> DTensor:
        """``nn.Parameter(dt)``: a Parameter that is also a DTensor, over the same pieces."""
        out = _DTensorParameter._make(self._data)
        out._spec, out._grad_view = self._spec, None
        return out

    def __deepcopy__(self, memo) -> DTensor:
        """A copy of the piece with the same layout (a parameter stays a DTensor parameter), detached."""
        out = DTensor._wrap(Tensor._make(self._data.copy()), self._spec)
        if isinstance(self, Parameter):
            out = out._as_parameter()
        out._requires_grad = self._requires_grad
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol):
        raise NotImplementedError("DTensor: pickling is not supported; save dt.full_tensor() or dt.to_local()")


class _FromLocal(Function):
    @staticmethod
    def forward(ctx, local):
        return Tensor._make(local._data)

    @staticmethod
    def backward(ctx, grad):
        return grad


class _Relayout(Function):
    """Backward of a layout change: the gradient arrives laid out as ``ctx.specs[0]`` and leaves as
    ``ctx.specs[1]`` (the input's gradient layout)."""

    @staticmethod
    def backward(ctx, grad):
        have, want = ctx.specs
        if have.placements != want.placements:
            grad = Tensor._make(redistribute_array(grad._data, have, want.placements))
        return grad, None, None


class _ToLocal(_Relayout):
    """The piece; its gradient arrives laid out as ``grad_spec`` and goes back as this tensor's gradient."""

    @staticmethod
    def forward(ctx, dt, spec, grad_spec):
        ctx.specs = (grad_spec, spec.grad_spec())
        return Tensor._make(dt._data)


class _Redistribute(_Relayout):
    @staticmethod
    def forward(ctx, dt, spec, target):
        ctx.specs = (spec.with_placements(target).grad_spec(), spec.grad_spec())
        return Tensor._make(redistribute_array(dt._data, spec, target))


class _DTensorParameter(DTensor, Parameter):
    """What ``nn.Parameter(dtensor)`` makes: registered by modules, stepped by optimizers piece by piece."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Parameter containing:\n" + DTensor.__repr__(self)


def distribute_tensor(tensor: Tensor, device_mesh: DeviceMesh | None = None,
                      placements: Sequence[Placement] | None = None, *, src_data_rank: int | None = 0) -> DTensor:
    """``tensor`` spread over the mesh: each rank keeps its piece under ``placements`` (default Replicate).

    With ``src_data_rank`` (default 0) the value is the one on the rank at that coordinate of every mesh
    dimension (broadcast first, as PyTorch scatters it); with None every rank's own ``tensor`` is used.
    The result is a leaf with ``tensor``'s requires_grad."""
    mesh = device_mesh if device_mesh is not None else current_mesh("distribute_tensor")
    if isinstance(tensor, DTensor):
        raise ValueError("distribute_tensor: the tensor is already a DTensor; use .redistribute()")
    placements = tuple(placements) if placements is not None else (Replicate(),) * mesh.ndim
    placements = normalize(placements, tensor.ndim, mesh, "distribute_tensor")
    array = tensor._data if src_data_rank is None else broadcast_from(tensor._data, mesh, src_data_rank)
    spec = Spec(mesh, placements, tuple(array.shape))
    local = redistribute_array(array, spec.with_placements((Replicate(),) * mesh.ndim), placements)
    out = DTensor._wrap(Tensor._make(xp.array(local, order="C")), spec)  # (a 0-d one stays 0-d)
    return out.requires_grad_(tensor.requires_grad) if tensor.requires_grad else out
