"""The gradient report against PyTorch (same weights, same batch), its table and chart; anomaly mode."""

import io
import sys
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.diagnostics import grad_report, plot_grad_norms, print_grad_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def twin_models():
    """The same small network in ember and in torch (torch's weights copied over), after one backward."""
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3), torch.nn.Linear(3, 1))
    emodel = ember.nn.Sequential(ember.nn.Linear(5, 8), ember.nn.Tanh(), ember.nn.Linear(8, 3), ember.nn.Linear(3, 1))
    with ember.no_grad():
        for (_, e), (_, t) in zip(emodel.named_parameters(), tmodel.named_parameters()):
            e.copy_(ember.tensor(t.detach().numpy()))
    tmodel[3].bias.requires_grad_(False)
    emodel[3].bias.requires_grad_(False)
    x = np.random.default_rng(0).standard_normal((16, 5)).astype(np.float32)
    for m, model in ((ember, emodel), (torch, tmodel)):
        (model(m.tensor(x)) ** 2).mean().backward()
    return emodel, tmodel


def test_grad_report_matches_torch_statistics():
    emodel, tmodel = twin_models()
    rows = grad_report(emodel)
    expected = [(n, p) for n, p in tmodel.named_parameters() if p.requires_grad]  # frozen 3.bias left out
    assert [r.name for r in rows] == [n for n, _ in expected] == ["0.weight", "0.bias", "2.weight", "2.bias",
                                                                   "3.weight"]
    for r, (_, p) in zip(rows, expected):
        g = p.grad
        assert r.shape == tuple(g.shape)
        np.testing.assert_allclose([r.mean, r.std, r.norm], [g.mean().item(), g.std().item(), g.norm().item()],
                                   rtol=2e-5, atol=1e-7)
        assert r.nonfinite == 0.0


def test_grad_report_counts_nonfinite_and_missing_gradients():
    emodel, _ = twin_models()
    emodel[0].weight.grad[0, :2] = float("nan")
    emodel[0].weight.grad[1, 0] = float("inf")
    emodel[2].bias.grad = None
    rows = {r.name: r for r in grad_report(emodel)}
    assert rows["0.weight"].nonfinite == pytest.approx(3 / 40)
    assert np.isnan(rows["0.weight"].mean) and np.isnan(rows["0.weight"].norm)
    assert rows["2.bias"].mean is None and rows["2.bias"].nonfinite is None


def test_grad_report_accepts_named_pairs_and_rejects_other_input():
    emodel, _ = twin_models()
    assert [r.name for r in grad_report(emodel[2].named_parameters())] == ["weight", "bias"]
    with pytest.raises(TypeError, match="named_parameters"):
        grad_report([emodel[0].weight])


