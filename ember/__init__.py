"""ember: a small deep-learning framework with PyTorch's API, built on NumPy.

``import ember as torch`` runs ordinary PyTorch CPU training scripts. Heavy
subpackages (nn, optim, utils, distributed) load on first use, so ``import
ember`` stays fast.
"""

from __future__ import annotations

import importlib
import math as _math
import os as _os
import sys as _sys
import typing as _typing

# (_ops first: it imports ops, which imports Tensor, whose methods call ops when they run)
from . import __config__, _missing, _ops, _parallel, version  # noqa: F401
from ._backend import xp as _xp
from ._compile import compile
from ._creation import (
    _as_tensor_fullprec,
    arange,
    as_tensor,
    asarray,
    empty,
    empty_like,
    empty_strided,
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
    range,
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)
from ._device import OutOfMemoryError, device
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
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
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
    qint8,
    qint32,
    quint2x4,
    quint4x2,
    quint8,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._dtype import (
    bool_ as bool,
)
from ._flags import (
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from ._inplace_functions import (  # the top-level spellings of in-place methods: torch.clamp_(x, 0, 1)
    abs_,
    acos_,
    acosh_,
    addmv_,
    arccos_,
    arccosh_,
    arcsin_,
    arcsinh_,
    arctan_,
    arctanh_,
    asin_,
    asinh_,
    atan_,
    atanh_,
    ceil_,
    clamp_,
    clamp_max_,
    clamp_min_,
    clip_,
    cos_,
    cosh_,
    deg2rad_,
    detach_,
    erf_,
    erfc_,
    exp2_,
    exp_,
    expm1_,
    fill_,
    fix_,
    floor_,
    frac_,
    gcd_,
    i0_,
    index_put_,
    lcm_,
    log1p_,
    log2_,
    log10_,
    log_,
    logit_,
    nan_to_num_,
    neg_,
    negative_,
    rad2deg_,
    reciprocal_,
    relu_,
    resize_as_,
    round_,
    rsqrt_,
    sigmoid_,
    sin_,
    sinc_,
    sinh_,
    sqrt_,
    square_,
    tan_,
    tanh_,
    trunc_,
    xlogy_,
    zero_,
)
from ._layout import Layout as layout
from ._layout import sparse_coo, sparse_csc, sparse_csr, strided
from ._memory_format import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from ._missing import MissingFeatureError
from ._size import Size
from ._sparse import sparse_coo_tensor
from ._sparse_compressed import sparse_csc_tensor, sparse_csr_tensor
from ._tensor import Tensor
from ._tensor_str import set_printoptions
from ._type_info import finfo, iinfo
from ._windows import bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.grad_mode import is_inference, is_inference_mode_enabled
from .ops import addcdiv, addcmul, clone, dequantize
from .ops.activation import _softmax_backward_data, log_softmax, softmax
from .ops.broadcasting import broadcast_shapes, broadcast_tensors
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
from .ops.cumulative import cummax, cummin, cumprod, cumulative_trapezoid, diff, logcumsumexp, trapezoid, trapz
from .ops.distance import cdist, cosine_similarity, dist, pairwise_distance, pdist
from .ops.einsum import einsum
from .ops.elementwise import (
    add,
    allclose,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    div,
    eq,
    equal,
    float_power,
    floor_divide,
    ge,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    isreal,
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
    signbit,
    sub,
    true_divide,
)
from .ops.finite_differences import gradient
from .ops.float_parts import frexp, ldexp, ldexp_, nextafter
from .ops.gamma_fns import digamma, igamma, igammac, lgamma, mvlgamma, polygamma, xlogy
from .ops.histogram import histc, histogram
from .ops.index_update import (
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_reduce,
    masked_scatter,
    put,
    scatter_reduce,
)
from .ops.indexing import (
    argwhere,
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
from .ops.inplace import fill
from .ops.integer_fns import gcd, lcm
from .ops.linalg import (
    addbmm,
    addmm,
    addmv,
    addr,
    baddbmm,
    bmm,
    chain_matmul,
    dot,
    ger,
    inner,
    kron,
    matmul,
    mm,
    mv,
    outer,
    tensordot,
    vdot,
)
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
    matrix_rank,
    pinverse,
    qr,
    slogdet,
    svd,
    symeig,
    triangular_solve,
)
from .ops.lookup import bincount, bucketize, isin, searchsorted, take, take_along_dim, unique, unique_consecutive
from .ops.matrix import block_diag, diag, diag_embed, diagonal, trace, tril, tril_indices, triu, triu_indices
from .ops.movement import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    cartesian_prod,
    column_stack,
    dsplit,
    dstack,
    fliplr,
    flipud,
    hsplit,
    meshgrid,
    moveaxis,
    movedim,
    repeat_interleave,
    roll,
    rot90,
    tensor_split,
    tile,
    vsplit,
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
    copysign,
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
    heaviside,
    hypot,
    lerp,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logit,
    nan_to_num,
    sgn,
    sinh,
    tan,
)
from .ops.quantize import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine
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
from .ops.sampling import bernoulli, binomial, multinomial, poisson
from .ops.shape import (
    broadcast_to,
    cat,
    chunk,
    concat,
    concatenate,
    expand_copy,
    flatten,
    flip,
    hstack,
    permute,
    ravel,
    reshape,
    row_stack,
    split,
    split_with_sizes,
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
from .ops.special_fns import deg2rad, i0, rad2deg, renorm, rsub, sinc
from .ops.statistics import (
    aminmax,
    corrcoef,
    count_nonzero,
    cov,
    kthvalue,
    median,
    mode,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    quantile,
    std_mean,
    var_mean,
)
from .ops.strided import as_strided
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
    positive,
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
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

# PyTorch's constants (Python floats, as in PyTorch) and NumPy's spelling of None in an index
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan
newaxis = None

# PyTorch's alternative names
divide, multiply, subtract, negative = div, mul, sub, neg
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
swapaxes = transpose
swapdims, absolute, fix = transpose, abs, trunc

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
from .storage import (  # noqa: E402  (and the legacy typed storages)
    BoolStorage,
    ByteStorage,
    CharStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    IntStorage,
    LongStorage,
    ShortStorage,
    TypedStorage,
    UntypedStorage,
)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    """Whether ``obj`` is a storage (``TypedStorage``, ``UntypedStorage`` or a legacy typed storage)."""
    return isinstance(obj, (TypedStorage, UntypedStorage))


def typename(obj: _typing.Any, /) -> str:
    """The fully qualified name of ``obj``'s type: a tensor's ``type()`` (``'torch.FloatTensor'``, as PyTorch
    names it), else ``module.qualname`` of ``obj`` (a class or function) or of its class (builtins unqualified).
    ember's own classes are named by their ember modules."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def numel(input: Tensor) -> int:
    """The number of elements of ``input`` (a tensor: anything else is PyTorch's TypeError)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.numel()


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """A sparse (or dense) matrix times a dense one: ``torch.mm``, as PyTorch's (its node ``MmBackward0``)."""
    return mm(input, mat2)


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same data, cut from the graph."""
    return input.detach()


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_nonzero(input: Tensor) -> bool:
    """``input.is_nonzero()``: the truth of a one-element tensor, PyTorch's RuntimeError for any other."""
    return input.is_nonzero()


def result_type(a, b) -> dtype:
    from .ops.elementwise import promote

    a, b = promote(a, b)
    return (a if isinstance(a, Tensor) else b).dtype


def promote_types(a: dtype, b: dtype) -> dtype:
    from ._dtype import promote_types as _pt

    return _pt(a, b)


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether PyTorch's casting rules allow a result of dtype ``from_`` to be written into a tensor of dtype
    ``to`` (what in-place ops and ``out=`` check): not complex into real, floating into integral, nor anything
    but bool into bool; narrowing is allowed."""
    from ._dtype import can_cast_result, to_np

    for position, (name, value) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(value, dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {position}) must be torch.dtype, not "
                            f"{type(value).__name__}")
    return can_cast_result(to_np(from_), to_np(to))


from ._checks import (  # noqa: E402  (torch._check and its kin)
    _assert_async,
    _check,
    _check_index,
    _check_is_size,
    _check_not_implemented,
    _check_tensor_all,
    _check_tensor_all_with,
    _check_type,
    _check_value,
    _check_with,
)


def _assert(condition, message: str) -> None:
    """``torch._assert``: AssertionError(message) unless ``condition`` (symbolic tracing records the call); also
    under ``python -O``."""
    if not condition:
        raise AssertionError(message)


def set_num_threads(n: int) -> None:
    """Threads for ember's kernels and its matrix multiplies, as ``torch.set_num_threads``.

    The matrix multiplies are NumPy's: the call sets NumPy's OpenBLAS thread count too, so the user's own
    NumPy products in this process follow it as well.
    """
    _parallel.set_num_threads(n)


def get_num_threads() -> int:
    """Threads ember's elementwise kernels use: ``OMP_NUM_THREADS`` at start-up, else the cores."""
    return _parallel.get_num_threads()


_module_getattr = _missing.module_getattr(__name__)


# Top-level names whose modules load on first use: {name: module}.
_LAZY = {"save": "serialization", "load": "serialization", "autocast": "amp.autocast_mode",
         "GradScaler": "amp.grad_scaler",  # (torch.GradScaler: torch.amp.GradScaler at the top level)
         "is_autocast_enabled": "amp.autocast_mode", "get_autocast_dtype": "amp.autocast_mode",
         "set_autocast_enabled": "amp.autocast_mode", "get_autocast_gpu_dtype": "amp.autocast_mode",
         "get_autocast_cpu_dtype": "amp.autocast_mode", "stft": "fft._stft", "istft": "fft._stft",
         "vmap": "func", "Future": "futures", "from_dlpack": "utils.dlpack",
         "norm_except_dim": "nn.utils.weight_norm", "_weight_norm": "nn.utils.weight_norm",
         "svd_lowrank": "_lowrank", "pca_lowrank": "_lowrank", "PyTorchFileReader": "serialization._file_reader",
         "ScriptModule": "jit", "_amp_foreach_non_finite_check_and_unscale_": "amp.grad_scaler"}
# PyTorch's native neural-network operators that it also exposes at the top level (torch.embedding, torch.conv2d,
# torch.layer_norm ...), in their native signatures (ember/_nn_toplevel.py)
_NN_TOPLEVEL = ("adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "avg_pool1d", "batch_norm", "bilinear",
                "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle", "conv1d", "conv2d", "conv3d",
                "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_embedding_loss", "dropout",
                "embedding", "embedding_bag", "feature_alpha_dropout", "group_norm", "hardshrink",
                "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d",
                "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "pixel_shuffle", "pixel_unshuffle",
                "poisson_nll_loss", "prelu", "rms_norm", "rrelu", "rrelu_", "selu", "selu_", "threshold",
                "threshold_", "triplet_margin_loss")
_LAZY.update(dict.fromkeys(_NN_TOPLEVEL, "_nn_toplevel"))
# PyTorch's deprecated build flags: {name: (backends module, function)}; reading one warns, as PyTorch's, and
# answers what the function answers
_DEPRECATED_FLAGS = {"has_mps": ("mps", "is_built"), "has_cuda": ("cuda", "is_built"),
                     "has_cudnn": ("cudnn", "is_available"), "has_mkldnn": ("mkldnn", "is_available")}


if _typing.TYPE_CHECKING:  # what the lazy names are, for type checkers (which then flag a misspelt ``ember.X``)
    from . import (
        accelerator,
        amp,
        autograd,
        backends,
        compiler,
        cpu,
        cuda,
        distributed,
        distributions,
        fft,
        func,
        futures,
        jit,
        linalg,
        multiprocessing,
        nn,
        onnx,
        optim,
        profiler,
        random,
        serialization,
        special,
        storage,
        testing,
        torch_version,
        utils,
        version,
    )
    from ._lowrank import pca_lowrank, svd_lowrank
    from ._nn_toplevel import (
        adaptive_avg_pool1d,
        adaptive_max_pool1d,
        alpha_dropout,
        avg_pool1d,
        batch_norm,
        bilinear,
        binary_cross_entropy_with_logits,
        celu,
        celu_,
        channel_shuffle,
        conv1d,
        conv2d,
        conv3d,
        conv_transpose1d,
        conv_transpose2d,
        conv_transpose3d,
        cosine_embedding_loss,
        dropout,
        embedding,
        embedding_bag,
        feature_alpha_dropout,
        group_norm,
        hardshrink,
        hinge_embedding_loss,
        instance_norm,
        kl_div,
        layer_norm,
        margin_ranking_loss,
        max_pool1d,
        max_pool1d_with_indices,
        max_pool2d,
        max_pool3d,
        pixel_shuffle,
        pixel_unshuffle,
        poisson_nll_loss,
        prelu,
        rms_norm,
        rrelu,
        rrelu_,
        selu,
        selu_,
        threshold,
        threshold_,
        triplet_margin_loss,
    )
    from .amp.autocast_mode import (
        autocast,
        get_autocast_cpu_dtype,
        get_autocast_dtype,
        get_autocast_gpu_dtype,
        is_autocast_enabled,
        set_autocast_enabled,
    )
    from .amp.grad_scaler import GradScaler
    from .fft._stft import istft, stft
    from .func import vmap
    from .futures import Future
    from .jit import ScriptModule
    from .nn.utils.weight_norm import _weight_norm, norm_except_dim
    from .serialization import load, save
    from .serialization._file_reader import PyTorchFileReader
    from .utils.dlpack import from_dlpack

    __version__: str
else:
    def __getattr__(name: str):
        if name == "__version__":
            # ember's own version; the PyTorch-style one (ember.version.__version__, "2.13.0+ember0.1.0") where
            # ``torch`` is ember (python -m ember.compat), since programs compare torch.__version__ with PyTorch's.
            return version.__version__ if _sys.modules.get("torch") is _sys.modules[__name__] else version.EMBER_VERSION
        # Subpackages (nn, optim, utils, distributed, ...) load on first use, as ``import torch`` makes them reachable.
        if name in _LAZY:
            return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        if name in _DEPRECATED_FLAGS:
            backend, function = _DEPRECATED_FLAGS[name]
            from . import _warnings

            _warnings.warn(f"'{name}' is deprecated, please use 'torch.backends.{backend}.{function}()'")
            return getattr(importlib.import_module(f"{__name__}.backends.{backend}"), function)()
        if name in ("_C", "_dynamo", "_inductor", "_functorch", "_subclasses"):  # as PyTorch loads them: on first use
            return importlib.import_module(f"{__name__}.{name}")
        return _module_getattr(name)


# torch._foreach_* (lists of tensors, op by op)
from .ops.foreach import FUNCTIONS as _FOREACH  # noqa: E402

globals().update(_FOREACH)

# PyTorch's keyword names (torch.gather(input=x, ...)) and NumPy's spellings (axis=, keepdims=) for the functions
# PyTorch implements natively
from ._arg_aliases import accept_torch_names as _accept_torch_names  # noqa: E402

_accept_torch_names(globals())

# PyTorch's out= keyword on the functions that take it
from ._out import add_out_keyword as _add_out_keyword  # noqa: E402

_add_out_keyword(globals())

# the factories a torch function mode sees (ember.overrides)
from .overrides import dispatch_factories as _dispatch_factories  # noqa: E402

_dispatch_factories(globals())

# The training-loop warnings (ember.diagnostics) attach to public hooks only when enabled: by
# ``ember.diagnostics.enable()``, by ``python -m ember.compat``, or here, by EMBER_DIAGNOSTICS=1.
if _os.environ.get("EMBER_DIAGNOSTICS") == "1":
    importlib.import_module(f"{__name__}.diagnostics").enable()

# The public names (type checkers read a py.typed package's exports from here).
__all__ = [
    "abs", "absolute", "accelerator", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr",
    "adjoint", "all", "allclose", "amax", "amin", "aminmax", "amp", "angle", "any", "arange", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "are_deterministic_algorithms_enabled", "argmax", "argmin",
    "argsort", "argwhere", "as_tensor", "asarray", "asin", "asinh", "atan", "atan2", "atanh", "atleast_1d",
    "atleast_2d", "atleast_3d",
    "BFloat16Tensor",
    "autocast", "autograd", "backends", "baddbmm", "bartlett_window", "bernoulli", "bfloat16", "bincount",
    "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "blackman_window", "block_diag", "bmm", "bool", "BoolTensor", "broadcast_shapes", "broadcast_tensors",
    "broadcast_to", "bucketize", "can_cast",
    "ByteTensor", "cartesian_prod", "cat", "cdist", "cdouble", "ceil", "cfloat", "chalf", "channels_last",
    "channels_last_3d", "CharTensor", "cholesky", "cholesky_inverse", "cholesky_solve", "chunk", "clamp", "clamp_max",
    "clamp_min", "clip", "clone", "column_stack", "compile", "compiler", "complex", "complex128", "complex32",
    "complex64", "concat", "concatenate", "conj", "conj_physical", "contiguous_format", "cos", "cosh",
    "corrcoef", "cosine_similarity", "count_nonzero", "cov", "cpu", "cross", "cuda", "cummax", "cummin", "cumprod",
    "cumsum",
    "cumulative_trapezoid", "gradient", "det",
    "device", "diag", "diag_embed", "diagonal", "diff", "digamma", "dist", "distributed", "distributions", "div",
    "divide", "dot", "double", "DoubleTensor", "dstack", "dtype", "e", "einsum", "empty", "empty_like", "empty_strided",
    "enable_grad",
    "eq", "equal", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "eye", "fft", "finfo", "flatten", "flip", "fliplr",
    "flipud", "float", "float16", "float32", "float64", "FloatTensor", "floor", "floor_divide", "fmax", "fmin", "fmod",
    "frac", "from_dlpack", "from_file", "from_numpy", "full", "full_like", "func", "Future", "futures", "gather", "ge",
    "Generator", "default_generator", "GradScaler",
    "get_autocast_cpu_dtype", "get_autocast_dtype", "get_autocast_gpu_dtype", "get_default_device", "get_default_dtype",
    "get_float32_matmul_precision", "get_num_threads", "get_rng_state", "greater", "greater_equal", "gt", "half",
    "HalfTensor", "hamming_window", "hann_window", "hstack", "hypot", "copysign", "igamma", "igammac", "iinfo", "imag",
    "index_add",
    "index_copy",
    "index_fill", "index_reduce", "index_put", "index_select", "inf", "inference_mode", "initial_seed", "inner",
    "int", "int16",
    "int32", "int64", "int8", "IntTensor", "inverse", "is_autocast_enabled", "is_complex", "is_conj",
    "is_deterministic_algorithms_warn_only_enabled", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
    "is_floating_point", "is_grad_enabled", "is_nonzero", "is_inference", "is_inference_mode_enabled", "is_neg",
    "is_tensor",
    "isclose", "isfinite", "isin", "isinf", "isnan", "istft",
    "jit", "kaiser_window", "kron", "kthvalue", "le", "lerp", "less",
    "less_equal", "lgamma", "linalg", "linspace", "load", "log", "log10", "log1p", "log2", "log_softmax", "logaddexp",
    "logaddexp2", "logcumsumexp", "logdet", "logical_and", "logical_not", "logical_or", "logical_xor", "logit",
    "logspace", "logsumexp", "long", "LongTensor", "lt", "lu", "lu_solve", "lu_unpack", "manual_seed", "masked_fill",
    "masked_scatter", "masked_select", "matmul", "matrix_exp", "matrix_power",
    "max", "maximum", "mean", "median", "memory_format",
    "meshgrid", "min", "minimum", "MissingFeatureError", "mm", "mode", "moveaxis", "movedim", "msort", "mul",
    "multinomial", "multiply", "multiprocessing", "mv", "mvlgamma", "nan", "nan_to_num", "nanmean",
    "nanmedian", "nanquantile", "nansum", "narrow",
    "ne", "neg", "negative", "newaxis", "nn", "no_grad", "nonzero", "norm", "normal", "not_equal", "numel", "ones",
    "ones_like", "onnx", "optim", "outer", "pairwise_distance", "pca_lowrank", "pdist", "permute", "pi", "pinverse",
    "PyTorchFileReader", "ScriptModule",
    "polar",
    "polygamma", "positive", "pow", "preserve_format", "prod", "profiler", "promote_types", "put", "qr",
    "quantile",
    "rand", "rand_like", "randint", "randint_like", "randn",
    "randn_like", "random", "randperm", "ravel", "real", "reciprocal", "relu", "remainder", "repeat_interleave",
    "reshape", "resolve_conj", "resolve_neg", "result_type", "roll", "rot90", "round", "rsqrt", "save",
    "scalar_tensor", "scatter", "scatter_add", "scatter_reduce", "searchsorted", "seed", "select", "serialization",
    "set_autocast_enabled", "set_default_device",
    "set_default_dtype", "set_default_tensor_type", "set_float32_matmul_precision", "set_grad_enabled",
    "set_num_threads", "set_printoptions", "set_rng_state", "sgn", "short", "ShortTensor", "sigmoid", "sign", "sin",
    "sinh", "Size", "slogdet", "softmax", "sort", "sparse_coo", "sparse_coo_tensor", "special", "split", "sqrt",
    "square", "squeeze", "stack", "std", "std_mean", "stft", "storage", "strided", "sub", "subtract", "sum", "svd",
    "svd_lowrank",
    "swapaxes", "swapdims", "t", "take", "take_along_dim", "tan",
    "tanh", "Tensor", "tensor", "tensor_split", "hsplit", "vsplit", "dsplit", "tensordot", "testing",
    "tile", "topk", "torch_version", "trace", "transpose", "trapezoid", "trapz", "triangular_solve", "tril",
    "tril_indices",
    "triu", "triu_indices", "true_divide", "trunc", "fix", "TypedStorage", "uint8", "unbind", "unflatten", "unique",
    "unsqueeze", "UntypedStorage", "use_deterministic_algorithms", "utils", "var", "var_mean", "vdot", "version",
    "view_as_complex", "view_as_real", "vmap", "vstack", "row_stack", "where", "xlogy", "zeros", "zeros_like",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "uint16", "uint32", "uint64",
    "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "float_power", "isneginf", "isposinf", "isreal",
    "signbit",
    "unique_consecutive", "expand_copy", "split_with_sizes", "get_deterministic_debug_mode",
    "deg2rad", "rad2deg", "sinc", "i0", "renorm", "rsub",
    "set_deterministic_debug_mode", "OutOfMemoryError", "layout", "is_storage", "binomial", "poisson", "symeig",
    "matrix_rank",
    "BoolStorage", "ByteStorage", "CharStorage", "DoubleStorage", "FloatStorage", "HalfStorage", "IntStorage",
    "LongStorage", "ShortStorage", "as_strided", "dequantize",
    "sparse_csr", "sparse_csc", "sparse_csr_tensor", "sparse_csc_tensor", "ger", "detach", "spmm",
    "histc", "histogram", "range", "chain_matmul", "typename",
    "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
    "heaviside", "gcd", "gcd_", "lcm", "lcm_", "ldexp", "ldexp_", "nextafter", "frexp", "addmv_", "norm_except_dim",
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_", "asinh_",
    "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill", "fill_", "fix_", "floor_", "frac_", "i0_", "index_put_",
    "log10_",
    "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
    "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "xlogy_", "zero_",
    # the top-level neural-network operators (_NN_TOPLEVEL)
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "avg_pool1d", "batch_norm", "bilinear", "celu",
    "celu_", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "dropout",
    "embedding", "embedding_bag", "feature_alpha_dropout", "group_norm", "hardshrink", "instance_norm", "layer_norm",
    "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "pixel_shuffle", "pixel_unshuffle", "prelu", "rms_norm",
    "selu", "selu_", "threshold", "threshold_", "binary_cross_entropy_with_logits", "channel_shuffle",
    "cosine_embedding_loss", "hinge_embedding_loss", "kl_div", "margin_ranking_loss", "poisson_nll_loss", "rrelu",
    "rrelu_", "triplet_margin_loss",
]
