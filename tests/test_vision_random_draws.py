"""Vision's random transforms draw PyTorch's numbers for the same seed: each makes torchvision's calls (``rand``,
``randint``, ``bernoulli_``) in torchvision's order, and those give PyTorch's numbers, so the flips, crops and drops
are torchvision's. torchvision itself is not installed here: its draws are written out with ``torch``, as its
transforms make them (RandomHorizontalFlip: ``torch.rand(1) < p``; RandomCrop.get_params: two ``torch.randint``;
stochastic_depth: ``empty(size).bernoulli_(1 - p)``)."""

import numpy as np
import torch

import ember
from ember.vision import ops
from ember.vision import transforms as T


def test_flips_and_crops_are_torchvisions_for_the_same_seed():
    image = np.arange(2 * 9 * 11, dtype=np.float32).reshape(2, 9, 11)
    ember.manual_seed(5)
    flip, crop = T.RandomHorizontalFlip(0.5), T.RandomCrop((4, 6))
    mine = [crop(flip(ember.tensor(image))).numpy() for _ in range(12)]
    torch.manual_seed(5)
    theirs = []
    for _ in range(12):
        out = image[:, :, ::-1] if torch.rand(1) < 0.5 else image
        i, j = torch.randint(0, 9 - 4 + 1, size=(1,)).item(), torch.randint(0, 11 - 6 + 1, size=(1,)).item()
        theirs.append(out[:, i:i + 4, j:j + 6])
    assert len({a.tobytes() for a in theirs}) > 4  # (the draws vary: a fixed crop would not pass by chance)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a, b)


def test_stochastic_depth_drops_are_torchvisions_for_the_same_seed():
    x = np.ones((16, 3), dtype=np.float32)
    ember.manual_seed(2)
    mine = ops.stochastic_depth(ember.tensor(x), 0.4, "row").numpy()
    torch.manual_seed(2)
    theirs = x * (torch.empty(16, 1).bernoulli_(0.6) / 0.6).numpy()
    np.testing.assert_array_equal(mine, theirs)
