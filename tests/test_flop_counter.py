"""``torch.utils.flop_counter.FlopCounterMode`` counts what PyTorch's counts on the CPU: the same operators (by
name), the same numbers, per module as PyTorch's ModuleTracker names them, forward and backward; and Lightning's
model summary of a model with an ``example_input_array`` (which enters one) runs under ``ember.compat``."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.utils.flop_counter
from conftest import ROOT

import ember
import ember.utils.flop_counter

LIBS = ((torch, torch.utils.flop_counter.FlopCounterMode), (ember, ember.utils.flop_counter.FlopCounterMode))


def summed_backward(op, *args):
    op(*args).sum().backward()


def counts(mode_cls, run, *args):
    """The total and the per-module counts (operators by name) of ``run(*args)`` inside a counter."""
    with mode_cls(display=False, depth=3) as counter:
        run(*args)
    return counter.get_total_flops(), {module: {str(op): n for op, n in ops.items()}
                                       for module, ops in counter.get_flop_counts().items()}


def build_net(lib):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 6)
            self.conv = nn.Conv2d(3, 4, 3, padding=1, stride=2)
            self.ct = nn.ConvTranspose2d(4, 2, 3, stride=2)

        def forward(self, x, img):
            return self.fc(x), self.ct(self.conv(img))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = nn.Linear(6, 5, bias=False)
            self.c1 = nn.Conv1d(2, 3, 2, groups=1)

        def forward(self, x, img):
            y, z = self.block(x, img)
            q = y.reshape(2, 3, 4, 6)[..., :4]
            attention = F.scaled_dot_product_attention(q, q, q)  # (PyTorch's CPU kernel: not counted)
            products = lib.bmm(y, y.transpose(1, 2)).sum() + (y[0] @ y[0].T).sum() + lib.mm(y[0], y[0].T).sum()
            added = lib.addmm(y[0, :, :1], y[0], y[0, :1].T).sum() + lib.baddbmm(y[:, :, :1], y, y[:, :1].mT).sum()
            return self.head(y).sum() + z.sum() + attention.sum() + products + added + self.c1(img[:, :2, 0]).sum()

    return Net()


@pytest.mark.parametrize("backward", [False, True])
def test_counts_per_module_and_operator_are_pytorchs(backward):
    """Linear layers (3-D input, with and without bias), mm/bmm/matmul/addmm/baddbmm, Conv1d/Conv2d and
    ConvTranspose2d, attention: PyTorch's totals, operators and module names (backward: its products attributed
    as PyTorch's tracker does, the root module's gradients to no module, ``y.backward()`` starting at its output)."""
    results = []
    for lib, mode in LIBS:
        lib.manual_seed(0)
        net = build_net(lib)
        x, img = lib.randn(2, 12, 8, requires_grad=True), lib.randn(2, 3, 9, 9)
        results.append(counts(mode, lambda n, x, img: n(x, img).backward() if backward else n(x, img), net, x, img))
    assert results[0][0] > 0
    assert results[1] == results[0]


LINEAR_CASES = [((8,), True), ((3, 8), True), ((3, 8), False), ((2, 3, 8), True), ((2, 3, 8), False),
                ((2, 2, 3, 8), True), ((3, 2, 8), "transposed"), ((3, 2, 8), "transposed, weight grad")]


@pytest.mark.parametrize("shape, how", LINEAR_CASES)
def test_linear_counts_the_operator_pytorchs_linear_runs(shape, how):
    """``linear``: addmm where the bias is added inside the product, mm where the input's rows multiply as one
    matrix, bmm for a stack PyTorch's matmul cannot view as one (a transposed input, its weight not requiring grad);
    its gradients' mm products."""
    results = []
    for lib, mode in LIBS:
        w = lib.ones(6, 8, requires_grad="weight grad" in str(how))
        b = lib.ones(6) if how is True else None
        x = lib.ones(*shape, requires_grad=True)
        if "transposed" in str(how):
            x = x.transpose(0, 1)

        linear = lib.nn.functional.linear
        results.append(counts(mode, summed_backward, linear, x, w, b))
        with lib.no_grad():  # (as Lightning's summary counts: PyTorch's path still reads requires_grad)
            results.append(counts(mode, linear, x, w, b))
    assert results[2:] == results[:2]


