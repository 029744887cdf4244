"""Objects that pickle keeps as their class and attributes (an ``argparse.Namespace`` of a script's options, a
dataclass, a plain config class) are saved as PyTorch's ``torch.save`` saves them: checkpoints such as
RepDistiller's ``{'opt': opt, 'model': model.state_dict()}``. A ``weights_only=True`` load refuses their class
unless allowlisted, as PyTorch's does; ``weights_only=False`` rebuilds them."""

import argparse
import dataclasses
import io
import pickle

import pytest
import torch

import ember
from ember.serialization import safe_globals as ember_safe_globals


@dataclasses.dataclass
class Config:
    lr: float = 0.1
    sizes: tuple = (2, 3)


class Settings:
    def __init__(self, name, inner=None):
        self.name, self.inner = name, inner


class Slotted:
    __slots__ = ("a",)

    def __init__(self):
        self.a = 1


def _checkpoint(fw):
    opt = argparse.Namespace(lr=0.05, model_s="resnet8", epochs=[150, 180], t=fw.arange(3.0))
    inner = Settings("inner")
    return {"opt": opt, "again": opt, "config": Config(), "settings": Settings("outer", inner),
            "model": {"w": fw.ones(2)}}


def _summary(d):
    opt = d["opt"]
    return (type(opt).__name__, opt.lr, opt.model_s, opt.epochs, opt.t.tolist(), d["again"] is opt,
            d["config"], d["settings"].name, d["settings"].inner.name, type(d["settings"].inner).__name__,
            d["model"]["w"].tolist())


def _round_trip(fw, safe_globals, **load_kw):
    buf = io.BytesIO()
    fw.save(_checkpoint(fw), buf)
    buf.seek(0)
    try:
        with safe_globals(load_kw.pop("allow", [])):
            return _summary(fw.load(buf, **load_kw))
    except pickle.UnpicklingError as e:
        return "refused", "Namespace" in str(e)


@pytest.mark.parametrize("load_kw", [{"weights_only": False}, {"weights_only": True},
                                     {"allow": [argparse.Namespace, Config, Settings]}],
                         ids=["weights_only=False", "weights_only=True", "allowlisted"])
def test_objects_kept_by_their_attributes_save_and_load_as_in_pytorch(load_kw):
    expected = _round_trip(torch, torch.serialization.safe_globals, **dict(load_kw))
    got = _round_trip(ember, ember_safe_globals, **dict(load_kw))
    assert got == expected


def test_an_object_pickle_cannot_rebuild_from_its_attributes_is_still_refused_at_save():
    with pytest.raises(TypeError, match="Slotted"):
        ember.save({"s": Slotted()}, io.BytesIO())
    holder = Settings("f")
    holder.fn = lambda: 0  # a lambda cannot be imported again by name
    with pytest.raises(TypeError, match="attribute 'fn' of a .*Settings"):
        ember.save(holder, io.BytesIO())


@pytest.mark.parametrize("fmt", ["ember", "torch"])
def test_devices_save_and_load_as_in_pytorch(fmt):
    # n-beats' model keeps its torch.device as an attribute and saves the whole model; PyTorch pickles a device
    # and a weights_only load allows it
    def devices(fw):
        return {"cpu": fw.device("cpu"), "cuda1": fw.device("cuda", 1), "cpu0": fw.device("cpu", 0)}

    buf = io.BytesIO()
    torch.save(devices(torch), buf)
    buf.seek(0)
    expected = {k: str(v) for k, v in torch.load(buf).items()}
    buf = io.BytesIO()
    ember.save(devices(ember), buf, format=fmt)
    buf.seek(0)
    loaded = ember.load(buf)
    assert {k: str(v) for k, v in loaded.items()} == expected
    assert all(isinstance(v, ember.device) for v in loaded.values())
    if fmt == "torch":  # PyTorch reads it, weights_only, as its own devices
        buf.seek(0)
        assert {k: str(v) for k, v in torch.load(buf).items()} == expected


def _model_and_optimizer(fw):
    fw.manual_seed(0)
    model = fw.nn.Linear(3, 2)
    opt = fw.optim.Adam(model.parameters(), lr=0.01)
    model(fw.ones(4, 3)).sum().backward()
    opt.step()
    return model, opt


@pytest.mark.parametrize("fw", [torch, ember], ids=["torch", "ember"])
def test_a_model_holding_its_optimizer_saves_whole_as_in_pytorch(fw):
    # n-beats' NBeatsNet keeps the optimizer compile() made and is saved whole: the optimizer is pickled through its
    # __getstate__ and rebuilt through its __setstate__, its parameters the loaded model's own
    model, opt = _model_and_optimizer(fw)
    model.opt = opt
    buf = io.BytesIO()
    fw.save(model, buf)
    buf.seek(0)
    loaded = fw.load(buf, weights_only=False)
    lopt = loaded.opt
    assert type(lopt) is type(opt) and lopt.param_groups[0]["lr"] == 0.01
    assert lopt.param_groups[0]["params"][0] is loaded.weight
    assert lopt.state[loaded.weight]["exp_avg"].tolist() == opt.state[model.weight]["exp_avg"].tolist()
    assert float(lopt.state[loaded.bias]["step"]) == 1.0


@pytest.mark.parametrize("load_kw", [{}, {"weights_only": True}, {"weights_only": False}],
                         ids=["default", "weights_only=True", "weights_only=False"])
def test_a_pickle_module_given_to_load_turns_weights_only_off_as_in_pytorch(load_kw):
    # n-beats' NBeatsNet.load calls torch.load(f, map_location, pickle_module) on a whole saved model: PyTorch
    # then defaults to weights_only=False, and refuses weights_only=True with a pickle module
    def outcome(fw):
        buf = io.BytesIO()
        fw.save({"opt": argparse.Namespace(lr=0.5)}, buf)
        buf.seek(0)
        try:
            return vars(fw.load(buf, None, pickle, **load_kw)["opt"])
        except RuntimeError as e:
            return type(e).__name__, str(e)

    assert outcome(ember) == outcome(torch)
