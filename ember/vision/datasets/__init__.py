"""torchvision.datasets on ember: datasets read from files on disk (downloaded when the network allows)."""

from ..._missing import module_getattr as _module_getattr
from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import DatasetFolder, ImageFolder
from .mnist import KMNIST, MNIST, FashionMNIST
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "DatasetFolder", "FakeData", "FashionMNIST", "ImageFolder", "KMNIST", "MNIST",
           "VisionDataset"]

__getattr__ = _module_getattr(__name__, "torchvision.datasets")  # missing names: torchvision features
