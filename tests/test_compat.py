"""The compat runner (``python -m ember.compat script.py``), ``ember.compat.install()`` and ``ember.cuda``."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from conftest import ROOT

import ember


def run_script(tmp_path, source, *args, runner=("-m", "ember.compat"), timeout=60):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, *runner, str(script), *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=timeout)


def test_imports_resolve_to_ember_modules(tmp_path):
    out = run_script(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.distributed as dist
        import torch.utils.data
        from torch.utils.data import DataLoader, TensorDataset
        from torch.nn.parallel import DistributedDataParallel
        import ember, ember.nn, ember.nn.functional, ember.distributed, ember.utils.data
        assert torch is ember and nn is ember.nn and F is ember.nn.functional and dist is ember.distributed
        assert torch.utils.data is ember.utils.data and DataLoader is ember.utils.data.DataLoader
        assert DistributedDataParallel.__module__.startswith("ember.")
        assert ember.__spec__.name == "ember"  # the aliased modules keep their own identity
        x = torch.randn(8, 3)
        loader = DataLoader(TensorDataset(x, torch.arange(8)), batch_size=4)
        print("batches", len(loader), torch.cuda.is_available())
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "batches 2 False"


def test_name_argv_and_script_directory_are_those_of_python_script(tmp_path):
    (tmp_path / "helper_mod.py").write_text("VALUE = 41\n")
    out = run_script(tmp_path, """
        import sys
        import helper_mod
        print(__name__, sys.argv[1:], helper_mod.VALUE + 1, __file__.endswith("script.py"))
        if __name__ == "__main__":
            sys.exit(3)
    """, "--lr", "0.1", "pos")
    assert out.returncode == 3, out.stderr
    assert out.stdout.strip() == "__main__ ['--lr', '0.1', 'pos'] 42 True"


def test_script_named_by_a_relative_path_sees_the_file_python_gives_it(tmp_path):
    # Python makes __main__.__file__ (and so tracebacks and warnings) name the script by its absolute path, while
    # sys.argv[0] keeps the path as typed; scripts build paths from os.path.dirname(__file__).
    (tmp_path / "script.py").write_text("import os, sys\nprint(__file__, sys.argv[0], os.path.dirname(__file__))\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    outs = [subprocess.run([sys.executable, *runner, "script.py"], capture_output=True, text=True, cwd=tmp_path,
                           env=env, timeout=60) for runner in ((), ("-m", "ember.compat"))]
    assert outs[0].returncode == 0 and outs[1].returncode == 0, outs[1].stderr
    assert outs[1].stdout == outs[0].stdout
    assert outs[1].stdout.split()[1] == "script.py" and os.path.isabs(outs[1].stdout.split()[0])


@pytest.mark.parametrize("code,message", [
    ("import torch.quantization", "ModuleNotFoundError: torch.quantization is not implemented in ember"),
    ("import torch\ntorch.quantization.quantize(None)", "torch.quantization is not implemented in ember"),
    ("import torch.nn.functional as F\nF.definitely_missing(1)",
     "torch.nn.functional.definitely_missing is not implemented in ember"),
    ("from torch.utils.data import NoSuchLoader", "torch.utils.data.NoSuchLoader is not implemented in ember"),
    ("import torch\ntorch.cuda.nvtx.range_push('x')", "torch.cuda.nvtx is not implemented in ember"),
])
def test_missing_features_are_named_by_their_torch_name(tmp_path, code, message):
    out = run_script(tmp_path, code)
    assert out.returncode == 1
    assert message in out.stderr, out.stderr


def test_hasattr_still_works_on_aliased_modules(tmp_path):
    out = run_script(tmp_path, """
        import torch, torch.nn.functional as F
        print(hasattr(torch, "compile_me"), hasattr(F, "relu"), hasattr(F, "nope"), hasattr(torch.cuda, "nvtx"),
              hasattr(torch.cuda, "amp"))
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "False", "False", "True"]


def test_usage_and_missing_script(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-m", "ember.compat"], capture_output=True, text=True, env=env)
    assert out.returncode == 2 and "usage: python -m ember.compat script.py" in out.stderr
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(tmp_path / "nope.py")], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 2 and "nope.py" in out.stderr


