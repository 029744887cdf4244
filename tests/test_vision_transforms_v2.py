"""ember.vision.transforms.v2 against torchvision v2's documented semantics, with references written in torch
(torchvision is not installed next to the oracle torch): the same seeded draws in torchvision's order, the
same arithmetic, samples passed through."""

import math

import numpy as np
import pytest
import torch
from PIL import Image

import ember
from ember.vision.transforms import v2

RNG = np.random.default_rng(0)


def rgb(h=20, w=24):
    return RNG.integers(0, 256, size=(h, w, 3), dtype=np.uint8)


def close(a, b, atol=1e-5):
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=atol, rtol=0)


def torch_random_resized_crop_params(height, width, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """torchvision's RandomResizedCrop draws, in torch."""
    area = height * width
    log_ratio = torch.log(torch.tensor(ratio))
    for _ in range(10):
        target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
        aspect = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
        w = int(round(math.sqrt(target_area * aspect)))
        h = int(round(math.sqrt(target_area / aspect)))
        if 0 < w <= width and 0 < h <= height:
            i = torch.randint(0, height - h + 1, size=(1,)).item()
            j = torch.randint(0, width - w + 1, size=(1,)).item()
            return i, j, h, w
    raise AssertionError("the test's images always admit a crop")


def torch_train_pipeline(x, size=16, mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3)):
    """ToImage, ToDtype(float32, scale=True), RandomResizedCrop, RandomHorizontalFlip, Normalize: torch ops."""
    x = x.float() / 255
    i, j, h, w = torch_random_resized_crop_params(*x.shape[-2:])
    crop = x[..., i:i + h, j:j + w]
    batched = crop if crop.ndim == 4 else crop[None]
    out = torch.nn.functional.interpolate(batched, size=(size, size), mode="bilinear", align_corners=False,
                                          antialias=True)
    out = out if crop.ndim == 4 else out[0]
    if torch.rand(1) < 0.5:
        out = out.flip(-1)
    return (out - torch.tensor(mean).view(-1, 1, 1)) / torch.tensor(std).view(-1, 1, 1)


def ember_train_pipeline(size=16, mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3)):
    return v2.Compose([v2.ToImage(), v2.ToDtype(ember.float32, scale=True), v2.RandomResizedCrop(size),
                       v2.RandomHorizontalFlip(), v2.Normalize(list(mean), list(std))])


@pytest.mark.parametrize("seed", range(4))
def test_training_pipeline_on_pil_images_matches_torch(seed):
    arr = rgb()
    ember.manual_seed(seed)
    out = ember_train_pipeline()(Image.fromarray(arr))
    torch.manual_seed(seed)
    expected = torch_train_pipeline(torch.from_numpy(arr).permute(2, 0, 1))
    assert out.dtype == ember.float32 and tuple(out.shape) == (3, 16, 16)
    close(out, expected)


@pytest.mark.parametrize("seed", range(3))
def test_batched_tensor_images_share_one_draw(seed):
    batch = RNG.integers(0, 256, size=(5, 3, 20, 24), dtype=np.uint8)
    ember.manual_seed(seed)
    out = ember_train_pipeline()(ember.from_numpy(batch.copy()))
    torch.manual_seed(seed)
    expected = torch_train_pipeline(torch.from_numpy(batch))
    assert tuple(out.shape) == (5, 3, 16, 16)
    close(out, expected)


def test_samples_pass_their_other_parts_through():
    arr = rgb()
    label = ember.tensor([7, 1])
    pipeline = ember_train_pipeline()
    ember.manual_seed(2)
    alone = pipeline(Image.fromarray(arr))
    ember.manual_seed(2)
    image, out_label = pipeline(Image.fromarray(arr), label)
    assert out_label is label
    close(image, alone)
    ember.manual_seed(2)
    sample = pipeline({"image": Image.fromarray(arr), "label": 3, "meta": [label, "name"]})
    assert sample["label"] == 3 and sample["meta"][0] is label and sample["meta"][1] == "name"
    close(sample["image"], alone)
    # a plain tensor sample: the first tensor is the image, the second (the labels) passes through
    x = ember.from_numpy(arr.transpose(2, 0, 1).copy())
    flipped, kept = v2.RandomHorizontalFlip(p=1.0)(x, label)
    assert kept is label and np.array_equal(flipped.numpy(), arr.transpose(2, 0, 1)[..., ::-1])


def test_to_image_and_to_dtype():
    arr = rgb()
    for pic in (Image.fromarray(arr), arr):
        image = v2.ToImage()(pic)
        assert isinstance(image, ember.Tensor) and image.dtype == ember.uint8 and tuple(image.shape) == (3, 20, 24)
        np.testing.assert_array_equal(image.numpy(), arr.transpose(2, 0, 1))
    assert tuple(v2.ToImage()(arr[..., 0]).shape) == (1, 20, 24)
    image = v2.ToImage()(arr)
    close(v2.ToDtype(ember.float32, scale=True)(image), torch.from_numpy(arr).permute(2, 0, 1).float() / 255)
    unscaled = v2.ToDtype(ember.float32)(image)
    assert unscaled.dtype == ember.float32 and unscaled.max().item() == arr.max()
    halves = ember.tensor([[[0.0, 0.5, 1.0]]])
    assert v2.ToDtype(ember.uint8, scale=True)(halves).tolist() == [[[0, 127, 255]]]  # x * (255 + 1 - 1e-3)
    pil = Image.fromarray(arr)
    assert v2.ToDtype(ember.float32, scale=True)(pil) is pil
    with pytest.raises(TypeError, match="dtype"):
        v2.ToDtype({ember.float32: ember.float32})


