"""out= of the NaN-ignoring sums (nansum, nanmean), logcumsumexp, the ops returning (values, indices) or (min, max)
(median, nanmedian, mode, cummax, cummin, aminmax) and F.normalize, against PyTorch: the values written and
returned, out's resizing and its warning, PyTorch's checks of out's dtype (their order and words), its tuple
forms, and the refusal under autograd."""

import numpy as np
import pytest

from tests.oracle import assert_close, outcomes

X = np.array([[1.5, np.nan, -2.0, 1.5], [0.25, 3.0, 3.0, -1.0], [np.nan, np.nan, 0.5, 2.0]], dtype=np.float32)


def _f(m):
    return m.nn.functional


# name -> f(module, x, make_out): make_out(dtype name, *shape) builds one out tensor
CALLS = {
    "nansum": lambda m, x, o: m.nansum(x, out=o("float32")),
    "nansum_dim": lambda m, x, o: m.nansum(x, 1, out=o("float32")),
    "nansum_keepdim_f64": lambda m, x, o: m.nansum(x, 0, True, out=o("float64")),
    "nansum_f16": lambda m, x, o: m.nansum(x, out=o("float16")),
    "nansum_ints_into_floats": lambda m, x, o: m.nansum(x.nan_to_num(0).long(), 1, out=o("float32")),
    "nanmean": lambda m, x, o: m.nanmean(x, out=o("float32")),
    "nanmean_dim_f64": lambda m, x, o: m.nanmean(x, 1, out=o("float64")),
    "nanmean_keepdim_f16": lambda m, x, o: m.nanmean(x, 0, keepdim=True, out=o("float16")),
    "logcumsumexp": lambda m, x, o: m.logcumsumexp(x, 1, out=o("float32")),
    "median": lambda m, x, o: m.median(x, 1, out=(o("float32"), o("int64"))),
    "median_keepdim": lambda m, x, o: m.median(x, 0, True, out=[o("float32"), o("int64")]),
    "nanmedian": lambda m, x, o: m.nanmedian(x, 1, out=(o("float32"), o("int64"))),
    "mode": lambda m, x, o: m.mode(x.nan_to_num(0), 1, out=(o("float32"), o("int64"))),
    "mode_no_dim": lambda m, x, o: m.mode(x.nan_to_num(0), out=(o("float32"), o("int64"))),
    "cummax": lambda m, x, o: m.cummax(x, 1, out=(o("float32"), o("int64"))),
    "cummin": lambda m, x, o: m.cummin(x, 0, out=(o("float32"), o("int64"))),
    "aminmax": lambda m, x, o: m.aminmax(x.nan_to_num(0), out=(o("float32"), o("float32"))),
    "aminmax_dim": lambda m, x, o: m.aminmax(x, dim=1, keepdim=True, out=(o("float32"), o("float32"))),
    "normalize": lambda m, x, o: _f(m).normalize(x.nan_to_num(1), out=o("float32")),
    "normalize_f64": lambda m, x, o: _f(m).normalize(x.nan_to_num(1), p=1.0, dim=0, out=o("float64")),
}


def _run(name, shape):
    def run(m):
        outs = []

        def make_out(dtype, *unused):
            outs.append(m.full(shape, 7, dtype=getattr(m, dtype)))
            return outs[-1]

        result = CALLS[name](m, m.tensor(X), make_out)
        written = result if isinstance(result, tuple) else (result,)
        assert all(r is o for r, o in zip(written, outs, strict=True))  # out itself returned
        return result
    return run


