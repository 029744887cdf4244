"""ember.vision.models against the same architectures built in torch (tests/vision_reference.py): state_dict keys,
shapes, and outputs with the weights copied across."""

import gc

import numpy as np
import pytest
import torch

import ember
from ember.vision import models
from tests import vision_reference as ref

# state_dict sizes of torchvision's models (parameters + BatchNorm buffers incl. num_batches_tracked)
KEY_COUNTS = {"resnet18": 122, "resnet34": 218, "resnet50": 320, "resnet101": 626, "resnet152": 932,
              "alexnet": 16, "mobilenet_v2": 314, "squeezenet1_1": 52}


def torch_keys(name, **kwargs):
    with torch.device("meta"):
        return {k: tuple(v.shape) for k, v in ref.build(name, **kwargs).state_dict().items()}


def ember_keys(model):
    return {k: tuple(v.shape) for k, v in model.state_dict().items()}


@pytest.mark.parametrize("name", ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "alexnet",
                                  "mobilenet_v2", "squeezenet1_1"])
def test_state_dict_keys_and_shapes_are_torchvisions(name):
    model = getattr(models, name)(num_classes=10)
    keys = ember_keys(model)
    assert list(keys) == list(torch_keys(name, num_classes=10)) and keys == torch_keys(name, num_classes=10)
    assert len(keys) == KEY_COUNTS[name]


@pytest.mark.parametrize("name", ["vgg11", "vgg19_bn"])
def test_vgg_state_dict_keys(name):
    model = getattr(models, name)(num_classes=10)
    assert ember_keys(model) == torch_keys(name, num_classes=10)
    assert list(ember_keys(model))[:2] == ["features.0.weight", "features.0.bias"]
    del model
    gc.collect()


def copy_into_torch(model, name, num_classes):
    reference = ref.build(name, num_classes=num_classes)
    state = {k: torch.from_numpy(np.array(v.numpy())) for k, v in model.state_dict().items()}
    reference.load_state_dict(state)
    return reference


@pytest.mark.parametrize("name,size", [("resnet18", 48), ("resnet50", 40), ("mobilenet_v2", 40),
                                       ("squeezenet1_1", 48), ("alexnet", 70)])
def test_outputs_equal_torch_with_copied_weights(name, size):
    ember.manual_seed(0)
    model = getattr(models, name)(num_classes=7)
    for m in model.modules():  # non-trivial BatchNorm statistics
        if isinstance(m, ember.nn.BatchNorm2d):
            m.running_mean.copy_(ember.randn(m.num_features) * 0.1)
            m.running_var.copy_(ember.rand(m.num_features) + 0.5)
    reference = copy_into_torch(model, name, 7)
    model.eval()
    reference.eval()
    x = np.random.default_rng(0).normal(size=(2, 3, size, size)).astype(np.float32)
    out = model(ember.from_numpy(x.copy()))
    with torch.no_grad():
        expected = reference(torch.from_numpy(x.copy()))
    assert tuple(out.shape) == (2, 7)
    np.testing.assert_allclose(out.detach().numpy(), expected.numpy(), atol=1e-4, rtol=1e-4)


def test_initialisation_follows_torchvision():
    ember.manual_seed(0)
    m = models.resnet18(zero_init_residual=True)
    assert m.layer1[0].bn2.weight.abs().sum().item() == 0 and m.bn1.weight.mean().item() == 1
    fan_out = 64 * 7 * 7  # kaiming_normal_(mode="fan_out", relu): std sqrt(2 / fan_out)
    assert abs(m.conv1.weight.std().item() - (2 / fan_out) ** 0.5) < 0.1 * (2 / fan_out) ** 0.5
    mobile = models.mobilenet_v2()
    assert mobile.classifier[1].bias.abs().sum().item() == 0 and mobile.classifier[1].weight.std().item() < 0.012


def test_pretrained_weights_are_refused_with_a_way_out():
    with pytest.raises(RuntimeError, match=r"resnet18-f37072fd\.pth.*load_state_dict"):
        models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)
    with pytest.raises(RuntimeError, match="IMAGENET1K_V1"):
        models.resnet50(pretrained=True)
    with pytest.raises(RuntimeError, match="vgg16-397923af"):
        models.vgg16(weights="DEFAULT")
    with pytest.raises(TypeError, match="expected ResNet18_Weights"):
        models.resnet18(weights=models.ResNet50_Weights.DEFAULT)
    assert models.ResNet18_Weights.DEFAULT is models.ResNet18_Weights.IMAGENET1K_V1
    assert models.resnet18(weights=None, pretrained=False).fc.out_features == 1000


def test_train_step_runs():
    model = models.resnet18(num_classes=3)
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    loss = ember.nn.functional.cross_entropy(model(ember.randn(2, 3, 32, 32)), ember.tensor([0, 2]))
    loss.backward()
    opt.step()
    assert model.conv1.weight.grad is not None and model.bn1.num_batches_tracked.item() == 1


def test_intermediate_layer_getter_returns_the_named_children_outputs():
    from ember.vision.models._utils import IntermediateLayerGetter

    ember.manual_seed(0)
    model = models.resnet18()
    getter = IntermediateLayerGetter(model, return_layers={"layer2": "feat2", "layer4": "out"})
    assert list(getter.keys()) == ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"]
    assert set(getter.state_dict()) == {k for k in model.state_dict() if not k.startswith("fc.")}
    model.eval()
    getter.eval()
    x = ember.randn(1, 3, 64, 64)
    out = getter(x)
    assert list(out) == ["feat2", "out"]
    assert tuple(out["feat2"].shape) == (1, 128, 8, 8) and tuple(out["out"].shape) == (1, 512, 2, 2)
    expected = model.layer4(model.layer3(model.layer2(model.layer1(model.maxpool(model.relu(model.bn1(
        model.conv1(x))))))))
    assert out["out"].equal(expected)
    assert list(IntermediateLayerGetter(model, {"layer1": "a"}).keys())[-1] == "layer1"
    with pytest.raises(ValueError, match="return_layers are not present in model"):
        IntermediateLayerGetter(model, {"layer9": "x"})
