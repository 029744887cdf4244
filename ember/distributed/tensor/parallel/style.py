"""Tensor-parallel styles: how one ``nn.Linear`` or ``nn.Embedding`` is split over a 1-D mesh (PyTorch's).

- ``ColwiseParallel``: a Linear's weight and bias are ``Shard(0)`` (each rank owns some output features), an
  Embedding's weight ``Shard(1)``; the input is Replicate, the output ``Shard(-1)``;
- ``RowwiseParallel``: a Linear's weight is ``Shard(1)`` (some input features) and its bias Replicate, the input
  ``Shard(-1)`` and the output Partial, reduced to Replicate; an Embedding's weight is ``Shard(0)`` (some
  rows of the vocabulary), each rank looks up the indices it owns and the Partial sums are reduced;
- ``SequenceParallel``: a norm or dropout layer runs on the ``Shard(sequence_dim)`` pieces; its parameters are
  Replicate, their gradients summed over the ranks.

``input_layouts`` say how a plain input tensor is laid out (it becomes ``DTensor.from_local``), the style
redistributes it to what the layer needs, and the output goes to ``output_layouts`` (a plain tensor again when
``use_local_output``). Parameters are distributed from ``src_data_rank`` (0), as ``distribute_tensor`` does.
The layer's forward becomes the DTensor computation (an instance attribute ``forward``); its hooks still run.
"""

from __future__ import annotations

from ....nn import functional as F
from ....nn.modules.dropout import Dropout
from ....nn.modules.linear import Linear
from ....nn.modules.normalization import LayerNorm, RMSNorm
from ....nn.modules.sparse import Embedding
from ....nn.parameter import Parameter
from .. import DTensor, Partial, Placement, Replicate, Shard, distribute_tensor
from .._redistribute import chunk_bounds

__all__ = ["ColwiseParallel", "ParallelStyle", "RowwiseParallel", "SequenceParallel"]


class ParallelStyle:
    """Base class of the styles: ``_apply(module, device_mesh)`` parallelises ``module`` in place."""

    src_data_rank: int | None = 0

    def _apply(self, module, device_mesh):
        raise NotImplementedError


def _layouts(value, default: Placement) -> tuple[Placement, ...]:
    if value is None:
        return (default,)
    return (value,) if isinstance(value, Placement) else tuple(value)


def _distribute(module, name: str, mesh, placement: Placement, src_data_rank) -> None:
    param = getattr(module, name)
    if param is None:
        return
    dt = distribute_tensor(param.detach(), mesh, [placement], src_data_rank=src_data_rank)
    module.register_parameter(name, Parameter(dt, requires_grad=param.requires_grad))


def _install_forward(module, compute, mesh, input_layouts, desired, output_layouts, use_local_output) -> None:
    """``module.forward``: the input as a DTensor laid out as ``desired``, ``compute`` on DTensors, the output
    redistributed to ``output_layouts`` (and made local if asked)."""

    def forward(x, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"tensor-parallel {type(module).__name__}: forward takes one input tensor")
        if not isinstance(x, DTensor):
            x = DTensor.from_local(x, mesh, input_layouts, run_check=False)
        if x.placements != desired:
            x = x.redistribute(placements=desired)
        out = compute(module, x)
        if out.placements != output_layouts:
            out = out.redistribute(placements=output_layouts)
        return out.to_local() if use_local_output else out

    module.forward = forward


def _linear(module, x: DTensor) -> DTensor:
    out = x @ module.weight.t()
    return out if module.bias is None else out + module.bias


def _check_embedding(module) -> None:
    if module.max_norm is not None or module.scale_grad_by_freq or module.sparse:
        raise NotImplementedError("tensor-parallel Embedding: max_norm, scale_grad_by_freq and sparse are not "
                                  "supported")


def _embedding_colwise(module, x: DTensor) -> DTensor:
    idx = x.to_local()
    local = F.embedding(idx, module.weight.to_local(), padding_idx=module.padding_idx)
    return DTensor.from_local(local, x.device_mesh, [Shard(local.ndim - 1)],
                              shape=tuple(idx.shape) + (module.embedding_dim,))


def _embedding_rowwise(module, x: DTensor) -> DTensor:
    """Each rank looks up the indices in its rows of the vocabulary; the others give zero rows (Partial sum)."""
    mesh = x.device_mesh
    start, stop = chunk_bounds(module.num_embeddings, mesh.size(0), mesh.get_local_rank())
    idx = x.to_local()
    mine = (idx >= start) & (idx < stop)
    local_idx = (idx - start) * mine  # indices outside this rank's rows look up its row 0, then masked out
    weight = module.weight.to_local()
    if stop == start:
        raise NotImplementedError(f"tensor-parallel Embedding: rank {mesh.get_rank()} holds no rows of the "
                                  f"{module.num_embeddings}-row vocabulary (more ranks than rows)")
    padding = module.padding_idx
    local_padding = padding - start if padding is not None and start <= padding % module.num_embeddings < stop \
        else None
    local = F.embedding(local_idx, weight, padding_idx=local_padding) * mine.unsqueeze(-1).to(weight.dtype)
    return DTensor.from_local(local, mesh, [Partial()], shape=tuple(idx.shape) + (module.embedding_dim,))


