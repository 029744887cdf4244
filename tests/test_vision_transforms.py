"""ember.vision.transforms against torchvision's documented arithmetic, written with torch ops (torchvision itself
is not installed next to the oracle torch), and against Pillow for PIL images."""

import colorsys

import numpy as np
import pytest
import torch
from PIL import Image

import ember
from ember.vision import transforms as T
from ember.vision.transforms import functional as F

RNG = np.random.default_rng(0)


def rgb(h=12, w=16):
    return RNG.integers(0, 256, size=(h, w, 3), dtype=np.uint8)


def t(x):
    return torch.from_numpy(np.asarray(x.detach().numpy() if isinstance(x, ember.Tensor) else x))


def close(a, b, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a.numpy() if isinstance(a, ember.Tensor) else a, dtype=np.float64),
                               np.asarray(b.numpy() if isinstance(b, torch.Tensor) else b, dtype=np.float64),
                               atol=atol, rtol=0)


# ------------------------------------------------------------------------------------------- conversions
def test_to_tensor_from_pil_and_ndarray():
    arr = rgb()
    expected = torch.from_numpy(arr).permute(2, 0, 1).float() / 255
    for pic in (Image.fromarray(arr), arr):
        out = T.ToTensor()(pic)
        assert out.dtype == ember.float32 and tuple(out.shape) == (3, 12, 16)
        close(out, expected)
    gray = T.ToTensor()(Image.fromarray(arr[..., 0]))
    assert tuple(gray.shape) == (1, 12, 16)
    floats = np.ones((2, 3, 1), np.float32) * 7  # non-uint8 arrays are not scaled
    close(F.to_tensor(floats), np.full((1, 2, 3), 7.0))
    with pytest.raises(TypeError, match="PIL Image or ndarray"):
        F.to_tensor([1, 2])


def test_pil_to_tensor_and_back():
    arr = rgb()
    x = T.PILToTensor()(Image.fromarray(arr))
    assert x.dtype == ember.uint8 and tuple(x.shape) == (3, 12, 16)
    np.testing.assert_array_equal(x.numpy(), arr.transpose(2, 0, 1))
    back = T.ToPILImage()(x)
    assert back.mode == "RGB" and np.array_equal(np.asarray(back), arr)
    one = T.ToPILImage()(ember.full((1, 2, 2), 0.5))
    assert one.mode == "L" and np.asarray(one)[0, 0] == 127  # float -> mul(255).byte(): truncation
    assert T.ToPILImage(mode="F")(ember.full((1, 2, 2), 0.5)).mode == "F"
    assert T.ToPILImage()(ember.zeros(4, 2, 2)).mode == "RGBA"
    with pytest.raises(ValueError, match="Incorrect mode"):
        F.to_pil_image(ember.zeros(1, 2, 2, dtype=ember.uint8), mode="F")
    with pytest.raises(ValueError, match="Only modes"):
        F.to_pil_image(ember.zeros(3, 2, 2), mode="RGBA")


def test_convert_image_dtype_rescales_like_torchvision():
    x = ember.tensor([[[0, 128, 255]]], dtype=ember.uint8)
    close(F.convert_image_dtype(x, ember.float32), torch.tensor([[[0, 128, 255]]]) / 255.0)
    f = ember.tensor([[[0.0, 0.5, 1.0]]])
    assert F.convert_image_dtype(f, ember.uint8).tolist() == [[[0, 127, 255]]]  # x * (255 + 1 - 1e-3)
    assert T.ConvertImageDtype(ember.int16)(x).tolist() == [[[0, 128 * 128, 255 * 128]]]
    assert F.convert_image_dtype(ember.tensor([[[32767]]], dtype=ember.int16), ember.uint8).tolist() == [[[255]]]  # 32767 // 128
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        F.convert_image_dtype(f, ember.int32)


def test_normalize_per_channel_and_errors():
    x = ember.rand(2, 3, 4, 5)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    expected = (t(x) - torch.tensor(mean).view(-1, 1, 1)) / torch.tensor(std).view(-1, 1, 1)
    close(T.Normalize(mean, std)(x), expected, 1e-6)
    y = x.clone()
    assert F.normalize(y, mean, std, inplace=True) is y
    with pytest.raises(TypeError, match="float tensor"):
        F.normalize(ember.zeros(3, 2, 2, dtype=ember.uint8), mean, std)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(x, mean, [1, 0, 1])


