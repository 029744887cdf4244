"""``torch.utils.tensorboard.SummaryWriter`` under ember writes event files that TensorBoard's own reader reads,
with the runs, tags and values PyTorch's writer produces for the same program."""

import collections
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import ROOT

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

PROGRAM = textwrap.dedent("""
    import sys
    import torch
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(sys.argv[1]) as w:
        for step in range(3):
            w.add_scalar("train/loss", torch.tensor(1.0 / (step + 1)), step)
            w.add_scalars("run", {"a": step, "b": torch.tensor(2.0 * step)}, step)
        w.add_histogram("weights", torch.arange(100, dtype=torch.float32) / 10, 0)
        w.add_image("img", torch.linspace(0, 1, 60).reshape(3, 4, 5), 0)
        w.add_images("batch", torch.zeros(2, 3, 4, 4), 1)
        w.add_text("note", "hello", 0)
        w.add_hparams({"lr": 0.1, "opt": "sgd"}, {"hp/acc": torch.tensor(0.9)},
                      hparam_domain_discrete={"opt": ["sgd", "adam"]}, run_name="r1")
        w.flush()
    print(type(w).__module__)
""")


def _write(tmp_path, mode):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    logdir = tmp_path / mode
    command = [sys.executable, "-m", "ember.compat"] if mode == "ember" else [sys.executable]
    out = subprocess.run([*command, str(script), str(logdir)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-3000:]
    return logdir, out.stdout.strip()


def _read(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def _runs(logdir):
    return sorted(os.path.relpath(d, logdir) for d, _, files in os.walk(logdir) if files)


def test_tensorboard_reads_what_the_writer_wrote_as_pytorchs(tmp_path):
    pytest.importorskip("tensorboardX")
    ember_dir, module = _write(tmp_path, "ember")
    assert module == "ember.utils.tensorboard"
    torch_dir, _ = _write(tmp_path, "torch")
    assert _runs(ember_dir) == _runs(torch_dir) == [".", "r1", "run_a", "run_b"]

    mine, theirs = _read(ember_dir), _read(torch_dir)
    for kind in ("scalars", "histograms", "images", "tensors"):
        assert sorted(mine.Tags()[kind]) == sorted(theirs.Tags()[kind]), kind
    assert [(e.step, e.value) for e in mine.Scalars("train/loss")] == \
        [(e.step, e.value) for e in theirs.Scalars("train/loss")]
    for run in ("run_a", "run_b"):
        assert [(e.step, e.value) for e in _read(ember_dir / run).Scalars("run")] == \
            [(e.step, e.value) for e in _read(torch_dir / run).Scalars("run")]
    h, th = mine.Histograms("weights")[0].histogram_value, theirs.Histograms("weights")[0].histogram_value
    assert (h.min, h.max, h.num, h.sum) == pytest.approx((th.min, th.max, th.num, th.sum))
    for tag in ("img", "batch"):
        image = mine.Images(tag)[0]
        assert (image.width, image.height) == (theirs.Images(tag)[0].width, theirs.Images(tag)[0].height)
    text = mine.Tensors("note/text_summary")[0].tensor_proto.string_val
    assert text == theirs.Tensors("note/text_summary")[0].tensor_proto.string_val == [b"hello"]


def test_hparams_carry_the_discrete_domain_and_the_metric(tmp_path):
    pytest.importorskip("tensorboardX")
    from tensorboard.plugins.hparams import plugin_data_pb2

    ember_dir, _ = _write(tmp_path, "ember")
    run = _read(ember_dir / "r1")
    assert [e.value for e in run.Scalars("hp/acc")] == pytest.approx([0.9])
    content = run.PluginTagToContent("hparams")["_hparams_/experiment"]
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content).experiment
    domains = {i.name: [v.string_value for v in i.domain_discrete.values] for i in experiment.hparam_infos}
    assert domains["opt"] == ["sgd", "adam"]
    start = plugin_data_pb2.HParamsPluginData.FromString(
        run.PluginTagToContent("hparams")["_hparams_/session_start_info"]).session_start_info
    assert start.hparams["lr"].number_value == pytest.approx(0.1) and start.hparams["opt"].string_value == "sgd"


def test_hparams_domain_of_the_wrong_type_is_pytorchs_type_error(tmp_path):
    pytest.importorskip("tensorboardX")
    from ember.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as w, pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\]"):
        w.add_hparams({"lr": 0.1}, {"acc": 1.0}, hparam_domain_discrete={"lr": ["a"]})


