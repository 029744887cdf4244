"""ember's warnings name the module PyTorch's name, so the filters programs write by module silence them as they
silence PyTorch's (``warnings.filterwarnings("ignore", module="torch")``, ``-W ignore::UserWarning:torch.nn.functional``):
where PyTorch's Python code issues a warning from a frame of its own (its stacklevel stops short of the caller, or
a decorator's wrapper stands between), ember's names that PyTorch module; where PyTorch's names the caller's
line, ember's names the caller's module. Either way ember's points at the caller's line (ember has no frame of
PyTorch's to point at), but for ``nn.utils.weight_norm``'s, which PyTorch's ``@deprecated`` issues from its own
``weight_norm``, so that it shows once per process: ember's from its own module of that name. Each call runs under torch and under ember; the module each warning is attributed to is
read by a filter whose module pattern records what it is matched against."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import pytest
import test_warnings_match
import torch
from test_warnings_match import ONCE, WARNS

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
F = lambda m: m.nn.functional  # noqa: E731


class ModuleSpy:
    """A warnings-filter module pattern that records each warning's module and matches none (the filters after
    it decide)."""

    def __init__(self):
        self.modules = []

    def match(self, module):
        self.modules.append(module)
        return False


def attributed(lib, call):
    """[(category, module, filename)] of the warnings ``call(lib)`` gives."""
    spy = ModuleSpy()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        warnings.filters.insert(0, ("always", None, Warning, spy, 0))
        try:
            call(lib)
        except Exception:  # noqa: BLE001, S110 - the warnings before an error count as well
            pass
    assert len(spy.modules) == len(record)
    return [(w.category, module, w.filename) for w, module in zip(record, spy.modules)]


def checkpointed(m, **kw):
    return m.utils.checkpoint.checkpoint(lambda x: x * 2, m.ones(2, requires_grad=True), **kw)


def checkpoint_sequential(m):
    seq = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.Linear(2, 2))
    return m.utils.checkpoint.checkpoint_sequential(seq, 2, m.ones(1, 2, requires_grad=True))


def backward_hook_on_dict_output(m):
    class Dict(m.nn.Module):
        def forward(self, x):
            return {"a": x * 2}

    module = Dict()
    module.register_full_backward_hook(lambda *a: None)
    module(m.ones(2, requires_grad=True))


def failing_always_called_hook(m):
    def hook(*a):
        raise RuntimeError("hook")

    layer = m.nn.Linear(2, 2)
    layer.register_forward_hook(hook, always_call=True)
    layer(m.ones(3))  # the forward's shape error is raised; the hook's is a warning


def legacy_backward_hook(m):
    net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.ReLU())
    net.register_backward_hook(lambda *a: None)
    net(m.ones(1, 2, requires_grad=True)).sum().backward()


def ambiguous_kl(m):
    class A(m.distributions.Normal):
        pass

    class B(m.distributions.Normal):
        pass

    m.distributions.kl.register_kl(A, m.distributions.Normal)(lambda p, q: 0)
    m.distributions.kl.register_kl(m.distributions.Normal, B)(lambda p, q: 0)
    m.distributions.kl.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))


# functions of another module (as a library's code calling a module's forward), for the cases whose warning names
# the frame above the one that called ember
ELSEWHERE = {"__name__": "calling_module"}
exec(textwrap.dedent("""
    def forward(module, x):
        return module.forward(x)

    def softmax(functional, x):
        return functional.softmax(x, _stacklevel=4)
