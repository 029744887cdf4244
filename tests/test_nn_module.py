"""Module API against torch: registration, traversal, state_dict, load_state_dict, hooks, modes, repr, containers."""

import copy
import runpy
import sys
from collections import OrderedDict

import numpy as np
import pytest
import torch
from conftest import seed_example
from nn_oracle import compare_module, ember_state
from oracle import assert_close

import ember
import ember.nn as nn


def mlp(m, input_dim=12, hidden=8, classes=3):
    """The MLP of examples/training_loop.py (784-256-256-10 there), small, for either framework."""

    class MLPModel(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = m.nn.Linear(input_dim, hidden)
            self.bn1 = m.nn.BatchNorm1d(hidden)
            self.fc2 = m.nn.Linear(hidden, hidden)
            self.bn2 = m.nn.BatchNorm1d(hidden)
            self.fc3 = m.nn.Linear(hidden, classes)
            self.relu = m.nn.ReLU()
            self.dropout = m.nn.Dropout(0.3)

        def forward(self, x):
            x = self.dropout(self.relu(self.bn1(self.fc1(x))))
            x = self.dropout(self.relu(self.bn2(self.fc2(x))))
            return self.fc3(x)

    return MLPModel()


def test_state_dict_keys_order_and_repr_match_torch():
    e, t = mlp(ember), mlp(torch)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert repr(e) == repr(t)
    for k, v in e.state_dict().items():
        assert tuple(v.shape) == tuple(t.state_dict()[k].shape), k
        assert v.requires_grad is False


def test_mlp_eval_matches_torch():
    x = np.random.default_rng(0).standard_normal((6, 12)).astype(np.float32)
    compare_module(mlp(ember), mlp(torch), x, train=False)


def test_load_state_dict_strict_and_incompatible_keys():
    e = mlp(ember)
    sd = ember_state(mlp(torch))
    assert repr(e.load_state_dict(sd)) == "<All keys matched successfully>"
    del sd["fc1.bias"]
    sd["extra.weight"] = ember.zeros(2)
    with pytest.raises(RuntimeError) as err:
        e.load_state_dict(sd)
    msg = str(err.value)
    assert msg.startswith("Error(s) in loading state_dict for MLPModel:")
    assert 'Missing key(s) in state_dict: "fc1.bias".' in msg and 'Unexpected key(s) in state_dict: "extra.weight".' in msg
    result = e.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc1.bias"] and result.unexpected_keys == ["extra.weight"]
    missing, unexpected = result
    assert missing == ["fc1.bias"]
    sd["fc1.bias"] = ember.zeros(5)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.bias"):
        e.load_state_dict(sd, strict=False)


def test_unexpected_keys_are_listed_in_pytorchs_module_order():
    """PyTorch reports an unexpected key from the deepest module on its path, modules parents first: a key under
    a later module comes after one under an earlier module whatever the dict's order (ember kept the dict's)."""
    def build(m):
        net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.Sequential(m.nn.Linear(2, 2), m.nn.Tanh()))
        net.scales = m.nn.ParameterList([m.nn.Parameter(m.ones(1))])
        return net

    keys = ["scales.1", "stray", "1.0.extra", "1.1.weight", "0.other", "1.2.bias", "1.junk"]
    results = []
    for m in (torch, ember):
        sd = build(m).state_dict()
        sd.update({k: m.zeros(1) for k in keys})
        for strict in (False, True):
            try:
                result = build(m).load_state_dict(sd, strict=strict)
                results.append((result.missing_keys, result.unexpected_keys))
            except RuntimeError as e:
                results.append(str(e).replace("torch.", "ember."))
    assert results[2:] == results[:2]
    assert results[0][1] == ["stray", "0.other", "1.2.bias", "1.junk", "1.0.extra", "1.1.weight", "scales.1"]


def test_load_state_dict_copies_values_and_casts():
    lin = nn.Linear(2, 3)
    w = lin.weight
    lin.load_state_dict({"weight": ember.ones(3, 2, dtype=ember.float64), "bias": ember.zeros(3)})
    assert lin.weight is w and lin.weight.dtype == ember.float32
    assert np.all(lin.weight.detach().numpy() == 1)
    new = ember.full((3, 2), 2.0)
    lin.load_state_dict({"weight": new, "bias": ember.zeros(3)}, assign=True)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad


