"""Modules programs import and often never use: backends, accelerator, onnx, multiprocessing, tensorboard,
cpu, version, and the bfloat16 dtype; each answers as torch does on a CPU-only machine."""

import operator
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import packaging.version
import pytest
import torch
from conftest import ROOT

import ember
import ember.backends.cudnn
import ember.multiprocessing as emp
import ember.version


def test_backend_flags_have_torch_defaults_and_keep_what_is_set():
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(ember.backends.cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert ember.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    assert ember.backends.cuda.flash_sdp_enabled() == torch.backends.cuda.flash_sdp_enabled()
    for module in ("cudnn", "mps"):
        assert getattr(ember.backends, module).is_available() == getattr(torch.backends, module).is_available()
    assert ember.backends.cudnn.version() is torch.backends.cudnn.version() is None
    assert ember.backends.mps.is_built() is False and ember.backends.cuda.is_built() is False
    for module in ("mkldnn", "mkl", "openmp"):  # ember uses none of them (torch's CPU build does)
        assert getattr(ember.backends, module).is_available() is False
    saved = ember.backends.cudnn.benchmark, ember.backends.cuda.matmul.allow_tf32
    try:
        ember.backends.cudnn.benchmark = True
        ember.backends.cuda.matmul.allow_tf32 = True
        assert ember.backends.cudnn.benchmark and ember.backends.cuda.matmul.allow_tf32
        with ember.backends.cudnn.flags(enabled=False, deterministic=True):
            assert not ember.backends.cudnn.enabled and ember.backends.cudnn.deterministic
        assert ember.backends.cudnn.enabled and ember.backends.cudnn.benchmark
    finally:
        ember.backends.cudnn.benchmark, ember.backends.cuda.matmul.allow_tf32 = saved


def test_accelerator_answers_as_torch_without_one():
    for lib in (torch, ember):
        assert lib.accelerator.is_available() is False
        assert lib.accelerator.current_accelerator() is None
        assert lib.accelerator.device_count() == 0
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            lib.accelerator.current_device_index()
        with lib.accelerator.device_index(None):  # no switch asked for: nothing to do
            pass
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"), lib.accelerator.device_index(0):
            pass


def test_cpu_module_answers_as_torch():
    for name in ("is_available", "device_count", "current_device"):
        assert getattr(ember.cpu, name)() == getattr(torch.cpu, name)(), name
    ember.cpu.synchronize()


def test_onnx_export_is_a_clear_error():
    assert ember.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="torch.onnx.export is not implemented in ember"):
        ember.onnx.export(ember.nn.Linear(2, 2), (ember.ones(1, 2),), "model.onnx")


def test_multiprocessing_is_pythons_plus_spawn():
    import multiprocessing

    for name in ("Process", "Queue", "get_context", "set_start_method", "get_start_method", "cpu_count", "Pool"):
        assert getattr(emp, name) is getattr(multiprocessing, name), name
        assert hasattr(torch.multiprocessing, name)
    assert emp.get_sharing_strategy() == "file_descriptor"


def _square_into(i, queue):  # module level, so spawned children can import it
    queue.put((i, i * i))


def _fail_on_one(i):
    if i == 1:
        raise ValueError("rank one fails")


@pytest.mark.parametrize("start_method", ["spawn", "fork"])
def test_spawn_runs_fn_with_the_index_in_each_process(start_method):
    queue = emp.get_context(start_method).SimpleQueue()
    assert emp.spawn(_square_into, args=(queue,), nprocs=3, start_method=start_method) is None
    assert sorted(queue.get() for _ in range(3)) == [(0, 0), (1, 1), (2, 4)]


def test_spawn_reraises_a_child_exception_like_torch():
    with pytest.raises(emp.ProcessRaisedException, match="(?s)Process 1 terminated with the following error.*"
                                                          "ValueError: rank one fails") as info:
        emp.spawn(_fail_on_one, nprocs=2, start_method="fork")
    assert info.value.error_index == 1
    context = emp.spawn(_square_into, args=(emp.get_context("fork").SimpleQueue(),), nprocs=2, join=False,
                        start_method="fork")
    assert isinstance(context, emp.ProcessContext) and len(context.pids()) == 2
    while not context.join():
        pass