def test_install_programmatically(tmp_path):
    out = run_script(tmp_path, """
        import ember.compat
        ember.compat.install()
        ember.compat.install()  # idempotent
        import torch, torch.optim as optim
        import ember
        assert torch is ember and optim is ember.optim
        print("ok")
    """, runner=())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_install_refuses_when_real_torch_is_loaded():
    assert sys.modules["torch"] is torch  # the test process uses real torch as the oracle
    import ember.compat

    with pytest.raises(RuntimeError, match="real torch is already imported"):
        ember.compat.install()


# ------------------------------------------------------------------------------------- ember.cuda
def test_cuda_reports_no_device_like_torch_on_a_cpu_machine():
    assert ember.cuda.is_available() is torch.cuda.is_available() is False
    assert ember.cuda.device_count() == torch.cuda.device_count() == 0
    for name, args in (("manual_seed", (0,)), ("manual_seed_all", (0,)), ("seed", ()), ("seed_all", ()),
                       ("empty_cache", ()), ("memory_allocated", ()), ("max_memory_allocated", ()),
                       ("memory_reserved", ()), ("max_memory_reserved", ()), ("get_arch_list", ()),
                       ("get_rng_state_all", ()), ("is_bf16_supported", ())):
        assert getattr(ember.cuda, name)(*args) == getattr(torch.cuda, name)(*args), name
    assert ember.cuda.memory_stats() == dict(torch.cuda.memory_stats()) == {}
    for name in ("current_device", "synchronize", "get_device_name", "get_device_capability", "current_stream",
                 "mem_get_info", "get_rng_state", "ipc_collect"):
        with pytest.raises(AssertionError):  # the type torch raises without CUDA
            getattr(torch.cuda, name)()
        with pytest.raises(AssertionError):
            getattr(ember.cuda, name)()
        with pytest.raises(RuntimeError, match=rf"torch.cuda.{name}\(\) needs a CUDA device.*CPU"):
            getattr(ember.cuda, name)()


def test_cuda_random_is_the_module_of_cudas_generator_functions_as_pytorch():
    """``torch.cuda.random`` (torchattacks seeds through ``torch.cuda.random.manual_seed``): the same functions as
    ``torch.cuda``, answering as PyTorch's without a GPU."""
    import torch.cuda.random

    import ember.cuda.random

    assert ember.cuda.random.__all__ == torch.cuda.random.__all__
    for name in torch.cuda.random.__all__:
        assert getattr(ember.cuda.random, name) is getattr(ember.cuda, name), name
    for name, args in (("manual_seed", (0,)), ("manual_seed_all", (0,)), ("seed", ()), ("seed_all", ()),
                       ("get_rng_state_all", ()), ("set_rng_state_all", ([],))):
        assert getattr(ember.cuda.random, name)(*args) == getattr(torch.cuda.random, name)(*args), name
    for name in ("get_rng_state", "initial_seed"):
        with pytest.raises(AssertionError):  # the type torch raises without CUDA
            getattr(torch.cuda.random, name)()
        with pytest.raises(AssertionError, match=rf"torch.cuda.{name}\(\) needs a CUDA device"):
            getattr(ember.cuda.random, name)()


