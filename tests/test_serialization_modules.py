"""Whole-module save (PyTorch 2.6+ semantics, without pickle): weights_only refuses unless allowlisted."""

import io
import pickle
import zipfile

import numpy as np
import pytest
import torch

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.serialization import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals


class Net(nn.Module):
    inits = 0

    def __init__(self, act=F.relu):
        super().__init__()
        Net.inits += 1
        self.body = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6))
        self.head = nn.Linear(6, 3, bias=False)
        self.tied = self.head  # the same submodule twice
        self.register_buffer("scale", ember.full((3,), 2.0))
        self.register_buffer("cache", ember.zeros(1), persistent=False)
        self.act, self.name, self.sizes, self.dtype = act, "net", (4, 6, 3), ember.float32

    def forward(self, x):
        return self.head(self.act(self.body(x))) * self.scale


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)


NET_CLASSES = [Net, nn.Sequential, nn.Linear, nn.BatchNorm1d, F.relu]


@pytest.fixture(autouse=True)
def empty_allowlist():
    clear_safe_globals()
    yield
    clear_safe_globals()


def trained_net() -> Net:
    ember.manual_seed(0)
    net = Net()
    opt = ember.optim.SGD(net.parameters(), lr=0.1)
    net(ember.randn(8, 4)).sum().backward()
    opt.step()
    net.eval()
    return net


def saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return buf


def test_weights_only_refuses_a_module_like_pytorch():
    buf = saved(trained_net())
    with pytest.raises(pickle.UnpicklingError, match=r"test_serialization_modules\.Net.*add_safe_globals") as e:
        ember.load(buf)
    # PyTorch's type (no RuntimeError, which an `except RuntimeError` for a corrupt file would catch) and its words
    assert not isinstance(e.value, RuntimeError) and str(e.value).startswith("Weights only load failed")
    tbuf = io.BytesIO()
    torch.save(TorchNet(), tbuf)
    tbuf.seek(0)
    with pytest.raises(pickle.UnpicklingError):  # PyTorch's exception type: ember's error is one too
        torch.load(tbuf)


def test_allowlisted_module_rebuilds_without_init_and_gives_the_same_outputs():
    net = trained_net()
    x = ember.randn(5, 4)
    expected = net(x).detach().numpy()
    inits = Net.inits
    add_safe_globals(NET_CLASSES)
    out = ember.load(saved(net))
    assert Net.inits == inits  # __init__ was not called
    assert type(out) is Net and not out.training and not out.body[1].training
    np.testing.assert_array_equal(out(x).detach().numpy(), expected)
    assert out.tied is out.head and out.act is F.relu and out.name == "net" and out.sizes == (4, 6, 3)
    assert out.dtype is ember.float32 and isinstance(out.head.weight, nn.Parameter) and out.head.bias is None
    assert list(out.state_dict()) == list(net.state_dict())  # "cache" stays non-persistent
    assert [n for n, _ in out.named_buffers()] == [n for n, _ in net.named_buffers()]
    # the rebuilt module trains: gradients reach its parameters
    out.train()
    out(x).sum().backward()
    assert all(p.grad is not None for p in out.parameters())


def test_safe_globals_context_and_queries():
    buf = saved(trained_net())
    with safe_globals(NET_CLASSES):
        assert set(get_safe_globals()) == set(NET_CLASSES)
        ember.load(buf)
    assert get_safe_globals() == []
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="not an allowed global"):
        ember.load(buf)
    add_safe_globals([(Net, "old.place.Net")])
    assert get_safe_globals() == [(Net, "old.place.Net")]
    clear_safe_globals()
    assert get_safe_globals() == []


def test_a_missing_class_in_the_allowlist_is_named():
    buf = saved(trained_net())
    with safe_globals([Net, nn.Sequential, nn.Linear, F.relu]):
        with pytest.raises(pickle.UnpicklingError, match=r"ember\.nn\.modules\.normalization\.BatchNorm1d"):
            ember.load(buf)


def test_weights_only_false_imports_the_classes():
    net = trained_net()
    out = ember.load(saved({"model": net, "epoch": 2}), weights_only=False)
    x = ember.randn(3, 4)
    np.testing.assert_array_equal(out["model"](x).detach().numpy(), net(x).detach().numpy())
    assert out["epoch"] == 2


def test_modules_that_cannot_be_saved_are_type_errors(tmp_path):
    class Local(nn.Module):
        pass

    with pytest.raises(TypeError, match="cannot be imported again"):
        ember.save(Local(), io.BytesIO())
    hooked = nn.Linear(2, 2)
    hooked.register_forward_hook(lambda m, i, o: o)
    with pytest.raises(TypeError, match="_forward_hooks"):
        ember.save(hooked, io.BytesIO())
    odd = nn.Linear(2, 2)
    odd.extra = object()
    with pytest.raises(TypeError, match="attribute 'extra'"):
        ember.save(odd, tmp_path / "m.pt")
    assert list(tmp_path.iterdir()) == []


def test_a_forged_class_path_is_refused_even_when_it_exists():
    with zipfile.ZipFile(io.BytesIO(saved(nn.Linear(2, 2)).getvalue())) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    members["ember.json"] = members["ember.json"].replace(b"ember.nn.modules.linear.Linear", b"builtins.dict")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in members.items():
            zf.writestr(k, v)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL dict was not an allowed global"):  # (as PyTorch names it)
        ember.load(buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="not an nn.Module subclass"):
        ember.load(buf, weights_only=False)