def test_parameter():
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    t = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert p.requires_grad and isinstance(p, ember.Tensor) and p.is_leaf
    assert repr(p).replace("ember", "torch") == repr(t)
    assert not nn.Parameter(ember.zeros(2), requires_grad=False).requires_grad
    assert type(p * 2) is ember.Tensor
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad and q._data is not p._data
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(ember.tensor([1, 2]))


def test_deepcopy_drops_a_parameters_grad_as_torch_does():
    # PyTorch's Parameter deepcopy keeps the data, not .grad (a plain tensor's deepcopy keeps both).
    for fw in (ember, torch):
        m = fw.nn.Linear(2, 2)
        m(fw.ones(1, 2)).sum().backward()
        t = fw.ones(2, requires_grad=True)
        t.grad = fw.ones(2)
        assert copy.deepcopy(m).weight.grad is None, fw.__name__
        assert copy.deepcopy(t).grad is not None, fw.__name__


def test_registration_rules():
    m = nn.Module()
    m.w = nn.Parameter(ember.zeros(2))
    m.sub = nn.Linear(2, 2)
    m.register_buffer("buf", ember.ones(2))
    m.register_buffer("tmp", ember.ones(1), persistent=False)
    m.plain = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"]
    assert list(m.state_dict()) == ["w", "buf", "sub.weight", "sub.bias"]
    assert [n for n, _ in m.named_buffers()] == ["buf", "tmp"]
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        m.w = ember.zeros(2)
    m.w = None
    assert m.w is None and "w" not in m.state_dict()
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", ember.zeros(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    # A class where an instance was meant (nn.Sequential(nn.Linear(2, 3), nn.ReLU)): PyTorch names the class,
    # ember too, and says to instantiate it (not "builtins.type is not a Module subclass").
    with pytest.raises(TypeError) as theirs:
        torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU)
    with pytest.raises(TypeError) as ours:
        ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU)
    assert str(theirs.value) == "torch.nn.modules.activation.ReLU is not a Module subclass"
    assert str(ours.value).startswith("ember.nn.modules.activation.ReLU is not a Module subclass")
    assert "ReLU(...)" in str(ours.value)
    with pytest.raises(TypeError, match="buffer"):
        m.register_buffer("b2", 3)
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        _ = m.nope
    del m.sub
    assert "sub" not in m._modules
    m.buf = ember.zeros(2)
    assert np.all(m.buf.numpy() == 0) and "buf" in m._buffers

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_get_submodule_parameter_buffer():
    e = mlp(ember)
    assert e.get_submodule("bn1") is e.bn1 and e.get_submodule("") is e
    assert e.get_parameter("fc2.bias") is e.fc2.bias
    assert e.get_buffer("bn2.running_var") is e.bn2.running_var
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        e.get_submodule("nope")
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        e.get_parameter("bn1.running_mean")


def test_train_eval_zero_grad_requires_grad_apply():
    e = mlp(ember)
    e.eval()
    assert not e.training and not e.bn1.training and not e.dropout.training
    e.train()
    assert e.bn2.training
    with pytest.raises(ValueError, match="boolean"):
        e.train("yes")
    e(ember.randn(4, 12)).sum().backward()
    assert all(p.grad is not None for p in e.parameters())
    e.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in e.parameters())
    e.zero_grad()
    assert all(p.grad is None for p in e.parameters())
    e.requires_grad_(False)
    assert not any(p.requires_grad for p in e.parameters())
    seen = []
    e.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "MLPModel" and seen[0] == "Linear"


def test_train_calls_each_childs_train_override():
    """A parent's eval()/train() reaches a child's overridden train(mode), as in PyTorch (loralib merges there)."""

    def observe(m):
        calls = []

        class Merging(m.nn.Linear):
            def train(self, mode=True):
                calls.append(mode)
                return super().train(mode)

        model = m.nn.Sequential(m.nn.Sequential(Merging(2, 2)), m.nn.ReLU())
        model.eval()
        model.train()
        model.train(False)
        return calls, model.training, model[0][0].training

    assert observe(ember) == observe(torch) == ([False, True, False], False, False)


