"""The reductions of ``ember/ops/reduction.py`` (and the cumulative, nan-, arg- and order-statistic reductions beside
them) with every keyword and at their edges, against PyTorch on the same inputs (``keyword_oracle.same``): ``dim``
omitted, None, an int, a negative int, a tuple, a list, empty, repeated and out of range, ``keepdim`` given and not,
the function and the method; 0-d, empty, size-1 and one-element inputs; NaN, infinities and both zeros where the
extremes and the order statistics choose; every dtype PyTorch takes (integers, bool, float16, bfloat16); ``dtype=``
(the order of its check against ``dim``'s), ``out=`` (the right tensors, another dtype, another shape),
``correction``/``unbiased``, the norms' orders. The values, dtypes and shapes, the warnings, the first-order
gradients in float64 and, where cheap, the create_graph gradients and their derivatives; or PyTorch's error type and
the gist of its message."""

import numpy as np
import pytest
from keyword_oracle import mark_known, same

# Differences from PyTorch these tests found and this change did not fix (docs/testing.md lists them): each
# test named is a strict xfail, so a fix shows as an XPASS and takes its name out of this table.
KNOWN = {
    "a call PyTorch's argument parser refuses (keepdim without dim, dim=None, unbiased with correction), ember computes": {
        'test_correction_and_unbiased[std-False--1]',
        'test_correction_and_unbiased[std-False-0.5]',
        'test_correction_and_unbiased[std-False-0]',
        'test_correction_and_unbiased[std-False-1]',
        'test_correction_and_unbiased[std-False-2]',
        'test_correction_and_unbiased[std-False-5]',
        'test_correction_and_unbiased[std-False-None]',
        'test_correction_and_unbiased[std-False-True]',
        'test_correction_and_unbiased[std-True--1]',
        'test_correction_and_unbiased[std-True-0.5]',
        'test_correction_and_unbiased[std-True-0]',
        'test_correction_and_unbiased[std-True-1]',
        'test_correction_and_unbiased[std-True-2]',
        'test_correction_and_unbiased[std-True-5]',
        'test_correction_and_unbiased[std-True-None]',
        'test_correction_and_unbiased[std-True-True]',
        'test_correction_and_unbiased[std_mean-False--1]',
        'test_correction_and_unbiased[std_mean-False-0.5]',
        'test_correction_and_unbiased[std_mean-False-0]',
        'test_correction_and_unbiased[std_mean-False-1]',
        'test_correction_and_unbiased[std_mean-False-2]',
        'test_correction_and_unbiased[std_mean-False-5]',
        'test_correction_and_unbiased[std_mean-False-None]',
        'test_correction_and_unbiased[std_mean-False-True]',
        'test_correction_and_unbiased[std_mean-True--1]',
        'test_correction_and_unbiased[std_mean-True-0.5]',
        'test_correction_and_unbiased[std_mean-True-0]',
        'test_correction_and_unbiased[std_mean-True-1]',
        'test_correction_and_unbiased[std_mean-True-2]',
        'test_correction_and_unbiased[std_mean-True-5]',
        'test_correction_and_unbiased[std_mean-True-None]',
        'test_correction_and_unbiased[std_mean-True-True]',
        'test_correction_and_unbiased[var-False--1]',
        'test_correction_and_unbiased[var-False-0.5]',
        'test_correction_and_unbiased[var-False-0]',
        'test_correction_and_unbiased[var-False-1]',
        'test_correction_and_unbiased[var-False-2]',
        'test_correction_and_unbiased[var-False-5]',
        'test_correction_and_unbiased[var-False-None]',
        'test_correction_and_unbiased[var-False-True]',
        'test_correction_and_unbiased[var-True--1]',
        'test_correction_and_unbiased[var-True-0.5]',
        'test_correction_and_unbiased[var-True-0]',
        'test_correction_and_unbiased[var-True-1]',
        'test_correction_and_unbiased[var-True-2]',
        'test_correction_and_unbiased[var-True-5]',
        'test_correction_and_unbiased[var-True-None]',
        'test_correction_and_unbiased[var-True-True]',
        'test_correction_and_unbiased[var_mean-False--1]',
        'test_correction_and_unbiased[var_mean-False-0.5]',
        'test_correction_and_unbiased[var_mean-False-0]',
        'test_correction_and_unbiased[var_mean-False-1]',
        'test_correction_and_unbiased[var_mean-False-2]',
        'test_correction_and_unbiased[var_mean-False-5]',
        'test_correction_and_unbiased[var_mean-False-None]',
        'test_correction_and_unbiased[var_mean-False-True]',
        'test_correction_and_unbiased[var_mean-True--1]',
        'test_correction_and_unbiased[var_mean-True-0.5]',
        'test_correction_and_unbiased[var_mean-True-0]',
        'test_correction_and_unbiased[var_mean-True-1]',
        'test_correction_and_unbiased[var_mean-True-2]',
        'test_correction_and_unbiased[var_mean-True-5]',
        'test_correction_and_unbiased[var_mean-True-None]',
        'test_correction_and_unbiased[var_mean-True-True]',
        'test_dim_and_keepdim_of_a_3d_input[logsumexp-None]',
        'test_dim_and_keepdim_of_a_3d_input[max-None]',
        'test_dim_and_keepdim_of_a_3d_input[max-omitted]',
        'test_dim_and_keepdim_of_a_3d_input[median-None]',
        'test_dim_and_keepdim_of_a_3d_input[median-omitted]',
        'test_dim_and_keepdim_of_a_3d_input[min-None]',
        'test_dim_and_keepdim_of_a_3d_input[min-omitted]',
        'test_dim_and_keepdim_of_a_3d_input[nanmedian-None]',
        'test_dim_and_keepdim_of_a_3d_input[nanmedian-omitted]',
        'test_edge_shapes[logsumexp-0-d]',
        'test_edge_shapes[logsumexp-0x3]',
        'test_edge_shapes[logsumexp-1]',
        'test_edge_shapes[logsumexp-3x1]',
        'test_edge_shapes[max-0-d]',
        'test_edge_shapes[max-1]',
        'test_edge_shapes[max-3x1]',
        'test_edge_shapes[median-0-d]',
        'test_edge_shapes[median-0x3]',
        'test_edge_shapes[median-1]',
        'test_edge_shapes[median-3x1]',
        'test_edge_shapes[min-0-d]',
        'test_edge_shapes[min-1]',
        'test_edge_shapes[min-3x1]',
        'test_edge_shapes[nanmedian-0-d]',
        'test_edge_shapes[nanmedian-0x3]',
        'test_edge_shapes[nanmedian-1]',
        'test_edge_shapes[nanmedian-3x1]',
        'test_positional_and_refused_arguments[max]',
        'test_positional_and_refused_arguments[median]',
        'test_positional_and_refused_arguments[min]',
        'test_positional_and_refused_arguments[nanmedian]',
    },
    "cummax/cummin of a 0-d tensor: PyTorch's own dim message": {
        'test_cumulative_dims_and_shapes[cummax--4]',
        'test_cumulative_dims_and_shapes[cummax-1]',
        'test_cumulative_dims_and_shapes[cummax-2]',
        'test_cumulative_dims_and_shapes[cummax-3]',
        'test_cumulative_dims_and_shapes[cummin--4]',
        'test_cumulative_dims_and_shapes[cummin-1]',
        'test_cumulative_dims_and_shapes[cummin-2]',
        'test_cumulative_dims_and_shapes[cummin-3]',
    },
    # (PyTorch's warning comes once per process, so whether these match depends on the tests run before)
    "a complex input's gradient through dtype=: PyTorch warns 'Casting complex values to real' once per process": {
        'test_dtype_keyword[cumprod-complex128]',
        'test_dtype_keyword[cumsum-complex128]',
        'test_dtype_keyword[mean-complex128]',
        'test_dtype_keyword[prod-complex128]',
        'test_dtype_keyword[sum-complex128]',
    },
    "max()/min() of an empty tensor with keepdim: PyTorch's parser refuses first": {
        'test_edge_shapes[max-0x3]',
        'test_edge_shapes[min-0x3]',
    },
    "mean's out= cast message names Double (PyTorch's Float)": {
        'test_out_keyword[mean-bool]',
        'test_out_keyword[mean-int64]',
    },
    "nanmean with an integer dtype= of a tensor requiring grad: ember's message": {
        'test_dtype_keyword[nanmean-bool]',
        'test_dtype_keyword[nanmean-int32]',
        'test_dtype_keyword[nanmean-int64]',
        'test_dtype_keyword[nanmean-uint8]',
    },
    "out= refused under autograd: the op named, or all/any computed, as PyTorch's": {
        'test_out_keyword[all-requires grad]',
        'test_out_keyword[any-requires grad]',
        'test_out_keyword[norm-requires grad]',
    },
    'the create_graph second derivative at a tie, a zero or a NaN': {
        'test_norm_orders_and_dims[()--inf]',
        'test_norm_orders_and_dims[()-1]',
        'test_norm_orders_and_dims[()-inf]',
        'test_norm_orders_and_dims[(0, 1)--inf]',
        'test_norm_orders_and_dims[(0, 1)-1]',
        'test_norm_orders_and_dims[(0, 1)-inf]',
        'test_norm_orders_and_dims[(0, 1, 2)--inf]',
        'test_norm_orders_and_dims[(0, 1, 2)-1]',
        'test_norm_orders_and_dims[(0, 1, 2)-inf]',
        'test_norm_orders_and_dims[-1--inf]',
        'test_norm_orders_and_dims[-1-1]',
        'test_norm_orders_and_dims[-1-inf]',
        'test_norm_orders_and_dims[1--inf]',
        'test_norm_orders_and_dims[1-1]',
        'test_norm_orders_and_dims[1-inf]',
        'test_norm_orders_and_dims[None--inf]',
        'test_norm_orders_and_dims[None-1]',
        'test_norm_orders_and_dims[None-inf]',
        'test_norm_orders_and_dims[omitted--inf]',
        'test_norm_orders_and_dims[omitted-1]',
        'test_norm_orders_and_dims[omitted-inf]',
    },
    'values at a non-finite edge': {
        'test_nonfinite_zeros_and_ties[cumprod-nan]',
        'test_nonfinite_zeros_and_ties[nanmean-all nan]',
        'test_nonfinite_zeros_and_ties[prod-nan]',
    },
}