def test_attention_model_loads_with_the_linear_modules_allowlist_pytorch_needs():
    """A whole model with MultiheadAttention, allowlisted as PyTorch requires: its out_proj's class is the one
    in torch.nn.modules.linear (MultiheadAttention's module only imports it)."""
    from ember.nn.modules import activation, linear

    assert activation.NonDynamicallyQuantizableLinear is linear.NonDynamicallyQuantizableLinear
    assert torch.nn.modules.activation.NonDynamicallyQuantizableLinear is \
        torch.nn.modules.linear.NonDynamicallyQuantizableLinear
    ember.manual_seed(0)
    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 1, enable_nested_tensor=False)
    model.eval()
    x = ember.randn(5, 3, 8)
    expected = model(x).detach().numpy()
    allow = [F.relu, nn.modules.activation.MultiheadAttention, nn.modules.container.ModuleList,
             nn.modules.dropout.Dropout, nn.modules.linear.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear,
             nn.modules.normalization.LayerNorm, nn.modules.transformer.TransformerEncoder,
             nn.modules.transformer.TransformerEncoderLayer]
    with safe_globals(allow):
        out = ember.load(saved(model))
    assert type(out.layers[0].self_attn.out_proj) is linear.NonDynamicallyQuantizableLinear
    np.testing.assert_allclose(out(x).detach().numpy(), expected, rtol=1e-6, atol=1e-7)


def _rounding_function(autograd):
    class RoundStraightThrough(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.round()

        @staticmethod
        def backward(ctx, g):
            return g

    return RoundStraightThrough


EmberRound = _rounding_function(ember.autograd)
EmberRound.__qualname__ = "EmberRound"
TorchRound = _rounding_function(torch.autograd)
TorchRound.__qualname__ = "TorchRound"


class HoldsMethods(nn.Module):
    """A module holding bound methods, as intro_dgm's VAEs hold `self.round = RoundStraightThrough.apply`."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.round, self.act = EmberRound.apply, self.double

    def double(self, x):
        return 2 * x

    def forward(self, x):
        return self.act(self.round(self.lin(x)))


class TorchHoldsMethods(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.round, self.act = TorchRound.apply, self.double

    def double(self, x):
        return 2 * x


def test_bound_methods_save_and_load_as_pytorch_pickles_them():
    # PyTorch pickles a bound method as getattr(its object, its name): the class for a Function's apply, the
    # module itself for its own method; a weights_only load refuses builtins.getattr unless it is allowlisted
    tbuf = io.BytesIO()
    torch.save(TorchHoldsMethods(), tbuf)
    tbuf.seek(0)
    tout = torch.load(tbuf, weights_only=False)
    assert tout.round.__self__ is TorchRound and tout.act.__self__ is tout
    net = HoldsMethods()
    x = ember.tensor([[0.3, -1.7], [2.2, 0.9]], requires_grad=True)
    out = ember.load(saved(net), weights_only=False)
    assert out.round.__self__ is EmberRound and out.round.__func__ is EmberRound.apply.__func__
    assert out.act.__self__ is out and out.act.__func__ is HoldsMethods.double
    np.testing.assert_array_equal(out(x).detach().numpy(), net(x).detach().numpy())
    out(x).sum().backward()  # the straight-through backward of the rebuilt Function
    assert x.grad is not None
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL getattr was not an allowed global"):  # (as PyTorch names it)
        ember.load(saved({"f": EmberRound.apply}))
    with safe_globals([getattr, EmberRound]):
        assert ember.load(saved({"f": EmberRound.apply}))["f"].__self__ is EmberRound
    with pytest.raises(pickle.UnpicklingError):
        tbuf = io.BytesIO()
        torch.save({"f": TorchRound.apply}, tbuf)
        tbuf.seek(0)
        torch.load(tbuf)


def _torch_saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("value", [np.int64(4), np.float32(0.1), np.float64(-2.5), np.bool_(True), np.uint8(200),
                                   np.complex64(1 - 2j), np.float16(np.inf)])
def test_numpy_scalars_save_and_load_as_pytorch_pickles_them(value):
    # pytorch-fm builds its Embeddings from np.int64 sizes and saves the whole model; checkpoints keep np.float64
    # metrics: PyTorch pickles them, gives them back with weights_only=False and refuses them by default
    tbuf = io.BytesIO()
    torch.save({"v": value, "emb": torch.nn.Embedding(np.int64(4), 2)}, tbuf)
    tbuf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(tbuf)
    tbuf.seek(0)
    ref = torch.load(tbuf, weights_only=False)
    buf = saved({"v": value, "emb": nn.Embedding(np.int64(4), 2)})
    out = ember.load(buf, weights_only=False)
    for got, want in ((out["v"], ref["v"]), (out["emb"].num_embeddings, ref["emb"].num_embeddings)):
        assert type(got) is type(want) and (got == want or (np.isnan(got) and np.isnan(want)))
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="numpy._core.multiarray.scalar"):
        ember.load(saved([value]))
    # PyTorch's pickle also names numpy.dtype and gives state to the dtype's class: each allowlisted too
    allow = [np._core.multiarray.scalar, np.dtype, type(np.asarray(value).dtype)]
    for m in (ember, torch):
        with m.serialization.safe_globals(allow[:1]), pytest.raises(pickle.UnpicklingError, match="numpy.dtype"):
            m.load(saved([value]) if m is ember else _torch_saved([value]), weights_only=True)
    with safe_globals(allow):
        (back,) = ember.load(saved([value]))
        assert type(back) is type(value) and back == value
