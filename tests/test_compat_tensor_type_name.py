"""Under ``python -m ember.compat`` a tensor's type prints as PyTorch's, ``<class 'torch.Tensor'>``: libraries tell
tensors apart by that string (tensorboardX's ``make_np``, behind every ``add_scalar`` of a tensor, asks whether
``'torch' in str(type(x))``; 649453932/Chinese-Text-Classification-Pytorch's TextRNN logs its dev loss, a tensor,
that way and stops under ember with tensorboardX's NotImplementedError). Imported as ember, nothing changes; what
finds classes by name (pickle, copy, inspect, ember's serialization) keeps working in both."""

import subprocess
import sys

import torch

import ember

SCRIPT = """
import torch
print(str(type(torch.ones(1))), str(torch.Tensor), str(type(torch.nn.Parameter(torch.ones(1)))))
print(str(type(torch.ones(2, 2).max(1))), str(torch.return_types.sort), str(type(torch.linalg.slogdet(torch.eye(2)))))
"""


def _lines(out):
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_tensor_types_print_as_pytorchs_under_compat(tmp_path):
    from conftest import run_under_compat

    expected = " ".join(str(x) for x in (type(torch.ones(1)), torch.Tensor, type(torch.nn.Parameter(torch.ones(1))),
                                         type(torch.ones(2, 2).max(1)), torch.return_types.sort,
                                         type(torch.linalg.slogdet(torch.eye(2)))))
    assert _lines(run_under_compat(SCRIPT, tmp_path)) == expected.split()


def test_importing_ember_changes_no_class_name():
    assert str(type(ember.ones(1))) == "<class 'ember._tensor.Tensor'>"
    assert str(ember.nn.Parameter) == "<class 'ember.nn.parameter.Parameter'>"
    assert ember.Tensor.__module__ == "ember._tensor"


PICKLING = """
import copy, inspect, io, os, pickle, sys
import torch
import ember

folder = sys.argv[1]
p = torch.nn.Parameter(torch.arange(3.0))
model = torch.nn.Linear(2, 2)
t = torch.arange(4.0)[1:]
for x in (t, p, model.weight):
    y = pickle.loads(pickle.dumps(x))
    z = copy.deepcopy(x)
    print(type(y) is type(x), type(z) is type(x), torch.equal(y, x), torch.equal(z, x), isinstance(y, torch.Tensor))
print(inspect.getmodule(torch.Tensor) is torch, inspect.getmodule(torch.nn.Parameter) is torch.nn.parameter)
print(isinstance(p, ember.Tensor), not isinstance(2, torch.Tensor), ember.Tensor is torch.Tensor)
m2 = pickle.loads(pickle.dumps(model))
print(type(m2) is type(model), type(m2.weight) is torch.nn.Parameter)
for fmt in ({}, {"_use_new_zipfile_serialization": True}):
    buf = io.BytesIO()
    torch.save({"t": t, "p": p, "sd": model.state_dict()}, buf, **fmt)
    buf.seek(0)
    back = torch.load(buf)
    print(type(back["t"]) is torch.Tensor, type(back["p"]) is torch.nn.Parameter, torch.equal(back["sd"]["bias"], model.bias))
buf = io.BytesIO()
torch.save(model, buf)
buf.seek(0)
print(type(torch.load(buf, weights_only=False).weight) is torch.nn.Parameter)
r = torch.arange(4.0).reshape(2, 2).max(0)
for y in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r)):
    print(type(y) is type(r), torch.equal(y.indices, r.indices))
with open(os.path.join(folder, "tensors.pkl"), "wb") as f:
    pickle.dump([t, p], f)
print(str(type(t)), str(type(p)))
"""

LOAD_WITHOUT_COMPAT = """
import pickle, sys
import ember
with open(sys.argv[1], "rb") as f:
    t, p = pickle.load(f)
print(type(t) is ember.Tensor, type(p) is ember.nn.Parameter, t.tolist(), p.requires_grad)
"""


def test_pickle_copy_and_save_under_compat_and_a_pickle_read_without_it(tmp_path):
    from conftest import ROOT, run_under_compat

    out = _lines(run_under_compat(PICKLING, tmp_path))
    assert out[:-4] == ["True"] * (len(out) - 4)
    assert out[-4:] == ["<class", "'torch.Tensor'>", "<class", "'torch.nn.parameter.Parameter'>"]
    # a plain ember process (where `import torch` is PyTorch) reads the pickle back as ember's tensors
    done = subprocess.run([sys.executable, "-c", LOAD_WITHOUT_COMPAT, str(tmp_path / "tensors.pkl")],
                          capture_output=True, text=True, timeout=120, env={"PYTHONPATH": ROOT, "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "[1.0,", "2.0,", "3.0]", "True"]