"""), ELSEWHERE)

MORE = {
    "checkpoint without use_reentrant": checkpointed,
    "checkpoint of no input requiring grad": lambda m: m.utils.checkpoint.checkpoint(
        lambda x: x * 2, m.ones(2), use_reentrant=True),
    "checkpoint_sequential without use_reentrant": checkpoint_sequential,
    "l1_loss reduce": lambda m: F(m).l1_loss(m.ones(3), m.ones(3), reduce=False),
    "kl_div size_average": lambda m: F(m).kl_div(m.ones(2, 3), m.ones(2, 3), size_average=False),
    "poisson_nll_loss size_average": lambda m: F(m).poisson_nll_loss(m.ones(2), m.ones(2), size_average=False),
    "binary_cross_entropy reduce": lambda m: F(m).binary_cross_entropy(m.ones(2) / 2, m.ones(2), reduce=False),
    "SmoothL1Loss size_average": lambda m: m.nn.SmoothL1Loss(size_average=False),
    "Dropout2d of a 3-D input": lambda m: m.nn.Dropout2d()(m.ones(2, 3, 4)),
    "dropout2d of a 3-D input": lambda m: F(m).dropout2d(m.ones(2, 3, 4)),
    "Dropout2d of a 1-D input": lambda m: m.nn.Dropout2d()(m.ones(3)),
    "InstanceNorm1d of other features": lambda m: m.nn.InstanceNorm1d(3)(m.ones(2, 4, 5)),
    "cov with no degree of freedom": lambda m: m.cov(m.ones(1, 1)),
    "backward hook on a dict output": backward_hook_on_dict_output,
    "always-called forward hook failing": failing_always_called_hook,
    "non-full backward hook": legacy_backward_hook,
    "ambiguous kl_divergence": ambiguous_kl,
    "sdp_kernel": lambda m: m.backends.cuda.sdp_kernel(),
    "pin_memory with a device": lambda m: m.ones(2).pin_memory("cpu"),
    "is_pinned with a device": lambda m: m.ones(2).is_pinned("cpu"),
    "SWALR get_lr outside step": lambda m: m.optim.swa_utils.SWALR(
        m.optim.SGD([m.nn.Parameter(m.ones(2))], lr=0.1), swa_lr=0.05).get_lr(),
    "DataLoader pin_memory_device": lambda m: list(m.utils.data.DataLoader([m.ones(2)], pin_memory=True,
                                                                          pin_memory_device="cpu")),
    "gradcheck of a float32 input": lambda m: m.autograd.gradcheck(lambda x: x * 2, (m.ones(2, requires_grad=True),)),
    # PyTorch's modules pass _stacklevel=5: a forward called directly names the caller's caller (the case's
    # lambda, in this module), not the line that called forward (in another module)
    "nn.Softmax forward called directly": lambda m: ELSEWHERE["forward"](m.nn.Softmax(), m.ones(2, 3)),
    "nn.LogSoftmax forward called directly": lambda m: ELSEWHERE["forward"](m.nn.LogSoftmax(), m.ones(2, 3)),
    "nn.Softmin forward called directly": lambda m: ELSEWHERE["forward"](m.nn.Softmin(), m.ones(2, 3)),
    "F.softmax _stacklevel=4": lambda m: ELSEWHERE["softmax"](F(m), m.ones(2, 3)),
    # vmap's slow path names the vmapped function's line that called the op (its stacklevel=4 named one of ember's
    # frames, _patching.py or _batched.py, which one depending on how deep the op's dispatch is)
    "set_float32_matmul_precision of an unknown value": lambda m: m.set_float32_matmul_precision("fastest"),
    "vmap of histc": lambda m: m.vmap(lambda x: m.histc(x))(m.arange(18.0).reshape(2, 3, 3)),
    "vmap of renorm": lambda m: m.vmap(lambda x: m.renorm(x, 2, 0, 1.0))(m.arange(18.0).reshape(2, 3, 3)),
    "vmap of take": lambda m: m.vmap(lambda x: m.take(x, m.tensor([0, 1])))(m.arange(18.0).reshape(2, 3, 3)),
    "vmap of Tensor.put": lambda m: m.vmap(lambda x: x.put(m.tensor([0]), m.tensor([1.0])))(
        m.arange(18.0).reshape(2, 3, 3)),
}


@pytest.mark.parametrize("call", [*WARNS.values(), *MORE.values()], ids=[*WARNS, *MORE])
def test_module_as_torch(call):
    expected, got = attributed(torch, call), attributed(ember, call)
    assert expected, "PyTorch gave no warning: the case tests nothing"
    assert [w[:2] for w in got] == [w[:2] for w in expected]
    callers = (__file__, test_warnings_match.__file__)  # the files the calls are written in
    assert all(test_warnings_match.points_where_pytorch_does(g[2], e[2], callers) for g, e in zip(got, expected)), \
        "a warning not attributed to the caller's line"


ONCE_SCRIPT = """
import json, warnings
import {lib} as m


class Spy:
    def __init__(self):
        self.modules = []

    def match(self, module):
        self.modules.append(module)
        return False


results = {{}}
for name, call in {{{calls}}}.items():
    spy = Spy()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        warnings.filters.insert(0, ("always", None, Warning, spy, 0))
        call(m)
    results[name] = [(w.category.__name__, module) for w, module in zip(record, spy.modules)]