# ------------------------------------------------------------------------------------------- geometry
@pytest.mark.parametrize("size,hw", [(8, (8, 10)), ([8], (8, 10)), ((5, 7), (5, 7)), (12, (12, 16))])
def test_resize_output_size(size, hw):
    img = Image.fromarray(rgb(12, 16))
    out = T.Resize(size)(img)
    assert (out.height, out.width) == hw
    assert tuple(T.Resize(size)(T.PILToTensor()(img)).shape) == (3, *hw)
    assert out is img if hw == (12, 16) else True  # the same size: returned unchanged


def test_resize_max_size_caps_the_long_edge():
    assert tuple(F.resize(ember.zeros(1, 10, 40), 8, max_size=20).shape) == (1, 5, 20)
    with pytest.raises(ValueError, match="strictly greater"):
        F.resize(ember.zeros(1, 10, 40), 8, max_size=8)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_tensor_resize_is_interpolate_with_antialias(mode):
    x = ember.rand(3, 20, 30)
    out = F.resize(x, [7, 11], interpolation=T.InterpolationMode(mode))
    kwargs = {"align_corners": False, "antialias": True} if mode != "nearest" else {}
    expected = torch.nn.functional.interpolate(t(x)[None], size=[7, 11], mode=mode, **kwargs)[0]
    close(out, expected, 1e-5)
    u8 = (x * 255).to(ember.uint8)
    out8 = F.resize(u8, [7, 11], interpolation=T.InterpolationMode(mode))
    ref = torch.nn.functional.interpolate(t(u8)[None].float(), size=[7, 11], mode=mode, **kwargs)[0]
    assert out8.dtype == ember.uint8
    close(out8, ref.clamp(0, 255).round(), 0)


def test_pil_and_tensor_bilinear_resize_agree():
    """torchvision's claim: tensor resize with antialias=True matches PIL's (to rounding)."""
    arr = rgb(40, 50)
    pil = np.asarray(F.resize(Image.fromarray(arr), [17, 23])).transpose(2, 0, 1).astype(int)
    ten = F.resize(ember.from_numpy(arr.transpose(2, 0, 1).copy()), [17, 23]).numpy().astype(int)
    assert np.abs(pil - ten).max() <= 1


def test_crops():
    x = ember.arange(3 * 6 * 8, dtype=ember.float32).reshape(3, 6, 8)
    close(F.crop(x, 1, 2, 3, 4), t(x)[:, 1:4, 2:6])
    outside = F.crop(x, -1, 6, 3, 4)  # zeros where the region leaves the image (PIL's crop)
    expected = torch.zeros(3, 3, 4)
    expected[:, 1:, :2] = t(x)[:, 0:2, 6:8]
    close(outside, expected)
    close(T.CenterCrop(4)(x), t(x)[:, 1:5, 2:6])
    close(T.CenterCrop((3, 5))(x), t(x)[:, 2:5, 2:7])  # top = round(1.5) = 2, left = round(1.5) = 2
    big = T.CenterCrop((8, 9))(x)
    expected = torch.nn.functional.pad(t(x), [0, 1, 1, 1])  # padding [(9-8)//2, (8-6)//2, (9-8+1)//2, ...]
    close(big, expected)
    pil = T.CenterCrop(4)(Image.fromarray(rgb(6, 8)))
    assert pil.size == (4, 4)


@pytest.mark.parametrize("mode,np_mode", [("constant", "constant"), ("edge", "edge"), ("reflect", "reflect"),
                                          ("symmetric", "symmetric")])
def test_pad_modes(mode, np_mode):
    arr = rgb(5, 6)
    widths = ((2, 3), (1, 4))  # (top, bottom), (left, right): padding [l, t, r, b] = [1, 2, 4, 3]
    expected = np.pad(arr, widths + ((0, 0),), mode=np_mode)
    out = T.Pad([1, 2, 4, 3], padding_mode=mode)(ember.from_numpy(arr.transpose(2, 0, 1).copy()))
    np.testing.assert_array_equal(out.numpy(), expected.transpose(2, 0, 1))
    pil = T.Pad([1, 2, 4, 3], padding_mode=mode)(Image.fromarray(arr))
    np.testing.assert_array_equal(np.asarray(pil), expected)
    assert tuple(F.pad(ember.zeros(1, 2, 2), 1).shape) == (1, 4, 4)
    assert tuple(F.pad(ember.zeros(1, 2, 2), [1, 2]).shape) == (1, 6, 4)


def test_pad_fill():
    out = F.pad(Image.fromarray(rgb(2, 2)), 1, fill=(10, 20, 30))
    assert np.asarray(out)[0, 0].tolist() == [10, 20, 30]
    assert F.pad(ember.zeros(1, 2, 2), 1, fill=5)[0, 0, 0].item() == 5


