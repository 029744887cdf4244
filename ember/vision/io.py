"""``torchvision.io``: images read and written through Pillow.

torchvision decodes with compiled libraries (libjpeg, libpng, FFmpeg); ember reads and writes the same files
with Pillow and returns what torchvision returns: ``read_image`` / ``decode_image`` give a ``uint8`` tensor
of shape (C, H, W), ``write_png`` / ``write_jpeg`` take one. The video functions (``read_video``, ...) need a
video decoder ember does not have: calling one raises NotImplementedError naming it.
"""

from __future__ import annotations

import enum
import io as _io

from .._backend import xp
from .._missing import module_getattr
from .._tensor import Tensor

__all__ = ["ImageReadMode", "decode_image", "decode_jpeg", "decode_png", "encode_jpeg", "encode_png", "read_file",
           "read_image", "write_file", "write_jpeg", "write_png", "read_video", "read_video_timestamps",
           "write_video"]


class ImageReadMode(enum.Enum):
    """How ``read_image`` / ``decode_image`` convert the image, as torchvision's."""

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = 4


_PIL_MODES = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
              ImageReadMode.RGB_ALPHA: "RGBA"}


def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("torchvision.io on ember needs Pillow: pip install pillow (or \"ember[vision]\")") from None
    return Image


def read_file(path: str) -> Tensor:
    """The file's bytes as a 1-d ``uint8`` tensor."""
    with open(path, "rb") as f:
        return Tensor._make(xp.frombuffer(f.read(), dtype=xp.uint8).copy())


def write_file(filename: str, data: Tensor) -> None:
    """Write a 1-d ``uint8`` tensor's bytes to ``filename``."""
    with open(filename, "wb") as f:
        f.write(data.numpy().tobytes())


def decode_image(input, mode: ImageReadMode = ImageReadMode.UNCHANGED, apply_exif_orientation: bool = False) -> Tensor:
    """An encoded image (a 1-d ``uint8`` tensor of its bytes, or a path) as a ``uint8`` (C, H, W) tensor."""
    Image = _pil()
    if isinstance(input, Tensor):
        image = Image.open(_io.BytesIO(input.numpy().tobytes()))
    else:
        image = Image.open(input)
    if apply_exif_orientation:
        from PIL import ImageOps

        image = ImageOps.exif_transpose(image)
    if mode != ImageReadMode.UNCHANGED:
        image = image.convert(_PIL_MODES[mode])
    elif image.mode not in ("L", "LA", "RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in image.mode else "RGB")
    array = xp.asarray(image, dtype=xp.uint8)
    array = array[:, :, None] if array.ndim == 2 else array
    return Tensor._make(xp.ascontiguousarray(array.transpose(2, 0, 1)))


def read_image(path: str, mode: ImageReadMode = ImageReadMode.UNCHANGED, apply_exif_orientation: bool = False
               ) -> Tensor:
    """The image file at ``path`` as a ``uint8`` (C, H, W) tensor (C: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA)."""
    return decode_image(path, mode, apply_exif_orientation)


decode_jpeg = decode_png = decode_image


def _to_pil(image: Tensor):
    if image.dtype.name != "uint8" or image.dim() != 3 or image.shape[0] not in (1, 3):
        raise RuntimeError(f"The input tensor must be a uint8 tensor of shape (1 or 3, H, W), got {image.dtype} "
                           f"{list(image.shape)}")
    array = image.numpy().transpose(1, 2, 0)
    return _pil().fromarray(array[:, :, 0] if array.shape[2] == 1 else array)


def _encode(image: Tensor, fmt: str, **options) -> Tensor:
    buffer = _io.BytesIO()
    _to_pil(image).save(buffer, format=fmt, **options)
    return Tensor._make(xp.frombuffer(buffer.getvalue(), dtype=xp.uint8).copy())


def encode_png(input: Tensor, compression_level: int = 6) -> Tensor:
    return _encode(input, "PNG", compress_level=compression_level)


def encode_jpeg(input: Tensor, quality: int = 75) -> Tensor:
    return _encode(input, "JPEG", quality=quality)


def write_png(input: Tensor, filename: str, compression_level: int = 6) -> None:
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(input: Tensor, filename: str, quality: int = 75) -> None:
    write_file(filename, encode_jpeg(input, quality))


def _no_video(name: str):
    def missing(*args, **kwargs):
        raise NotImplementedError(f"torchvision.io.{name} is not implemented in ember: it needs a video decoder "
                                  "(FFmpeg, which torchvision links); decode the frames with another library into "
                                  "NumPy arrays")

    missing.__name__ = name
    return missing


read_video = _no_video("read_video")
read_video_timestamps = _no_video("read_video_timestamps")
write_video = _no_video("write_video")

__getattr__ = module_getattr(__name__, "torchvision.io")
