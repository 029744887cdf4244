"""ember.vision.datasets read files written here in the real on-disk formats (IDX, CIFAR pickles, folders)."""

import os
import pickle

import numpy as np
import pytest
import torch
from PIL import Image

import ember
from ember.utils.data import DataLoader
from ember.vision import datasets, transforms
from tests.vision_files import make_mnist


@pytest.mark.parametrize("cls", [datasets.MNIST, datasets.FashionMNIST, datasets.KMNIST])
@pytest.mark.parametrize("compress", [False, True])
def test_mnist_family_reads_idx_files(tmp_path, cls, compress):
    images, labels = make_mnist(tmp_path, cls.__name__, compress=compress)
    ds = cls(str(tmp_path), train=True)
    assert len(ds) == 7 and ds.data.dtype == ember.uint8 and tuple(ds.data.shape) == (7, 28, 28)
    assert ds.targets.dtype == ember.int64 and ds.targets.tolist() == labels.tolist()
    img, label = ds[3]
    assert isinstance(img, Image.Image) and img.mode == "L" and img.size == (28, 28)
    assert np.array_equal(np.asarray(img), images[3]) and label == int(labels[3]) and type(label) is int
    assert len(ds.classes) == 10 and ds.class_to_idx[ds.classes[2]] == 2


def test_mnist_transforms_and_loader(tmp_path):
    images, labels = make_mnist(tmp_path, split="test", n=5)
    ds = datasets.MNIST(tmp_path, train=False, transform=transforms.ToTensor(), target_transform=lambda y: y + 100)
    x, y = ds[0]
    assert tuple(x.shape) == (1, 28, 28) and x.dtype == ember.float32 and y == labels[0] + 100
    np.testing.assert_allclose(x.numpy()[0], images[0] / 255, atol=1e-7)
    batch_x, batch_y = next(iter(DataLoader(ds, batch_size=4)))
    assert tuple(batch_x.shape) == (4, 1, 28, 28) and batch_y.tolist() == (labels[:4].astype(int) + 100).tolist()
    assert "Split: Test" in repr(ds)


@pytest.mark.parametrize("old,new", [("train_data", "data"), ("test_data", "data"), ("train_labels", "targets"),
                                     ("test_labels", "targets")])
def test_mnist_old_attribute_names_warn_and_give_the_new(tmp_path, old, new):
    # torchvision keeps these for scripts written before the rename (the MorvanZhou tutorials read test_data).
    make_mnist(tmp_path)
    ds = datasets.MNIST(tmp_path, train=True)
    with pytest.warns(UserWarning, match=f"^{old} has been renamed {new}$"):
        value = getattr(ds, old)
    assert value is getattr(ds, new)


def test_missing_dataset_names_the_files(tmp_path):
    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True") as e:
        datasets.MNIST(tmp_path, train=True)
    assert "train-images-idx3-ubyte" in str(e.value) and os.path.join(str(tmp_path), "MNIST", "raw") in str(e.value)
    with pytest.raises(RuntimeError, match="data_batch_1") as e:
        datasets.CIFAR10(tmp_path)
    # torchvision's CIFAR words it its own way (it also checks the files' MD5 sums)
    assert str(e.value).startswith("Dataset not found or corrupted. You can use download=True to download it")