@pytest.mark.parametrize("shape", [(0,), (2, 5)], ids=["empty", "resized"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_written_resized_and_returned_as_pytorch(name, shape):
    """The values (indices) written into out, resized to the result's shape: silently when empty, else with
    PyTorch's deprecation warning; the tuple forms return PyTorch's ``<op>_out`` named tuple. (PyTorch repeats
    the warning for a pointwise op casting into out, F.normalize's div into float64: the texts are compared.)"""
    (got, got_warnings), (want, want_warnings) = outcomes(_run(name, shape))
    assert not isinstance(want, Exception), want
    assert not isinstance(got, Exception), got
    assert dict.fromkeys(w for _, w in got_warnings) == dict.fromkeys(w for _, w in want_warnings)
    assert type(got).__name__ == type(want).__name__
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,),
                    strict=True):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert_close(g, w, atol=1e-3, rtol=1e-3)


def _e(m, *shape, dtype="float32", **kwargs):
    return m.empty(*shape, dtype=getattr(m, dtype), **kwargs)


F = [[1.0, 2.0, 3.0]]
INTS = [[1, 2, 3]]
REFUSED = {
    # nansum computes in out's dtype: a dtype= that is not out's, a kernel with no such dtype (after the dim)
    "nansum_dtype": lambda m: m.nansum(m.tensor(F), 5, dtype=m.float64, out=_e(m, 0)),
    "nansum_dtype_half": lambda m: m.nansum(m.tensor(F), dtype=m.float16, out=_e(m, 0, dtype="float64")),
    "nansum_long": lambda m: m.nansum(m.tensor(F), out=_e(m, 0, dtype="int64")),
    "nansum_bool": lambda m: m.nansum(m.tensor(F), out=_e(m, 0, dtype="bool")),
    "nansum_complex": lambda m: m.nansum(m.tensor(F), out=_e(m, 0, dtype="complex64")),
    "nansum_dim_first": lambda m: m.nansum(m.tensor(F), 5, out=_e(m, 0, dtype="int64")),
    "nansum_complex_input": lambda m: m.nansum(m.tensor(F).to(m.complex64), out=_e(m, 0, dtype="complex64")),
    # an integer input's nansum is sum's (its out= rules)
    "nansum_ints_dtype": lambda m: m.nansum(m.tensor(INTS), dtype=m.float64, out=_e(m, 0)),
    "nanmean_ints": lambda m: m.nanmean(m.tensor(INTS), 5, out=_e(m, 0)),
    "nanmean_bools": lambda m: m.nanmean(m.tensor(INTS).bool(), out=_e(m, 0, requires_grad=True)),
    "nanmean_dtype": lambda m: m.nanmean(m.tensor(F), dtype=m.float64, out=_e(m, 0)),
    "nanmean_long": lambda m: m.nanmean(m.tensor(F), out=_e(m, 0, dtype="int64")),
    "nanmean_complex": lambda m: m.nanmean(m.tensor(F), out=_e(m, 0, dtype="complex64")),
    # logcumsumexp: out's dtype exactly the input's, checked before the dim and the kernel's dtype
    "logcumsumexp_long": lambda m: m.logcumsumexp(m.tensor(F), 5, out=_e(m, 0, dtype="int64")),
    "logcumsumexp_double": lambda m: m.logcumsumexp(m.tensor(F), 1, out=_e(m, 0, dtype="float64")),
    "logcumsumexp_ints": lambda m: m.logcumsumexp(m.tensor(INTS), 1, out=_e(m, 0)),
    "logcumsumexp_ints_long": lambda m: m.logcumsumexp(m.tensor(INTS), 1, out=_e(m, 0, dtype="int64")),
    "logcumsumexp_overlap": lambda m: (lambda x: m.logcumsumexp(x[1:], 0, out=x[:-1]))(m.arange(5.0)),
    # median/nanmedian: the dim first, then the indices' dtype, then the values'
    "median_dim_first": lambda m: m.median(m.tensor(F), 5, out=(_e(m, 0, dtype="float64"), _e(m, 0, dtype="int64"))),
    "median_both": lambda m: m.median(m.tensor(F), 1, out=(_e(m, 0, dtype="float64"), _e(m, 0, dtype="int32"))),
    "median_values": lambda m: m.median(m.tensor(INTS), 1, out=(_e(m, 0), _e(m, 0, dtype="int64"))),
    "median_empty_dim": lambda m: m.median(m.tensor(F)[:, :0], 1, out=(_e(m, 0, dtype="float64"),
                                                                      _e(m, 0, dtype="int64"))),
    "median_no_dim": lambda m: m.median(m.tensor(F), out=(_e(m, 0), _e(m, 0, dtype="int64"))),
    "median_one_out": lambda m: m.median(m.tensor(F), 5, out=_e(m, 0)),
    "median_three_outs": lambda m: m.median(m.tensor(F), 1, out=(_e(m, 0), _e(m, 0, dtype="int64"), _e(m, 0))),
    "nanmedian_values": lambda m: m.nanmedian(m.tensor(F), 1, out=(_e(m, 0, dtype="float64"),
                                                                   _e(m, 0, dtype="int64"))),
    "nanmedian_both": lambda m: m.nanmedian(m.tensor(F), 1, out=(_e(m, 0, dtype="float64"),
                                                                 _e(m, 0, dtype="int32"))),
    "nanmedian_no_dim": lambda m: m.nanmedian(m.tensor(F), out=_e(m, 0)),
    # mode: the values' dtype, then the indices', before the dim
    "mode_values": lambda m: m.mode(m.tensor(F), 5, out=(_e(m, 0, dtype="float64"), _e(m, 0, dtype="int32"))),
    "mode_indices": lambda m: m.mode(m.tensor(F), 1, out=(_e(m, 0), _e(m, 0, dtype="int32"))),
    "mode_ints": lambda m: m.mode(m.tensor(INTS), 1, out=(_e(m, 0), _e(m, 0, dtype="int64"))),
    "mode_one_out": lambda m: m.mode(m.tensor(F), out=_e(m, 0)),
    # cummax/cummin: the values' dtype, then the indices', before the dim
    "cummax_values": lambda m: m.cummax(m.tensor(F), 5, out=(_e(m, 0, dtype="float64"), _e(m, 0, dtype="int64"))),
    "cummax_indices": lambda m: m.cummax(m.tensor(F), 1, out=(_e(m, 0), _e(m, 0, dtype="int32"))),
    "cummin_ints": lambda m: m.cummin(m.tensor(INTS), 1, out=(_e(m, 0), _e(m, 0, dtype="int64"))),
    "cummax_one_out": lambda m: m.cummax(m.tensor(F), 1, out=_e(m, 0)),
    "cummin_one_of_two": lambda m: m.cummin(m.tensor(F), 1, out=(_e(m, 0),)),
    "cummax_complex": lambda m: m.cummax(m.tensor(F).to(m.complex64), 0,
                                         out=(_e(m, 0, dtype="complex64"), _e(m, 0, dtype="int64"))),
    # aminmax: the dim first, then each out's dtype in turn (PyTorch's structured kernel's words)
    "aminmax_dim_first": lambda m: m.aminmax(m.tensor(F), dim=5, out=(_e(m, 0, dtype="float64"), _e(m, 0))),
    "aminmax_min": lambda m: m.aminmax(m.tensor(F), out=(_e(m, 0, dtype="float64"), _e(m, 0, dtype="int32"))),
    "aminmax_max": lambda m: m.aminmax(m.tensor(F), out=(_e(m, 0), _e(m, 0, dtype="float64"))),
    "aminmax_ints": lambda m: m.aminmax(m.tensor(INTS), out=(_e(m, 0), _e(m, 0))),
    "aminmax_empty_dim": lambda m: m.aminmax(m.tensor(F)[:, :0], dim=1, out=(_e(m, 0, dtype="float64"), _e(m, 0))),
    "aminmax_one_out": lambda m: m.aminmax(m.tensor(F), out=_e(m, 0)),
    "aminmax_three_outs": lambda m: m.aminmax(m.tensor(F), out=(_e(m, 0), _e(m, 0), _e(m, 0))),
    # F.normalize(out=) is div's out=
    "normalize_long": lambda m: _f(m).normalize(m.tensor(F), out=_e(m, 0, dtype="int64")),
    "normalize_dim": lambda m: _f(m).normalize(m.tensor(F), dim=5, out=_e(m, 0)),
    "normalize_ints": lambda m: _f(m).normalize(m.tensor(INTS), out=_e(m, 0)),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_out_refused_as_pytorch(name):
    (got, _), (want, _) = outcomes(REFUSED[name])
    assert isinstance(want, Exception), want
    assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("where", ["input", "out"])
def test_out_refused_under_autograd_as_pytorch(name, where):
    """PyTorch's refusal (naming the op its autograd sees: nanmean's is nansum's, normalize's div's) with an
    input or an out that requires grad; none under no_grad."""
    def run(m, grad=True):
        def make_out(dtype, *unused):
            return m.empty(0, dtype=getattr(m, dtype), requires_grad=where == "out" and dtype != "int64")

        x = m.tensor(X).requires_grad_(where == "input")
        with m.set_grad_enabled(grad):
            return CALLS[name](m, x, make_out)

    (got, _), (want, _) = outcomes(run)
    if name == "nansum_ints_into_floats" and where == "input":  # (its input, cast to int64, requires no grad)
        assert_close(got, want)
    else:
        assert isinstance(want, RuntimeError), want
        assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
    (got, _), (want, _) = outcomes(lambda m: run(m, grad=False))
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,),
                    strict=True):
        assert_close(g, w, atol=1e-3, rtol=1e-3)
        assert g.requires_grad == w.requires_grad