def test_flips_and_their_probability():
    x = ember.rand(3, 4, 5)
    close(F.hflip(x), t(x).flip(-1))
    close(F.vflip(x), t(x).flip(-2))
    close(T.RandomHorizontalFlip(p=1.0)(x), t(x).flip(-1))
    close(T.RandomVerticalFlip(p=0.0)(x), t(x))
    arr = rgb()
    np.testing.assert_array_equal(np.asarray(F.hflip(Image.fromarray(arr))), arr[:, ::-1])
    np.testing.assert_array_equal(np.asarray(F.vflip(Image.fromarray(arr))), arr[::-1])


def test_random_crop_padding_and_pad_if_needed_reproducible():
    x = ember.rand(3, 10, 12)
    ember.manual_seed(3)
    a = T.RandomCrop(8, padding=2)(x)
    ember.manual_seed(3)
    b = T.RandomCrop(8, padding=2)(x)
    assert tuple(a.shape) == (3, 8, 8) and ember.equal(a, b)
    ember.manual_seed(3)
    i, j, h, w = T.RandomCrop.get_params(F.pad(x, 2), (8, 8))
    close(a, torch.nn.functional.pad(t(x), [2, 2, 2, 2])[:, i:i + 8, j:j + 8])
    padded = T.RandomCrop((14, 16), pad_if_needed=True)(x)
    assert tuple(padded.shape) == (3, 14, 16)
    with pytest.raises(ValueError, match="larger than input image size"):
        T.RandomCrop(20)(x)
    assert T.RandomCrop(5)(Image.fromarray(rgb())).size == (5, 5)


def test_random_resized_crop():
    img = Image.fromarray(rgb(30, 40))
    ember.manual_seed(0)
    out = T.RandomResizedCrop(16)(img)
    assert out.size == (16, 16)
    ember.manual_seed(0)
    i, j, h, w = T.RandomResizedCrop.get_params(img, (0.08, 1.0), (3 / 4, 4 / 3))
    assert 0 <= i <= 30 - h and 0 <= j <= 40 - w
    assert 0.08 * 1200 * 0.8 <= h * w <= 1200 and 3 / 4 * 0.8 <= w / h <= 4 / 3 * 1.2
    np.testing.assert_array_equal(np.asarray(out), np.asarray(F.resized_crop(img, i, j, h, w, [16, 16])))
    # an impossible scale falls back to the central crop with the ratio clamped
    assert T.RandomResizedCrop.get_params(ember.zeros(1, 10, 40), (2.0, 3.0), (1.0, 2.0)) == (0, 10, 10, 20)


def test_random_rotation_pil():
    arr = rgb(6, 6)
    out = T.RandomRotation((90, 90))(Image.fromarray(arr))
    np.testing.assert_array_equal(np.asarray(out), np.rot90(arr))  # counter-clockwise
    ember.manual_seed(1)
    angle = T.RandomRotation.get_params([-30.0, 30.0])
    assert -30 <= angle <= 30
    expanded = T.RandomRotation((45, 45), expand=True)(Image.fromarray(arr))
    assert expanded.size[0] > 6
    with pytest.raises(TypeError, match="PIL images"):
        T.RandomRotation(10)(ember.zeros(3, 4, 4))


# ------------------------------------------------------------------------------------------- colour
def tv_blend(img1, img2, ratio, bound=1.0):
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def tv_gray(img):
    r, g, b = img.unbind(dim=-3)
    return (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)


def test_color_adjustments_on_tensors():
    x = ember.rand(3, 5, 6)
    tx = t(x)
    close(F.adjust_brightness(x, 1.3), tv_blend(tx, torch.zeros_like(tx), 1.3), 1e-6)
    mean = tv_gray(tx).mean(dim=(-3, -2, -1), keepdim=True)
    close(F.adjust_contrast(x, 0.6), tv_blend(tx, mean, 0.6), 1e-6)
    close(F.adjust_saturation(x, 1.7), tv_blend(tx, tv_gray(tx), 1.7), 1e-6)
    close(T.Grayscale()(x), tv_gray(tx), 1e-6)
    assert tuple(T.Grayscale(3)(x).shape) == (3, 5, 6)
    u8 = (x * 255).to(ember.uint8)
    close(F.adjust_brightness(u8, 1.5), tv_blend(t(u8), torch.zeros_like(t(u8)), 1.5, 255.0), 0)
    close(F.rgb_to_grayscale(u8), tv_gray(t(u8)), 0)