@pytest.mark.parametrize("shape", [(3, 10, 16), (3, 16, 10), (3, 14, 18)])
def test_random_crop_draws_only_where_the_crop_is_smaller(shape):
    # torchvision v2 draws ``randint(size=())`` for the top, then the left, skipping an axis the crop fills
    x = ember.arange(float(np.prod(shape))).reshape(shape)
    ember.manual_seed(4)
    out = v2.RandomCrop(10)(x)
    torch.manual_seed(4)
    h, w = shape[1:]
    top = int(torch.randint(0, h - 10 + 1, size=())) if h > 10 else 0
    left = int(torch.randint(0, w - 10 + 1, size=())) if w > 10 else 0
    np.testing.assert_array_equal(out.numpy(), x.numpy()[:, top:top + 10, left:left + 10])
    assert float(ember.rand(1)) == float(torch.rand(1))  # the same number of draws


def test_center_crop_resize_and_color_jitter_match_v1():
    from ember.vision import transforms as v1

    x = ember.rand(2, 3, 12, 14)
    close(v2.CenterCrop(8)(x), torch.from_numpy(x.numpy())[..., 2:10, 3:11])
    close(v2.Resize(6)(x), v1.Resize(6)(x))
    ember.manual_seed(1)
    jittered = v2.ColorJitter(0.4, 0.4, 0.4, 0.1)(x)
    ember.manual_seed(1)
    close(jittered, v1.ColorJitter(0.4, 0.4, 0.4, 0.1)(x))


def test_random_choice_draws_with_multinomial():
    picks = [v2.Lambda(lambda x, k=k: k) for k in range(3)]
    for seed in range(5):
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        chosen = v2.RandomChoice(picks, p=[1, 2, 3])(ember.zeros(1))
        assert chosen == int(torch.multinomial(torch.tensor([1 / 6, 2 / 6, 3 / 6]), 1))


def test_random_apply_order_and_lambda_types():
    add_one = v2.Lambda(lambda x: x + 1, ember.Tensor)
    x = ember.zeros(2)
    for seed in range(4):
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        applied = not torch.rand(1) >= 0.5
        assert v2.RandomApply([add_one, add_one], p=0.5)(x).tolist() == ([2.0, 2.0] if applied else [0.0, 0.0])
    out, label = add_one(x, 5)  # the Lambda's types: the label (an int) is left alone
    assert out.tolist() == [1.0, 1.0] and label == 5
    with pytest.raises(ValueError, match="interval"):
        v2.RandomApply([add_one], p=1.5)


def labelled_batch(n=4, classes=5):
    return ember.rand(n, 3, 8, 10), ember.tensor([0, 1, 2, 4][:n])


def test_mixup_mixes_images_and_one_hot_labels_by_one_lambda():
    images, labels = labelled_batch()
    ember.manual_seed(0)
    mixed, soft = v2.MixUp(num_classes=5)(images, labels)
    one_hot = torch.nn.functional.one_hot(torch.tensor([0, 1, 2, 4]), 5).float()
    lam = soft[0, 0].item()
    assert 0 < lam < 1 and soft.dtype == ember.float32
    close(soft, lam * one_hot + (1 - lam) * one_hot.roll(1, 0))
    x = torch.from_numpy(images.numpy())
    close(mixed, lam * x + (1 - lam) * x.roll(1, 0))


def test_cutmix_pastes_a_box_whose_area_weighs_the_labels():
    images, labels = labelled_batch()
    seen_partial = False
    for seed in range(6):
        ember.manual_seed(seed)
        mixed, soft = v2.CutMix(num_classes=5)(images, labels)
        x = torch.from_numpy(images.numpy())
        y = torch.from_numpy(mixed.numpy())
        pasted = (y != x).any(0).any(0)  # (H, W): where the rolled batch shows
        lam = soft[0, 0].item()
        np.testing.assert_allclose(1 - pasted.float().mean().item(), lam, atol=1e-6)
        rows, cols = pasted.any(1).nonzero().flatten(), pasted.any(0).nonzero().flatten()
        if len(rows):
            seen_partial = True
            box = (slice(rows.min(), rows.max() + 1), slice(cols.min(), cols.max() + 1))
            assert pasted[box].all()  # one rectangle
            assert torch.equal(y[..., box[0], box[1]], x.roll(1, 0)[..., box[0], box[1]])
        one_hot = torch.nn.functional.one_hot(torch.tensor([0, 1, 2, 4]), 5).float()
        close(soft, lam * one_hot + (1 - lam) * one_hot.roll(1, 0))
    assert seen_partial


def test_mixing_validates_its_batch():
    images, labels = labelled_batch()
    with pytest.raises(ValueError, match="batched input with 4 dims"):
        v2.MixUp(num_classes=5)(images[0], labels)
    with pytest.raises(ValueError, match="batch size"):
        v2.CutMix(num_classes=5)(images, labels[:3])
    mixed = v2.MixUp(num_classes=5)({"image": images, "Labels": labels})
    assert tuple(mixed["Labels"].shape) == (4, 5)