@pytest.mark.parametrize("call", [
    lambda m: m.sum(m.ones(2, 3), 1, out=m.empty(0, requires_grad=True)),
    lambda m: m.exp(m.ones(2, 3), out=m.empty(5, requires_grad=True)),
    lambda m: m.cummin(m.ones(2, 3), 1, out=(m.empty(0, requires_grad=True), m.empty(0, dtype=m.long))),
], ids=["sum", "exp", "cummin"])
def test_a_leaf_out_that_requires_grad_is_resized_under_no_grad_as_pytorch(call):
    """Under no_grad PyTorch resizes and writes an out that requires grad (its resize_ alone refuses one)."""
    def run(m):
        with m.no_grad():
            return call(m)

    (got, got_warnings), (want, want_warnings) = outcomes(run)
    assert not isinstance(want, Exception), want
    assert dict.fromkeys(w for _, w in got_warnings) == dict.fromkeys(w for _, w in want_warnings)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,),
                    strict=True):
        assert_close(g, w)
        assert g.requires_grad == w.requires_grad


@pytest.mark.parametrize(("shape", "out_shape", "dim", "keepdim"), [
    ((3, 4), (2, 5), 1, False), ((3, 4), (5,), 0, False), ((3, 4), (2, 5, 6), -1, False), ((2, 3, 4), (7,), 2, False),
    ((2, 3, 4), (7,), 1, False), ((3, 4), (2, 5), 1, True), ((3, 4), (3,), 1, False), ((3, 4), (3, 1), 1, False),
    ((3,), (2,), 0, False), ((), (2,), 0, False),
])
def test_mode_out_resize_warning_names_pytorchs_shapes(shape, out_shape, dim, keepdim):
    """PyTorch's mode(out=) without keepdim unsqueezes out at the dim before resizing it to the result's shape with
    the dim kept: its warning names those shapes (none where they then match; none for a 0-d input)."""
    def run(m):
        x = m.arange(float(np.prod(shape))).reshape(shape) % 3
        out = (m.zeros(out_shape), m.zeros(out_shape, dtype=m.long))
        return m.mode(x, dim, keepdim, out=out)

    (got, got_warnings), (want, want_warnings) = outcomes(run)
    assert [w for _, w in got_warnings] == [w for _, w in want_warnings]
    for g, w in zip(got, want, strict=True):
        assert_close(g, w)
