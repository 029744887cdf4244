"""Names the held-out corpus uses (docs/coverage/heldout: public code the main corpus never scanned), each against
torch: what PyTorch's CPU build answers, raises or warns, ember answers, raises or warns."""

import os
import socket
import warnings

import pytest
import torch
from oracle import assert_close

import ember


def outcome(fn):
    """``("ok", value)`` or ``("raises", type, message)`` of ``fn()``, with the warnings it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", fn())
        except Exception as e:  # noqa: BLE001
            result = ("raises", e, str(e))
    return result, [(w.category, str(w.message)) for w in caught]


def same_outcome(call, same_message: bool = True):
    (e, e_warn), (t, t_warn) = outcome(lambda: call(ember)), outcome(lambda: call(torch))
    assert e[0] == t[0], (e, t)
    if e[0] == "ok":
        assert e[1] == t[1]
    else:
        torch_types = [c for c in type(t[1]).__mro__ if c.__module__ == "builtins" and c is not object]
        assert isinstance(e[1], tuple(torch_types)) and all(isinstance(e[1], c) for c in torch_types[:1]), (e, t)
        if same_message:
            assert e[2] == t[2]
    assert [c for c, _ in e_warn] == [c for c, _ in t_warn]
    return e, t


# ------------------------------------------------------------------ torch.xpu on a build without XPU

@pytest.mark.parametrize("call", [
    lambda m: m.xpu.is_available(), lambda m: m.xpu.device_count(), lambda m: m.xpu.is_initialized(),
    lambda m: m.xpu.is_bf16_supported(), lambda m: m.xpu.empty_cache(), lambda m: m.xpu.manual_seed(0),
    lambda m: m.xpu.manual_seed_all(1),
])
def test_xpu_answers_as_pytorch_without_xpu(call):
    same_outcome(call)


@pytest.mark.parametrize("name", ["set_device", "current_device", "synchronize"])
def test_xpu_device_functions_raise_pytorch_s_assertion_error(name):
    args = (0,) if name == "set_device" else ()
    same_outcome(lambda m: getattr(m.xpu, name)(*args), same_message=False)
    with pytest.raises(RuntimeError, match=rf"torch.xpu.{name}\(\) needs a XPU device"):
        getattr(ember.xpu, name)(*args)


# ------------------------------------------------------------------ deprecated flags and removed functions

@pytest.mark.parametrize("name", ["has_cuda", "has_mps", "has_cudnn"])
def test_deprecated_build_flags_warn_and_answer_as_pytorch(name):
    e, t = same_outcome(lambda m: getattr(m, name))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(ember, name)
        getattr(torch, name)
    assert str(caught[0].message) == str(caught[1].message) and caught[0].filename == __file__


def test_has_mkldnn_answers_ember_s_backend():
    with pytest.warns(UserWarning, match="'has_mkldnn' is deprecated"):
        assert ember.has_mkldnn is ember.backends.mkldnn.is_available()


@pytest.mark.parametrize("call", [
    lambda m: m.matrix_rank(m.eye(3)), lambda m: m.matrix_rank(m.eye(3), 1e-3, True),
    lambda m: m.zeros(2).reinforce(1.0),
])
def test_removed_functions_raise_pytorch_s_error(call):
    same_outcome(call)


def test_record_stream_of_a_cpu_tensor_raises_not_implemented():
    same_outcome(lambda m: m.zeros(2).record_stream(m.Stream("cpu") if m is torch else None), same_message=False)


# ------------------------------------------------------------------ torch.cuda without a GPU

def test_cuda_memory_summary_and_default_stream_fail_as_pytorch_without_gpu():
    same_outcome(lambda m: m.cuda.memory_summary())  # KeyError: memory_stats() is empty
    same_outcome(lambda m: m.cuda.memory_summary(abbreviated=True))
    same_outcome(lambda m: m.cuda.default_stream(), same_message=False)


def test_out_of_memory_error_is_a_runtime_error_caught_under_both_names():
    for m in (ember, torch):
        assert m.cuda.OutOfMemoryError is m.OutOfMemoryError and issubclass(m.OutOfMemoryError, RuntimeError)
    with pytest.raises(ember.cuda.OutOfMemoryError):
        raise ember.OutOfMemoryError("CUDA out of memory")
    try:
        ember.zeros(1).sum()
    except ember.cuda.OutOfMemoryError:  # the program's retry branch is never taken
        pytest.fail("ember raised OutOfMemoryError")


def test_cuda_amp_grad_scaler_module():
    from ember.cuda.amp.grad_scaler import GradScaler

    assert GradScaler is ember.cuda.amp.GradScaler and GradScaler.__module__ == "ember.cuda.amp.grad_scaler"
    same_outcome(lambda m: m.cuda.amp.grad_scaler.GradScaler().is_enabled())


@pytest.mark.parametrize("path", ["cuda.matmul", "cudnn"])
def test_fp32_precision_switch_defaults_and_reads_back(path):
    owners = []
    for m in (ember, torch):
        owner = m.backends
        for part in path.split("."):
            owner = getattr(owner, part)
        owners.append(owner)
    # (PyTorch's own default is "none" too; not compared here, as another test's torch.set_float32_matmul_precision
    # in the same process moves PyTorch's matmul switch)
    assert owners[0].fp32_precision == "none"
    before = [owner.fp32_precision for owner in owners]
    try:
        for owner in owners:
            owner.fp32_precision = "ieee"
        assert owners[0].fp32_precision == owners[1].fp32_precision == "ieee"
    finally:
        for owner, value in zip(owners, before):
            owner.fp32_precision = value


# ------------------------------------------------------------------ module paths programs import from

def test_default_collate_from_pytorch_s_private_module():
    import ember.utils.data as data

    assert data._utils.collate.default_collate is data.default_collate  # reachable after import, as in PyTorch
    from ember.utils.data._utils.collate import default_collate

    batch = [(ember.tensor([1.0, 2.0]), 3), (ember.tensor([4.0, 5.0]), 6)]
    t_batch = [(torch.tensor([1.0, 2.0]), 3), (torch.tensor([4.0, 5.0]), 6)]
    from torch.utils.data._utils.collate import default_collate as t_collate

    for got, want in zip(default_collate(batch), t_collate(t_batch)):
        assert_close(got, want)


def test_summary_writer_from_its_module(tmp_path):
    pytest.importorskip("tensorboardX", reason="ember's SummaryWriter writes with tensorboardX, not installed here")
    from ember.utils.tensorboard.writer import SummaryWriter

    assert SummaryWriter is ember.utils.tensorboard.SummaryWriter
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        writer.add_scalar("loss", 1.5, 0)
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(tmp_path))


def test_config_show_describes_the_build():
    text = ember.__config__.show()
    assert isinstance(text, str) and text.startswith("ember built with:") and "NumPy" in text
    assert isinstance(torch.__config__.show(), str)


# ------------------------------------------------------------------ torch.nn.init, torch.jit

@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3, 3), (4, 6, 2)])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "FAN_IN", "Fan_Out", "fan_avg"])
def test_calculate_correct_fan(shape, mode):
    same_outcome(lambda m: m.nn.init._calculate_correct_fan(m.zeros(shape), mode))


def test_kaiming_takes_the_mode_in_any_case():
    for m in (ember, torch):
        m.manual_seed(0)
        w = m.nn.init.kaiming_uniform_(m.empty(200, 50), mode="FAN_OUT", nonlinearity="relu")
        bound = (6 / 200) ** 0.5  # gain sqrt(2) * sqrt(3 / fan_out)
        assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.9 * bound


def test_jit_script_method_warns_as_pytorch_and_leaves_the_method_python():
    def forward(self, x):
        return x * 2 + 1

    messages = []
    for m in (ember, torch):
        with pytest.warns(DeprecationWarning) as rec:
            m.jit.script_method(forward)
        messages.append(str(rec[0].message))
    assert messages[0] == messages[1] and "`torch.jit.script_method`" in messages[0]
    # PyTorch returns a stub that its ScriptModule compiles; ember runs no TorchScript: the method stays Python
    with pytest.warns(DeprecationWarning):
        assert ember.jit.script_method(forward) is forward


# ------------------------------------------------------------------ torch.distributed

@pytest.fixture
def world_of_one():
    import ember.distributed as dist

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    environ = dict(os.environ)
    dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{port}")
    try:
        yield dist
    finally:
        dist.destroy_process_group()
        os.environ.clear()
        os.environ.update(environ)


def test_get_global_rank(world_of_one):
    # (PyTorch, run the same way: 3, 0, then ValueError for each bad call, with these messages)
    dist = world_of_one
    sub = dist.new_group([0])
    assert dist.get_global_rank(dist.group.WORLD, 3) == 3  # the world group: the identity
    assert dist.get_global_rank(sub, 0) == 0 and dist.get_global_rank(group=sub, group_rank=0) == 0
    with pytest.raises(ValueError, match="Group rank 1 is not part of group"):
        dist.get_global_rank(sub, 1)
    with pytest.raises(ValueError, match="Group rank -1 is not part of group"):
        dist.get_global_rank(sub, -1)
    with pytest.raises(ValueError, match="Group None is not registered"):
        dist.get_global_rank(None, 0)


def test_all_gather_base_is_all_gather_into_tensor_with_pytorch_s_warning(world_of_one):
    dist = world_of_one
    out = ember.zeros(3)
    with pytest.warns(FutureWarning, match=r"`torch.distributed._all_gather_base` is a private function") as rec:
        assert dist._all_gather_base(out, ember.arange(3.0)) is None
    assert rec[0].filename == __file__
    assert out.tolist() == [0.0, 1.0, 2.0]


def test_reduce_op_is_the_deprecated_spelling_of_reduce_op_enum():
    import torch.distributed as tdist

    import ember.distributed as dist

    for name in ("SUM", "PRODUCT", "MIN", "MAX"):
        for m in (dist, tdist):
            with pytest.warns(FutureWarning, match="`torch.distributed.reduce_op` is deprecated"):
                assert getattr(m.reduce_op, name) == getattr(m.ReduceOp, name)
    for m in (dist, tdist):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with pytest.raises(AttributeError):
                m.reduce_op.NO_SUCH_OP  # noqa: B018  (the look-up is what raises)


# ------------------------------------------------------------------ a custom loss scaler's kernel

@pytest.mark.parametrize("values", [[[1.0, 2.0], [3.0, -4.0]], [[1.0, float("inf")], [3.0, 4.0]],
                                    [[float("nan")], [2.0, 2.0]], []])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_amp_foreach_non_finite_check_and_unscale(values, dtype):
    results = []
    for m in (ember, torch):
        tensors = [m.tensor(v, dtype=getattr(m, dtype)) for v in values]
        found_inf, inv_scale = m.zeros(1), m.tensor([0.25])
        assert m._amp_foreach_non_finite_check_and_unscale_(tensors, found_inf, inv_scale) is None
        results.append((tensors, found_inf))
    (e_tensors, e_found), (t_tensors, t_found) = results
    assert_close(e_found, t_found)
    for e, t in zip(e_tensors, t_tensors):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert_close(e.float(), t.float())  # (NaNs compare equal; the oracle reads no bfloat16)


def test_amp_foreach_non_finite_check_keeps_a_found_inf_already_set():
    for m in (ember, torch):
        found_inf = m.ones(1)
        m._amp_foreach_non_finite_check_and_unscale_([m.ones(2)], found_inf, m.tensor([0.5]))
        assert found_inf.item() == 1.0


@pytest.mark.parametrize("call", [
    lambda m: m._amp_foreach_non_finite_check_and_unscale_([m.ones(2)], m.zeros(2), m.tensor([0.5])),
    lambda m: m._amp_foreach_non_finite_check_and_unscale_([m.ones(2)], m.zeros(1), m.ones(2)),
    lambda m: m._amp_foreach_non_finite_check_and_unscale_([m.ones(2)], m.zeros(1, dtype=m.float64), m.ones(1)),
    lambda m: m._amp_foreach_non_finite_check_and_unscale_([m.ones(2)], m.zeros(1), m.ones(1, dtype=m.float64)),
    lambda m: m._amp_foreach_non_finite_check_and_unscale_([m.ones(2)], m.zeros(1), m.ones(1, dtype=m.float16)),
    lambda m: m._amp_foreach_non_finite_check_and_unscale_([m.ones(2, dtype=m.int64)], m.zeros(1), m.ones(1)),
    lambda m: m._amp_foreach_non_finite_check_and_unscale_([m.ones(2)], m.zeros(1), 0.5),
])
def test_amp_foreach_non_finite_check_errors(call):
    same_outcome(call, same_message=False)


def test_pytorch_file_reader_under_its_c_name(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save({"w": torch.arange(4.0)}, path)
    names = []
    for m in (ember, torch):
        assert m._C.PyTorchFileReader is m.PyTorchFileReader
        reader = m._C.PyTorchFileReader(str(path))
        names.append(sorted(reader.get_all_records()))
        assert reader.get_record("data.pkl") == torch._C.PyTorchFileReader(str(path)).get_record("data.pkl")
    assert names[0] == names[1]


def test_hash_store_as_pytorch_s():
    import datetime

    import torch.distributed as tdist

    import ember.distributed as dist

    logs = []
    for m in (dist, tdist):
        s, log = m.HashStore(), []
        log.append(s.timeout)
        s.set("a", "x"), s.set("b", b"\x00y")
        log += [s.get("a"), s.get("b"), s.add("n", 2), s.add("n", 3), s.get("n")]
        log += [s.compare_set("a", "x", "z"), s.get("a"), s.compare_set("a", "q", "w"), s.compare_set("new", "", "v"),
                s.compare_set("new2", "zz", "v"), s.check(["a"]), s.check(["a", "zz"]), s.num_keys()]
        log += [s.delete_key("a"), s.delete_key("a"), s.num_keys()]
        s.set_timeout(datetime.timedelta(seconds=0.05))
        for name, args in (("get", ("missing",)), ("wait", (["missing"],)),
                           ("wait", (["missing"], datetime.timedelta(seconds=0.05)))):
            with pytest.raises(m.DistStoreError, match="Wait timeout") as info:
                getattr(s, name)(*args)
            assert isinstance(info.value, (m.DistError, RuntimeError))
        with pytest.raises(ValueError):
            s.add("b", 1)
        logs.append(log)
    assert logs[0] == logs[1]


@pytest.mark.parametrize("value", [5, 2.5, None, [1, 2]])
def test_a_hash_store_value_that_is_neither_str_nor_bytes_is_pytorchs_type_error(value):
    """PyTorch's store takes str or bytes: an int is its TypeError, not the bytes ``bytes(5)`` would make."""
    import torch.distributed as tdist

    import ember.distributed as dist

    for m in (dist, tdist):
        store = m.HashStore()
        for call in (lambda: store.set("a", value), lambda: store.compare_set("a", value, "x"),  # noqa: B023
                     lambda: store.compare_set("a", "", value)):  # noqa: B023
            with pytest.raises(TypeError):
                call()
        assert store.num_keys() == 0


