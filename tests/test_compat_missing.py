"""Missing PyTorch names give one clear error, whatever the path; submodules are reachable as PyTorch's are."""

import importlib
import importlib.util
import inspect
import os
import pkgutil
import subprocess
import sys
import traceback
import warnings

import pytest
import torch
from conftest import ROOT

import ember
from ember._missing import MissingFeatureError

EMBER_ONLY = {"ember.diagnostics", "ember.ops", "ember.compat"}  # no PyTorch module of that meaning
VISION = "ember.vision"  # stands for torchvision, which is not installed next to the oracle torch


def torch_name_of(ember_name: str) -> str:
    """The PyTorch-world name of an ember module (``ember.nn`` -> ``torch.nn``, ``ember.vision.X`` ->
    ``torchvision.X``)."""
    if ember_name == VISION or ember_name.startswith(VISION + "."):
        return "torchvision" + ember_name[len(VISION):]
    return "torch" + ember_name[len("ember"):]


def mirrored_packages() -> list[str]:
    """Every public ember package (and the public plain modules programs use) that stands for a torch module."""
    names = ["ember"] + [m.name for m in pkgutil.walk_packages(ember.__path__, "ember.")
                         if m.ispkg and not any(p.startswith("_") for p in m.name.split("."))]
    names += ["ember.nn.functional", "ember.nn.init"]
    return sorted(n for n in names if not any(n == e or n.startswith(e + ".") for e in EMBER_ONLY))


PACKAGES = mirrored_packages()


def test_every_mirrored_package_has_a_torch_counterpart():
    assert {"ember", "ember.nn", "ember.optim", "ember.utils.data", "ember.cuda"} <= set(PACKAGES)
    for name in PACKAGES:
        if not torch_name_of(name).startswith("torchvision"):  # torchvision: tests/test_vision_*.py
            assert torch_module(name) is not None, name


def torch_module(ember_name: str):
    """The torch module ``ember_name`` stands for: the module, the name of a dependency it lacks here
    (torch.utils.tensorboard needs tensorboard), or None if torch has no such module."""
    name = torch_name_of(ember_name)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        return None if e.name == name else e.name


@pytest.mark.parametrize("module_name", PACKAGES)
def test_missing_module_attribute_names_the_torch_feature(module_name):
    module = importlib.import_module(module_name)
    torch_name = torch_name_of(module_name)
    with pytest.raises(AttributeError) as info:
        module.no_such_feature_xyz  # noqa: B018
    assert type(info.value) is MissingFeatureError
    text = "".join(traceback.format_exception_only(info.type, info.value))
    assert f"{torch_name}.no_such_feature_xyz is not implemented in ember" in text
    assert not hasattr(module, "no_such_feature_xyz")
    assert getattr(module, "no_such_feature_xyz", 17) == 17