def test_writer_takes_ember_tensors_and_numpy_alike(tmp_path):
    pytest.importorskip("tensorboardX")
    import ember
    from ember.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path), comment="x")
    assert w.get_logdir() == str(tmp_path)
    w.add_scalar("a", ember.tensor(3.0), 0)
    w.add_scalar("a", np.float32(4.0), 1)
    w.add_histogram("h", [ember.tensor(1.0), 2.0], 0)
    w.close()
    assert [e.value for e in _read(tmp_path).Scalars("a")] == [3.0, 4.0]


def _graph_model(nn, F):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.pool = nn.MaxPool2d(2)
            self.head = nn.Sequential(nn.Dropout(0.5), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))

        def forward(self, x, scale):
            x = self.pool(F.relu(self.bn(self.conv1(x))))
            return self.head(x.reshape(x.shape[0], -1)) * scale, x

    return Net()


def _graph_summary(graph_def):
    """What ember's graph shares with PyTorch's JIT trace: the IO nodes with their shapes, and the module scopes
    that ran operations."""
    def shape(n):
        shapes = n.attr["_output_shapes"].list.shape
        return [d.size for d in shapes[0].dim] if shapes else None

    io = sorted((n.name.split("/")[0], shape(n)) for n in graph_def.node if n.op == "IO Node")
    scopes = {n.name.rpartition("/")[0] for n in graph_def.node if n.op.startswith("aten::")}
    return io, scopes


def test_add_graph_writes_pytorchs_scopes_and_io_nodes(tmp_path):
    """add_graph writes the model's operations under PyTorch's module scopes, with its input and output nodes, and
    runs the model in eval mode (no running statistics updated, no dropout drawn), training mode restored."""
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard._pytorch_graph import graph as torch_graph

    import ember
    from ember.utils.tensorboard import SummaryWriter

    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    expected = _graph_summary(torch_graph(_graph_model(torch.nn, torch.nn.functional),
                                          (torch.from_numpy(x), torch.tensor(2.0)))[0])
    expected[1].remove("Net/Sequential[head]/Dropout[0]")  # in eval mode it returns its input: autograd records nothing
    model = _graph_model(ember.nn, ember.nn.functional)
    state = ember.get_rng_state()
    with ember.no_grad(), SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, (ember.from_numpy(x), ember.tensor(2.0)))
    assert model.training and model.bn.num_batches_tracked.item() == 0
    assert ember.equal(ember.get_rng_state(), state)
    graph_def = _read(tmp_path).Graph()
    assert _graph_summary(graph_def) == expected
    assert ("Net/Conv2d[conv1]", "aten::convolution") in {(n.name.rpartition("/")[0], n.op) for n in graph_def.node}
    nodes = {n.name: n for n in graph_def.node}
    reached, todo = set(), ["output/output.1"]  # the first output reads back to the input and the parameters
    while todo:
        name = todo.pop()
        reached.add(name)
        todo.extend(i for i in nodes[name].input if i not in reached)
    assert {"input/x", "input/scale", "Net/Conv2d[conv1]/weight", "Net/Sequential[head]/Linear[3]/bias"} <= reached