def test_download_failure_is_a_clear_error(tmp_path, monkeypatch):
    import urllib.request

    def offline(url, timeout=None):
        raise OSError("network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(RuntimeError, match="Error downloading train-images-idx3-ubyte.gz"):
        datasets.MNIST(tmp_path, download=True)


def test_bad_idx_file_is_refused(tmp_path):
    make_mnist(tmp_path)
    (tmp_path / "MNIST" / "raw" / "train-labels-idx1-ubyte").write_bytes(b"\x12\x34\x56\x78")
    with pytest.raises(ValueError, match="not an IDX file"):
        datasets.MNIST(tmp_path)


def write_cifar(root, folder, files, meta_name, meta_key, label_key, n=4, classes=10):
    d = root / folder
    d.mkdir(parents=True)
    rng = np.random.default_rng(2)
    written = {}
    for name in files:
        data = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
        labels = rng.integers(0, classes, size=n).tolist()
        with open(d / name, "wb") as f:
            pickle.dump({"batch_label": f"batch {name}", "data": data, label_key: labels, "filenames": ["a"] * n}, f)
        written[name] = (data, labels)
    with open(d / meta_name, "wb") as f:
        pickle.dump({meta_key: [f"class{i}" for i in range(classes)]}, f)
    return written


def test_cifar10_reads_pickled_batches(tmp_path):
    train = [f"data_batch_{i}" for i in range(1, 6)]
    written = write_cifar(tmp_path, "cifar-10-batches-py", train + ["test_batch"], "batches.meta", "label_names",
                          "labels")
    ds = datasets.CIFAR10(tmp_path, train=True)
    assert len(ds) == 20 and ds.data.shape == (20, 32, 32, 3) and ds.data.dtype == np.uint8
    data, labels = written["data_batch_2"]
    img, label = ds[5]
    assert isinstance(img, Image.Image) and img.mode == "RGB" and img.size == (32, 32)
    expected = data[1].reshape(3, 32, 32).transpose(1, 2, 0)
    assert np.array_equal(np.asarray(img), expected) and label == labels[1]
    assert ds.classes[3] == "class3" and ds.class_to_idx["class3"] == 3
    test = datasets.CIFAR10(tmp_path, train=False, transform=transforms.ToTensor())
    x, _ = test[0]
    torch.testing.assert_close(torch.from_numpy(x.numpy()),
                               torch.from_numpy(written["test_batch"][0][0].reshape(3, 32, 32)).float() / 255)


def test_cifar100_fine_labels(tmp_path):
    written = write_cifar(tmp_path, "cifar-100-python", ["train", "test"], "meta", "fine_label_names", "fine_labels",
                          classes=100)
    ds = datasets.CIFAR100(tmp_path, train=False)
    assert ds.targets == written["test"][1] and len(ds.classes) == 100


class Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_cifar_unpickler_refuses_code(tmp_path):
    d = tmp_path / "cifar-10-batches-py"
    d.mkdir()
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["batches.meta"]:
        with open(d / name, "wb") as f:
            pickle.dump({"data": Boom(), "labels": []}, f)
    with pytest.raises(pickle.UnpicklingError, match="os.system|posix.system"):
        datasets.CIFAR10(tmp_path)


def make_folder(root):
    for cls, n in (("cat", 2), ("dog", 3)):
        (root / cls / "sub").mkdir(parents=True)
        for i in range(n):
            Image.fromarray(np.full((4, 5), i * 10, np.uint8)).save(root / cls / ("sub" if i else "") / f"{i}.png")
    (root / "dog" / "notes.txt").write_text("not an image")


def test_image_folder(tmp_path):
    make_folder(tmp_path)
    ds = datasets.ImageFolder(tmp_path)
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert ds.targets == [0, 0, 1, 1, 1] and ds.imgs == ds.samples and len(ds) == 5
    img, label = ds[2]
    assert img.mode == "RGB" and img.size == (5, 4) and label == 1
    only_zero = datasets.ImageFolder(tmp_path, is_valid_file=lambda p: p.endswith("0.png"))
    assert len(only_zero) == 2


def test_dataset_folder_extensions_loader_and_errors(tmp_path):
    make_folder(tmp_path)
    ds = datasets.DatasetFolder(tmp_path, loader=lambda p: os.path.basename(p), extensions=(".txt",),
                                allow_empty=True)
    assert [s[1] for s in ds.samples] == [1] and ds[0] == ("notes.txt", 1)
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes cat"):
        datasets.DatasetFolder(tmp_path, loader=open, extensions=(".txt",))
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        datasets.DatasetFolder(tmp_path, loader=open)
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        datasets.ImageFolder(tmp_path / "cat" / "sub")


def test_fake_data_is_deterministic_per_index():
    ds = datasets.FakeData(size=4, image_size=(3, 8, 6), num_classes=3, transform=transforms.ToTensor())
    ember.manual_seed(0)
    before = ember.rand(1)
    ember.manual_seed(0)
    x0, y0 = ds[1]
    assert ember.equal(ember.rand(1), before)  # the global RNG state is restored
    x1, y1 = ds[1]
    assert tuple(x0.shape) == (3, 8, 6) and ember.equal(x0, x1) and y0 == y1 and 0 <= y0 < 3
    assert len(ds) == 4
    with pytest.raises(IndexError):
        ds[4]