print(json.dumps(results))
"""
ONCE_CALLS = {**{name: ONCE[name] for name in ["meshgrid without indexing", "set_default_tensor_type", "lu",
                                                "stft without a window", "stft return_complex=False",
                                                "T of a 3-D tensor"]},
              "Tensor.lu": "m.eye(2).lu()"}
# each group in a fresh process: torch.lu and Tensor.lu share their once-per-process warning
ONCE_GROUPS = [[name for name in ONCE_CALLS if name != "Tensor.lu"], ["Tensor.lu"]]
ONCE_CASES = list(ONCE_CALLS)


@pytest.fixture(scope="module")
def once_modules(tmp_path_factory):
    """{lib: {case: [(category, module)]}} of the first call of each case in a fresh process."""
    seen = {"torch": {}, "ember": {}}
    for group in ONCE_GROUPS:
        calls = ", ".join(f"{name!r}: lambda m: {ONCE_CALLS[name]}" for name in group)
        for lib in ("torch", "ember"):
            script = tmp_path_factory.mktemp("once") / f"with_{lib}.py"
            script.write_text(ONCE_SCRIPT.format(lib=lib, calls=calls))
            out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                                 env=dict(os.environ, PYTHONPATH=ROOT))
            assert out.returncode == 0, out.stderr
            seen[lib].update(json.loads(out.stdout))
    return seen


@pytest.mark.parametrize("name", ONCE_CASES)
def test_once_per_process_module_as_torch(once_modules, name):
    """PyTorch's C++ once-per-process warnings name the module of the PyTorch Python function that called its
    core (torch.functional's stft, lu, meshgrid; torch._tensor's Tensor.lu), or the caller's when it is called
    straight."""
    assert once_modules["torch"][name], "PyTorch gave no warning: the case tests nothing"
    assert once_modules["ember"][name] == once_modules["torch"][name]


PROGRAM = """
import warnings
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

warnings.simplefilter("error")
{filters}
torch.nn.MSELoss(size_average=False)
F.mse_loss(torch.ones(2), torch.ones(2), reduce=False)
F.kl_div(torch.ones(2), torch.ones(2), size_average=False, reduction="sum")
checkpoint(lambda x: x * 2, torch.ones(2, requires_grad=True))
print("silenced")
"""

FILTERS = {
    "module='torch'": ["warnings.filterwarnings('ignore', module='torch')"],
    "each module": [f"warnings.filterwarnings('ignore', category=UserWarning, module={m!r} + chr(92) + 'Z')"
                    for m in ("torch.nn.modules.loss", "torch.nn.functional", "torch.nn._reduction",
                              "torch._dynamo.eval_frame")],
}


@pytest.mark.parametrize("filters", FILTERS.values(), ids=FILTERS.keys())
@pytest.mark.parametrize("runner", ["python", "ember.compat"])
def test_filters_for_torch_silence_the_loss_and_checkpoint_warnings(tmp_path, filters, runner):
    """A PyTorch program that turns warnings into errors but ignores PyTorch's own by module runs through, under
    PyTorch and under ``python -m ember.compat``; without the filters it fails at the first warning in both."""
    for with_filters in (True, False):
        script = tmp_path / "program.py"
        script.write_text(PROGRAM.format(filters="\n".join(filters) if with_filters else ""))
        prefix = [sys.executable] if runner == "python" else [sys.executable, "-m", "ember.compat"]
        out = subprocess.run([*prefix, str(script)], capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, PYTHONPATH=ROOT))
        if with_filters:
            assert out.returncode == 0 and out.stdout.strip() == "silenced", out.stderr
        else:
            assert out.returncode != 0 and "size_average and reduce args will be deprecated" in out.stderr


def test_command_line_filter_by_module(tmp_path):
    """``-W ignore::UserWarning:torch.utils...``-style options name the module exactly (no prefix match)."""
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent("""
        import torch
        from torch.utils.checkpoint import checkpoint
        torch.nn.CrossEntropyLoss(reduce=False)
        checkpoint(lambda x: x * 2, torch.ones(2, requires_grad=True))
        print("silenced")
    """))
    options = ["-W", "error", "-W", "ignore::UserWarning:torch.nn.modules.loss",
               "-W", "ignore::UserWarning:torch._dynamo.eval_frame"]
    for prefix in ([], ["-m", "ember.compat"]):
        out = subprocess.run([sys.executable, *options, *prefix, str(script)], capture_output=True, text=True,
                             timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
        assert out.returncode == 0 and out.stdout.strip() == "silenced", (prefix, out.stderr)


EPOCHS = """
import sys
import torch
import torch.nn.functional as F