class ColwiseParallel(ParallelStyle):
    """Split a Linear's output features (weight and bias ``Shard(0)``) or an Embedding's columns
    (``Shard(1)``). Defaults: ``input_layouts`` Replicate, ``output_layouts`` ``Shard(-1)``, local output."""

    def __init__(self, *, input_layouts: Placement | None = None, output_layouts: Placement | None = None,
                 use_local_output: bool = True) -> None:
        self.input_layouts = _layouts(input_layouts, Replicate())
        self.output_layouts = _layouts(output_layouts, Shard(-1))
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        if isinstance(module, Linear):
            _distribute(module, "weight", device_mesh, Shard(0), self.src_data_rank)
            _distribute(module, "bias", device_mesh, Shard(0), self.src_data_rank)
            compute = _linear
        elif isinstance(module, Embedding):
            _check_embedding(module)
            _distribute(module, "weight", device_mesh, Shard(1), self.src_data_rank)
            compute = _embedding_colwise
        else:
            raise NotImplementedError("ColwiseParallel currently only support nn.Linear and nn.Embedding!")
        _install_forward(module, compute, device_mesh, self.input_layouts, (Replicate(),),
                         self.output_layouts, self.use_local_output)
        return module

    def __repr__(self) -> str:
        return (f"ColwiseParallel(input_layouts={self.input_layouts}, output_layouts={self.output_layouts}, "
                f"use_local_output={self.use_local_output})")


class RowwiseParallel(ParallelStyle):
    """Split a Linear's input features (weight ``Shard(1)``, bias Replicate) or an Embedding's rows
    (``Shard(0)``). Defaults: ``input_layouts`` ``Shard(-1)``, ``output_layouts`` Replicate, local output."""

    def __init__(self, *, input_layouts: Placement | None = None, output_layouts: Placement | None = None,
                 use_local_output: bool = True) -> None:
        self.input_layouts = _layouts(input_layouts, Shard(-1))
        self.output_layouts = _layouts(output_layouts, Replicate())
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        if isinstance(module, Linear):
            _distribute(module, "weight", device_mesh, Shard(1), self.src_data_rank)
            _distribute(module, "bias", device_mesh, Replicate(), self.src_data_rank)
            compute, desired = _linear, (Shard(-1),)
        elif isinstance(module, Embedding):
            _check_embedding(module)
            _distribute(module, "weight", device_mesh, Shard(0), self.src_data_rank)
            compute, desired = _embedding_rowwise, (Replicate(),)
        else:
            raise NotImplementedError("RowwiseParallel currently only support nn.Linear and nn.Embedding!")
        _install_forward(module, compute, device_mesh, self.input_layouts, desired, self.output_layouts,
                         self.use_local_output)
        return module

    def __repr__(self) -> str:
        return (f"RowwiseParallel(input_layouts={self.input_layouts}, output_layouts={self.output_layouts}, "
                f"use_local_output={self.use_local_output})")


class SequenceParallel(ParallelStyle):
    """Run a LayerNorm, RMSNorm or Dropout on the ``Shard(sequence_dim)`` pieces of its input.

    Its parameters become Replicate DTensors; each rank's gradient is its pieces' share, summed over the ranks
    in backward. A plain input is taken as already sharded on ``sequence_dim``. The output is a DTensor
    ``Shard(sequence_dim)`` (a plain tensor with ``use_local_output=True``)."""

    def __init__(self, *, sequence_dim: int = 1, use_local_output: bool = False) -> None:
        self.sequence_dim = sequence_dim
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        if not isinstance(module, (LayerNorm, RMSNorm, Dropout)):
            raise NotImplementedError(f"SequenceParallel: ember supports nn.LayerNorm, nn.RMSNorm and nn.Dropout, "
                                      f"got {type(module).__name__}")
        for name, _ in list(module.named_parameters(recurse=False)):
            _distribute(module, name, device_mesh, Replicate(), self.src_data_rank)
        layout = (Shard(self.sequence_dim),)
        _install_forward(module, _local_layer, device_mesh, layout, layout, layout, self.use_local_output)
        return module

    def __repr__(self) -> str:
        return f"SequenceParallel(sequence_dim={self.sequence_dim}, use_local_output={self.use_local_output})"


def _local_layer(module, x: DTensor) -> DTensor:
    """The layer's own math on this rank's rows; its Replicate parameters' gradients are Partial (summed)."""
    (p,) = x.placements
    normalized = getattr(module, "normalized_shape", ())
    if normalized and p.dim >= x.ndim - len(normalized):
        raise NotImplementedError(f"SequenceParallel: the sequence dimension {p.dim} is one that "
                                  f"{type(module).__name__} normalizes over")
    params = {name: t.to_local(grad_placements=[Partial()]) for name, t in module.named_parameters(recurse=False)}
    local = x.to_local()
    if isinstance(module, Dropout):
        out = F.dropout(local, module.p, module.training, module.inplace)
    elif isinstance(module, LayerNorm):
        out = F.layer_norm(local, module.normalized_shape, params.get("weight"), params.get("bias"), module.eps)
    else:
        out = F.rms_norm(local, module.normalized_shape, params.get("weight"), module.eps)
    return DTensor.from_local(out, x.device_mesh, [p], shape=tuple(x.shape))