@pytest.fixture(autouse=True)
def _known_differences(request):
    mark_known(request, KNOWN)

OMIT = "omitted"
RNG = np.random.default_rng(51)
ARRAYS = {
    "2x3x4": RNG.standard_normal((2, 3, 4)),
    "0-d": np.array(1.5),
    "0x3": np.zeros((0, 3)),
    "3x1": RNG.standard_normal((3, 1)),
    "1": np.array([-0.5]),
}
# reductions taking (input, dim, keepdim); prod takes one int dim; logsumexp needs dim; count_nonzero has no keepdim
DIM_KEEPDIM = ["sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "logsumexp", "var", "std", "var_mean",
               "std_mean", "norm", "all", "any", "argmax", "argmin", "max", "min", "median", "nanmedian", "mode",
               "aminmax"]
WITH_DIM = DIM_KEEPDIM + ["count_nonzero"]
CUMULATIVE = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
DIMS = [OMIT, None, 0, -1, 1, (0, 2), (-1, 0), (), [1], 3, -4, (0, 0)]


def _reduce(name: str, dim, keepdim, method: bool = False, **extra):
    """``name`` called on its input with ``dim``/``keepdim`` as keywords (left out when OMIT)."""
    kw = dict(extra)
    if dim is not OMIT:
        kw["dim"] = list(dim) if isinstance(dim, list) else dim
    if keepdim is not OMIT:
        kw["keepdim"] = keepdim
    if method:
        return lambda m, x: getattr(x, name)(**kw)
    return lambda m, x: getattr(m, name)(x, **kw)