@pytest.mark.parametrize("a, b", [((2, 3, 8), (8, 5)), ((3, 8), (2, 8, 5)), ((2, 1, 3, 8), (4, 8, 5)),
                                  ((4, 3, 8), (4, 8, 5)), ((8,), (8, 5)), ((3, 8), (8,)), ((8,), (2, 8, 5)),
                                  ((2, 3, 8), (8,)), ((8,), (8,))])
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_matmul_counts_as_pytorchs(a, b, grads):
    """Each operand shape of matmul, forward and backward: PyTorch's mm (a folded stack, a vector as a row) or bmm,
    nothing for a matrix-vector or dot product, whichever operand requires grad."""
    results = []
    for lib, mode in LIBS:
        left, right = lib.ones(*a, requires_grad=grads[0]), lib.ones(*b, requires_grad=grads[1])
        matmul = lib.matmul
        results.append(counts(mode, matmul, left, right))
        results.append(counts(mode, summed_backward, matmul, left, right))
    assert results[2:] == results[:2]


def test_nested_counters_each_count_and_a_table_is_printed(capsys):
    """An inner counter counts what runs inside it, the outer one everything; ``display`` prints the modules'
    table on exit; nothing is counted after exit."""
    from ember.utils.flop_counter import FlopCounterMode

    net = ember.nn.Sequential(ember.nn.Linear(4, 3))
    x = ember.ones(2, 4)
    with FlopCounterMode(display=False) as outer:
        net(x)
        with FlopCounterMode(display=True, depth=1) as inner:
            net(x)
    net(x)
    assert inner.get_total_flops() == 48 and outer.get_total_flops() == 96
    assert inner.get_flop_counts() == {"Global": {"aten.addmm": 48}, "Sequential": {"aten.addmm": 48},
                                       "Sequential.0": {"aten.addmm": 48}}
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["Module", "FLOP", "%", "Total"]
    assert [row.split() for row in table[2:]] == [["Sequential", "48.000", "100.00%"],
                                                  ["-", "aten.addmm", "48.000", "100.00%"]]


@pytest.mark.parametrize("lib, mode_cls", LIBS)
def test_a_counter_counts_only_its_own_threads_ops_as_pytorchs(lib, mode_cls):
    """PyTorch's dispatch modes are per thread: a matrix product another thread runs while a counter is entered
    is not counted, one run on the counter's thread is."""
    import threading

    product = lambda: lib.mm(lib.ones(3, 4), lib.ones(4, 5))  # noqa: E731
    with mode_cls(display=False) as counter:
        other = threading.Thread(target=product)
        other.start()
        other.join()
        assert counter.get_total_flops() == 0
        product()
    assert counter.get_total_flops() == 120


def test_custom_mapping_is_refused():
    from ember.utils.flop_counter import FlopCounterMode

    with pytest.raises(NotImplementedError, match="custom_mapping"):
        FlopCounterMode(custom_mapping={"aten.mm": lambda *a, **k: 0})


LIGHTNING_SUMMARY = """
import tempfile, warnings
warnings.filterwarnings("ignore", message=".*(does not have many workers|number of training batches).*")
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from lightning.pytorch.utilities.model_summary import ModelSummary

class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(2, 4, 3), nn.Flatten(), nn.Linear(24, 3))
        self.example_input_array = torch.zeros(5, 2, 8)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, i):
        return self(batch[0]).logsumexp(1).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

model = Model()
trainer = L.Trainer(max_epochs=1, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, default_root_dir=tempfile.mkdtemp())
trainer.fit(model, DataLoader(TensorDataset(torch.zeros(10, 2, 8)), batch_size=5))
summary = ModelSummary(model, max_depth=2)
print(summary.total_flops, sorted((name, {str(k): v for k, v in ops.items()}) for name, ops in summary.flop_counts.items()))
"""


def test_lightning_model_summary_counts_an_example_input_as_pytorch(tmp_path):
    """``Trainer.fit`` of a LightningModule with an ``example_input_array`` while the model summary is on (its
    FlopCounterMode entered) trains under ``ember.compat``, and the summary's FLOPs per layer are those PyTorch's
    FlopCounterMode gives the same model."""
    pytest.importorskip("lightning")
    from torch import nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv1d(2, 4, 3), nn.Flatten(), nn.Linear(24, 3))

        def forward(self, x):
            return self.net(x)

    model = Model()
    with torch.no_grad(), torch.utils.flop_counter.FlopCounterMode(display=False, depth=3) as counter:
        model(torch.zeros(5, 2, 8))
    theirs = counter.get_flop_counts()
    expected = sorted((name, {str(op): n for op, n in theirs.get(f"Model.{name}", {}).items()})
                      for name in ("net", "net.0", "net.1", "net.2"))
    script = tmp_path / "summary.py"
    script.write_text(textwrap.dedent(LIGHTNING_SUMMARY))
    ours = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                          cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.splitlines()[-1] == f"{counter.get_total_flops()} {expected}"
    assert counter.get_total_flops() > 0
