"""``view_as_real``'s view of a complex array (ops/complex.py's ``real_view``, which its backward and the optimizers'
complex updates use too): the (real, imaginary) pairs as a last dimension of 2, sharing memory, with the complex
array's strides whatever its layout, as PyTorch's ``view_as_real``."""

import numpy as np
import pytest
import torch

import ember
from ember.ops.complex import real_view

Z = (np.random.default_rng(0).standard_normal((6, 5, 8)) + 1j * np.random.default_rng(1).standard_normal((6, 5, 8)))

LAYOUTS = {
    "contiguous": lambda z: z,
    "transposed": lambda z: z.transpose(2, 0, 1),
    "sliced": lambda z: z[1:, ::2, 3:],
    "reversed": lambda z: z[::-1, :, ::-2],
    "broadcast": lambda z: np.broadcast_to(z[:1, :1], (4, 3, 8)),
    "0-d": lambda z: z[2, 3, 4][()],
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_the_pairs_share_memory_with_the_complex_arrays_strides(layout, dtype):
    z = np.asarray(LAYOUTS[layout](Z.astype(dtype)))
    view = real_view(z)
    item = z.itemsize // 2
    assert view.shape == z.shape + (2,) and view.dtype == z.real.dtype
    assert view.strides == z.strides + (item,)
    np.testing.assert_array_equal(view[..., 0], z.real)
    np.testing.assert_array_equal(view[..., 1], z.imag)
    assert np.shares_memory(view, z) and view.flags.writeable == z.flags.writeable


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_view_as_real_reports_pytorchs_strides_and_writes_through(layout):
    z = LAYOUTS[layout](Z.astype(np.complex64))
    base = ember.tensor(Z.astype(np.complex64))
    tbase = torch.tensor(Z.astype(np.complex64))
    pick = {"contiguous": lambda t: t, "transposed": lambda t: t.permute(2, 0, 1),
            "sliced": lambda t: t[1:, ::2, 3:]}[layout]
    got, want = ember.view_as_real(pick(base)), torch.view_as_real(pick(tbase))
    assert got.shape == want.shape and got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got[..., 1].mul_(-1)
    want[..., 1].mul_(-1)
    np.testing.assert_array_equal(base.numpy(), tbase.numpy())
    assert z.shape == got.shape[:-1]
