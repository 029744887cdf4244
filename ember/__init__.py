"""ember: a small deep-learning framework with PyTorch's API, built on NumPy.

``import ember as torch`` runs ordinary PyTorch CPU training scripts. Heavy
subpackages (nn, optim, utils, distributed) load on first use, so ``import
ember`` stays fast.
"""

from __future__ import annotations

import importlib
import math as _math

from . import _missing, _parallel
from . import ops as _ops  # noqa: F401  (binds Tensor methods)
from ._backend import xp as _xp
from ._compile import compile
from ._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_file,
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
    bfloat16,
    cdouble,
    cfloat,
    chalf,
    complex32,
    complex64,
    complex128,
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
from ._dtype import (
    bool_ as bool,
)
from ._flags import (
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from ._layout import sparse_coo, strided
from ._memory_format import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from ._missing import MissingFeatureError
from ._size import Size
from ._sparse import sparse_coo_tensor
from ._tensor import Tensor
from ._tensor_str import set_printoptions
from ._type_info import finfo, iinfo
from ._windows import bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .ops import addcdiv, addcmul, clone
from .ops.activation import log_softmax, softmax
from .ops.complex import (
    adjoint,
    angle,
    complex,
    conj,
    conj_physical,
    imag,
    is_complex,
    is_conj,
    is_neg,
    polar,
    real,
    resolve_conj,
    resolve_neg,
    view_as_complex,
    view_as_real,
)
from .ops.cumulative import cummax, cummin, cumprod, diff, logcumsumexp, trapezoid
from .ops.distance import cdist, cosine_similarity, dist, pairwise_distance
from .ops.einsum import einsum
from .ops.elementwise import (
    add,
    allclose,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
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
    logical_xor,
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
from .ops.gamma_fns import digamma, lgamma, mvlgamma, polygamma, xlogy
from .ops.index_update import index_add, index_copy, index_fill, index_put
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
from .ops.linalg import addbmm, addmm, addmv, addr, baddbmm, bmm, dot, inner, matmul, mm, mv, outer
from .ops.linalg_compat import (
    cholesky,
    cholesky_inverse,
    cholesky_solve,
    cross,
    det,
    inverse,
    logdet,
    lu,
    lu_solve,
    lu_unpack,
    matrix_exp,
    matrix_power,
    pinverse,
    qr,
    slogdet,
    svd,
    triangular_solve,
)
from .ops.lookup import bincount, bucketize, isin, searchsorted, take, take_along_dim, unique
from .ops.matrix import diag, diag_embed, diagonal, trace, tril, tril_indices, triu, triu_indices
from .ops.movement import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    dstack,
    fliplr,
    flipud,
    meshgrid,
    moveaxis,
    movedim,
    repeat_interleave,
    roll,
    rot90,
    tensor_split,
    tile,
)
from .ops.pointwise import (
    acos,
    acosh,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    clamp_max,
    clamp_min,
    cosh,
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    fmax,
    fmin,
    fmod,
    frac,
    hypot,
    lerp,
    log2,
    log10,
    logaddexp,
    logit,
    nan_to_num,
    sgn,
    sinh,
    tan,
)
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
from .ops.sampling import bernoulli, multinomial
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
from .ops.sorting import argsort, msort, sort, topk
from .ops.statistics import aminmax, count_nonzero, kthvalue, median, mode, nanmean, nansum, std_mean, var_mean
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
from .version import EMBER_VERSION as __version__  # under ember.compat: the torch-style ember.version.__version__

# PyTorch's constants (Python floats, as in PyTorch) and NumPy's spelling of None in an index
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan
newaxis = None

# PyTorch's alternative names
divide, multiply, subtract, negative = div, mul, sub, neg
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
swapaxes = transpose
swapdims, absolute = transpose, abs

from ._legacy import (  # noqa: E402  (PyTorch's legacy typed constructors)
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
)
from .storage import TypedStorage, UntypedStorage  # noqa: E402


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
    """Threads for ember's elementwise kernels, as ``torch.set_num_threads``.

    Differs from PyTorch: the BLAS library's threads (matrix multiplies) are fixed at start-up by
    ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS``; this call does not change them.
    """
    _parallel.set_num_threads(n)


def get_num_threads() -> int:
    """Threads ember's elementwise kernels use: ``OMP_NUM_THREADS`` at start-up, else the cores."""
    return _parallel.get_num_threads()


_module_getattr = _missing.module_getattr(__name__)


# Top-level names whose modules load on first use: {name: module}.
_LAZY = {"save": "serialization", "load": "serialization", "autocast": "amp.autocast_mode",
         "is_autocast_enabled": "amp.autocast_mode", "get_autocast_dtype": "amp.autocast_mode",
         "set_autocast_enabled": "amp.autocast_mode", "get_autocast_gpu_dtype": "amp.autocast_mode",
         "get_autocast_cpu_dtype": "amp.autocast_mode", "stft": "fft._stft", "istft": "fft._stft"}


def __getattr__(name: str):
    # Subpackages (nn, optim, utils, distributed, ...) load on first use, as ``import torch`` makes them reachable.
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    return _module_getattr(name)


# torch._foreach_* (lists of tensors, op by op)
from .ops.foreach import FUNCTIONS as _FOREACH  # noqa: E402

globals().update(_FOREACH)

# NumPy's keyword spellings (axis=, keepdims=) for the functions PyTorch implements natively
from ._arg_aliases import with_numpy_names as _with_numpy_names  # noqa: E402

for _name, _fn in list(globals().items()):
    if not _name.startswith("_") and callable(_fn) and not isinstance(_fn, type):
        globals()[_name] = _with_numpy_names(_name, _fn)

# Last: the training-loop diagnostics register on the public hooks (ember's own modules never import them).
from . import diagnostics as _diagnostics  # noqa: E402,F401
