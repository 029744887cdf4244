"""Parameter initialisation (``ember.nn.init``), PyTorch's schemes and defaults.

Every function fills its tensor in place, outside autograd (as PyTorch does
under ``no_grad``; the version counter is bumped), from ember's global
generator (``ember.manual_seed``) or the ``generator`` given, and returns it;
a meta tensor (``ember/_meta.py``) is returned as it is and nothing is drawn,
as PyTorch's meta kernels draw nothing.
The draws are PyTorch's for the same seed (its formulas for bounds and
standard deviations, in its float arithmetic), bit for bit for float32 and
float64 tensors, except ``orthogonal_``: its normal draw is PyTorch's, its QR
is NumPy's LAPACK (a few float32 ulps from PyTorch's), and
``trunc_normal_`` when [a, b] holds less than 30 % of the mass (a rejection
test on ``log``, whose last bit may differ from PyTorch's vectorised one).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from .. import _dtype, _warnings
from .. import _random_draws as draws
from .._backend import xp
from .._memory_format import half_number
from .._tensor import Tensor
from ..autograd import no_grad
from ..ops.inplace import check_normal_std, check_uniform_bounds, draws_nothing
from ..overrides import dispatched_by_keyword
from ..random import compiles_draw, generator_of

_LINEAR_LIKE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (relu: sqrt(2), tanh: 5/3, leaky_relu: sqrt(2/(1+slope^2)), ...)."""
    if nonlinearity in _LINEAR_LIKE:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fill(tensor: Tensor, values) -> Tensor:
    """``tensor.fill_(values)`` under no_grad, as PyTorch's: a number past the dtype's range is its error."""
    values = half_number(_dtype.fill_number(values, tensor._data.dtype, tensor._data.size), tensor._data.dtype)
    tensor._data[...] = values
    tensor._bump_version()
    return tensor


def _draw(tensor: Tensor, draw, contiguous: bool | None = None):
    """``draw(n, real_dtype, contiguous)``'s flat values shaped as ``tensor``, in its memory order."""
    a = tensor._data
    c = a.flags.c_contiguous if contiguous is None else contiguous
    return draws.in_memory_order(draws.floating(lambda n, real: draw(n, real, c), (a.size,), a.dtype), a)


@dispatched_by_keyword
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with U(a, b)."""
    return _uniform(tensor, a, b, generator)


@dispatched_by_keyword
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2)."""
    return _normal(tensor, mean, std, generator)


# (the schemes built on them call these: PyTorch shows a torch function mode uniform_ and normal_ called by a
# program, not by xavier_uniform_ or kaiming_normal_)
def _uniform(tensor: Tensor, a: float, b: float, generator) -> Tensor:
    check_uniform_bounds(tensor, a, b)
    if draws_nothing(tensor):
        return tensor
    g = generator_of(generator)
    flat = _drawn_in_place(tensor)
    if flat is not None:
        draws.uniform(g, flat.size, a, b, flat.dtype, out=flat)
        tensor._bump_version()
        return tensor
    return _fill(tensor, _draw(tensor, lambda n, real, _: draws.uniform(g, n, a, b, real)))


def _normal(tensor: Tensor, mean: float, std: float, generator) -> Tensor:
    check_normal_std(std)
    if draws_nothing(tensor):
        return tensor
    g = generator_of(generator)
    flat = _drawn_in_place(tensor)
    if flat is not None:
        draws.normal(g, flat.size, mean, std, flat.dtype, out=flat)
        tensor._bump_version()
        return tensor
    return _fill(tensor, _draw(tensor, lambda n, real, c: draws.normal(g, n, mean, std, real, c)))


