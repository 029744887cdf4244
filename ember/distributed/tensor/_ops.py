"""DTensor's sharding rules: which placements an op's inputs need and which its output gets (PyTorch's rules).

Each rule redistributes the inputs (differentiably), runs the op on their local pieces with ember's ordinary
ops, and wraps the local result with the output placements. Per mesh dimension:

- elementwise ``+ - * /`` (with broadcasting): a Shard input keeps its dimension (the lowest one when inputs
  shard different dimensions) and the other inputs are sharded alike (or Replicate where they broadcast);
  Partial stays Partial where the op is linear in it (Partial +/- Partial or Replicate, Partial * anything
  reduced or gathered, Partial / non-Partial), otherwise it is reduced;
- unary ops keep Shard; ``neg`` keeps a sum/avg Partial, the others reduce it first;
- ``a @ b`` (``a`` of 2+ dims, ``b`` 2-D): Shard(row or batch) @ Replicate -> Shard, Replicate @ Shard(1) ->
  Shard(-1), Shard(-1) @ Shard(0) -> Partial, Partial @ anything (gathered or reduced to Replicate) ->
  Partial; other pairs are first redistributed to one of those;
- ``sum``/``mean``: a reduced Shard dimension becomes Partial(sum) (``mean`` reduces a Partial input first;
  PyTorch's ``mean`` of a Shard gives Partial(avg): the value is the same);
- ``transpose``/``t`` move Shard dimensions.

Every other Tensor method and operator on a DTensor raises NotImplementedError (``_install``).
"""

from __future__ import annotations

import math
import operator

from ..._tensor import Tensor
from ._api import DTensor, unsupported
from .placement_types import Partial, Replicate, Shard

_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
_UNARY = ("neg", "relu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "abs", "sin", "cos", "square",
          "reciprocal")
_LINEAR_UNARY = ("neg",)


def _check_operand(x, op: str):
    """DTensors, Python numbers and 0-d tensors (scalars) mix; a plain tensor with dimensions does not."""
    if isinstance(x, Tensor) and not isinstance(x, DTensor) and x.ndim > 0:
        raise RuntimeError(f"{op}: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to "
                           "DTensor before calling distributed operators!")
    return x


def _linear_partial(p) -> bool:
    return isinstance(p, Partial) and p.linear


def _local(x, placements, out):
    """``x``'s piece under ``placements`` (a scalar passes through), for an op whose output is placed as ``out``.

    The piece's gradient, as the op's local backward computes it, is laid out as the input: except where the
    input is Replicate and the output is not (a sharded or partial output), where each rank's gradient is
    only its share, so the piece's gradient is Partial and is summed on the way back (PyTorch's sharding
    rules give the same gradient placements)."""
    if not isinstance(x, DTensor):
        return x
    grads = [Partial() if p == Replicate() and q != Replicate() else Replicate() if isinstance(p, Partial) else p
             for p, q in zip(placements, out)]
    return x._redistribute(placements).to_local(grad_placements=grads)


def _wrap(local: Tensor, like: DTensor, placements, shape) -> DTensor:
    return DTensor.from_local(local, like.device_mesh, placements, shape=tuple(shape))


def _same_mesh(tensors, op: str):
    meshes = {id(t.device_mesh): t.device_mesh for t in tensors}
    if len(meshes) > 1:
        raise NotImplementedError(f"{op}: DTensors on different device meshes: {list(meshes.values())}")


# ---------------------------------------------------------------------- elementwise
def _elementwise_rule(name: str, lhs, rhs, out_shape):
    """(lhs placements, rhs placements, output placements), one entry per mesh dimension (None for a scalar)."""
    operands = [(i, x) for i, x in enumerate((lhs, rhs)) if isinstance(x, DTensor)]
    mesh = operands[0][1].device_mesh
    out_nd = len(out_shape)
    want: list = [[] if isinstance(x, DTensor) else None for x in (lhs, rhs)]
    out = []
    for d in range(mesh.ndim):
        # the lowest output dimension that an operand shards at full size (PyTorch's pick when they differ)
        shards = [p.dim + out_nd - x.ndim for _, x in operands
                  if isinstance(p := x.placements[d], Shard) and x.shape[p.dim] == out_shape[p.dim + out_nd - x.ndim]]
        if shards:
            shard = min(shards)
            for i, x in operands:
                j = shard - (out_nd - x.ndim)
                want[i].append(Shard(j) if j >= 0 and x.shape[j] == out_shape[shard] else Replicate())
            out.append(Shard(shard))
            continue
        lp = lhs.placements[d] if isinstance(lhs, DTensor) else None
        rp = rhs.placements[d] if isinstance(rhs, DTensor) else None
        keep, side = _partial_kept(name, lp, rp)
        for i, _ in operands:
            # + and -: a Replicate operand is split into terms (v / n each for a sum); * and /: the other
            # operand is whole on every rank
            want[i].append(keep if keep is not None and (name in ("add", "sub") or i == side) else Replicate())
        out.append(Replicate() if keep is None else keep)
    return want, out


def _partial_kept(name: str, lp, rp):
    """(the Partial the output keeps on a mesh dimension without Shard, the operand that has it: 0 or 1), or
    (None, None) when everything is reduced first. ``None`` stands for a scalar operand.

    A sum/avg Partial survives where the op is linear in it: + and - of Partial and the same Partial or
    Replicate, * by anything, / by anything but a Partial divisor; not + or - of a scalar."""
    for side, (p, other) in enumerate(((lp, rp), (rp, lp))):
        if not _linear_partial(p):
            continue
        if name in ("add", "sub") and (other == p or other == Replicate()):
            return p, side
        if name == "mul" or (name == "div" and side == 0):
            return p, side
    return None, None