def test_adjust_hue_on_tensors_matches_colorsys():
    x = ember.rand(3, 4, 4, dtype=ember.float64)
    out = F.adjust_hue(x, 0.2).numpy()
    arr = x.numpy()
    for r in range(4):
        for c in range(4):
            h, s, v = colorsys.rgb_to_hsv(*arr[:, r, c])
            np.testing.assert_allclose(out[:, r, c], colorsys.hsv_to_rgb((h + 0.2) % 1.0, s, v), atol=1e-7)
    with pytest.raises(ValueError, match="is not in"):
        F.adjust_hue(x, 0.7)


def test_color_adjustments_on_pil_images_agree_with_tensors():
    arr = rgb()
    img = Image.fromarray(arr)
    ten = ember.from_numpy(arr.transpose(2, 0, 1).copy())
    for fn, factor in ((F.adjust_brightness, 1.4), (F.adjust_saturation, 0.5), (F.adjust_contrast, 1.5)):
        pil = np.asarray(fn(img, factor)).transpose(2, 0, 1).astype(int)
        assert np.abs(pil - fn(ten, factor).numpy().astype(int)).max() <= 2, fn.__name__
    assert np.abs(np.asarray(T.Grayscale()(img)).astype(int) - tv_gray(t(ten)).numpy()[0]).max() <= 1
    hue = np.asarray(F.adjust_hue(img, 0.1)).astype(int)
    assert hue.shape == arr.shape and not np.array_equal(hue, arr)
    assert T.Grayscale(num_output_channels=3)(img).mode == "RGB"


def test_color_jitter_is_reproducible_and_validates():
    x = ember.rand(3, 6, 6)
    jitter = T.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1)
    assert jitter.brightness == (0.6, 1.4) and jitter.hue == (-0.1, 0.1)
    ember.manual_seed(5)
    a = jitter(x)
    ember.manual_seed(5)
    b = jitter(x)
    assert ember.equal(a, b) and not ember.equal(a, x)
    assert T.ColorJitter().brightness is None
    assert isinstance(jitter(Image.fromarray(rgb())), Image.Image)
    with pytest.raises(ValueError, match="hue values should be between"):
        T.ColorJitter(hue=0.6)


def test_gaussian_blur_matches_torchvisions_kernel():
    x = ember.rand(2, 3, 9, 10)
    out = F.gaussian_blur(x, [5, 3], [1.2, 0.7])

    def kernel1d(k, sigma):
        xs = torch.linspace(-(k - 1) * 0.5, (k - 1) * 0.5, steps=k)
        pdf = torch.exp(-0.5 * (xs / sigma).pow(2))
        return pdf / pdf.sum()

    k2 = torch.mm(kernel1d(3, 0.7)[:, None], kernel1d(5, 1.2)[None, :]).expand(3, 1, 3, 5)
    padded = torch.nn.functional.pad(t(x), [2, 2, 1, 1], mode="reflect")
    close(out, torch.nn.functional.conv2d(padded, k2, groups=3), 1e-6)
    ember.manual_seed(0)
    blurred = T.GaussianBlur(3)(Image.fromarray(rgb()))
    assert blurred.mode == "RGB" and blurred.size == (16, 12)
    with pytest.raises(ValueError, match="odd and positive"):
        F.gaussian_blur(x, 4)


# ------------------------------------------------------------------------------------------- composition
def test_compose_lambda_apply_choice():
    pipeline = T.Compose([T.ToTensor(), T.Lambda(lambda x: x * 2), T.Normalize([0.5] * 3, [0.5] * 3)])
    arr = rgb()
    close(pipeline(Image.fromarray(arr)), (torch.from_numpy(arr).permute(2, 0, 1) / 255 * 2 - 0.5) / 0.5, 1e-6)
    x = ember.ones(1, 2, 2)
    assert ember.equal(T.RandomApply([T.Lambda(lambda v: v + 1)], p=1.0)(x), x + 1)
    assert ember.equal(T.RandomApply([T.Lambda(lambda v: v + 1)], p=0.0)(x), x)
    assert ember.equal(T.RandomChoice([T.Lambda(lambda v: v * 3)])(x), x * 3)
    assert ember.equal(T.RandomChoice([T.Lambda(lambda v: v * 3), T.Lambda(lambda v: v)], p=[0, 1])(x), x)
    with pytest.raises(TypeError, match="callable"):
        T.Lambda(3)
    assert "ToTensor()" in repr(pipeline)
