"""ember.vision: torchvision's pure-Python parts on ember (``import torchvision`` under ``python -m ember.compat``).

``transforms`` (PIL and tensor image transforms), ``datasets`` (MNIST family, CIFAR, ImageFolder, FakeData read
from files on disk), ``models`` (ResNet, VGG, AlexNet, MobileNetV2 with torchvision's state_dict keys, no
pretrained weights), ``ops`` (box arithmetic, NMS, focal loss, FrozenBatchNorm2d; not the compiled region
operators such as roi_align) and ``utils`` (make_grid, save_image). PIL images need Pillow
(``pip install ember[vision]``). ``torchvision.io`` reads and writes images through Pillow (no video).
"""

from .._missing import module_getattr as _module_getattr
from . import datasets, models, ops, transforms, utils
from .version import __version__

__all__ = ["__version__", "datasets", "models", "ops", "transforms", "utils"]

__getattr__ = _module_getattr(__name__, "torchvision")  # missing names: torchvision features