def _drawn_in_place(tensor: Tensor):
    """The flat view a draw may write straight into (a large float32 or float64 tensor in C order: a model's
    weights, without a second array of their size to copy from), or None: ``_fill`` then copies the values in."""
    a = tensor._data
    if a.dtype in (xp.float32, xp.float64) and a.flags.c_contiguous and a.flags.writeable and \
            compiles_draw(a.size):
        return a.reshape(-1)
    return None


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """Fill with N(mean, std^2) restricted to [a, b] (absolute bounds), as PyTorch: when [a, b] holds more than
    30 % of the mass, normal draws, then a whole fresh draw taken where values still fall outside, until none
    does; otherwise uniform proposals on [a, b] accepted by a log-density test, redrawn where rejected."""
    if a >= b:
        raise ValueError(f"trunc_normal_: a ({a}) must be less than b ({b})")
    if mean < a - 2 * std or mean > b + 2 * std:
        _warnings.warn_in("torch.nn.init", "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                          "distribution of values may be incorrect.")
    if draws_nothing(tensor):
        return tensor
    g = generator_of(generator)
    dt = tensor._data.dtype

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
        lo, hi = xp.asarray(a, dt), xp.asarray(b, dt)

        def normal():
            return _draw(tensor, lambda n, real, c: draws.normal(g, n, mean, std, real, c))

        values = normal()
        while True:
            outside = (values < lo) | (values > hi)
            if not outside.any():
                break
            values = xp.where(outside, normal(), values)
        return _fill(tensor, values)
    log_peak = xp.asarray(-0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2, dt)
    m, s, half = xp.asarray(mean, dt), xp.asarray(std, dt), xp.asarray(-0.5, dt)

    def proposal():
        return _draw(tensor, lambda n, real, _: draws.uniform(g, n, a, b, real))

    def rejected(candidates):  # log(u) > log_pdf(candidate) - log_pdf(mode), in the tensor's dtype
        z = (candidates - m) / s
        u = _draw(tensor, lambda n, real, _: draws.uniform(g, n, 0.0, 1.0, real))
        with xp.errstate(divide="ignore"):
            return xp.log(u) > (z * z) * half - log_peak

    values = proposal()
    pending = rejected(values)
    while pending.any():
        candidates = proposal()
        values = xp.where(pending, candidates, values)
        pending = xp.where(pending, rejected(candidates), pending)
    return _fill(tensor, values)


@dispatched_by_keyword
def constant_(tensor: Tensor, val: float) -> Tensor:
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (ones on the diagonal) in a 2-D tensor."""
    if tensor._data.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, xp.eye(*tensor._data.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A 3-, 4- or 5-D convolution weight that passes its inputs through: in each of ``groups`` groups,
    output channel d has a 1 at input channel d's centre (for d below both channel counts), 0 elsewhere."""
    shape = tensor._data.shape
    if len(shape) not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    d = xp.arange(min(per_group, shape[1]))
    out = (xp.arange(groups)[:, None] * per_group + d).reshape(-1)
    values = xp.zeros(shape)
    values[(out, xp.tile(d, groups), *(xp.full(out.shape, k // 2) for k in shape[2:]))] = 1
    return _fill(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-D N(0, std^2) matrix in which each column has ceil(sparsity * rows) zeros at random rows
    (Martens, 2010)."""
    if tensor._data.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if draws_nothing(tensor):
        return tensor
    rows, cols = tensor._data.shape
    g = generator_of(generator)
    _normal(tensor, 0.0, std, generator)
    num_zeros = int(math.ceil(sparsity * rows))
    for col in range(cols):  # PyTorch: one randperm of the rows per column, its first num_zeros zeroed
        tensor._data[draws.randperm(g, rows)[:num_zeros], col] = 0
    tensor._bump_version()
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field."""
    if tensor._data.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor._data.shape[2:])
    return tensor._data.shape[1] * receptive, tensor._data.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    """The fan ``mode`` names ("fan_in" or "fan_out", in any case, as PyTorch's) of a weight of shape ``tensor``'s."""
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * (gain * math.sqrt(2.0 / float(fan_in + fan_out)))  # PyTorch's rounding steps
    return _uniform(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return _normal(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in tensor._data.shape:
        _warnings.warn("Initializing zero-element tensors is a no-op")
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


@dispatched_by_keyword
def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., 2015); ``a`` is the leaky_relu slope."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else _uniform(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else _normal(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one (Saxe et al., 2013)."""
    if tensor._data.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor._data.size == 0 or draws_nothing(tensor):
        return tensor
    rows = tensor._data.shape[0]
    cols = tensor._data.size // rows
    g = generator_of(generator)  # PyTorch's normal draw of a new contiguous (rows, cols) tensor, then QR
    flat = draws.floating(lambda n, real: draws.normal(g, n, 0.0, 1.0, real), (rows, cols), tensor._data.dtype)
    if rows < cols:
        flat = flat.T
    q, r = xp.linalg.qr(flat)
    q *= xp.sign(xp.diag(r))  # makes the distribution uniform over orthogonal matrices
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor._data.shape))


def init_fan_in_uniform_(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's default for Linear/Conv: kaiming_uniform_(a=sqrt(5)) weight, U(+-1/sqrt(fan_in)) bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in = _calculate_fan_in_and_fan_out(weight)[0]
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)


def _no_grad_uniform_(tensor: Tensor, a: float, b: float, generator=None) -> Tensor:
    """PyTorch's private helper behind its schemes, which public programs call for their own initialisations:
    ``tensor.uniform_(a, b, generator=generator)`` under no_grad (so a leaf that requires grad may be filled)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def _no_grad_normal_(tensor: Tensor, mean: float, std: float, generator=None) -> Tensor:
    """``tensor.normal_(mean, std, generator=generator)`` under no_grad (PyTorch's private helper)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _no_grad_trunc_normal_(tensor: Tensor, mean: float, std: float, a: float, b: float,
                           generator=None) -> Tensor:
    """``trunc_normal_``'s draw (PyTorch's private helper, which ``trunc_normal_`` calls)."""
    return trunc_normal_(tensor, mean, std, a, b, generator=generator)


def _no_grad_fill_(tensor: Tensor, val: float) -> Tensor:
    """``tensor.fill_(val)`` under no_grad (PyTorch's private helper)."""
    with no_grad():
        return tensor.fill_(val)


def _no_grad_zero_(tensor: Tensor) -> Tensor:
    """``tensor.zero_()`` under no_grad (PyTorch's private helper)."""
    with no_grad():
        return tensor.zero_()


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _deprecated_alias(scheme: Callable[_P, _R]) -> Callable[_P, _R]:
    """PyTorch's old name of ``scheme`` without the trailing underscore (``constant`` for ``constant_``):
    the same function, warning a FutureWarning at the caller's line as PyTorch's does."""
    new_name = scheme.__name__
    old_name = new_name[:-1]

    @functools.wraps(scheme)
    def alias(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        _warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning)
        return scheme(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old_name
    alias.__doc__ = f"Deprecated name of :func:`{new_name}` (PyTorch warns a FutureWarning; so does ember)."
    return alias


uniform = _deprecated_alias(uniform_)
normal = _deprecated_alias(normal_)
constant = _deprecated_alias(constant_)
eye = _deprecated_alias(eye_)
dirac = _deprecated_alias(dirac_)
xavier_uniform = _deprecated_alias(xavier_uniform_)
xavier_normal = _deprecated_alias(xavier_normal_)
kaiming_uniform = _deprecated_alias(kaiming_uniform_)
kaiming_normal = _deprecated_alias(kaiming_normal_)
orthogonal = _deprecated_alias(orthogonal_)
sparse = _deprecated_alias(sparse_)

from .._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # a missing name says which torch feature ember lacks
