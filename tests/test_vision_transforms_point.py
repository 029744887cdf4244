"""invert / solarize (tensor against torch arithmetic, PIL against Pillow's ImageOps) and RandomErasing."""

import numpy as np
import pytest
import torch
from PIL import Image, ImageOps

import ember
from ember.vision import transforms as T
from ember.vision.transforms import functional as F

RNG = np.random.default_rng(0)


def test_invert_and_solarize_tensors_keep_dtype_and_match_torch():
    u8 = RNG.integers(0, 256, size=(2, 3, 5, 6), dtype=np.uint8)
    fl = RNG.uniform(0, 1, size=(3, 5, 6)).astype(np.float32)
    out = F.invert(ember.tensor(u8))
    assert out.dtype == ember.uint8 and np.array_equal(out.numpy(), 255 - u8)
    np.testing.assert_allclose(F.invert(ember.tensor(fl)).numpy(), 1.0 - fl, atol=1e-7)
    for arr, thr in ((u8, 128), (fl, 0.4)):
        t = torch.tensor(arr)
        bound = 255 if arr.dtype == np.uint8 else 1.0
        expected = torch.where(t >= thr, bound - t, t)
        out = F.solarize(ember.tensor(arr), thr)
        assert out.dtype == ember.tensor(arr).dtype
        np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=1e-7)
    with pytest.raises(TypeError, match="Threshold should be less than bound of img."):
        F.solarize(ember.tensor(fl), 1.5)
    with pytest.raises(TypeError, match="permitted channel values are \\[1, 3\\], but found 4"):
        F.invert(ember.zeros(4, 2, 2))
    with pytest.raises(TypeError, match="at least 3 dimensions"):
        F.solarize(ember.zeros(2, 2), 0.5)


def test_invert_and_solarize_pil_are_pillows():
    img = Image.fromarray(RNG.integers(0, 256, size=(7, 9, 3), dtype=np.uint8))
    assert np.array_equal(np.asarray(F.invert(img)), np.asarray(ImageOps.invert(img)))
    assert np.array_equal(np.asarray(F.solarize(img, 100)), np.asarray(ImageOps.solarize(img, 100)))
    with pytest.raises(TypeError, match="img should be PIL Image or Tensor"):
        F.invert(np.zeros((3, 3)))


def test_random_solarize_and_invert_probability_and_repr():
    img = ember.tensor(RNG.uniform(0, 1, size=(3, 4, 4)).astype(np.float32))
    assert T.RandomSolarize(0.5, p=1.0)(img).equal(F.solarize(img, 0.5))
    assert T.RandomSolarize(0.5, p=0.0)(img) is img
    assert T.RandomInvert(p=1.0)(img).equal(F.invert(img)) and T.RandomInvert(p=0.0)(img) is img
    ember.manual_seed(0)
    flips = sum(not T.RandomInvert()(img).equal(img) for _ in range(400))
    assert 150 < flips < 250
    assert repr(T.RandomSolarize(128, p=0.2)) == "RandomSolarize(threshold=128, p=0.2)"
    assert repr(T.RandomInvert()) == "RandomInvert(p=0.5)"


@pytest.mark.parametrize("value", [0, (0.1, 0.2, 0.3), "random"])
def test_random_erasing_erases_one_box_within_scale_and_ratio(value):
    ember.manual_seed(1)
    img = ember.full((3, 40, 50), 7.0)
    eraser = T.RandomErasing(p=1.0, scale=(0.05, 0.2), ratio=(0.5, 2.0), value=value)
    for _ in range(20):
        out = eraser(img).numpy()
        changed = (out != 7.0).any(axis=0)
        rows, cols = np.nonzero(changed)
        h, w = rows.max() - rows.min() + 1, cols.max() - cols.min() + 1
        assert changed.sum() == h * w  # one solid rectangle
        assert 0.05 * 2000 * 0.8 <= h * w <= 0.2 * 2000 * 1.2 and 0.4 <= h / w <= 2.5
        box = out[:, rows.min():rows.max() + 1, cols.min():cols.max() + 1]
        if value == "random":
            assert box.std() > 0.5
        else:
            np.testing.assert_allclose(box, np.broadcast_to(np.reshape(value, (-1, 1, 1)), box.shape), atol=1e-7)
    assert img.eq(7.0).all()  # not in place by default
    T.RandomErasing(p=1.0, inplace=True)(img)
    assert not img.eq(7.0).all()


def test_random_erasing_argument_errors_and_no_fit():
    with pytest.raises(ValueError, match="If value is str, it should be 'random'"):
        T.RandomErasing(value="noise")
    with pytest.raises(ValueError, match="Scale should be between 0 and 1"):
        T.RandomErasing(scale=(0.5, 1.5))
    with pytest.raises(ValueError, match="Random erasing probability should be between 0 and 1"):
        T.RandomErasing(p=2)
    with pytest.warns(UserWarning, match="Scale and ratio should be of kind \\(min, max\\)"):
        T.RandomErasing(ratio=(3.0, 0.3))
    with pytest.raises(ValueError, match="either a single value or 3 \\(number of input channels\\)"):
        T.RandomErasing(p=1.0, value=(1, 2))(ember.zeros(3, 8, 8))
    img = ember.zeros(1, 4, 4)  # a box of 95%+ of the area never fits strictly inside: the image comes back
    assert T.RandomErasing(p=1.0, scale=(0.95, 1.0), ratio=(1.0, 1.0))(img).equal(img)
    with pytest.raises(TypeError, match="img should be Tensor Image"):
        F.erase(Image.new("RGB", (4, 4)), 0, 0, 1, 1, ember.zeros(1))