ds = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,)))
loader = torch.utils.data.DataLoader(ds, batch_size=8, pin_memory=True)
model = torch.nn.Sequential(torch.nn.Conv1d(1, 2, 3, padding=1), torch.nn.Flatten(), torch.nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
before = "scipy" in sys.modules
for epoch in range(3):
    for x, y in loader:
        loss = F.cross_entropy(model(x[:, None]), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
print(before, "scipy" in sys.modules)
"""


def test_a_warning_shown_once_per_line_stays_shown_once_across_ember_lazy_imports(tmp_path):
    """Python's default filter shows a warning once per line, until the filters change: SciPy adds one as it is
    imported, and numba imports SciPy on ember's first compiled kernel, mid-epoch; numba's compiler enters and
    leaves ``catch_warnings`` for each kernel it compiles (a cold cache: a fresh clone's first run, here an empty
    NUMBA_CACHE_DIR). The DataLoader's pin_memory warning (each epoch, at the same line) shows once, as under
    PyTorch."""
    pytest.importorskip("scipy")
    script = tmp_path / "epochs.py"
    script.write_text(EPOCHS)
    counts = {}
    for runner in (["-m", "ember.compat"], []):
        out = subprocess.run([sys.executable, *runner, str(script)], capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, PYTHONPATH=ROOT, NUMBA_CACHE_DIR=str(tmp_path / "numba")))
        assert out.returncode == 0, out.stderr
        counts[bool(runner)] = out.stderr.count("'pin_memory' argument is set as true")
        if runner:
            assert out.stdout.split() == ["False", "True"], "SciPy was not imported mid-run: the case tests nothing"
    assert counts[True] == counts[False] == 1


def test_keeping_registries():
    """Within ``keeping_registries``, a filter added does not make a warning shown once per line show again;
    outside, it does (Python's own behaviour, which programs' filter changes keep)."""
    from ember._warnings import keeping_registries

    def shown(keep: bool) -> int:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("default")
            for _ in range(2):
                warnings.warn("shown once per line", UserWarning, stacklevel=1)  # (one line: the registry key)
                if keep:
                    with keeping_registries():
                        warnings.filterwarnings("ignore", message="another message")
                else:
                    warnings.filterwarnings("ignore", message="another message")
        return len(record)

    assert shown(keep=True) == 1
    assert shown(keep=False) == 2


def test_keeping_registries_entered_by_threads_and_left_in_any_order():
    """ember's pool compiles kernels on several threads, each within ``keeping_registries``: whatever the order in
    which they leave it, the warnings module's own hooks are back after the last (a thread that had saved another's
    stand-in restored it, and a later test saw no warning shown again after a filter change)."""
    from ember._warnings import keeping_registries

    module = sys.modules[warnings.filterwarnings.__module__]
    names = [n for n in ("_filters_mutated", "_filters_mutated_lock_held") if hasattr(module, n)]
    originals = {n: getattr(module, n) for n in names}
    first, second = keeping_registries(), keeping_registries()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert all(getattr(module, n) is not originals[n] for n in names)  # (still held by the second)
    second.__exit__(None, None, None)
    assert {n: getattr(module, n) for n in names} == originals

    entered, leave = threading.Barrier(4), threading.Event()

    def hold():
        with keeping_registries():
            entered.wait(timeout=30)
            leave.wait(timeout=30)

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for t in threads:
        t.start()
    entered.wait(timeout=30)
    leave.set()
    for t in threads:
        t.join(timeout=30)
    assert {n: getattr(module, n) for n in names} == originals


def test_weight_norms_warning_comes_from_the_librarys_own_frame_as_pytorchs():
    # PyTorch's WeightNorm.apply is wrapped by @deprecated, which names apply's caller: its own weight_norm, so the
    # default filter shows the warning once per process however many lines call weight_norm. ember's named the
    # program's line: once per call site. Called directly, apply's warning names the program's line in both.
    def shown(lib):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("default")
            lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))
            lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))  # another line
            sys.modules[f"{lib.__name__}.nn.utils.weight_norm"].WeightNorm.apply(lib.nn.Linear(2, 2), "weight", 0)
        package = os.path.dirname(lib.__file__)
        return [(w.category, os.path.basename(w.filename), w.filename.startswith(package)) for w in record]

    assert shown(torch) == shown(ember) == [(FutureWarning, "weight_norm.py", True),
                                            (FutureWarning, os.path.basename(__file__), False)]
    call = lambda m: m.nn.utils.weight_norm(m.nn.Linear(2, 2))  # noqa: E731
    assert [a[:2] for a in attributed(ember, call)] == [a[:2] for a in attributed(torch, call)] == \
        [(FutureWarning, "torch.nn.utils.weight_norm")]