def last_error_line(code: str) -> str:
    """The last line Python prints for ``code``'s uncaught exception (where it adds "Did you mean")."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 1, out.stderr
    return out.stderr.strip().splitlines()[-1]


def test_missing_names_get_no_suggestion_pointing_at_private_modules():
    # ``torch.backends`` once ended with Python's "Did you mean: '_backend'?" (a private module).
    line = last_error_line("import ember\nember.quantizationz")
    assert line.startswith("ember.MissingFeatureError: module 'ember' has no attribute 'quantizationz'")
    assert "Did you" not in line
    line = last_error_line("import ember\nember.backendz")  # suggestions name public names, loaded or not
    assert "if torch.backendz is PyTorch's, ember does not implement it" in line
    assert line.endswith("Did you mean: 'backends'?")
    with pytest.raises(AttributeError) as info:
        ember.quantization  # noqa: B018
    assert info.value.name == "quantization"  # still readable by programs


def test_typos_keep_pythons_suggestion():
    # A typo is not called a missing PyTorch feature: nothing says PyTorch has ``nn.Lineaar``.
    line = last_error_line("import ember.nn\nember.nn.Lineaar(2, 2)")
    assert line.endswith("module 'ember.nn' has no attribute 'Lineaar' (if torch.nn.Lineaar is PyTorch's, ember "
                         "does not implement it; docs/api.md lists what is supported). Did you mean: 'Linear'?")
    assert "is not implemented in ember" not in line
    assert last_error_line("import ember\nember.ones(1).sizee").endswith("Did you mean: 'size'?")
    assert last_error_line("import ember\nember.nn.Linear(1, 1).weigth").endswith("Did you mean: 'weight'?")


def test_private_and_protocol_names_give_the_plain_error():
    for obj in (ember, ember.nn):
        with pytest.raises(AttributeError) as info:
            obj.__wrapped__  # noqa: B018
        assert type(info.value) is AttributeError


def test_missing_tensor_method_names_the_torch_feature():
    x = ember.ones(2)
    assert hasattr(torch.ones(2), "geqrf") and not hasattr(x, "geqrf")
    with pytest.raises(MissingFeatureError, match=r"'Tensor' object has no attribute 'geqrf': "
                                                  r"torch\.Tensor\.geqrf is not implemented in ember"):
        x.geqrf()
    assert getattr(x, "geqrf", None) is None
    p = ember.nn.Parameter(ember.ones(1))
    with pytest.raises(MissingFeatureError, match="'Parameter' object has no attribute 'geqrf'"):
        p.geqrf  # noqa: B018
    for name in ("__array_interface__", "sizee"):  # protocol probes and typos: Python's own error
        with pytest.raises(AttributeError) as info:
            getattr(x, name)
        assert type(info.value) is AttributeError


def test_every_tensor_name_ember_lacks_is_named_as_missing():
    """Each public torch.Tensor name ember's Tensor does not define (outside ``MissingTensorMethods``) is in
    ``TENSOR_LACKS``, and each entry there is PyTorch's: the missing-feature error replaces a ``__getattr__``."""
    from ember import _torch_names
    from ember._missing import TENSOR_LACKS, MissingTensorMethods

    own = {n for klass in ember.Tensor.__mro__ if klass is not MissingTensorMethods for n in vars(klass)}
    assert _torch_names.TENSOR - own <= TENSOR_LACKS <= _torch_names.TENSOR
    x, p = ember.ones(2), ember.nn.Parameter(ember.ones(1))
    for name in sorted(_torch_names.TENSOR - own):
        assert not hasattr(x, name) and not hasattr(p, name) and not hasattr(ember.Tensor, name), name
        with pytest.raises(MissingFeatureError, match=rf"torch\.Tensor\.{name} is not implemented"):
            getattr(x, name)


def test_tensor_attribute_reads_take_pythons_fast_path():
    """No class of a tensor defines ``__getattr__``: CPython then reads every attribute of its instances by the
    general path (no specialised LOAD_ATTR / LOAD_METHOD), a cost on every op."""
    for cls in (ember.Tensor, ember.nn.Parameter, ember.nn.Buffer):
        assert not any("__getattr__" in vars(klass) for klass in cls.__mro__), cls


def test_lacked_tensor_names_behave_as_missing_attributes():
    x = ember.ones(2)
    with pytest.raises(AttributeError, match="type object 'Tensor' has no attribute 'geqrf'") as info:
        ember.Tensor.geqrf  # noqa: B018
    assert type(info.value) is AttributeError
    x.name = "activations"  # a program's own attribute under a name PyTorch's Tensor has: kept, as before
    assert x.name == "activations" and not hasattr(ember.ones(2), "name")

    class Forwarding(ember.Tensor):  # a subclass's own __getattr__ still answers what the class lacks
        def __getattr__(self, name):
            return f"forwarded {name}"

    f = Forwarding._make(ember.ones(2)._data)
    assert f.geqrf == "forwarded geqrf" and f.sizee == "forwarded sizee" and f.shape == (2,)


def test_missing_module_method_names_the_torch_feature():
    assert hasattr(torch.nn.Linear(1, 1), "ipu")
    layer = ember.nn.Linear(1, 1)
    with pytest.raises(MissingFeatureError, match=r"'Linear' object has no attribute 'ipu': "
                                                  r"torch\.nn\.Module\.ipu is not implemented in ember"):
        layer.ipu()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'wieght'") as info:
        layer.wieght  # noqa: B018
    assert type(info.value) is AttributeError  # a typo is not a missing feature


def test_torch_name_lists_match_the_installed_torch():
    """ember/_torch_names.py decides which missing names are PyTorch features; it must be PyTorch's list."""
    from ember import _torch_names

    assert _torch_names.TENSOR == {n for n in dir(torch.Tensor) if not n.startswith("_")}
    assert _torch_names.MODULE == {n for n in dir(torch.nn.Module) if not n.startswith("_")}