def test_print_grad_report_table():
    emodel, _ = twin_models()
    emodel[2].bias.grad = None
    out = io.StringIO()
    print_grad_report(emodel, file=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["parameter", "shape", "mean", "std", "norm", "non-finite"]
    assert lines[2].startswith("0.weight") and "8x5" in lines[2] and lines[2].endswith("0.0%")
    norm = float(lines[2].split()[4])
    assert norm == pytest.approx(emodel[0].weight.grad.norm().item(), rel=1e-3)
    assert any(line.startswith("2.bias") and "grad is None" in line for line in lines)


def test_plot_grad_norms_writes_a_png(tmp_path):
    emodel, _ = twin_models()
    emodel[2].bias.grad = None
    emodel[0].bias.grad[0] = float("nan")
    path = tmp_path / "norms.png"
    rows = plot_grad_norms(emodel, str(path))
    assert len(rows) == 5
    assert path.read_bytes()[:8] == PNG_SIGNATURE and path.stat().st_size > 5000


def test_plot_without_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    emodel, _ = twin_models()
    for name in [n for n in sys.modules if n == "matplotlib" or n.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib...` fail
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_grad_norms(emodel, str(tmp_path / "x.png"))


# ----------------------------------------------------------------------------- anomaly mode
NAN_GRAPHS = {
    "sqrt(0) * 0": (lambda m, x: (x.sqrt() * 0).sum(), "SqrtBackward0"),
    "log(negative) squared": (lambda m, x: (x.log() * x.log()).sum(), "MulBackward0"),
}


def _warned(caught) -> list:
    """The warnings' texts, without the C++ source line PyTorch's end with."""
    return [str(w.message).partition(" (Triggered internally at")[0] for w in caught]


@pytest.mark.parametrize("case", list(NAN_GRAPHS))
def test_detect_anomaly_names_the_same_op_as_torch(case):
    """The error names the op; the forward call's traceback comes as a warning, after detect_anomaly's own, as
    PyTorch's (the error itself holds no traceback)."""
    fn, op = NAN_GRAPHS[case]
    values = np.array([0.0, -1.0, 2.0], dtype=np.float32)
    messages, warned = [], []
    for m in (ember, torch):
        x = m.tensor(values, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                loss = fn(m, x)  # the forward line the warning must point at
                with pytest.raises(RuntimeError, match=f"Function '{op}' returned nan") as err:
                    loss.backward()
        messages.append(str(err.value))
        warned.append(_warned(caught))
    assert messages[0] == messages[1] == f"Function '{op}' returned nan values in its 0th output."
    assert len(warned[0]) == len(warned[1]) == 2 and warned[0][0] == warned[1][0]
    head = f"Error detected in {op}. Traceback of forward call that caused the error:"
    # the forward traceback, ending in the user's frames: the test's line, then the lambda the op is in
    tails = [trace.splitlines()[:1] + trace.splitlines()[-4:] for trace in (warned[0][1], warned[1][1])]
    assert tails[0] == tails[1]
    assert tails[0][:3] == [head, f'  File "{__file__}", line {_line_of("loss = fn(m, x)")}, in '
                            "test_detect_anomaly_names_the_same_op_as_torch",
                            "    loss = fn(m, x)  # the forward line the warning must point at"]


def _line_of(text: str) -> int:
    with open(__file__) as source:
        return next(i for i, line in enumerate(source, 1) if text in line and "_line_of" not in line)


def test_without_anomaly_mode_nan_gradients_pass_silently_as_in_torch():
    values = np.array([0.0, 1.0], dtype=np.float32)
    grads = []
    for m in (ember, torch):
        x = m.tensor(values, requires_grad=True)
        (x.sqrt() * 0).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    assert np.isnan(grads[0][0])


def test_set_detect_anomaly_and_the_decorator():
    assert not ember.autograd.is_anomaly_enabled()
    ember.autograd.set_detect_anomaly(True)
    try:
        assert ember.autograd.is_anomaly_enabled()
        x = ember.tensor([0.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="SqrtBackward0"), pytest.warns(UserWarning, match="Error detected"):
            (x.sqrt() * 0).sum().backward()
    finally:
        ember.autograd.set_detect_anomaly(False)

    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):  # (once, made: not per call)
        @ember.autograd.detect_anomaly()
        def inside():
            return ember.autograd.is_anomaly_enabled()

    assert inside() and not ember.autograd.is_anomaly_enabled()


@pytest.mark.filterwarnings("ignore")  # torch's anomaly mode warns with the forward trace
def test_check_nan_false_keeps_anomaly_mode_on_without_the_nan_check_as_torch():
    # detect_anomaly(check_nan=False) turns anomaly mode on (traces recorded, is_anomaly_enabled True) but lets
    # NaN gradients through; set_detect_anomaly also takes check_nan and is a context manager as well as a call.
    outcomes = []
    for m in (ember, torch):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        with m.autograd.detect_anomaly(check_nan=False):
            enabled, checking = m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()
            (x.sqrt() * 0).sum().backward()
        with m.autograd.set_detect_anomaly(True, check_nan=False) as ctx:
            inside = (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled(), ctx)
        after = (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled())
        m.autograd.set_detect_anomaly(True)
        called = (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled())
        m.autograd.set_detect_anomaly(False)
        outcomes.append((enabled, checking, np.isnan(x.grad.numpy()).tolist(), inside, after, called,
                         m.is_anomaly_enabled()))
    assert outcomes[0] == outcomes[1] == (True, False, [True, False], (True, False, None), (False, True),
                                          (True, True), False)


def test_anomaly_on_a_graph_built_before_it_was_enabled():
    warned = []
    for m in (ember, torch):
        x = m.tensor([0.0], requires_grad=True)
        loss = (x.sqrt() * 0).sum()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan"):
                loss.backward()
        warned.append(_warned(caught))
    assert warned[0] == warned[1]
    assert warned[0][1] == ("Error detected in SqrtBackward0. No forward pass information available. Enable detect "
                            "anomaly during forward pass for more information.")


def test_anomaly_warns_for_any_error_in_backward_as_torch():
    """A saved tensor changed in place: the error as without anomaly mode, the forward call as a warning."""
    out = []
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                x = m.ones(2, requires_grad=True)
                y = x.exp()
                with m.no_grad():
                    y.add_(1)
                with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                    y.sum().backward()
        out.append([w.splitlines()[:1] + w.splitlines()[-2:] for w in _warned(caught)])
    assert out[0] == out[1]
    assert out[0][1] == ["Error detected in ExpBackward0. Traceback of forward call that caused the error:",
                         f'  File "{__file__}", line {_line_of("y = x.exp()")}, in '
                         "test_anomaly_warns_for_any_error_in_backward_as_torch", "    y = x.exp()"]


def test_one_element_gradient_shows_a_dash_for_std_without_a_warning():
    """PyTorch's std() of one element is NaN (with a warning); the table shows "—" there, no NaN, no warning."""
    torch.manual_seed(0)
    tmodel = torch.nn.Linear(3, 1)
    emodel = ember.nn.Linear(3, 1)
    with ember.no_grad():
        for (_, e), (_, t) in zip(emodel.named_parameters(), tmodel.named_parameters()):
            e.copy_(ember.tensor(t.detach().numpy()))
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    for m, model in ((ember, emodel), (torch, tmodel)):
        model(m.tensor(x)).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = {r.name: r for r in grad_report(emodel)}
        out = io.StringIO()
        print_grad_report(emodel, file=out)
    with pytest.warns(UserWarning):
        assert np.isnan(tmodel.bias.grad.std().item())
    assert rows["bias"].shape == (1,) and np.isnan(rows["bias"].std)
    assert rows["bias"].mean == pytest.approx(tmodel.bias.grad.mean().item())
    assert rows["weight"].std == pytest.approx(tmodel.weight.grad.std().item(), rel=2e-5)
    bias_line = next(line for line in out.getvalue().splitlines() if line.startswith("bias"))
    assert bias_line.split()[1:] == ["1", f"{rows['bias'].mean:.4e}", "—", f"{rows['bias'].norm:.4e}", "0.0%"]
    assert "nan" not in out.getvalue().lower()


def _first_anomaly_line(m, values, dtype):
    x = m.tensor(values, dtype=dtype, requires_grad=True)
    with pytest.warns(UserWarning), m.autograd.detect_anomaly():
        loss = x.log().abs().sum()  # d/dx at 0: inf (real), nan (complex, through abs)
        try:
            loss.backward()
        except RuntimeError as err:
            return str(err).splitlines()[0]
    return x.grad.tolist()


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_anomaly_mode_checks_nan_only_as_torch(dtype):
    """An inf gradient is no anomaly (PyTorch checks isnan only); a NaN one is, complex gradients included."""
    e, t = (_first_anomaly_line(m, [0.0, 1.0], getattr(m, dtype)) for m in (ember, torch))
    assert e == t, (e, t)
    if dtype == "float32":
        assert t == [float("-inf"), 0.0]
    else:
        assert t == "Function 'AbsBackward0' returned nan values in its 0th output."


def test_anomaly_names_a_failing_accumulator_as_torch():
    """A leaf's hook that raises under anomaly mode: the warning names the node by its full name, as PyTorch's
    (``torch::autograd::AccumulateGrad``, where a repr shows ``AccumulateGrad``)."""
    out = []
    for m in (ember, torch):
        x = m.ones(2, requires_grad=True)

        def refuse(g):
            raise ValueError("refused")

        x.register_hook(refuse)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                y = (x * 2).sum()
                with pytest.raises(ValueError, match="refused"):
                    y.backward()
        out.append([w.split(".")[0] for w in _warned(caught)])
    assert out[0] == out[1] == ["Anomaly Detection has been enabled", "Error detected in torch::autograd::AccumulateGrad"]


def _refuse(*args):
    raise ValueError("refused")


def _anomaly_warnings(m, make, run) -> list:
    """The warnings' first sentences when ``run(make())`` raises ValueError("refused") under anomaly mode (the
    graph ``make`` builds recorded under it too)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with m.autograd.detect_anomaly():
            made = make()
            with pytest.raises(ValueError, match="refused"):
                run(made)
    return [w.split(".")[0] for w in _warned(caught)]


def _callback_failure(m, queue):
    """A callback queued during backward that raises under anomaly mode: the error after the walk is no node's."""
    x = m.ones(2, requires_grad=True)

    def make():
        y = (x * 2).exp()
        y.register_hook(lambda g: queue(_refuse))
        return y

    return _anomaly_warnings(m, make, lambda y: y.sum().backward())


def test_anomaly_names_no_node_for_a_failing_callback_as_torch():
    ours = _callback_failure(ember, ember.autograd.queue_callback)
    assert ours == _callback_failure(torch, torch.autograd.Variable._execution_engine.queue_callback)
    assert ours == ["Anomaly Detection has been enabled"]


def _accumulator_failure_with_inputs(m):
    """``backward(inputs=...)``: a leaf's hook that raises while its gradient is accumulated names the leaf's
    accumulator, as PyTorch's engine runs it as a node."""
    x = m.ones(2, requires_grad=True)
    w = m.ones(2, requires_grad=True)
    w.register_hook(_refuse)
    return _anomaly_warnings(m, lambda: (x * w).exp().sum(), lambda y: y.backward(inputs=[x, w]))


def test_anomaly_names_the_accumulator_under_backward_inputs_as_torch():
    assert _accumulator_failure_with_inputs(ember) == _accumulator_failure_with_inputs(torch)