def elementwise(name: str, lhs, rhs):
    """``lhs <name> rhs`` for name in add, sub, mul, div; either side may be a scalar."""
    _check_operand(lhs, name)
    _check_operand(rhs, name)
    operands = [x for x in (lhs, rhs) if isinstance(x, DTensor)]
    _same_mesh(operands, name)
    out_shape = _broadcast(tuple(x.shape) if isinstance(x, Tensor) else () for x in (lhs, rhs))
    (lw, rw), out = _elementwise_rule(name, lhs, rhs, out_shape)
    local = _BINARY[name](_local(lhs, lw, out), _local(rhs, rw, out))
    return _wrap(local, operands[0], out, out_shape)


def _broadcast(shapes) -> tuple[int, ...]:
    shapes = list(shapes)
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        sizes = {s[i - nd + len(s)] for s in shapes if i - nd + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise RuntimeError(f"DTensor: shapes {shapes} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def unary(name: str, x: DTensor, *args):
    linear = name in _LINEAR_UNARY
    placements = [p if not isinstance(p, Partial) or (linear and p.linear) else Replicate() for p in x.placements]
    local = getattr(_local(x, placements, placements), name)(*args)
    return _wrap(local, x, placements, x.shape)


# ---------------------------------------------------------------------- matmul
def _matmul_rule(a: DTensor, b: DTensor, d: int):
    """(a's, b's, the output's) placement on mesh dimension ``d``."""
    pa, pb = a.placements[d], b.placements[d]
    k = a.ndim - 1
    if pa == Shard(k) and isinstance(pb, Partial):  # PyTorch reduce-scatters b rather than gather a
        return pa, Shard(0), Partial()
    if _linear_partial(pa):  # a's terms times the whole of b are the product's terms (b is reduced or gathered)
        return pa, Replicate(), pa
    if _linear_partial(pb):
        return Replicate(), pb, pb
    pa = Replicate() if isinstance(pa, Partial) else pa
    pb = Replicate() if isinstance(pb, Partial) else pb
    if isinstance(pa, Shard) and pa.dim < k:
        return pa, Replicate(), pa
    if pb == Shard(1):
        return Replicate(), pb, Shard(a.ndim - 1)
    if pa == Shard(k) or pb == Shard(0):
        return Shard(k), Shard(0), Partial()
    return Replicate(), Replicate(), Replicate()


def matmul(a, b):
    for x in (a, b):
        _check_operand(x, "matmul")
    if not (isinstance(a, DTensor) and isinstance(b, DTensor)) or a.ndim < 2 or b.ndim != 2:
        raise NotImplementedError(unsupported("matmul (DTensor of 2+ dims @ 2-d DTensor are supported)", (a, b)))
    _same_mesh((a, b), "matmul")
    if a.shape[-1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a.shape))} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    rules = [_matmul_rule(a, b, d) for d in range(a.device_mesh.ndim)]
    out = [r[2] for r in rules]
    local = _local(a, [r[0] for r in rules], out) @ _local(b, [r[1] for r in rules], out)
    return _wrap(local, a, out, tuple(a.shape[:-1]) + (b.shape[1],))


# ---------------------------------------------------------------------- shape and reductions
def transpose(x: DTensor, dim0: int, dim1: int) -> DTensor:
    d0, d1 = dim0 % x.ndim, dim1 % x.ndim
    swap = {d0: d1, d1: d0}
    placements = [Shard(swap.get(p.dim, p.dim)) if isinstance(p, Shard) else p for p in x.placements]
    shape = list(x.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return _wrap(x.to_local().transpose(d0, d1), x, placements, shape)


def t(x: DTensor) -> DTensor:
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x if x.ndim < 2 else transpose(x, 0, 1)


def _reduced_dims(x: DTensor, dim) -> list[int]:
    if dim is None:
        return list(range(x.ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % max(x.ndim, 1) for d in dims})


def sum(x: DTensor, dim=None, keepdim: bool = False, *, dtype=None) -> DTensor:
    """A reduced Shard dimension becomes Partial(sum); a sum/avg Partial stays; max/min Partials reduce first."""
    dims = _reduced_dims(x, dim)
    placements, out = [], []
    for p in x.placements:
        if isinstance(p, Partial) and not p.linear:
            p = Replicate()
        placements.append(p)
        if isinstance(p, Shard) and p.dim in dims:
            out.append(Partial())
        elif isinstance(p, Shard) and not keepdim:
            out.append(Shard(p.dim - len([d for d in dims if d < p.dim])))
        else:
            out.append(p)
    local = _local(x, placements, out)
    local = local.sum(dtype=dtype) if dim is None and not keepdim else local.sum(dims, keepdim=keepdim, dtype=dtype)
    shape = [1 if i in dims else s for i, s in enumerate(x.shape) if keepdim or i not in dims]
    return _wrap(local, x, out, shape)


def mean(x: DTensor, dim=None, keepdim: bool = False, *, dtype=None) -> DTensor:
    """``sum / count``: a reduced Shard dimension gives Partial(sum) (PyTorch's placement may differ: the value
    is the same)."""
    count = math.prod(x.shape[d] for d in _reduced_dims(x, dim))
    if any(isinstance(p, Partial) for p in x.placements):  # PyTorch reduces a Partial input first
        x = x.redistribute(placements=[Replicate() if isinstance(p, Partial) else p for p in x.placements])
    return elementwise("div", sum(x, dim, keepdim, dtype=dtype), count)