def test_hash_store_get_waits_for_another_thread():
    import threading

    import ember.distributed as dist

    store = dist.HashStore()
    threading.Timer(0.05, store.set, ("ready", "1")).start()
    assert store.get("ready") == b"1"


@pytest.mark.parametrize("value, exc", [("bogus", RuntimeError), ("bf16", RuntimeError), (3, TypeError),
                                        (None, TypeError)], ids=str)
def test_cuda_matmul_fp32_precision_refuses_what_pytorch_refuses(value, exc):
    messages = []
    for m in (torch, ember):
        before = m.backends.cuda.matmul.fp32_precision
        with pytest.raises(exc) as err:
            m.backends.cuda.matmul.fp32_precision = value
        assert m.backends.cuda.matmul.fp32_precision == before
        messages.append(str(err.value))
    assert messages[1] == messages[0]


def test_get_node_local_rank_reads_local_rank_then_the_fallback(monkeypatch):
    import torch.distributed as tdist

    import ember.distributed as dist

    monkeypatch.setenv("LOCAL_RANK", "3")
    assert dist.get_node_local_rank() == tdist.get_node_local_rank() == 3
    assert dist.get_node_local_rank(fallback_rank=0) == tdist.get_node_local_rank(fallback_rank=0) == 3
    monkeypatch.delenv("LOCAL_RANK")
    assert dist.get_node_local_rank(fallback_rank=1) == tdist.get_node_local_rank(fallback_rank=1) == 1
    for m in (dist, tdist):
        with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment. Consider passing fallback_rank"):
            m.get_node_local_rank()