@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name", WITH_DIM)
def test_dim_and_keepdim_of_a_3d_input(name, dim):
    keeps = [OMIT] if name == "count_nonzero" else [OMIT, True]
    # (PyTorch's var/std over dim=() reduce every dim forward, and none in backward: infinite gradients, not followed)
    grad = not (name.startswith(("var", "std")) and dim == ())
    for keepdim in keeps:
        same(_reduce(name, dim, keepdim), [ARRAYS["2x3x4"]], ["float64"], grad=grad, double=keepdim is OMIT)
    same(_reduce(name, dim, False, method=True), [ARRAYS["2x3x4"]], ["float64"], grad=False)


@pytest.mark.parametrize("shape", ["0-d", "0x3", "3x1", "1"])
@pytest.mark.parametrize("name", WITH_DIM)
def test_edge_shapes(name, shape):
    for dim in (OMIT, None, 0, -1, (), (0, -1)):
        for keepdim in ([OMIT] if name == "count_nonzero" else [OMIT, True]):
            grad = not (name.startswith(("var", "std")) and dim == ())  # (as above)
            same(_reduce(name, dim, keepdim), [ARRAYS[shape]], ["float64"], grad=grad, double=True)


@pytest.mark.parametrize("dim", [0, -1, 1, 2, 3, -4, None, (0, 1)], ids=str)
@pytest.mark.parametrize("name", CUMULATIVE)
def test_cumulative_dims_and_shapes(name, dim):
    for shape in ("2x3x4", "0-d", "0x3", "3x1"):
        same(lambda m, x: getattr(m, name)(x, dim), [ARRAYS[shape]], ["float64"], double=True)
        same(lambda m, x: getattr(x, name)(dim=dim), [ARRAYS[shape]], ["float64"], grad=False)