def test_bfloat16_holds_tensors_and_complex32_is_named_only():
    assert ember.bfloat16.is_floating_point and ember.bfloat16.itemsize == torch.bfloat16.itemsize
    assert repr(ember.bfloat16) == "ember.bfloat16" and ember.bfloat16 is not ember.float16
    assert ember.zeros(2, dtype=ember.bfloat16).dtype == ember.bfloat16  # tests/test_bfloat16.py: the rest
    with pytest.raises(TypeError, match="ember has no complex32 tensors.*use ember.complex64"):
        ember.zeros(2, dtype=ember.complex32)
    assert ember.float16 is ember.half and ember.zeros(1, dtype=ember.half).dtype == ember.float16


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                                  "uint16", "uint32", "uint64"])
def test_named_dtypes_without_tensors_as_pytorch(name):
    ours, theirs = getattr(ember, name), getattr(torch, name)
    assert (ours.itemsize, ours.is_floating_point, ours.is_signed, ours.is_complex) == \
        (theirs.itemsize, theirs.is_floating_point, theirs.is_signed, theirs.is_complex)
    with pytest.raises(TypeError, match=f"ember has no {name} tensors"):
        ember.zeros(2, dtype=ours)


@pytest.mark.parametrize("name", ["qint8", "quint8", "qint32", "quint4x2", "quint2x4"])
def test_quantized_dtypes_are_named_without_tensors_as_pytorch(name):
    ours, theirs = getattr(ember, name), getattr(torch, name)
    assert (repr(ours), ours.itemsize, ours.is_floating_point, ours.is_complex) == \
        (repr(theirs).replace("torch", "ember"), theirs.itemsize, theirs.is_floating_point, theirs.is_complex)
    with pytest.raises(RuntimeError, match="not supported for quantized types") as t_err:
        _ = theirs.is_signed
    with pytest.raises(RuntimeError) as e_err:
        _ = ours.is_signed
    assert str(e_err.value) == str(t_err.value)
    with pytest.raises(TypeError, match=f"ember has no {name} tensors"):
        ember.zeros(2, dtype=ours)
    assert pickle.loads(pickle.dumps(ours)) is ours


def test_version_module_and_comparisons():
    assert ember.version.API_LEVEL == torch.__version__.split("+")[0]  # the PyTorch ember is tested against
    v = ember.version.__version__
    assert v == f"{ember.version.API_LEVEL}+ember{ember.__version__}"
    assert ember.version.cuda is torch.version.cuda is None and ember.version.hip is None
    assert packaging.version.Version(v) == packaging.version.Version(str(v))
    reference = torch.torch_version.TorchVersion(str(v))  # PyTorch's own comparing string
    for other in ("2.0", "2.9", "2.13", "2.13.0", "2.13.1", "2.14.0a0", "3", "1.13.1+cu117", "2.13.0+ember0.1.0",
                  "2.13.0rc1", "2.13.0.dev20250101", "2.13.0.post1", (2, 0), (2, 13, 0), (2, 14)):
        for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
            assert op(v, other) == op(reference, other), (other, op)
    assert v >= "2.9" and not str(v) >= "2.9"  # where a plain string comparison gets it wrong


def run_compat(tmp_path, source):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=60, cwd=tmp_path)


