"""make_grid / save_image against torchvision's algorithm re-implemented with torch ops."""

import math

import numpy as np
import pytest
import torch
from PIL import Image

import ember
from ember.vision import utils


def torch_make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    if isinstance(tensor, list):
        tensor = torch.stack(tensor, dim=0)
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    if normalize:
        tensor = tensor.clone()

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t):
            norm_ip(t, *(value_range if value_range is not None else (float(t.min()), float(t.max()))))

        if scale_each:
            for t in tensor:
                norm_range(t)
        else:
            norm_range(tensor)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(2, x * width + padding,
                                                                          width - padding).copy_(tensor[k])
            k += 1
    return grid


@pytest.mark.parametrize("shape", [(5, 3, 4, 6), (10, 1, 3, 3), (1, 3, 4, 4), (3, 4, 4), (1, 4, 4), (4, 5)])
@pytest.mark.parametrize("kwargs", [{}, {"nrow": 3, "padding": 1, "pad_value": 0.5},
                                    {"normalize": True}, {"normalize": True, "scale_each": True, "padding": 0},
                                    {"normalize": True, "value_range": (-1.0, 0.5), "nrow": 2}])
def test_make_grid_matches_torchvisions_algorithm(shape, kwargs):
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    out = utils.make_grid(ember.from_numpy(x.copy()), **kwargs)
    expected = torch_make_grid(torch.from_numpy(x.copy()), **kwargs)
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=1e-6)


def test_make_grid_list_and_errors():
    imgs = [ember.rand(3, 4, 4) for _ in range(3)]
    assert tuple(utils.make_grid(imgs, nrow=2).shape) == (3, 14, 14)
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        utils.make_grid(ember.rand(2, 3, 4, 4), normalize=True, value_range=[0, 1])


def test_save_image_rounds_to_8_bits(tmp_path):
    x = np.random.default_rng(1).random((4, 3, 5, 5)).astype(np.float32)
    path = tmp_path / "grid.png"
    utils.save_image(ember.from_numpy(x.copy()), path, nrow=2)
    grid = torch_make_grid(torch.from_numpy(x.copy()), nrow=2)
    expected = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(torch.uint8).numpy()
    np.testing.assert_array_equal(np.asarray(Image.open(path)), expected)
