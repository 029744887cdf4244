"""ember warns as PyTorch does: each call below runs under torch and under ember with the same arguments and must
give the same warnings (category and text, in order), none that torch does not give, each attributed to the
caller's line (this file's name, through nn.Module calls, optimizers and schedulers too) or, where PyTorch's names
a frame of its own (weight_norm's), to ember's module of that name. PyTorch's warnings
given once per process are checked in a fresh interpreter."""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def text(message) -> str:
    """A warning's text without PyTorch's C++ location, with ember's names as torch's (``ember.Size``)."""
    return str(message).split(" (Triggered internally at")[0].replace("ember.", "torch.")


def caught(lib, call):
    """([(category, text, filename)], the exception type raised or None) of ``call(lib)``."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            call(lib)
            raised = None
        except Exception as e:  # noqa: BLE001 - compared with torch's below
            raised = type(e)
    return [(w.category, text(w.message), w.filename) for w in record], raised


def builtin_base(error: type) -> type:
    return next(b for b in error.__mro__ if b.__module__ == "builtins")


def points_where_pytorch_does(got: str, expected: str, callers: tuple) -> bool:
    """Whether ember's warning names the caller's line (a file of ``callers``) where PyTorch's does, or, where
    PyTorch's names a frame of its own that issues it (``nn.utils.weight_norm``'s ``@deprecated``, ``jit.script``'s
    DeprecationWarning, contextlib's frame for ``sdp_kernel``), a frame of ember's own."""
    if got in callers:
        return True
    return expected not in callers and got.startswith(os.path.dirname(ember.__file__))


def same_warnings(call):
    got, got_raised = caught(ember, call)
    expected, expected_raised = caught(torch, call)
    assert [w[:2] for w in got] == [w[:2] for w in expected]
    assert all(points_where_pytorch_does(g[2], e[2], (__file__,)) for g, e in zip(got, expected)), \
        "a warning not attributed to the caller's line"
    if expected_raised is None:
        assert got_raised is None, f"ember raised {got_raised.__name__}, PyTorch did not"
    else:
        assert got_raised is not None and issubclass(got_raised, builtin_base(expected_raised))
    return expected


F = lambda m: m.nn.functional  # noqa: E731


def param(m, grad=None):
    p = m.nn.Parameter(m.ones(2))
    p.grad = grad
    return p


def sgd(m, **kw):
    return m.optim.SGD([param(m, m.ones(2))], lr=0.1, **kw)


def scheduler_stepped_first(m):
    opt = sgd(m)
    m.optim.lr_scheduler.StepLR(opt, 1).step()


def scheduler_in_order(m):
    opt = sgd(m)
    sched = m.optim.lr_scheduler.ExponentialLR(opt, 0.5)
    opt.step()
    sched.step()
    return sched.get_last_lr()


def scheduler_epoch(m):
    opt = sgd(m)
    sched = m.optim.lr_scheduler.MultiStepLR(opt, [2])
    opt.step()
    sched.step(3)


def plateau_epoch(m):
    opt = sgd(m)
    opt.step()
    m.optim.lr_scheduler.ReduceLROnPlateau(opt).step(1.0, epoch=2)


def non_leaf_grad_after_backward(m):
    x = m.ones(3, requires_grad=True)
    y = x * 2
    y.sum().backward()
    return y.grad


def clipped(m, value):
    p = param(m, m.tensor([value, 1.0]))
    return m.nn.utils.clip_grad_norm_([p], 1.0), p.grad


def encoder(m, **kw):
    return m.nn.TransformerEncoder(m.nn.TransformerEncoderLayer(4, kw.pop("nhead", 2), **kw), 2)


PADDING = [[False, False, True], [False, False, False]]


def attention_with_masks(m, attn_mask):
    x = m.ones(2, 3, 8)
    return m.nn.MultiheadAttention(8, 2, batch_first=True)(x, x, x, key_padding_mask=m.tensor(PADDING),
                                                            attn_mask=attn_mask)


def encoder_with_masks(m, mask):
    layer = m.nn.TransformerEncoderLayer(8, 2, batch_first=True)
    return m.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)(m.ones(2, 3, 8), mask=mask,
                                                                          src_key_padding_mask=m.tensor(PADDING))


WARNS = {
    "F.softmax implicit dim": lambda m: F(m).softmax(m.ones(2, 3)),
    "F.softmax implicit dim 1-D": lambda m: F(m).softmax(m.ones(3)),
    "F.log_softmax implicit dim": lambda m: F(m).log_softmax(m.ones(2, 3, 4)),
    "F.softmin implicit dim": lambda m: F(m).softmin(m.ones(2, 3)),
    "nn.Softmax implicit dim": lambda m: m.nn.Softmax()(m.ones(2, 3)),
    "nn.LogSoftmax implicit dim": lambda m: m.nn.LogSoftmax()(m.ones(2, 3)),
    "nn.Softmin implicit dim": lambda m: m.nn.Softmin()(m.ones(2, 3, 4, 5)),
    "mse_loss target size": lambda m: F(m).mse_loss(m.ones(3, 1), m.ones(3)),
    "l1_loss target size": lambda m: F(m).l1_loss(m.ones(2, 3), m.ones(3)),
    "smooth_l1_loss target size": lambda m: F(m).smooth_l1_loss(m.ones(3, 1), m.ones(3)),
    "smooth_l1_loss beta 0 target size": lambda m: F(m).smooth_l1_loss(m.ones(3, 1), m.ones(3), beta=0.0),
    "HuberLoss target size": lambda m: m.nn.HuberLoss(delta=0.5)(m.ones(2, 3), m.ones(1, 3)),
    "huber_loss target size": lambda m: F(m).huber_loss(m.ones(3, 1), m.ones(3)),
    "MSELoss target size": lambda m: m.nn.MSELoss()(m.ones(3, 1), m.ones(3)),
    "L1Loss target size not broadcastable": lambda m: m.nn.L1Loss()(m.ones(3), m.ones(4)),
    "mse_loss size_average": lambda m: F(m).mse_loss(m.ones(3), m.ones(3), size_average=False),
    "MSELoss reduce": lambda m: m.nn.MSELoss(reduce=False),
    "CrossEntropyLoss size_average": lambda m: m.nn.CrossEntropyLoss(size_average=True),
    "nll_loss reduce": lambda m: F(m).nll_loss(m.ones(2, 3), m.tensor([0, 1]), reduce=False),
    "BCELoss size_average": lambda m: m.nn.BCELoss(size_average=False)(m.ones(3) / 2, m.ones(3)),
    "kl_div mean": lambda m: F(m).kl_div(m.ones(2, 3), m.ones(2, 3)),
    "KLDivLoss mean": lambda m: m.nn.KLDivLoss()(m.ones(2, 3), m.ones(2, 3)),
    "KLDivLoss size_average": lambda m: m.nn.KLDivLoss(size_average=False)(m.ones(2, 3), m.ones(2, 3)),
    "std of one element": lambda m: m.ones(1).std(),
    "var of one element": lambda m: m.ones(1).var(),
    "std over a dim of one": lambda m: m.ones(3, 1).std(dim=1),
    "var correction 2 of two": lambda m: m.var(m.ones(2), correction=2),
    "var_mean of one element": lambda m: m.var_mean(m.ones(1)),
    "std_mean of one element": lambda m: m.std_mean(m.ones(1)),
    "std of nothing": lambda m: m.ones(0).std(),
    "std backward of one element": lambda m: m.ones(1, requires_grad=True).std().backward(),
    "grad of a non-leaf": lambda m: (m.ones(3, requires_grad=True) * 2).grad,
    "grad of a non-leaf after backward": non_leaf_grad_after_backward,
    "tensor(tensor)": lambda m: m.tensor(m.ones(3, requires_grad=True)),
    "new_tensor(tensor)": lambda m: m.ones(2).new_tensor(m.ones(2)),
    "scheduler before optimizer": scheduler_stepped_first,
    "scheduler get_lr outside step": lambda m: m.optim.lr_scheduler.StepLR(sgd(m), 1).get_lr(),
    "cosine scheduler get_lr outside step": lambda m: m.optim.lr_scheduler.CosineAnnealingLR(sgd(m), 3).get_lr(),
    "scheduler step(epoch)": scheduler_epoch,
    "ReduceLROnPlateau step(epoch)": plateau_epoch,
    "optimizer duplicate parameters": lambda m: (lambda p: m.optim.SGD([p, p], lr=0.1))(param(m)),
    "clip_grad_norm deprecated": lambda m: m.nn.utils.clip_grad_norm([param(m, m.ones(2))], 1.0),
    "trunc_normal_ mean far from [a, b]": lambda m: m.nn.init.trunc_normal_(m.ones(3), mean=5.0, std=1.0),
    "init of a zero-element tensor": lambda m: m.nn.init.kaiming_uniform_(m.ones(0, 3)),
    "LSTM dropout with one layer": lambda m: m.nn.LSTM(3, 4, dropout=0.5),
    "DataLoader pin_memory": lambda m: list(m.utils.data.DataLoader([m.ones(2)], pin_memory=True)),
    "cuda.amp.GradScaler": lambda m: m.cuda.amp.GradScaler(),
    "amp.GradScaler cuda": lambda m: m.amp.GradScaler("cuda"),
    "cpu.amp.GradScaler": lambda m: m.cpu.amp.GradScaler(),
    "cuda.amp.autocast": lambda m: m.cuda.amp.autocast(),
    "cpu.amp.autocast": lambda m: m.cpu.amp.autocast(),
    "autocast cuda": lambda m: m.autocast("cuda"),
    "autocast cpu float64": lambda m: m.autocast("cpu", dtype=m.float64),
    "TransformerEncoder sequence-first": lambda m: encoder(m),
    "TransformerEncoder norm_first": lambda m: encoder(m, batch_first=True, norm_first=True),
    "TransformerEncoder odd heads": lambda m: encoder(m, batch_first=True, nhead=1),
    "upsample deprecated": lambda m: F(m).upsample(m.ones(1, 1, 4), scale_factor=2),
    "weight_norm deprecated": lambda m: m.nn.utils.weight_norm(m.nn.Linear(2, 2)),
    "MultiheadAttention mismatched masks": lambda m: attention_with_masks(m, m.zeros(3, 3)),
    "TransformerEncoder mismatched masks": lambda m: encoder_with_masks(m, m.zeros(3, 3)),
    "TransformerEncoderLayer mismatched masks": lambda m: m.nn.TransformerEncoderLayer(8, 2, batch_first=True)(
        m.ones(2, 3, 8), src_mask=m.zeros(3, 3), src_key_padding_mask=m.tensor(PADDING)),
}

SILENT = {
    "clip_grad_norm_ of an inf gradient": lambda m: clipped(m, float("inf")),
    "clip_grad_norm_ of a NaN gradient": lambda m: clipped(m, float("nan")),
    "softmax with dim": lambda m: F(m).softmax(m.ones(2, 3), dim=0),
    "nn.Softmax with dim": lambda m: m.nn.Softmax(dim=1)(m.ones(2, 3)),
    "std of two elements": lambda m: m.ones(2).std(),
    "var_mean over a dim": lambda m: m.var_mean(m.ones(2, 3), dim=1),
    "scheduler in order": scheduler_in_order,
    "kl_div batchmean": lambda m: F(m).kl_div(m.ones(2, 3), m.ones(2, 3), reduction="batchmean"),
    "mse_loss same shapes": lambda m: m.nn.MSELoss()(m.ones(3), m.ones(3)),
    "meshgrid with indexing": lambda m: m.meshgrid(m.ones(2), m.ones(3), indexing="ij"),
    "T of a matrix": lambda m: m.ones(2, 3).T,
    "tensor of one-element tensors": lambda m: m.tensor([m.tensor(1.0), m.tensor(2.5)]),
    "grad of a leaf": lambda m: m.ones(2, requires_grad=True).grad,
    "grad of a retained non-leaf": lambda m: (lambda y: (y.retain_grad(), y.grad))(m.ones(2, requires_grad=True) * 2),
    "log of zero": lambda m: m.log(m.zeros(2)),
    "zero over zero": lambda m: m.zeros(2) / m.zeros(2),
    "TransformerEncoder fast-path layer": lambda m: encoder(m, batch_first=True),
    "amp.GradScaler cuda disabled": lambda m: m.amp.GradScaler("cuda", enabled=False),
    "DataLoader without pin_memory": lambda m: list(m.utils.data.DataLoader([m.ones(2)])),
    "MultiheadAttention masks of one type": lambda m: attention_with_masks(m, m.zeros(3, 3, dtype=m.bool)),
    "TransformerEncoder masks of one type": lambda m: encoder_with_masks(m, m.zeros(3, 3, dtype=m.bool)),
}


@pytest.mark.parametrize("call", WARNS.values(), ids=WARNS.keys())
def test_warns_as_torch(call):
    assert same_warnings(call), "PyTorch gave no warning: the case tests nothing"


@pytest.mark.parametrize("call", SILENT.values(), ids=SILENT.keys())
def test_silent_as_torch(call):
    assert same_warnings(call) == []


# PyTorch's TORCH_WARN_ONCE warnings: the first call of the process warns, the second does not
ONCE = {
    "meshgrid without indexing": "m.meshgrid(m.ones(2), m.ones(3))",
    "T of a 3-D tensor": "m.ones(2, 3, 4).T",
    "T of a 0-D tensor": "m.tensor(1.0).T",
    "mT of a 0-D tensor": "m.tensor(1.0).mT",
    "H of a 0-D tensor": "m.tensor(1.0).H",
    "mH of a 0-D tensor": "m.tensor(1.0).mH",
    "adjoint of a 0-D tensor": "m.tensor(1.0).adjoint()",
    "set_default_tensor_type": "m.set_default_tensor_type(m.FloatTensor)",
    "lu": "m.lu(m.eye(2))",
    "stft without a window": "m.stft(m.ones(64), 16, return_complex=True)",
    "stft return_complex=False": "m.stft(m.ones(64), 16, window=m.ones(16), return_complex=False)",
    "istft without a window": "m.istft(m.ones(9, 5, dtype=m.complex64), 16)",
    "where with a uint8 condition": "m.where(m.tensor([1, 0], dtype=m.uint8), m.ones(2), m.zeros(2))",
    "cross without dim": "m.cross(m.ones(3, 3), m.ones(3, 3))",
}

SCRIPT = """
import json, sys, warnings
import torch
import ember