def test_to_double_float():
    e = mlp(ember).double()
    assert all(p.dtype == ember.float64 for p in e.parameters())
    assert e.bn1.running_mean.dtype == ember.float64 and e.bn1.num_batches_tracked.dtype == ember.int64
    w = e.fc1.weight
    assert e.to(ember.float32) is e and e.fc1.weight is w and w.dtype == ember.float32
    assert e.to("cpu") is e and e.cpu() is e
    with pytest.raises(RuntimeError, match="CPU only"):
        e.to("cuda")


def test_shared_parameters_counted_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out) or out + 1)
    out = lin(ember.ones(1, 2))
    assert_close(out, lin.bias.detach().reshape(1, 2) + 1)
    assert len(calls) == 1
    h1.remove()
    h2.remove()
    assert_close(lin(ember.zeros(1, 2)), lin.bias.detach().reshape(1, 2))
    order = []
    lin.register_forward_hook(lambda m, a, o: order.append("b"))
    lin.register_forward_hook(lambda m, a, o: order.append("a"), prepend=True)
    lin.register_forward_pre_hook(lambda m, a, kw: ((a[0] * 2,), kw), with_kwargs=True)
    lin(ember.ones(1, 2))
    assert order == ["a", "b"]


def test_sequential():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    tseq = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    compare_module(seq, tseq, np.ones((2, 3), np.float32))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2 and list(seq[1:]._modules) == ["1", "2"]
    seq.append(nn.Tanh())
    assert list(seq._modules) == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and isinstance(seq[1], nn.Linear)
    with pytest.raises(IndexError):
        seq[5]
    from collections import OrderedDict

    named = nn.Sequential(OrderedDict([("a", nn.Linear(1, 1)), ("b", nn.ReLU())]))
    assert list(named.state_dict()) == ["a.weight", "a.bias"] and named.a is named[0]


def test_modulelist_moduledict_repr():
    el = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
    tl = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU()])
    assert repr(el) == repr(tl)
    assert len(el) == 4 and isinstance(el[1:3], nn.ModuleList)
    el.insert(0, nn.Tanh())
    assert isinstance(el[0], nn.Tanh) and len(el) == 5
    assert list(el.state_dict())[:2] == ["1.weight", "1.bias"]
    ed = nn.ModuleDict({"a": nn.Linear(1, 2), "b": nn.ReLU()})
    td = torch.nn.ModuleDict({"a": torch.nn.Linear(1, 2), "b": torch.nn.ReLU()})
    assert repr(ed) == repr(td) and list(ed) == ["a", "b"] and "a" in ed
    ed["c"] = nn.Tanh()
    assert list(ed.keys()) == ["a", "b", "c"]
    assert ed.pop("b") is not None and len(ed) == 2


