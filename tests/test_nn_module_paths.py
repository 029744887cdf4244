"""Every layer, loss and container ``ember.nn`` has is importable from the ``nn.modules.*`` submodule PyTorch
defines it in (``from torch.nn.modules.linear import LazyLinear`` in public code), and the lazy modules are defined
there, as PyTorch's (their ``__module__`` is the path a checkpoint names)."""

import importlib
import pkgutil

import pytest
import torch.nn.modules

import ember.nn


def _torch_submodule_names() -> list[tuple[str, str]]:
    """(submodule, name) for each public name of each ``torch.nn.modules`` submodule that ember.nn also has."""
    pairs = []
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        if info.name.startswith("_"):
            continue
        torch_module = importlib.import_module(f"torch.nn.modules.{info.name}")
        pairs += [(info.name, name) for name in getattr(torch_module, "__all__", ()) if hasattr(ember.nn, name)]
    return pairs


_PAIRS = _torch_submodule_names()


def test_the_pairs_cover_the_common_submodules():
    submodules = {submodule for submodule, _ in _PAIRS}
    assert {"linear", "conv", "batchnorm", "instancenorm", "loss", "container", "flatten"} <= submodules
    assert len(_PAIRS) > 150


@pytest.mark.parametrize("submodule,name", _PAIRS)
def test_name_importable_from_pytorchs_submodule(submodule, name):
    module = importlib.import_module(f"ember.nn.modules.{submodule}")
    assert getattr(module, name, None) is getattr(ember.nn, name)


@pytest.mark.parametrize("name", ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
                                  "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
                                  "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
                                  "LazyInstanceNorm3d", "LazyModuleMixin"])
def test_lazy_module_defined_where_pytorchs_is(name):
    torch_class = getattr(torch.nn.modules, name, None) or torch.nn.modules.lazy.LazyModuleMixin
    ember_class = getattr(ember.nn.modules, name, None) or ember.nn.modules.lazy.LazyModuleMixin
    assert ember_class.__module__.replace("ember.", "torch.", 1) == torch_class.__module__


def test_lazy_linear_from_pytorchs_path_builds_and_becomes_linear():
    from ember.nn.modules.linear import LazyLinear

    layer = LazyLinear(3)
    layer(ember.randn(2, 5))
    assert type(layer) is ember.nn.Linear and layer.weight.shape == (3, 5)