CASES = {%s}
results = {}
for name, call in CASES.items():
    for lib in (torch, ember):
        runs = []
        for _ in range(2):
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                call(lib)
            runs.append([(w.category.__name__, str(w.message).split(" (Triggered internally at")[0]
                          .replace("ember.", "torch."), w.filename) for w in record])
        results.setdefault(name, {})[lib.__name__] = runs
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def once_results(tmp_path_factory):
    script = tmp_path_factory.mktemp("once") / "once.py"
    script.write_text(textwrap.dedent(SCRIPT % ", ".join(f"{k!r}: lambda m: {v}" for k, v in ONCE.items())))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    return str(script), json.loads(out.stdout)


@pytest.mark.parametrize("name", ONCE)
def test_once_per_process_as_torch(once_results, name):
    script, results = once_results
    expected, got = results[name]["torch"], results[name]["ember"]
    assert len(expected[0]) == 1 and expected[1] == [], "PyTorch no longer warns once here"
    assert [w[:2] for w in got[0]] == [w[:2] for w in expected[0]] and got[1] == []
    assert got[0][0][2] == script


SCALAR_SCRIPT = """
import json, warnings
import torch
import ember


def run(m):
    x = m.tensor(2.5, requires_grad=True)
    steps = {
        "float in no_grad": lambda: m.no_grad().__enter__() and None,
        "int": lambda: int(x), "item": lambda: x.item(), "bool": lambda: bool(x), "tolist": lambda: x.tolist(),
        "float of a tensor not requiring grad": lambda: float(m.tensor(1.0)),
        "complex of a two-element tensor": lambda: complex(m.ones(2, requires_grad=True)),
        "complex": lambda: complex(x), "float after complex": lambda: float(x),
    }
    seen = []
    for name, step in steps.items():
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            try:
                if name == "float in no_grad":
                    with m.no_grad():
                        float(x)
                else:
                    step()
                error = None
            except Exception as e:
                error = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"][0]
        seen.append([name, error, [(w.category.__name__, str(w.message).split(" (Triggered")[0], w.filename)
                                   for w in record]])
    return seen


print(json.dumps({"torch": run(torch), "ember": run(ember)}))
"""


