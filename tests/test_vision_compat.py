"""``import torchvision`` under ``python -m ember.compat``: ember.vision, and whole programs that use it."""

import json
import textwrap

import numpy as np
import torch
from PIL import Image
from test_compat import run_script

from tests import vision_reference as ref
from tests.vision_files import make_mnist, write_idx


def test_torchvision_is_ember_vision(tmp_path):
    out = run_script(tmp_path, """
        import importlib.util
        import torch, torchvision
        import torchvision.transforms as T
        import torchvision.transforms.functional as TF
        from torchvision import datasets, models
        from torchvision.models import resnet18, ResNet18_Weights
        from torchvision.utils import make_grid
        from torchvision.transforms import v2
        import torchvision.transforms.v2 as v2_again
        import ember.vision
        assert v2 is v2_again is ember.vision.transforms.v2 and v2.RandomResizedCrop(2)(torch.ones(3, 4, 4)).shape == (3, 2, 2)
        assert torchvision is ember.vision and T is ember.vision.transforms and TF is ember.vision.transforms.functional
        assert datasets is ember.vision.datasets and resnet18 is ember.vision.models.resnet18
        assert importlib.util.find_spec("torchvision") is not None
        assert importlib.util.find_spec("torchvision.transforms") is not None
        assert isinstance(T.ToTensor()(__import__("numpy").zeros((2, 2, 3), "uint8")), torch.Tensor)
        print(torchvision.__version__.split("+")[0], ResNet18_Weights.DEFAULT.name)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0.28.0", "IMAGENET1K_V1"]


def test_spawned_children_import_torchvision_first(tmp_path):
    out = run_script(tmp_path, """
        import torchvision  # before torch: a spawned child imports it first too
        import torch.multiprocessing as mp

        def work(rank, queue):
            import ember.vision
            queue.put((rank, torchvision is ember.vision, torchvision.transforms.CenterCrop(2)(torch.ones(1, 4, 4)).sum().item()))

        import torch
        if __name__ == "__main__":
            queue = mp.get_context("spawn").SimpleQueue()
            mp.spawn(work, args=(queue,), nprocs=1)
            print(queue.get())
    """, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(0, True, 4.0)"


def test_missing_and_refused_parts_are_named(tmp_path):
    out = run_script(tmp_path, """
        import torchvision
        import torchvision.ops
        from torchvision.ops import nms
        try:
            torchvision.ops.roi_align
        except AttributeError as e:
            print("ops:", nms.__module__, "|", e)
        try:
            import torchvision.tv_tensors
        except ModuleNotFoundError as e:
            print("module:", e)
        import torchvision.transforms as T
        try:
            T.AutoAugment
        except AttributeError as e:
            print("attr:", e)
        from torchvision.models import no_such_model
    """)
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[0].startswith("ops: ember.vision.ops.boxes |") and "torchvision.ops.roi_align is not implemented" in lines[0]
    assert lines[1] == "module: torchvision.tv_tensors is not implemented in ember (docs/api.md lists what is supported)"
    assert lines[2].startswith("attr: ") and "torchvision.transforms.AutoAugment is not implemented in ember" in lines[2]
    assert "torchvision.models.no_such_model is not implemented in ember" in out.stderr.strip().splitlines()[-1]


DCGAN = """
    import json
    import sys
    import torch
    import torch.nn as nn
    import torchvision
    from torchvision import datasets, transforms
    from torchvision.utils import save_image

    torch.manual_seed(0)
    tf = transforms.Compose([transforms.Resize(16), transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    data = datasets.MNIST(sys.argv[1], train=True, download=False, transform=tf)
    loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True, drop_last=True)
    nz = 8
    G = nn.Sequential(
        nn.ConvTranspose2d(nz, 32, 4, 1, 0, bias=False), nn.BatchNorm2d(32), nn.ReLU(True),
        nn.ConvTranspose2d(32, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),
        nn.ConvTranspose2d(16, 1, 4, 2, 1, bias=False), nn.Tanh())
    D = nn.Sequential(
        nn.Conv2d(1, 16, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(16, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(32, 1, 4, 1, 0, bias=False), nn.Flatten(), nn.Sigmoid())
    criterion = nn.BCELoss()
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
    d_losses = []
    for epoch in range(4):
        total = 0.0
        for real, _ in loader:
            b = real.size(0)
            noise = torch.randn(b, nz, 1, 1)
            fake = G(noise)
            opt_d.zero_grad()
            loss_d = criterion(D(real), torch.ones(b, 1)) + criterion(D(fake.detach()), torch.zeros(b, 1))
            loss_d.backward()
            opt_d.step()
            opt_g.zero_grad()
            loss_g = criterion(D(fake), torch.ones(b, 1))
            loss_g.backward()
            opt_g.step()
            total += loss_d.item()
        d_losses.append(total / len(loader))
    samples = G(torch.randn(16, nz, 1, 1))
    save_image(samples, sys.argv[2], nrow=4, normalize=True)
    print(json.dumps({"d_losses": d_losses, "real": list(real.shape), "fake": list(samples.shape)}))
"""


def test_dcgan_on_mnist_files_trains(tmp_path):
    images, _ = make_mnist(tmp_path, n=64, compress=True)
    images[:, 8:20, 8:20] = 255  # a shape for the discriminator to learn
    write_idx(tmp_path / "MNIST" / "raw" / "train-images-idx3-ubyte.gz", images, compress=True)
    out = run_script(tmp_path, DCGAN, str(tmp_path), str(tmp_path / "samples.png"), timeout=240)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["real"] == [16, 1, 16, 16] and result["fake"] == [16, 1, 16, 16]
    assert result["d_losses"][-1] < result["d_losses"][0], result
    with Image.open(tmp_path / "samples.png") as grid:
        assert grid.size == (4 * 18 + 2, 4 * 18 + 2)


FINE_TUNE = """
    import sys, json
    import numpy as np
    import torch
    import torchvision

    model = torchvision.models.resnet18(num_classes=10)
    model.load_state_dict(torch.load(sys.argv[1]))
    x = torch.from_numpy(np.load(sys.argv[2]))
    y = torch.tensor([1, 3, 5, 7])
    model.eval()
    with torch.no_grad():
        before = model(x)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.005, momentum=0.9)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        after = model(x)
    print(json.dumps({"before": before.tolist(), "losses": losses, "after": after.tolist(),
                      "module": type(model).__module__}))
"""


STAND_IN = """
    # torchvision for the PyTorch run: the reference architecture (torchvision is not installed here)
    from tests import vision_reference


    class models:
        @staticmethod
        def resnet18(num_classes=1000):
            return vision_reference.build("resnet18", num_classes=num_classes)
"""


def test_resnet18_fine_tunes_from_a_torch_saved_state_dict(tmp_path):
    """The same program under PyTorch (a stand-in torchvision with the reference resnet18) and under
    ``python -m ember.compat`` (torchvision is ember.vision), from one state_dict saved by torch."""
    torch.manual_seed(0)
    model = ref.build("resnet18", num_classes=10)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    torch.save(model.state_dict(), tmp_path / "resnet18.pt")
    np.save(tmp_path / "x.npy", np.random.default_rng(0).normal(size=(4, 3, 64, 64)).astype(np.float32))
    (tmp_path / "torchvision.py").write_text(textwrap.dedent(STAND_IN))
    args = (str(tmp_path / "resnet18.pt"), str(tmp_path / "x.npy"))
    results = []
    for runner in (("-m", "ember.compat"), ()):
        out = run_script(tmp_path, FINE_TUNE, *args, runner=runner, timeout=180)
        assert out.returncode == 0, out.stderr
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    got, expected = results
    assert (got["module"], expected["module"]) == ("ember.vision.models.resnet", "tests.vision_reference")
    for key in ("before", "losses", "after"):
        np.testing.assert_allclose(got[key], expected[key], atol=1e-4, rtol=1e-4, err_msg=key)
    assert expected["losses"][1] < expected["losses"][0]
