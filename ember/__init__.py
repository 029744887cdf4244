"""ember: a small deep-learning framework with PyTorch's API, built on NumPy.

``import ember as torch`` runs ordinary PyTorch CPU training scripts. Heavy
subpackages (nn, optim, utils, distributed) load on first use, so ``import
ember`` stays fast.
"""

from __future__ import annotations

import importlib

from . import ops as _ops  # noqa: F401  (binds Tensor methods)
from ._backend import xp as _xp
from ._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from ._device import device
from ._dtype import (
    bool_ as bool,
)
from ._dtype import (
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from ._size import Size
from ._tensor import Tensor
from ._tensor_str import set_printoptions
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .ops import clone
from .ops.activation import log_softmax, softmax
from .ops.elementwise import (
    add,
    allclose,
    div,
    eq,
    equal,
    floor_divide,
    ge,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    le,
    logical_and,
    logical_not,
    logical_or,
    lt,
    maximum,
    minimum,
    mul,
    ne,
    pow,
    remainder,
    sub,
    true_divide,
)
from .ops.indexing import (
    gather,
    index_select,
    masked_fill,
    masked_select,
    narrow,
    nonzero,
    scatter,
    scatter_add,
    select,
    where,
)
from .ops.linalg import bmm, dot, matmul, mm, mv, outer
from .ops.reduction import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    cumsum,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    std,
    sum,
    var,
)
from .ops.shape import (
    broadcast_to,
    cat,
    chunk,
    concat,
    concatenate,
    flatten,
    flip,
    hstack,
    permute,
    reshape,
    split,
    squeeze,
    stack,
    t,
    transpose,
    unbind,
    unflatten,
    unsqueeze,
    vstack,
)
from .ops.unary import (
    abs,
    ceil,
    clamp,
    clip,
    cos,
    exp,
    floor,
    log,
    log1p,
    neg,
    reciprocal,
    relu,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    tanh,
    trunc,
)
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__version__ = "0.1.0"

# PyTorch's alternative names
divide, multiply, subtract, negative = div, mul, sub, neg
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
swapaxes = transpose

FloatTensor = DoubleTensor = LongTensor = Tensor  # legacy constructors' names, for isinstance


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def result_type(a, b) -> dtype:
    from .ops.elementwise import promote

    a, b = promote(a, b)
    return (a if isinstance(a, Tensor) else b).dtype


def promote_types(a: dtype, b: dtype) -> dtype:
    from ._dtype import promote_types as _pt

    return _pt(a, b)


def set_num_threads(n: int) -> None:
    """Accepted for compatibility; BLAS threads are set by OMP_NUM_THREADS before start-up."""


def get_num_threads() -> int:
    import os

    return os.cpu_count() or 1


_SUBMODULES = {"nn", "optim", "utils", "distributed", "cuda", "autograd", "serialization", "compat", "diagnostics",
               "futures"}


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("save", "load"):
        return getattr(importlib.import_module(f"{__name__}.serialization"), name)
    raise AttributeError(
        f"ember has no attribute '{name}': torch.{name} is not implemented in ember "
        "(docs/api.md lists what is supported)"
    )
