"""F.grid_sample (bilinear / nearest / bicubic, every padding mode, 4-D and 5-D) and F.affine_grid against torch."""

import warnings

import numpy as np
import pytest
import torch
from oracle import check

import ember
import ember.nn.functional as F

TOL = {np.float32: (1e-5, 1e-4), np.float64: (1e-10, 1e-10)}
SIZES = [((4, 5), (3, 6)), ((1, 3), (2, 2)), ((3, 1), (4, 1)), ((2, 2), (5, 5)), ((3, 4, 5), (2, 3, 4)),
         ((1, 2, 3), (2, 2, 2))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("in_sp,out_sp", SIZES)
def test_grid_sample_matches_torch(in_sp, out_sp, mode, padding_mode, align_corners, dtype):
    """Values, the input's gradient and the grid's, for points inside and well outside [-1, 1]."""
    if mode == "bicubic" and len(in_sp) == 3:
        pytest.skip("bicubic is 4-D only (tested among the errors)")
    rng = np.random.default_rng(len(in_sp) * 7 + out_sp[0])
    nd = len(in_sp)
    x = rng.standard_normal((2, 3, *in_sp)).astype(dtype)
    grid = rng.uniform(-1.6, 1.6, (2, *out_sp, nd)).astype(dtype)
    atol, rtol = TOL[dtype]
    check(lambda m, a, b: m.nn.functional.grid_sample(a, b, mode=mode, padding_mode=padding_mode,
                                                      align_corners=align_corners), [x, grid], atol=atol, rtol=rtol)


@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_nearest_ties_round_to_even(align_corners):
    """Points exactly halfway between pixels: PyTorch's nearbyint rounds to the even one."""
    w = 6
    step = 1 / (w - 1) if align_corners else 1 / w
    xs = np.arange(-1, 1 + 1e-9, step, dtype=np.float64)
    grid = np.stack(np.meshgrid(xs, np.zeros(1)), axis=-1)[None]
    x = np.arange(w, dtype=np.float64).reshape(1, 1, 1, w)
    want = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(grid), mode="nearest",
                                           align_corners=align_corners)
    got = F.grid_sample(ember.tensor(x), ember.tensor(grid), mode="nearest", align_corners=align_corners)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size,theta", [((2, 3, 4, 5), (2, 2, 3)), ((1, 1, 1, 3), (1, 2, 3)), ((2, 1, 3, 4, 5), (2, 3, 4)),
                                        ((1, 2, 1, 1, 2), (1, 3, 4))])
def test_affine_grid_matches_torch(size, theta, align_corners, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on unit-size grids with align_corners=True
        check(lambda m, t: m.nn.functional.affine_grid(t, size, align_corners=align_corners), [theta], dtype=dtype)


def test_spatial_transformer_gradient_reaches_theta():
    """affine_grid -> grid_sample, as in a spatial transformer network: the gradient w.r.t. theta matches."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    theta = np.array([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.05]], [[1.2, 0.0, -0.2], [0.3, 0.8, 0.0]]], np.float32)

    def stn(m, a, t):
        grid = m.nn.functional.affine_grid(t, [2, 3, 5, 4], align_corners=False)
        return m.nn.functional.grid_sample(a, grid, align_corners=False, padding_mode="border")

    check(stn, [x, theta])


def test_default_align_corners_warns_as_torch():
    x, grid = ember.zeros(1, 1, 2, 2), ember.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, grid)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(ember.zeros(1, 2, 3), [1, 1, 2, 2])


@pytest.mark.parametrize("call,err,match", [
    (lambda F, z: F.grid_sample(z(1, 1, 2, 2), z(1, 1, 1, 2), mode="foo", align_corners=False), ValueError,
     "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
    (lambda F, z: F.grid_sample(z(1, 1, 2, 2), z(1, 1, 1, 2), padding_mode="foo", align_corners=False), ValueError,
     "expected padding_mode"),
    (lambda F, z: F.grid_sample(z(1, 1, 2, 2), z(1, 1, 2), align_corners=False), RuntimeError,
     "expected 4D input and grid with same number of dimensions"),
    (lambda F, z: F.grid_sample(z(1, 1, 2, 2), z(2, 1, 1, 2), align_corners=False), RuntimeError, "same batch size"),
    (lambda F, z: F.grid_sample(z(1, 1, 2, 2), z(1, 1, 1, 3), align_corners=False), RuntimeError,
     "expected grid to have size 2 in last dimension"),
    (lambda F, z: F.grid_sample(z(1, 1, 2, 2, 2), z(1, 1, 1, 1, 3), mode="bicubic", align_corners=False),
     RuntimeError, "bicubic interpolation only supports 4D input"),
    (lambda F, z: F.affine_grid(z(1, 2, 3), [1, 1, 2, 2, 2], align_corners=False), ValueError,
     "Expected a batch of 3D affine matrices of shape Nx3x4"),
    (lambda F, z: F.affine_grid(z(1, 2, 3), [1, 1, 2], align_corners=False), NotImplementedError,
     "only supports 4D and 5D sizes"),
    (lambda F, z: F.affine_grid(z(1, 2, 3), [1, 0, 2, 2], align_corners=False), ValueError, "non-zero, positive"),
])
def test_grid_sample_errors_as_torch(call, err, match):
    for fw in (torch, ember):
        with pytest.raises(err, match=match):
            call(fw.nn.functional, fw.zeros)


def test_grid_sample_dtype_mismatch_is_a_clear_error():
    with pytest.raises(RuntimeError, match="same dtype"):
        F.grid_sample(ember.zeros(1, 1, 2, 2), ember.zeros(1, 1, 1, 2, dtype=ember.float64), align_corners=False)


def test_identity_transform_grid_and_its_gradient_as_pytorchs():
    # The spatial-transformer idiom: theta starts at the identity, so affine_grid's points fall on pixel centres,
    # where bilinear sampling's gradient in the grid changes with the side of the centre a point rounds to. ember's
    # grid must be PyTorch's to the last bit (its linspace), else theta's gradient differs in its leading digits.
    rs = np.random.default_rng(0)
    x = rs.standard_normal((2, 1, 14, 14)).astype(np.float32)
    weights = rs.standard_normal((2, 1, 14, 14)).astype(np.float32)
    theta = np.tile(np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32), (2, 1, 1))
    results = []
    for lib in (torch, ember):
        t = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, (2, 1, 14, 14), align_corners=False)
        out = lib.nn.functional.grid_sample(lib.tensor(x), grid, align_corners=False)
        (out * lib.tensor(weights)).sum().backward()
        results.append((grid.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-4)