def run_compat(tmp_path, code: str):
    script = tmp_path / "script.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                          env=env, timeout=60, cwd=tmp_path)


@pytest.mark.parametrize("code,message", [
    ("import torch\ntorch.optim.no_such_optimizer", "torch.optim.no_such_optimizer is not implemented in ember"),
    ("import torch\ntorch.nn.NoSuchLayer()", "torch.nn.NoSuchLayer is not implemented in ember"),
    ("import torch\ntorch.nn.utils.no_such_util", "torch.nn.utils.no_such_util is not implemented in ember"),
    ("import torch\ntorch.quantization.quantize", "torch.quantization is not implemented in ember"),
    ("import torch\ntorch.ones(2).geqrf()", "torch.Tensor.geqrf is not implemented in ember"),
    ("import torch\ntorch.nn.Linear(1, 1).ipu()", "torch.nn.Module.ipu is not implemented"),
])
def test_missing_names_reached_as_attributes_after_plain_import_torch(tmp_path, code, message):
    out = run_compat(tmp_path, code)
    assert out.returncode == 1
    assert message in out.stderr and "Did you mean" not in out.stderr, out.stderr


def torch_reachable_submodules() -> dict[str, list[str]]:
    """{ember package: its submodules that ember has and that torch's package makes attributes after import}."""
    out = {}
    for name in PACKAGES:
        module = torch_module(name)
        if not inspect.ismodule(module):
            continue
        with warnings.catch_warnings():  # torch.distributed.reduce_op warns when inspected
            warnings.simplefilter("ignore", FutureWarning)
            subs = [n for n, v in vars(module).items() if not n.startswith("_") and inspect.ismodule(v)
                    and v.__name__ == f"{module.__name__}.{n}"]
        out[name] = sorted(n for n in subs if importlib.util.find_spec(f"{name}.{n}") is not None)
    return out


def test_submodules_are_attributes_as_after_importing_torch():
    """``import torch.utils.data`` then ``torch.utils.data.distributed.DistributedSampler`` works in PyTorch."""
    reachable = torch_reachable_submodules()
    assert "distributed" in reachable["ember.utils.data"] and "lr_scheduler" in reachable["ember.optim"]
    lines = []
    for package, subs in reachable.items():
        for sub in subs:
            lines.append(f"import {package}\nassert {package}.{sub}.__name__ == '{package}.{sub}', '{package}.{sub}'")
    lines.append("import ember.utils.data\nember.utils.data.distributed.DistributedSampler")
    out = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
    assert out.returncode == 0, out.stderr


def test_submodule_spelling_under_compat(tmp_path):
    out = run_compat(tmp_path, "import torch.utils.data\n"
                               "print(torch.utils.data.distributed.DistributedSampler.__name__)\n"
                               "import torch\nprint(torch.nn.modules.linear.Linear is torch.nn.Linear)\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["DistributedSampler", "True"]


@pytest.mark.parametrize("module", ["", "sparse", "nn.functional", "fft", "special", "autograd"])
def test_modules_that_import_torch_reach_it_as_pytorchs(module):
    # capsule-network code writes torch.sparse.torch.eye(n) for one-hot rows; kornia torch.torch.Tensor
    def sub(root):
        for part in filter(None, module.split(".")):
            root = getattr(root, part)
        return root

    assert sub(torch).torch is torch
    assert sub(ember).torch is ember
    onehot = [sub(lib).torch.eye(3).index_select(0, lib.tensor([2, 0])) for lib in (torch, ember)]
    assert onehot[0].tolist() == onehot[1].tolist()


def test_allow_mutation_on_saved_tensors_is_named_missing():
    """``torch.autograd.graph.allow_mutation_on_saved_tensors`` (PyTorch has it; no measured public program uses it):
    ember's error names it and says what to do instead, and ``hasattr`` answers False."""
    assert callable(torch.autograd.graph.allow_mutation_on_saved_tensors)
    import ember.autograd.graph as graph

    with pytest.raises(MissingFeatureError, match=r"torch\.autograd\.graph\.allow_mutation_on_saved_tensors is not "
                                                  r"implemented in ember: .*clone a saved tensor"):
        graph.allow_mutation_on_saved_tensors  # noqa: B018
    assert not hasattr(graph, "allow_mutation_on_saved_tensors")