PRINTS = """
    import pickle
    import torch
    x = torch.ones(2, 3, dtype=torch.float64)
    print(x.shape, x.dtype, x.size(), torch.bfloat16, x.layout, torch.channels_last, x.device)
    print(x, repr(torch.float16), str(torch.int64), [torch.Size([1]), torch.float32])
    print(x.max(0))
    print(torch.sort(torch.tensor([3.0, 1.0])), torch.tensor([2, 1]).min(0), torch.cummin(torch.ones(2), 0))
    print(torch.linalg.slogdet(torch.eye(2)), torch.slogdet(torch.eye(2)), torch.linalg.svd(torch.eye(2)))
    print(torch.aminmax(x), torch.tensor([1.0, 2.0]).topk(1), torch.tensor([1.0, 2.0]).median(0))
    print(pickle.loads(pickle.dumps(torch.tensor([1.0, 2.0]).kthvalue(1))))
    print(torch.tensor([1.0], dtype=torch.bfloat16), torch.tensor([1, 2], dtype=torch.int32))
    print(torch.zeros(2, 0).to_sparse(), torch.arange(12.0).reshape(3, 4).to_sparse())
    print(torch.tensor([[0, 2], [3, 0]]).to_sparse(), torch.eye(2, dtype=torch.float64).to_sparse())
"""


def test_printed_objects_read_as_under_pytorch(tmp_path):
    # A program's output under python -m ember.compat is PyTorch's: torch.Size, torch.float32,
    # torch.return_types.max(...), the sparse layout, not ember's names.
    script = tmp_path / "prints.py"
    script.write_text(textwrap.dedent(PRINTS))
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    got = run_compat(tmp_path, PRINTS)
    assert want.returncode == 0 and got.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    assert "torch." not in repr(ember.max(ember.ones(2, 2), 0)) + repr(ember.Size([1])) + repr(ember.float32)


