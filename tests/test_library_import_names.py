"""Names pure-Python training libraries import from ``torch`` at import time (Lightning's ``lightning`` and
``pytorch_lightning`` among them), each as PyTorch's where ember can give its meaning, else ember's clear error
naming the PyTorch feature when it is used."""

import collections
import datetime
import io
import os
import typing

import pytest
import torch

import ember
import ember.autograd.profiler
import ember.distributed
import ember.utils._pytree as pytree


def test_reduce_op_red_op_type_is_the_members_type():
    for dist in (torch.distributed, ember.distributed):
        op = dist.ReduceOp
        assert isinstance(op.SUM, op.RedOpType) and isinstance(op.MAX, op.RedOpType)
        assert op.RedOpType.MAX == op.MAX and op.RedOpType.SUM != op.MAX
        assert not isinstance("sum", op.RedOpType)
    # every operation ember offers is one PyTorch's enum names (PyTorch also has PREMUL_SUM, for NCCL)
    assert set(ember.distributed.ReduceOp.RedOpType.__members__) <= set(torch.distributed.ReduceOp.RedOpType.__members__)


def test_constants_are_the_process_groups_defaults():
    import inspect

    import torch.distributed.constants

    import ember.distributed.constants

    timeout = ember.distributed.constants.default_pg_timeout
    assert isinstance(timeout, datetime.timedelta) and isinstance(torch.distributed.constants.default_pg_timeout,
                                                                  datetime.timedelta)
    # what init_process_group waits when given no timeout (ember's 5 minutes; PyTorch's 30, docs/api.md)
    assert inspect.signature(ember.distributed.init_process_group).parameters["timeout"].default == timeout
    # PyTorch's value where it was built without NCCL, as the oracle here and ember are
    assert ember.distributed.constants.default_pg_nccl_timeout is torch.distributed.constants.default_pg_nccl_timeout \
        is None


def test_torch_function_mode_subclasses_build_and_enter():
    import ember.overrides

    class EmptyInit(ember.overrides.TorchFunctionMode):
        def __init__(self, enabled=True):
            super().__init__()
            self.enabled = enabled

        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    mode = EmptyInit(enabled=False)
    assert mode.enabled is False
    with mode as entered:  # (what the mode sees: tests/test_torch_function_modes.py)
        assert entered is mode and ember.ones(2).tolist() == [1.0, 1.0]


@pytest.fixture
def saved(tmp_path):
    path = str(tmp_path / "checkpoint.pt")
    torch.save({"weight": torch.arange(6.0).reshape(2, 3), "step": 3, "ids": torch.tensor([1, 2])}, path)
    return path


def test_file_reader_reads_records_as_pytorchs(saved):
    theirs, ours = torch.PyTorchFileReader(saved), ember.PyTorchFileReader(saved)
    assert ours.get_all_records() == theirs.get_all_records()
    assert "data.pkl" in ours.get_all_records() and "data/0" in ours.get_all_records()
    for name in theirs.get_all_records():
        assert ours.has_record(name) and ours.get_record(name) == theirs.get_record(name)
        assert ours.get_record_size(name) == theirs.get_record_size(name)
    assert ours.serialization_id() == theirs.serialization_id() != ""
    assert not ours.has_record("data/9") and not theirs.has_record("data/9")
    with open(saved, "rb") as fh:  # a file object, as PyTorch's second overload
        assert ember.PyTorchFileReader(fh).get_record("data.pkl") == theirs.get_record("data.pkl")


def test_file_reader_errors_as_pytorchs(saved, tmp_path):
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed locating file nope: file not found"):
        torch.PyTorchFileReader(saved).get_record("nope")
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed locating file nope: file not found"):
        ember.PyTorchFileReader(saved).get_record("nope")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a zip")
    for reader in (torch.PyTorchFileReader, ember.PyTorchFileReader):
        with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading zip archive"):
            reader(str(bad))
        with pytest.raises(RuntimeError, match="open file failed because of errno 2 on fopen"):
            reader(str(tmp_path / "absent.pt"))
    with pytest.raises(ember.MissingFeatureError, match=r"torch\.PyTorchFileReader\.get_storage_from_record is not "
                                                          "implemented in ember"):
        ember.PyTorchFileReader(saved).get_storage_from_record("data/0", 6, ember.float32)