def test_scalar_of_a_grad_tensor_warns_once_as_torch(tmp_path):
    """float(t) / complex(t) of a tensor requiring grad in grad mode: PyTorch's UserWarning, once per process (a
    warning comes before a two-element tensor's error; no_grad mode, int(), item(), bool() neither warn nor use up
    the once)."""
    script = tmp_path / "scalar.py"
    script.write_text(SCALAR_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert [[n, e, [w[:2] for w in ws]] for n, e, ws in results["ember"]] == \
        [[n, e, [w[:2] for w in ws]] for n, e, ws in results["torch"]]
    warned = [ws for _, _, ws in results["ember"] if ws]
    assert len(warned) == 1 and warned[0][0][0] == "UserWarning" and warned[0][0][2] == str(script)
    assert warned[0][0][1].startswith("Converting a tensor with requires_grad=True to a scalar")



GRAD_TENSORS_IN_LIST_SCRIPT = """
import json, sys, warnings
import torch
import ember


def run(m, cases):
    loss = (m.arange(3.0, requires_grad=True) * 2).sum()
    pair = [loss, loss * 3]
    steps = {
        "tensor": lambda: m.tensor(pair), "float64": lambda: m.tensor(pair, dtype=m.float64),
        "complex64": lambda: m.tensor(pair, dtype=m.complex64), "nested": lambda: m.tensor([[loss], [loss]]),
        "one-element rows": lambda: m.tensor([loss.reshape(1), loss.reshape(1, 1)]),
        "as_tensor": lambda: m.as_tensor(pair), "Tensor": lambda: m.Tensor(pair),
        "FloatTensor": lambda: m.FloatTensor(pair), "mixed with numbers": lambda: m.tensor([1.0, loss]),
        "detached": lambda: m.tensor([loss.detach()]),
        "no_grad": lambda: m.no_grad()(m.tensor)([m.ones(2, requires_grad=True)[0], loss]),
        "float": lambda: m.tensor(float(loss)),
    }
    seen = []
    for name in cases:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            values = steps[name]()
        seen.append([name, str(values.dtype).split(".")[-1], [[v.real, v.imag] if isinstance(v, complex) else v
                                               for v in values.flatten().tolist()],
                     [(w.category.__name__, str(w.message).split(" (Triggered")[0], w.filename) for w in record]])
    return seen


cases = sys.argv[1].split(",")
print(json.dumps({"torch": run(torch, cases), "ember": run(ember, cases)}))
"""


@pytest.mark.parametrize("cases", [
    # a detached tensor, or no_grad mode: no warning, and the once is not used up
    "detached,no_grad,tensor,float64,float",
    "complex64,mixed with numbers", "nested,one-element rows,as_tensor", "Tensor,FloatTensor", "float,tensor"])
def test_grad_tensors_in_a_list_warn_as_float_does_as_torch(tmp_path, cases):
    """A tensor built from a list holding tensors that require grad: PyTorch reads each through float(t) (complex
    for a complex dtype), so float's warning fires at the caller's line,
    once per process with float(t)'s own: ``torch.tensor([loss_a, loss_b])`` detaches the losses. Each group runs
    in a fresh process, its first case that reads a tensor requiring grad the one that warns."""
    script = tmp_path / "grad_list.py"
    script.write_text(GRAD_TENSORS_IN_LIST_SCRIPT)
    out = subprocess.run([sys.executable, str(script), cases], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert results["ember"] == results["torch"]
    names = cases.split(",")
    first = next(i for i, n in enumerate(names) if n not in ("detached", "no_grad"))
    for i, (name, _, _, warned) in enumerate(results["ember"]):
        assert len(warned) == (i == first), name
    message, filename = results["ember"][first][3][0][1:]
    assert message.startswith("Converting a tensor with requires_grad=True to a scalar") and filename == str(script)
