"""Differential fuzzer: random calls of ember's public ops, run the same way under PyTorch, compared.

    python tools/op_fuzz.py --seed 0 --count 2000 [--ops add,sum,gather] [--show 3] [--all]

Each call is drawn from a seed: an op of the table below, its argument forms (broadcasting shapes, 0-d and
empty tensors, transposed / sliced / expanded (stride-0) inputs, bool, integer, half, bfloat16 and complex
dtypes, Python numbers, ``dim``/``keepdim``/``dtype=``/``out=`` keywords, the method, in-place and function
spellings). The same input arrays go through ``torch`` and ``ember``; what is compared:

- the result's values (``torch.testing``'s tolerances for its dtype, NaNs where PyTorch's are), dtype, shape,
  and contiguity where PyTorch's result is contiguous;
- ``requires_grad`` of each result and, for floating inputs that require grad, the gradients of
  ``sum()`` of every floating result (real and imaginary parts of a complex one);
- errors: both raise, the same built-in exception type (one raising alone is a finding);
- warnings: ember warning where PyTorch does not.

Findings print grouped by op and kind, worst kinds first (values, dtypes, shapes before errors). ``ALLOWED``
lists the intended differences docs/api.md documents ("Differences from PyTorch"); the suite runs a few hundred
calls of a fixed seed and fails on any other finding (tests/test_op_fuzz.py). A tool, not a test: the call is
reproduced by ``--seed S --count 1 --skip N`` (the index each finding prints).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))  # this checkout's ember
import ember  # noqa: E402

# ----------------------------------------------------------------------------------------------- inputs

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("uint8", "int8", "int16", "int32", "int64")
COMPLEX = ("complex64", "complex128")
ALL_DTYPES = ("bool",) + INTS + FLOATS + COMPLEX
# drawn more often: the dtypes programs use most
COMMON = ("float32", "float32", "float64", "int64", "int64", "bool") + ALL_DTYPES


@dataclass
class T:
    """A tensor argument: an array, a layout recipe and whether it is a leaf that requires grad."""

    array: np.ndarray
    dtype: str
    layout: str = "contig"  # contig | t (a transposed view) | step (every other row) | expand (stride 0)
    shape: tuple = ()  # the shape after the layout recipe
    grad: bool = False
    clone: bool = False  # an in-place target: a clone of the leaf, so that the leaf stays untouched


@dataclass
class D:
    """A dtype argument, named as both modules spell it."""

    name: str


@dataclass
class A:
    """A NumPy array argument: a tensor argument's values (its layout recipe applied) as a NumPy array, the same in
    both calls. PyTorch's argument parser refuses one where an op takes a tensor or a number."""

    tensor: T


@dataclass
class Case:
    op: str
    form: str  # fn | method | inplace | out | F (torch.nn.functional) | getitem | setitem
    args: list
    kwargs: dict = field(default_factory=dict)

    def text(self) -> str:
        def show(v):
            if isinstance(v, T):
                layout = "" if v.layout == "contig" else "," + v.layout
                return f"T({v.dtype}{list(v.shape)}{layout}{',rg' if v.grad else ''})"
            if isinstance(v, D):
                return v.name
            if isinstance(v, A):
                return "np" + show(v.tensor)
            if isinstance(v, (list, tuple)):
                inner = ", ".join(show(x) for x in v)
                return f"[{inner}]" if isinstance(v, list) else f"({inner},)"
            return repr(v)

        args = ", ".join([show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()])
        return f"{self.form}:{self.op}({args})"


