"""FakeData: random images, the same for the same index (seeded from it, the global RNG state restored)."""

from __future__ import annotations

from collections.abc import Callable

import ember

from .. import transforms
from .vision import VisionDataset


class FakeData(VisionDataset):
    """``size`` images of ``image_size`` (C, H, W) drawn from a normal distribution, as PIL images, with
    labels in ``[0, num_classes)``; item ``i`` is generated with the seed ``i + random_offset``."""

    def __init__(self, size: int = 1000, image_size: tuple[int, int, int] = (3, 224, 224), num_classes: int = 10,
                 transform: Callable | None = None, target_transform: Callable | None = None,
                 random_offset: int = 0) -> None:
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.num_classes = size, num_classes
        self.image_size, self.random_offset = image_size, random_offset

    def __getitem__(self, index: int):
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        rng_state = ember.get_rng_state()
        ember.manual_seed(index + self.random_offset)
        img = ember.randn(*self.image_size)
        target = ember.randint(0, self.num_classes, size=(1,), dtype=ember.long)[0]
        ember.set_rng_state(rng_state)
        return self._apply(transforms.ToPILImage()(img), int(target.item()))

    def __len__(self) -> int:
        return self.size