def test_torch_functional_module_gives_the_top_level_functions(tmp_path):
    """``import torch.functional as F`` (PyTorch's module of Python-written top-level functions, which blitz
    imports): each of its names is the top-level function; one ember lacks, or a name it never had, is an
    AttributeError as PyTorch's."""
    import torch.functional

    import ember.functional

    assert list(ember.functional.TORCH_NAMES) == torch.functional.__all__
    assert ember.functional.__all__ == [n for n in torch.functional.__all__ if hasattr(ember, n)]
    for name in ember.functional.__all__:
        assert getattr(ember.functional, name) is getattr(ember, name), name
    with pytest.raises(AttributeError):
        torch.functional.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="torch.functional.no_such_name is not implemented in ember"):
        ember.functional.no_such_name  # noqa: B018
    out = run_script(tmp_path, """
        import torch
        import torch.functional as F
        from torch.functional import einsum, split
        from torch.functional import *  # noqa: F403
        assert F is torch.functional and einsum is torch.einsum and split is torch.split and meshgrid is torch.meshgrid
        print(F.cdist(torch.zeros(1, 2), torch.ones(1, 2)).item())
        """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(torch.cdist(torch.zeros(1, 2), torch.ones(1, 2)).item())


@pytest.mark.parametrize("name", ["CUDAGraph", "graph", "Stream", "Event"])
def test_cuda_classes_need_a_device_as_pytorch(name):
    args = (None,) if name == "graph" else ()
    with pytest.raises(RuntimeError):
        getattr(torch.cuda, name)(*args)
    with pytest.raises(RuntimeError, match=rf"torch.cuda.{name}\(\) needs a CUDA device"):
        getattr(ember.cuda, name)(*args)


def test_cuda_stream_context_of_no_stream_as_pytorch():
    for m in (torch, ember):
        with m.cuda.StreamContext(None), m.cuda.stream(None):
            pass
    with pytest.raises(RuntimeError, match="needs a CUDA device"), ember.cuda.stream(object()):
        pass


def test_dynamo_names_answer_as_outside_compilation():
    import torch._dynamo
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as TorchTransform

    import ember._dynamo
    from ember._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

    assert ember._dynamo.is_compiling() is torch._dynamo.is_compiling() is False
    f = ember._dynamo.disable(lambda x: x + 1)
    assert f(1) == 2 and ember._dynamo.assume_constant_result(f) is f
    assert ember._dynamo.allow_in_graph(f) is f
    values = np.arange(12.0).reshape(3, 4)
    e, t = ember.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    with TransformGetItemToIndex():  # a 0-d integer-tensor index selects as in PyTorch, gradients too
        out_e = e[ember.tensor(1), ember.tensor(2)] + e[ember.tensor(2)].sum()
    with TorchTransform():
        out_t = t[torch.tensor(1), torch.tensor(2)] + t[torch.tensor(2)].sum()
    out_e.backward()
    out_t.backward()
    assert out_e.item() == out_t.item()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("make", [
    lambda: ember.zeros(2, device="cuda"),
    lambda: ember.tensor([1.0], device="cuda:0"),
    lambda: ember.ones(2).to("cuda"),
    lambda: ember.ones(2).to(ember.device("cuda")),
    lambda: ember.ones(2).cuda(),
])
def test_cuda_tensors_are_a_clear_runtime_error(make):
    with pytest.raises(RuntimeError, match="ember computes on the CPU"):
        make()


def test_cuda_missing_attributes_name_the_torch_feature():
    with pytest.raises(AttributeError, match="torch.cuda.nvtx is not implemented in ember"):
        ember.cuda.nvtx.range_push("x")


# ------------------------------------------------------------------------------- -m / -c, like python's
PROBE = "import sys, os, torch, ember; print(__name__, sys.argv, repr(sys.path[0]), torch is ember)"


def run_python(tmp_path, *argv):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)