def test_optimized_module_is_the_compiled_wrapper():
    import ember._dynamo

    assert torch._dynamo.OptimizedModule is torch._dynamo.eval_frame.OptimizedModule
    assert ember._dynamo.OptimizedModule is ember._dynamo.eval_frame.OptimizedModule
    compiled = ember.compile(ember.nn.Linear(2, 2))
    assert isinstance(compiled, ember._dynamo.OptimizedModule)
    assert not isinstance(ember.nn.Linear(2, 2), ember._dynamo.OptimizedModule)


Point = collections.namedtuple("Point", "x y")
TREES = [[1, (2, 3)], (4, 5), {"b": 1, "a": [2]}, Point(1, [2, 3]), collections.OrderedDict(z=1, y=2),
         collections.deque([1, 2], maxlen=4), collections.defaultdict(list, {"k": 1})]


@pytest.mark.parametrize("tree", TREES, ids=lambda t: type(t).__name__)
def test_pytree_registry_takes_nodes_apart_as_pytorchs(tree):
    import torch.utils._pytree as theirs

    kind = pytree._get_node_type(tree)
    assert kind is theirs._get_node_type(tree) and kind in pytree.SUPPORTED_NODES
    ours_def, theirs_def = pytree.SUPPORTED_NODES[kind], theirs.SUPPORTED_NODES[kind]
    assert ours_def.type is theirs_def.type is kind
    children, context = ours_def.flatten_fn(tree)
    assert (children, context) == theirs_def.flatten_fn(tree)
    assert ours_def.unflatten_fn(children, context) == tree


def test_pytree_walked_by_hand_as_libraries_do():
    """A library's own flatten (Lightning's ``_tree_flatten``: containers of plain numbers stay whole) built on
    the registry, ``TreeSpec(type, context, children)`` and ``LeafSpec``, rebuilt by ``tree_unflatten``."""
    assert pytree.PyTree is typing.Any

    def flatten(tree):
        kind = pytree._get_node_type(tree)
        if kind not in pytree.SUPPORTED_NODES or all(isinstance(c, (int, float, str)) for c in
                                                     pytree.SUPPORTED_NODES[kind].flatten_fn(tree)[0]):
            return [tree], pytree.LeafSpec()
        children, context = pytree.SUPPORTED_NODES[kind].flatten_fn(tree)
        leaves, specs = [], []
        for child in children:
            child_leaves, spec = flatten(child)
            leaves += child_leaves
            specs.append(spec)
        return leaves, pytree.TreeSpec(kind, context, specs)

    tree = {"a": [1, 2], "b": Point("loader", (3, 4)), "c": ["x", {"d": "loader2"}]}
    leaves, spec = flatten(tree)
    assert leaves == [[1, 2], "loader", (3, 4), "x", {"d": "loader2"}]
    assert pytree.tree_unflatten(leaves, spec) == tree
    assert type(pytree.tree_unflatten(leaves, spec)["b"]) is Point


def test_flop_counter_built_and_read_as_pytorchs_before_it_is_entered():
    from torch.utils.flop_counter import FlopCounterMode

    import ember.utils.flop_counter

    theirs, ours = FlopCounterMode(display=False, depth=2), ember.utils.flop_counter.FlopCounterMode(display=False)
    assert ours.get_total_flops() == theirs.get_total_flops() == 0
    assert ours.get_flop_counts() == theirs.get_flop_counts() == {"Global": {}}
    with pytest.warns(UserWarning, match="mods argument is not needed anymore"):
        ember.utils.flop_counter.FlopCounterMode(mods=ember.nn.Linear(1, 1))


def test_script_module_has_no_ember_instances():
    assert not isinstance(torch.nn.Linear(1, 1), torch.ScriptModule)
    assert not isinstance(ember.nn.Linear(1, 1), ember.ScriptModule)
    assert ember.ScriptModule is ember.jit.ScriptModule


def test_profiler_names():
    assert issubclass(ember.autograd.profiler.EventList, list)
    with ember.profiler.profile() as prof:
        ember.ones(2).sum()
    assert isinstance(prof.key_averages(), ember.autograd.profiler.EventList)
    assert ember.profiler.kineto_available() is False  # no Kineto in ember (PyTorch's CPU wheels have it)
    for profiler in (torch.autograd.profiler, ember.autograd.profiler):
        with profiler.emit_nvtx(enabled=False) as entered:  # a no-op, as on PyTorch's CPU build
            assert entered is None
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            with profiler.emit_nvtx():
                pass


