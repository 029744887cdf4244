"""torchvision.io's image functions on ember (through Pillow): the (C, H, W) uint8 tensors torchvision returns."""

import numpy as np
import pytest

PIL = pytest.importorskip("PIL.Image")

import ember  # noqa: E402
from ember.vision import io  # noqa: E402


def test_png_round_trip_and_read_modes(tmp_path):
    rgb = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    path = str(tmp_path / "x.png")
    io.write_png(ember.tensor(rgb.transpose(2, 0, 1).copy()), path)
    image = io.read_image(path)
    assert image.dtype == ember.uint8 and list(image.shape) == [3, 5, 7]
    np.testing.assert_array_equal(image.numpy().transpose(1, 2, 0), rgb)
    gray = io.read_image(path, io.ImageReadMode.GRAY)
    np.testing.assert_array_equal(gray.numpy()[0], np.asarray(PIL.open(path).convert("L")))
    assert list(io.read_image(path, io.ImageReadMode.RGB_ALPHA).shape) == [4, 5, 7]
    data = io.read_file(path)
    assert data.dim() == 1 and data.dtype == ember.uint8
    np.testing.assert_array_equal(io.decode_image(data).numpy(), image.numpy())


def test_jpeg_encoding_and_errors(tmp_path):
    gray = ember.tensor(np.full((1, 8, 8), 128, dtype=np.uint8))
    encoded = io.encode_jpeg(gray, quality=90)
    assert encoded.numpy()[:2].tolist() == [0xFF, 0xD8]  # a JPEG's start-of-image marker
    assert abs(int(io.decode_jpeg(encoded).numpy().mean()) - 128) <= 1
    with pytest.raises(RuntimeError, match="uint8 tensor of shape"):
        io.encode_png(ember.zeros(3, 4, 4))
    with pytest.raises(NotImplementedError, match="torchvision.io.read_video is not implemented in ember"):
        io.read_video("clip.mp4")