class Draw:
    """Random draws for one call."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def shape(self, ndim: int | None = None, empty: float = 0.06) -> tuple:
        if ndim is None:
            ndim = self.pick((0, 1, 1, 2, 2, 2, 3, 3, 4))
        return tuple(0 if self.chance(empty) else self.pick((1, 2, 3, 4, 5)) for _ in range(ndim))

    def broadcast_partner(self, shape: tuple) -> tuple:
        """A shape that broadcasts with ``shape``: leading dims dropped, some set to 1."""
        keep = len(shape) - int(self.rng.integers(len(shape) + 1)) if shape and self.chance(0.4) else len(shape)
        out = [1 if self.chance(0.25) else n for n in shape[len(shape) - keep:]]
        if self.chance(0.15):
            out = [self.pick((1, 2))] + out  # a new leading dim
        return tuple(out)

    def values(self, shape: tuple, dtype: str, special: float = 0.08) -> np.ndarray:
        rng = self.rng
        if dtype == "bool":
            return rng.random(shape) < 0.5
        if dtype in INTS:
            lo, hi = (0, 12) if dtype == "uint8" else (-6, 7)
            if self.chance(0.1):
                info = np.iinfo(dtype)
                lo, hi = info.min, int(info.max) + 1
            return rng.integers(lo, hi, size=shape).astype(dtype)
        scale = self.pick((1.0, 1.0, 3.0, 0.1))
        base = np.float64 if dtype in ("float64", "complex128") else np.float32
        a = (rng.standard_normal(shape) * scale).astype(base)
        if dtype in COMPLEX:
            a = (a + 1j * (rng.standard_normal(shape) * scale).astype(base)).astype(dtype)
        if self.chance(special) and a.size:
            flat = a.reshape(-1)
            for _ in range(1 + a.size // 6):
                flat[int(rng.integers(a.size))] = self.pick((np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 0.5))
        return a

    def tensor(self, shape: tuple, dtype: str | None = None, *, grad: bool | None = None,
               layouts: bool = True) -> T:
        dtype = dtype or self.pick(COMMON)
        layout = "contig"
        if layouts and self.chance(0.35):
            layout = self.pick(("t", "step", "expand"))
        if layout == "t" and len(shape) < 2:
            layout = "contig"
        if layout == "expand" and not any(n > 1 for n in shape):
            layout = "contig"
        if layout == "t":
            stored = shape[:-2] + (shape[-1], shape[-2])
        elif layout == "step":
            stored = ((shape[0] * 2,) + shape[1:]) if shape else shape
            layout = layout if shape else "contig"
        elif layout == "expand":
            stored = tuple(1 if (n > 1 and self.chance(0.6)) else n for n in shape)
            if stored == shape:
                stored = tuple(1 if i == shape.index(max(shape)) else n for i, n in enumerate(shape))
        else:
            stored = shape
        floating = dtype in FLOATS or dtype in COMPLEX
        if grad is None:
            grad = floating and self.chance(0.5)
        return T(self.values(stored, dtype), dtype, layout, tuple(shape), grad=grad and floating)

    def index(self, shape: tuple, size: int, bad: float = 0.05) -> T:
        """An int64 index tensor with entries in [0, size) (or out of range, rarely)."""
        hi = max(size, 1)
        a = self.rng.integers(0, hi, size=shape)
        if size == 0 or self.chance(bad):
            a = self.rng.integers(-hi - 1, hi + 2, size=shape)
        return T(a.astype(np.int64), "int64", "contig", tuple(shape))

    def scalar(self, kind: str | None = None):
        kind = kind or self.pick(("int", "int", "float", "float", "bool", "complex"))
        if kind == "int":
            return self.pick((0, 1, 2, -1, 3, -7, 300))
        if kind == "float":
            return self.pick((0.5, -1.5, 2.0, 0.0, 1e-3, 3.25, math.inf, math.nan))
        if kind == "bool":
            return self.pick((True, False))
        return self.pick((1j, 0.5 - 2j))

    def dim(self, ndim: int, *, allow_none: bool = False):
        if allow_none and self.chance(0.25):
            return None
        if ndim == 0:
            return self.pick((0, -1))
        d = int(self.rng.integers(ndim))
        return d - ndim if self.chance(0.3) else d


# ----------------------------------------------------------------------------------------------- the op table

# Each category is one draw function: (draw, op) -> Case. The table maps op names to categories, with the few
# keywords particular to an op.

BINARY = ("add sub mul div true_divide floor_divide remainder fmod pow atan2 maximum minimum fmax fmin hypot "
          "logaddexp logaddexp2 bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift eq ne "
          "lt le gt ge logical_and logical_or logical_xor copysign nextafter xlogy ldexp gcd lcm heaviside "
          "float_power rsub").split()
NO_INPLACE = {"rsub", "isclose"}
UNARY = ("abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh asinh "
         "acosh atanh sigmoid floor ceil round trunc frac sign sgn reciprocal square erf erfc erfinv logical_not "
         "bitwise_not isnan isinf isfinite isposinf isneginf isreal signbit angle nan_to_num positive deg2rad "
         "rad2deg logit sinc i0 lgamma digamma conj real imag relu").split()
UNARY_NO_INPLACE = {"isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "angle", "positive",
                    "conj", "real", "imag", "isclose"}
REDUCE = {  # op: (dim form, takes dtype=)
    "sum": ("dims", True), "mean": ("dims", True), "nansum": ("dims", True), "nanmean": ("dims", True),
    "prod": ("dim1", True), "amax": ("dims", False), "amin": ("dims", False), "max": ("dim1", False),
    "min": ("dim1", False), "std": ("dims", False), "var": ("dims", False), "std_mean": ("dims", False),
    "var_mean": ("dims", False), "logsumexp": ("dims!", False), "argmax": ("dim", False), "argmin": ("dim", False),
    "any": ("dim1", False), "all": ("dim1", False), "count_nonzero": ("dimsnk", False), "median": ("dim1", False),
    "nanmedian": ("dim1", False), "mode": ("dim1", False), "aminmax": ("dimkw", False), "norm": ("dims", True),
}
CUMULATIVE = {"cumsum": True, "cumprod": True, "cummax": False, "cummin": False, "logcumsumexp": False}
SORTING = "sort argsort topk kthvalue msort unique unique_consecutive".split()
INDEXING = ("gather scatter scatter_add scatter_reduce index_select index_add index_copy index_fill masked_fill "
            "masked_select take take_along_dim put getitem setitem").split()
SHAPE = ("reshape view permute transpose flatten squeeze unsqueeze flip roll narrow chunk split movedim tril triu "
         "repeat tile expand t diagonal unflatten swapaxes contiguous clone").split()
JOIN = "cat stack hstack vstack where clamp clip lerp addcmul addcdiv".split()
MATMUL = "matmul mm bmm mv dot outer addmm baddbmm addmv inner kron".split()
ACTIVATIONS = {  # F name: keyword options
    "relu": {}, "gelu": {"approximate": ("none", "tanh")}, "silu": {}, "softplus": {"beta": (1, 2.0)},
    "elu": {"alpha": (1.0, 0.5)}, "leaky_relu": {"negative_slope": (0.01, 0.2)}, "hardtanh": {}, "relu6": {},
    "selu": {}, "celu": {}, "mish": {}, "hardswish": {}, "hardsigmoid": {}, "logsigmoid": {}, "softsign": {},
    "tanhshrink": {}, "softshrink": {}, "hardshrink": {}, "softmax": {"dim": "dim"}, "log_softmax": {"dim": "dim"},
    "softmin": {"dim": "dim"}, "normalize": {"dim": "dim"}, "glu": {"dim": "dim"},
}
LOSSES = "mse_loss l1_loss smooth_l1_loss huber_loss soft_margin_loss kl_div binary_cross_entropy " \
         "binary_cross_entropy_with_logits cross_entropy nll_loss".split()


def binary_case(d: Draw, op: str) -> Case:
    shape = d.shape()
    a = d.tensor(shape)
    form = d.pick(("fn", "fn", "method", "inplace", "out"))
    if form == "inplace" and op in NO_INPLACE:
        form = "fn"
    if d.chance(0.3):
        b = d.scalar()
        args = [b, a] if (form == "fn" and d.chance(0.2)) else [a, b]
    else:
        other = d.broadcast_partner(shape)
        b = d.tensor(other, a.dtype if d.chance(0.5) else None)
        args = [a, b] if d.chance(0.8) else [b, a]
    kwargs = {}
    if op in ("add", "sub", "rsub") and d.chance(0.3):
        kwargs["alpha"] = d.scalar(d.pick(("int", "float", "bool")))
    if op == "div" and d.chance(0.5):
        kwargs["rounding_mode"] = d.pick((None, "trunc", "floor"))
    return Case(op, form, args, kwargs)


def unary_case(d: Draw, op: str) -> Case:
    a = d.tensor(d.shape())
    form = d.pick(("fn", "fn", "method", "inplace", "out"))
    if form == "inplace" and op in UNARY_NO_INPLACE:
        form = "fn"
    if form == "out" and op in UNARY_NO_INPLACE - {"signbit", "isposinf", "isneginf", "angle"}:
        form = "fn"
    kwargs = {}
    if op == "round" and d.chance(0.3):
        kwargs["decimals"] = d.pick((0, 1, 2, -1))
    if op == "nan_to_num" and d.chance(0.5):
        kwargs = {"nan": d.pick((0.0, 2.5)), "posinf": d.pick((None, 1e5)), "neginf": d.pick((None, -7))}
    if op == "logit" and d.chance(0.3):
        kwargs["eps"] = 1e-6
    return Case(op, form, [a], kwargs)


def reduce_case(d: Draw, op: str) -> Case:
    shape = d.shape()
    a = d.tensor(shape)
    how, takes_dtype = REDUCE[op]
    n = len(shape)
    kwargs = {}
    if how in ("dims", "dims!", "dimsnk"):
        if how == "dims!" or d.chance(0.7):
            if d.chance(0.3) and n >= 2:
                kwargs["dim"] = tuple(sorted({d.dim(n), d.dim(n)}, key=lambda i: i % n))
            else:
                kwargs["dim"] = d.dim(n) if how != "dims!" or d.chance(0.8) else ()
    elif how in ("dim1", "dim", "dimkw") and d.chance(0.7):
        kwargs["dim"] = d.dim(n)
    if "dim" in kwargs and how != "dimsnk" and d.chance(0.5):
        kwargs["keepdim"] = d.chance(0.5)
    if takes_dtype and d.chance(0.25):
        kwargs["dtype"] = D(d.pick(("float64", "float32", "int64", "float16", "complex64")))
    if op in ("std", "var", "std_mean", "var_mean") and d.chance(0.4):
        kwargs["correction"] = d.pick((0, 1, 2))
    if op == "norm" and d.chance(0.5):
        kwargs["p"] = d.pick((1, 2, 3.0, math.inf, -math.inf, 0, "fro"))
    form = d.pick(("fn", "fn", "method", "out")) if op not in ("std_mean", "var_mean", "aminmax") else "fn"
    if form == "out" and (op in ("max", "min", "median", "nanmedian", "mode", "norm") or "dim" not in kwargs):
        form = "fn"
    return Case(op, form, [a], kwargs)


def cumulative_case(d: Draw, op: str) -> Case:
    shape = d.shape()
    a = d.tensor(shape)
    kwargs = {"dim": d.dim(len(shape))}
    if CUMULATIVE[op] and d.chance(0.3):
        kwargs["dtype"] = D(d.pick(("float64", "int64", "float32")))
    return Case(op, d.pick(("fn", "method", "out" if CUMULATIVE[op] else "fn")), [a], kwargs)


def sorting_case(d: Draw, op: str) -> Case:
    shape = d.shape()
    dtype = d.pick(("float32", "float64", "int64", "int32", "bool", "float16", "uint8"))
    a = d.tensor(shape, dtype)
    n = len(shape)
    kwargs: dict = {}
    args: list = [a]
    if op in ("sort", "argsort"):
        if d.chance(0.7):
            kwargs["dim"] = d.dim(n)
        if d.chance(0.5):
            kwargs["descending"] = d.chance(0.5)
        if d.chance(0.3):
            kwargs["stable"] = True
    elif op in ("topk", "kthvalue"):
        dim = d.dim(n)
        size = shape[dim] if n else 1
        k = int(d.rng.integers(0 if op == "topk" else 1, size + 1)) if size else d.pick((0, 1))
        args.append(k)
        kwargs["dim"] = dim
        if op == "topk" and d.chance(0.5):
            kwargs["largest"] = d.chance(0.5)
        if d.chance(0.3) and op == "kthvalue":
            kwargs["keepdim"] = True
    elif op in ("unique", "unique_consecutive"):
        a.array = d.rng.integers(0, 3, size=a.array.shape).astype(a.array.dtype) if dtype != "bool" else a.array
        if op == "unique" and d.chance(0.7):
            kwargs["sorted"] = True
        kwargs["return_inverse"] = d.chance(0.5)
        kwargs["return_counts"] = d.chance(0.5)
        if d.chance(0.3) and n:
            kwargs["dim"] = d.dim(n)
    a.grad = False if op in ("unique", "unique_consecutive") else a.grad
    return Case(op, d.pick(("fn", "method")) if op != "msort" else "fn", args, kwargs)


def indexing_case(d: Draw, op: str) -> Case:
    ndim = d.pick((1, 2, 2, 3)) if op not in ("take", "put", "masked_select", "masked_fill") else d.pick((0, 1, 2, 3))
    shape = d.shape(ndim, empty=0.04)
    a = d.tensor(shape)
    n = len(shape)
    dim = d.dim(n)
    size = shape[dim] if n else 1
    form = "fn"
    if op in ("gather", "take_along_dim"):
        ishape = tuple(int(d.rng.integers(0, s + 1)) if i != dim % max(n, 1) or op == "take_along_dim"
                       else d.pick((1, 2, 3)) for i, s in enumerate(shape))
        if op == "take_along_dim":
            ishape = tuple(s if i != dim % max(n, 1) else d.pick((1, 2, 3)) for i, s in enumerate(shape))
        return Case(op, d.pick(("fn", "method")), [a, d.index(ishape, size)], {"dim": dim})
    if op in ("scatter", "scatter_add", "scatter_reduce"):
        ishape = tuple(int(d.rng.integers(0, s + 1)) for s in shape)
        index = d.index(ishape, size)
        src = d.tensor(ishape, a.dtype, layouts=False) if (op != "scatter" or d.chance(0.6)) else d.scalar("float")
        kwargs = {}
        if op == "scatter_reduce":
            kwargs = {"reduce": d.pick(("sum", "prod", "mean", "amax", "amin")), "include_self": d.chance(0.5)}
        elif op == "scatter" and d.chance(0.2) and not isinstance(src, float):
            kwargs = {"reduce": d.pick(("add", "multiply"))}
        form = d.pick(("fn", "method", "inplace"))
        return Case(op, form, [a, dim, index, src], kwargs)
    if op in ("index_select", "index_add", "index_copy", "index_fill"):
        k = d.pick((0, 1, 2, 3)) if op != "index_copy" else min(size, d.pick((0, 1, 2)))
        index = d.index((k,), size)
        if op == "index_copy":  # distinct indices (duplicates are unspecified in PyTorch)
            index.array = d.rng.permutation(max(size, 1))[:k].astype(np.int64)
        if op == "index_select":
            return Case(op, d.pick(("fn", "method", "out")), [a, dim, index])
        if op == "index_fill":
            return Case(op, d.pick(("fn", "method", "inplace")), [a, dim, index, d.scalar()])
        sshape = tuple(k if i == dim % n else s for i, s in enumerate(shape))
        kwargs = {"alpha": d.pick((2, 0.5))} if op == "index_add" and d.chance(0.3) else {}
        return Case(op, d.pick(("fn", "method", "inplace")), [a, dim, index, d.tensor(sshape, a.dtype)], kwargs)
    if op in ("masked_fill", "masked_select"):
        mask = d.tensor(d.broadcast_partner(shape), "bool")
        if op == "masked_select":
            return Case(op, d.pick(("fn", "method")), [a, mask])
        value = d.scalar() if d.chance(0.7) else d.tensor((), d.pick(("float32", "int64", a.dtype)))
        return Case(op, d.pick(("fn", "method", "inplace")), [a, mask, value])
    numel = int(np.prod(shape))
    if op == "take":
        return Case(op, d.pick(("fn", "method")), [a, d.index(d.shape(d.pick((0, 1, 2))), numel)])
    if op == "put":
        index = d.index((d.pick((0, 1, 2)),), numel)
        return Case(op, d.pick(("method", "inplace")), [a, index, d.tensor(index.shape, a.dtype),
                                                        d.chance(0.5)])
    # getitem / setitem: a random index expression
    key = []
    for i, s in enumerate(shape):
        kind = d.pick(("slice", "int", "none", "list", "tensor", "mask", "ellipsis", "full"))
        if kind == "int" and s:
            key.append(int(d.rng.integers(-s, s)))
        elif kind == "slice":
            key.append(slice(d.pick((None, 0, 1, -1)), d.pick((None, 2, -1, 5)), d.pick((None, 1, 2))))
        elif kind == "none":
            key += [None, slice(None)]
        elif kind == "list" and s:
            key.append([int(x) for x in d.rng.integers(-s, s, size=d.pick((1, 2, 3)))])
        elif kind == "tensor":
            key.append(d.index(d.shape(d.pick((0, 1, 2)), empty=0.1), s))
        elif kind == "mask" and i == 0:
            key.append(d.tensor((s,), "bool"))
        elif kind == "ellipsis" and Ellipsis not in key:
            key.append(Ellipsis)
        else:
            key.append(slice(None))
        if d.chance(0.3):
            break
    if op == "getitem":
        return Case(op, "getitem", [a, tuple(key)])
    a.grad = False  # (writing into a leaf that requires grad is PyTorch's error: covered by the in-place forms)
    value = d.scalar(d.pick(("int", "float", "bool"))) if d.chance(0.6) else d.tensor(d.pick(((), (1,))), a.dtype)
    return Case(op, "setitem", [a, tuple(key), value])


def shape_case(d: Draw, op: str) -> Case:
    shape = d.shape(empty=0.04)
    a = d.tensor(shape)
    n = len(shape)
    numel = int(np.prod(shape))
    args: list = [a]
    if op in ("reshape", "view"):
        target = list(d.pick([shape, (numel,), shape[::-1], (-1,), (1,) + shape]))
        if target and target != [-1] and d.chance(0.3):
            target[int(d.rng.integers(len(target)))] = -1
        args.append(tuple(target))
    elif op == "permute":
        args.append(tuple(int(i) for i in d.rng.permutation(n)))
    elif op in ("transpose", "swapaxes", "movedim"):
        args += [d.dim(n), d.dim(n)]
    elif op == "flatten":
        if n and d.chance(0.6):
            args += sorted([d.dim(n) % max(n, 1), d.dim(n) % max(n, 1)])
    elif op == "squeeze":
        if d.chance(0.6):
            args.append(d.dim(n) if d.chance(0.7) or n < 2 else (0, d.dim(n)))
    elif op == "unsqueeze":
        args.append(int(d.rng.integers(-n - 1, n + 1)))
    elif op == "flip":
        args.append(tuple({d.dim(n), d.dim(n)}) if n else ())
    elif op == "roll":
        args += [d.pick((1, -2, 3)), d.dim(n)] if d.chance(0.7) else [2]
    elif op == "narrow":
        dim = d.dim(n)
        size = shape[dim] if n else 0
        start = int(d.rng.integers(-size, size + 1)) if size else 0
        args += [dim, start, int(d.rng.integers(0, max(size - start % max(size, 1), 0) + 1))]
    elif op in ("chunk", "split"):
        args += [d.pick((1, 2, 3)) if op == "chunk" or d.chance(0.7) else [1, 2], d.dim(n)]
    elif op in ("tril", "triu"):
        args.append(d.pick((0, 1, -1, 2)))
    elif op in ("repeat", "tile"):
        args.append(tuple(d.pick((1, 2, 0)) for _ in range(n + d.pick((0, 0, 1)))))
    elif op == "expand":
        args.append(tuple([d.pick((1, 2))] * d.pick((0, 1)) + [d.pick((-1, 3)) if s == 1 else -1 for s in shape]))
    elif op == "diagonal":
        args += [d.pick((0, 1, -1))] + ([0, 1] if d.chance(0.5) else [])
    elif op == "unflatten":
        dim = d.dim(n)
        args += [dim, (-1, 1) if d.chance(0.5) else (shape[dim] if n else 1,)]
    form = "method" if op in ("view", "expand", "repeat", "contiguous") else d.pick(("fn", "method"))
    if op in ("tril", "triu", "t", "squeeze", "unsqueeze", "transpose", "swapaxes") and d.chance(0.2):
        a.clone = True
        form = "inplace"
    return Case(op, form, args)


def join_case(d: Draw, op: str) -> Case:
    shape = d.shape(empty=0.04)
    n = len(shape)
    if op in ("cat", "stack", "hstack", "vstack"):
        dim = d.dim(n + (op == "stack"))
        parts = []
        for _ in range(d.pick((1, 2, 3))):
            s = list(shape)
            if op == "cat" and n and d.chance(0.7):
                s[dim] = d.pick((0, 1, 2))
            parts.append(d.tensor(tuple(s), d.pick(("float32", "float64", "int64", "bool")) if d.chance(0.3) else None))
        kwargs = {"dim": dim} if op in ("cat", "stack") and d.chance(0.8) else {}
        return Case(op, d.pick(("fn", "out")), [parts], kwargs)
    a = d.tensor(shape)
    if op == "where":
        cond = d.tensor(d.broadcast_partner(shape), "bool")
        other = d.tensor(d.broadcast_partner(shape)) if d.chance(0.6) else d.scalar()
        return Case(op, "fn", [cond, a, other] if d.chance(0.8) else [cond, other, a])
    if op in ("clamp", "clip"):
        bound = (lambda: d.scalar(d.pick(("int", "float"))) if d.chance(0.6)
                 else d.tensor(d.broadcast_partner(shape)))
        lo, hi = (bound() if d.chance(0.7) else None), (bound() if d.chance(0.7) else None)
        return Case(op, d.pick(("fn", "method", "inplace", "out")), [a, lo, hi])
    b, c = d.tensor(d.broadcast_partner(shape), a.dtype), d.tensor(d.broadcast_partner(shape), a.dtype)
    if op == "lerp":
        return Case(op, d.pick(("fn", "method", "inplace")), [a, b, c if d.chance(0.5) else d.scalar("float")])
    return Case(op, d.pick(("fn", "method", "inplace")), [a, b, c], {"value": d.pick((1, 0.5, 2))})


def matmul_case(d: Draw, op: str) -> Case:
    dtype = d.pick(("float32", "float64", "int64", "float16", "bfloat16", "complex64", "int32"))
    m, k, n, b = (d.pick((0, 1, 2, 3, 4)) for _ in range(4))
    if op == "matmul":
        ra, rb = d.pick((1, 2, 3)), d.pick((1, 2, 3))
        sa = (b,) * (ra - 2) + (m, k) if ra >= 2 else (k,)
        sb = (d.pick((b, 1)),) * (rb - 2) + (k, n) if rb >= 2 else (k,)
        shapes = [sa, sb]
    else:
        shapes = {"mm": [(m, k), (k, n)], "bmm": [(b, m, k), (b, k, n)], "mv": [(m, k), (k,)],
                  "dot": [(k,), (k,)], "outer": [(m,), (n,)], "addmm": [(m, n), (m, k), (k, n)],
                  "baddbmm": [(b, m, n), (b, m, k), (b, k, n)], "addmv": [(m,), (m, k), (k,)],
                  "inner": [(m, k), (n, k)], "kron": [(m, k), (n,)]}[op]
    if op in ("addmm", "addmv") and d.chance(0.4):
        shapes[0] = shapes[0][-1:]  # a broadcast bias
    other = dtype if d.chance(0.85) else d.pick(("float32", "float64", "int64"))
    args = [d.tensor(s, dtype if i == 0 else other) for i, s in enumerate(shapes)]
    kwargs = {}
    if op in ("addmm", "baddbmm", "addmv") and d.chance(0.4):
        kwargs = {"beta": d.pick((0, 1, 0.5)), "alpha": d.pick((1, 2, 0.5))}
    return Case(op, d.pick(("fn", "method", "out")), args, kwargs)


def activation_case(d: Draw, op: str) -> Case:
    shape = d.shape()
    a = d.tensor(shape, d.pick(("float32", "float64", "float16", "bfloat16", "float32")))
    kwargs = {}
    for key, options in ACTIVATIONS[op].items():
        if options == "dim":
            kwargs[key] = d.dim(len(shape))
        elif d.chance(0.5):
            kwargs[key] = d.pick(options)
    if op in ("relu", "elu", "leaky_relu", "hardtanh", "relu6", "selu", "celu", "silu", "hardswish",
              "hardsigmoid", "mish") and d.chance(0.2):
        kwargs["inplace"] = True
        a.clone = True
    if op in ("softmax", "log_softmax", "softmin") and d.chance(0.2):
        kwargs["dtype"] = D("float64")
    return Case(op, "F", [a], kwargs)


def loss_case(d: Draw, op: str) -> Case:
    dtype = d.pick(("float32", "float64", "float32", "float16", "bfloat16"))
    kwargs = {"reduction": d.pick(("mean", "sum", "none"))} if d.chance(0.7) else {}
    if op in ("cross_entropy", "nll_loss"):
        n, c = d.pick((0, 1, 2, 4)), d.pick((1, 2, 3))
        extra = (d.pick((1, 2)),) if d.chance(0.3) else ()
        shape = (n, c) + extra if d.chance(0.85) else (c,)
        x = d.tensor(shape, dtype)
        tshape = ((n,) + extra) if len(shape) > 1 else ()
        if op == "cross_entropy" and d.chance(0.3):
            target = d.tensor(shape, dtype, grad=False, layouts=False)
            target.array = np.abs(target.array)
        else:
            target = d.index(tshape, c)
            if d.chance(0.2) and target.array.size:
                target.array.reshape(-1)[0] = -100
                kwargs["ignore_index"] = d.pick((-100, 0))
        if d.chance(0.2):
            kwargs["weight"] = d.tensor((c,), dtype, grad=False, layouts=False)
        if op == "cross_entropy" and d.chance(0.3):
            kwargs["label_smoothing"] = d.pick((0.1, 0.0))
        return Case(op, "F", [x, target], kwargs)
    shape = d.shape()
    x = d.tensor(shape, dtype)
    y = d.tensor(shape if d.chance(0.9) else d.broadcast_partner(shape), dtype if d.chance(0.9) else None,
                 grad=d.chance(0.3))
    if op == "binary_cross_entropy":
        x.array = 1 / (1 + np.exp(-x.array.astype(np.float64))).astype(x.array.dtype)
        y.array = np.clip(np.abs(y.array), 0, 1).astype(y.array.dtype) if y.dtype not in COMPLEX else y.array
    if op == "kl_div" and d.chance(0.4):
        kwargs["log_target"] = True
    if op in ("smooth_l1_loss", "huber_loss") and d.chance(0.4):
        kwargs["beta" if op == "smooth_l1_loss" else "delta"] = d.pick((0.5, 2.0))
    return Case(op, "F", [x, y], kwargs)


CATEGORIES: dict[str, tuple[Callable[[Draw, str], Case], list]] = {
    "binary": (binary_case, BINARY), "unary": (unary_case, UNARY), "reduce": (reduce_case, list(REDUCE)),
    "cumulative": (cumulative_case, list(CUMULATIVE)), "sorting": (sorting_case, SORTING),
    "indexing": (indexing_case, INDEXING), "shape": (shape_case, SHAPE), "join": (join_case, JOIN),
    "matmul": (matmul_case, MATMUL), "activation": (activation_case, list(ACTIVATIONS)),
    "loss": (loss_case, LOSSES),
}
OP_CATEGORY = {op: cat for cat, (_, ops) in CATEGORIES.items() for op in ops}


def draw_case(rng: np.random.Generator, ops: list[str]) -> Case:
    d = Draw(rng)
    op = d.pick(ops)
    case = CATEGORIES[OP_CATEGORY[op]][0](d, op)
    if case.form == "out" and d.chance(0.8):  # mostly out= calls that may succeed: no input requires grad
        for a in case.args:
            for t in (a if isinstance(a, list) else [a]):
                if isinstance(t, T):
                    t.grad = False
    other_argument_forms(d, case)
    return case


# the ops whose int arguments (sizes, dims, counts) other_argument_forms may give as another type
INT_ARGUMENT_OPS = {"reshape", "view", "expand", "repeat", "tile", "narrow", "unflatten", "permute", "flatten",
                    "transpose", "swapaxes", "movedim", "squeeze", "unsqueeze", "roll", "chunk", "split", "diagonal",
                    "tril", "triu"}
# what an int argument becomes: types PyTorch's parser refuses for an int (a bool only as 0 or 1), and a NumPy int
INT_FORMS = {"Decimal": Decimal, "float": float, "numpy float": np.float32, "numpy int": np.int64,
             "bool": lambda v: bool(v) if v in (0, 1) else v}


def other_argument_forms(d: Draw, case: Case) -> None:
    """Argument forms drawn after a call's own draws (so that a seed's calls stay what they were, a few of them
    changed): a tensor operand of an in-place, ``out=`` or method call given as a NumPy array (``A``), and an int
    argument of a shape op given as a Decimal, a float, a bool or a NumPy number (``INT_FORMS``)."""
    category = OP_CATEGORY[case.op]
    if category in ("binary", "join", "indexing") and case.form in ("inplace", "out", "method") and d.chance(0.05):
        operands = [i for i, a in enumerate(case.args) if i and isinstance(a, T)]
        if operands:
            i = d.pick(operands)
            case.args[i] = A(case.args[i])
    elif category == "shape" and case.op in INT_ARGUMENT_OPS and d.chance(0.06):
        places = [(i, None) for i, a in enumerate(case.args) if i and type(a) is int]
        places += [(i, j) for i, a in enumerate(case.args) if i and isinstance(a, tuple)
                   for j, v in enumerate(a) if type(v) is int]
        if places:
            i, j = d.pick(places)
            form = INT_FORMS[d.pick(sorted(INT_FORMS))]
            if j is None:
                case.args[i] = form(case.args[i])
            else:
                case.args[i] = case.args[i][:j] + (form(case.args[i][j]),) + case.args[i][j + 1:]


# ----------------------------------------------------------------------------------------------- running


def _dtype(mod, name: str):
    return getattr(mod, name)


def numpy_values(value: T) -> np.ndarray:
    """A tensor argument's values as the call sees them (its layout recipe applied to its array), a new array
    (bfloat16's as float32: NumPy has no bfloat16)."""
    a = value.array.astype(np.float32) if value.dtype == "bfloat16" else value.array
    if value.layout == "t":
        a = np.swapaxes(a, -1, -2)
    elif value.layout == "step":
        a = a[::2]
    elif value.layout == "expand":
        a = np.broadcast_to(a, value.shape)
    return np.array(a)


def materialize(mod, value, leaves: list):
    """The argument in ``mod`` (torch or ember): tensors built from the same arrays, the same views taken."""
    if isinstance(value, A):
        return numpy_values(value.tensor)
    if isinstance(value, T):
        array = value.array.astype(np.float32) if value.dtype == "bfloat16" else value.array
        if value.layout == "expand" and not array.size:
            # an empty view of an expanded tensor (PyTorch keeps its zero strides): the size-0 dimensions expanded
            # from size 1
            array = np.zeros(tuple(1 if n == 0 else n for n in array.shape), array.dtype)
        t = mod.tensor(array)
        if value.dtype == "bfloat16":
            t = t.to(mod.bfloat16)
        if value.grad:
            t.requires_grad_(True)
            leaves.append(t)
        if value.clone:
            t = t.clone()
        if value.layout == "t":
            t = t.transpose(-1, -2)
        elif value.layout == "step":
            t = t[::2]
        elif value.layout == "expand":
            t = t.expand(*value.shape)
        return t
    if isinstance(value, D):
        return _dtype(mod, value.name)
    if isinstance(value, list):
        return [materialize(mod, v, leaves) for v in value]
    if isinstance(value, tuple):
        return tuple(materialize(mod, v, leaves) for v in value)
    return value


def _first_tensor(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            found = _first_tensor(v)
            if found is not None:
                return found
        return None
    return value if hasattr(value, "dtype") and hasattr(value, "shape") else None


def call(mod, case: Case, leaves: list):
    args = [materialize(mod, a, leaves) for a in case.args]
    kwargs = {k: materialize(mod, v, leaves) for k, v in case.kwargs.items()}
    op, form = case.op, case.form
    if form == "F":
        return getattr(mod.nn.functional, op)(*args, **kwargs)
    if form == "getitem":
        return args[0][args[1]]
    if form == "setitem":
        args[0][args[1]] = args[2]
        return args[0]
    if form == "method":
        return getattr(args[0], op)(*args[1:], **kwargs)
    if form == "inplace":
        if not isinstance(args[0], (mod.Tensor,)):
            raise TypeError("in-place target is not a tensor")
        target = args[0]
        if target.requires_grad and target.is_leaf:
            target = args[0] = target.clone()
        result = getattr(target, op + "_")(*args[1:], **kwargs)
        if result is not target:
            raise AssertionError("in-place op did not return its target")
        return result
    fn = getattr(mod, op)
    if form == "out":
        # an empty out= tensor of the first tensor argument's dtype (often not the result's)
        first = _first_tensor(args)
        out = mod.empty(0, dtype=first.dtype if first is not None else mod.float32)
        result = fn(*args, **kwargs, out=out)
        if result is not out:
            raise AssertionError("out= call did not return out")
        return result
    return fn(*args, **kwargs)


TOLERANCE = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
             "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def dtype_name(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def to_numpy(t) -> np.ndarray:
    t = t.detach()
    if dtype_name(t) in ("bfloat16", "float16"):
        t = t.float()
    if isinstance(t, torch.Tensor):  # (force: a conjugate, negative or zero tensor, PyTorch's lazy forms)
        return t.numpy(force=True)
    return np.asarray(t.numpy())


def flatten_result(r) -> list:
    if isinstance(r, (tuple, list)):
        return [x for item in r for x in flatten_result(item)]
    return [r]


def exception_kind(e: BaseException) -> str:
    """The built-in exception class PyTorch's (or ember's) error is an instance of, most specific first."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(e).__name__


def compare_values(et, tt, scale_floats: bool) -> str | None:
    e, t = to_numpy(et), to_numpy(tt)
    if e.shape != t.shape:
        return f"shape {e.shape} != {t.shape}"
    name = dtype_name(tt)
    if name in TOLERANCE:
        rtol, atol = TOLERANCE[name]
        if scale_floats:  # gradients accumulate: tolerance relative to the largest entry
            finite = np.abs(t[np.isfinite(t)])
            atol = max(atol, rtol * float(finite.max(initial=0.0)) * 4)
        bad = ~np.isclose(e, t, rtol=rtol, atol=atol, equal_nan=True)
    else:
        bad = (e != t) & ~((e != e) & (t != t))  # (NaN where PyTorch's is NaN: equal)
    if not bad.any():
        return None
    at = tuple(int(x) for x in np.argwhere(bad)[0]) if bad.ndim else ()
    return f"{int(bad.sum())} of {bad.size} differ, e.g. at {at}: {e[at]!r} vs {t[at]!r}"


def run_case(case: Case) -> list[tuple[str, str]]:
    """The findings of one call: (kind, detail) pairs."""
    outcomes = {}
    for name, mod in (("torch", torch), ("ember", ember)):
        leaves: list = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = call(mod, case, leaves)
                error = None
            except Exception as exc:  # noqa: BLE001 -- the exception is the thing compared
                result, error = None, exc
        outcomes[name] = (result, error, leaves, [str(w.category.__name__) for w in caught])
    (tr, terr, tleaves, twarn), (er, eerr, eleaves, ewarn) = outcomes["torch"], outcomes["ember"]
    findings = []
    if terr is not None or eerr is not None:
        if terr is None:
            return [("error-ember-only", f"{type(eerr).__name__}: {str(eerr)[:160]}")]
        if eerr is None:
            return [("error-torch-only", f"{type(terr).__name__}: {str(terr)[:160]}")]
        if exception_kind(terr) != exception_kind(eerr):
            return [("error-type", f"ember {type(eerr).__name__}: {str(eerr)[:100]} | torch "
                                   f"{type(terr).__name__}: {str(terr)[:100]}")]
        return []
    if set(ewarn) - set(twarn):
        findings.append(("warning-ember-only", ",".join(sorted(set(ewarn) - set(twarn)))))
    touts, eouts = flatten_result(tr), flatten_result(er)
    if len(touts) != len(eouts):
        return findings + [("structure", f"{len(eouts)} results vs {len(touts)}")]
    for i, (t, e) in enumerate(zip(touts, eouts)):
        if not isinstance(t, torch.Tensor):
            if isinstance(e, ember.Tensor) or type(t) is not type(e) or (t != e and not (t != t and e != e)):
                findings.append(("value", f"result {i}: {e!r} vs {t!r}"))
            continue
        if not isinstance(e, ember.Tensor):
            findings.append(("structure", f"result {i}: {type(e).__name__} vs Tensor"))
            continue
        if dtype_name(e) != dtype_name(t):
            findings.append(("dtype", f"result {i}: {dtype_name(e)} vs {dtype_name(t)}"))
            continue
        if tuple(e.shape) != tuple(t.shape):
            findings.append(("shape", f"result {i}: {tuple(e.shape)} vs {tuple(t.shape)}"))
            continue
        problem = compare_values(e, t, False)
        if problem:
            findings.append(("value", f"result {i}: {problem}"))
        if t.is_contiguous() and not e.is_contiguous():
            findings.append(("stride", f"result {i}: {e.stride()} vs contiguous {t.stride()}"))
        elif t.numel() == 0 and t._is_view() and t._base.numel() and e.stride() != t.stride():
            # an empty view of a tensor with elements (always "contiguous"; an input made empty takes NumPy's zero
            # strides under torch.tensor, which is no op's doing)
            findings.append(("stride", f"result {i}: {e.stride()} vs {t.stride()} (an empty view)"))
        if e.requires_grad != t.requires_grad:
            findings.append(("requires_grad", f"result {i}: {e.requires_grad} vs {t.requires_grad}"))
    if findings or not tleaves:
        return findings
    findings += compare_grads(touts, eouts, tleaves, eleaves)
    return findings


def _loss(mod, outs):
    total = None
    for r in outs:
        if isinstance(r, mod.Tensor) and r.requires_grad and (r.is_floating_point() or r.is_complex()):
            # a weighted sum, weights 1, 2, 3, 1, ... in memory order of the result's shape: a plain sum's
            # gradient vanishes for functions whose outputs sum to a constant (softmax), leaving rounding noise
            weights = (mod.arange(r.numel()) % 3 + 1).reshape(r.shape).to(r.dtype)
            r = r * weights
            term = (r.real.sum() + r.imag.sum()) if r.is_complex() else r.sum()
            term = term.double() if dtype_name(term) in ("float16", "bfloat16") else term
            total = term if total is None else total + term.to(total.dtype)
    return total


def compare_grads(touts, eouts, tleaves, eleaves) -> list:
    tloss = _loss(torch, touts)
    if tloss is None:
        return []
    results = {}
    for name, loss, leaves in (("torch", tloss, tleaves), ("ember", None, eleaves)):
        try:
            loss = _loss(ember, eouts) if loss is None else loss
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loss.backward()
            results[name] = (None, [leaf.grad for leaf in leaves])
        except Exception as exc:  # noqa: BLE001
            results[name] = (exc, None)
    (terr, tgrads), (eerr, egrads) = results["torch"], results["ember"]
    if terr is not None or eerr is not None:
        if terr is None:
            return [("grad-error-ember-only", f"{type(eerr).__name__}: {str(eerr)[:160]}")]
        if eerr is None:
            return [("grad-error-torch-only", f"{type(terr).__name__}: {str(terr)[:160]}")]
        return []
    findings = []
    for i, (tg, eg) in enumerate(zip(tgrads, egrads)):
        if (tg is None) != (eg is None):
            findings.append(("grad", f"leaf {i}: ember grad {'None' if eg is None else 'set'}, torch's "
                                     f"{'None' if tg is None else 'set'}"))
        elif tg is not None:
            if dtype_name(eg) != dtype_name(tg) or tuple(eg.shape) != tuple(tg.shape):
                findings.append(("grad", f"leaf {i}: {dtype_name(eg)}{tuple(eg.shape)} vs "
                                         f"{dtype_name(tg)}{tuple(tg.shape)}"))
                continue
            problem = compare_values(eg, tg, True)
            if problem:
                findings.append(("grad", f"leaf {i}: {problem}"))
    return findings


# ----------------------------------------------------------------------------------------------- allowed

# Intended differences, each documented in docs/api.md's "Differences from PyTorch". A finding is allowed when one
# entry's op and kind match and its test of the call and the finding's detail holds.


def _has_layout(case: Case, layout: str) -> bool:
    return any(isinstance(a, T) and a.layout == layout for a in case.args)


def _ties(case: Case) -> bool:
    """Whether the input (the first tensor argument) holds equal values, among which an index is a choice."""
    first = case.args[0]
    if not isinstance(first, T):
        return False
    return first.layout == "expand" or np.unique(first.array).size < first.array.size


def _complex_nonfinite(case: Case) -> bool:
    return any(isinstance(a, T) and a.dtype in COMPLEX and not np.isfinite(a.array).all() for a in case.args)


def _grad_at_nan(case: Case, detail: str) -> bool:
    """Whether a gradient finding's first differing element (``e.g. at (i, j)`` of the leaf) is one of a NaN input."""
    first = case.args[0] if case.args else None
    a = first.array if isinstance(first, T) else None  # (the leaf: the array before the layout recipe's view)
    at = re.search(r"e\.g\. at \(([-\d, ]*)\)", detail)
    if a is None or at is None or not detail.startswith("leaf 0") or a.dtype.kind not in "fc":
        return False
    index = tuple(int(i) for i in at.group(1).replace(" ", "").split(",") if i)
    return len(index) == a.ndim and bool(np.isnan(a[index]))


SORTS = "Differences from PyTorch, Tensors and numerics: topk is stable"
TIES = "Differences from PyTorch, Tensors and numerics: which index a tie gives"
SCATTER = ('Differences from PyTorch, Tensors and numerics: scatter_(..., reduce="multiply") and reduce="add" '
           "have no gradient")
NAN_BF16 = "Differences from PyTorch, Mixed precision: A NaN converted to bfloat16 may carry another payload"
QUIRKS = "Differences from PyTorch, Tensors and numerics: PyTorch quirks not matched"

# (op or "*", kind, test of the call and the finding's detail, the docs reference)
ALLOWED: list[tuple[str, str, Callable[[Case, str], bool], str]] = [
    # the indices (result 1; argsort's only result) among equal values
    ("topk", "value", lambda c, d: _ties(c) and d.startswith("result 1"), SORTS),
    *((op, "value", lambda c, d: _ties(c) and d.startswith("result 1"), TIES)
      for op in ("kthvalue", "median", "nanmedian", "mode")),
    *((op, "value", lambda c, d: _has_layout(c, "expand") and "dim" in c.kwargs, QUIRKS)
      for op in ("median", "nanmedian")),
    ("*", "value", lambda c, d: _complex_nonfinite(c), QUIRKS),
    *((op, "grad", _grad_at_nan, QUIRKS) for op in ACTIVATIONS),  # (PyTorch's depends on the element's place)
    ("signbit", "value", lambda c, d: c.args[0].dtype == "bfloat16" and np.isnan(c.args[0].array).any(), NAN_BF16),
    ("*", "error-ember-only", lambda c, d: c.form in ("inplace", "setitem", "out") and _has_layout(c, "expand"),
     "docs/api.md, Autograd: no in-place writes to an expanded tensor"),
    ("take_along_dim", "error-ember-only", lambda c, d: True,
     "docs/api.md, Tensors and numerics: take_along_dim refuses an index outside the dimension"),
    ("scatter", "grad-error-ember-only", lambda c, d: "reduce" in c.kwargs, SCATTER),
    ("scatter", "error-ember-only", lambda c, d: "reduce" in c.kwargs and any(isinstance(a, T) and a.grad
                                                                            for a in c.args), SCATTER),
]


def allowed(case: Case, kind: str, detail: str) -> str | None:
    for op, k, test, reference in ALLOWED:
        if op in ("*", case.op) and k == kind and test(case, detail):
            return reference
    return None


# Kinds, worst first: silently wrong values and dtypes before errors before warnings.
KIND_ORDER = ["value", "dtype", "shape", "structure", "grad", "requires_grad", "stride", "error-torch-only",
              "grad-error-torch-only", "error-ember-only", "grad-error-ember-only", "error-type", "warning-ember-only",
              "crash"]


def fuzz(seed: int, count: int, ops: list[str] | None = None, skip: int = 0):
    """Run ``count`` calls from ``seed``; returns (findings, allowed findings): lists of (index, case, kind, detail)."""
    names = ops or sorted(OP_CATEGORY)
    found, let_through = [], []
    for index in range(skip, skip + count):
        case = draw_case(np.random.default_rng([seed, index]), names)  # (each call its own stream: --skip)
        with np.errstate(all="ignore"):  # (the comparisons' own inf/nan arithmetic)
            try:
                results = run_case(case)
            except Exception as exc:  # noqa: BLE001 -- a comparison that itself fails is reported, not fatal
                results = [("crash", f"{type(exc).__name__}: {str(exc)[:160]}")]
        for kind, detail in results:
            ref = allowed(case, kind, detail)
            (let_through if ref else found).append((index, case, kind, detail))
    return found, let_through


def report(found, let_through, count: int, show: int) -> str:
    lines = [f"{count} calls: {len(found)} findings, {len(let_through)} allowed (documented differences)"]
    by_kind = defaultdict(int)
    for _, _, kind, _ in found:
        by_kind[kind] += 1
    lines.append("by kind: " + ", ".join(f"{k} {by_kind[k]}" for k in KIND_ORDER if by_kind[k]))
    groups = defaultdict(list)
    for item in found:
        groups[(item[1].op, item[2])].append(item)
    order = sorted(groups, key=lambda g: (KIND_ORDER.index(g[1]) if g[1] in KIND_ORDER else 99, g[0]))
    for op, kind in order:
        items = groups[(op, kind)]
        lines.append(f"\n[{kind}] {op}: {len(items)}")
        for index, case, _, detail in items[:show]:
            lines.append(f"  #{index} {case.text()}\n      {detail}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--skip", type=int, default=0, help="start at this call index of the seed's sequence")
    parser.add_argument("--ops", default="", help="comma-separated op names or categories (" +
                        ", ".join(CATEGORIES) + ")")
    parser.add_argument("--show", type=int, default=3, help="examples printed per op and kind")
    args = parser.parse_args(argv)
    ops = None
    if args.ops:
        ops = []
        for name in args.ops.split(","):
            ops += CATEGORIES[name][1] if name in CATEGORIES else [name]
        unknown = [o for o in ops if o not in OP_CATEGORY]
        if unknown:
            parser.error(f"unknown ops: {unknown}")
    found, let_through = fuzz(args.seed, args.count, ops, args.skip)
    print(report(found, let_through, args.count, args.show))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