SPECIAL = {
    "nan": np.array([[1.0, np.nan, 3.0], [2.0, 0.0, -1.0]]),
    "infinities": np.array([[np.inf, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]]),
    "zeros": np.array([[0.0, -0.0, 0.0], [-0.0, -0.0, 2.0]]),
    "ties": np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]]),
    "all nan": np.array([[np.nan, np.nan], [np.nan, 1.0]]),
}


@pytest.mark.parametrize("values", list(SPECIAL))
@pytest.mark.parametrize("name", WITH_DIM + CUMULATIVE)
def test_nonfinite_zeros_and_ties(name, values):
    """Where the extremes, the order statistics and the nan-reductions choose; the gradients of the create_graph
    backward too (the all-reduce max/min/median with a NaN extreme)."""
    dims = [1, 0] if name in CUMULATIVE else [OMIT, 1, 0]
    for dim in dims:
        call = (lambda m, x: getattr(m, name)(x, dim)) if name in CUMULATIVE else _reduce(name, dim, OMIT)  # noqa: B023
        # (a zero's sign where the extremes tie at 0.0 and -0.0: not compared, docs/testing.md lists it)
        same(call, [SPECIAL[values]], ["float64"], double=True, signed=values != "zeros")


DTYPES = ["float32", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"]
INTEGRAL = np.array([[1.0, 0.0, 3.0, 2.0], [2.0, 5.0, 0.0, 1.0], [0.0, 1.0, 1.0, 4.0]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", WITH_DIM + CUMULATIVE)
def test_input_dtypes(name, dtype):
    """Every input dtype: PyTorch's result dtype (sum's int64 of an int or bool input, prod's, mean's refusal ...), or
    its NotImplementedError / RuntimeError; half precision's values within its rounding."""
    for dim in ([1, 0] if name in CUMULATIVE else [OMIT, 1]):
        call = (lambda m, x: getattr(m, name)(x, dim)) if name in CUMULATIVE else _reduce(name, dim, OMIT)  # noqa: B023
        same(call, [INTEGRAL], [dtype])


WITH_DTYPE = ["sum", "mean", "prod", "nansum", "nanmean", "cumsum", "cumprod", "norm", "logcumsumexp"]
DTYPE_KEYWORDS = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "uint8", "bool", "complex128"]


@pytest.mark.parametrize("dtype", DTYPE_KEYWORDS)
@pytest.mark.parametrize("name", WITH_DTYPE)
def test_dtype_keyword(name, dtype):
    """``dtype=`` for a float and an int input, over no dim, a dim and an out-of-range dim (which of PyTorch's checks
    comes first: the dim's or the dtype's)."""
    for input_dtype in ("float32", "int64"):
        for dim in (OMIT, 1, 5) if name not in CUMULATIVE else (1, 5):
            def call(m, x):
                kw = {"dtype": getattr(m, dtype)}
                if dim is not OMIT:  # noqa: B023
                    kw["dim"] = dim  # noqa: B023
                return getattr(m, name)(x, **kw)

            same(call, [INTEGRAL], [input_dtype], grad=input_dtype == "float32", rounding=[dtype])


OUT_CALLS = {
    "sum": lambda m, x, **o: m.sum(x, 1, **o),
    "mean": lambda m, x, **o: m.mean(x, 1, **o),
    "prod": lambda m, x, **o: m.prod(x, 1, **o),
    "amax": lambda m, x, **o: m.amax(x, 1, **o),
    "amin": lambda m, x, **o: m.amin(x, 1, **o),
    "logsumexp": lambda m, x, **o: m.logsumexp(x, 1, **o),
    "var": lambda m, x, **o: m.var(x, 1, **o),
    "std": lambda m, x, **o: m.std(x, 1, **o),
    "norm": lambda m, x, **o: m.norm(x, 2, 1, **o),
    "all": lambda m, x, **o: m.all(x, 1, **o),
    "any": lambda m, x, **o: m.any(x, 1, **o),
    "argmax": lambda m, x, **o: m.argmax(x, 1, **o),
    "argmin": lambda m, x, **o: m.argmin(x, 1, **o),
    "count_nonzero": lambda m, x, **o: m.count_nonzero(x, 1, **o),
    "cumsum": lambda m, x, **o: m.cumsum(x, 1, **o),
    "cumprod": lambda m, x, **o: m.cumprod(x, 1, **o),
    "max": lambda m, x, **o: m.max(x, 1, **o),
    "min": lambda m, x, **o: m.min(x, 1, **o),
    "aminmax": lambda m, x, **o: m.aminmax(x, dim=1, **o),
    "max all": lambda m, x, **o: m.max(x, **o),
    "nansum": lambda m, x, **o: m.nansum(x, 1, **o),
    "nanmean": lambda m, x, **o: m.nanmean(x, 1, **o),
    "median": lambda m, x, **o: m.median(x, 1, **o),
    "nanmedian": lambda m, x, **o: m.nanmedian(x, 1, **o),
    "mode": lambda m, x, **o: m.mode(x, 1, **o),
    "logcumsumexp": lambda m, x, **o: m.logcumsumexp(x, 1, **o),
    "cummax": lambda m, x, **o: m.cummax(x, 1, **o),
    "cummin": lambda m, x, **o: m.cummin(x, 1, **o),
}
# (count_nonzero has no out= in PyTorch either)
PAIRED = {"max", "min", "aminmax", "median", "nanmedian", "mode", "cummax", "cummin"}
RUNNING = {"cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"}  # (a result of the input's shape)


@pytest.mark.parametrize("out", ["right", "float32", "int64", "bool", "resized", "requires grad"])
@pytest.mark.parametrize("name", list(OUT_CALLS))
def test_out_keyword(name, out):
    """``out=``: the right tensor(s) (written, returned), another dtype (PyTorch's cast or its refusal), another shape
    (resized, with PyTorch's warning when it held elements), an input requiring grad (PyTorch's refusal)."""
    fn = OUT_CALLS[name]
    shape = (3, 4) if name in RUNNING else (3,) if name != "max all" else ()

    def call(m, x):
        result = fn(m, x.detach())  # (PyTorch's dtypes and shapes, for the out tensors)
        x = x if out == "requires grad" else x.detach()
        values = result if not isinstance(result, tuple) else result[0]
        dtype = {"float32": m.float32, "int64": m.int64, "bool": m.bool}.get(out, values.dtype)
        made = m.zeros(shape if out != "resized" else (5,), dtype=dtype)
        if name in PAIRED and name != "max all":
            target = (made, m.zeros(made.shape, dtype=result[1].dtype))
        else:
            target = made
        returned = fn(m, x, out=target)
        return returned, target

    same(call, [INTEGRAL], ["float64"], grad=out == "requires grad")


@pytest.mark.parametrize("correction", [OMIT, None, 0, 1, 2, 5, 0.5, -1, True])
@pytest.mark.parametrize("unbiased", [OMIT, True, False])
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_correction_and_unbiased(name, unbiased, correction):
    """``correction`` (an int, a float, past the count: PyTorch's warning and inf/NaN) and ``unbiased`` (both: its
    refusal), over a dim, all dims and one element."""
    kw = {}
    if unbiased is not OMIT:
        kw["unbiased"] = unbiased
    if correction is not OMIT:
        kw["correction"] = correction
    for shape, dim in (("2x3x4", 1), ("2x3x4", OMIT), ("1", OMIT), ("3x1", 1), ("2x3x4", (0, 2))):
        same(_reduce(name, dim, OMIT, **kw), [ARRAYS[shape]], ["float64"], double=shape == "2x3x4")


NORM_ORDERS = ["fro", "nuc", 2, 1, 3, 0.5, 0, -1, float("inf"), float("-inf"), None]


@pytest.mark.parametrize("p", NORM_ORDERS, ids=str)
@pytest.mark.parametrize("dim", [OMIT, None, 1, -1, (0, 1), (0, 1, 2), ()], ids=str)
def test_norm_orders_and_dims(p, dim):
    """torch.norm's orders over its dims (the matrix norms 'fro' and 'nuc' on pairs of dims), on random values and on
    zeros (the gradient's subgradient at zero), keepdim both ways."""
    zeros = np.array([[[0.0, -0.0], [3.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]])
    for array in (ARRAYS["2x3x4"], zeros):
        for keepdim in (OMIT, True):
            kw = {} if keepdim is OMIT else {"keepdim": keepdim}
            if dim is not OMIT:
                kw["dim"] = dim
            same(lambda m, x: m.norm(x, p, **kw), [array], ["float64"], double=True)  # noqa: B023


@pytest.mark.parametrize("dim", [OMIT, None, 0, -1, (0, 1), 2], ids=str)
@pytest.mark.parametrize("shape", ["2x3x4", "0x3", "0-d"])
def test_count_nonzero(shape, dim):
    for dtype in ("float64", "int64", "bool"):
        same(_reduce("count_nonzero", dim, OMIT), [np.where(ARRAYS[shape] > 0, ARRAYS[shape], 0.0)], [dtype])


@pytest.mark.parametrize("keepdim", [OMIT, True, False], ids=str)
@pytest.mark.parametrize("dim", [OMIT, None, 0, -1, 2, (0, 1)], ids=str)
@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_of_each_dtype(name, dim, keepdim):
    """all/any keep uint8's dtype (PyTorch's exception) and give bool otherwise, NaN counting as true."""
    for dtype in ("bool", "uint8", "int64", "float64"):
        same(_reduce(name, dim, keepdim), [SPECIAL["nan"]], [dtype], grad=False)


@pytest.mark.parametrize("name", ["max", "min", "median", "nanmedian", "mode", "aminmax", "argmax", "argmin"])
def test_positional_and_refused_arguments(name):
    """The positional forms of dim and keepdim, a float dim, a dim given twice (positional and keyword), and a dim
    named by a string: PyTorch's TypeErrors, or its results."""
    x = ARRAYS["2x3x4"]
    for call in (lambda m, t: getattr(m, name)(t, 1, True), lambda m, t: getattr(t, name)(1, True),
                 lambda m, t: getattr(m, name)(t, 1.0), lambda m, t: getattr(m, name)(t, "a"),
                 lambda m, t: getattr(m, name)(t, dim=None, keepdim=True),
                 lambda m, t: getattr(m, name)(t, 1, dim=1), lambda m, t: getattr(m, name)(t, keepdim=True)):
        same(call, [x], ["float64"])


def test_extremes_of_two_tensors_and_empty_refusals():
    """max/min of two tensors (the elementwise form), and the refusals of an empty reduction without identity."""
    a, b = SPECIAL["nan"], SPECIAL["zeros"]
    for name in ("max", "min"):
        same(lambda m, x, y: getattr(m, name)(x, y), [a, b], ["float64", "float64"], double=True)  # noqa: B023
    for name in ("max", "min", "amax", "amin", "argmax", "argmin", "median", "nanmedian", "mode", "aminmax",
                 "logsumexp"):
        for dim in (OMIT, 0, 1):
            same(_reduce(name, dim, OMIT), [np.zeros((0, 3))], ["float64"])