def test_file_reader_corrupt_record_raises_runtime_error_as_pytorchs(saved, tmp_path):
    # A record whose local header is overwritten: PyTorch's reader raises RuntimeError naming the record, never
    # zipfile's BadZipFile. One whose bytes changed after saving (its CRC no longer matches) PyTorch's reader
    # returns as they are; ember's checks the CRC (as ember.load does) and raises the same RuntimeError.
    with open(saved, "rb") as fh:
        data = fh.read()
    start = data.index(torch.PyTorchFileReader(saved).get_record("data.pkl"))
    flipped = bytearray(data)
    flipped[start + 20] ^= 0xFF  # inside data.pkl's bytes
    headless = bytearray(data)
    record = data.index(b"PK\x03\x04", 1)  # the second record's local header
    headless[record:record + 4] = b"XXXX"
    for label, blob in (("flipped", flipped), ("headless", headless)):
        path = tmp_path / f"{label}.pt"
        path.write_bytes(bytes(blob))
        for reader in (torch.PyTorchFileReader, ember.PyTorchFileReader)[label == "flipped":]:
            opened = reader(str(path))
            with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading file"):
                for name in opened.get_all_records():
                    opened.get_record(name)


def test_reader_is_bytes_io_safe(saved):
    with open(saved, "rb") as fh:
        data = fh.read()
    assert ember.PyTorchFileReader(io.BytesIO(data)).get_all_records() == \
        torch.PyTorchFileReader(io.BytesIO(data)).get_all_records()
    assert os.path.exists(saved)


DDP_SETTINGS = """
import os, sys
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[2], RANK="0", WORLD_SIZE="1")
fw = __import__(sys.argv[1])
fw.distributed.init_process_group("gloo")
model = fw.nn.Sequential(fw.nn.Linear(3, 4), fw.nn.Linear(4, 2))
plain = fw.nn.parallel.DistributedDataParallel(model)
static = fw.nn.parallel.DistributedDataParallel(model, static_graph=True, bucket_cap_mb=1, broadcast_buffers=False)
keys = ["backend_name", "module_name", "broadcast_buffers", "bucket_cap_bytes", "find_unused_parameters",
        "gradient_as_bucket_view", "is_multi_device_module", "output_device", "num_parameter_tensors",
        "total_parameter_size_bytes", "rank", "world_size"]
if sys.argv[1] == "torch":
    import torch.distributed.utils
fw.distributed.utils._sync_module_states(model, fw.distributed.distributed_c10d._get_default_group(), 250 * 1024 * 1024,
                                         src=0, params_and_buffers_to_ignore={"0.bias"})
print("synced", tuple(model[0].weight.shape))
for ddp in (plain, static):
    data = ddp._get_ddp_logging_data()
    print(ddp.static_graph, [data[k] for k in keys])
fw.distributed.destroy_process_group()
"""


def test_ddp_settings_read_as_pytorchs(tmp_path):
    """``DistributedDataParallel.static_graph`` and ``_get_ddp_logging_data()``'s settings (Lightning's DDP
    teardown reads both), one rank, the same values as PyTorch's; ``torch.distributed.utils._sync_module_states``
    callable as Lightning calls it (two ranks: tests/programs/lightning_fit.py under DDP)."""
    import subprocess
    import sys

    from conftest import ROOT

    script = tmp_path / "ddp_settings.py"
    script.write_text(DDP_SETTINGS)
    env = dict(os.environ, PYTHONPATH=ROOT)
    outs = [subprocess.run([sys.executable, str(script), fw, port], capture_output=True, text=True, env=env,
                           timeout=120, cwd=tmp_path) for fw, port in (("torch", "29581"), ("ember", "29582"))]
    for out in outs:
        assert out.returncode == 0, out.stderr
    assert outs[1].stdout == outs[0].stdout
    assert outs[0].stdout.splitlines()[2].startswith("True")


def test_post_local_sgd_names_exist_and_refuse():
    from ember.distributed.algorithms.ddp_comm_hooks import post_localSGD_hook as theirs_name  # noqa: N813

    assert not isinstance(None, theirs_name.PostLocalSGDState)
    with pytest.raises(NotImplementedError, match="PostLocalSGDState: local SGD is not supported by ember"):
        theirs_name.PostLocalSGDState(None, None, start_localSGD_iter=10)
    with pytest.raises(NotImplementedError, match="post_localSGD_hook: local SGD is not supported by ember"):
        theirs_name.post_localSGD_hook(None, None)
