"""Dropout and its variants against torch: accepted ranks and their warnings, mask structure (element-wise or one
draw per channel), the values and gradients given the drawn mask, the affine constants of alpha dropout, inplace,
eval mode, p = 0 and p = 1, and errors. Masks are random in both, so a mask is compared by its structure and
its statistics; everything given the mask is compared exactly (to rounding)."""

import warnings

import numpy as np
import pytest
import torch

import ember

FUNCS = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
SIZES = (16, 15, 5, 4, 3, 3)  # enough draws per mask dimension that a varying mask varies


def run(m, name, x, p=0.5, training=True, **kw):
    """The op's output (numpy) and the warnings it gave (category, text), or the exception it raised."""
    fn = getattr(m.nn.functional, name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(m.tensor(x), p, training, **kw).numpy()
        except Exception as err:  # noqa: BLE001 - compared with torch's
            out = err
    return out, [(w.category, str(w.message)) for w in caught]


def structure(keep: np.ndarray) -> tuple:
    """Per dimension: 1 where the mask is constant along it, else the dimension's size."""
    return tuple(1 if (keep == keep.take([0], axis=d)).all() else keep.shape[d] for d in range(keep.ndim))


def kept(out, name, p, x):
    """Which elements the op kept."""
    if "alpha" in name:  # a dropped element is the constant -alpha * a * (1 - p); x is never at the kept preimage
        dropped = torch.nn.functional.alpha_dropout(torch.zeros(1000, dtype=torch.float64), p, True).min().item()
        return ~np.isclose(out, dropped, rtol=0, atol=1e-12)
    return out != 0


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("ndim", range(7))
def test_ranks_warnings_and_mask_structure_like_torch(name, ndim):
    x = np.random.default_rng(ndim).uniform(1, 2, SIZES[:ndim])
    ember.manual_seed(ndim)
    torch.manual_seed(ndim)
    (e, ew), (t, tw) = run(ember, name, x), run(torch, name, x)
    assert ew == tw
    if isinstance(t, Exception):
        assert type(e) is type(t) and str(e) == str(t)
        return
    assert structure(kept(e, name, 0.5, x)) == structure(kept(t, name, 0.5, x))
    # in eval mode: the same warnings, the input unchanged
    (e, ew), (t, tw) = run(ember, name, x, training=False), run(torch, name, x, training=False)
    assert ew == tw
    np.testing.assert_array_equal(e, x)


def test_dropout2d_takes_a_3d_input_as_batched_channels_like_torch():
    """(N, C, L): one draw per (N, C), not per N as an unbatched (C, H, W) would have."""
    x = np.ones((40, 30, 5))
    with pytest.warns(UserWarning, match=r"interpreted as shape \(N, C, L\)"):
        out = ember.nn.functional.dropout2d(ember.tensor(x), 0.5).numpy()
    assert structure(out != 0) == (40, 30, 1)
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        out = ember.nn.Dropout2d(0.5)(ember.tensor(x)).numpy()
    assert structure(out != 0) == (40, 30, 1)


@pytest.mark.parametrize("name, shape", [("dropout", (5, 6)), ("dropout1d", (4, 5, 6)), ("dropout1d", (20, 6)),
                                         ("dropout2d", (4, 5, 2, 3)), ("dropout3d", (4, 5, 2, 3, 2)),
                                         ("dropout3d", (20, 2, 3, 2)), ("alpha_dropout", (5, 6)),
                                         ("feature_alpha_dropout", (4, 5, 3))])
@pytest.mark.parametrize("p", [0.2, 0.7])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_given_the_mask_match_torch(name, shape, p, dtype):
    """out = slope * x + offset where kept, else the dropped value; the gradient is slope where kept, else 0.
    The constants are torch's own (read off its output at x = 0 and x = 1)."""
    probe = torch.zeros(2000, dtype=torch.float64 if dtype == np.float64 else torch.float32)
    zero, one = (torch.nn.functional.alpha_dropout if "alpha" in name else torch.nn.functional.dropout)(
        torch.stack([probe, probe + 1]), p, True).numpy()
    hit = zero == zero.max()  # kept in the x = 0 row
    offset, dropped = zero.max(), zero.min()
    slope = (one - zero)[hit].max()
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    w = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    xe = ember.tensor(x, requires_grad=True)
    ember.manual_seed(0)
    out = getattr(ember.nn.functional, name)(xe, p, True)
    (out * ember.tensor(w)).sum().backward()
    o = out.detach().numpy()
    keep = kept(o, name, p, x)
    assert 0 < keep.sum() < keep.size
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(o, np.where(keep, slope * x + offset, dropped), **tol)
    np.testing.assert_allclose(xe.grad.numpy(), np.where(keep, slope * w, 0), **tol)
    assert o.dtype == xe.grad.numpy().dtype == dtype


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_statistics_like_torch(name, p):
    """The fraction kept is 1 - p; alpha dropout keeps a unit normal input's mean 0 and variance 1."""
    shape = (400, 500) if name != "dropout3d" else (400, 500, 1, 1)
    x = np.random.default_rng(2).standard_normal(shape)
    ember.manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout2d's warning on 2-D input
        e, _ = run(ember, name, x, p)
        t, _ = run(torch, name, x, p)
    n = 400 if name in ("dropout1d", "dropout3d") else 400 * 500  # draws: one per channel when unbatched
    tol = 5 * np.sqrt(p * (1 - p) / n)
    assert abs(kept(e, name, p, x).mean() - (1 - p)) < tol
    assert abs(kept(t, name, p, x).mean() - (1 - p)) < tol
    if name == "alpha_dropout":
        assert abs(e.mean() - t.mean()) < 0.02 and abs(e.var() - t.var()) < 0.03
        assert abs(e.mean()) < 0.02 and abs(e.var() - 1) < 0.03


@pytest.mark.parametrize("name", FUNCS)
def test_p_zero_eval_and_p_one_like_torch(name):
    x = np.random.default_rng(0).standard_normal((3, 4, 5) if name == "dropout1d" else (3, 4, 2, 2, 2))
    for p, training in [(0.0, True), (0.5, False), (1.0, True)]:
        e, _ = run(ember, name, x, p, training)
        t, _ = run(torch, name, x, p, training)
        np.testing.assert_array_equal(e, t)  # the input, or zeros (the alpha variants too)
    xe = ember.tensor(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert getattr(ember.nn.functional, name)(xe, 0.5, False) is xe
        xg = ember.tensor(x, requires_grad=True)
        getattr(ember.nn.functional, name)(xg, 1.0, True).sum().backward()
    np.testing.assert_array_equal(xg.grad.numpy(), np.zeros_like(x))


@pytest.mark.parametrize("name, shape", [("dropout2d", (3,)), ("dropout3d", ()), ("feature_alpha_dropout", (3,)),
                                         ("dropout2d", (0,)), ("feature_alpha_dropout", (0,))])
@pytest.mark.parametrize("p", [0.5, 1.0])
def test_too_few_dims_fail_only_when_a_mask_is_drawn_like_torch(name, shape, p):
    """p = 1 and empty inputs draw no mask, so no 'Feature dropout requires at least 2 dimensions'."""
    x = np.ones(shape)
    (e, ew), (t, tw) = run(ember, name, x, p), run(torch, name, x, p)
    assert ew == tw
    if isinstance(t, Exception):
        assert type(e) is type(t) and str(e) == str(t)
    else:
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_bad_p_like_torch(name, p):
    x = np.ones((2, 3, 2, 2, 2))
    (e, _), (t, _) = run(ember, name, x, p), run(torch, name, x, p)
    assert type(e) is type(t) is ValueError and str(e) == str(t)


@pytest.mark.parametrize("cls", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                 "FeatureAlphaDropout"])
def test_modules_like_torch(cls):
    for p, inplace in [(0.5, False), (0.25, True)]:
        assert repr(getattr(ember.nn, cls)(p, inplace)) == repr(getattr(torch.nn, cls)(p, inplace))
    with pytest.raises(ValueError, match=r"dropout probability has to be between 0 and 1, but got 1.5"):
        getattr(ember.nn, cls)(1.5)
    x = np.random.default_rng(0).standard_normal((4, 6, 5, 3, 2)) if "3d" in cls else (
        np.random.default_rng(0).standard_normal((4, 6, 5, 3) if "2d" in cls else (4, 6, 5)))
    layer = getattr(ember.nn, cls)(0.5, inplace=True)
    xe = ember.tensor(x)
    out = layer(xe)
    assert out.shape == xe.shape
    # torch's AlphaDropout and FeatureAlphaDropout store inplace but do not use it
    np.testing.assert_array_equal(xe.numpy() == x, np.full(x.shape, "Alpha" in cls) | (out.numpy() == x))
    assert "Alpha" in cls or out is xe
    layer.eval()
    assert layer(xe) is xe


@pytest.mark.parametrize("name, shape", [("dropout1d", (5, 40)), ("dropout1d", (4, 5, 40)),
                                         ("dropout3d", (5, 4, 3, 2)), ("alpha_dropout", (30, 40)),
                                         ("feature_alpha_dropout", (30, 40, 2))])
def test_inplace_writes_the_input_like_the_returned_tensor(name, shape):
    x = np.random.default_rng(0).uniform(1, 2, shape)
    xe = ember.tensor(x)
    out = getattr(ember.nn.functional, name)(xe, 0.5, True, inplace=True)
    assert out is xe and out.shape == shape
    keep = kept(out.numpy(), name, 0.5, x)
    assert 0 < keep.sum() < keep.size
    ember.manual_seed(0)
    again = getattr(ember.nn.functional, name)(ember.tensor(x), 0.5, True, inplace=True)
    ember.manual_seed(0)
    np.testing.assert_array_equal(getattr(ember.nn.functional, name)(ember.tensor(x), 0.5, True).numpy(),
                                  again.numpy())


def test_inplace_on_a_leaf_that_requires_grad_raises_like_torch():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            m.nn.functional.dropout1d(m.ones(3, 4, requires_grad=True), 0.5, True, inplace=True)


def test_alpha_dropout_defaults_to_eval_like_torch():
    x = ember.randn(3, 4)
    assert ember.nn.functional.alpha_dropout(x) is x
    assert ember.nn.functional.feature_alpha_dropout(x) is x
    assert ember.nn.functional.dropout(x).numpy().tolist() != x.numpy().tolist()


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.dropout(x),
    lambda lib, x: lib.nn.functional.alpha_dropout(x, training=True),
    lambda lib, x: lib.nn.functional.dropout2d(x.reshape(2, 3, 2, 2)),
    lambda lib, x: lib.nn.functional.dropout(x, training=False),
    lambda lib, x: lib.nn.functional.dropout(x, p=0.0),
])
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_dropout_of_integer_or_bool_input_as_pytorch(call, dtype):
    """Training dropout of integers raises PyTorch's cast error; identity cases return the input."""
    outcomes = []
    for lib in (torch, ember):
        x = lib.ones(24, dtype=getattr(lib, dtype))
        try:
            outcomes.append(("value", call(lib, x).tolist()))
        except RuntimeError as err:  # (PyTorch's alpha dropout of bools names an intermediate Long)
            outcomes.append(("error", str(err) if dtype == "int64" else "cast error"))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("call", [
    lambda F, x, p: F.dropout(x, p=p), lambda F, x, p: F.dropout(x, p=p, training=False),
    lambda F, x, p: F.dropout(x.clone(), p=p, inplace=True), lambda F, x, p: F.dropout1d(x, p=p),
    lambda F, x, p: F.dropout2d(x.unsqueeze(-1), p=p), lambda F, x, p: F.dropout3d(x[..., None, None], p=p),
    lambda F, x, p: F.alpha_dropout(x, p=p, training=True), lambda F, x, p: F.feature_alpha_dropout(x, p, True)])
def test_a_numpy_complex_p_warns_once_and_masks_as_torchs(call):
    """PyTorch's kernel takes p as a double: one ComplexWarning (in eval mode too), the real part used."""
    results = []
    for m in (torch, ember):
        m.manual_seed(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = call(m.nn.functional, m.ones(2, 3, 5), np.complex128(0.3 + 0.1j))
        results.append(([w.category.__name__ for w in caught], out.numpy()))
    assert results[1][0] == results[0][0] == ["ComplexWarning"]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6)