def test_dash_m_runs_a_module_as_python_does(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(PROBE.replace("import sys, os, torch, ember; ", "import sys, os\n"
                                                             "torch = ember = sys.modules.get('torch', 0)\n"))
    plain = run_python(tmp_path, "-m", "pkg.train", "--lr", "0.1")
    (tmp_path / "pkg" / "train.py").write_text(PROBE)
    compat = run_python(tmp_path, "-m", "ember.compat", "-m", "pkg.train", "--lr", "0.1")
    assert plain.returncode == compat.returncode == 0, compat.stderr
    assert compat.stdout == plain.stdout  # __main__, argv (the module's file first), sys.path[0] = cwd, torch is ember
    assert str(tmp_path / "pkg" / "train.py") in compat.stdout


def test_dash_c_runs_code_as_python_does(tmp_path):
    plain = run_python(tmp_path, "-c", PROBE.replace("torch, ember", "types").replace("torch is ember", "True"),
                       "x", "--y")
    compat = run_python(tmp_path, "-m", "ember.compat", "-c", PROBE, "x", "--y")
    assert plain.returncode == compat.returncode == 0, compat.stderr
    assert compat.stdout == plain.stdout == "__main__ ['-c', 'x', '--y'] '' True\n"
    out = run_python(tmp_path, "-m", "ember.compat", "-c", "import sys; sys.exit(4)")
    assert out.returncode == 4
    out = run_python(tmp_path, "-m", "ember.compat", "-c", "from torch.nn import NoSuchLayer")
    assert out.returncode == 1 and "torch.nn.NoSuchLayer is not implemented in ember" in out.stderr


FAILING = "import torch\ndef f():\n    return torch.ones(2) @ torch.ones(3)\nf()\n"


@pytest.mark.parametrize("form", ["script", "-m", "-c"])
def test_an_uncaught_error_is_reported_from_the_program_on_as_python_does(tmp_path, form):
    """The traceback starts at the program's first frame, as under `python script.py`: the runner's frames
    (ember/compat.py, runpy) above it are not the program's."""
    (tmp_path / "failing.py").write_text(FAILING)
    argv = {"script": ["failing.py"], "-m": ["-m", "failing"], "-c": ["-c", FAILING]}[form]
    out = run_python(tmp_path, "-m", "ember.compat", *argv)
    assert out.returncode == 1, out.stderr  # an uncaught exception's exit status, as Python's
    where = {"script": f'"{tmp_path / "failing.py"}"', "-m": f'"{tmp_path / "failing.py"}"', "-c": '"<string>"'}[form]
    lines = out.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[1] == f"  File {where}, line 4, in <module>", \
        out.stderr
    assert "compat.py" not in out.stderr and "runpy" not in out.stderr, out.stderr
    assert lines[-1].startswith("RuntimeError: mat1 and mat2 shapes cannot be multiplied"), out.stderr


def test_a_program_in_a_folder_named_like_runpy_keeps_its_frames(tmp_path):
    """Only runpy's own frames are the runner's: a program whose path merely contains "runpy" is reported from
    its first frame on."""
    folder = tmp_path / "runpy_experiments"
    folder.mkdir()
    (folder / "failing.py").write_text(FAILING)
    out = run_python(folder, "-m", "ember.compat", "failing.py")
    lines = out.stderr.splitlines()
    assert out.returncode == 1 and lines[1] == f'  File "{folder / "failing.py"}", line 4, in <module>', out.stderr


@pytest.mark.parametrize("module", ["nosuch", "nosuch.sub"])
def test_dash_m_of_a_missing_module_says_so_in_one_line_as_python_does(tmp_path, module):
    out = run_python(tmp_path, "-m", "ember.compat", "-m", module)
    assert out.returncode == 1 and out.stderr == f"{sys.executable}: No module named {module}\n", out.stderr


def test_a_library_ember_cannot_run_is_reported_at_the_programs_import(tmp_path):
    out = run_script(tmp_path, "import torch\nimport torchaudio\n")
    assert out.returncode == 1
    assert out.stderr.splitlines()[1:3] == [f'  File "{tmp_path / "script.py"}", line 2, in <module>',
                                            "    import torchaudio"], out.stderr


@pytest.mark.parametrize("argv", [["-m"], ["-c"]])
def test_dash_m_and_dash_c_need_an_argument(tmp_path, argv):
    out = run_python(tmp_path, "-m", "ember.compat", *argv)
    assert out.returncode == 2 and "argument expected" in out.stderr and "usage:" in out.stderr


# --------------------------------------------------------------------------------- version under compat
def test_torch_version_under_compat_is_pytorch_style(tmp_path):
    out = run_script(tmp_path, """
        import torch, torch.version
        from packaging.version import Version
        v = torch.__version__
        print(v, torch.version.__version__ == v, torch.version.cuda, Version(v) >= Version("2.0"),
              v >= "2.9", v >= (2, 13), v < "2.14", Version(v).local)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [f"{torch.__version__.split('+')[0]}+ember{ember.version.EMBER_VERSION}", "True",
                                  "None", "True", "True", "True", "True", f"ember{ember.version.EMBER_VERSION}"]
    assert ember.__version__ == ember.version.EMBER_VERSION  # outside compat, ember's own version


# ---------------------------------------------------------------------------- libraries built on torch
@pytest.mark.parametrize("statement,library,hint", [
    ("import torchaudio", "torchaudio", "NumPy"),
    ("import torchtext.data", "torchtext", "Embedding"),
    ("import flash_attn", "flash_attn", "scaled_dot_product_attention"),
    ("from torch_scatter import scatter_add", "torch_scatter", "scatter_add_"),
])
def test_libraries_with_compiled_torch_extensions_say_what_ember_offers(tmp_path, statement, library, hint):
    out = run_script(tmp_path, statement)
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ModuleNotFoundError: {library} cannot run on ember") and hint in last, out.stderr


def test_optional_imports_of_torch_libraries_fall_back(tmp_path):
    out = run_script(tmp_path, """
        try:
            import torchaudio
        except ImportError as e:
            torchaudio = None
            print(type(e).__name__, e.name)
        import numpy, json  # other packages import as usual
        print(torchaudio)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ModuleNotFoundError", "torchaudio", "None"]


# ------------------------------------------------------------------------ multiprocessing under compat
def test_spawned_children_import_torch_as_ember(tmp_path):
    out = run_script(tmp_path, """
        import torch
        import torch.multiprocessing as mp

        def work(rank, queue):
            import ember
            queue.put((rank, torch is ember, torch.ones(2).sum().item()))

        if __name__ == "__main__":
            queue = mp.get_context("spawn").SimpleQueue()
            mp.spawn(work, args=(queue,), nprocs=2)
            print(sorted(queue.get() for _ in range(2)))
    """, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[(0, True, 2.0), (1, True, 2.0)]"


def test_python_children_started_with_subprocess_import_torch_as_ember(tmp_path):
    """A launcher that runs the script again once per rank (``subprocess`` with ``sys.executable`` and the script's
    own ``sys.argv``, as Lightning's DDP does) starts ranks that run on ember too, not PyTorch ranks waiting for a
    rendezvous that ember's rank never joins."""
    out = run_script(tmp_path, """
        import os, subprocess, sys
        import torch

        if len(sys.argv) > 1:  # the relaunched child
            import ember
            print("child", torch is ember, os.path.dirname(os.path.dirname(ember.__file__)), torch.ones(2).sum().item())
        else:
            print("parent", torch is __import__("ember"))
            sys.stdout.flush()
            subprocess.run([sys.executable, *sys.argv, "child"], check=True)
    """, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["parent", "True", "child", "True", ROOT, "2.0"]


def test_children_keep_the_current_folder_an_empty_pythonpath_entry_gives(monkeypatch):
    """An empty entry in the program's ``PYTHONPATH`` puts a Python child's current folder on its path; the runner
    puts the torch stand-in in front of the entries, keeps them all, that one included, in their order, and ember's
    folder after them (where the program named it already, it stays there)."""
    import ember.compat as compat

    monkeypatch.setattr(sys, "path", list(sys.path))
    for given, kept in ((":/elsewhere", ["", "/elsewhere"]), ("/elsewhere:", ["/elsewhere", ""]), ("", []),
                        (f"{ROOT}:/elsewhere", [ROOT, "/elsewhere"])):
        monkeypatch.setenv("PYTHONPATH", given)
        compat._install_for_children()
        assert os.environ["PYTHONPATH"].split(os.pathsep) == [compat._SHIM, *kept, *([] if ROOT in kept else [ROOT])]


def test_children_import_the_modules_the_user_put_on_pythonpath_before_embers_folder(tmp_path):
    """ember installed in a folder of other modules (site-packages) and a module of the same name in a folder the
    user put on ``PYTHONPATH``: a Python child the program starts imports the user's, as the program itself does
    (ember's folder goes after the user's entries, not in front of them)."""
    site, user = tmp_path / "site", tmp_path / "user"
    site.mkdir()
    user.mkdir()
    (site / "ember").symlink_to(os.path.join(ROOT, "ember"), target_is_directory=True)
    (site / "helpers.py").write_text("WHOSE = 'site-packages'\n")
    (user / "helpers.py").write_text("WHOSE = 'user'\n")
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import subprocess, sys
        import torch
        import helpers

        print(sys.argv[-1], helpers.WHOSE, torch.ones(2).sum().item())
        if sys.argv[-1] == "parent":
            sys.stdout.flush()
            subprocess.run([sys.executable, sys.argv[0], "child"], check=True)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(user), str(site)]))
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script), "parent"], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["parent", "user", "2.0", "child", "user", "2.0"]