def test_typical_preamble_runs_under_compat(tmp_path):
    out = run_compat(tmp_path, """
        import torch
        import torch.backends.cudnn as cudnn
        import torch.multiprocessing as mp
        from torch.cuda.amp import GradScaler, autocast
        from packaging import version
        cudnn.benchmark = True
        cudnn.deterministic = True
        torch.backends.cuda.matmul.allow_tf32 = True
        device = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
        dtype = torch.bfloat16 if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else torch.float32
        scaler = torch.amp.GradScaler(enabled=(device == "cuda"))
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            loss = model(torch.ones(2, 3)).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        assert version.parse(torch.__version__) >= version.parse("2.0") and torch.__version__ >= "2.9"
        print(device, dtype, torch.version.cuda, torch.accelerator.current_accelerator(), mp.cpu_count() > 0)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cpu", "torch.float32", "None", "None", "True"]  # printed as under PyTorch
    assert out.stderr == ""  # no warning on a correct program


# --------------------------------------------------------------------- start-up switches, compile, DataParallel
def test_start_up_switches_answer_as_torch():
    for lib in (torch, ember):
        lib.use_deterministic_algorithms(True, warn_only=True)
        try:
            assert lib.are_deterministic_algorithms_enabled() and lib.is_deterministic_algorithms_warn_only_enabled()
        finally:
            lib.use_deterministic_algorithms(False)
        assert not lib.are_deterministic_algorithms_enabled()
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms("yes")
        before = lib.get_float32_matmul_precision()
        try:
            lib.set_float32_matmul_precision("high")
            assert lib.get_float32_matmul_precision() == "high"
            with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
                lib.set_float32_matmul_precision("fastest")
            assert lib.get_float32_matmul_precision() == "high"
        finally:
            lib.set_float32_matmul_precision(before)
        lib.set_default_device("cpu")
        lib.set_default_device(None)
        assert str(lib.get_default_device()) == "cpu"
    with pytest.raises(RuntimeError, match="ember computes on the CPU"):
        ember.set_default_device("cuda")


def test_compile_wraps_a_module_as_pytorch_and_returns_a_function_itself():
    model = ember.nn.Linear(2, 2)
    compiled = ember.compile(model, mode="max-autotune", fullgraph=True)
    assert isinstance(compiled, ember._dynamo.eval_frame.OptimizedModule) and compiled._orig_mod is model

    @ember.compile
    def f(x):
        return x * 2

    @ember.compile(dynamic=True)
    def g(x):
        return x + 1

    assert f(ember.ones(1)).item() == 2.0 and g(ember.ones(1)).item() == 2.0
    with pytest.raises(RuntimeError, match="expects a callable"):
        ember.compile(3)


def test_compiled_module_is_laid_out_as_pytorchs_optimized_module():
    """torch.compile(module) holds the module as ``_orig_mod``: prefixed state_dict keys (checkpoints of compiled
    models), attributes and the training flag read and written through, len, hooks of the original run, copies."""
    import copy
    import io
    import warnings

    def observe(m):
        inner = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.BatchNorm1d(3))
        calls = []
        handle = inner.register_forward_hook(lambda *a: calls.append(1))
        c = m.compile(inner)
        c.eval()
        c.flag = 7
        out = c(m.ones(4, 2))
        handle.remove()  # (a local lambda cannot be pickled)
        buf = io.BytesIO()
        m.save(c, buf)
        buf.seek(0)
        loaded = m.load(buf, weights_only=False)
        twin = copy.deepcopy(c)
        seen = (list(c.state_dict()), c._orig_mod is inner, inner.flag, "flag" in c.__dict__, inner.training,
                c.training, inner[1].training, len(c), calls, tuple(out.shape), type(loaded).__name__,
                type(twin._orig_mod).__name__, [n for n, _ in c.named_children()], repr(c).splitlines()[:2])
        c.train()
        del c.flag
        return seen + (inner.training, c.training, hasattr(inner, "flag"))

    with warnings.catch_warnings():  # PyTorch's dynamo warns of jit.script_method as it loads
        warnings.simplefilter("ignore", DeprecationWarning)
        reference = observe(torch)
    assert observe(ember) == reference
    assert reference[0][0] == "_orig_mod.0.weight"


def test_data_parallel_without_gpu_is_the_module_as_in_torch():
    outs, grads = [], []
    for lib in (torch, ember):
        lib.manual_seed(0)
        inner = lib.nn.Linear(3, 2)
        with lib.no_grad():
            inner.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]))
            inner.bias.copy_(lib.tensor([0.1, -0.2]))
        dp = lib.nn.DataParallel(inner)
        assert dp.module is inner and dp.device_ids == [] and list(dp.state_dict()) == ["module.weight",
                                                                                        "module.bias"]
        out = dp(lib.ones(4, 3))
        out.sum().backward()
        outs.append(out.detach().numpy())
        grads.append(inner.weight.grad.numpy())
        assert repr(dp).splitlines()[0] == "DataParallel(" and lib.nn.parallel.DataParallel is lib.nn.DataParallel
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
    with pytest.raises(RuntimeError, match="ember computes on the CPU"):
        ember.nn.DataParallel(ember.nn.Linear(1, 1), device_ids=[0])


def test_legacy_cuda_tensor_types():
    for lib in (torch, ember):
        assert not isinstance(lib.zeros(1), lib.cuda.FloatTensor) and not isinstance(lib.zeros(1), lib.cuda.LongTensor)
        assert repr(lib.cuda.FloatTensor) == "<class 'torch.cuda.FloatTensor'>"
        with pytest.raises(TypeError, match="torch.cuda.FloatTensor not available"):
            lib.cuda.FloatTensor(2)
    kind = ember.cuda.FloatTensor if ember.cuda.is_available() else ember.FloatTensor  # the tutorial idiom
    assert kind(2).dtype == ember.float32


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")  # torch's
def test_jit_names_model_code_uses():
    for lib in (torch, ember):
        assert lib.jit.is_scripting() is False and lib.jit.is_tracing() is False
        assert lib.jit.annotate(list, [1]) == [1]

        @lib.jit.ignore
        def helper(x):
            return x + 1

        @lib.jit.unused
        def unused(x):
            return x

        def gelu_ish(x):
            return x * (1.702 * x).sigmoid()

        scripted = lib.jit.script(gelu_ish)
        x = lib.tensor([-1.0, 0.5, 2.0])
        np.testing.assert_allclose(scripted(x).numpy(), gelu_ish(x).numpy(), rtol=1e-6)
        assert helper(lib.ones(1)).item() == 2.0 and unused(3) == 3
        assert not isinstance(lib.nn.Linear(1, 1), lib.jit.ScriptModule)
    model = ember.nn.Linear(2, 1)
    assert ember.jit.script(model) is model and ember.jit.trace(model, ember.ones(1, 2)) is model
    assert ember.jit.ignore(drop=True)(len) is len


class _JitNet(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = ember.nn.Linear(3, 2)
        self.register_buffer("shift", ember.arange(2.0))
        self.scale = 1.5

    def forward(self, x):
        return self.fc(x) * self.scale + self.shift


def test_jit_save_then_load_gives_the_module_back(tmp_path):
    """Train, ``jit.save(jit.script(model))``, ``jit.load`` and predict, as PyTorch programs do: the module comes
    back from its class with its parameters, buffers, attributes and mode."""
    model = _JitNet().eval()
    path = tmp_path / "scripted.pt"
    ember.jit.save(ember.jit.script(model), str(path))
    loaded = ember.jit.load(str(path), map_location="cpu")
    x = ember.randn(4, 3)
    assert type(loaded) is _JitNet and loaded.training is False and loaded.scale == 1.5
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    assert loaded.fc.weight is not model.fc.weight


def test_jit_save_refuses_what_it_would_lose(tmp_path):
    with pytest.raises(TypeError, match="expects a scripted or traced module"):
        ember.jit.save(ember.jit.script(lambda x: x), str(tmp_path / "f.pt"))
    with pytest.raises(NotImplementedError, match="_extra_files"):
        ember.jit.save(_JitNet(), str(tmp_path / "m.pt"), _extra_files={"meta.txt": "1"})
    ember.save({"w": ember.ones(1)}, str(tmp_path / "d.pt"))
    with pytest.raises(RuntimeError, match="not a module written by jit.save"):
        ember.jit.load(str(tmp_path / "d.pt"))


@pytest.mark.filterwarnings("ignore:`torch.jit.:DeprecationWarning")
def test_torchscript_archive_from_pytorch_is_a_clear_error(tmp_path):
    """A TorchScript archive holds TorchScript code: ember.load and jit.load say so and how to load the weights,
    where ember.load spoke of compressed members."""
    path = tmp_path / "ts.pt"
    torch.jit.save(torch.jit.trace(torch.nn.Linear(3, 2), torch.ones(1, 3)), str(path))
    for load in (ember.load, ember.jit.load):
        with pytest.raises(RuntimeError, match=r"TorchScript archive \(torch.jit.save\).*load_state_dict"):
            load(str(path))


@pytest.mark.filterwarnings("ignore:`torch.jit.:DeprecationWarning")  # torch's (script, freeze, ...)
def test_jit_freeze_and_optimize_for_inference_as_pytorch():
    """A frozen (eval-mode) model computes what the model computes, later in-place changes to its weights included
    (PyTorch's inlined constants share the weights' memory), an optimize_for_inference one what it computed then;
    a model in training mode is PyTorch's RuntimeError."""
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    outs = []
    weights = None
    for lib in (torch, ember):
        model = lib.nn.Sequential(lib.nn.Linear(2, 4), lib.nn.Dropout(0.5), lib.nn.Linear(4, 1))
        if weights is None:
            weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
        with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
            lib.jit.freeze(lib.jit.script(model))
        model.eval()
        frozen = lib.jit.freeze(lib.jit.script(model))
        fast = lib.jit.optimize_for_inference(lib.jit.script(model))
        before = frozen(lib.tensor(x)).detach().numpy()
        np.testing.assert_allclose(before, model(lib.tensor(x)).detach().numpy(), rtol=1e-6)
        with lib.no_grad():
            model[0].weight.mul_(0.5)
        want = model(lib.tensor(x)).detach().numpy()
        outs.append((want, frozen(lib.tensor(x)).detach().numpy(), fast(lib.tensor(x)).detach().numpy()))
        np.testing.assert_allclose(outs[-1][1], want, rtol=1e-6)
        np.testing.assert_allclose(outs[-1][2], before, rtol=1e-6)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-6)  # the same weights: the same outputs
    np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore:`torch.jit.:DeprecationWarning")  # torch's (script, optimize_for_inference)
def test_jit_optimize_for_inference_of_a_training_model_as_pytorch():
    """PyTorch's optimize_for_inference puts a model in training mode in eval mode before freezing it (no error);
    the result computes the eval-mode model's outputs (dropout off)."""
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    weights, outs = None, []
    for lib in (torch, ember):
        model = lib.nn.Sequential(lib.nn.Linear(2, 4), lib.nn.Dropout(0.5), lib.nn.Linear(4, 1))
        if weights is None:
            weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
        fast = lib.jit.optimize_for_inference(lib.jit.script(model))
        assert model.training
        outs.append(fast(lib.tensor(x)).detach().numpy())
        np.testing.assert_allclose(outs[-1], model.eval()(lib.tensor(x)).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)


# -------------------------------------------------------------------------------------------- profiler
def test_profiler_records_user_annotations_and_exports_a_chrome_trace(tmp_path):
    import json

    model = ember.nn.Linear(3, 2)
    with ember.profiler.profile(activities=[ember.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(2):
            with ember.profiler.record_function("my_block"):
                model(ember.ones(4, 3)).sum().backward()
            prof.step()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    blocks = [e for e in events if e.get("name") == "my_block"]
    assert len(blocks) == 2 and all(e["cat"] == "user_annotation" and e["dur"] >= 0 for e in blocks)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    assert "my_block" in table and table.splitlines()[0].split()[:2] == ["Name", "Calls"]
    assert dict((n, c) for n, c, _ in prof.key_averages())["my_block"] == 2
    # PyTorch's rows are FunctionEventAvg objects read by attribute: {e.key for e in prof.key_averages()}
    row = next(e for e in prof.key_averages() if e.key == "my_block")
    assert row.count == 2 and row.cpu_time_total >= 0 and row.cpu_time == row.cpu_time_total / 2


def test_record_function_is_free_outside_a_profile_and_works_as_a_decorator():
    @ember.profiler.record_function("double")
    def double(x):
        return x * 2

    assert double(ember.ones(1)).item() == 2.0  # nothing recording: runs plainly
    with ember.autograd.profiler.profile() as prof:
        double(ember.ones(1))
    assert [e["name"] for e in prof.events() if e["cat"] == "user_annotation"] == ["double"]
    with ember.autograd.profiler.profile(enabled=False) as off:  # (the legacy profiler, off: None, as PyTorch's)
        double(ember.ones(1))
    assert off is None
    with pytest.raises(RuntimeError, match="has not recorded anything"):
        ember.profiler.profile().events()


def test_profiler_schedule_matches_torch():
    kwargs = dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    ours, theirs = ember.profiler.schedule(**kwargs), torch.profiler.schedule(**kwargs)
    assert [ours(s).name for s in range(14)] == [theirs(s).name for s in range(14)]


def test_tensorboard_trace_handler_writes_the_trace_when_ready(tmp_path):
    handler = ember.profiler.tensorboard_trace_handler(str(tmp_path / "log"), worker_name="w0")
    with ember.profiler.profile(on_trace_ready=handler, schedule=ember.profiler.schedule(wait=0, warmup=0, active=1)):
        with ember.profiler.record_function("step"):
            pass
    files = list((tmp_path / "log").iterdir())
    assert len(files) == 1 and files[0].name.startswith("w0.") and files[0].name.endswith(".pt.trace.json")


def test_memory_formats_are_accepted_and_change_no_values():
    for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        assert isinstance(getattr(ember, name), ember.memory_format) and repr(getattr(ember, name)) == f"ember.{name}"
        assert isinstance(getattr(torch, name), torch.memory_format)
    data = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    for lib in (torch, ember):
        x = lib.tensor(data)
        for y in (x.to(memory_format=lib.channels_last), x.contiguous(memory_format=lib.channels_last),
                  x.clone(memory_format=lib.contiguous_format), lib.empty_like(x, memory_format=lib.preserve_format)
                  .copy_(x)):
            np.testing.assert_array_equal(y.numpy(), data)
        layer = lib.nn.Conv2d(3, 2, 3).to(memory_format=lib.channels_last)
        assert tuple(layer(x).shape) == (2, 2, 2, 3)


def test_cuda_rng_setters_do_nothing_as_on_a_cpu_only_pytorch():
    for m in (torch, ember):
        assert m.cuda.set_rng_state(m.get_rng_state()) is None
        assert m.cuda.set_rng_state_all(m.cuda.get_rng_state_all()) is None
        assert m.cuda.get_rng_state_all() == []


def test_tracer_warning_is_a_warning_to_filter():
    import warnings

    assert issubclass(ember.jit.TracerWarning, Warning)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=ember.jit.TracerWarning)
        warnings.warn("traced a constant", ember.jit.TracerWarning, stacklevel=1)  # filtered: no error
    ember.jit.TracerWarning.ignore_lib_warnings()


def test_future_at_the_top_level_is_torch_futures_future():
    assert ember.Future is ember.futures.Future
    assert issubclass(torch.futures.Future, torch.Future)


def test_cpp_extension_has_no_toolkit_and_refuses_to_build():
    import torch.utils.cpp_extension as t_ext

    import ember.utils.cpp_extension as e_ext

    for name in ("CUDA_HOME", "ROCM_HOME", "HIP_HOME"):
        assert getattr(e_ext, name) is getattr(t_ext, name) is None
    for build in (lambda: e_ext.load("fused", sources=["fused.cpp"]), lambda: e_ext.load_inline("x", "int f();"),
                  lambda: e_ext.CppExtension("x", ["x.cpp"]), lambda: e_ext.CUDAExtension("x", ["x.cu"]),
                  lambda: e_ext.BuildExtension.with_options(use_ninja=False)()):
        with pytest.raises(ember.MissingFeatureError, match="torch.utils.cpp_extension"):
            build()


def test_scaled_mm_is_out_of_scope_with_the_reason():
    assert hasattr(torch, "_scaled_mm") and not hasattr(ember, "_scaled_mm")
    with pytest.raises(ember.MissingFeatureError, match="float8"):
        ember._scaled_mm(None, None)


def test_nested_tensors_are_out_of_scope_with_the_reason():
    assert hasattr(torch, "nested") and hasattr(torch, "jagged")
    assert not hasattr(ember, "nested") and not hasattr(ember, "jagged")
    with pytest.raises(ember.MissingFeatureError, match="pad_sequence"):
        ember.nested.nested_tensor([ember.ones(2), ember.ones(3)])
    with pytest.raises(ember.MissingFeatureError, match="layout of nested"):
        _ = ember.jagged
    # the float8 matrix product that stays out of scope runs on PyTorch's CPU too
    a = torch.ones(16, 16).to(torch.float8_e4m3fn)
    assert torch._scaled_mm(a, a.t(), scale_a=torch.tensor(1.0), scale_b=torch.tensor(1.0),
                            out_dtype=torch.float32).shape == (16, 16)


def test_consume_prefix_in_state_dict_as_pytorchs():
    """How a DistributedDataParallel checkpoint (keys ``module.*``) is loaded into the plain model."""
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present as theirs

    from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present as ours

    for prefix in ("module.", "mod", "x."):
        mine = {"module.a": 1, "b": 2, "module.c.d": 3, "modulee": 4}
        expected = dict(mine)
        ours(mine, prefix)
        theirs(expected, prefix)
        assert list(mine.items()) == list(expected.items()), prefix
    model = ember.nn.Linear(3, 2)
    state = {f"module.{k}": v for k, v in model.state_dict().items()}
    ours(state, "module.")
    ember.nn.Linear(3, 2).load_state_dict(state)


def test_torchrun_scripts_record_decorator_passes_results_and_errors_through():
    import ember.distributed.elastic.multiprocessing.errors as errors

    @errors.record
    def main(x, scale=2):
        """The script's main."""
        if x < 0:
            raise ValueError("negative")
        return x * scale

    assert main(3, scale=3) == 9 and main.__name__ == "main" and main.__doc__ == "The script's main."
    with pytest.raises(ValueError, match="negative"):
        main(-1)
    out = subprocess.run([sys.executable, "-m", "ember.compat", "-c",
                          "from torch.distributed.elastic.multiprocessing.errors import record\n"
                          "print(record(lambda: 'ran')())"],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0 and out.stdout.strip() == "ran", out.stdout + out.stderr


@pytest.mark.parametrize("run_id", [None, "none", "job7"])
def test_is_torchelastic_launched_reads_the_run_id_as_pytorchs(run_id, monkeypatch):
    import torch.distributed as tdist

    import ember.distributed as edist

    if run_id is None:
        monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    else:
        monkeypatch.setenv("TORCHELASTIC_RUN_ID", run_id)
    assert edist.is_torchelastic_launched() is tdist.is_torchelastic_launched() is (run_id is not None)


def test_small_names_layer_code_imports():
    import torch.nn.modules.utils as t_utils
    import torch.optim.optimizer as t_optimizer

    import ember.nn.modules.utils as e_utils
    import ember.optim.optimizer as e_optimizer

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for value in (3, (1, 2), [4, 5, 6]):
            assert getattr(e_utils, name)(value) == getattr(t_utils, name)(value)
    assert e_utils._ntuple(5)(1) == t_utils._ntuple(5)(1)
    assert e_utils._reverse_repeat_tuple((1, 2), 2) == t_utils._reverse_repeat_tuple((1, 2), 2)
    assert e_optimizer.StateDict == t_optimizer.StateDict
    for name in ("EVAL", "PRESERVE", "TRAINING"):
        assert int(getattr(ember.onnx.TrainingMode, name)) == int(getattr(torch.onnx.TrainingMode, name))
    layer = ember.nn.modules.linear.NonDynamicallyQuantizableLinear(3, 2)
    assert isinstance(layer, ember.nn.Linear) and repr(layer) == repr(
        torch.nn.modules.linear.NonDynamicallyQuantizableLinear(3, 2))


@pytest.mark.parametrize("name", ["gt_", "ge_", "lt_", "le_", "eq_", "ne_"])
@pytest.mark.parametrize("dtype,other", [("float32", 0.5), ("int64", 1), ("float32", "tensor"), ("bool", True)])
def test_comparisons_in_place_as_pytorch(name, dtype, other):
    data = np.array([[0, 1, 2], [2, 1, 0]], dtype=dtype)
    results = []
    for m in (torch, ember):
        x = m.tensor(data)
        o = m.tensor(np.array([1, 1, 0], dtype=dtype)) if isinstance(other, str) else other
        assert getattr(x, name)(o) is x
        results.append(x)
    assert str(results[1].dtype)[6:] == str(results[0].dtype)[6:]
    np.testing.assert_array_equal(results[1].numpy(), results[0].numpy())


def test_ger_and_detach_at_the_top_level():
    a, b = np.arange(3.0), np.arange(2.0)
    np.testing.assert_array_equal(ember.ger(ember.tensor(a), ember.tensor(b)).numpy(), torch.ger(torch.tensor(a),
                                                                                                  torch.tensor(b)))
    np.testing.assert_array_equal(ember.tensor(a).ger(ember.tensor(b)).numpy(), np.outer(a, b))
    x = ember.ones(2, requires_grad=True) * 2
    assert not ember.detach(x).requires_grad and ember.detach(x).tolist() == [2.0, 2.0]