def test_parameter_list_and_dict():
    pl = nn.ParameterList([nn.Parameter(ember.zeros(2)), ember.ones(3)])
    assert isinstance(pl[1], nn.Parameter) and len(pl) == 2
    pl.append(ember.zeros(1, 2))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert repr(pl) == ("ParameterList(\n    (0): Parameter containing: [ember.float32 of size 2]\n"
                        "    (1): Parameter containing: [ember.float32 of size 3]\n"
                        "    (2): Parameter containing: [ember.float32 of size 1x2]\n)")
    pd = nn.ParameterDict({"a": ember.zeros(2)})
    pd["b"] = nn.Parameter(ember.ones(1))
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["a"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b"]
    del pd["a"]
    assert list(pd) == ["b"]
    with pytest.raises(RuntimeError, match="should not be called"):
        pl()


@pytest.mark.parametrize("kind", ["ParameterList", "ParameterDict"])
def test_parameter_containers_repr_as_pytorch(kind):
    """PyTorch's ParameterDict names each entry's legacy tensor type (``torch.FloatTensor``), its ParameterList the
    dtype (``torch.float32``): ember's ParameterDict showed the dtype. A plain dict is added in sorted key order
    (ember kept the dict's order, which also reordered named_parameters and the state_dict)."""
    texts = []
    for m in (torch, ember):
        values = [m.nn.Parameter(m.ones(2, 2)), m.nn.Parameter(m.zeros(3, dtype=m.float64)),
                  m.nn.Parameter(m.ones(1, dtype=m.complex64)), m.ones(2).to(m.int8), "text"]
        if kind == "ParameterList":
            container = m.nn.ParameterList(values[:2])
        else:
            container = m.nn.ParameterDict({"w": values[0], "d": values[1], "c": values[2]})
            container.update(OrderedDict([("z", values[0]), ("b", values[1])]))
            container.update([("y", values[0]), ("a", values[1])])
            container.update(m.nn.ParameterDict(OrderedDict([("x2", values[0]), ("x1", values[1])])))
            container["s"] = values[4]
        texts.append((repr(container).replace("torch.", "ember."), list(container.state_dict())))
    assert texts[1] == texts[0]


def test_custom_module_forward_missing():
    with pytest.raises(NotImplementedError, match="missing the required \"forward\""):
        nn.Module()(1)


def test_deepcopy_module():
    e = mlp(ember)
    c = copy.deepcopy(e)
    assert c.fc1.weight is not e.fc1.weight and isinstance(c.fc1.weight, nn.Parameter)
    assert_close(c.fc1.weight, e.fc1.weight)


def test_seed_example_train_loop_runs(capsys, monkeypatch):
    path = seed_example("train_loop_full.py")
    pytest.importorskip("ember.utils.data")
    pytest.importorskip("ember.optim.lr_scheduler")
    monkeypatch.setitem(sys.modules, "torch", ember)
    monkeypatch.setitem(sys.modules, "torch.nn", ember.nn)
    monkeypatch.setitem(sys.modules, "torch.optim", ember.optim)
    monkeypatch.setitem(sys.modules, "torch.utils.data", ember.utils.data)
    runpy.run_path(path, run_name="__main__")
    out = capsys.readouterr().out
    assert "fc1.weight" in out and "Epoch [5/5]" in out


def test_buffer_assignment_registers_as_pytorch():
    for m in (ember, torch):
        mod = m.nn.Module()
        source = m.ones(3)
        mod.kept = m.nn.Buffer(source)
        mod.scratch = m.nn.Buffer(m.zeros(2), persistent=False)
        assert sorted(n for n, _ in mod.named_buffers()) == ["kept", "scratch"]
        assert list(mod.state_dict()) == ["kept"]
        assert isinstance(mod.kept, m.nn.Buffer) and not isinstance(m.ones(1), m.nn.Buffer)
        assert mod.kept.persistent and not mod.scratch.persistent
        source[0] = 5  # shares the storage of the tensor it wraps
        assert mod.kept[0].item() == 5
        assert m.nn.Buffer(m.ones(1, requires_grad=True)).requires_grad
        assert not isinstance(mod.kept * 2, m.nn.Buffer)
        copied = copy.deepcopy(mod)
        assert list(copied.state_dict()) == ["kept"] and not copied.scratch.persistent


def test_reassigned_child_parameter_and_buffer_keep_their_place_as_pytorch():
    """``model.conv1 = nn.Conv2d(...)`` (adapting a model zoo network to one input channel) keeps ``conv1`` first
    among the children, so ``nn.Sequential(*model.children())`` still runs it first; likewise a parameter or
    buffer assigned again keeps its place in ``state_dict``. One moved to another store goes last there."""
    orders = []
    for m in (ember, torch):
        mod = m.nn.Module()
        mod.a, mod.b, mod.c = m.nn.Linear(1, 1), m.nn.ReLU(), m.nn.Linear(1, 1)
        mod.p, mod.q = m.nn.Parameter(m.zeros(1)), m.nn.Parameter(m.zeros(1))
        mod.r, mod.s = m.nn.Buffer(m.zeros(1)), m.nn.Buffer(m.zeros(1))
        mod.a = m.nn.Linear(2, 2)
        mod.p = m.nn.Parameter(m.ones(2))
        mod.r = m.nn.Buffer(m.ones(2), persistent=False)
        mod.b = m.nn.Parameter(m.ones(3))  # child -> parameter: gone from the children, last of the parameters
        orders.append(([n for n, _ in mod.named_children()], list(mod._parameters), list(mod._buffers),
                       list(mod.state_dict()), mod.a.in_features, tuple(mod.p.shape)))
    assert orders[0] == orders[1]