def test_availability_probes_see_compiled_torch_libraries_as_absent(tmp_path):
    # transformers and others probe with importlib.util.find_spec: the answer must be "not installed", not an error
    out = run_script(tmp_path, """
        import importlib.util
        print(importlib.util.find_spec("torchaudio"), importlib.util.find_spec("xformers"))
        print(importlib.util.find_spec("json") is not None)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "None", "True"]


def test_pure_python_libraries_on_the_torch_api_are_not_refused(tmp_path):
    einops = pytest.importorskip("einops")
    out = run_script(tmp_path, """
        import torch
        from einops import rearrange
        from einops.layers.torch import Rearrange
        x = torch.arange(24.0).reshape(2, 3, 4)
        print(rearrange(x, "b c n -> b n c").shape == (2, 4, 3), Rearrange("b c n -> b (c n)")(x).shape[1])
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "12"]
    assert einops.__name__ == "einops"


LEAF_IN_PLACE = """
import torch
w = torch.zeros(3, requires_grad=True)
for update in (lambda: w.add_(1.0), lambda: w[:2].mul_(2), lambda: w.__setitem__(0, 5.0)):
    try:
        update()
    except RuntimeError as e:
        print(type(e).__name__, "|", e)
"""


def test_leaf_in_place_error_is_torch_message(tmp_path):
    # PyTorch's RuntimeError and message, word for word, in a torch program run by ember.compat and under ember's
    # own name (no advice of ember's own appended)
    expected = subprocess.run([sys.executable, "-c", LEAF_IN_PLACE], capture_output=True, text=True, timeout=120)
    ours = run_script(tmp_path, LEAF_IN_PLACE)
    assert ours.returncode == 0, ours.stderr
    assert len(expected.stdout.splitlines()) == 3, expected.stdout
    assert ours.stdout == expected.stdout
    native = subprocess.run([sys.executable, "-c", LEAF_IN_PLACE.replace("import torch", "import ember as torch")],
                            capture_output=True, text=True, cwd=ROOT, timeout=120,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    assert native.stdout == expected.stdout, native.stdout + native.stderr


def test_torch_ops_imported_from_its_defining_module():
    """``from torch._ops import ops`` (DLRM imports PyTorch's operator namespaces so) gives ``torch.ops``."""
    import importlib

    import torch._ops

    assert torch._ops.ops is torch.ops
    ops_module = importlib.import_module("ember._ops")
    assert ops_module.ops is ember.ops and ember._ops is ops_module
    assert ops_module.ops.aten._foreach_add is not None


def test_legacy_autograd_profiler_takes_enabled_positionally():
    """PyTorch's ``torch.autograd.profiler.profile`` is the legacy profiler, whose ``enabled`` is its first positional
    argument (DLRM: ``profile(args.enable_profiling, use_cuda=..., record_shapes=True)``); ``torch.profiler.profile``
    takes keywords only."""
    import torch.autograd.profiler

    with torch.autograd.profiler.profile(False, use_cuda=False, record_shapes=True):
        pass
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.profiler.profile(False)
    for lib in (torch, ember):  # a disabled legacy profiler's ``with ... as prof`` binds None
        disabled = lib.autograd.profiler.profile(False, use_cuda=False, record_shapes=True)
        with disabled as prof:
            pass
        assert prof is None and not disabled.enabled
    with ember.autograd.profiler.profile(True, use_cuda=False) as prof:
        with ember.autograd.profiler.record_function("step"):
            ember.ones(3).sum()
    assert "step" in [row[0] for row in prof.key_averages()]
    for lib in (torch, ember):  # a keyword neither profiler knows is PyTorch's TypeError
        with pytest.raises(TypeError):
            lib.autograd.profiler.profile(False, use_gpu=True)


def test_anomaly_modes_forward_traceback_starts_at_the_program_as_under_python(tmp_path):
    """Anomaly mode's warning shows the traceback of the forward call that made the failing op: under the compat
    runner, as under ``python script.py``, it starts at the program's first frame, not at runpy's and the runner's."""
    source = """
        import torch
        x = torch.zeros(2, requires_grad=True)
        with torch.autograd.detect_anomaly():
            y = x / x
            try:
                y.sum().backward()
            except RuntimeError as e:
                print(e)
    """
    outs = [run_script(tmp_path, source, runner=runner) for runner in ((), ("-m", "ember.compat"))]
    assert [out.returncode for out in outs] == [0, 0], outs[1].stderr
    assert outs[1].stdout == outs[0].stdout == "Function 'DivBackward0' returned nan values in its 1th output.\n"
    traces = [out.stderr.split("Traceback of forward call that caused the error:\n")[1].splitlines()[:2]
              for out in outs]
    script = tmp_path / "script.py"
    assert traces[1] == traces[0] == [f'  File "{script}", line 5, in <module>', "    y = x / x"], outs[1].stderr