def test_without_tensorboardx_the_import_names_the_package():
    code = ("import sys; sys.modules['tensorboardX'] = None\n"
            "try:\n    from ember.utils.tensorboard import SummaryWriter\n"
            "except ImportError as e:\n    print('ImportError:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert "ImportError:" in out.stdout and "pip install tensorboardX" in out.stdout, out.stdout + out.stderr


def test_writer_attributes_are_pytorchs(tmp_path, monkeypatch):
    """Programs read ``writer.log_dir`` (a log file beside the events) and the writer's other arguments back."""
    pytest.importorskip("tensorboardX")
    torch_tb = pytest.importorskip("torch.utils.tensorboard")
    from ember.utils.tensorboard import SummaryWriter

    kwargs = dict(max_queue=5, flush_secs=7, filename_suffix=".s")
    writers = [cls(str(tmp_path / name), **kwargs) for name, cls in (("e", SummaryWriter),
                                                                      ("t", torch_tb.SummaryWriter))]
    for w, name in zip(writers, "et"):
        assert w.log_dir == str(tmp_path / name)
        assert (w.max_queue, w.flush_secs, w.filename_suffix) == (5, 7, ".s")
        w.close()
    monkeypatch.chdir(tmp_path)
    default = SummaryWriter(comment="_c")
    default.close()
    assert default.log_dir == default.get_logdir() and default.log_dir.startswith("runs")
    assert default.log_dir.endswith("_c")


def _sizes_grow_before_close(writer_class, logdir):
    """Whether each event file under ``logdir`` has the scalars in it before the writer is flushed or closed
    (within 10 s, the writers' logging threads taking them from their queues), as a running job's TensorBoard
    shows them; then the writer is closed."""
    import time

    writer = writer_class(str(logdir))
    writer.add_scalar("loss", 1.0, 0)
    writer.add_scalars("run", {"a": 1.0, "b": 2.0}, 0)
    files = lambda: [os.path.join(d, f) for d, _, fs in os.walk(logdir) for f in fs]  # noqa: E731
    before = {f: os.path.getsize(f) for f in files()}
    for step in range(1, 4):
        writer.add_scalar("loss", 1.0 / step, step)
        writer.add_scalars("run", {"a": step, "b": 2.0 * step}, step)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(os.path.getsize(f) > before.get(f, 0) for f in files()):
        time.sleep(0.05)
    grown = {os.path.dirname(os.path.relpath(f, logdir)) or "main": os.path.getsize(f) > before.get(f, 0)
             for f in files()}
    writer.close()
    return grown


def test_events_reach_the_file_as_they_are_written_as_pytorchs(tmp_path):
    """PyTorch's writer puts each event in its file as its logging thread takes it from the queue, so TensorBoard
    shows a running job's scalars at once and a crash loses none; tensorboardX's buffered them in the file object
    until ``flush_secs`` (120 s) passed."""
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from ember.utils.tensorboard import SummaryWriter

    theirs = _sizes_grow_before_close(TorchWriter, tmp_path / "torch")
    mine = _sizes_grow_before_close(SummaryWriter, tmp_path / "ember")
    assert theirs == {"main": True, "run_a": True, "run_b": True}
    assert mine == theirs


def _scalar_events(run_dir):
    """Every scalar written, old style (``simple_value``) or new (the scalars plugin's tensor), by tag."""
    acc = _read(run_dir)
    tags = acc.Tags()
    out = {tag: [("simple", e.step, e.value) for e in acc.Scalars(tag)] for tag in tags["scalars"]}
    for tag in tags["tensors"]:
        kind = acc.SummaryMetadata(tag).plugin_data.plugin_name
        out[tag] = [(kind, e.step, e.tensor_proto.dtype, list(e.tensor_proto.float_val),
                     list(e.tensor_proto.double_val)) for e in acc.Tensors(tag)]
    return out


def test_add_scalar_takes_pytorchs_arguments_and_keeps_the_tag(tmp_path):
    """PyTorch's add_scalar(tag, value, step, walltime, new_style, double_precision): new_style writes the scalars
    plugin's tensor (a double with double_precision), given by keyword or by position; a tag with spaces or brackets
    is written as it is."""
    pytest.importorskip("tensorboardX")
    import torch
    import torch.utils.tensorboard as torch_tb

    import ember
    from ember.utils.tensorboard import SummaryWriter as EmberWriter

    results = {}
    for name, lib, writer_class in (("ember", ember, EmberWriter), ("torch", torch, torch_tb.SummaryWriter)):
        with writer_class(str(tmp_path / name)) as w:
            w.add_scalar("loss (train)", 1.5, 0)
            w.add_scalar("acc/val top-1", lib.tensor(0.25), 1, None, True)
            w.add_scalar("third", 1.0 / 3, 2, new_style=True, double_precision=True)
            w.add_scalar("third", lib.tensor([2.0]), 3, walltime=5.0, new_style=True)
        results[name] = _scalar_events(tmp_path / name)
    assert results["ember"] == results["torch"]
    assert set(results["torch"]) == {"loss (train)", "acc/val top-1", "third"}
    with EmberWriter(str(tmp_path / "bad")) as w, pytest.raises(AssertionError, match="one element"):
        w.add_scalar("x", ember.ones(2), 0)


def _hparams_records(logdir):
    """Each run's hparams plugin records (experiment, session start), as comparable text."""
    from tensorboard.plugins.hparams import plugin_data_pb2

    records = {}
    for run in sorted(os.listdir(logdir)):
        if not os.path.isdir(logdir / run):
            continue
        for tag, content in sorted(_read(logdir / run).PluginTagToContent("hparams").items()):
            data = plugin_data_pb2.HParamsPluginData.FromString(content)
            kind = data.WhichOneof("data")
            if kind == "experiment":
                infos = sorted((h.name, h.type, str(h.domain_discrete)) for h in data.experiment.hparam_infos)
                records[run, tag] = (infos, sorted(m.name.tag for m in data.experiment.metric_infos))
            elif kind == "session_start_info":
                records[run, tag] = sorted((k, str(v)) for k, v in data.session_start_info.hparams.items())
    return records


def test_add_hparams_records_values_as_pytorch(tmp_path):
    """A bool hyperparameter is PyTorch's number (1.0, type float64, its discrete domain numbers too), a tensor its
    first element, None is left out; a value of another type is PyTorch's ValueError."""
    pytest.importorskip("tensorboardX")
    import torch
    import torch.utils.tensorboard as torch_tb

    import ember
    from ember.utils.tensorboard import SummaryWriter as EmberWriter

    for name, lib, writer_class in (("ember", ember, EmberWriter), ("torch", torch, torch_tb.SummaryWriter)):
        with writer_class(str(tmp_path / name)) as w:
            w.add_hparams({"lr": 0.1, "bs": 32, "opt": "adam", "nesterov": True, "t": lib.tensor([3.0, 4.0]),
                           "none": None}, {"hp/acc": 0.5}, hparam_domain_discrete={"nesterov": [True, False]},
                          run_name="r")
            with pytest.raises(ValueError, match="value should be one of int, float, str, bool, or torch.Tensor"):
                w.add_hparams({"bad": [1, 2]}, {"hp/acc": 0.5}, run_name="bad")
    ember_records, torch_records = _hparams_records(tmp_path / "ember"), _hparams_records(tmp_path / "torch")
    assert ember_records == torch_records
    assert len(torch_records) == 2


def test_add_graph_checks_the_output_container_as_pytorchs_strict_trace(tmp_path, capsys):
    """A dict of outputs is refused (PyTorch's message printed, then "Error occurs, No graph saved", then its
    RuntimeError), a list warned of with a TracerWarning; with use_strict_trace=False both are written."""
    pytest.importorskip("tensorboardX")
    import ember
    from ember.utils.tensorboard import SummaryWriter

    class Out(ember.nn.Module):
        def __init__(self, container):
            super().__init__()
            self.fc, self.container = ember.nn.Linear(3, 2), container

        def forward(self, x):
            return self.container([("a", self.fc(x))]) if self.container is dict else self.container([self.fc(x), x])

    x = ember.randn(4, 3)
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(RuntimeError, match="Encountering a dict at the output of the tracer"):
            w.add_graph(Out(dict), x)
        assert capsys.readouterr().out.splitlines()[-1] == "Error occurs, No graph saved"
        with pytest.warns(ember.jit.TracerWarning, match="Encountering a list at the output"):
            w.add_graph(Out(list), x)
        w.add_graph(Out(dict), x, use_strict_trace=False)
        w.add_graph(Out(tuple), x)


def test_add_graph_takes_a_namedtuple_input(tmp_path):
    """A namedtuple among the inputs is rebuilt as a namedtuple (it was called with one generator: a TypeError):
    the graph is the one of the same tensors in a plain tuple, its operations under PyTorch's scopes."""
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard._pytorch_graph import graph as torch_graph

    import ember
    from ember.utils.tensorboard import SummaryWriter

    pair = collections.namedtuple("Pair", "x shift")

    def model(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 2)

            def forward(self, inputs):
                return self.fc(inputs.x) + inputs.shift if isinstance(inputs, pair) else self.fc(inputs[0]) + inputs[1]

        return Net()

    x, shift = np.ones((1, 3), np.float32), np.ones((1, 2), np.float32)
    expected = _graph_summary(torch_graph(model(torch), ((torch.from_numpy(x), torch.from_numpy(shift)),))[0])
    summaries = []
    for container in (pair, lambda *t: t):
        with SummaryWriter(str(tmp_path / str(len(summaries)))) as w:
            w.add_graph(model(ember), (container(ember.from_numpy(x), ember.from_numpy(shift)),))
        summaries.append(_graph_summary(_read(tmp_path / str(len(summaries))).Graph()))
    assert summaries[0] == summaries[1]
    assert summaries[0][1] == expected[1]