@pytest.mark.parametrize("old,new", [("all_gather_into_tensor", "all_gather_single"),
                                     ("reduce_scatter_tensor", "reduce_scatter_single")])
def test_pytorch_2_13_collective_names_and_the_deprecated_ones(world_of_one, old, new):
    """all_gather_single and reduce_scatter_single are PyTorch 2.13's names; the old names still run and warn
    FutureWarning with PyTorch's message (PyTorch's warns before it finds no process group: compared here)."""
    import torch.distributed as tdist

    dist = world_of_one
    with pytest.warns(FutureWarning) as theirs, pytest.raises(ValueError):
        getattr(tdist, old)(torch.zeros(3), torch.arange(3.0))
    out = ember.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name does not warn
        assert getattr(dist, new)(out, ember.arange(3.0)) is None
    assert out.tolist() == [0.0, 1.0, 2.0]
    out = ember.zeros(3)
    with pytest.warns(FutureWarning) as ours:
        assert getattr(dist, old)(out, ember.arange(3.0) + 1) is None
    assert out.tolist() == [1.0, 2.0, 3.0]
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs[:1]]
    assert f"Please use `torch.distributed.{new}` instead" in str(ours[0].message)
    assert ours[0].filename == __file__


def test_destroying_the_default_group_twice_raises_pytorchs_assertion_error():
    import torch.distributed as tdist

    import ember.distributed as dist

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    environ = dict(os.environ)
    try:
        dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{port}")
        dist.destroy_process_group()
        assert not dist.is_initialized()
        for m in (dist, tdist):  # (PyTorch's without a default group: the same as after a destroy)
            with pytest.raises(AssertionError, match="Process group cannot be None"):
                m.destroy_process_group()
    finally:
        os.environ.clear()
        os.environ.update(environ)


def test_ddp_broadcast_buffers_warns_pytorch_2_13s_deprecation(world_of_one):
    """PyTorch 2.13 deprecates ``broadcast_buffers`` for ``forward_sync_buffers`` (FutureWarning at the caller's
    line, PyTorch's text: a torchrun job with ``DDP(m, broadcast_buffers=False)`` prints it on every rank)."""
    from ember.nn.parallel import DistributedDataParallel as DDP

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DDP(ember.nn.BatchNorm1d(2))  # neither given: no warning
        DDP(ember.nn.BatchNorm1d(2), forward_sync_buffers=False)
    with pytest.warns(FutureWarning, match=r"^`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. "
                                           r"IMPORTANT: unlike `broadcast_buffers=False`") as rec:
        model = DDP(ember.nn.BatchNorm1d(2), broadcast_buffers=False)
    assert rec[0].filename == __file__ and model.broadcast_buffers is False
    with pytest.warns(FutureWarning, match="Both `broadcast_buffers` and `forward_sync_buffers` were specified"):
        model = DDP(ember.nn.BatchNorm1d(2), broadcast_buffers=False, forward_sync_buffers=True)
    assert model.broadcast_buffers is True
